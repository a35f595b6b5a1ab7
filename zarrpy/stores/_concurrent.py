"""Bounded concurrency for the stores' batches of async requests.

A batch (``get_partial_values``, ``get_versioned``, the sizes of a listing)
runs its requests concurrently on one event loop, at most the store's
:attr:`~zarrpy.stores.abc.Store.request_concurrency` in flight at once.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Awaitable, Callable, Sequence, TypeVar

A = TypeVar("A")
T = TypeVar("T")


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

    tasks = [asyncio.ensure_future(one(i)) for i in range(len(items))]
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
    starting the next stage), it only schedules the batch: waiting for the
    future there would wait forever (:meth:`Pending.result` refuses to)."""
    sent = threading.Event()
    return asyncio.run_coroutine_threadsafe(bounded(limit, func, items, sent, on_each), loop), sent


__all__ = ["bounded", "start_on_loop", "concurrency_setting"]
