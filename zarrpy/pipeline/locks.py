"""Per-key write locks, so read-modify-write of a chunk or shard loses nothing.

Two threads updating disjoint parts of the same chunk (or inner chunks of the
same shard) both read the old value, merge and store: without a lock, the
second store drops the first update (zarr-python's issues #3514 and #3682).
Locks are striped (a fixed set, chosen by hash) so memory stays bounded
however many keys exist, and taken in sorted order so writes that lock
several keys cannot deadlock. They serialise threads of one process; writers
in several processes that share chunks or shards need a synchronizer as well
(:mod:`zarrpy.pipeline.synchronizer`).

A stripe is re-entrant: a write made by the thread that holds stripes (a
store's callback writing to another store, as tests of concurrent writers
do) takes a stripe it already holds when another key hashes to it, rather
than waiting for itself forever (one time in 1024, with string hashing
random per process).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Hashable, Iterable, Iterator

_STRIPES = tuple(threading.RLock() for _ in range(1024))


@contextmanager
def locked(token: Hashable, keys: Iterable[str]) -> Iterator[None]:
    """Hold the locks of ``keys`` (of the store identified by ``token``)."""
    stripes = sorted({hash((token, key)) % len(_STRIPES) for key in keys})
    for i in stripes:
        _STRIPES[i].acquire()
    try:
        yield
    finally:
        for i in reversed(stripes):
            _STRIPES[i].release()


__all__ = ["locked"]
