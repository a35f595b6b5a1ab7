"""Work on answers as they come in: the waiting thread and a few pool threads.

A remote batch answers its requests over several milliseconds (the server,
the network, the client's event loop take them one by one). Decoding each
chunk as its answer arrives, rather than once the batch (or a run of it) is
in, hides the decoding behind the answers still to come: what is left after
the last answer is that chunk's decode, not the batch's.

:class:`AnswerDrain` takes items from any thread (:meth:`~AnswerDrain.put`,
e.g. from a store's event loop) and works them off on the thread that
:meth:`~AnswerDrain.run` s it, helped by up to ``helpers`` threads of the chunk
pool while there is a backlog. The helpers never wait for items (they end
when the queue is empty), so a drain run from a pool thread, with no
helpers, cannot deadlock the pool.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Callable, Generic, TypeVar

from .concurrency import get_pool, in_worker, max_workers

T = TypeVar("T")


class AnswerDrain(Generic[T]):
    """``work(item)`` for every item :meth:`put` until :meth:`close`; see the module docstring."""

    def __init__(self, work: Callable[[T], None], helpers: int | None = None) -> None:
        self._work = work
        self._helpers = 0 if in_worker() else (max_workers() if helpers is None else helpers)
        self._queue: deque[T] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._active = 0  # helpers running
        self._waiting = False  # the thread in run() waits for an item
        self._error: BaseException | None = None

    def put(self, item: T) -> None:
        """Queue ``item`` (any thread); a helper starts if there is a backlog."""
        with self._cond:
            self._queue.append(item)
            backlog = len(self._queue) > (1 if self._waiting else 0)
            help_now = backlog and self._active < self._helpers and self._error is None
            if help_now:
                self._active += 1
            self._cond.notify()
        if help_now:
            try:
                get_pool().submit(self._help)
            except RuntimeError:  # the pool is shutting down: the waiting thread does it all
                with self._cond:
                    self._active -= 1
                    self._cond.notify_all()

    def close(self) -> None:
        """No more items (any thread): :meth:`run` returns once the queue is worked off."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _take(self) -> tuple[bool, T | None]:
        """The next item for a helper (never waits)."""
        with self._cond:
            if not self._queue or self._error is not None:
                return False, None
            return True, self._queue.popleft()

    def _do(self, item: T) -> None:
        try:
            self._work(item)
        except BaseException as exc:  # noqa: BLE001 - the first error is raised by run()
            with self._cond:
                if self._error is None:
                    self._error = exc
                self._queue.clear()
                self._cond.notify_all()

    def _help(self) -> None:
        try:
            while True:
                got, item = self._take()
                if not got:
                    return
                self._do(item)  # type: ignore[arg-type]
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

    def run(self) -> None:
        """Work items on this thread until :meth:`close`, an empty queue and
        no helper at work (a working item may queue more), then raise the
        first error of any item."""
        while True:
            with self._cond:
                while not (self._queue and self._error is None):
                    if self._active == 0 and (self._closed or self._error is not None):
                        if self._error is not None:
                            raise self._error
                        return
                    self._waiting = True
                    self._cond.wait()
                    self._waiting = False
                item = self._queue.popleft()
            self._do(item)


__all__ = ["AnswerDrain"]
