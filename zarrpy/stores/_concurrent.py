"""Bounded concurrency for the stores' batches of async requests.

A batch (``get_partial_values``, ``get_versioned``, the sizes of a listing)
runs its requests concurrently on one event loop, at most the store's
:attr:`~zarrpy.stores.abc.Store.request_concurrency` in flight at once.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Sequence, TypeVar

A = TypeVar("A")
T = TypeVar("T")


def concurrency_setting(n: int) -> int:
    """``n`` checked as a request concurrency: an int of at least 1."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"request_concurrency must be an int >= 1, not {n!r}")
    return n


async def bounded(limit: int, func: Callable[[A], Awaitable[T]], items: Sequence[A]) -> list[T | BaseException]:
    """``await func(item)`` for every item, at most ``limit`` at once; the
    results (or the exception each raised) in item order."""
    gate = asyncio.Semaphore(max(1, limit))

    async def one(item: A) -> T:
        async with gate:
            return await func(item)

    return list(await asyncio.gather(*(one(item) for item in items), return_exceptions=True))


__all__ = ["bounded", "concurrency_setting"]
