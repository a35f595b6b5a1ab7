"""Pointwise writes from many threads lose nothing (issue 11).

Every thread writes its own scattered points, spread over all chunks (and
inner chunks of shared shards), at the same time. A write that read the
array (or a chunk) outside the chunk's lock and wrote it back would lose
other threads' points; the chunk I/O layer merges each chunk under its
lock, so every point must survive.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import zarrpy
from zarrpy.stores import LocalStore, MemoryStore


def _run_threads(work, n_threads):
    barrier = threading.Barrier(n_threads)
    errors = []

    def run(t):
        try:
            barrier.wait()
            work(t)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads)
    assert not errors, errors


@pytest.mark.parametrize("shards", [None, (16, 16)], ids=["chunks", "shards"])
@pytest.mark.parametrize("form", ["vindex", "coordinate", "mask"])
def test_threads_writing_scattered_points_lose_nothing(tmp_path, shards, form):
    shape, n_threads, rounds = (32, 32), 6, 4
    store = LocalStore(tmp_path / "a") if form == "coordinate" else MemoryStore()
    a = zarrpy.create_array(store, shape=shape, chunks=(8, 8), shards=shards, dtype="int32", fill_value=0)
    # every element belongs to one thread, owners interleaved so each chunk has points of every thread
    owner = np.random.default_rng(5).integers(0, n_threads, size=shape)

    def work(t):
        rows, cols = np.nonzero(owner == t)
        order = np.random.default_rng(t).permutation(rows.size)
        for r in range(rounds):
            part = order[r::rounds]  # unsorted points, a different subset each round
            value = (t + 1) * 1000 + r
            if form == "vindex":
                a.vindex[rows[part], cols[part]] = value
            elif form == "coordinate":
                a.set_coordinate_selection((rows[part], cols[part]), value)
            else:
                mask = np.zeros(shape, dtype=bool)
                mask[rows[part], cols[part]] = True
                a.set_mask_selection(mask, value)

    _run_threads(work, n_threads)
    want = np.zeros(shape, dtype="int32")
    for t in range(n_threads):
        rows, cols = np.nonzero(owner == t)
        order = np.random.default_rng(t).permutation(rows.size)
        for r in range(rounds):
            part = order[r::rounds]
            want[rows[part], cols[part]] = (t + 1) * 1000 + r
    np.testing.assert_array_equal(a[...], want)


def test_handles_opened_separately_over_one_dict_share_their_locks():
    """Each thread opens its own handle on the same dict (so its own
    MemoryStore object): the per-key locks follow the data, not the object."""
    data: dict = {}
    zarrpy.create_array(data, shape=(64,), chunks=(64,), dtype="int64", fill_value=0)

    def work(t):
        a = zarrpy.open_array(data, mode="r+")
        for i in range(8):
            a.vindex[[t * 8 + i]] = t * 100 + i + 1

    _run_threads(work, 8)
    expected = np.array([t * 100 + i + 1 for t in range(8) for i in range(8)])
    np.testing.assert_array_equal(zarrpy.open_array(data)[...], expected)
