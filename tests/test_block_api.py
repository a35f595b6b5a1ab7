"""read_chunks / write_chunks, and concurrent writes to one chunk."""

import threading

import numpy as np
import pytest

import zarrpy
from zarrpy.stores.memory import MemoryStore


def _regions(shape, chunks):
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    for coords in np.ndindex(*grid):
        yield coords, tuple(slice(c * cs, min((c + 1) * cs, s)) for c, cs, s in zip(coords, chunks, shape))


@pytest.mark.parametrize("shards", [None, (6, 8)])
def test_read_chunks_returns_each_chunks_region(shards):
    ref = np.arange(11 * 13, dtype="int32").reshape(11, 13)
    a = zarrpy.create_array(MemoryStore(), shape=ref.shape, dtype="int32", chunks=(3, 4), shards=shards)
    a[...] = ref
    coords = [c for c, _ in _regions(ref.shape, (3, 4))]
    out = a.read_chunks(coords[::-1])
    for (c, region), got in zip(list(_regions(ref.shape, (3, 4)))[::-1], out):
        np.testing.assert_array_equal(got, ref[region])


@pytest.mark.parametrize("shards", [None, (6, 8)])
def test_write_chunks_matches_numpy(shards):
    ref = np.full((11, 13), -5, dtype="int32")
    a = zarrpy.create_array(MemoryStore(), shape=ref.shape, dtype="int32", chunks=(3, 4), fill_value=-5, shards=shards)
    rng = np.random.default_rng(0)
    todo = {}
    for c, region in _regions(ref.shape, (3, 4)):
        if rng.random() < 0.6:
            block = rng.integers(0, 1000, size=tuple(r.stop - r.start for r in region)).astype("int32")
            todo[c] = block
            ref[region] = block
    a.write_chunks(todo)
    np.testing.assert_array_equal(a[...], ref)


def test_block_api_rejects_coords_outside_the_grid():
    a = zarrpy.create_array(MemoryStore(), shape=(5,), dtype="int8", chunks=(2,))
    with pytest.raises(zarrpy.SelectionError):
        a.read_chunks([(3,)])
    with pytest.raises(zarrpy.SelectionError):
        a.write_chunks({(-1,): [1, 2]})


@pytest.mark.parametrize("shards", [None, (64,)])
def test_threads_writing_disjoint_parts_of_one_chunk_lose_nothing(shards):
    n_threads, per_thread = 8, 8
    a = zarrpy.create_array(MemoryStore(), shape=(64,), dtype="int64", chunks=(64,) if shards is None else (8,),
                            shards=shards, fill_value=0)
    barrier = threading.Barrier(n_threads)

    def work(t):
        barrier.wait()
        for i in range(per_thread):
            a[t * per_thread + i] = t * 100 + i + 1

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    expected = np.array([t * 100 + i + 1 for t in range(n_threads) for i in range(per_thread)])
    np.testing.assert_array_equal(a[...], expected)
