"""The one capped cache of decoded chunks (issue 12): ``zarrpy.cache.Cache``
and ``open_array(..., cache=)`` / ``open_group(..., cache=)``.

Reads through a cache fetch each (inner) chunk once and then nothing; the
cache never holds more than its cap, even under 8 threads; writes through
zarrpy (this handle or another sharing the cache) never leave a stale chunk;
``clear()`` frees the data and the next read fetches again.
"""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy
from tests.strategies import array_layouts
from tests.test_array_sharding import CountingStore
from zarrpy.cache import Cache


# -- the mapping -------------------------------------------------------------------


def test_lru_eviction_keeps_the_cap_and_counts():
    c = Cache(100)
    c["a"], c["b"] = np.zeros(40, "u1"), np.zeros(40, "u1")
    assert c["a"] is not None  # a is now the most recently used
    c["c"] = np.zeros(40, "u1")
    assert list(c) == ["a", "c"] and c.nbytes == 80 and c.evictions == 1
    assert c.hits == 1 and c.misses == 0
    with pytest.raises(KeyError):
        c["b"]
    assert c.misses == 1
    c["big"] = np.zeros(101, "u1")  # bigger than the cap: not kept, nothing evicted for it
    assert "big" not in c and c.nbytes == 80 and c.evictions == 1
    c["a"] = np.zeros(10, "u1")  # replacing a value re-counts its size
    assert c.nbytes == 50
    del c["a"]
    assert c.nbytes == 40 and len(c) == 1
    c.clear()
    assert c.nbytes == 0 and len(c) == 0


def test_get_or_load_and_store_if_current():
    c = Cache(1000)
    calls = []
    assert c.get_or_load("k", lambda: calls.append(1) or np.ones(3)).sum() == 3
    assert c.get_or_load("k", lambda: calls.append(1) or np.ones(3)).sum() == 3
    assert calls == [1]
    v = c.version
    c.discard(["k"])  # an invalidation after the load started: the loaded value is not kept
    c.store_if_current("k2", np.ones(2), v)
    assert "k2" not in c
    c.store_if_current("k2", np.ones(2), c.version)
    assert "k2" in c


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10"])
def test_a_bad_cap_is_refused(bad):
    with pytest.raises(ValueError, match="max_bytes"):
        Cache(bad)


# -- arrays reading through it ---------------------------------------------------------


def _stored(shards=None, shape=(40, 40), chunks=(8, 8)):
    store = CountingStore()
    a = zarrpy.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="int32", fill_value=-1)
    data = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
    a[...] = data
    return store, data


@pytest.mark.parametrize("shards", [None, (16, 16)], ids=["chunks", "shards"])
def test_a_second_read_fetches_nothing_and_a_shard_index_is_read_once(shards):
    store, data = _stored(shards)
    cache = Cache(1 << 20)
    a = zarrpy.open_array(store, cache=cache)
    store.reset()
    np.testing.assert_array_equal(a[3:30, 5:20], data[3:30, 5:20])
    first = dict(store.gets), dict(store.batch_keys)
    if shards is not None:
        # the shards' indexes in one batch (suffix reads), their inner chunks in another
        assert not store.gets and store.requests == 2 and all(n == 2 for n in store.batch_keys.values())
    store.reset()
    np.testing.assert_array_equal(a[3:30, 5:20], data[3:30, 5:20])
    np.testing.assert_array_equal(a.vindex[[4, 29], [6, 19]], data[[4, 29], [6, 19]])
    assert store.requests == 0, first
    # another handle on the same node shares the entries (persistent keys)
    b = zarrpy.open_array(store, cache=cache)
    store.reset()  # opening read the metadata
    hits = cache.hits
    np.testing.assert_array_equal(b[3:30, 5:20], data[3:30, 5:20])
    assert store.requests == 0 and cache.hits > hits


@pytest.mark.parametrize("shards", [None, (16, 16)], ids=["chunks", "shards"])
def test_writes_never_leave_a_stale_chunk(shards):
    store, data = _stored(shards)
    cache = Cache(1 << 20)
    a = zarrpy.open_array(store, mode="r+", cache=cache)
    other = zarrpy.open_array(store, mode="r+", cache=cache)
    np.testing.assert_array_equal(a[...], data)  # everything cached
    a[5, 5] = -7
    other.vindex[[6, 30], [6, 31]] = -8
    other.set_mask_selection(data % 97 == 0, -9)
    data[5, 5] = -7
    data[[6, 30], [6, 31]] = -8
    data[data % 97 == 0] = -9
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(other[...], data)
    a.resize(44, 44)  # edge chunks change their region
    grown = np.full((44, 44), -1, "int32")
    grown[:40, :40] = data
    np.testing.assert_array_equal(a[...], grown)
    a.resize(20, 20)
    np.testing.assert_array_equal(a[...], data[:20, :20])


