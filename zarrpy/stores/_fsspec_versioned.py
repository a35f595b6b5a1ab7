"""Versioned reads (:meth:`~zarrpy.stores.abc.Store.get_versioned`) on
fsspec filesystems, one request per item, the best way each backend allows.

- **HTTP** (fsspec's ``HTTPFileSystem``): one GET with ``Range`` and
  ``If-Match``, through zarrpy's lean client on a plain filesystem, else the
  filesystem's own aiohttp session (:mod:`zarrpy.stores._http_client`). The object's length
  comes from ``Content-Range`` (``206``, and ``bytes */N`` of a ``416``) or
  the body (``200``: the server ignored ``Range``, the answer is cut here);
  the version is the strong ``ETag`` (a weak one cannot be matched, so it
  is no version). ``412`` is a changed object, ``404`` a missing one. A
  server that ignores ``If-Match`` is caught by comparing the ETag it sends.
- **S3** (s3fs): one GET with ``Range`` and ``If-Match``, signed and sent
  by zarrpy's lean client when the filesystem is plain
  (:mod:`zarrpy.stores._s3_lean`), else (and for any answer but ``200``,
  ``206``, ``404``, ``412``) one ``get_object`` through s3fs's ``_call_s3``
  (its retries and request options); the length from ``Content-Range`` (or
  the body), the version is the ETag; ``412`` / ``PreconditionFailed`` is a
  changed object, ``404`` / ``NoSuchKey`` a missing one.
- **Local files**: the file opened once, its ``fstat`` giving size and
  version exactly as :class:`~zarrpy.stores.local.LocalStore` tells them.
- **fsspec's memory filesystem**: the stored file object's identity (a
  write replaces it), its size and modification time.

Other filesystems have no reader here (the store's default applies).

HTTP and S3 also have a blocking reader (:func:`blocking_reader_of`), for a
single request whose caller waits for it: sent from the calling thread over
the lean client's blocking connections, it saves the hops to the event
loop's thread and back (0.3-0.5 ms a request); what it cannot do runs on the
loop as above.

A request for no bytes (an empty range, a zero suffix) still needs the
object's length and version: HTTP and S3 ask for its first byte
(``bytes=0-0``) and answer ``b""``. A changed answer from a backend whose
refusal tells no length (S3, most HTTP servers) has size
:data:`~zarrpy.core.byte_range.UNKNOWN_SIZE`. Only for an unsatisfiable range whose answer tells no
length (a ``416`` without ``Content-Range``, S3's ``InvalidRange``) is a
second, size request made.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
import sys
import threading
import weakref
from typing import Any, Awaitable, Callable, Hashable

from fsspec.asyn import sync

from ..core.byte_range import UNKNOWN_SIZE, ByteRequest, ObjectRead, OffsetRequest, RangeRequest, SuffixRequest
from ._files import OpenFile, file_version
from ._http_client import Answer, plain_client_for
from ._ranges import clamp, is_empty, strong_etag, versioned_answer
from ._s3_lean import known_lean_s3, lean_s3_of

_CONTENT_RANGE = re.compile(r"bytes\s+(?:(\d+)-(\d+)|\*)/(\d+|\*)")

AsyncReader = Callable[[Any, str, "ByteRequest | None", "Hashable | None"], Awaitable["ObjectRead | None"]]
SyncReader = Callable[[Any, str, "ByteRequest | None", "Hashable | None"], "ObjectRead | None"]


def range_header(request: ByteRequest | None) -> str | None:
    """The ``Range`` header of ``request`` (None: the whole object). A request
    for no bytes asks for the first byte, so the answer still tells the
    object's length."""
    if is_empty(request):
        return "bytes=0-0"
    if request is None or (isinstance(request, OffsetRequest) and request.offset == 0):
        return None
    if isinstance(request, RangeRequest):
        return f"bytes={request.start}-{request.end - 1}"
    if isinstance(request, OffsetRequest):
        return f"bytes={request.offset}-"
    if isinstance(request, SuffixRequest):
        return f"bytes=-{request.length}"
    raise TypeError(f"not a byte request: {request!r}")


