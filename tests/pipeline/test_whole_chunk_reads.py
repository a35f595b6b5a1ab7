"""Property tests of the read fast paths against numpy.

Whole chunks are decoded into per-thread scratch buffers, or straight into
the output when a chunk fills a box of it (contiguous or strided), and whole
shards inner chunk by inner chunk into their place. These tests build
compressed, checksummed, byte-swapped and sharded arrays with random shapes
(edge chunks, missing chunks), read them whole, by region, with steps and
into caller buffers (strided views included), on memory and local stores,
and compare bit for bit with numpy.
"""

from __future__ import annotations

import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.stores import LocalStore, MemoryStore

SETTINGS = settings(
    max_examples=60, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

COMPRESSORS = {
    "zstd": [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
    "zstd-checksum": [{"name": "zstd", "configuration": {"level": 1, "checksum": True}}],
    "blosc": [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3, "shuffle": "bitshuffle", "blocksize": 0}}],
    "gzip": [{"name": "gzip", "configuration": {"level": 1}}],
    "zstd+crc32c": [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}, {"name": "crc32c"}],
    "none": None,
}
DTYPES = ["uint16", "int32", "float64", "bool", "complex64", "uint8"]


@st.composite
def stored_arrays(draw):
    ndim = draw(st.integers(1, 3))
    chunks = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    shape = tuple(draw(st.integers(0, 3 * c + 2)) for c in chunks)
    shards = None
    if draw(st.booleans()):
        shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    dtype = draw(st.sampled_from(DTYPES))
    endian = draw(st.sampled_from(["little", "big"])) if np.dtype(dtype).itemsize > 1 else None
    compressor = draw(st.sampled_from(sorted(COMPRESSORS)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    fill = np.array(3, dtype=dtype)[()]
    ref = np.full(shape, fill, dtype=dtype)
    written = tuple(slice(0, draw(st.integers(0, n))) for n in shape)  # the rest stays fill (missing chunks)
    ref[written] = (rng.integers(0, 200, size=ref[written].shape) + 1j * (dtype == "complex64")).astype(dtype) \
        if dtype == "complex64" else rng.integers(0, 2 if dtype == "bool" else 200, size=ref[written].shape).astype(dtype)
    return dict(shape=shape, chunks=chunks, shards=shards, dtype=dtype, fill=fill,
                serializer={"name": "bytes", "configuration": {"endian": endian}} if endian else {"name": "bytes"},
                compressors=COMPRESSORS[compressor]), ref, written


def build(store, params, ref, written):
    a = zarrpy.create_array(store, shape=params["shape"], chunks=params["chunks"], shards=params["shards"],
                            dtype=params["dtype"], fill_value=params["fill"], serializer=params["serializer"],
                            compressors=params["compressors"])
    a[written] = ref[written]
    return a


def regions(shape):
    """Slices per dimension: whole, a box that cuts chunks, and a stepped one."""
    return st.tuples(*[
        st.one_of(
            st.just(slice(None)),
            st.builds(lambda lo, ln: slice(lo, lo + ln), st.integers(0, n), st.integers(0, n)),
            st.builds(slice, st.none(), st.none(), st.integers(2, 3)),
        )
        for n in shape
    ])


@pytest.mark.parametrize("store_kind", ["memory", "local"])
@given(case=stored_arrays(), data=st.data())
@SETTINGS
def test_reads_match_numpy(store_kind, case, data):
    params, ref, written = case
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore() if store_kind == "memory" else LocalStore(tmp)
        a = build(store, params, ref, written)
        b = zarrpy.open_array(store, mode="r")  # a fresh open reads what the store holds
        whole = b[...]
        assert whole.dtype == ref.dtype and whole.tobytes() == ref.tobytes()
        sel = data.draw(regions(ref.shape))
        got = b[sel]
        np.testing.assert_array_equal(got, ref[sel])
        assert got.tobytes() == np.ascontiguousarray(ref[sel]).tobytes()
        # into a caller's buffer: a strided view of a bigger array, its margins untouched
        expected = ref[sel]
        host = np.zeros(tuple(2 * n + 1 for n in expected.shape), dtype=ref.dtype)
        view = host[(slice(1, None, 2),) * expected.ndim]
        b.read(sel, out=view)
        np.testing.assert_array_equal(view, expected)
        mask = np.ones(host.shape, bool)
        mask[(slice(1, None, 2),) * expected.ndim] = False
        assert not host[mask].any()
        del a


@given(case=stored_arrays())
@SETTINGS
def test_concurrent_whole_reads_do_not_share_scratch(case):
    """Many threads reading at once each get their own scratch buffers."""
    from concurrent.futures import ThreadPoolExecutor

    params, ref, written = case
    a = build(MemoryStore(), params, ref, written)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: a[...], range(8)))
    for got in results:
        assert got.tobytes() == ref.tobytes()


