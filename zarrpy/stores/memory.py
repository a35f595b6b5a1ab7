"""An in-memory store: a dict of key -> bytes behind a lock.

Useful for tests, scratch arrays and small data. The backing mapping may be
the caller's (a ``shelve``, say); an ``OSError`` it raises becomes a
:class:`~zarrpy.errors.StoreError` naming the key. The store pickles *by
value* (its contents travel with it); the copy is independent of the
original. An *array* on a ``MemoryStore`` refuses to pickle
(:attr:`~zarrpy.stores.abc.Store.process_local`): a worker process would
write into its own copy and the writes would be lost.

>>> store = MemoryStore()
>>> store.set("a/zarr.json", b"{}")
>>> store.get("a/zarr.json")
b'{}'
>>> sorted(store.list_dir(""))
['a']
"""

from __future__ import annotations

import itertools
import threading
import weakref
from contextlib import contextmanager
from typing import Any, Hashable, Iterator, MutableMapping, Sequence

from ..core.byte_range import ByteRequest, ObjectRead, SuffixRequest, VersionedRequest, slice_bytes
from ..errors import KeyNotFoundError
from .abc import Store, store_error, validate_key, validate_prefix
from .writes import ABSENT, ConditionalWrite


def _slice(value: bytes, request: ByteRequest | None) -> bytes:
    # A suffix longer than the value is the whole value; ``slice_bytes`` would
    # compute a negative start and wrap around, so clamp here.
    if isinstance(request, SuffixRequest) and request.length >= len(value):
        return value
    return slice_bytes(value, request)


_SERIALS = itertools.count(1)


class _Versions:
    """Versions of the values of one backing mapping, shared by every
    ``MemoryStore`` over it: key -> (id of the value object, serial). A
    value is identified by its object, so a value replaced in the mapping
    (through any store over it, or behind their back) gets a new serial."""

    __slots__ = ("table", "lock", "__weakref__")

    def __init__(self) -> None:
        self.table: dict[str, tuple[int, int]] = {}
        self.lock = threading.Lock()
        """The lock of every store over the mapping, so a conditional write's
        check and write are one step for all of them."""

    def of(self, key: str, value: bytes) -> int:
        """The version of ``value``, now under ``key`` (call under the store's lock)."""
        entry = self.table.get(key)
        if entry is None or entry[0] != id(value):
            entry = self.table[key] = (id(value), next(_SERIALS))
        return entry[1]

    def renew(self, key: str, value: bytes | None) -> None:
        """A new version for what a store just wrote under ``key`` (None:
        deleted): a value written twice between two reads must not get back
        the first one's serial because it took the first one's ``id``."""
        if value is None:
            self.table.pop(key, None)
        else:
            self.table[key] = (id(value), next(_SERIALS))


# One version table per live backing mapping (the stores over it hold the
# mapping, so its id names no other mapping while the table is alive).
_TABLES: weakref.WeakValueDictionary[int, _Versions] = weakref.WeakValueDictionary()
_TABLES_LOCK = threading.Lock()


def _versions_of(data: MutableMapping[str, bytes]) -> _Versions:
    with _TABLES_LOCK:
        table = _TABLES.get(id(data))
        if table is None:
            table = _TABLES[id(data)] = _Versions()
        return table


