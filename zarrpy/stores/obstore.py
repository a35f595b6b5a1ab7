"""A store over obstore (Rust's ``object_store``): S3, GCS, Azure, HTTP, local files, memory.

Needs the optional extra ``zarrpy[obstore]``; obstore is imported only when
an :class:`ObjectStore` is made. Wrap an ``obstore.store`` object, with an
optional key prefix inside it::

    from obstore.store import S3Store
    from zarrpy.stores import ObjectStore

    store = ObjectStore(S3Store("bucket", prefix="data", region="eu-west-1"), prefix="x.zarr")
    a = zarrpy.open_array(store)                       # or simply store=S3Store(...)

:func:`~zarrpy.stores.store_from_url` wraps an obstore store passed as
``store=`` itself. ``ObjectStore.from_url("s3://bucket/x.zarr", region=...)``
builds one with ``obstore.store.from_url``.

**Requests.** A single read is one ``get`` (a ranged one for a byte range,
an ``offset`` or ``suffix`` range for the others). A batch
(:meth:`ObjectStore.get_partial_values`, which zarrpy's chunk reads use)
runs concurrently on one event loop (fsspec's I/O thread, the one loop
:class:`~zarrpy.stores.fsspec.FsspecStore` uses for async filesystems), at
most :attr:`ObjectStore.request_concurrency` requests at once (also
called ``max_concurrency``); the byte ranges
of one key go out in one ``obstore.get_ranges`` call. zarrpy merges nearby
ranges itself (:func:`~zarrpy.core.byte_range.read_coalesced`), so obstore
is asked not to merge them again (``coalesce=0``, where obstore has it).
:meth:`ObjectStore.get_versioned` is one ``get`` per request, with the
``range`` and ``if_match`` options: the size and ETag come with the bytes,
and a precondition failure is a changed object. Listing uses ``obstore.list`` (sizes come with it) and
``obstore.list_with_delimiter``; writes ``obstore.put`` (atomic: object
stores replace whole objects, obstore's ``LocalStore`` renames a temporary
file); streamed writes obstore's ``open_writer`` (multipart uploads, see
:mod:`zarrpy.stores._stream_obstore`); ``delete_prefix`` is one bulk ``obstore.delete``.

**Safe updates.** Over S3, Azure and memory stores
:meth:`ObjectStore.set_conditional` is one ``put`` per write with
``mode="create"`` or ``mode={"e_tag": <version>}`` (the ETag
``get_versioned`` reported), checked by the backend; obstore deletes
nothing conditionally. Over obstore's LocalStore, which has no conditional
update, :meth:`ObjectStore.locked_for_update` takes the same cross-process
locks as zarrpy's LocalStore. ``set_many`` sends its puts at once,
``delete_many`` is one bulk ``obstore.delete``.

**Same answers as every zarrpy store.** Keys are checked first (no ``..``);
a range past the end is clamped, a start at or past the end gives ``b""``
(object_store refuses both: the request is asked again within the value's
size, only when it happens), a missing key reads as None, and any other
failure is a :class:`~zarrpy.errors.StoreError` naming the key.

**Pickling.** obstore's S3, GCS, Azure, HTTP and local stores pickle (by
their configuration: credentials travel with it), and so does an
``ObjectStore`` over one. obstore's ``MemoryStore`` does not: pickling an
``ObjectStore`` over it raises a ``TypeError`` saying so.
"""

from __future__ import annotations

import asyncio
import functools
from contextlib import AbstractContextManager, nullcontext
import importlib
import os
import pickle
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, Hashable, Iterable, Iterator, Sequence, TypeVar

from fsspec.asyn import get_loop, sync

