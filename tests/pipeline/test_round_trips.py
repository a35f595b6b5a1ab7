"""Sequential round trips and requests of reads over a store with latency.

Every test writes its arrays with zarrpy (uint16, zstd) into a MemoryStore,
then reads them through a :class:`~tests.wave_store.WaveStore` that waits
:data:`LATENCY` per call and reports ``whole_read_nbytes = 0``, as a remote
store does. A *wave* is one sequential round trip: the store's longest chain
of calls each starting after the previous one ended. What the read path
promises (DESIGN.md, "Remote stores: round trips, requests and versions"):

- open = one request (``zarr.json``); the V2 documents only when it is
  missing (then 2 waves) or when ``zarr_format=2`` is given; members of a
  group with consolidated metadata open with no request;
- a plain region read = 1 wave after open; a sharded one = 2 (the indexes
  it lacks as suffix reads, then the coalesced inner-chunk ranges), with no
  size request for the shard's length;
- shard indexes are kept between reads on one handle (a repeated read into a
  shard = 1 wave), and never stale: a shard rewritten by another handle is
  read with its new index;
- many arrays at once: ``zarrpy.open_arrays`` opens 40 arrays in 1 wave,
  ``zarrpy.concat`` reads them in at most 3 with the open, and a group
  without consolidated metadata answers ``members()`` in one wave after its
  listing.

Every read is also checked against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import zarrpy
from tests.wave_store import HEAD_KINDS, READ_KINDS, WaveStore
from zarrpy.cache import Cache
from zarrpy.core.byte_range import SuffixRequest
from zarrpy.stores import MemoryStore

LATENCY = 0.03
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
V2_DOCUMENTS = {".zarray", ".zattrs", ".zgroup"}


def _data(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """uint16 values that compress a little (so chunk sizes differ)."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 64, size=shape) * np.arange(1, shape[-1] + 1)).astype("uint16")


def _write(store, data: np.ndarray, *, path: str | None = None, chunks, shards=None, zarr_format: int = 3):
    a = zarrpy.create_array(store, name=path, shape=data.shape, dtype="uint16", chunks=chunks, shards=shards,
                            compressors=[ZSTD], fill_value=0, zarr_format=zarr_format)
    a[...] = data
    return a


def _remote(inner: MemoryStore, latency: float = LATENCY) -> WaveStore:
    return WaveStore(inner, latency=latency)


MANY_LATENCY = 0.1
"""For the reads of 40 arrays at once: 40 threads take a few ms to start
and to plan their reads under the GIL (more on a loaded machine), which must
stay well below one round trip for the waves to be counted right."""


def _names(requests) -> list[str]:
    return sorted(r.key.rsplit("/", 1)[-1] for r in requests)


# -- opening ------------------------------------------------------------------


def test_opening_a_v3_array_is_one_request_for_zarr_json():
    inner = MemoryStore()
    data = _data((20, 30))
    _write(inner, data, path="x", chunks=(10, 10))
    ws = _remote(inner)
    a = zarrpy.open_array(ws, path="x", mode="r")
    assert ws.keys() == ["x/zarr.json"]
    assert ws.requests == 1 and ws.waves == 1
    np.testing.assert_array_equal(a[...], data)


def test_opening_a_v3_group_is_one_request_for_zarr_json():
    inner = MemoryStore()
    root = zarrpy.create_group(inner, attributes={"title": "t"})
    data = _data((8, 8))
    _write(inner, data, path="x", chunks=(4, 4))
    ws = _remote(inner)
    g = zarrpy.open_group(ws, mode="r")
    assert ws.keys() == ["zarr.json"] and ws.requests == 1 and ws.waves == 1
    assert g.attrs["title"] == "t"
    np.testing.assert_array_equal(g["x"][...], data)


def test_opening_a_v2_array_asks_for_zarr_json_then_the_v2_documents():
    inner = MemoryStore()
    data = _data((20, 30))
    _write(inner, data, path="old", chunks=(10, 10), zarr_format=2)
    ws = _remote(inner)
    a = zarrpy.open_array(ws, path="old", mode="r")
    assert a.metadata.zarr_format == 2
    first, *rest = ws.wave_list()
    assert [r.key for r in first] == ["old/zarr.json"]  # V3 first, alone
    assert len(rest) == 1 and ".zarray" in _names(rest[0]) and set(_names(rest[0])) <= V2_DOCUMENTS
    assert ws.waves == 2
    np.testing.assert_array_equal(a[...], data)


