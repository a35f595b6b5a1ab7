"""Cutting work into a few even runs, for a thread pool.

One task per chunk costs about what decoding a small chunk does, so work is
handed out in a few runs of neighbouring items instead. Runs of neighbours
keep what lies together (the inner chunks of a shard, the chunks of one
row) in one task, so its reads can be merged.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

T = TypeVar("T")


def even_runs(items: Sequence[T], most: int) -> list[list[T]]:
    """``items`` cut into at most ``most`` consecutive runs whose lengths
    differ by at most one: 10 items in 4 runs are 3, 3, 2, 2 (two workers
    each get 5), not 3, 3, 3, 1 (one gets 6, the other 4)."""
    n = min(len(items), most)
    if n <= 0:
        return []
    size, extra = divmod(len(items), n)
    bounds = [i * size + min(i, extra) for i in range(n + 1)]
    return [list(items[bounds[i] : bounds[i + 1]]) for i in range(n)]


__all__ = ["even_runs"]