from ..core.byte_range import (
    UNKNOWN_SIZE, ByteRequest, ObjectRead, OffsetRequest, RangeRequest, SuffixRequest, VersionedRequest,
)
from ..core.pending import Pending
from ..errors import KeyNotFoundError, StoreError
from ._concurrent import bounded, concurrency_setting, start_on_loop
from ._ranges import clamp, is_empty, trim, versioned_answer
from ._stream_obstore import ObstoreObjectWriter
from ._stream_s3 import PART_NBYTES, PARTS_IN_FLIGHT, check_part_settings
from ._update_locks import update_locks
from ._wrapped import pickle_wrapped
from .abc import AnswerCallback, Store, checked_answers, store_error, validate_key, validate_prefix
from .writes import ABSENT, ConditionalSwitch, ConditionalWrite, ObjectWriter

T = TypeVar("T")

_EXTRA_HINT = "zarrpy.stores.ObjectStore needs obstore: pip install 'zarrpy[obstore]'"

# obstore's store classes (obstore.store.<name>).
_KINDS = ("S3Store", "GCSStore", "AzureStore", "HTTPStore", "LocalStore", "MemoryStore")

# Bucket (or container) name in each cloud store's configuration, and the URL scheme.
_BUCKETS = {
    "S3Store": ("s3", ("bucket", "aws_bucket", "aws_bucket_name", "bucket_name")),
    "GCSStore": ("gs", ("bucket", "google_bucket", "google_bucket_name", "bucket_name")),
    "AzureStore": ("az", ("container_name", "azure_container_name")),
}

_LIST_CHUNK = 1000

# Stores whose writer sends parts as they come (obstore's memory store keeps
# them until close, and HTTP has no multipart uploads: those buffer).
_STREAMING_KINDS = ("S3Store", "GCSStore", "AzureStore", "LocalStore")

# obstore stores whose ``put`` honours ``mode="create"`` and ``mode={"e_tag": …}``
# with the ETag that ``get`` reports. Not LocalStore (object_store has no
# update mode there), GCSStore (its update mode takes the generation, which
# get_versioned does not report) nor HTTPStore.
_CONDITIONAL_KINDS = ("S3Store", "AzureStore", "MemoryStore")


def _obstore() -> Any:
    """The obstore module, or an ImportError naming the extra."""
    try:
        return importlib.import_module("obstore")
    except ImportError as exc:
        raise ImportError(f"{_EXTRA_HINT} ({exc})") from exc


def is_obstore_store(obj: object) -> bool:
    """Whether ``obj`` is an ``obstore.store`` object, asked without
    importing obstore: if it is not imported, no object can be one."""
    module = sys.modules.get("obstore.store")
    if module is None:
        return False
    classes = tuple(c for c in (getattr(module, name, None) for name in _KINDS) if isinstance(c, type))
    return isinstance(obj, classes)


def _url_of(store: Any, prefix: str) -> str | None:
    """``s3://bucket/prefix``, ``file:///dir``, the HTTP URL …; None in memory."""
    kind = type(store).__name__
    base: str | None = None
    if kind == "LocalStore":
        root = getattr(store, "prefix", None)
        base = Path(os.path.abspath(root if root is not None else "/")).as_uri()
    elif kind == "HTTPStore":
        base = getattr(store, "url", None)
    elif kind in _BUCKETS:
        scheme, names = _BUCKETS[kind]
        config = getattr(store, "config", None) or {}
        bucket = next((config[n] for n in names if config.get(n)), None)
        if bucket is not None:
            inner = str(getattr(store, "prefix", None) or "").strip("/")
            base = f"{scheme}://{bucket}" + (f"/{inner}" if inner else "")
    if base is None:
        return None
    return base.rstrip("/") + (f"/{prefix}" if prefix else "")


def _endpoint_of(store: Any) -> str | None:
    config = getattr(store, "config", None) or {}
    for name in ("endpoint", "aws_endpoint", "aws_endpoint_url", "endpoint_url", "google_endpoint"):
        if config.get(name):
            return str(config[name])
    return None


def _unpickle(payload: bytes, prefix: str, read_only: bool, request_concurrency: int | None = None) -> ObjectStore:
    return ObjectStore(pickle.loads(payload), prefix, read_only=read_only, request_concurrency=request_concurrency)


