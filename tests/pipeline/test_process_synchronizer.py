"""Processes writing inner chunks of shared shards lose nothing with a
synchronizer (issue 13).

Four processes write disjoint inner chunks of the same shards at the same
time, for 10 rounds. Every write reads the shard, merges its inner chunk and
stores the shard; without a lock shared by the processes the last store
drops the others' inner chunks (the probe lost 22-25% of 640 writes). With
:class:`zarrpy.ProcessSynchronizer` (file locks) or a
:class:`zarrpy.LockSynchronizer` over a lock server's named locks (here a
multiprocessing manager's, standing in for dask's ``distributed.Lock``),
every inner chunk holds its last value.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle

import numpy as np
import pytest

import zarrpy

N_PROCS, ROUNDS = 4, 10
SHAPE, CHUNKS, SHARDS = (16, 32), (4, 4), (16, 16)  # 2 shards of 4x4 inner chunks each


def _owned(proc: int) -> list[tuple[int, int]]:
    """The inner chunks process ``proc`` writes: every N_PROCS-th one, in both shards."""
    grid = [(i, j) for i in range(SHAPE[0] // CHUNKS[0]) for j in range(SHAPE[1] // CHUNKS[1])]
    return grid[proc::N_PROCS]


def _value(proc: int, rnd: int) -> int:
    return (proc + 1) * 100 + rnd


def _writer(path: str, synchronizer, proc: int, barrier) -> None:
    a = zarrpy.open_array(path, mode="r+", synchronizer=synchronizer)
    for rnd in range(ROUNDS):
        barrier.wait()
        for i, j in _owned(proc):
            a[i * 4:(i + 1) * 4, j * 4:(j + 1) * 4] = _value(proc, rnd)


class _NamedLocks(dict):
    """``name -> lock`` resolving every name to the same server-side lock in
    every process: a multiprocessing manager's locks, made up front for the
    synchronizer's stripes, standing in for dask's ``distributed.Lock``."""

    def __call__(self, name: str):
        return self[name]


def _run(path: str, synchronizer) -> np.ndarray:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(N_PROCS)
    procs = [ctx.Process(target=_writer, args=(path, synchronizer, p, barrier)) for p in range(N_PROCS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    return zarrpy.open_array(path)[...]


def _expected() -> np.ndarray:
    want = np.zeros(SHAPE, dtype="int32")
    for proc in range(N_PROCS):
        for i, j in _owned(proc):
            want[i * 4:(i + 1) * 4, j * 4:(j + 1) * 4] = _value(proc, ROUNDS - 1)
    return want


def _lost(got: np.ndarray) -> int:
    want = _expected()
    blocks = [(i, j) for i in range(SHAPE[0] // 4) for j in range(SHAPE[1] // 4)]
    return sum(not np.array_equal(got[i * 4:(i + 1) * 4, j * 4:(j + 1) * 4], want[i * 4:(i + 1) * 4, j * 4:(j + 1) * 4])
               for i, j in blocks)


@pytest.fixture
def array_path(tmp_path):
    path = str(tmp_path / "a.zarr")
    zarrpy.create_array(path, shape=SHAPE, chunks=CHUNKS, shards=SHARDS, dtype="int32", fill_value=0)
    return path


def test_four_processes_with_a_process_synchronizer_lose_nothing(array_path, tmp_path):
    sync = zarrpy.ProcessSynchronizer(tmp_path / "locks")
    got = _run(array_path, sync)
    assert _lost(got) == 0
    np.testing.assert_array_equal(got, _expected())
    assert len(list((tmp_path / "locks").iterdir())) <= 2  # one lock file per shard touched (striped)


def test_four_processes_with_a_lock_server_synchronizer_lose_nothing(array_path):
    stripes = 8
    with mp.get_context("spawn").Manager() as manager:
        locks = _NamedLocks({f"zarrpy-{i:05d}": manager.Lock() for i in range(stripes)})
        got = _run(array_path, zarrpy.LockSynchronizer(locks, stripes=stripes))
    assert _lost(got) == 0
    np.testing.assert_array_equal(got, _expected())


def test_synchronizers_travel_with_a_pickled_array(array_path, tmp_path):
    sync = zarrpy.ProcessSynchronizer(tmp_path / "locks")
    a = zarrpy.open_array(array_path, mode="r+", synchronizer=sync)
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b.synchronizer, zarrpy.ProcessSynchronizer) and b.synchronizer.path == sync.path
    g = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="w", synchronizer=sync)
    assert g.create_array("x", shape=(4,), dtype="i1").synchronizer is sync
    assert g["x"].synchronizer is sync
