"""What composable partial decoders save, measured at the array API.

Each test counts the store traffic (:class:`CountingStore` from
``tests/test_array_sharding.py``: a ``get`` or a ``get_partial_values`` call
is one request; bytes returned are summed) of a small read and compares the
result with numpy:

- a region of an uncompressed (``bytes``-only) chunk reads only the bytes of
  the elements asked for;
- one inner chunk of a shard whose chain ends in ``crc32c`` costs at most two
  requests (the index, then the inner chunk: crc32c passes ranges through);
- nested shards read sub-chunk ranges: never a whole inner shard;
- checksums stay checked where a value is small enough to read whole.
"""

from __future__ import annotations

import numpy as np
import pytest

import zarrpy
from tests.test_array_sharding import CountingStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}
CRC = {"name": "crc32c"}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}


def _data(shape, dtype="int32"):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) + 1


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize(
    "selection",
    [np.s_[3:5, 10:20], np.s_[7, :], np.s_[0:4, 63], np.s_[5, 7], np.s_[60:64:2, 1:63:20]],
    ids=["block", "row", "column", "element", "strided"],
)
def test_a_region_of_an_uncompressed_chunk_reads_only_its_bytes(endian, selection):
    store = CountingStore()
    data = _data((64, 64))
    a = zarrpy.create_array(store, shape=(64, 64), dtype="int32", chunks=(64, 64),
                            serializer={"name": "bytes", "configuration": {"endian": endian}}, compressors=None)
    a[...] = data
    store.reset()
    got = a[selection]
    np.testing.assert_array_equal(got, data[selection])
    assert store.nbytes == np.asarray(data[selection]).size * 4  # exactly the elements' bytes
    assert store.requests == 1  # the ranges go out in one batched call


def test_most_of_an_uncompressed_chunk_is_read_whole():
    store = CountingStore()
    data = _data((64, 64))
    a = zarrpy.create_array(store, shape=(64, 64), dtype="int32", chunks=(64, 64), compressors=None)
    a[...] = data
    store.reset()
    np.testing.assert_array_equal(a[:, :40], data[:, :40])
    assert store.nbytes == 64 * 64 * 4 and store.requests == 1


@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize("inner", [[LE], [LE, ZSTD]], ids=["bytes", "zstd"])
def test_one_inner_chunk_of_a_shard_followed_by_crc32c_costs_two_requests(location, inner):
    store = CountingStore()
    data = _data((32, 32), "uint16")
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [8, 8], "codecs": inner, "index_location": location}}
    a = zarrpy.create_array(store, shape=(32, 32), dtype="uint16", chunks=(32, 32),
                            serializer=sharding, compressors=[CRC])
    a[...] = data
    shard_nbytes = len(store.raw("c/0/0"))
    for selection in (np.s_[8:16, 16:24], np.s_[9, 17], np.s_[8:10, 16:24]):
        store.reset()
        np.testing.assert_array_equal(a[selection], data[selection])
        assert store.requests <= 2
        assert store.nbytes < shard_nbytes // 4


def test_a_shard_followed_by_crc32c_is_still_checked_on_whole_reads():
    store = CountingStore()
    sharding = {"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8], "codecs": [LE]}}
    a = zarrpy.create_array(store, shape=(32, 32), dtype="uint16", chunks=(32, 32),
                            serializer=sharding, compressors=[CRC])
    a[...] = _data((32, 32), "uint16")
    raw = bytearray(store.raw("c/0/0"))
    raw[0] ^= 0xFF
    store.put("c/0/0", bytes(raw))
    with pytest.raises(zarrpy.ChecksumError, match="c/0/0"):
        a[...]


def test_crc32c_of_a_plain_chunk_is_checked_on_small_reads_too():
    """A chunk small enough to read whole is read whole when a partial read
    would skip its checksum."""
    store = CountingStore()
    a = zarrpy.create_array(store, shape=(16, 16), dtype="int32", chunks=(16, 16), compressors=[CRC])
    a[...] = _data((16, 16))
    raw = bytearray(store.raw("c/0/0"))
    raw[-20] ^= 0xFF  # far from element (0, 0)
    store.put("c/0/0", bytes(raw))
    with pytest.raises(zarrpy.ChecksumError, match="c/0/0"):
        a[0, 0]


def test_inner_chunks_with_crc32c_are_read_whole_and_checked():
    store = CountingStore()
    sharding = {"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8], "codecs": [LE, CRC]}}
    a = zarrpy.create_array(store, shape=(16, 16), dtype="int32", chunks=(16, 16), serializer=sharding,
                            compressors=None)
    a[...] = _data((16, 16))
    raw = bytearray(store.raw("c/0/0"))
    raw[8 * 8 * 4 - 8] ^= 0xFF  # inside inner chunk (0, 0), far from its element (0, 0)
    store.put("c/0/0", bytes(raw))
    with pytest.raises(zarrpy.ChecksumError, match="c/0/0"):
        a[0, 0]


@pytest.mark.parametrize("location", ["start", "end"])
def test_nested_shards_read_sub_chunk_ranges(location):
    store = CountingStore()
    data = _data((64, 64), "uint16")
    inner_shard = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 4], "codecs": [LE], "index_location": location}}
    outer = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [16, 16], "codecs": [inner_shard], "index_location": location}}
    a = zarrpy.create_array(store, shape=(64, 64), dtype="uint16", chunks=(64, 64), serializer=outer,
                            compressors=None)
    a[...] = data
    inner_shard_nbytes = 16 * 16 * 2 + (4 * 4) * 16 + 4  # data + its index
    # One element: the outer index (a suffix read that tells the shard's length),
    # the inner shard's index (its length is its index entry's), and the
    # element's 2 bytes; no size request.
    store.reset()
    assert a[21, 37] == data[21, 37]
    outer_index = 16 * 16 + 4
    inner_index = 16 * 16 + 4
    assert store.nbytes == outer_index + inner_index + 2
    assert store.requests == 3 and not store.sizes
    # A small block inside one inner shard: still far less than that inner shard.
    store.reset()
    np.testing.assert_array_equal(a[17:19, 33:35], data[17:19, 33:35])
    assert store.nbytes - outer_index - inner_index < inner_shard_nbytes // 8


def test_stores_where_bytes_are_cheap_read_small_chunks_whole():
    """A store's ``whole_read_nbytes`` (local files, memory: 1 MiB) says below
    which size a second request costs more than the bytes it saves."""
    store = CountingStore()
    store.whole_read_nbytes = 64 * 64 * 4  # the chunk's size
    data = _data((64, 64))
    a = zarrpy.create_array(store, shape=(64, 64), dtype="int32", chunks=(64, 64), compressors=None)
    a[...] = data
    store.reset()
    np.testing.assert_array_equal(a[3:5, 10:20], data[3:5, 10:20])
    assert store.nbytes == 64 * 64 * 4 and store.requests == 1
    store.whole_read_nbytes = 64 * 64 * 4 - 1
    store.reset()
    np.testing.assert_array_equal(a[3:5, 10:20], data[3:5, 10:20])
    assert store.nbytes == 2 * 10 * 4


def test_local_and_memory_stores_read_chunks_up_to_a_mib_whole():
    from zarrpy.stores.local import LocalStore
    from zarrpy.stores.memory import MemoryStore
    from zarrpy.stores.zip import ZipStore

    assert LocalStore.whole_read_nbytes == MemoryStore.whole_read_nbytes == ZipStore.whole_read_nbytes == 1 << 20
    assert CountingStore.whole_read_nbytes == 0  # like a remote store: bytes cost
