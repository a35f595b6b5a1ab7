"""A store that behaves like a remote one: each call waits a latency, and
every call is logged with when it was in flight.

:class:`WaveStore` wraps any zarrpy store (a ``MemoryStore`` by default) and
forwards every :class:`~zarrpy.stores.abc.Store` method to it. Each call
sleeps ``latency`` seconds once -- a batch call (``get_partial_values``,
``get_versioned``, ``set_many``, ``delete_many``, ``set_conditional``) once
for the whole batch, since its requests are in flight together -- and calls
from several threads overlap, as requests to an object store do. The log then tells what a read costs
there:

- :attr:`WaveStore.requests`: how many requests were sent, one per item of a
  batch, listings and size requests included;
- :attr:`WaveStore.waves`: the number of sequential round trips, i.e. the
  longest chain of calls each starting after the previous one ended.

By default the wrapper reports ``whole_read_nbytes = 0`` (bytes cost, as on
a remote store), whatever the inner store says; ``get_scratch`` and
``open_reader`` go through :meth:`get` (a remote store has no scratch reads
or open files), so every byte read is logged.
"""

from __future__ import annotations

import threading
import time
from contextlib import AbstractContextManager
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from zarrpy.core.byte_range import ByteRequest, ObjectRead, VersionedRequest
from zarrpy.stores.abc import Store
from zarrpy.stores.memory import MemoryStore
from zarrpy.stores.writes import ConditionalWrite

_T = TypeVar("_T")

READ_KINDS = frozenset({"get", "versioned"})
"""Request kinds that fetch bytes of a value."""
HEAD_KINDS = frozenset({"size", "exists"})
"""Request kinds that ask about a value without its bytes (a stat, a HEAD)."""


@dataclass(frozen=True)
class Request:
    """One request of a call: its kind (``get``, ``versioned``, ``size``,
    ``exists``, ``list``, ``set``, ``delete``), the key or listing prefix,
    the byte range (None: whole) and, for a versioned read, ``if_match``."""

    kind: str
    key: str
    range: ByteRequest | None = None
    if_match: Hashable | None = None


@dataclass(frozen=True)
class Call:
    """One forwarded store call: its requests and when it was in flight
    (``time.perf_counter`` seconds)."""

    method: str
    requests: tuple[Request, ...]
    start: float
    end: float
    thread: int

    @property
    def keys(self) -> list[str]:
        return [r.key for r in self.requests]


def wave_depths(calls: Sequence[Call]) -> list[int]:
    """For each call, the length of the longest chain of calls ending with
    it, each call of the chain starting after the previous one ended (1: it
    overlaps or precedes every other call)."""
    n = len(calls)
    by_start = sorted(range(n), key=lambda i: (calls[i].start, calls[i].end))
    by_end = sorted(range(n), key=lambda i: calls[i].end)
    depth = [0] * n
    best = k = 0  # best depth among calls that ended before the current start
    for i in by_start:
        while k < n and calls[by_end[k]].end <= calls[i].start:
            best = max(best, depth[by_end[k]])
            k += 1
        depth[i] = best + 1
    return depth