def test_a_corrupt_chunk_in_a_whole_read_names_its_key():
    store = MemoryStore()
    a = zarrpy.create_array(store, shape=(8, 8), chunks=(4, 4), dtype="uint16",
                            compressors=COMPRESSORS["zstd"])
    a[...] = np.arange(64, dtype="uint16").reshape(8, 8)
    key = "c/1/0"
    store.set(key, b"\x00" * 9)
    with pytest.raises(zarrpy.errors.ChunkDecodeError, match="c/1/0"):
        zarrpy.open_array(store, mode="r")[...]


def test_a_corrupt_inner_chunk_in_a_whole_shard_read_names_shard_and_inner_chunk():
    store = MemoryStore()
    a = zarrpy.create_array(store, shape=(8, 8), chunks=(4, 4), shards=(8, 8), dtype="uint16",
                            compressors=COMPRESSORS["zstd-checksum"])
    a[...] = np.arange(64, dtype="uint16").reshape(8, 8) + 1
    shard = bytearray(store.get("c/0/0"))
    shard[0] ^= 0xFF
    store.set("c/0/0", bytes(shard))
    with pytest.raises(zarrpy.errors.ChunkDecodeError, match=r"c/0/0.*inner chunk \(0, 0\)|inner chunk \(0, 0\).*c/0/0"):
        zarrpy.open_array(store, mode="r")[...]


@pytest.mark.parametrize("compressor", ["zstd", "none", "zstd+crc32c"])
def test_shard_regions_decode_into_the_output(compressor):
    """Regions of shards: whole inner chunks decoded straight into the
    output, cut ones through scratch (or, bytes-only, by range), missing
    ones filled; orthogonal index arrays fall back to the assembling path."""
    ref = (np.arange(24 * 20, dtype="int32").reshape(24, 20) * 7) % 1000
    store = MemoryStore()
    a = zarrpy.create_array(store, shape=ref.shape, chunks=(4, 5), shards=(12, 10), dtype="int32",
                            fill_value=-1, compressors=COMPRESSORS[compressor])
    a[...] = ref
    a[12:16, 0:5] = -1  # an all-fill inner chunk: left out of its shard
    ref[12:16, 0:5] = -1
    b = zarrpy.open_array(store, mode="r")
    for sel in [(slice(4, 8), slice(5, 10)),        # exactly one inner chunk
                (slice(2, 19), slice(3, 17)),       # whole and cut inner chunks, several shards
                (slice(12, 16), slice(0, 10)),      # a missing inner chunk and a stored one
                (slice(1, 2), slice(None)),         # one row
                (5, slice(None, None, 3))]:         # an integer and a step
        np.testing.assert_array_equal(b[sel], ref[sel])
    rows, cols = np.array([0, 5, 13, 23]), np.array([19, 2, 7])
    np.testing.assert_array_equal(b.oindex[rows, cols], ref[np.ix_(rows, cols)])
    out = np.zeros((8, 10), "int32")
    b.read((slice(4, 12), slice(0, 10)), out=out)
    np.testing.assert_array_equal(out, ref[4:12, 0:10])


