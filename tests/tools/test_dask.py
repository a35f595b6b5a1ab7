"""zarrpy.dask: dask arrays read from and written to zarrpy arrays.

The cluster tests run on a real ``distributed.LocalCluster`` of two worker
processes (module-scoped: started once, closed at the end), so every array
a task touches crosses a process boundary by pickle. The other tests use
dask's threaded scheduler, which does not pickle.
"""

from __future__ import annotations

import doctest
import pickle
import uuid

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

import zarrpy
import zarrpy.dask as zd
from zarrpy.stores import LocalStore
from zarrpy.tools import dask_io

TIMEOUT = 60  # seconds for any one computation on the cluster


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                           host="127.0.0.1")
    try:
        with Client(cluster, timeout=TIMEOUT) as client:
            client.wait_for_workers(2, timeout=TIMEOUT)
            yield client
    finally:
        cluster.close(timeout=TIMEOUT)


@pytest.fixture
def threads():
    """Dask's threaded scheduler, whatever client the module has started."""
    with dask.config.set(scheduler="threads"):
        yield


def numbers(shape: tuple[int, ...], dtype: str = "int32") -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def unlocked(path) -> LocalStore:
    """A directory store with its cross-process update locks off: a store on
    which tasks of several processes cannot safely write parts of one shard
    (``supports_concurrent_updates`` False), so to_zarr checks block alignment."""
    store = LocalStore(path)
    store.locks_updates = False
    return store