def test_a_group_shares_its_cache_with_its_arrays():
    store = CountingStore()
    g = zarrpy.open_group(store, mode="w")
    for name in ("x", "y"):
        g.create_array(name, shape=(30,), chunks=(10,), dtype="float64")[...] = np.arange(30.0)
    cache = Cache(1 << 20)
    g2 = zarrpy.open_group(store, mode="r", cache=cache)
    assert g2["x"].cache is cache and g2["y"].cache is cache
    store.reset()
    g2["x"][5:15]
    g2["x"][5:15]
    assert store.reads_of("x/c/0") == 1 and store.reads_of("x/c/1") == 1
    assert zarrpy.open(store, path="y", mode="r", cache=cache).cache is cache


def test_clear_frees_the_data_and_the_next_read_fetches_again():
    store, data = _stored()
    cache = Cache(1 << 20)
    a = zarrpy.open_array(store, cache=cache)
    a[0:8, 0:8]
    (value,) = [cache[k] for k in list(cache)]
    ref = weakref.ref(value)
    del value
    cache.clear()
    gc.collect()
    assert ref() is None  # nothing else held the decoded chunk
    store.reset()
    np.testing.assert_array_equal(a[0:8, 0:8], data[0:8, 0:8])
    assert store.requests == 1


def test_cached_chunks_are_read_only():
    store, _ = _stored()
    cache = Cache(1 << 20)
    zarrpy.open_array(store, cache=cache)[0:8, 0:8]
    (value,) = [cache[k] for k in list(cache)]
    with pytest.raises(ValueError):
        value[0, 0] = 1


def test_a_cap_below_the_working_set_is_never_exceeded_under_8_threads():
    store, data = _stored(shards=(16, 16), shape=(64, 64))
    chunk_nbytes = 8 * 8 * 4
    cache = Cache(5 * chunk_nbytes)  # the working set is 64 inner chunks
    a = zarrpy.open_array(store, cache=cache)
    errors, peaks = [], []
    barrier = threading.Barrier(8)

    def work(t):
        rng = np.random.default_rng(t)
        barrier.wait()
        for _ in range(40):
            r0, c0 = rng.integers(0, 56, 2)
            r1, c1 = r0 + rng.integers(1, 9), c0 + rng.integers(1, 9)
            try:
                np.testing.assert_array_equal(a[r0:r1, c0:c1], data[r0:r1, c0:c1])
            except AssertionError as exc:  # pragma: no cover - reported below
                errors.append(exc)
            peaks.append(cache.nbytes)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not errors
    assert max(peaks) <= cache.max_bytes and cache.evictions > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=array_layouts(max_side=9), ops=st.lists(st.tuples(st.booleans(), st.integers(0, 2**16)), max_size=8),
       cap=st.integers(0, 600))
def test_reads_through_a_small_cache_equal_numpy_between_writes(layout, ops, cap):
    shape, chunks, shards = layout
    store = {}
    zarrpy.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="int16", fill_value=3)
    ref = np.full(shape, 3, "int16")
    cache = Cache(cap)
    cached = zarrpy.open_array(store, mode="r+", cache=cache)
    other = zarrpy.open_array(store, mode="r+", cache=cache)  # another handle sharing the cache
    for write, seed in ops:
        rng = np.random.default_rng(seed)
        sel = tuple(slice(int(lo), int(lo) + int(rng.integers(1, n + 1))) for lo, n in
                    zip((rng.integers(0, n) for n in shape), shape))
        if write:
            value = rng.integers(-100, 100, size=ref[sel].shape).astype("int16")
            (cached if seed % 2 else other)[sel] = value
            ref[sel] = value
        np.testing.assert_array_equal(cached[sel], ref[sel])
        assert cached.cache.nbytes <= cap
    np.testing.assert_array_equal(cached[...], ref)


@pytest.mark.parametrize("shards", [None, (16, 16)], ids=["chunks", "shards"])
def test_the_block_api_reads_through_the_cache_too(shards):
    store, data = _stored(shards)
    cache = Cache(1 << 20)
    a = zarrpy.open_array(store, mode="r+", cache=cache)
    a[0:8, 0:16]  # chunks (0, 0) and (0, 1) now cached
    store.reset()
    got = a.read_chunks([(0, 1), (0, 0), (0, 1)])
    assert store.requests == 0
    np.testing.assert_array_equal(got[0], data[0:8, 8:16])
    np.testing.assert_array_equal(got[1], data[0:8, 0:8])
    got[0][...] = 0  # results are the caller's own arrays
    np.testing.assert_array_equal(a.read_chunk((0, 1)), data[0:8, 8:16])
    a.read_chunk((4, 4))  # a miss: read once and kept
    store.reset()
    np.testing.assert_array_equal(a.read_chunk((4, 4)), data[32:40, 32:40])
    assert store.requests == 0
    a.write_chunks({(4, 4): np.full((8, 8), 5, "int32")})
    np.testing.assert_array_equal(a[32:40, 32:40], 5)