def _range_option(request: ByteRequest | None) -> Any:
    """obstore's ``range`` option for ``request`` (None: the whole object). A
    request for no bytes asks for the last byte, so the answer still tells
    the object's size and version."""
    if is_empty(request):
        return {"suffix": 1}
    if request is None or (isinstance(request, OffsetRequest) and request.offset == 0):
        return None
    if isinstance(request, RangeRequest):
        return (request.start, request.end)
    if isinstance(request, OffsetRequest):
        return {"offset": request.offset}
    if isinstance(request, SuffixRequest):
        return {"suffix": request.length}
    raise TypeError(f"not a byte request: {request!r}")


def _disjoint(ranges: list[tuple[int, RangeRequest]]) -> tuple[list[tuple[int, RangeRequest]], list[int]]:
    """Split ``(index, range)`` pairs into ranges that neither overlap nor
    touch (one ``get_ranges`` call: obstore merges touching ranges, and a
    merged read past the end of the value fails inside obstore) and the
    indices of the rest."""
    batch: list[tuple[int, RangeRequest]] = []
    rest: list[int] = []
    end = -1
    for i, request in sorted(ranges, key=lambda item: (item[1].start, item[1].end)):
        if request.start > end:
            batch.append((i, request))
            end = request.end
        else:
            rest.append(i)
    return batch, rest