def causes(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and every exception it was raised from or during."""
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


# -- on the cluster: every array crosses a process boundary -------------------
def test_sharded_round_trip_on_the_cluster(client, tmp_path):
    expected = numbers((40, 30))
    x = da.from_array(expected, chunks=(10, 15))
    assert zd.to_zarr(x, tmp_path / "a.zarr", chunks=(5, 5), shards=(10, 15), compressors=None) is None
    z = zarrpy.open_array(tmp_path / "a.zarr")
    assert (z.chunks, z.shards, z.nshards_initialized) == ((5, 5), (10, 15), 8)
    back = zd.from_zarr(tmp_path / "a.zarr")
    assert back.chunks == ((10,) * 4, (15,) * 2)
    np.testing.assert_array_equal(client.compute(back).result(timeout=TIMEOUT), expected)
    # any other read chunking works too
    odd = zd.from_array(str(tmp_path / "a.zarr"), chunks=(7, 11))
    np.testing.assert_array_equal(client.compute(odd).result(timeout=TIMEOUT), expected)


def test_misaligned_blocks_are_refused_and_rechunk_fixes_them_on_the_cluster(client, tmp_path):
    expected = numbers((10, 6))
    x = da.from_array(expected, chunks=(3, 6))  # blocks (3, 3, 3, 1) over shards of 4 rows
    with pytest.raises(zarrpy.ChunkAlignmentError) as info:
        zd.to_zarr(x, unlocked(tmp_path / "a.zarr"), chunks=(2, 3), shards=(4, 6), dimension_names=["y", "x"])
    message = str(info.value)
    assert "dimension 0 ('y')" in message and "(3, 3, 3, 1)" in message
    assert "shards there are 4 long" in message and "boundary at 3" in message
    assert "rechunk=True" in message and "synchronizer=" in message
    assert not (tmp_path / "a.zarr").exists()  # refused before anything was created
    zd.to_zarr(x, unlocked(tmp_path / "a.zarr"), chunks=(2, 3), shards=(4, 6), rechunk=True)
    np.testing.assert_array_equal(zarrpy.open_array(tmp_path / "a.zarr")[...], expected)
    # a plain directory locks each shard across processes: the blocks are written as they are
    assert LocalStore(tmp_path / "b.zarr").supports_concurrent_updates
    zd.to_zarr(x, tmp_path / "b.zarr", chunks=(2, 3), shards=(4, 6))
    np.testing.assert_array_equal(zarrpy.open_array(tmp_path / "b.zarr")[...], expected)


def test_a_synchronizer_lets_misaligned_blocks_write_on_the_cluster(client, tmp_path):
    expected = numbers((12, 4))
    z = zarrpy.create_array(unlocked(tmp_path / "a.zarr"), shape=(12, 4), dtype="int32", chunks=(2, 2),
                            shards=(6, 4))
    x = da.from_array(expected, chunks=(2, 4))  # three tasks per shard
    with pytest.raises(zarrpy.ChunkAlignmentError, match="shards there are 6 long"):
        zd.to_zarr(x, z)
    zd.to_zarr(x, z, synchronizer=zarrpy.ProcessSynchronizer(tmp_path / "locks"))
    np.testing.assert_array_equal(z[...], expected)


def test_compute_false_writes_when_computed(client, tmp_path):
    expected = numbers((8, 8), "float64")
    x = da.from_array(expected, chunks=(4, 4))
    writes = zd.to_zarr(x, tmp_path / "a.zarr", compute=False)
    assert isinstance(writes, da.Array)
    z = zarrpy.open_array(tmp_path / "a.zarr")  # created now, written when computed
    assert z.chunks == (4, 4) and z.nchunks_initialized == 0
    client.compute(writes).result(timeout=TIMEOUT)
    assert z.nchunks_initialized == 4
    np.testing.assert_array_equal(z[...], expected)


def test_region_of_an_existing_array_on_the_cluster(client, tmp_path):
    z = zarrpy.create_array(unlocked(tmp_path / "a.zarr"), shape=(20, 6), dtype="int32", chunks=(4, 6),
                            fill_value=-1)
    x = da.from_array(numbers((10, 6)), chunks=(3, 6))  # boundaries 8, 11, 14 in the array
    with pytest.raises(zarrpy.ChunkAlignmentError, match=r"\(3, 3, 3, 1\) starting at 5.*boundary at 11"):
        zd.to_zarr(x, z, region=(slice(5, 15),))
    writes = zd.to_zarr(x, z, region=(slice(5, 15),), rechunk=True, compute=False)
    assert writes.chunks[0] == (3, 4, 3)  # boundaries on multiples of the chunk: 8, 12
    client.compute(writes).result(timeout=TIMEOUT)
    expected = np.full((20, 6), -1, dtype="int32")
    expected[5:15] = numbers((10, 6))
    np.testing.assert_array_equal(z[...], expected)


def test_arrays_in_process_memory_refuse_to_cross_to_workers(client):
    z = zarrpy.create_array({}, shape=(4,), dtype="int32", chunks=(2,))
    with pytest.raises(zarrpy.ProcessLocalError) as info:
        pickle.dumps(z)
    assert isinstance(info.value, pickle.PicklingError)
    message = str(info.value)
    assert "'<MemoryStore>'" in message and "process's memory" in message
    assert "directory" in message and "object store" in message and "scheduler='threads'" in message
    # a graph holding it fails to reach the cluster, with this error as the cause
    with pytest.raises(Exception) as info:
        client.compute(zd.from_zarr(z)).result(timeout=TIMEOUT)
    assert any(isinstance(e, zarrpy.ProcessLocalError) for e in causes(info.value))
    # to_zarr says so up front, rather than from deep inside dask, and
    # before it creates anything
    with pytest.raises(zarrpy.ProcessLocalError, match="other processes"):
        zd.to_zarr(da.ones(4, dtype="int32", chunks=2), z)
    store: dict = {}
    with pytest.raises(zarrpy.ProcessLocalError, match="<MemoryStore>"):
        zd.to_zarr(da.ones(4, dtype="int32", chunks=2), store)
    assert store == {}


def test_the_threaded_scheduler_works_on_memory_stores(client, threads):
    url = f"memory://dask-{uuid.uuid4().hex}/a.zarr"
    for store in ({}, url):
        expected = numbers((6, 4))
        zd.to_zarr(da.from_array(expected, chunks=(2, 4)), store, chunks=(1, 4), shards=(2, 4))
        z = zarrpy.open_array(store)
        x = zd.from_zarr(z)
        assert x.chunks == ((2, 2, 2), (4,))
        np.testing.assert_array_equal(x.compute(), expected)
        np.testing.assert_array_equal((x + 1).sum(axis=0).compute(), (expected + 1).sum(axis=0))


# -- no cluster ---------------------------------------------------------------
def test_from_zarr_defaults_to_the_write_unit(threads, tmp_path):
    sharded = zarrpy.create_array({}, shape=(10, 9), dtype="int8", chunks=(2, 3), shards=(4, 9))
    assert zd.from_zarr(sharded).chunks == ((4, 4, 2), (9,))
    plain = zarrpy.create_array({}, shape=(10, 9), dtype="int8", chunks=(2, 3))
    assert zd.from_zarr(plain).chunks == ((2,) * 5, (3,) * 3)
    assert zd.from_zarr(plain, chunks=5).chunks == ((5, 5), (5, 4))
    v2 = zarrpy.create_array(tmp_path / "v2.zarr", shape=(5,), dtype="f8", chunks=(2,), zarr_format=2)
    assert zd.from_zarr(str(tmp_path / "v2.zarr")).chunks == ((2, 2, 1),)
    assert dask_io.write_unit(sharded) == (4, 9) and dask_io.write_unit(v2) == (2,)


def test_from_zarr_opens_stores_read_only_at_a_path(threads, tmp_path):
    g = zarrpy.open_group(tmp_path / "g.zarr", mode="w")
    g.create_array("sub/a", shape=(3,), dtype="int16", chunks=(2,))[...] = [1, 2, 3]
    x = zd.from_zarr(tmp_path / "g.zarr", path="sub/a")
    np.testing.assert_array_equal(x.compute(), [1, 2, 3])
    with pytest.raises(TypeError, match="path"):
        zd.from_zarr(g["sub/a"], path="sub/a")


def test_from_zarr_names_are_tokens_of_array_and_chunks(threads):
    a = zarrpy.create_array({}, shape=(4,), dtype="int8", chunks=(2,))  # tokenized without pickling
    assert zd.from_zarr(a).name == zd.from_zarr(a).name
    assert zd.from_zarr(a).name.startswith("from-zarr-")
    assert zd.from_zarr(a).name != zd.from_zarr(a, chunks=4).name
    assert zd.from_zarr(a).name != zd.from_zarr(zarrpy.create_array({}, shape=(4,), dtype="int8", chunks=(2,))).name
    assert zd.from_zarr(a, name="mine").name == "mine"
    assert zd.from_array is zd.from_zarr and zd.to_array is zd.to_zarr


def test_to_zarr_new_array_takes_the_dask_layout_and_create_options(threads):
    store: dict = {}
    x = da.ones((7, 5), dtype="uint8", chunks=(3, 5))
    zd.to_zarr(x, store, path="a/b", fill_value=9, attributes={"units": "m"}, compressors=None)
    z = zarrpy.open_array(store, path="a/b")
    assert (z.shape, z.dtype, z.chunks, z.shards, z.fill_value) == ((7, 5), np.dtype("uint8"), (3, 5), None, 9)
    assert z.attrs["units"] == "m" and z.compressors == ()
    assert int(z[...].sum()) == 35
    with pytest.raises(zarrpy.NodeExistsError):
        zd.to_zarr(x, store, path="a/b")
    zd.to_zarr(x * 2, store, path="a/b", overwrite=True)
    assert int(zarrpy.open_array(store, path="a/b")[...].sum()) == 70
    zd.to_zarr(x, store, path="v2", zarr_format=2)
    assert zarrpy.open_array(store, path="v2").zarr_format == 2


def test_rechunk_aligns_only_what_is_misaligned_to_multiples_of_the_unit(threads):
    z = zarrpy.create_array({}, shape=(30, 8), dtype="int32", chunks=(4, 4))
    x = da.from_array(numbers((30, 8)), chunks=(10, 4))
    writes = zd.to_zarr(x, z, rechunk=True, compute=False)
    assert writes.chunks == ((8, 8, 8, 6), (4, 4))  # 10 rounds down to 8; dimension 1 kept
    writes.compute()
    np.testing.assert_array_equal(z[...], numbers((30, 8)))
    assert dask_io._aligned_blocks(5, 10, 4) == (3, 4, 3)
    assert dask_io._aligned_blocks(0, 8, 4) == (4, 4)
    assert dask_io._aligned_blocks(3, 0, 4) == (0,)
    assert dask_io.first_misaligned((4, 8, 4, 1), 0, 4) is None  # irregular but aligned


def test_safe_chunks_false_is_for_one_process(threads):
    z = zarrpy.create_array({}, shape=(12,), dtype="int32", chunks=(4,))
    zd.to_zarr(da.arange(12, dtype="int32", chunks=3), z, safe_chunks=False)  # per-key locks in-process
    np.testing.assert_array_equal(z[...], np.arange(12))


def test_empty_and_0d_arrays(threads):
    store: dict = {}
    zd.to_zarr(da.zeros((0, 3), dtype="f4", chunks=(2, 3)), store, path="empty")
    empty = zarrpy.open_array(store, path="empty")
    assert empty.shape == (0, 3) and zd.from_zarr(empty).compute().shape == (0, 3)
    zd.to_zarr(da.from_array(np.array(7, dtype="int16")), store, path="scalar")
    assert int(zd.from_zarr(store, path="scalar").compute()) == 7


def test_return_stored_reads_back_what_was_written(threads):
    z = zarrpy.create_array({}, shape=(6,), dtype="int32", chunks=(3,))
    stored = zd.to_zarr(da.arange(6, dtype="int32", chunks=3), z, return_stored=True)
    np.testing.assert_array_equal(stored.compute(), np.arange(6))


def test_to_zarr_refuses_what_it_cannot_write(threads, tmp_path):
    z = zarrpy.create_array(tmp_path / "a.zarr", shape=(6,), dtype="int32", chunks=(3,))
    x = da.arange(6, dtype="int32", chunks=3)
    with pytest.raises(TypeError, match="dask array"):
        zd.to_zarr(np.arange(6), z)
    unknown = x[x > 2]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        zd.to_zarr(unknown, tmp_path / "b.zarr")
    with pytest.raises(ValueError, match=r"shape \(6,\) does not fit region"):
        zd.to_zarr(x, z, region=(slice(0, 3),))
    with pytest.raises(ValueError, match="step"):
        zd.to_zarr(da.arange(3, chunks=3), z, region=(slice(0, 6, 2),))
    with pytest.raises(zarrpy.NodeNotFoundError, match="existing array"):  # region= means mode 'r+'
        zd.to_zarr(x, tmp_path / "b.zarr", region=(slice(0, 6),))
    with pytest.raises(ValueError, match="existing array, and there is none"):
        zd.to_zarr(x, tmp_path / "b.zarr", region=(slice(0, 6),), mode="a")
    assert not (tmp_path / "b.zarr").exists()
    with pytest.raises(TypeError, match="shards"):
        zd.to_zarr(x, z, shards=(6,))
    with pytest.raises(zarrpy.ReadOnlyError, match="mode='r\\+'"):
        zd.to_zarr(x, zarrpy.open_array(tmp_path / "a.zarr"))
    assert z.nchunks_initialized == 0


def test_mode_w_replaces_and_the_hint_names_real_arguments(threads, tmp_path):
    x = da.arange(6, dtype="int32", chunks=3)
    zd.to_zarr(x, tmp_path / "a.zarr")
    with pytest.raises(zarrpy.NodeExistsError, match="mode='w'") as exc_info:
        zd.to_zarr(x * 2, tmp_path / "a.zarr")
    assert "overwrite=True" not in str(exc_info.value)
    zd.to_zarr(x * 2, tmp_path / "a.zarr", mode="w", chunks=(1,))  # the hint's argument works
    z = zarrpy.open_array(tmp_path / "a.zarr")
    assert z.chunks == (1,)
    np.testing.assert_array_equal(z[...], np.arange(6) * 2)
    zd.to_zarr(x * 3, tmp_path / "a.zarr", overwrite=True)  # dask's older spelling
    np.testing.assert_array_equal(zarrpy.open_array(tmp_path / "a.zarr")[...], np.arange(6) * 3)
    with pytest.raises(zarrpy.NodeExistsError, match="mode='w'"):
        zd.to_zarr(x, tmp_path / "a.zarr", mode="w-")


def test_mode_a_and_r_plus_write_into_the_array_there(threads, tmp_path):
    x = da.arange(6, dtype="int32", chunks=3)
    zd.to_zarr(x, tmp_path / "g.zarr", path="a", mode="a")  # nothing there: created
    zd.to_zarr(x * 10, tmp_path / "g.zarr", path="a", mode="a")  # there: written into
    z = zarrpy.open_array(tmp_path / "g.zarr", path="a")
    np.testing.assert_array_equal(z[...], np.arange(6) * 10)
    zd.to_zarr(da.zeros(3, dtype="int32", chunks=3), tmp_path / "g.zarr", path="a", mode="r+", region=(slice(3, 6),))
    np.testing.assert_array_equal(z[...], [0, 10, 20, 0, 0, 0])
    zd.to_zarr(da.ones(3, dtype="int32", chunks=3), tmp_path / "g.zarr", path="a", region=(slice(0, 3),))
    np.testing.assert_array_equal(z[...], [1, 1, 1, 0, 0, 0])  # region= alone means mode 'r+'
    with pytest.raises(zarrpy.NodeNotFoundError, match="mode='r\\+'"):
        zd.to_zarr(x, tmp_path / "g.zarr", path="nope", mode="r+")
    with pytest.raises(TypeError, match="chunks"):
        zd.to_zarr(x, tmp_path / "g.zarr", path="a", mode="a", chunks=(2,))
    with pytest.raises(ValueError, match="does not fit"):
        zd.to_zarr(da.arange(4, chunks=2), tmp_path / "g.zarr", path="a", mode="a")
    np.testing.assert_array_equal(z[...], [1, 1, 1, 0, 0, 0])  # refused writes stored nothing
    zarrpy.open_group(tmp_path / "grp.zarr", mode="w")
    with pytest.raises(zarrpy.NodeExistsError, match="not an array"):
        zd.to_zarr(x, tmp_path / "grp.zarr", mode="a")


@pytest.mark.parametrize("kwargs, match", [
    (dict(mode="r"), "read-only"), (dict(mode="x"), "mode must be"),
    (dict(mode="a", overwrite=True), "overwrite=True means mode='w'"),
])
def test_modes_that_do_not_write_are_refused(kwargs, match, threads, tmp_path):
    with pytest.raises(ValueError, match=match):
        zd.to_zarr(da.arange(6, chunks=3), tmp_path / "a.zarr", **kwargs)
    assert not (tmp_path / "a.zarr").exists()


def test_an_array_given_is_written_into_whatever_the_mode_but_w(threads):
    z = zarrpy.create_array({}, shape=(6,), dtype="int32", chunks=(3,))
    zd.to_zarr(da.arange(6, dtype="int32", chunks=3), z, mode="r+")
    zd.to_zarr(da.arange(6, dtype="int32", chunks=3) + 1, z, mode="a")
    np.testing.assert_array_equal(z[...], np.arange(6) + 1)
    with pytest.raises(ValueError, match="existing zarrpy.Array"):
        zd.to_zarr(da.arange(6, dtype="int32", chunks=3), z, mode="w")


def test_matches_dask_to_zarr_with_zarr_python(threads, tmp_path):
    """What dask's own to_zarr (through zarr-python) stores with mode='w', zarrpy's stores too."""
    pytest.importorskip("zarr")
    x = da.from_array(numbers((6, 4)), chunks=(3, 2))
    da.to_zarr(x, str(tmp_path / "ref.zarr"), mode="w")
    zd.to_zarr(x, tmp_path / "ours.zarr", mode="w")
    da.to_zarr(x + 1, str(tmp_path / "ref.zarr"), mode="w")
    zd.to_zarr(x + 1, tmp_path / "ours.zarr", mode="w")
    ours, ref = zarrpy.open_array(tmp_path / "ours.zarr"), zarrpy.open_array(tmp_path / "ref.zarr")
    assert (ours.shape, ours.chunks, ours.dtype) == (ref.shape, ref.chunks, ref.dtype)
    np.testing.assert_array_equal(ours[...], ref[...])


def test_a_given_synchronizer_reopens_the_array_with_it(threads, tmp_path):
    z = zarrpy.create_array(tmp_path / "a.zarr", shape=(6,), dtype="int32", chunks=(3,))
    sync = zarrpy.ProcessSynchronizer(tmp_path / "locks")
    zd.to_zarr(da.arange(6, dtype="int32", chunks=2), z, synchronizer=sync)
    np.testing.assert_array_equal(z[...], np.arange(6))
    assert z.synchronizer is None  # the caller's array is left as it was
    synced = zarrpy.open_array(tmp_path / "a.zarr", mode="r+", synchronizer=sync)
    zd.to_zarr(da.zeros(6, dtype="int32", chunks=2), synced)  # the array's own synchronizer counts
    assert not z[...].any()


def test_module_doctest(threads):
    assert doctest.testmod(zd).failed == 0
