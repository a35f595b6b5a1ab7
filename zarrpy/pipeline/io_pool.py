"""The thread pool for waiting on stores: many blocking requests at once.

Separate from the chunk pool (:mod:`.concurrency`), which has one thread per
core for CPU work: a thread here mostly waits on the network, so there are
many (``ZARRPY_IO_THREADS``, default 64). Created on first use, anew after
``fork``.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_IO_THREADS = 64

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
_local = threading.local()


def _mark_worker() -> None:
    _local.in_pool = True


def io_threads() -> int:
    """Threads of the I/O pool: ``ZARRPY_IO_THREADS`` if set, else :data:`DEFAULT_IO_THREADS`."""
    env = os.environ.get("ZARRPY_IO_THREADS", "")
    return int(env) if env.isdigit() and int(env) > 0 else DEFAULT_IO_THREADS


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(
                    max_workers=io_threads(), thread_name_prefix="zarrpy-io", initializer=_mark_worker
                )
    return _pool


def _reset_after_fork() -> None:
    global _pool, _lock
    _pool, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_reset_after_fork)


def map_io(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(x) for x in items]`` with the calls running at the same time on
    the I/O pool; order kept, the first error raised. Inline for one item,
    and inside a pool thread (a task waiting on its own sub-tasks could hold
    every thread and wait forever)."""
    items = list(items)
    if len(items) <= 1 or getattr(_local, "in_pool", False):
        return [fn(x) for x in items]
    return list(_get_pool().map(fn, items))


__all__ = ["DEFAULT_IO_THREADS", "io_threads", "map_io"]