def content_range(value: str | None) -> tuple[int | None, int | None]:
    """``(first byte, object length)`` of a ``Content-Range`` header; None for
    what it does not tell (``bytes */N`` has no first byte, ``a-b/*`` no length)."""
    m = _CONTENT_RANGE.fullmatch(value.strip()) if value else None
    if m is None:
        return None, None
    first = int(m[1]) if m[1] is not None else None
    return first, (int(m[3]) if m[3] != "*" else None)


def read_headers(request: ByteRequest | None, if_match: Hashable | None) -> dict[str, str]:
    """The ``Range`` and ``If-Match`` headers of one versioned GET."""
    headers: dict[str, str] = {}
    rng = range_header(request)
    if rng is not None:
        headers["Range"] = rng
    if if_match is not None:
        headers["If-Match"] = str(if_match)
    return headers


# -- HTTP ------------------------------------------------------------------------------


async def http_read(fs: Any, url: str, request: ByteRequest | None, if_match: Hashable | None) -> ObjectRead | None:
    """One GET of ``url`` on fsspec's HTTP filesystem ``fs`` (see the module docstring)."""
    headers = _http_headers(fs, request, if_match)
    encoded = fs.encode_url(url)
    client = plain_client_for(fs)
    answer = await client.get(str(encoded), headers) if client is not None else None
    if answer is None:
        answer = await _aiohttp_get(fs, encoded, headers)
    size = int((await fs._info(url))["size"]) if _unsized_416(answer) else None
    return http_outcome(answer, url, request, if_match, size)


def http_read_blocking(fs: Any, url: str, request: ByteRequest | None, if_match: Hashable | None) -> ObjectRead | None:
    """:func:`http_read` in the calling thread, through the lean client's
    blocking connections: no hop through the filesystem's event loop, for a
    caller that waits for this one answer. What that client leaves to
    aiohttp, and the size request after a ``416`` that tells no length, run
    on the loop."""
    headers = _http_headers(fs, request, if_match)
    encoded = fs.encode_url(url)
    client = plain_client_for(fs, fs.loop)
    answer = client.request_blocking("GET", str(encoded), headers) if client is not None else None
    if answer is None:
        answer = sync(fs.loop, _aiohttp_get, fs, encoded, headers)
    size = int(sync(fs.loop, fs._info, url)["size"]) if _unsized_416(answer) else None
    return http_outcome(answer, url, request, if_match, size)


def _http_headers(fs: Any, request: ByteRequest | None, if_match: Hashable | None) -> dict[str, str]:
    return {**(fs.kwargs.get("headers") or {}), **read_headers(request, if_match)}


def _unsized_416(answer: Answer) -> bool:
    """An unsatisfiable range whose answer tells no length (a size request follows)."""
    return answer.status == 416 and content_range(answer.headers.get("content-range"))[1] is None


def http_outcome(answer: Answer, url: str, request: ByteRequest | None, if_match: Hashable | None,
                 size_of_416: int | None) -> ObjectRead | None:
    """The read an HTTP answer tells: ``404`` missing, ``412`` changed,
    ``416`` nothing to read (of ``size_of_416`` bytes when the answer tells
    no length), ``200`` / ``206`` bytes; any other status is an error."""
    status, etag = answer.status, answer.headers.get("etag")
    if status == 404:
        return None
    size = content_range(answer.headers.get("content-range"))[1]
    if status == 412:
        return ObjectRead(None, UNKNOWN_SIZE if size is None else size, strong_etag(etag))
    if status == 416:  # nothing to read
        size = size if size is not None else size_of_416
        assert size is not None  # asked for by the caller (_unsized_416)
        return versioned_answer(b"", 0, size, strong_etag(etag), RangeRequest(0, 0), if_match)
    if status not in (200, 206):
        raise OSError(f"HTTP {status} for {url}")
    return body_answer(answer, request, if_match)