def test_opening_with_zarr_format_2_asks_only_for_the_v2_documents():
    inner = MemoryStore()
    data = _data((20, 30))
    _write(inner, data, chunks=(10, 10), zarr_format=2)
    ws = _remote(inner)
    a = zarrpy.open_array(ws, mode="r", zarr_format=2)
    assert ".zarray" in _names(ws.requests_of()) and set(_names(ws.requests_of())) <= V2_DOCUMENTS
    assert ws.waves == 1
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_members_of_a_consolidated_group_open_with_no_request(zarr_format):
    inner = MemoryStore()
    root = zarrpy.create_group(inner, zarr_format=zarr_format)
    arrays = {f"a{i}": _data((6, 5), seed=i) for i in range(3)}
    for name, data in arrays.items():
        _write(inner, data, path=name, chunks=(3, 5), zarr_format=zarr_format)
    zarrpy.consolidate_metadata(inner)
    ws = _remote(inner)
    g = zarrpy.open_group(ws, mode="r")
    ws.reset()
    members = {name: g[name] for name in arrays}
    assert ws.requests == 0
    for name, data in arrays.items():
        np.testing.assert_array_equal(members[name][...], data)


# -- one read -------------------------------------------------------------------


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
def test_a_plain_region_over_several_chunks_is_one_wave(cache):
    inner = MemoryStore()
    data = _data((200, 200))
    _write(inner, data, chunks=(50, 50))
    ws = _remote(inner)
    a = zarrpy.open_array(ws, mode="r", cache=Cache(1 << 24) if cache else None)
    ws.reset()
    np.testing.assert_array_equal(a[23:123, 17:117], data[23:123, 17:117])
    assert ws.waves == 1
    assert len(set(ws.keys(*READ_KINDS))) == 9 and not ws.requests_of(*HEAD_KINDS)
    if cache:  # again: every chunk from the cache
        ws.reset()
        np.testing.assert_array_equal(a[23:123, 17:117], data[23:123, 17:117])
        assert ws.requests == 0


def test_a_sharded_region_over_four_shards_is_two_waves():
    inner = MemoryStore()
    data = _data((128, 128))
    _write(inner, data, chunks=(16, 16), shards=(64, 64))
    ws = _remote(inner)
    a = zarrpy.open_array(ws, mode="r")
    ws.reset()
    np.testing.assert_array_equal(a[40:90, 35:95], data[40:90, 35:95])
    assert not ws.requests_of(*HEAD_KINDS)  # the shard's length comes with its index
    assert ws.waves <= 2, ws.wave_list()
    reads = ws.requests_of()
    assert all(r.kind in READ_KINDS for r in reads)
    assert {r.key for r in reads} == {"c/0/0", "c/0/1", "c/1/0", "c/1/1"}
    indexes = [r for r in reads if isinstance(r.range, SuffixRequest)]  # the index sits at the end
    assert len(indexes) <= 4 and len(reads) - len(indexes) <= 4  # one coalesced range per shard


# -- shard indexes kept between reads ---------------------------------------------


