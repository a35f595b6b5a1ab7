"""for_each_batch: contiguous batches whose sizes differ by at most one."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrpy.pipeline import concurrency


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 600), workers=st.integers(1, 6), max_batch=st.integers(1, 300))
def test_batches_cover_the_items_in_order_and_are_balanced(n, workers, max_batch):
    seen: list[list[int]] = []
    lock = threading.Lock()

    def record(batch: list[int]) -> None:
        with lock:
            seen.append(batch)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(concurrency, "max_workers", lambda: workers)
        mp.setattr(concurrency, "map_chunks", lambda fn, items: [fn(x) for x in items])
        concurrency.for_each_batch(record, range(n), max_batch=max_batch)
    assert [x for b in seen for x in b] == list(range(n))
    if n:
        sizes = [len(b) for b in seen]
        assert max(sizes) - min(sizes) <= 1
        assert max(sizes) <= max_batch
        assert len(seen) == max(-(-n // max_batch), min(n, 2 * workers))


def test_ten_chunks_on_two_workers_split_five_and_five():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(concurrency, "max_workers", lambda: 2)
        sizes: list[int] = []
        mp.setattr(concurrency, "map_chunks", lambda fn, items: sizes.extend(len(b) for b in items))
        concurrency.for_each_batch(lambda b: None, range(10))
    assert sizes == [3, 3, 2, 2]
