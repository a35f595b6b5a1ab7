"""Writes on fsspec filesystems beyond one plain PUT: conditional writes on
S3, and batches of writes and deletes sent concurrently or in bulk.

**Conditional writes on S3** (s3fs): each :class:`~zarrpy.stores.writes.ConditionalWrite`
is one request, a PUT through zarrpy's lean client on a plain filesystem
(:mod:`zarrpy.stores._s3_lean`; an answer it does not take is sent again
through s3fs), else through s3fs's ``_call_s3`` (its retries and request
options):

- a value expected :data:`~zarrpy.stores.writes.ABSENT`: ``put_object`` with
  ``IfNoneMatch="*"``;
- a value expected at a version: ``put_object`` with ``IfMatch=<version>``,
  the ETag exactly as :meth:`~zarrpy.stores.fsspec.FsspecStore.get_versioned`
  reports it (quotes included: ``'"<hex>"'``);
- a delete expected at a version: ``delete_object`` with ``IfMatch``;
- a delete expected ABSENT sends nothing and is applied: the object was
  absent when it was read, and removing an absent object changes nothing,
  so the read-modify-write took effect then (a writer that created the
  object since comes after it).

A refusal (``412 PreconditionFailed``, ``409 ConditionalRequestConflict``,
``404 NoSuchKey`` for an ``IfMatch``: the object was deleted since) is a
write not applied (False); any other failure is raised. A retry (s3fs's,
botocore's) of a request whose answer was lost may be refused by its own
first attempt: False again, and the caller's re-read and merge write the
same bytes once more, so a refusal costs a round trip, never data.

botocore drops parameters its service model does not know, and botocores
before the conditional-write parameters (late 2024) would send the ``IfMatch``
put as a plain one: :func:`s3_conditions_known` checks the client's model,
and no conditional write is sent without them.

**Batches.** :func:`put_one` is one PUT (the lean client's on plain S3,
else ``_pipe_file``: no HEAD, no listing); the store runs many at once on
the filesystem's loop.
:func:`s3_delete_batch` removes up to :data:`S3_DELETE_BATCH` keys with one
``DeleteObjects`` request.
"""

from __future__ import annotations

from typing import Any, Hashable

from ._fsspec_versioned import _is_instance, _s3_code
from ._s3_lean import lean_put
from .writes import ABSENT

S3_DELETE_BATCH = 1000
"""Keys per ``DeleteObjects`` request: S3's limit."""

_REFUSED = frozenset({"PreconditionFailed", "412", "ConditionalRequestConflict", "409"})
"""S3 error codes of a condition that did not hold."""

_GONE = frozenset({"NoSuchKey", "404"})
"""S3 error codes of an ``IfMatch`` on an object deleted since it was read."""


def is_s3(fs: Any) -> bool:
    """Whether ``fs`` is an s3fs filesystem."""
    return _is_instance(fs, "s3fs.core", "S3FileSystem")


async def s3_conditions_known(fs: Any) -> bool:
    """Whether the s3fs client of ``fs`` sends ``IfMatch`` / ``IfNoneMatch``
    on ``put_object`` and ``IfMatch`` on ``delete_object`` (s3fs filters
    request parameters through botocore's service model)."""
    await fs.set_session()
    keep = fs._kwargs_helper.filter_dict
    return (set(keep("put_object", {"IfMatch": "", "IfNoneMatch": ""})) == {"IfMatch", "IfNoneMatch"}
            and set(keep("delete_object", {"IfMatch": ""})) == {"IfMatch"})


def s3_etag(expected: Hashable) -> str:
    """The ETag of an expected version, as ``get_versioned`` reported it."""
    if not isinstance(expected, str) or not expected:
        raise TypeError(f"an S3 version is the object's ETag string as get_versioned reports it, not {expected!r}")
    return expected


async def s3_conditional(fs: Any, path: str, value: bytes | None, expected: Hashable) -> bool:
    """One conditional ``put_object`` (``value``) or ``delete_object`` (None)
    of ``path`` on the s3fs filesystem ``fs``; False when refused."""
    if value is None and expected is ABSENT:
        return True  # nothing to remove, and nothing sent (see the module docstring)
    bucket, key, _ = fs.split_path(path)
    condition = {"IfNoneMatch": "*"} if expected is ABSENT else {"IfMatch": s3_etag(expected)}
    if value is not None:
        header = ("If-None-Match", "*") if expected is ABSENT else ("If-Match", s3_etag(expected))
        status = await lean_put(fs, path, value, dict([header]))
        if status == 200:
            return True
        if status in (409, 412) or (status == 404 and expected is not ABSENT):
            return False
    try:
        if value is None:
            await fs._call_s3("delete_object", Bucket=bucket, Key=key, **condition)
        else:
            await fs._call_s3("put_object", Bucket=bucket, Key=key, Body=value, **condition)
    except Exception as exc:
        code = _s3_code(exc)
        if code in _REFUSED or (code in _GONE and "IfMatch" in condition):
            return False
        raise
    finally:
        fs.invalidate_cache(path)
    return True


async def s3_delete_batch(fs: Any, paths: list[str]) -> list[tuple[str, str]]:
    """Remove ``paths`` (at most :data:`S3_DELETE_BATCH`, one bucket) with one
    ``DeleteObjects`` request; the ``(path, "code: message")`` of each key
    S3 could not remove (a missing key is removed, as S3 counts it)."""
    bucket = fs.split_path(paths[0])[0]
    keys = {fs.split_path(p)[1]: p for p in paths}
    try:
        out = await fs._call_s3("delete_objects", Bucket=bucket,
                                Delete={"Objects": [{"Key": k} for k in keys], "Quiet": True})
    finally:
        for path in paths:
            fs.invalidate_cache(path)
    return [(keys.get(e.get("Key", ""), paths[0]), f"{e.get('Code')}: {e.get('Message')}")
            for e in out.get("Errors", [])]


async def put_one(fs: Any, path: str, value: bytes) -> None:
    """One PUT of ``value`` at ``path`` on the async filesystem ``fs`` (on a
    plain S3 filesystem through the lean client); a filesystem that wants
    the parent made first gets it, as ``_set`` does."""
    if is_s3(fs) and await lean_put(fs, path, value, {}) == 200:
        return
    try:
        await fs._pipe_file(path, value)
    except FileNotFoundError:
        await fs._makedirs(fs._parent(path), exist_ok=True)
        await fs._pipe_file(path, value)


async def remove_one(fs: Any, path: str) -> None:
    """One delete of ``path`` on the async filesystem ``fs``; a missing one is no error."""
    try:
        await fs._rm_file(path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        pass


__all__ = ["S3_DELETE_BATCH", "is_s3", "put_one", "remove_one", "s3_conditional", "s3_conditions_known",
           "s3_delete_batch", "s3_etag"]
