"""The thread pool that waits on stores: blocking store work for many stores at once.

A request to an object store spends its time waiting on the network, not on
a core, so waiting is done here and not on the chunk pool of
:mod:`zarrpy.pipeline.concurrency` (sized to the cores; a thread of it that
waits on the network leaves a core idle). Opening 40 arrays in 40 stores, or
reading 40 arrays side by side, is then one round trip of wall time.

The pool has :func:`io_threads` threads (``ZARRPY_IO_THREADS``, default
:data:`DEFAULT_IO_THREADS`), is created on first use (importing zarrpy starts
no threads) and anew after ``fork``.

No deadlock: a task here may use the chunk pool (a read decodes its chunks
there), and chunk-pool tasks never wait on this pool, because
:func:`map_io` runs its items inline when called from a thread of either
pool.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

from ..stores.abc import Store
from .concurrency import in_worker

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_IO_THREADS = 64
"""Threads waiting on stores at once by default: as many requests in flight
as a store keeps by default (:attr:`~zarrpy.stores.abc.Store.request_concurrency`)."""

ENV_VAR = "ZARRPY_IO_THREADS"
"""The environment variable that sets :func:`io_threads`."""

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_threads: int | None = None  # set by set_io_threads; None: the environment or the default
_local = threading.local()


def io_threads() -> int:
    """Threads in the IO pool: :func:`set_io_threads`' value, else
    ``ZARRPY_IO_THREADS`` (a positive integer), else :data:`DEFAULT_IO_THREADS`.

    Read when the pool is created; ValueError naming the variable if it is not
    a positive integer.
    """
    if _threads is not None:
        return _threads
    env = os.environ.get(ENV_VAR, "").strip()
    if not env:
        return DEFAULT_IO_THREADS
    if not env.isdigit() or int(env) <= 0:
        raise ValueError(f"environment variable {ENV_VAR}={env!r}: expected a positive number of threads")
    return int(env)


def set_io_threads(n: int | None) -> None:
    """Size the IO pool at ``n`` threads (None: back to ``ZARRPY_IO_THREADS``
    or the default). The current pool finishes its tasks and is replaced at
    the next use."""
    global _threads, _pool
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n <= 0):
        raise ValueError(f"the IO pool needs a positive number of threads, got {n!r}")
    with _pool_lock:
        _threads = n
        old, _pool = _pool, None
    if old is not None:
        old.shutdown(wait=False)


def _mark_io_thread() -> None:
    _local.in_io = True


def get_io_pool() -> ThreadPoolExecutor:
    """The process's IO pool (:func:`io_threads` threads), created on first use."""
    global _pool
    pool = _pool
    if pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=io_threads(), thread_name_prefix="zarrpy-io",
                                           initializer=_mark_io_thread)
            pool = _pool
    return pool


def _reset_after_fork() -> None:
    global _pool, _pool_lock
    _pool = None  # the parent's threads do not exist in the child
    _pool_lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_after_fork)


def in_io_thread() -> bool:
    """Is this thread one of the IO pool's?"""
    return getattr(_local, "in_io", False)


def map_io(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(x) for x in items]`` with the items waited on side by side.

    Results keep the input order. Every item is finished before this returns
    or raises (no task is left writing into a buffer the caller reuses); the
    error of the first failing item, in input order, is re-raised. Zero or
    one item, or a call from a thread of the IO or the chunk pool, runs
    inline (nested use cannot deadlock).
    """
    items = list(items)
    if len(items) <= 1 or in_io_thread() or in_worker():
        return [fn(x) for x in items]
    pool = get_io_pool()
    futures: list[Future[R]] = []
    try:
        for x in items:
            futures.append(pool.submit(fn, x))
        wait(futures)
    except BaseException:  # interrupted: start nothing more, let what runs finish
        for future in futures:
            future.cancel()
        wait(futures)
        raise
    return [future.result() for future in futures]


def waits_on_network(stores: Iterable[Store]) -> bool:
    """Does a request to any of ``stores`` cost a round trip? True unless every
    one is a store whose requests are cheap (local files, memory, a zip: those
    read small values whole, :attr:`~zarrpy.stores.abc.Store.whole_read_nbytes`).
    Work over cheap stores is CPU work, for the chunk pool; else for :func:`map_io`."""
    return any(not store.whole_read_nbytes for store in stores)


__all__ = ["DEFAULT_IO_THREADS", "ENV_VAR", "get_io_pool", "in_io_thread", "io_threads", "map_io",
           "set_io_threads", "waits_on_network"]
