"""Bounded concurrency for the stores' batches of async requests.

A batch (``get_partial_values``, ``get_versioned``, the sizes of a listing)
runs its requests concurrently on one event loop, at most the store's
:attr:`~zarrpy.stores.abc.Store.request_concurrency` in flight at once.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from concurrent.futures import Future
from typing import Any, Awaitable, Callable, Coroutine, Sequence, TypeVar

A = TypeVar("A")
T = TypeVar("T")


EAGER_TASKS = sys.version_info >= (3, 12)
"""Whether tasks can start eagerly (Python 3.12's ``eager_start``): a
request's task then runs up to its first wait, writing the request, inside
the call that starts it, not on a later turn of the loop, where answers
being received and decoded may come first."""


def start_task(coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    """A task for ``coro`` on the running loop, started eagerly where Python
    can (:data:`EAGER_TASKS`)."""
    loop = asyncio.get_running_loop()
    if EAGER_TASKS:
        return asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg]
    return loop.create_task(coro)


def concurrency_setting(n: int) -> int:
    """``n`` checked as a request concurrency: an int of at least 1."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"request_concurrency must be an int >= 1, not {n!r}")
    return n


async def bounded(limit: int, func: Callable[[A], Awaitable[T]], items: Sequence[A],
                  sent: threading.Event | None = None,
                  on_each: Callable[[int, T], None] | None = None) -> list[T | BaseException]:
    """``await func(item)`` for every item, at most ``limit`` at once; the
    results (or the exception each raised) in item order. ``sent``, when
    given, is set once the first ``limit`` requests have run up to their
    first wait (on a kept-alive connection: written); ``on_each(i, result)``,
    when given, is called on the loop as each item succeeds."""
    gate = asyncio.Semaphore(max(1, limit))

    async def one(i: int) -> T:
        async with gate:
            result = await func(items[i])
        if on_each is not None:
            on_each(i, result)
        return result

    tasks = [start_task(one(i)) for i in range(len(items))]  # each written at once where it can be
    if sent is not None:
        try:
            await asyncio.sleep(0)  # each task runs to its first wait: its request is on the wire
        finally:
            sent.set()
    return list(await asyncio.gather(*tasks, return_exceptions=True))


def start_on_loop(loop: asyncio.AbstractEventLoop, limit: int, func: Callable[[A], Awaitable[T]],
                  items: Sequence[A], on_each: Callable[[int, T], None] | None = None,
                  ) -> tuple[Future[list[T | BaseException]], threading.Event]:
    """:func:`bounded` started on ``loop`` (another thread's, as
    fsspec's ``sync`` runs it): its future, and the event set once its
    requests are written. Called on ``loop`` itself (an answer's callback
    starting the next stage), it starts the batch there and then (see
    :func:`start_task`); waiting for the future there would wait forever
    (:meth:`Pending.result` refuses to)."""
    sent = threading.Event()
    coro = bounded(limit, func, items, sent, on_each)
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is not loop:
        return asyncio.run_coroutine_threadsafe(coro, loop), sent
    # On the loop itself: started here (its requests written before this
    # returns, where tasks start eagerly), not after a hop through the loop.
    future: Future[list[T | BaseException]] = Future()
    start_task(coro).add_done_callback(lambda task: _copy_outcome(task, future))
    return future, sent


def _copy_outcome(task: asyncio.Task[T], future: Future[T]) -> None:
    if task.cancelled():
        future.cancel()
    elif (exc := task.exception()) is not None:
        future.set_exception(exc)
    else:
        future.set_result(task.result())


__all__ = ["EAGER_TASKS", "bounded", "concurrency_setting", "start_on_loop", "start_task"]