def _inner_chunk_reads() -> list[tuple[int, int]]:
    """40 (row, column) inner chunks of a 4 x 4 grid of shards of 4 x 4
    inner chunks: shard i % 16 at read i, so reads 0-15 meet each shard
    first, reads 16-39 meet shards read before."""
    reads = []
    for i in range(40):
        shard, n = i % 16, i // 16
        reads.append(((shard // 4) * 4 + n, (shard % 4) * 4 + (n * 3 + 1) % 4))
    return reads


@pytest.mark.parametrize("cache", [None, "central"])
def test_forty_inner_chunk_reads_in_sixteen_shards_reuse_the_indexes(cache):
    inner = MemoryStore()
    data = _data((256, 256))
    _write(inner, data, chunks=(16, 16), shards=(64, 64))
    ws = _remote(inner)
    a = zarrpy.open_array(ws, mode="r", cache=Cache(1 << 20) if cache else None)
    waves = []
    for row, col in _inner_chunk_reads():
        ws.reset()
        box = np.s_[row * 16 + 2 : row * 16 + 14, col * 16 : col * 16 + 16]  # inside one inner chunk
        np.testing.assert_array_equal(a[box], data[box])
        assert not ws.requests_of(*HEAD_KINDS)
        waves.append(ws.waves)
    assert sum(waves) <= 40 + 16, waves
    assert waves[16:] == [1] * 24, waves  # the shard's index is known: only the inner chunk is asked
    row, col = _inner_chunk_reads()[-1]
    ws.reset()
    box = np.s_[row * 16 : row * 16 + 16, col * 16 + 3 : col * 16 + 9]
    np.testing.assert_array_equal(a[box], data[box])
    assert ws.waves <= 1  # the same inner chunk again (0 when the central cache holds it decoded)


@pytest.mark.parametrize("cache", [None, "central"])
def test_a_shard_rewritten_by_another_handle_is_read_with_its_new_index(cache):
    shared: dict[str, bytes] = {}
    inner = MemoryStore(shared)
    old = _data((64, 64))
    old[:32] = 0  # the top inner chunks are fill: left out of the shard
    _write(inner, old, chunks=(16, 16), shards=(64, 64))
    ws = _remote(inner)
    a = zarrpy.open_array(ws, mode="r", cache=Cache(1 << 20) if cache else None)
    bottom, top = np.s_[40:60, 5:50], np.s_[3:30, 5:50]
    np.testing.assert_array_equal(a[bottom], old[bottom])
    np.testing.assert_array_equal(a[bottom], old[bottom])  # the shard's index is held now
    before = inner.get("c/0/0")

    new = _data((64, 64), seed=7)
    new[32:] = 0  # now the bottom is fill: every inner chunk stored moved
    b = zarrpy.open_array(MemoryStore(shared), mode="r+")  # another handle on the same data
    b[...] = new
    assert inner.get("c/0/0") != before

    # The old index says the top inner chunks are missing (fill); the new one has them.
    np.testing.assert_array_equal(a[top], new[top])
    np.testing.assert_array_equal(a[top], new[top])
    if cache is None:  # (decoded chunks in a Cache do not see writes through other handles: docs/guide/lazy-arrays.md)
        np.testing.assert_array_equal(a[bottom], new[bottom])
        np.testing.assert_array_equal(a[...], new)


# -- many arrays ---------------------------------------------------------------------


def _forty(inner: MemoryStore) -> tuple[list[str], list[np.ndarray]]:
    paths, arrays = [], []
    for i in range(40):
        data = _data((6, 4), seed=i)
        _write(inner, data, path=f"part{i:02d}", chunks=(3, 4))
        paths.append(f"part{i:02d}")
        arrays.append(data)
    return paths, arrays


def test_open_arrays_opens_forty_arrays_in_one_wave():
    inner = MemoryStore()
    paths, arrays = _forty(inner)
    ws = _remote(inner, MANY_LATENCY)
    opened = zarrpy.open_arrays(paths, store=ws, mode="r")
    assert ws.waves == 1
    assert sorted(ws.keys()) == [f"{p}/zarr.json" for p in paths]  # one request each, zarr.json only
    assert [a.path for a in opened] == paths
    ws.latency = 0.0  # the checks below need no round trips counted
    for a, data in zip(opened, arrays):
        np.testing.assert_array_equal(a[...], data)


def test_concat_of_forty_arrays_is_at_most_three_waves_with_the_open():
    inner = MemoryStore()
    paths, arrays = _forty(inner)
    ws = _remote(inner, MANY_LATENCY)
    got = zarrpy.concat(zarrpy.open_arrays(paths, store=ws, mode="r"))
    np.testing.assert_array_equal(np.asarray(got.nda), np.concatenate(arrays))
    assert ws.waves <= 3, ws.wave_list()


def test_concat_reads_the_chunks_of_all_its_arrays_together():
    inner = MemoryStore()
    paths, arrays = _forty(inner)
    ws = _remote(inner, MANY_LATENCY)
    opened = zarrpy.open_arrays(paths, store=ws, mode="r")
    ws.reset()
    got = zarrpy.concat(opened)
    np.testing.assert_array_equal(np.asarray(got.nda), np.concatenate(arrays))
    assert ws.waves <= 2, ws.wave_list()
    keys = ws.keys(*READ_KINDS)
    assert len(keys) == len(set(keys)) == 80  # every chunk, once


@pytest.mark.parametrize("which", ["members", "arrays"])
def test_members_of_a_group_without_consolidated_metadata_come_in_one_wave_after_the_listing(which):
    inner = MemoryStore()
    root = zarrpy.create_group(inner)
    arrays = {f"a{i}": _data((6, 5), seed=i) for i in range(12)}
    for name, data in arrays.items():
        _write(inner, data, path=name, chunks=(3, 5))
    ws = _remote(inner)
    g = zarrpy.open_group(ws, mode="r")
    assert g.consolidated_metadata is None
    ws.reset()
    members = dict(getattr(g, which)())
    listing, metadata = ws.wave_list()
    assert {r.kind for r in listing} == {"list"}
    assert {f"{name}/zarr.json" for name in arrays} <= {r.key for r in metadata}
    assert ws.waves == 2
    assert sorted(members) == sorted(arrays)
    for name, data in arrays.items():
        np.testing.assert_array_equal(members[name][...], data)
