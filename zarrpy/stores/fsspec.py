"""A store on any fsspec filesystem (s3://, gs://, http://, memory://, zip:: …).

Key ``"a/b"`` is the file ``<path>/a/b`` of the filesystem. Range reads go
through ``fs.cat_file(path, start, end)`` and batches through
``fs.cat_ranges``, which an async filesystem (s3fs, gcsfs, HTTP) runs
concurrently. Async filesystems are used through fsspec's own synchronous
wrappers; this module is the only place in zarrpy that touches them.

Semantics match the other stores: a missing key reads as None, a range past
the end of a value is clamped like a file read, a suffix longer than the value
is the whole value. Range edge cases that HTTP-style backends refuse
(``416 Range Not Satisfiable`` for a start at or past the end) or that a
filesystem does not implement (negative starts) are answered with one extra
size lookup, only when they happen. Any other failure is a
:class:`~zarrpy.errors.StoreError` naming the key.

Writes go through ``fs.pipe_file``; their atomicity is the filesystem's (object
stores replace whole objects; fsspec's local filesystem does not — use
:class:`~zarrpy.stores.local.LocalStore` for local files). Streamed writes
(:meth:`FsspecStore.open_writer`) are multipart uploads on S3 (see
:mod:`zarrpy.stores._stream_s3`) and buffered until commit elsewhere. On fsspec's local
filesystem a write goes to a temporary file named as LocalStore names them
(so ``zarrpy verify`` finds one a killed writer left) and is renamed over the
target; symbolic links are followed as fsspec follows them (keeping keys
inside the root through links is LocalStore's job).

``zip::`` URLs read only: fsspec's zip filesystem cannot read and write one
archive in a process, and its write mode truncates the file when opened. A
writable ``mode`` in ``storage_options`` is refused before fsspec opens
anything, and a write through a store on a read-mode zip filesystem raises
:class:`~zarrpy.errors.ReadOnlyError` at the first write; both point to
:class:`~zarrpy.stores.zip.ZipStore`, which reads and writes zip archives.

Versioned reads (:meth:`FsspecStore.get_versioned`) are one request per
item with the object's length and version from the same answer on HTTP and
S3 (see :mod:`zarrpy.stores._fsspec_versioned`), local files and fsspec's
memory filesystem. Batches keep at most ``request_concurrency`` requests in
flight (a constructor and :meth:`FsspecStore.from_url` argument, kept
through pickling).

Writes are one request each: ``set`` one PUT, ``delete`` one DELETE (no HEAD,
no listing). :meth:`FsspecStore.set_many` sends its PUTs at once on async
filesystems, :meth:`FsspecStore.delete_many` removes up to 1000 keys per
``DeleteObjects`` request on S3. On S3 the store writes conditionally
(:meth:`FsspecStore.set_conditional`: ``IfMatch`` with the ETag
``get_versioned`` reported, ``IfNoneMatch="*"`` for a new object; deletes
too), so read-modify-write needs no lock; see
:mod:`zarrpy.stores._fsspec_writes`.

Sizes (``getsize``, ``list_prefix_with_sizes``) come from ``fs.info`` and
``fs.find(detail=True)``: one listing on object stores; where a listing
carries no sizes (HTTP directory pages) one ``info`` (HEAD) per key, run
concurrently on async filesystems. No value is downloaded, unless the
filesystem reports no size at all (then the value is read, as zarr-python
does).

A store made by :meth:`FsspecStore.from_url` pickles as its URL and
``storage_options`` and reopens from them; one made from a filesystem object
pickles that object (fsspec filesystems pickle by their constructor
arguments). Credentials in ``storage_options`` therefore travel in the pickle.
A ``memory://`` store pickles too, but the same URL in another process names
that process's own (empty) memory filesystem, so an *array* on one refuses to
pickle (:attr:`FsspecStore.process_local`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any, Awaitable, Callable, Iterable, Iterator, Sequence, TypeVar

import fsspec
from fsspec.asyn import AsyncFileSystem, sync
from fsspec.core import url_to_fs
from fsspec.implementations.local import LocalFileSystem
from fsspec.implementations.memory import MemoryFileSystem
from fsspec.implementations.zip import ZipFileSystem

from ..core.byte_range import ByteRequest, ObjectRead, OffsetRequest, RangeRequest, SuffixRequest, VersionedRequest
from ..core.pending import Pending
from ..errors import KeyNotFoundError, ReadOnlyError, StoreError
from ._concurrent import bounded, concurrency_setting, start_on_loop
from ._fsspec_versioned import blocking_reader_of, reader_of
from ._fsspec_writes import (
    S3_DELETE_BATCH, is_s3, put_one, remove_one, s3_conditional, s3_conditions_known, s3_delete_batch, s3_etag,
)
from ._ranges import clamp, is_empty, trim
from ._stream_s3 import PART_NBYTES, PARTS_IN_FLIGHT, S3ObjectWriter
from ._tempfiles import TMP_PREFIX, temp_name
from .abc import AnswerCallback, Store, checked_answers, each_answered, store_error, validate_key, validate_prefix
from .writes import ABSENT, ConditionalSwitch, ConditionalWrite, ObjectWriter

T = TypeVar("T")

# Marks a local temporary file of an in-progress write (never listed; older
# zarrpy versions put the mark after the target's name, hence "in", not "startswith").
_TMP_MARK = TMP_PREFIX

# Errors that mean "there is no value under this key".
_MISSING = (FileNotFoundError, IsADirectoryError, NotADirectoryError)

# Concurrent ``info`` requests when a listing carries no sizes (HTTP).
_SIZE_CONCURRENCY = 16

_ZIP_WRITE_HINT = (
    "fsspec's zip filesystem cannot read and write one archive in a process; "
    "write zip archives with zarrpy.stores.ZipStore(path, mode='w' or 'a')"
)


def _zip_write_mode(url: str, options: dict[str, Any]) -> str | None:
    """The writable ``mode`` a chained ``zip::`` URL asks fsspec for, if any.

    Options reach the first protocol of a chain unkeyed, and any protocol
    keyed by its name (``{"zip": {"mode": "w"}}``), as in fsspec.
    """
    protocols = [bit.split("://", 1)[0] for bit in url.split("::")]
    if "zip" not in protocols:
        return None
    mode = options.get("zip", {}).get("mode")
    if mode is None and protocols[0] == "zip":
        mode = options.get("mode")
    return mode if mode not in (None, "r", "rb") else None


def _s3_pool(url: str, options: dict[str, Any], concurrency: int) -> dict[str, Any]:
    """``options`` for an ``s3://`` URL with botocore's connection pool as
    large as the store's request concurrency (botocore's default of 10
    connections would send a batch of 25 reads in three waves), unless the
    options (or fsspec's configuration) set ``max_pool_connections``."""
    if url.split("://", 1)[0] not in ("s3", "s3a"):
        return options
    import fsspec.config

    base = options.get("config_kwargs", fsspec.config.conf.get("s3", {}).get("config_kwargs", {}))
    if "max_pool_connections" in base:
        return options
    return {**options, "config_kwargs": {**base, "max_pool_connections": concurrency}}


def _limits(request: ByteRequest | None) -> tuple[int | None, int | None]:
    """``(start, end)`` for ``cat_file``; a suffix is a negative start."""
    if request is None:
        return None, None
    if isinstance(request, RangeRequest):
        return request.start, request.end
    if isinstance(request, OffsetRequest):
        return request.offset, None
    if isinstance(request, SuffixRequest):
        return -request.length, None
    raise TypeError(f"not a byte request: {request!r}")


def _reopen(url: str, storage_options: dict[str, Any], read_only: bool,
            request_concurrency: int | None = None) -> "FsspecStore":
    return FsspecStore.from_url(url, storage_options=storage_options, read_only=read_only,
                                request_concurrency=request_concurrency)


class FsspecStore(Store):
    """Keys under ``path`` on the fsspec filesystem ``fs``.

    Parameters
    ----------
    fs
        A synchronous fsspec filesystem instance (async filesystems such as
        s3fs are fine when created the default way, ``asynchronous=False``).
    path
        The store's root on ``fs`` (with or without the protocol).
    read_only
        Refuse ``set`` and ``delete`` with :class:`~zarrpy.errors.ReadOnlyError`.
    request_concurrency
        Requests of one batch in flight at once on an async filesystem
        (default :attr:`~zarrpy.stores.abc.Store.request_concurrency`).
    """

    def __init__(self, fs: fsspec.AbstractFileSystem, path: str = "", read_only: bool = False,
                 request_concurrency: int | None = None) -> None:
        if getattr(fs, "asynchronous", False):
            raise ValueError(
                "FsspecStore needs a filesystem created with asynchronous=False; "
                "zarrpy drives async filesystems through fsspec's sync wrappers"
            )
        if isinstance(fs, ZipFileSystem) and fs.mode != "r":
            raise StoreError(f"cannot use a zip filesystem opened with mode {fs.mode!r}: {_ZIP_WRITE_HINT}")
        self.fs = fs
        # Writes to a read-mode zip filesystem are refused with a pointer to ZipStore.
        self._zip = isinstance(fs, ZipFileSystem)
        # HTTP and S3 read through one GET per request (get_versioned's readers).
        self._one_get = reader_of(fs)[0] is not None
        # HTTP and S3: a single request is sent from the asking thread (get_versioned).
        self._blocking_read = blocking_reader_of(fs)
        # Older fsspec zip filesystems raise zipfile's KeyError for a missing member.
        self._missing = _MISSING + ((KeyError,) if self._zip else ())
        root = fs._strip_protocol(path).rstrip("/") if path else ""
        self.path = root
        # What goes in front of a key: "bucket/prefix/" on object stores, "/"
        # at the root of a local or memory filesystem.
        self._prefix = root + "/" if root else fs.root_marker
        self.read_only = read_only
        if request_concurrency is not None:
            self.request_concurrency = concurrency_setting(request_concurrency)
        self._url: str | None = None
        self._storage_options: dict[str, Any] | None = None
        self.streams_writes = is_s3(fs)

    @classmethod
    def from_url(
        cls,
        url: str,
        storage_options: dict[str, Any] | None = None,
        read_only: bool = False,
        request_concurrency: int | None = None,
    ) -> "FsspecStore":
        """Open ``url`` (``s3://bucket/x.zarr``, ``zip::file:///a.zip`` …).

        ``storage_options`` go to the filesystem constructor (for a chained
        URL, keyed by protocol as fsspec expects); ``request_concurrency``
        as for the constructor.
        """
        options = dict(storage_options or {})
        zip_mode = _zip_write_mode(url, options)
        if zip_mode is not None:
            raise StoreError(f"cannot open {url!r} with mode {zip_mode!r}: {_ZIP_WRITE_HINT}")
        try:
            fs, path = url_to_fs(url, **_s3_pool(url, options, request_concurrency or Store.request_concurrency))
        except (ImportError, ValueError) as exc:
            raise StoreError(f"cannot open {url!r}: {exc}") from exc
        except FileNotFoundError as exc:
            if "zip" not in url.split("://", 1)[0]:
                raise
            raise StoreError(f"cannot open {url!r}: no such zip archive ({exc}); {_ZIP_WRITE_HINT}") from exc
        store = cls(fs, path, read_only=read_only, request_concurrency=request_concurrency)
        stripped = url.rstrip("/")
        store._url = url if stripped.endswith(":") else stripped
        store._storage_options = options
        return store

    # -- helpers -------------------------------------------------------------
    def _full(self, key: str) -> str:
        return self._prefix + validate_key(key)

    def _key_of(self, path: str) -> str | None:
        path = self.fs._strip_protocol(path)
        if not path.startswith(self._prefix):
            return None
        key = path[len(self._prefix) :]
        return key if key and not key.endswith("/") else None

    def _error(self, verb: str, key: str, exc: BaseException) -> StoreError:
        return store_error(self, verb, key, exc)

    # -- reads ---------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        if self._one_get:  # HTTP and S3: one GET (s3fs asks a HEAD before a whole read)
            return self.get_partial_values([(key, byte_range)])[0]
        path = self._full(key)
        if is_empty(byte_range):
            return b"" if self._size(key, path) is not None else None
        start, end = _limits(byte_range)
        try:
            data = self.fs.cat_file(path, start=start, end=end)
        except self._missing:
            return None
        except Exception as exc:  # noqa: BLE001 - retried once, then named
            return self._get_fallback(key, path, byte_range, exc)
        return trim(data, byte_range)

    def exists(self, key: str) -> bool:
        """Whether ``key`` holds a value, from metadata (no data is read)."""
        path = self._full(key)
        try:
            self.fs.invalidate_cache(path)
            info: dict[str, Any] = self.fs.info(path)
        except self._missing:
            return False
        except Exception as exc:  # noqa: BLE001
            raise self._error("stat", key, exc) from exc
        kind: str | None = info.get("type")
        return kind != "directory"

    def _size(self, key: str, path: str) -> int | None:
        """The value's length in bytes, or None if the key is missing."""
        try:
            self.fs.invalidate_cache(path)
            info = self.fs.info(path)
        except self._missing:
            return None
        except Exception as exc:  # noqa: BLE001
            raise self._error("stat", key, exc) from exc
        if info.get("type") == "directory":
            return None
        if info.get("size") is None:
            raise self._error("stat", key, ValueError("the filesystem reports no size"))
        return int(info["size"])

    def getsize(self, key: str) -> int:
        """The value's size from ``fs.info`` (a HEAD request over HTTP)."""
        size = self._info_sizes([(key, self._full(key))])[0]
        if size is None:
            raise KeyNotFoundError(f"no value under key {key!r} in {self.url}")
        return size

    def _get_fallback(
        self, key: str, path: str, request: ByteRequest | None, exc: BaseException
    ) -> bytes | None:
        """Retry a failed ranged read with explicit limits from the size.

        Covers HTTP-style ``416`` answers for a start at/after the end and
        filesystems without negative (suffix) starts. A failed whole read, or
        one that fails again, is reported as a StoreError.
        """
        if request is None:
            raise self._error("read", key, exc) from exc
        nbytes = self._size(key, path)
        if nbytes is None:
            return None
        start, end = clamp(request, nbytes)
        if start >= end:
            return b""
        try:
            return trim(self.fs.cat_file(path, start=start, end=end), RangeRequest(start, end))
        except self._missing:
            return None
        except Exception as exc2:  # noqa: BLE001
            raise self._error("read", key, exc2) from exc2

    def get_partial_values(
        self, requests: Sequence[tuple[str, ByteRequest | None]]
    ) -> list[bytes | None]:
        """Answer all requests with one ``fs.cat_ranges`` call (concurrent on
        async filesystems, at most :attr:`request_concurrency` at once);
        results are in request order. Over HTTP and S3 each request is one
        GET, as :meth:`get_versioned` sends it (s3fs's ``cat_ranges`` asks a
        HEAD before each whole read)."""
        if self._one_get:
            return [None if got is None else got.data
                    for got in self.get_versioned([VersionedRequest(key, r) for key, r in requests])]
        out: list[bytes | None] = [None] * len(requests)
        batch: list[int] = []
        paths: list[str] = []
        starts: list[int | None] = []
        ends: list[int | None] = []
        for i, (key, request) in enumerate(requests):
            path = self._full(key)
            if is_empty(request):
                out[i] = self.get(key, request)
                continue
            start, end = _limits(request)
            batch.append(i)
            paths.append(path)
            starts.append(start)
            ends.append(end)
        if not batch:
            return out
        # On async filesystems, at most request_concurrency requests at once.
        bound = {"batch_size": self.request_concurrency} if isinstance(self.fs, AsyncFileSystem) else {}
        try:
            results = self.fs.cat_ranges(paths, starts, ends, on_error="return", **bound)
        except Exception:  # noqa: BLE001 - the batch call itself failed: go key by key
            for i in batch:
                out[i] = self.get(*requests[i])
            return out
        for i, path, result in zip(batch, paths, results):
            key, request = requests[i]
            if isinstance(result, self._missing):
                out[i] = None
            elif isinstance(result, BaseException):
                out[i] = self._get_fallback(key, path, request, result)
            else:
                out[i] = trim(result, request)
        return out

    def get_versioned(self, requests: Sequence[VersionedRequest]) -> list[ObjectRead | None]:
        """One request per item, with the object's length and version from
        the same answer: HTTP (``Content-Range``, ``ETag``, ``If-Match``) and
        S3 (``get_object`` with ``IfMatch``) concurrently, at most
        :attr:`request_concurrency` at once; local files by ``fstat`` and
        fsspec's memory filesystem by file object. Other filesystems: the
        default (a size request, then the bytes; no versions). A single
        HTTP or S3 request is sent from the calling thread
        (:func:`~zarrpy.stores._fsspec_versioned.blocking_reader_of`): the
        caller waits for it anyway, and the hops to the event loop's thread
        and back cost more than the request's own CPU."""
        if len(requests) == 1 and self._blocking_read is not None and not self._on_loop():
            (r,) = requests
            path = self._full(r.key)
            try:
                result: ObjectRead | None | BaseException = self._blocking_read(self.fs, path, r.range, r.if_match)
            except Exception as exc:  # noqa: BLE001 - named as a batch's error is
                result = exc
            return checked_answers(self, requests, [result])
        return self.submit_versioned(requests).result()

    def _on_loop(self) -> bool:
        """Whether this thread runs the filesystem's event loop."""
        try:
            return asyncio.get_running_loop() is self.fs.loop
        except RuntimeError:
            return False

    @property
    def sends_at_once(self) -> bool:  # type: ignore[override]
        """True on HTTP and S3: :meth:`submit_versioned` starts on the event loop."""
        return reader_of(self.fs)[0] is not None

    def submit_versioned(self, requests: Sequence[VersionedRequest],
                         on_answer: AnswerCallback | None = None) -> Pending[list[ObjectRead | None]]:
        """:meth:`get_versioned`; on HTTP and S3 the batch starts on the
        filesystem's event loop at once (see :meth:`Store.submit_versioned`)."""
        requests = list(requests)
        paths = [self._full(r.key) for r in requests]
        async_read, sync_read = reader_of(self.fs)
        if async_read is not None and requests:
            fs, read = self.fs, async_read

            async def one(i: int) -> ObjectRead | None:
                return await read(fs, paths[i], requests[i].range, requests[i].if_match)

            future, sent = start_on_loop(fs.loop, self.request_concurrency, one, range(len(requests)), on_answer)
            return Pending.on_loop(future, lambda results: checked_answers(self, requests, results), sent,  # type: ignore[arg-type]
                                   fs.loop)
        if async_read is not None:
            return Pending.later(list)
        if sync_read is not None:

            def read_each() -> list[ObjectRead | None]:
                results: list[ObjectRead | None | BaseException] = []
                for path, r in zip(paths, requests):
                    try:
                        results.append(sync_read(self.fs, path, r.range, r.if_match))
                    except Exception as exc:  # noqa: BLE001 - named below
                        results.append(exc)
                answers = checked_answers(self, requests, results)
                return answers if on_answer is None else each_answered(answers, on_answer)

            return Pending.later(read_each)
        def by_default() -> list[ObjectRead | None]:  # a size request, then the bytes
            answers = Store.get_versioned(self, requests)
            return answers if on_answer is None else each_answered(answers, on_answer)

        return Pending.later(by_default)

    # -- writes --------------------------------------------------------------
    @property
    def read_only_hint(self) -> str:
        return _ZIP_WRITE_HINT if self._zip else super().read_only_hint

    def _check_writable(self, key: str) -> None:
        if self._zip:
            raise ReadOnlyError(f"cannot write {key!r} to {self.url}: {_ZIP_WRITE_HINT}")
        super()._check_writable(key)

    def _set(self, key: str, value: bytes) -> None:
        path = self._full(key)
        # Object stores replace a value atomically on PUT; a local filesystem
        # writes in place, so write a temporary file and rename it over.
        local = isinstance(self.fs, LocalFileSystem)
        target = path
        if local:
            parent, _, name = path.rpartition("/")
            target = f"{parent}/{temp_name(name)}"
        try:
            if is_s3(self.fs):  # one PUT, through the lean client when it can
                sync(self.fs.loop, put_one, self.fs, path, value)
                return
            try:
                self.fs.pipe_file(target, value)
            except FileNotFoundError:
                # Filesystems with real directories (local) want the parent.
                self.fs.makedirs(self.fs._parent(path), exist_ok=True)
                self.fs.pipe_file(target, value)
            if local:
                os.replace(target, path)
        except Exception as exc:  # noqa: BLE001
            if local:
                with contextlib.suppress(OSError):
                    os.unlink(target)
            raise self._error("write", key, exc) from exc

    write_part_nbytes: int = PART_NBYTES
    """The part size of a streamed write to S3 (:meth:`open_writer`): 5 MiB
    (S3's minimum) to 5 GiB; an attribute to set on the object."""
    write_parts_in_flight: int = PARTS_IN_FLIGHT
    """How many parts of a streamed write to S3 upload at once while the
    writer goes on; it holds at most ``(write_parts_in_flight + 1) *
    write_part_nbytes`` bytes."""

    def open_writer(self, key: str) -> ObjectWriter:
        """On S3, a multipart upload sent part by part as the bytes come
        and completed at commit (see :mod:`zarrpy.stores._stream_s3`); other
        filesystems buffer the bytes and write them at commit (fsspec's own
        write mode is not atomic everywhere: a local file would be torn)."""
        if not self.streams_writes:
            return super().open_writer(key)
        self._check_writable(key)
        return S3ObjectWriter(self, validate_key(key), self.fs, self._full(key),
                              self.write_part_nbytes, self.write_parts_in_flight)

    def _delete(self, key: str) -> None:
        path = self._full(key)
        try:
            self.fs.rm_file(path)
        except self._missing:
            pass
        except Exception as exc:  # noqa: BLE001
            raise self._error("delete", key, exc) from exc

    # -- batched and conditional writes (zarrpy.stores._fsspec_writes) ---------
    def _s3_conditions(self) -> bool:
        """True on S3 (s3fs) whose botocore sends ``IfMatch`` and
        ``IfNoneMatch`` (asked of the client once); False on other
        filesystems. Setting it to False turns conditional writes off."""
        return is_s3(self.fs) and bool(sync(self.fs.loop, s3_conditions_known, self.fs))

    supports_conditional_writes = ConditionalSwitch(_s3_conditions)

    @property
    def supports_conditional_deletes(self) -> bool:  # type: ignore[override]
        """As :attr:`supports_conditional_writes`: S3 deletes with ``IfMatch``."""
        return bool(self.supports_conditional_writes)

    def set_conditional(self, writes: Sequence[ConditionalWrite]) -> list[bool]:
        """Each write one ``put_object`` / ``delete_object`` with ``IfMatch``
        (the ETag :meth:`get_versioned` reported) or ``IfNoneMatch="*"``
        (:data:`~zarrpy.stores.writes.ABSENT`), all at once on s3fs's loop, at
        most :attr:`request_concurrency` in flight; False where S3 refused the
        condition (see :mod:`zarrpy.stores._fsspec_writes`)."""
        if not self.supports_conditional_writes:
            return super().set_conditional(writes)
        writes = [w if w.value is None or isinstance(w.value, bytes) else w._replace(value=bytes(w.value))
                  for w in writes]
        for w in writes:
            self._check_writable(w.key)
            validate_key(w.key)
            if w.expected is not ABSENT:
                try:
                    s3_etag(w.expected)
                except TypeError as exc:
                    raise self._error("write", w.key, exc) from exc
        fs, paths = self.fs, [self._full(w.key) for w in writes]

        async def one(i: int) -> bool:
            return await s3_conditional(fs, paths[i], writes[i].value, writes[i].expected)

        results = self._concurrently(one, range(len(writes)))
        done: list[bool] = []
        for w, result in zip(writes, results):
            if isinstance(result, BaseException):
                raise self._error("delete" if w.value is None else "write", w.key, result) from result
            done.append(result)
        return done

    @property
    def batches_writes(self) -> bool:  # type: ignore[override]
        """True on async filesystems (S3, GCS …): :meth:`set_many` and
        :meth:`delete_many` keep their requests in flight together (or
        delete in batched requests)."""
        return isinstance(self.fs, AsyncFileSystem)

    def set_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """On async filesystems (S3, GCS …) one PUT per value, all at once,
        at most :attr:`request_concurrency` in flight (no HEAD, no listing);
        elsewhere value by value."""
        pairs: list[tuple[str, bytes]] = []
        refused: StoreError | None = None  # a key no write accepts: the ones before it are written
        try:
            for key, value in items:
                self._check_writable(key)
                pairs.append((validate_key(key), value if isinstance(value, bytes) else bytes(value)))
        except StoreError as exc:
            refused = exc
        if not isinstance(self.fs, AsyncFileSystem) or len(pairs) < 2:
            for key, value in pairs:
                self._set(key, value)
        else:
            fs = self.fs

            async def one(pair: tuple[str, bytes]) -> None:
                await put_one(fs, self._full(pair[0]), pair[1])

            for (key, _), result in zip(pairs, self._concurrently(one, pairs)):
                if isinstance(result, BaseException):
                    raise self._error("write", key, result) from result
        if refused is not None:
            raise refused

    def delete_many(self, keys: Iterable[str]) -> None:
        """On S3 one ``DeleteObjects`` request per :data:`~zarrpy.stores._fsspec_writes.S3_DELETE_BATCH`
        keys; on other async filesystems one delete per key, all at once (at
        most :attr:`request_concurrency` in flight); elsewhere key by key."""
        names, refused = self._writable_keys(keys)  # a refused key: the ones before it are removed
        self._delete_all(names)
        if refused is not None:
            raise refused

    def _delete_all(self, names: list[str]) -> None:
        """:meth:`delete_many` of checked keys."""
        if not isinstance(self.fs, AsyncFileSystem) or len(names) < 2:
            for key in names:
                self._delete(key)
            return
        fs, paths = self.fs, [self._full(key) for key in names]
        key_of = dict(zip(paths, names))
        if is_s3(fs):
            batches = [paths[i : i + S3_DELETE_BATCH] for i in range(0, len(paths), S3_DELETE_BATCH)]
            for batch, result in zip(batches, self._concurrently(lambda b: s3_delete_batch(fs, b), batches)):
                if isinstance(result, BaseException):
                    raise self._error("delete", key_of[batch[0]], result) from result
                for path, why in result:
                    raise self._error("delete", key_of[path], OSError(why))
            return
        for key, failed in zip(names, self._concurrently(lambda p: remove_one(fs, p), paths)):
            if isinstance(failed, BaseException):
                raise self._error("delete", key, failed) from failed

    def delete_prefix(self, prefix: str) -> None:
        """Every key under ``prefix`` removed with :meth:`delete_many` (one
        listing, then batched deletes on S3)."""
        self.delete_many(list(self.list_prefix(validate_prefix(prefix))))

    def _concurrently(self, func: Callable[[Any], Awaitable[T]], items: Iterable[Any]) -> list[T | BaseException]:
        """``func(item)`` for every item on the filesystem's loop, at most
        :attr:`request_concurrency` at once; results (or exceptions) in order."""
        todo = list(items)
        if not todo:
            return []

        async def all_of() -> list[T | BaseException]:
            return await bounded(self.request_concurrency, func, todo)

        results: list[T | BaseException] = sync(self.fs.loop, all_of)
        return results

    # -- listing -------------------------------------------------------------
    def list_prefix(self, prefix: str) -> Iterator[str]:
        for key, _ in self._find(prefix):
            yield key

    def list_prefix_with_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        """Sizes from one ``fs.find(detail=True)``; keys the listing gives no
        size for are asked with ``fs.info``, concurrently where fsspec can."""
        found = list(self._find(prefix))
        unsized = [(key, path) for key, (path, info) in found if info.get("size") is None]
        sizes = dict(zip((key for key, _ in unsized), self._info_sizes(unsized)))
        for key, (_, info) in found:
            size = info.get("size") if key not in sizes else sizes[key]
            if size is not None:
                yield key, int(size)

    def _find(self, prefix: str) -> Iterator[tuple[str, tuple[str, dict[str, Any]]]]:
        """``(key, (path, info))`` of every file whose key starts with ``prefix``,
        from one ``fs.find(detail=True)`` under the prefix's directory."""
        prefix = validate_prefix(prefix)
        head = prefix.rpartition("/")[0]
        directory = self._prefix + head if head else self._prefix.rstrip("/") or self._prefix
        try:
            self.fs.invalidate_cache(directory)
            found = self.fs.find(directory, detail=True)
        except self._missing:
            return
        except Exception as exc:  # noqa: BLE001
            raise self._error("list", prefix, exc) from exc
        for path, info in found.items():
            key = self._key_of(path)
            if key is not None and key.startswith(prefix) and _TMP_MARK not in key:
                yield key, (path, info)

    def _info_sizes(self, items: list[tuple[str, str]]) -> list[int | None]:
        """Sizes of ``(key, path)`` pairs from ``fs.info``, None for a key gone
        since the listing; concurrent (bounded) on async filesystems. Only
        where the filesystem reports no size at all is the value read."""
        fs = self.fs

        def info(path: str) -> Any:
            try:
                fs.invalidate_cache(path)
                return fs.info(path)
            except Exception as exc:  # noqa: BLE001 - sorted out below
                return exc

        async def info_all() -> list[Any]:
            gate = asyncio.Semaphore(_SIZE_CONCURRENCY)

            async def one(path: str) -> Any:
                async with gate:
                    return await fs._info(path)

            return await asyncio.gather(*(one(p) for _, p in items), return_exceptions=True)

        if isinstance(fs, AsyncFileSystem) and len(items) > 1:
            infos = sync(fs.loop, info_all)
        else:
            infos = [info(path) for _, path in items]
        out: list[int | None] = []
        for (key, _), found in zip(items, infos):
            if isinstance(found, self._missing) or (isinstance(found, dict) and found.get("type") == "directory"):
                out.append(None)
            elif isinstance(found, BaseException):
                raise self._error("stat", key, found) from found
            elif found.get("size") is None:
                value = self.get(key)
                out.append(None if value is None else len(value))
            else:
                out.append(int(found["size"]))
        return out

    def list_dir(self, prefix: str) -> Iterator[str]:
        prefix = validate_prefix(prefix).rstrip("/")
        directory = self._prefix + prefix if prefix else self._prefix.rstrip("/") or self._prefix
        try:
            self.fs.invalidate_cache(directory)
            entries = self.fs.ls(directory, detail=False)
        except self._missing:
            return
        except Exception as exc:  # noqa: BLE001
            raise self._error("list", prefix, exc) from exc
        base = (prefix + "/") if prefix else ""
        seen: set[str] = set()
        for entry in entries:
            key = self._key_of(entry.rstrip("/"))
            if key is None or not key.startswith(base):
                continue
            child = key[len(base) :].split("/", 1)[0]
            if child and child not in seen:
                seen.add(child)
                yield child

    # -- identity and pickling -------------------------------------------------
    @property
    def process_local(self) -> bool:
        """True on fsspec's ``memory://`` filesystem, which is a dict of this
        process: the same URL in another process names an empty one."""
        return isinstance(self.fs, MemoryFileSystem)

    @property
    def url(self) -> str:
        if self._url is not None:
            return self._url
        url: str = self.fs.unstrip_protocol(self.path)
        return url

    def __reduce__(self) -> tuple[Any, ...]:
        # The concurrency travels only when set on this store (else the default).
        extra = (self.request_concurrency,) if "request_concurrency" in vars(self) else ()
        if self._url is not None:
            return (_reopen, (self._url, self._storage_options, self.read_only, *extra))
        return (FsspecStore, (self.fs, self.path, self.read_only, *extra))

    def __repr__(self) -> str:
        return f"FsspecStore({self.url!r}{', read_only=True' if self.read_only else ''})"


__all__ = ["FsspecStore"]
