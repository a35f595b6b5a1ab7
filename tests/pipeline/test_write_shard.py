"""write_shard: one whole shard streamed inner chunk by inner chunk, stored as ``a[shard] = data`` stores it."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest

import zarrpy
from zarrpy.api._shard_writes import streams_shards, write_shard
from zarrpy.errors import SelectionError
from zarrpy.pipeline import shard_stream
from zarrpy.pipeline.shard_stream import bands, plan_band
from zarrpy.stores import LocalStore, MemoryStore

ZSTD = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
SHAPE, INNER, SHARD = (70, 45), (8, 6), (32, 24)
"""Edge shards cut by the array on both axes, edge inner chunks inside them."""


def _array(store, dtype="uint16", location="end", **kwargs):
    fill = "" if dtype == "string" else 0
    return zarrpy.create_array(store, shape=SHAPE, dtype=dtype, chunks=INNER, fill_value=fill,
                               shards={"shape": SHARD, "index_location": location}, compressors=ZSTD, **kwargs)


def _data(dtype="uint16"):
    numbers = (np.arange(np.prod(SHAPE)) % 7).reshape(SHAPE)
    numbers[:32, :24] = 0  # shard (0, 0) holds only the fill value
    numbers[:20, 24:] = 0  # shard (0, 1) nearly
    numbers[5, 40] = 3
    if dtype == "string":
        return np.array(["" if v == 0 else "v" * int(v) for v in numbers.reshape(-1)],
                        dtype=np.dtypes.StringDType()).reshape(SHAPE)
    return numbers.astype(dtype)


def _shards():
    return list(itertools.product(*(range(-(-s // c)) for s, c in zip(SHAPE, SHARD))))


def _stored(a) -> dict[str, bytes]:
    return {k: a.store.get(k) for k in a.stored_chunk_keys()}


@pytest.mark.parametrize("dtype", ["uint16", "float32", "string"])
@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("band", [None, (8, 24), (24, 24), (32, 24), (8, 12), (64, 64)])
def test_streamed_shards_are_the_shards_a_write_stores(tmp_path, dtype, location, band):
    data = _data(dtype)
    usual = _array(MemoryStore(), dtype, location)
    usual[...] = data
    streamed = _array(LocalStore(str(tmp_path / "s.zarr")), dtype, location)
    assert streams_shards(streamed)
    regions = []

    def read(region):
        regions.append(region)
        return data[region]

    for coords in _shards():
        write_shard(streamed, coords, read, band=band)
    assert _stored(streamed) == _stored(usual)
    assert np.array_equal(streamed[...], data)
    # each band read once, clipped to the array, covering it exactly once
    seen = np.zeros(SHAPE, dtype=np.int64)
    for region in regions:
        seen[region] += 1
    assert (seen == 1).all()
    assert not [f for _, _, files in os.walk(tmp_path) for f in files if f.startswith(".")]  # no temporary file left


def test_without_the_pool_the_same_bytes(monkeypatch):
    data = _data()
    pooled, inline = _array(MemoryStore()), _array(MemoryStore())
    for coords in _shards():
        write_shard(pooled, coords, lambda r: data[r], band=(8, 24), run_nbytes=0)  # one inner chunk per task
    monkeypatch.setenv("ZARRPY_THREADS", "1")
    for coords in _shards():
        write_shard(inline, coords, lambda r: data[r])
    assert _stored(pooled) == _stored(inline) and len(_stored(inline)) == 5  # shard (0, 0) is all fill


def test_an_all_fill_shard_removes_the_stored_one(tmp_path):
    a = _array(LocalStore(str(tmp_path / "a.zarr")))
    a[...] = 1
    key = a.chunk_key((1, 1))
    assert a.store.get(key) is not None
    assert a[40, 30] == 1  # a read keeps the shard's index: the write must drop it
    assert write_shard(a, (1, 1), lambda r: np.zeros([s.stop - s.start for s in r], "uint16")) is False
    assert a.store.get(key) is None
    assert a[40, 30] == 0 and a[0, 0] == 1
    # a scalar broadcast is fine too
    assert write_shard(a, (1, 1), lambda r: 5) is True and a[40, 30] == 5


def test_a_failed_read_keeps_the_old_shard(tmp_path):
    a = _array(LocalStore(str(tmp_path / "a.zarr")))
    a[...] = 1
    key = a.chunk_key((0, 0))
    before = a.store.get(key)
    calls = []

    def read(region):
        calls.append(region)
        if len(calls) == 3:
            raise OSError("the source went away")
        return np.full([s.stop - s.start for s in region], 2, "uint16")

    with pytest.raises(OSError, match="went away"):
        write_shard(a, (0, 0), read, band=(8, 24))
    assert a.store.get(key) == before and (a[:32, :24] == 1).all()
    assert not [f for _, _, files in os.walk(tmp_path) for f in files if f.startswith(".")]


def test_what_cannot_stream_is_refused():
    plain = zarrpy.create_array(MemoryStore(), shape=(10,), dtype="uint8", chunks=(5,))
    assert not streams_shards(plain)
    with pytest.raises(ValueError, match="not one 'sharding_indexed' codec"):
        shard_stream.write_shard(plain._io, (0,), lambda r: 0)
    a = _array(MemoryStore())
    with pytest.raises(SelectionError, match=r"shard \(3, 0\) is outside the grid \(3, 2\)"):
        write_shard(a, (3, 0), lambda r: 0)
    read_only = zarrpy.open_array(a.store, mode="r")
    with pytest.raises(zarrpy.errors.ReadOnlyError):
        write_shard(read_only, (0, 0), lambda r: 0)


def test_bands_follow_the_c_order_of_inner_chunks():
    region = (slice(64, 70), slice(24, 45))  # the corner shard, cut by the array
    assert bands(region, (64, 24), INNER, (8, 24)) == [(slice(64, 70), slice(24, 45))]
    assert bands((slice(0, 32), slice(0, 24)), (0, 0), INNER, (16, 24)) == [
        (slice(0, 16), slice(0, 24)), (slice(16, 32), slice(0, 24))]
    assert bands((slice(0, 8), slice(0, 24)), (0, 0), INNER, (8, 12)) == [
        (slice(0, 8), slice(0, 12)), (slice(8 - 8, 8), slice(12, 24))]
    with pytest.raises(ValueError, match="do not follow the C order"):
        bands((slice(0, 32), slice(0, 24)), (0, 0), INNER, (16, 12))
    with pytest.raises(ValueError, match="not whole inner chunks"):
        bands((slice(0, 32), slice(0, 24)), (0, 0), INNER, (8, 5))


def test_plan_band_is_the_largest_that_fits():
    shard, inner = (64, 40, 30), (4, 8, 10)

    def fits(band):
        return np.prod(band) <= limit

    limit = 64 * 40 * 30
    assert plan_band(shard, inner, fits) == shard
    limit = 40 * 30 * 9  # two rows of inner chunks
    assert plan_band(shard, inner, fits) == (8, 40, 30)
    limit = 4 * 40 * 30 - 1  # not one row of inner chunks: some inner chunks of one row
    assert plan_band(shard, inner, fits) == (4, 32, 30)
    limit = 4 * 8 * 20
    assert plan_band(shard, inner, fits) == (4, 8, 20)
    limit = 4 * 8 * 10 - 1
    assert plan_band(shard, inner, fits) is None
