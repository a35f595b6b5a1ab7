"""One capped, flushable cache of decoded data (issue 12).

All data zarrpy keeps after a read lives here and nowhere else: decoded
chunks of arrays opened with ``cache=``, and what lazy arrays materialise.
The user sees its size, caps it, and frees everything with :meth:`Cache.clear`;
no array object holds data of its own.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, MutableMapping
from typing import Any

import numpy as np


def nbytes_of(value: Any) -> int:
    """Bytes a cached value holds: ``nbytes`` when it has one (numpy arrays,
    RaggedArray), plus the payload of str/bytes elements of object and
    string arrays; a rough size for anything else."""
    if isinstance(value, np.ndarray):
        n = int(value.nbytes)
        if value.dtype.kind in "OT" and value.size:
            n += sum(len(x) if isinstance(x, (str, bytes)) else getattr(x, "nbytes", 0) for x in value.reshape(-1))
        return n
    size = getattr(value, "nbytes", None)
    if isinstance(size, (int, np.integer)):
        return int(size)
    if isinstance(value, (bytes, str)):
        return len(value)
    return 64


class Cache(MutableMapping[Hashable, Any]):
    """A thread-safe mapping of decoded data with a byte cap and LRU eviction.

    ``max_bytes`` caps :attr:`nbytes`, the sum of the values' sizes: storing
    a value evicts the least recently used ones until it fits, and a value
    bigger than the cap is not kept at all (it is still returned to its
    reader). Reads through ``cache[key]``/:meth:`get` mark a value recently
    used and count :attr:`hits` and :attr:`misses`; :attr:`evictions` counts
    values dropped to make room. :meth:`clear` drops everything, so the
    memory is freed once no result refers to it.

    Keys are hashable and should be persistent (the same data gets the same
    key in another process or session): zarrpy uses ``(store URL, node path,
    chunk key)`` for stored chunks.
    """

    def __init__(self, max_bytes: int):
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, (int, np.integer)) or max_bytes < 0:
            raise ValueError(f"max_bytes must be a non-negative integer, got {max_bytes!r}")
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._nbytes = 0
        self._lock = threading.RLock()
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self._version = 0  # counts invalidations: see store_if_current

    # -- the mapping ----------------------------------------------------
    def __getitem__(self, key: Hashable) -> Any:
        with self._lock:
            try:
                value, _ = self._items[key]
            except KeyError:
                self.misses += 1
                raise
            self._items.move_to_end(key)
            self.hits += 1
            return value

    def __setitem__(self, key: Hashable, value: Any) -> None:
        size = nbytes_of(value)
        with self._lock:
            self._pop(key)
            if size > self.max_bytes:
                return
            while self._nbytes + size > self.max_bytes and self._items:
                _, (_, evicted) = self._items.popitem(last=False)
                self._nbytes -= evicted
                self.evictions += 1
            self._items[key] = (value, size)
            self._nbytes += size

    def __delitem__(self, key: Hashable) -> None:
        with self._lock:
            if not self._pop(key):
                raise KeyError(key)
            self._version += 1

    def _pop(self, key: Hashable) -> bool:
        item = self._items.pop(key, None)
        if item is None:
            return False
        self._nbytes -= item[1]
        return True

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def __iter__(self) -> Iterator[Hashable]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        """Drop every value (the counters stay)."""
        with self._lock:
            self._items.clear()
            self._nbytes = 0
            self._version += 1

    # -- what it holds ---------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes held now (never more than :attr:`max_bytes`)."""
        return self._nbytes

    def get_or_load(self, key: Hashable, load: Callable[[], Any]) -> Any:
        """``cache[key]``, or ``load()`` stored under ``key`` and returned.
        ``load`` runs outside the lock, so two threads may both load a
        missing key; the value stored last stays."""
        try:
            return self[key]
        except KeyError:
            pass
        value = load()
        self[key] = value
        return value

    @property
    def version(self) -> int:
        """Changes whenever values are invalidated (deleted, discarded, cleared)."""
        return self._version

    def store_if_current(self, key: Hashable, value: Any, version: int) -> None:
        """``cache[key] = value`` unless something was invalidated since
        :attr:`version` was ``version``: a value loaded before a write that
        made it stale is never kept."""
        with self._lock:
            if self._version == version:
                self[key] = value

    def discard(self, keys: Iterable[Hashable]) -> None:
        """Drop ``keys`` that are present (a write made them stale)."""
        with self._lock:
            for key in keys:
                self._pop(key)
            self._version += 1

    def discard_prefix(self, prefix: tuple[Any, ...]) -> None:
        """Drop every tuple key starting with ``prefix`` (all chunks of one node)."""
        n = len(prefix)
        with self._lock:
            for key in [k for k in self._items if isinstance(k, tuple) and k[:n] == prefix]:
                self._pop(key)
            self._version += 1

    def __repr__(self) -> str:
        return (
            f"<zarrpy.Cache {len(self._items)} values, {self._nbytes} of {self.max_bytes} bytes, "
            f"hits={self.hits} misses={self.misses} evictions={self.evictions}>"
        )


__all__ = ["Cache", "nbytes_of"]