class MemoryStore(Store):
    """A thread-safe store that keeps every value in a dict.

    Parameters
    ----------
    store_dict
        An existing mapping of key -> bytes to use as the backing storage
        (used as is, not copied, so the caller sees writes). A new empty dict
        if None.
    read_only
        Refuse ``set`` and ``delete`` with :class:`~zarrpy.errors.ReadOnlyError`.

    Notes
    -----
    ``url`` is None: there is no URL that reaches this memory from another
    process. Two ``MemoryStore`` objects are equal when they share the same
    backing dict.
    """

    whole_read_nbytes = 1 << 20  # a page-cached or in-memory MiB costs less than a second request

    def __init__(
        self, store_dict: MutableMapping[str, bytes] | None = None, read_only: bool = False
    ) -> None:
        self._data: MutableMapping[str, bytes] = {} if store_dict is None else store_dict
        self._versions = _versions_of(self._data)
        self._lock = self._versions.lock
        self.read_only = read_only

    @contextmanager
    def _backend(self, verb: str, key: str) -> Iterator[None]:
        """Turn an ``OSError`` of the backing mapping (a ``shelve``, a
        mapping over files) into a StoreError naming ``key``."""
        try:
            yield
        except OSError as exc:
            raise store_error(self, verb, key, exc) from exc

    @property
    def process_local(self) -> bool:
        return True

    @property
    def identity(self) -> Hashable:
        """The backing dict: stores over one dict share locks and cache entries."""
        return ("memory", id(self._data))

    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        validate_key(key)
        with self._lock, self._backend("read", key):
            value = self._data.get(key)
        if value is None:
            return None
        return _slice(value, byte_range)

    def get_versioned(self, requests: Sequence[VersionedRequest]) -> list[ObjectRead | None]:
        """Each request's bytes with the value's length and version (a serial
        that changes whenever the value is replaced)."""
        out: list[ObjectRead | None] = []
        for key, request, if_match in requests:
            validate_key(key)
            with self._lock, self._backend("read", key):
                value = self._data.get(key)
                version = None if value is None else self._versions.of(key, value)
            if value is None:
                out.append(None)
            elif if_match is not None and if_match != version:
                out.append(ObjectRead(None, len(value), version))
            else:
                out.append(ObjectRead(_slice(value, request), len(value), version))
        return out

    def _set(self, key: str, value: bytes) -> None:
        with self._lock, self._backend("write", key):
            self._data[key] = value
            self._versions.renew(key, value)

    def _delete(self, key: str) -> None:
        with self._lock, self._backend("delete", key):
            self._data.pop(key, None)
            self._versions.renew(key, None)

    supports_conditional_writes = True
    supports_conditional_deletes = True

    def set_conditional(self, writes: Sequence[ConditionalWrite]) -> list[bool]:
        """Each write applied only if the value still has the version it was
        read with (checked and applied under the store's lock)."""
        done = []
        for key, value, expected in writes:
            self._check_writable(key)
            validate_key(key)
            with self._lock, self._backend("write", key):
                current = self._data.get(key)
                now = ABSENT if current is None else self._versions.of(key, current)
                if now != expected:
                    done.append(False)
                    continue
                if value is None:
                    self._data.pop(key, None)
                else:
                    self._data[key] = value = bytes(value)
                self._versions.renew(key, value)
                done.append(True)
        return done

    def exists(self, key: str) -> bool:
        validate_key(key)
        with self._lock, self._backend("stat", key):
            return key in self._data

    def list_prefix(self, prefix: str) -> Iterator[str]:
        prefix = validate_prefix(prefix)
        with self._lock, self._backend("list", prefix):
            keys = [k for k in self._data if k.startswith(prefix)]
        return iter(keys)

    def getsize(self, key: str) -> int:
        validate_key(key)
        with self._lock, self._backend("stat", key):
            value = self._data.get(key)
        if value is None:
            raise KeyNotFoundError(f"no value under key {key!r} in {self!r}")
        return len(value)

    def list_prefix_with_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        prefix = validate_prefix(prefix)
        with self._lock, self._backend("list", prefix):
            items = [(k, len(v)) for k, v in self._data.items() if k.startswith(prefix)]
        return iter(items)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    # -- identity and pickling ------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            data = dict(self._data)
        return {"data": data, "read_only": self.read_only}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._data = state["data"]
        self._versions = _versions_of(self._data)
        self._lock = self._versions.lock
        self.read_only = state["read_only"]

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self)} keys>{', read_only=True' if self.read_only else ''})"


__all__ = ["MemoryStore"]