class ObjectStore(Store):
    """Keys under ``prefix`` of an obstore store.

    Parameters
    ----------
    store
        An ``obstore.store`` object: ``S3Store``, ``GCSStore``, ``AzureStore``,
        ``HTTPStore``, ``LocalStore``, ``MemoryStore``.
    prefix
        Where the keys start inside ``store`` (``"x.zarr"``; ``""``: at its root).
    read_only
        Refuse ``set`` and ``delete`` with :class:`~zarrpy.errors.ReadOnlyError`.
    request_concurrency
        Requests of one batch in flight at once (default
        :attr:`~zarrpy.stores.abc.Store.request_concurrency`).
    """

    def __init__(self, store: Any, prefix: str = "", read_only: bool = False, *,
                 request_concurrency: int | None = None) -> None:
        self._obs = _obstore()
        if not is_obstore_store(store):
            raise TypeError(
                f"ObjectStore wraps an obstore store (obstore.store.S3Store, LocalStore, …), not {store!r}; "
                "for a URL use ObjectStore.from_url"
            )
        self.store = store
        self.prefix = validate_prefix(prefix.strip("/")) if prefix.strip("/") else ""
        self._prefix = self.prefix + "/" if self.prefix else ""
        self.read_only = read_only
        if request_concurrency is not None:
            self.request_concurrency = concurrency_setting(request_concurrency)
        kind = type(store).__name__
        if kind in ("MemoryStore", "LocalStore"):
            self.whole_read_nbytes = 1 << 20  # as zarrpy's memory and local stores
        self._process_local = kind == "MemoryStore"
        self.streams_writes = kind in _STREAMING_KINDS
        self._url = _url_of(store, self.prefix)
        exceptions = importlib.import_module("obstore.exceptions")
        self._missing: tuple[type[BaseException], ...] = (FileNotFoundError,) + tuple(
            c for c in (getattr(exceptions, "NotFoundError", None),) if isinstance(c, type)
        )
        self._changed: tuple[type[BaseException], ...] = tuple(
            c for c in (getattr(exceptions, "PreconditionError", None),) if isinstance(c, type)
        )
        signature = getattr(self._obs.get_ranges_async, "__text_signature__", None) or ""
        self._no_merge: dict[str, int] = {"coalesce": 0} if "coalesce" in signature else {}

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "", read_only: bool = False,
                 request_concurrency: int | None = None, **options: Any) -> ObjectStore:
        """``ObjectStore(obstore.store.from_url(url, **options), prefix)``: the
        URL's path becomes the obstore store's own prefix; ``options`` are
        obstore's (``region=``, ``config=``, ``client_options=``, …)."""
        _obstore()
        store = importlib.import_module("obstore.store").from_url(url, **options)
        return cls(store, prefix, read_only=read_only, request_concurrency=request_concurrency)

    @property
    def max_concurrency(self) -> int:
        """The former name of :attr:`request_concurrency` (the same setting)."""
        return self.request_concurrency

    @max_concurrency.setter
    def max_concurrency(self, value: int) -> None:
        self.request_concurrency = concurrency_setting(value)

    # -- helpers ----------------------------------------------------------------------
    def _path(self, key: str) -> str:
        return self._prefix + validate_key(key)

    def _run(self, func: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run the coroutine ``func(*args)`` on fsspec's I/O loop and wait for it."""
        result: T = sync(get_loop(), func, *args)
        return result

    def _head_size(self, path: str) -> int | None:
        """The size of the object at ``path``, None if there is none."""
        return self._run(self._head_size_async, path)

    async def _head_size_async(self, path: str) -> int | None:
        try:
            meta = await self._obs.head_async(self.store, path)
        except self._missing:
            return None
        return int(meta["size"])

    # -- reads --------------------------------------------------------------------------
    async def _get(self, key: str, request: ByteRequest | None) -> bytes | None:
        obs, path = self._obs, self._path(key)
        if is_empty(request):
            return b"" if await self._head_size_async(path) is not None else None
        try:
            if isinstance(request, RangeRequest):
                data = await obs.get_range_async(self.store, path, start=request.start, end=request.end)
            else:
                options: dict[str, Any] | None = None
                if isinstance(request, OffsetRequest):
                    options = {"range": {"offset": request.offset}}
                elif isinstance(request, SuffixRequest):
                    options = {"range": {"suffix": request.length}}
                result = await obs.get_async(self.store, path, options=options)
                data = await result.bytes_async()
        except self._missing:
            return None
        except Exception:
            if request is None:
                raise
            return await self._get_clamped(path, request)
        return trim(bytes(data), request)

    async def _get_clamped(self, path: str, request: ByteRequest) -> bytes | None:
        """Read ``request`` again as a range within the value's size
        (object_store refuses a start at or past the end)."""
        nbytes = await self._head_size_async(path)
        if nbytes is None:
            return None
        start, end = clamp(request, nbytes)
        if start >= end:
            return b""
        try:
            data = await self._obs.get_range_async(self.store, path, start=start, end=end)
        except self._missing:
            return None
        return trim(bytes(data), RangeRequest(start, end))

    async def _get_ranges(self, key: str, requests: list[RangeRequest]) -> list[bytes | None]:
        """Several disjoint ranges of one key with one ``get_ranges`` call."""
        try:
            got = await self._obs.get_ranges_async(
                self.store, self._path(key), starts=[r.start for r in requests], ends=[r.end for r in requests],
                **self._no_merge,
            )
        except self._missing:
            return [None] * len(requests)
        except Exception:  # noqa: BLE001 - a start past the end (or an obstore panic): range by range
            return [await self._get(key, r) for r in requests]
        return [trim(bytes(data), r) for data, r in zip(got, requests)]

    async def _get_many(
        self, requests: Sequence[tuple[str, ByteRequest | None]]
    ) -> list[bytes | None | BaseException]:
        ranges: dict[str, list[tuple[int, RangeRequest]]] = {}
        calls: list[Callable[[], Awaitable[list[bytes | None]]]] = []
        slots: list[list[int]] = []

        async def single(key: str, request: ByteRequest | None) -> list[bytes | None]:
            return [await self._get(key, request)]

        def add_single(i: int) -> None:
            calls.append(lambda: single(*requests[i]))
            slots.append([i])

        for i, (key, request) in enumerate(requests):
            if isinstance(request, RangeRequest) and request.end > request.start:
                ranges.setdefault(key, []).append((i, request))
            else:
                add_single(i)
        for key, pairs in ranges.items():
            batch, rest = _disjoint(pairs)
            if len(batch) > 1:
                calls.append(functools.partial(self._get_ranges, key, [r for _, r in batch]))
                slots.append([i for i, _ in batch])
            else:
                rest += [i for i, _ in batch]
            for i in rest:
                add_single(i)
        gate = asyncio.Semaphore(self.request_concurrency)

        async def gated(call: Callable[[], Awaitable[list[bytes | None]]]) -> list[bytes | None]:
            async with gate:
                return await call()

        results = await asyncio.gather(*(gated(c) for c in calls), return_exceptions=True)
        out: list[bytes | None | BaseException] = [None] * len(requests)
        for slot, result in zip(slots, results):
            for j, i in enumerate(slot):
                out[i] = result if isinstance(result, BaseException) else result[j]
        return out

    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        validate_key(key)
        try:
            return self._run(self._get, key, byte_range)
        except Exception as exc:  # noqa: BLE001 - named and chained
            raise store_error(self, "read", key, exc) from exc

    def get_partial_values(
        self, requests: Sequence[tuple[str, ByteRequest | None]]
    ) -> list[bytes | None]:
        """Every request concurrently on one event loop; the ranges of one
        key in one ``obstore.get_ranges`` call. Results in request order."""
        for key, _ in requests:
            validate_key(key)
        if not requests:
            return []
        results = self._run(self._get_many, list(requests))
        out: list[bytes | None] = []
        for (key, _), result in zip(requests, results):
            if isinstance(result, BaseException):
                raise store_error(self, "read", key, result) from result
            out.append(result)
        return out

    async def _versioned(self, request: VersionedRequest, retry: bool = True) -> ObjectRead | None:
        """One ``get`` with the ``range`` and ``if_match`` options; the size
        and version (ETag, else the object's version) from its metadata."""
        key, byte_range, if_match = request
        path = self._path(key)
        options: dict[str, Any] = {}
        option = _range_option(byte_range)
        if option is not None:
            options["range"] = option
        if if_match is not None:
            options["if_match"] = str(if_match)
        try:
            result = await self._obs.get_async(self.store, path, options=options or None)
            data = bytes(await result.bytes_async())
        except self._missing:
            return None
        except self._changed:
            return ObjectRead(None, UNKNOWN_SIZE, None)
        except Exception:
            if byte_range is None or not retry:
                raise
            return await self._versioned_clamped(request)
        meta = result.meta
        version = meta.get("e_tag") or meta.get("version")
        return versioned_answer(data, int(result.range[0]), int(meta["size"]), version, byte_range, if_match)

    async def _versioned_clamped(self, request: VersionedRequest) -> ObjectRead | None:
        """A range object_store refuses (a start at or past the end, any
        range of an empty object): the size and version from ``head``, the
        bytes (if any) read again within the size."""
        key, byte_range, if_match = request
        try:
            meta = await self._obs.head_async(self.store, self._path(key))
        except self._missing:
            return None
        size, version = int(meta["size"]), meta.get("e_tag") or meta.get("version")
        start, end = clamp(byte_range, size)
        if start >= end or is_empty(byte_range):
            return versioned_answer(b"", 0, size, version, RangeRequest(0, 0), if_match)
        return await self._versioned(VersionedRequest(key, RangeRequest(start, end), if_match), retry=False)

    def get_versioned(self, requests: Sequence[VersionedRequest]) -> list[ObjectRead | None]:
        """One ``get`` per request (``range`` and ``if_match`` options; a
        precondition failure is a changed object), concurrently, at most
        :attr:`request_concurrency` at once."""
        return self.submit_versioned(requests).result()

    sends_at_once = True
    """:meth:`submit_versioned` starts on the I/O loop."""

    def submit_versioned(self, requests: Sequence[VersionedRequest],
                         on_answer: AnswerCallback | None = None) -> Pending[list[ObjectRead | None]]:
        """:meth:`get_versioned`, started on the I/O loop at once (see
        :meth:`Store.submit_versioned`)."""
        requests = list(requests)
        for r in requests:
            validate_key(r.key)
        if not requests:
            return Pending.later(list)
        loop = get_loop()
        future, sent = start_on_loop(loop, self.request_concurrency, self._versioned, requests, on_answer)
        return Pending.on_loop(future, lambda results: checked_answers(self, requests, results), sent,  # type: ignore[arg-type]
                               loop)

    def exists(self, key: str) -> bool:
        """Whether a value is stored under ``key``: one ``head`` request."""
        path = self._path(key)
        try:
            return self._head_size(path) is not None
        except Exception as exc:  # noqa: BLE001
            raise store_error(self, "stat", key, exc) from exc

    def getsize(self, key: str) -> int:
        path = self._path(key)
        try:
            size = self._head_size(path)
        except Exception as exc:  # noqa: BLE001
            raise store_error(self, "stat", key, exc) from exc
        if size is None:
            raise KeyNotFoundError(f"no value under key {key!r} in {self.display_name}")
        return size

    # -- writes -------------------------------------------------------------------------
    def _set(self, key: str, value: bytes) -> None:
        try:
            self._obs.put(self.store, self._path(key), value)
        except Exception as exc:  # noqa: BLE001
            raise store_error(self, "write", key, exc) from exc

    write_part_nbytes: int = PART_NBYTES
    """The part size of a streamed write (:meth:`open_writer`; obstore's
    ``buffer_size``): 5 MiB (S3's minimum) to 5 GiB."""
    write_parts_in_flight: int = PARTS_IN_FLIGHT
    """Parts of a streamed write uploading at once (obstore's ``max_concurrency``)."""

    def open_writer(self, key: str) -> ObjectWriter:
        """On S3, GCS, Azure and local obstore stores, obstore's own writer:
        a multipart upload sent part by part, completed at commit, aborted
        otherwise (see :mod:`zarrpy.stores._stream_obstore`). In memory and
        over HTTP: the bytes are buffered and written at commit."""
        if not self.streams_writes:
            return super().open_writer(key)
        self._check_writable(key)
        check_part_settings(self.write_part_nbytes, self.write_parts_in_flight)
        return ObstoreObjectWriter(self, key, self._obs, self.store, self._path(key),
                                   self.write_part_nbytes, self.write_parts_in_flight)

    def _delete(self, key: str) -> None:
        path = self._path(key)
        try:
            self._obs.delete(self.store, path)
        except self._missing:
            return
        except Exception as exc:  # noqa: BLE001
            try:
                gone = self._head_size(path) is None  # a "directory" of a local store is no value
            except Exception:  # noqa: BLE001 - the delete's error is the one to report
                gone = False
            if not gone:
                raise store_error(self, "delete", key, exc) from exc

    def delete_prefix(self, prefix: str) -> None:
        """Every key under ``prefix`` removed with one bulk ``obstore.delete``."""
        prefix = validate_prefix(prefix)
        self._check_writable(prefix)
        paths = [self._prefix + key for key, _ in self._list(prefix)]
        if not paths:
            return
        try:
            self._obs.delete(self.store, paths)
        except Exception:  # noqa: BLE001 - some were gone, or no bulk delete: key by key
            for path in paths:
                self.delete(path[len(self._prefix) :])

    # -- conditional writes and batches ------------------------------------------------
    def _backend_conditions(self) -> bool:
        """True over obstore's S3 (unless its ``conditional_put`` is
        ``"disabled"``), Azure and memory stores: ``put`` with
        ``mode="create"`` or ``mode={"e_tag": <version>}``, checked by the
        backend. Setting it to False turns conditional writes off."""
        kind = type(self.store).__name__
        config = getattr(self.store, "config", None) or {}
        disabled = str(config.get("conditional_put", config.get("aws_conditional_put", ""))).lower() == "disabled"
        return kind in _CONDITIONAL_KINDS and not disabled

    supports_conditional_writes = ConditionalSwitch(_backend_conditions)

    # supports_conditional_deletes stays False: obstore's delete takes no condition.

    @property
    def locks_updates(self) -> bool:  # type: ignore[override]
        """True over obstore's LocalStore, which has no conditional update:
        :meth:`locked_for_update` takes the update locks of zarrpy's
        :class:`~zarrpy.stores.local.LocalStore` for the same directory
        (shared with it; see :mod:`zarrpy.stores._update_locks`)."""
        return type(self.store).__name__ == "LocalStore"

    def locked_for_update(self, keys: Sequence[str]) -> AbstractContextManager[None]:
        """Over obstore's LocalStore, the cross-process update locks of
        ``keys`` (none for a read-only store); elsewhere none."""
        if not self.locks_updates or self.read_only:
            return nullcontext()
        names = [validate_key(key) for key in keys]
        root = os.path.abspath(os.fspath(getattr(self.store, "prefix", None) or os.sep))
        return update_locks(os.path.join(root, *self.prefix.split("/")) if self.prefix else root, names)

    def set_conditional(self, writes: Sequence[ConditionalWrite]) -> list[bool]:
        """Each write one ``put`` with ``mode="create"`` (:data:`~zarrpy.stores.writes.ABSENT`)
        or ``mode={"e_tag": <version>}`` (the version :meth:`get_versioned`
        reported), all at once, at most :attr:`request_concurrency` in
        flight; False where the backend refused the condition
        (``AlreadyExistsError``, ``PreconditionError``). Deletes (a value of
        None) are refused: obstore cannot delete conditionally."""
        if not self.supports_conditional_writes:
            return super().set_conditional(writes)
        todo: list[tuple[str, bytes, Any]] = []
        for key, value, expected in writes:
            self._check_writable(key)
            path = self._path(key)
            if value is None:
                raise store_error(self, "delete", key, ValueError(
                    "obstore cannot delete conditionally (supports_conditional_deletes is False)"))
            if expected is not ABSENT and (not isinstance(expected, str) or not expected):
                raise store_error(self, "write", key, TypeError(
                    f"an obstore version is the ETag string get_versioned reports, not {expected!r}"))
            todo.append((path, value if isinstance(value, bytes) else bytes(value),
                         "create" if expected is ABSENT else {"e_tag": expected}))
        exceptions = importlib.import_module("obstore.exceptions")
        refused: tuple[type[BaseException], ...] = tuple(
            c for c in (getattr(exceptions, n, None) for n in ("AlreadyExistsError", "PreconditionError"))
            if isinstance(c, type) and issubclass(c, BaseException))

        async def one(item: tuple[str, bytes, Any]) -> bool:
            path, value, mode = item
            try:
                await self._obs.put_async(self.store, path, value, mode=mode)
            except refused:
                return False
            return True

        results = self._run(bounded, self.request_concurrency, one, todo) if todo else []
        done: list[bool] = []
        for w, result in zip(writes, results):
            if isinstance(result, BaseException):
                raise store_error(self, "write", w.key, result) from result
            done.append(result)
        return done

    batches_writes = True
    """:meth:`set_many` keeps its puts in flight together, :meth:`delete_many` is one bulk delete."""

    def set_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """One ``put`` per value, all at once, at most :attr:`request_concurrency` in flight."""
        pairs: list[tuple[str, bytes]] = []
        refused: StoreError | None = None  # a key no write accepts: the ones before it are written
        try:
            for key, value in items:
                self._check_writable(key)
                pairs.append((self._path(key), value if isinstance(value, bytes) else bytes(value)))
        except StoreError as exc:
            refused = exc

        async def one(pair: tuple[str, bytes]) -> None:
            await self._obs.put_async(self.store, *pair)

        results = self._run(bounded, self.request_concurrency, one, pairs) if pairs else []
        for (path, _), result in zip(pairs, results):
            if isinstance(result, BaseException):
                raise store_error(self, "write", path[len(self._prefix) :], result) from result
        if refused is not None:
            raise refused

    def delete_many(self, keys: Iterable[str]) -> None:
        """One bulk ``obstore.delete`` (S3: ``DeleteObjects`` per 1000 keys;
        Azure: batches of 256; elsewhere concurrent single deletes); where
        it fails (a backend that refuses a missing key), key by key."""
        names, refused = self._writable_keys(keys)  # a refused key: the ones before it are removed
        if len(names) < 2:
            for key in names:
                self._delete(key)
        else:
            try:
                self._obs.delete(self.store, [self._path(key) for key in names])
            except Exception:  # noqa: BLE001 - some were missing, or no bulk delete: key by key
                for key in names:
                    self._delete(key)
        if refused is not None:
            raise refused

    # -- listing ---------------------------------------------------------------------------
    def _list(self, prefix: str) -> list[tuple[str, int]]:
        """``(key, size)`` of every key starting with ``prefix``. object_store
        lists whole path segments, so the prefix's directory is listed and
        its keys filtered."""
        head = prefix.rpartition("/")[0]
        where = (self._prefix + head).rstrip("/") or None
        out: list[tuple[str, int]] = []
        try:
            for chunk in self._obs.list(self.store, prefix=where, chunk_size=_LIST_CHUNK):
                for meta in chunk:
                    path: str = meta["path"]
                    if path.startswith(self._prefix):
                        key = path[len(self._prefix) :]
                        if key.startswith(prefix):
                            out.append((key, int(meta["size"])))
        except self._missing:
            return []
        except Exception as exc:  # noqa: BLE001
            raise store_error(self, "list", prefix, exc) from exc
        return out

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return iter([key for key, _ in self._list(validate_prefix(prefix))])

    def list_prefix_with_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        """Sizes from the listing itself: no request per key."""
        return iter(self._list(validate_prefix(prefix)))

    def list_dir(self, prefix: str) -> Iterator[str]:
        prefix = validate_prefix(prefix).rstrip("/")
        base = self._prefix + (prefix + "/" if prefix else "")
        try:
            found = self._obs.list_with_delimiter(self.store, prefix=base.rstrip("/") or None)
        except self._missing:
            return iter([])
        except Exception as exc:  # noqa: BLE001
            raise store_error(self, "list", prefix, exc) from exc
        paths = list(found["common_prefixes"]) + [meta["path"] for meta in found["objects"]]
        children = (p.rstrip("/")[len(base) :].split("/", 1)[0] for p in paths if p.startswith(base))
        return iter(dict.fromkeys(c for c in children if c))

    # -- identity and pickling ----------------------------------------------------------------
    @property
    def url(self) -> str | None:
        return self._url

    @property
    def process_local(self) -> bool:
        """True over obstore's ``MemoryStore``."""
        return self._process_local

    @property
    def identity(self) -> Hashable:
        """The URL and endpoint (two S3 services may have buckets of one
        name); in memory, the obstore store object and the prefix."""
        if self._url is not None:
            return ("obstore", self._url, _endpoint_of(self.store))
        return ("obstore", id(self.store), self.prefix)

    @property
    def display_name(self) -> str:
        if self._url is not None:
            return self._url
        return f"<obstore {type(self.store).__name__}{' ' + repr(self.prefix) if self.prefix else ''}>"

    def __reduce__(self) -> tuple[Any, ...]:
        payload = pickle_wrapped(self, self.store, "obstore's",
                                 "Its data lives in this process only: use an obstore LocalStore or a cloud "
                                 "store to share data between processes")
        return (_unpickle, (payload, self.prefix, self.read_only, self.request_concurrency))

    def __repr__(self) -> str:
        where = f", prefix={self.prefix!r}" if self.prefix else ""
        return f"ObjectStore({self.store!r}{where}{', read_only=True' if self.read_only else ''})"


__all__ = ["ObjectStore", "is_obstore_store"]
