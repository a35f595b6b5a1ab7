"""A zarr-python 3 store (``zarr.abc.store.Store``) used as a zarrpy store.

Any zarr-python store works: its ``MemoryStore``, ``LocalStore``,
``FsspecStore``, ``ZipStore``, ``ObjectStore``, and stores of other packages
built on zarr-python's store class (an icechunk session's ``store``).
:func:`~zarrpy.stores.store_from_url` wraps one passed as ``store=``::

    store = zarr.storage.LocalStore("data/x.zarr")
    a = zarrpy.create_array(store, shape=(4,), dtype="int32", chunks=(2,))
    zarr.open_array(store)[:]        # zarr-python reads what zarrpy wrote

**One event loop.** zarr-python stores are asynchronous. Every call of this
adapter runs one coroutine on zarr-python's own event loop thread, through
``zarr.core.sync.sync`` -- the loop zarr-python itself uses, so a store whose
connections belong to that loop (an fsspec S3 filesystem opened by
zarr-python) keeps working. ``sync`` may be called from many threads at once
(zarrpy reads and decodes on a thread pool); each call waits for its own
coroutine. A batch (:meth:`ZarrPythonStore.get_partial_values`, sizes of a
listing, a prefix deletion) is one coroutine that runs its requests
concurrently, at most :attr:`ZarrPythonStore.request_concurrency` at a time.

**Same answers as every zarrpy store.** Keys are checked before the store
sees them (no ``..``, no absolute keys). Byte ranges become zarr-python's
``RangeByteRequest`` / ``OffsetByteRequest`` / ``SuffixByteRequest``, read
into buffers of zarr-python's ``default_buffer_prototype()``; empty requests
are answered from ``exists`` (zarr-python's stores differ on them), and a
ranged read the store refuses is asked again within the value's size.
zarr-python's stores differ from zarrpy's contract in places, which the
adapter evens out: ``list_prefix`` is a string prefix (zarr-python's
``LocalStore`` lists a directory), a "directory" is no value (its
``LocalStore`` reports a directory's size, its ``FsspecStore`` says one
exists: sizes are asked together with ``exists``, and on an fsspec
filesystem whether the key is a directory), a delete touches only a value
(its ``LocalStore`` would remove a directory whole), and a missing key in a
batch reads as None (its ``LocalStore.get_partial_values`` raises).
Failures become :class:`~zarrpy.errors.StoreError` naming the key.

**Read-only.** The adapter is read-only when asked to be or when the
zarr-python store is (``read_only=True``, or ``supports_writes`` False).

**Pickling.** The adapter pickles as the zarr-python store does: a
``LocalStore`` or ``FsspecStore`` reopens the same data, a zarr-python
``MemoryStore`` travels by value (a copy, like zarrpy's own
:class:`~zarrpy.stores.memory.MemoryStore`). A store that does not pickle (an
icechunk session that is writable) is refused with a ``TypeError`` naming
it. Arrays on in-memory stores refuse to pickle
(:attr:`~zarrpy.stores.abc.Store.process_local`).

zarrpy does not need zarr-python: this module imports it only when such a
store is given, and then zarr-python is already imported.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import pickle
import sys
from pathlib import Path
from typing import Any, Callable, Coroutine, Hashable, Iterator, Sequence, TypeVar

from ..core.byte_range import ByteRequest, OffsetRequest, RangeRequest, SuffixRequest
from ..errors import KeyNotFoundError, StoreError
from ._concurrent import bounded
from ._ranges import clamp, is_empty, trim
from ._wrapped import pickle_wrapped
from .abc import READ_ONLY_HINT, Store, store_error, validate_key, validate_prefix

T = TypeVar("T")

# Errors of a zarr-python store that mean "no value under this key".
_MISSING = (FileNotFoundError, IsADirectoryError, NotADirectoryError)

# zarr-python store classes whose data lives in this process's memory.
_PROCESS_LOCAL = ("MemoryStore", "GpuMemoryStore", "ManagedMemoryStore")


def is_zarr_python_store(obj: object) -> bool:
    """Whether ``obj`` is a zarr-python 3 store, asked without importing zarr:
    if zarr-python is not imported, no object can be one of its stores."""
    module = sys.modules.get("zarr.abc.store")
    store_class = getattr(module, "Store", None)
    return isinstance(store_class, type) and isinstance(obj, store_class)


class _Zarr:
    """The few parts of zarr-python the adapter uses, imported once."""

    def __init__(self) -> None:
        store_module = importlib.import_module("zarr.abc.store")
        self.sync: Callable[[Coroutine[Any, Any, Any]], Any] = importlib.import_module("zarr.core.sync").sync
        self.prototype: Any = importlib.import_module("zarr.core.buffer").default_buffer_prototype()
        self.range = store_module.RangeByteRequest
        self.offset = store_module.OffsetByteRequest
        self.suffix = store_module.SuffixByteRequest

    def request(self, request: ByteRequest | None) -> Any:
        if request is None:
            return None
        if isinstance(request, RangeRequest):
            return self.range(request.start, request.end)
        if isinstance(request, OffsetRequest):
            return self.offset(request.offset)
        if isinstance(request, SuffixRequest):
            return self.suffix(request.length)
        raise TypeError(f"not a byte request: {request!r}")


_zarr: _Zarr | None = None


def _zarr_parts() -> _Zarr:
    global _zarr
    if _zarr is None:
        _zarr = _Zarr()
    return _zarr


def _is_storage(store: Any, name: str) -> bool:
    """Whether ``store`` is an instance of ``zarr.storage.<name>``."""
    cls = getattr(sys.modules.get("zarr.storage"), name, None)
    return isinstance(cls, type) and isinstance(store, cls)


def _url_of(store: Any) -> str | None:
    """The URL of a zarr-python store over a directory or an fsspec
    filesystem (what zarrpy's own stores over the same data report); None
    for the rest (memory, icechunk …)."""
    if _is_storage(store, "LocalStore"):
        return Path(os.path.abspath(store.root)).as_uri()
    if _is_storage(store, "FsspecStore"):
        url: str = store.fs.unstrip_protocol(store.path)
        return url
    return None


def _unpickle(payload: bytes, read_only: bool) -> ZarrPythonStore:
    return ZarrPythonStore(pickle.loads(payload), read_only=read_only)


class ZarrPythonStore(Store):
    """A zarr-python 3 store seen through zarrpy's synchronous store API.

    Parameters
    ----------
    store
        A ``zarr.abc.store.Store`` (zarr-python 3): ``zarr.storage.MemoryStore()``,
        ``zarr.storage.LocalStore(path)``, an icechunk ``session.store`` …
    read_only
        Refuse ``set`` and ``delete`` with :class:`~zarrpy.errors.ReadOnlyError`
        (also when False, if the zarr-python store itself is read-only).
    """

    request_concurrency: int = 32
    """Requests of one batch in flight at once (zarr-python's stores run
    their own connection pools behind it)."""

    @property
    def max_concurrency(self) -> int:
        """The former name of :attr:`request_concurrency` (the same setting)."""
        return self.request_concurrency

    @max_concurrency.setter
    def max_concurrency(self, value: int) -> None:
        self.request_concurrency = value

    def __init__(self, store: Any, read_only: bool = False) -> None:
        if not is_zarr_python_store(store):
            raise TypeError(f"ZarrPythonStore wraps a zarr-python 3 store (zarr.abc.store.Store), not {store!r}")
        self.store = store
        self._zarr = _zarr_parts()
        self._store_read_only = bool(store.read_only) or not bool(getattr(store, "supports_writes", True))
        self.read_only = read_only or self._store_read_only
        self.supports_deletes = bool(getattr(store, "supports_deletes", True))
        kind = type(store).__name__
        fs = getattr(store, "fs", None)
        fs = getattr(fs, "sync_fs", fs)  # zarr-python wraps a synchronous filesystem to make it async
        self._process_local = kind in _PROCESS_LOCAL or (
            kind == "FsspecStore" and type(fs).__name__ == "MemoryFileSystem"
        )
        if kind in ("MemoryStore", "LocalStore"):
            self.whole_read_nbytes = 1 << 20  # as zarrpy's memory and local stores
        self._url = _url_of(store)
        # zarr-python's FsspecStore says a "directory" exists and has a size:
        # its filesystem is asked whether a key is one.
        self._fs: Any = store.fs if _is_storage(store, "FsspecStore") else None

    # -- the bridge ----------------------------------------------------------------
    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on zarr-python's event loop and wait for it."""
        result: T = self._zarr.sync(coroutine)
        return result

    def _call(self, verb: str, key: str, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run ``make()`` (a coroutine on the store); its failure becomes a
        StoreError naming ``key``."""
        try:
            return self._run(make())
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - named and chained
            raise store_error(self, verb, key, exc) from exc

    # -- reads -------------------------------------------------------------------------
    async def _is_value(self, key: str) -> bool:
        """Whether a value is stored under ``key`` (not a "directory")."""
        if not await self.store.exists(key):
            return False
        if self._fs is None:
            return True
        root = str(self.store.path).rstrip("/")
        return not await self._fs._isdir(f"{root}/{key}" if root else key)

    async def _get(self, key: str, request: ByteRequest | None) -> bytes | None:
        store = self.store
        if is_empty(request):
            return b"" if await self._is_value(key) else None
        try:
            buffer = await store.get(key, self._zarr.prototype, self._zarr.request(request))
        except _MISSING:
            return None
        except Exception:
            if request is None:
                raise
            return await self._get_clamped(key, request)
        if buffer is None:
            return None
        data = buffer.to_bytes()
        if isinstance(request, SuffixRequest) and len(data) < request.length:
            # A suffix longer than the value: zarr-python 3.1's MemoryStore
            # (seen with 3.1.6; 3.4 is right) answers it with the wrong bytes,
            # its start gone negative, so read it again as an explicit range
            # (rare: shard indexes fit in their shard).
            return await self._get_clamped(key, request)
        return trim(data, request)

    async def _get_clamped(self, key: str, request: ByteRequest) -> bytes | None:
        """Read ``request`` again as an explicit range within the value's size
        (for stores that refuse a start past the end, or suffixes)."""
        try:
            nbytes = await self._size(key)
        except KeyNotFoundError:
            return None
        start, end = clamp(request, nbytes)
        if start >= end:
            return b""
        buffer = await self.store.get(key, self._zarr.prototype, self._zarr.range(start, end))
        return None if buffer is None else trim(buffer.to_bytes(), RangeRequest(start, end))

    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        validate_key(key)
        return self._call("read", key, lambda: self._get(key, byte_range))

    def get_partial_values(
        self, requests: Sequence[tuple[str, ByteRequest | None]]
    ) -> list[bytes | None]:
        """All requests in one coroutine, run concurrently (zarr-python's own
        ``get_partial_values`` is not used: some stores raise for a missing key
        there instead of answering None)."""
        for key, _ in requests:
            validate_key(key)
        if not requests:
            return []

        async def one(item: tuple[str, ByteRequest | None]) -> bytes | None:
            return await self._get(*item)

        results = self._call("read", requests[0][0], lambda: bounded(self.request_concurrency, one, requests))
        out: list[bytes | None] = []
        for (key, _), result in zip(requests, results):
            if isinstance(result, BaseException):
                raise store_error(self, "read", key, result) from result
            out.append(result)
        return out

    def exists(self, key: str) -> bool:
        """Whether a value is stored under ``key`` (a "directory" is none)."""
        validate_key(key)
        found: bool = self._call("stat", key, lambda: self._is_value(key))
        return found

    async def _size(self, key: str) -> int:
        """The size of the value under ``key``; KeyNotFoundError if there is
        none (asked together with ``exists``: zarr-python's LocalStore gives
        a directory's size)."""
        answers: tuple[Any, ...] = await asyncio.gather(
            self.store.getsize(key), self._is_value(key), return_exceptions=True
        )
        size, found = answers
        if isinstance(size, _MISSING) or found is False:
            raise KeyNotFoundError(f"no value under key {key!r} in {self.display_name}")
        if isinstance(size, BaseException):
            raise size
        if isinstance(found, BaseException):
            raise found
        return int(size)

    def getsize(self, key: str) -> int:
        validate_key(key)
        return self._call("stat", key, lambda: self._size(key))

    # -- writes --------------------------------------------------------------------------
    @property
    def read_only_hint(self) -> str:
        if self._store_read_only:
            return (f"the zarr-python store {type(self.store).__name__} is read-only; "
                    "pass a writable one (for example store.with_read_only(False))")
        return READ_ONLY_HINT

    def _set(self, key: str, value: bytes) -> None:
        buffer = self._zarr.prototype.buffer.from_bytes(value)
        self._call("write", key, lambda: self.store.set(key, buffer))

    async def _delete_existing(self, key: str) -> None:
        if not await self._is_value(key):
            return  # nothing, or a "directory" (which zarr-python's LocalStore would remove whole)
        if not self.supports_deletes:
            raise StoreError(f"cannot delete {key!r} from {self.display_name}: the store cannot delete values")
        await self.store.delete(key)

    def _delete(self, key: str) -> None:
        self._call("delete", key, lambda: self._delete_existing(key))

    def delete_prefix(self, prefix: str) -> None:
        """One listing, then every key under ``prefix`` deleted concurrently."""
        prefix = validate_prefix(prefix)
        self._check_writable(prefix)

        async def delete_all() -> list[None | BaseException]:
            keys = await self._list(prefix)
            if keys and not self.supports_deletes:
                raise StoreError(f"cannot delete {keys[0]!r} from {self.display_name}: "
                                 "the store cannot delete values")
            return await bounded(self.request_concurrency, self.store.delete, keys)

        for failure in self._call("delete", prefix, delete_all):
            if isinstance(failure, BaseException):
                raise store_error(self, "delete", prefix, failure) from failure

    # -- listing ----------------------------------------------------------------------------
    async def _list(self, prefix: str) -> list[str]:
        # zarr-python lists "directories" in some stores and string prefixes in
        # others: list the prefix's directory, keep what starts with the prefix.
        head = prefix.rpartition("/")[0]
        return [key async for key in self.store.list_prefix(head + "/" if head else "") if key.startswith(prefix)]

    def list_prefix(self, prefix: str) -> Iterator[str]:
        prefix = validate_prefix(prefix)
        return iter(self._call("list", prefix, lambda: self._list(prefix)))

    def list_dir(self, prefix: str) -> Iterator[str]:
        prefix = validate_prefix(prefix).rstrip("/")

        async def listed() -> list[str]:
            return [child async for child in self.store.list_dir(prefix)]

        async def children() -> list[str]:
            if not prefix:
                return await listed()
            # Some stores (zarr-python's FsspecStore) list a key as its own
            # child. When the prefix is a key, list its "directory" exactly.
            found, is_key = await asyncio.gather(listed(), self._is_value(prefix))
            if not is_key:
                return found
            base = prefix + "/"
            return [key[len(base) :].split("/", 1)[0] for key in await self._list(base)]

        return iter(dict.fromkeys(c.rstrip("/") for c in self._call("list", prefix, children) if c))

    def list_prefix_with_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        """One listing, then the sizes of its keys asked concurrently."""
        prefix = validate_prefix(prefix)

        async def sized() -> list[tuple[str, int | BaseException]]:
            keys = await self._list(prefix)
            sizes = await bounded(self.request_concurrency, self.store.getsize, keys)
            return list(zip(keys, sizes))

        out: list[tuple[str, int]] = []
        for key, size in self._call("list", prefix, sized):
            if isinstance(size, _MISSING):
                continue  # deleted since the listing
            if isinstance(size, BaseException):
                raise store_error(self, "stat", key, size) from size
            out.append((key, int(size)))
        return iter(out)

    # -- identity and pickling ------------------------------------------------------------
    @property
    def url(self) -> str | None:
        return self._url

    @property
    def process_local(self) -> bool:
        """True over zarr-python's in-memory stores (and fsspec ``memory://``)."""
        return self._process_local

    @property
    def identity(self) -> Hashable:
        """The URL of a store over a directory or fsspec filesystem (shared
        with zarrpy's own stores there); the backing dict of a zarr-python
        ``MemoryStore`` (shared with a zarrpy ``MemoryStore`` over that dict);
        else the zarr-python store object."""
        if self._url is not None:
            return self._url
        data = getattr(self.store, "_store_dict", None)
        if data is not None:
            return ("memory", id(data))
        return ("zarr-python", id(self.store))

    @property
    def display_name(self) -> str:
        return self._url if self._url is not None else f"<zarr-python {type(self.store).__name__}>"

    def __reduce__(self) -> tuple[Any, ...]:
        payload = pickle_wrapped(self, self.store, "its zarr-python store",
                                 "Use a store that does (a path, an fsspec URL, a zarr-python LocalStore), "
                                 "or one the store's own package makes picklable")
        return (_unpickle, (payload, self.read_only))

    def __repr__(self) -> str:
        return f"ZarrPythonStore({self.store!r}{', read_only=True' if self.read_only else ''})"


__all__ = ["ZarrPythonStore", "is_zarr_python_store"]
