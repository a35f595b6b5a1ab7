"""The one thread pool that encodes and decodes chunks.

zlib, zstandard, blosc and numpy copies release the GIL, so threads give real
parallelism for chunk work. The pool is created on first use (importing
zarrpy starts no threads) and re-created after ``fork``. Work submitted from
inside a pool thread runs inline, so nested use (a shard decoding its inner
chunks) cannot deadlock.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

from ..core.batches import even_runs

T = TypeVar("T")
R = TypeVar("R")

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_local = threading.local()


def max_workers() -> int:
    """Threads in the pool: ``ZARRPY_THREADS`` if set, else one more than
    the CPU count (:data:`DEFAULT_WORKERS`)."""
    env = os.environ.get("ZARRPY_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return DEFAULT_WORKERS


DEFAULT_WORKERS = (os.cpu_count() or 4) + 1
"""One thread more than the cores. A pool thread spends part of each chunk
holding the GIL (planning, file calls, copies) and part without it
(decompression); a thread that waits for the GIL leaves its core idle, and
after an idle spell (on a virtual machine especially) waking that core again
is slow. The spare thread, holding GIL-free work, keeps that core busy
meanwhile: reads that follow a pause got 10-30 % faster on 2 cores, and reads
back to back and writes stayed as fast (docs/performance.md)."""


def _mark_worker() -> None:
    _local.in_pool = True


def get_pool() -> ThreadPoolExecutor:
    """The process's chunk thread pool (:func:`max_workers` threads), created
    on first use and anew in a forked child."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(
                    max_workers=max_workers(), thread_name_prefix="zarrpy", initializer=_mark_worker
                )
    return _pool


def _reset_after_fork() -> None:
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_after_fork)


def in_worker() -> bool:
    """Is this thread one of the pool's? (Work it hands to the pool runs inline.)"""
    return getattr(_local, "in_pool", False)


def map_chunks(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(x) for x in items]``, run on the pool when that can help.

    Results keep the input order; the first exception raised by ``fn`` is
    re-raised here.
    """
    items = list(items)
    if len(items) <= 1 or in_worker() or max_workers() == 1:
        return [fn(x) for x in items]
    return list(get_pool().map(fn, items))


def for_each_batch(fn: Callable[[list[T]], None], items: Iterable[T], *, max_batch: int = 256) -> None:
    """Run ``fn`` on contiguous batches of ``items``, batches in parallel.

    One task per chunk costs more than decoding a small chunk, so the pool
    gets about two batches per worker (each at most ``max_batch`` items); a
    batch does its own IO and codec work, so reading overlaps decoding.
    """
    items = list(items)
    if not items:
        return
    n = max(-(-len(items) // max_batch), min(len(items), 2 * max_workers()))
    batches = even_runs(items, n)
    map_chunks(fn, batches)


__all__ = ["DEFAULT_WORKERS", "for_each_batch", "get_pool", "in_worker", "map_chunks", "max_workers"]