def body_answer(answer: Answer, request: ByteRequest | None, if_match: Hashable | None) -> ObjectRead:
    """The read of a ``200`` (the whole object, cut here) or ``206`` answer
    (the object's length from ``Content-Range``), versioned by its ETag."""
    etag = strong_etag(answer.headers.get("etag"))
    if answer.status == 206:
        first, size = content_range(answer.headers.get("content-range"))
        if first is None or size is None:
            raise ValueError(f"206 answer without a usable Content-Range: {answer.headers.get('content-range')!r}")
        return versioned_answer(answer.body, first, size, etag, request, if_match)
    return versioned_answer(answer.body, 0, len(answer.body), etag, request, if_match)


async def _aiohttp_get(fs: Any, url: Any, headers: dict[str, str]) -> Answer:
    """The GET through the filesystem's own aiohttp session (its client and
    request options): redirects followed, encoded bodies decoded."""
    kw = dict(fs.kwargs)
    kw.pop("headers", None)
    session = await fs.set_session()
    async with session.get(url, headers=headers, **kw) as r:
        body = await r.read() if r.status in (200, 206) else b""
        return Answer(r.status, {k.lower(): v for k, v in r.headers.items()}, body)


# -- S3 --------------------------------------------------------------------------------


def _s3_code(exc: BaseException) -> str | None:
    """The S3 error code behind an exception s3fs translated (its cause)."""
    for e in (exc, exc.__cause__):
        response = getattr(e, "response", None)
        if isinstance(response, dict):
            code = response.get("Error", {}).get("Code")
            return str(code) if code is not None else None
    return None


async def s3_read(fs: Any, path: str, request: ByteRequest | None, if_match: Hashable | None) -> ObjectRead | None:
    """One ``get_object`` of ``path`` on the s3fs filesystem ``fs``."""
    bucket, key, version_id = fs.split_path(path)
    lean = await lean_s3_of(fs) if not version_id else None
    if lean is not None:
        answer = await lean.get(bucket, key, read_headers(request, if_match))
        if answer is not None:
            return s3_outcome(answer, request, if_match)
    return await _s3fs_read(fs, path, request, if_match)


def s3_read_blocking(fs: Any, path: str, request: ByteRequest | None, if_match: Hashable | None) -> ObjectRead | None:
    """:func:`s3_read` from the calling thread through the lean client's
    blocking connections (as :func:`http_read_blocking`), once the lean
    client exists and its credentials need no refresh; anything else, and
    any answer it leaves to s3fs, runs on the filesystem's loop."""
    bucket, key, version_id = fs.split_path(path)
    lean = known_lean_s3(fs) if not version_id else None
    if lean is not None:
        answer = lean.get_blocking(bucket, key, read_headers(request, if_match))
        if isinstance(answer, Answer):
            return s3_outcome(answer, request, if_match)
        if answer is None:  # s3fs asks (the lean request is not sent again)
            result: ObjectRead | None = sync(fs.loop, _s3fs_read, fs, path, request, if_match)
            return result
    result = sync(fs.loop, s3_read, fs, path, request, if_match)
    return result


def s3_outcome(answer: Answer, request: ByteRequest | None, if_match: Hashable | None) -> ObjectRead | None:
    """The read a lean S3 answer tells (``404`` missing, ``412`` changed, else bytes)."""
    if answer.status == 404:
        return None
    if answer.status == 412:
        return ObjectRead(None, UNKNOWN_SIZE, None)
    return body_answer(answer, request, if_match)


async def _s3fs_read(fs: Any, path: str, request: ByteRequest | None, if_match: Hashable | None) -> ObjectRead | None:
    """One ``get_object`` through s3fs (its retries, request options and errors)."""
    bucket, key, version_id = fs.split_path(path)
    rng = range_header(request)
    kw: dict[str, Any] = {}
    if rng is not None:
        kw["Range"] = rng
    if if_match is not None:
        kw["IfMatch"] = str(if_match)
    if version_id:
        kw["VersionId"] = version_id
    try:
        resp = await fs._call_s3("get_object", Bucket=bucket, Key=key, **kw)
    except FileNotFoundError:
        return None
    except OSError as exc:
        code = _s3_code(exc)
        if code in ("PreconditionFailed", "412"):
            return ObjectRead(None, UNKNOWN_SIZE, None)
        if code in ("InvalidRange", "416"):  # nothing to read: the length from a size request
            try:
                info = await fs._info(path)
            except FileNotFoundError:
                return None
            return versioned_answer(b"", 0, int(info["size"]), strong_etag(info.get("ETag")),
                                    RangeRequest(0, 0), if_match)
        raise
    try:
        data = await resp["Body"].read()
    finally:
        resp["Body"].close()
    first, size = content_range(resp.get("ContentRange"))
    etag = resp.get("ETag")
    if first is not None and size is not None:
        return versioned_answer(data, first, size, strong_etag(etag), request, if_match)
    return versioned_answer(data, 0, len(data), strong_etag(etag), request, if_match)


