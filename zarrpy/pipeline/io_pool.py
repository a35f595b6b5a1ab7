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
there) and may call :func:`map_io` again (its caller runs what no thread has
started, so it never waits on a queued task); chunk-pool tasks never wait on
this pool (:func:`map_io` runs inline there).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

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


def get_io_pool() -> ThreadPoolExecutor:
    """The process's IO pool (:func:`io_threads` threads), created on first use."""
    global _pool
    pool = _pool
    if pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=io_threads(), thread_name_prefix="zarrpy-io")
            pool = _pool
    return pool


def _reset_after_fork() -> None:
    global _pool, _pool_lock
    _pool = None  # the parent's threads do not exist in the child
    _pool_lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_after_fork)


def map_io(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(x) for x in items]`` with the items waited on side by side.

    Results keep the input order. Every item is finished before this returns
    or raises (no task is left writing into a buffer the caller reuses); the
    error of the first failing item, in input order, is re-raised.

    The caller works too: it runs, in order, every item no pool thread has
    started, and then waits only for items that are running. So a task of
    this pool may call :func:`map_io` again (a read of a sharded array inside
    a many-array read) without deadlock, even when every thread is busy.
    Zero or one item, or a call from a chunk-pool thread (chunk work never
    waits on this pool), runs inline.
    """
    items = list(items)
    if len(items) <= 1 or in_worker():
        return [fn(x) for x in items]
    work = _Work(fn, items)
    pool = get_io_pool()
    try:
        try:
            for i in range(1, len(items)):
                pool.submit(work.run, i)
        except RuntimeError:  # the pool was just replaced (set_io_threads) or Python exits: run the rest here
            pass
        for i in range(len(items)):
            work.run(i, caller=True)
    finally:
        work.finish()  # interrupted: nothing more starts; what runs is waited for
    return work.results()


class _Work(Generic[T, R]):
    """The items of one :func:`map_io` call: each is run once, by whoever claims it first."""

    def __init__(self, fn: Callable[[T], R], items: list[T]):
        self.fn, self.items = fn, items
        self._lock = threading.Lock()
        self._claimed = [False] * len(items)
        self._done = [threading.Event() for _ in items]
        self._values: list[R | None] = [None] * len(items)
        self._errors: list[BaseException | None] = [None] * len(items)

    def _claim(self, i: int) -> bool:
        with self._lock:
            if self._claimed[i]:
                return False
            self._claimed[i] = True
            return True

    def run(self, i: int, caller: bool = False) -> None:
        """Run item ``i`` unless someone has; the caller's own interrupt propagates."""
        if not self._claim(i):
            return
        try:
            self._values[i] = self.fn(self.items[i])
        except BaseException as exc:
            self._errors[i] = exc
            if caller and not isinstance(exc, Exception):
                raise
        finally:
            self._done[i].set()

    def finish(self) -> None:
        """Claim every item not started (it never runs), then wait for the running ones."""
        for i, done in enumerate(self._done):
            if self._claim(i):
                done.set()
        for done in self._done:
            done.wait()

    def results(self) -> list[R]:
        """The values in order, or the first item's error."""
        for error in self._errors:
            if error is not None:
                raise error
        return self._values  # type: ignore[return-value]  # every item ran without error


def waits_on_network(stores: Iterable[Store]) -> bool:
    """Does a request to any of ``stores`` cost a round trip? True unless every
    one is a store whose requests are cheap (local files, memory, a zip: those
    read small values whole, :attr:`~zarrpy.stores.abc.Store.whole_read_nbytes`).
    Work over cheap stores is CPU work, for the chunk pool; else for :func:`map_io`."""
    return any(not store.whole_read_nbytes for store in stores)


__all__ = ["DEFAULT_IO_THREADS", "ENV_VAR", "get_io_pool", "io_threads", "map_io",
           "set_io_threads", "waits_on_network"]