class WaveStore(Store):
    """``inner`` (default: a new MemoryStore) with ``latency`` seconds per
    call and a log of every call (see the module docstring).

    ``whole_read_nbytes`` is what the wrapper reports to readers (0: a
    remote store); None reports the inner store's. ``request_concurrency``
    is the inner store's unless given.
    """

    def __init__(self, inner: Store | None = None, *, latency: float = 0.03,
                 whole_read_nbytes: int | None = 0, request_concurrency: int | None = None):
        self.inner = inner if inner is not None else MemoryStore()
        self.latency = latency
        self._whole_read_nbytes = whole_read_nbytes
        self._request_concurrency = request_concurrency
        self._log_lock = threading.Lock()
        self.log: list[Call] = []

    # -- the log --------------------------------------------------------
    def reset(self) -> None:
        """Forget every call logged so far."""
        with self._log_lock:
            self.log = []

    @property
    def requests(self) -> int:
        """Requests sent: one per item of every call."""
        return sum(len(c.requests) for c in self.log)

    def requests_of(self, *kinds: str) -> list[Request]:
        """The requests of the given kinds (every request when none are given), in call order."""
        return [r for c in self.log for r in c.requests if not kinds or r.kind in kinds]

    def keys(self, *kinds: str) -> list[str]:
        """The keys of :meth:`requests_of`."""
        return [r.key for r in self.requests_of(*kinds)]

    def reads_of(self, key: str) -> int:
        """Requests that fetched (any part of) ``key``."""
        return sum(r.key == key for r in self.requests_of(*READ_KINDS))

    @property
    def waves(self) -> int:
        """Sequential round trips: the longest chain of calls each starting
        after the previous one ended (0 when nothing was asked)."""
        return max(wave_depths(self.log), default=0)

    def wave_list(self) -> list[list[Request]]:
        """The requests of each wave: wave *i* holds the calls whose longest
        chain of earlier calls has *i* links before them."""
        log = list(self.log)
        depths = wave_depths(log)
        out: list[list[Request]] = [[] for _ in range(max(depths, default=0))]
        for call, depth in zip(log, depths):
            out[depth - 1].extend(call.requests)
        return out

    def _call(self, method: str, requests: Iterable[Request], forward: Callable[[], _T]) -> _T:
        """Wait the latency once, run ``forward`` and log the call."""
        reqs = tuple(requests)
        start = time.perf_counter()
        if self.latency:
            time.sleep(self.latency)
        try:
            return forward()
        finally:
            call = Call(method, reqs, start, time.perf_counter(), threading.get_ident())
            with self._log_lock:
                self.log.append(call)

    # -- settings: the inner store's unless set on the wrapper -------------
    @property
    def whole_read_nbytes(self) -> int:  # type: ignore[override]
        w = self._whole_read_nbytes
        return self.inner.whole_read_nbytes if w is None else w

    @whole_read_nbytes.setter
    def whole_read_nbytes(self, value: int | None) -> None:
        self._whole_read_nbytes = value

    @property
    def request_concurrency(self) -> int:  # type: ignore[override]
        c = self._request_concurrency
        return self.inner.request_concurrency if c is None else c

    @request_concurrency.setter
    def request_concurrency(self, value: int | None) -> None:
        self._request_concurrency = value

    @property
    def read_only(self) -> bool:  # type: ignore[override]
        return self.inner.read_only

    @property
    def supports_deletes(self) -> bool:  # type: ignore[override]
        return self.inner.supports_deletes

    @property
    def url(self) -> str | None:
        return self.inner.url

    @property
    def process_local(self) -> bool:
        return self.inner.process_local

    @property
    def identity(self) -> Hashable:
        return self.inner.identity

    @property
    def display_name(self) -> str:
        return self.inner.display_name

    @property
    def read_only_hint(self) -> str:
        return self.inner.read_only_hint

    # -- reads ----------------------------------------------------------
    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        return self._call("get", [Request("get", key, byte_range)], lambda: self.inner.get(key, byte_range))

    def get_partial_values(self, requests: Sequence[tuple[str, ByteRequest | None]]) -> list[bytes | None]:
        requests = list(requests)
        if not requests:  # nothing is sent
            return []
        return self._call("get_partial_values", [Request("get", k, r) for k, r in requests],
                          lambda: self.inner.get_partial_values(requests))

    def get_versioned(self, requests: Sequence[VersionedRequest]) -> list[ObjectRead | None]:
        requests = [VersionedRequest(*r) for r in requests]
        if not requests:
            return []
        return self._call("get_versioned", [Request("versioned", r.key, r.range, r.if_match) for r in requests],
                          lambda: self.inner.get_versioned(requests))

    def exists(self, key: str) -> bool:
        return self._call("exists", [Request("exists", key)], lambda: self.inner.exists(key))

    def getsize(self, key: str) -> int:
        return self._call("getsize", [Request("size", key)], lambda: self.inner.getsize(key))

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return iter(self._call("list_prefix", [Request("list", prefix)], lambda: list(self.inner.list_prefix(prefix))))

    def list(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_dir(self, prefix: str) -> Iterator[str]:
        return iter(self._call("list_dir", [Request("list", prefix)], lambda: list(self.inner.list_dir(prefix))))

    def list_prefix_with_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        return iter(self._call("list_prefix_with_sizes", [Request("list", prefix)],
                               lambda: list(self.inner.list_prefix_with_sizes(prefix))))

    def getsize_prefix(self, prefix: str) -> int:
        return self._call("getsize_prefix", [Request("list", prefix)], lambda: self.inner.getsize_prefix(prefix))

    # -- writes ---------------------------------------------------------
    def set(self, key: str, value: bytes) -> None:
        self._call("set", [Request("set", key)], lambda: self.inner.set(key, value))

    def set_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        items = list(items)
        if items:
            self._call("set_many", [Request("set", k) for k, _ in items], lambda: self.inner.set_many(items))

    def delete(self, key: str) -> None:
        self._call("delete", [Request("delete", key)], lambda: self.inner.delete(key))

    def delete_prefix(self, prefix: str) -> None:
        self._call("delete_prefix", [Request("delete", prefix)], lambda: self.inner.delete_prefix(prefix))

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        if keys:
            self._call("delete_many", [Request("delete", k) for k in keys], lambda: self.inner.delete_many(keys))

    @property
    def supports_conditional_writes(self) -> bool:  # type: ignore[override]
        return self.inner.supports_conditional_writes

    @property
    def supports_conditional_deletes(self) -> bool:  # type: ignore[override]
        return self.inner.supports_conditional_deletes

    @property
    def locks_updates(self) -> bool:  # type: ignore[override]
        return self.inner.locks_updates

    def set_conditional(self, writes: Sequence[ConditionalWrite]) -> list[bool]:
        writes = list(writes)
        if not writes:
            return []
        return self._call("set_conditional", [Request("set" if w.value is not None else "delete", w.key)
                                              for w in writes], lambda: self.inner.set_conditional(writes))

    def locked_for_update(self, keys: Sequence[str]) -> AbstractContextManager[None]:
        return self.inner.locked_for_update(keys)

    def _set(self, key: str, value: bytes) -> None:  # set() forwards whole; kept for the ABC
        self.inner.set(key, value)

    def _delete(self, key: str) -> None:
        self.inner.delete(key)

    # -- helpers --------------------------------------------------------
    def raw(self, key: str) -> bytes | None:
        """A stored value, without latency or logging."""
        return self.inner.get(key)

    def put(self, key: str, value: bytes) -> None:
        """Store a value, without latency or logging."""
        self.inner.set(key, value)

    # -- pickling: the inner store and the settings, a fresh log -----------
    def __getstate__(self) -> dict[str, Any]:
        return {"inner": self.inner, "latency": self.latency, "whole_read_nbytes": self._whole_read_nbytes,
                "request_concurrency": self._request_concurrency}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["inner"], latency=state["latency"],  # type: ignore[misc]
                      whole_read_nbytes=state["whole_read_nbytes"], request_concurrency=state["request_concurrency"])

    def __repr__(self) -> str:
        return f"WaveStore({self.inner!r}, latency={self.latency})"


__all__ = ["Call", "HEAD_KINDS", "READ_KINDS", "Request", "WaveStore", "wave_depths"]