# -- local files and fsspec's memory filesystem ------------------------------------------


def local_read(fs: Any, path: str, request: ByteRequest | None, if_match: Hashable | None) -> ObjectRead | None:
    """The bytes of a local file with the size and version of the ``fstat``
    of the same open descriptor (as LocalStore tells them)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    with OpenFile(fd, 0) as f:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return None
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)")
        f.size, f.version = st.st_size, file_version(st)
        if if_match is not None and if_match != f.version:
            return ObjectRead(None, f.size, f.version)
        return ObjectRead(f.read(request), f.size, f.version)


class _Serials:
    """A serial number per live file object of fsspec's memory filesystem:
    a write replaces the object, so a new object is a new version (a dead
    object's serial is never given again, whatever its ``id``)."""

    def __init__(self) -> None:
        self._table: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._serials = itertools.count(1)
        self._lock = threading.Lock()

    def of(self, f: Any) -> int:
        with self._lock:
            serial = self._table.get(f)
            if serial is None:
                serial = self._table[f] = next(self._serials)
            return serial


_MEMORY_SERIALS = _Serials()


def memory_read(fs: Any, path: str, request: ByteRequest | None, if_match: Hashable | None) -> ObjectRead | None:
    """The bytes of a file of fsspec's memory filesystem, versioned by the
    file object (its serial), its size and its modification time (an append
    in place changes both)."""
    f = fs.store.get(fs._strip_protocol(path))
    if f is None:
        return None
    buf = f.getbuffer()
    try:
        size = len(buf)
        modified = getattr(f, "modified", None)
        version = (_MEMORY_SERIALS.of(f), size, modified.timestamp() if modified is not None else None)
        if if_match is not None and if_match != version:
            return ObjectRead(None, size, version)
        start, end = clamp(request, size)
        return ObjectRead(bytes(buf[start:end]) if start < end else b"", size, version)
    finally:
        buf.release()


# -- which reader ------------------------------------------------------------------------


def _is_instance(fs: Any, module: str, name: str) -> bool:
    """``isinstance(fs, module.name)`` without importing ``module`` (if it is
    not imported, ``fs`` cannot be one of its objects)."""
    cls = getattr(sys.modules.get(module), name, None)
    return isinstance(cls, type) and isinstance(fs, cls)


def blocking_reader_of(fs: Any) -> SyncReader | None:
    """A reader that answers one request in the calling thread on a
    filesystem whose reader is async (:func:`reader_of`), or None."""
    if _is_instance(fs, "fsspec.implementations.http", "HTTPFileSystem"):
        return http_read_blocking
    if _is_instance(fs, "s3fs.core", "S3FileSystem"):
        return s3_read_blocking
    return None


def reader_of(fs: Any) -> tuple[AsyncReader | None, SyncReader | None]:
    """The async or sync versioned reader for the filesystem ``fs`` (or neither)."""
    if _is_instance(fs, "fsspec.implementations.http", "HTTPFileSystem"):
        return http_read, None
    if _is_instance(fs, "s3fs.core", "S3FileSystem"):
        return s3_read, None
    if _is_instance(fs, "fsspec.implementations.local", "LocalFileSystem"):
        return None, local_read
    if _is_instance(fs, "fsspec.implementations.memory", "MemoryFileSystem"):
        return None, memory_read
    return None, None


__all__ = ["blocking_reader_of", "content_range", "range_header", "reader_of"]
