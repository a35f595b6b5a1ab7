"""for_each_batch: contiguous batches whose sizes differ by at most one."""

from __future__ import annotations

import os
import subprocess
import sys
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


def test_the_pool_has_one_thread_more_than_the_cores_unless_told(monkeypatch):
    """A spare thread takes a core while another waits for the GIL;
    ZARRPY_THREADS (a positive integer) overrides, anything else is ignored."""
    monkeypatch.delenv("ZARRPY_THREADS", raising=False)
    assert concurrency.DEFAULT_WORKERS == (os.cpu_count() or 4) + 1
    assert concurrency.max_workers() == concurrency.DEFAULT_WORKERS
    monkeypatch.setenv("ZARRPY_THREADS", "3")
    assert concurrency.max_workers() == 3
    for ignored in ("0", "-2", "two", "", "1.5"):
        monkeypatch.setenv("ZARRPY_THREADS", ignored)
        assert concurrency.max_workers() == concurrency.DEFAULT_WORKERS


def test_a_fresh_process_makes_its_pool_that_size():
    """The pool is made with max_workers() threads: seen from a new process,
    which has no pool yet and no ZARRPY_THREADS."""
    code = "from zarrpy.pipeline import concurrency\nprint(concurrency.get_pool()._max_workers)\n"
    env = {k: v for k, v in os.environ.items() if k != "ZARRPY_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert int(out.stdout) == (os.cpu_count() or 4) + 1
