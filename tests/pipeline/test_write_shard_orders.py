"""write_shard in every subchunk_write_order: bands follow the order, nothing is held back,
and the stored shard is the one ``a[...] = data`` stores with the same order."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import zarrpy
from zarrpy.api._shard_writes import plan_band as array_plan_band
from zarrpy.api._shard_writes import write_shard
from zarrpy.codecs.sharding import stream as stream_module
from zarrpy.codecs.sharding.order import WRITE_ORDERS
from zarrpy.pipeline.shard_stream import bands, plan_band
from zarrpy.stores import MemoryStore

ZSTD = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
SHAPE, INNER, SHARD = (70, 45), (4, 3), (32, 24)
"""Edge shards cut by the array on both axes; a shard holds 8 x 8 inner chunks."""


def _array(order, dtype="uint16", location="end"):
    fill = "" if dtype == "string" else 0
    return zarrpy.create_array(MemoryStore(), shape=SHAPE, dtype=dtype, chunks=INNER, fill_value=fill,
                               shards={"shape": SHARD, "index_location": location}, compressors=ZSTD,
                               subchunk_write_order=order)


def _data(dtype="uint16"):
    numbers = (np.arange(np.prod(SHAPE)) * 5 % 11).reshape(SHAPE)
    numbers[:8, :9] = 0  # fill inner chunks at the start of shard (0, 0)
    if dtype == "string":
        return np.array(["" if v == 0 else "v" * int(v) for v in numbers.reshape(-1)],
                        dtype=np.dtypes.StringDType()).reshape(SHAPE)
    return numbers.astype(dtype)


def _stored(a) -> dict[str, bytes]:
    return {k: a.store.get(k) for k in a.stored_chunk_keys()}


@pytest.fixture
def holds(monkeypatch):
    """Inner chunks ShardStream held back (came before their turn)."""
    held: list[int] = []
    original = stream_module.ShardStream._hold_back

    def spy(self, position, data):
        held.append(position)
        return original(self, position, data)

    monkeypatch.setattr(stream_module.ShardStream, "_hold_back", spy)
    return held


@pytest.mark.parametrize("dtype", ["uint16", "string"])
@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("order", WRITE_ORDERS)
@pytest.mark.parametrize("budget", [12, 48, 200, 10**6])
def test_streamed_shards_in_each_order_are_the_shards_a_write_stores(dtype, location, order, budget, holds):
    data = _data(dtype)
    usual = _array(order, dtype, location)
    usual[...] = data
    streamed = _array(order, dtype, location)
    band = array_plan_band(streamed, lambda b: math.prod(b) <= budget)
    assert band is not None
    for coords in itertools.product(*(range(-(-s // c)) for s, c in zip(SHAPE, SHARD))):
        write_shard(streamed, coords, lambda r: data[r], band=band)
    assert _stored(streamed) == _stored(usual)
    assert holds == []  # bands planned for the order hand every inner chunk over in its turn
    assert np.array_equal(np.asarray(streamed[...], dtype=data.dtype), data)


def test_bands_of_another_shape_still_give_the_shard(holds):
    """Rows of inner chunks on a shard written in Z order: the stream holds
    the early inner chunks back, and stores the same bytes. (Fortran-order
    shards refuse C-order bands, as C-order shards refuse Fortran ones.)"""
    data = _data()
    usual = _array("morton")
    usual[...] = data
    streamed = _array("morton")
    write_shard(streamed, (0, 0), lambda r: data[r], band=(4, 24))  # rows of inner chunks
    assert holds  # some came early
    assert streamed.store.get("c/0/0") == usual.store.get("c/0/0")
    with pytest.raises(ValueError, match="do not follow the Fortran order"):
        write_shard(_array("colexicographic"), (0, 0), lambda r: data[r], band=(4, 24))


def test_colexicographic_bands_are_c_order_bands_with_the_dimensions_reversed():
    shard, inner = (64, 40, 30), (4, 8, 10)

    def fits(band):
        return np.prod(band) <= limit

    limit = 64 * 40 * 30
    assert plan_band(shard, inner, fits, "colexicographic") == shard
    limit = 64 * 40 * 10 * 2
    assert plan_band(shard, inner, fits, "colexicographic") == (64, 40, 20)
    limit = 64 * 40 * 10 - 1  # not one plane: some rows along the middle dimension
    assert plan_band(shard, inner, fits, "colexicographic") == (64, 32, 10)
    region = (slice(0, 8), slice(0, 6))
    assert bands(region, (0, 0), (4, 3), (8, 3), "colexicographic") == [
        (slice(0, 8), slice(0, 3)), (slice(0, 8), slice(3, 6))]
    with pytest.raises(ValueError, match=r"do not follow the Fortran order of inner chunks of shape \(4, 3\)"):
        bands(region, (0, 0), (4, 3), (4, 6), "colexicographic")


def test_morton_bands_are_aligned_cubes_in_z_order():
    shard, inner = (32, 24), (4, 3)  # 8 x 8 inner chunks

    def fits(band):
        return np.prod(band) <= limit

    limit = 4 * 3 * 4  # 2 x 2 inner chunks
    assert plan_band(shard, inner, fits, "morton") == (8, 6)
    limit = 4 * 3 * 15
    assert plan_band(shard, inner, fits, "morton") == (8, 6)
    limit = 4 * 3 * 16
    assert plan_band(shard, inner, fits, "morton") == (16, 12)
    limit = 10**9
    assert plan_band(shard, inner, fits, "morton") == shard
    limit = 11
    assert plan_band(shard, inner, fits, "morton") is None
    assert plan_band((8, 24), (4, 3), lambda b: np.prod(b) <= 4 * 3 * 15, "morton") == (8, 12)  # 2 x 4: clipped
    region = (slice(0, 16), slice(0, 12))
    assert bands(region, (0, 0), (4, 3), (8, 6), "morton") == [
        (slice(0, 8), slice(0, 6)), (slice(8, 16), slice(0, 6)), (slice(0, 8), slice(6, 12)),
        (slice(8, 16), slice(6, 12))]


def test_a_reopened_array_streams_in_the_order_it_is_opened_with(tmp_path, holds):
    path = str(tmp_path / "a.zarr")
    data = _data()
    a = zarrpy.create_array(path, shape=SHAPE, dtype="uint16", chunks=INNER, shards=SHARD, compressors=ZSTD,
                            fill_value=0, subchunk_write_order="morton")
    a[...] = data
    b = zarrpy.open_array(path, mode="r+", subchunk_write_order="morton")
    before = _stored(a)
    band = array_plan_band(b, lambda s: math.prod(s) <= 48)
    write_shard(b, (1, 1), lambda r: data[r], band=band)
    assert _stored(b) == before and holds == []
    c = zarrpy.open_array(path, mode="r+")  # the default: lexicographic
    assert c.subchunk_write_order == "lexicographic"
    write_shard(c, (1, 1), lambda r: data[r])
    assert c.store.get("c/1/1") != before["c/1/1"]
    assert np.array_equal(c[...], data)