@pytest.mark.parametrize("sel", [(slice(1, 7), slice(0, 8)), (slice(0, 4), slice(0, 4)), (slice(2, 3), slice(1, 2))],
                         ids=["cut", "one-inner-chunk", "one-element"])
def test_a_corrupt_inner_chunk_in_a_region_read_names_shard_and_inner_chunk(sel):
    store = MemoryStore()
    a = zarrpy.create_array(store, shape=(16, 16), chunks=(4, 4), shards=(8, 8), dtype="uint16",
                            compressors=COMPRESSORS["zstd"])
    a[...] = np.arange(256, dtype="uint16").reshape(16, 16) + 1
    shard = bytearray(store.get("c/0/0"))
    shard[0] ^= 0xFF  # the first inner chunk's frame magic (the index is at the end)
    store.set("c/0/0", bytes(shard))
    with pytest.raises(zarrpy.errors.ChunkDecodeError, match=r"inner chunk \(0, 0\)") as info:
        zarrpy.open_array(store, mode="r")[sel]
    assert "c/0/0" in str(info.value)
    np.testing.assert_array_equal(zarrpy.open_array(store, mode="r")[8:, 8:], a[8:, 8:])  # other shards read


def test_small_reads_stay_in_the_calling_thread_large_ones_use_the_pool(monkeypatch):
    import threading

    from zarrpy.pipeline import chunk_io

    store = MemoryStore()
    a = zarrpy.create_array(store, shape=(64, 64), chunks=(16, 16), dtype="uint16", compressors=COMPRESSORS["zstd"])
    ref = np.arange(64 * 64, dtype="uint16").reshape(64, 64)
    a[...] = ref
    threads: set[str] = set()
    real = chunk_io.ChunkIO._scatter_whole

    def spy(self, *args, **kwargs):
        threads.add(threading.current_thread().name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(chunk_io.ChunkIO, "_scatter_whole", spy)
    np.testing.assert_array_equal(a[...], ref)  # 16 chunks of 512 bytes: below INLINE_READ_NBYTES
    assert threads == {threading.current_thread().name}
    threads.clear()
    monkeypatch.setattr(chunk_io, "INLINE_READ_NBYTES", 0)
    monkeypatch.setenv("ZARRPY_THREADS", "2")
    np.testing.assert_array_equal(a[...], ref)
    assert threads and threading.current_thread().name not in threads  # the pool's threads did it


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_a_shard_needed_in_every_inner_chunk_but_not_whole_decodes_no_whole_shard(kind, monkeypatch, tmp_path):
    """Such a shard is fetched whole (one request, not its index and then
    its chunks) and decoded through its partial decoder over those bytes:
    inner chunks inside the region straight into the result, the edges
    through scratch, a missing one as fill; never the whole shard into an
    array of its own."""
    from zarrpy.codecs.sharding.codec import ShardingCodec

    store = MemoryStore() if kind == "memory" else LocalStore(str(tmp_path / "a.zarr"))
    data = np.arange(64 * 64, dtype="int32").reshape(64, 64)
    data[0:8, 8:16] = 7  # one inner chunk all fill: not stored
    a = zarrpy.create_array(store, shape=data.shape, dtype="int32", chunks=(8, 8), shards=(32, 32), fill_value=7,
                            compressors=COMPRESSORS["zstd"])
    a[...] = data

    def no_whole_decode(*args, **kwargs):
        raise AssertionError("the whole shard was decoded")

    monkeypatch.setattr(ShardingCodec, "decode", no_whole_decode)
    region = (slice(3, 45), slice(1, 30))  # every inner chunk of shard (0, 0), not all of it
    np.testing.assert_array_equal(zarrpy.open_array(store, mode="r")[region], data[region])
