"""The staged shard-read planner (``zarrpy.pipeline.shard_reads``) at its edges:
shards that change under every read, shards deleted between reads, stores
that tell no versions, hostile indexes checked against the length the
suffix read returned, and reads bounded in what they hold at once."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import zarrpy
from zarrpy.core.byte_range import ObjectRead, VersionedRequest
from zarrpy.errors import ChunkDecodeError, StoreError
from zarrpy.pipeline import chunk_io, shard_reads
from zarrpy.stores.abc import Store
from zarrpy.stores.memory import MemoryStore

from tests.test_array_sharding import CountingStore

ZSTD = {"name": "zstd", "configuration": {"level": 1}}


def _sharded(store: Store, shape=(64, 64)) -> tuple[zarrpy.Array, np.ndarray]:
    a = zarrpy.create_array(store, shape=shape, dtype="uint16", chunks=(8, 8), shards=(32, 32), compressors=[ZSTD])
    data = np.random.default_rng(3).integers(1, 60000, size=shape).astype("uint16")
    a[...] = data
    return a, data


class ChangingStore(CountingStore):
    """Rewrites shard ``c/0/0`` (the same bytes, as a new value: a new
    version) right after every versioned read of it: no plan of it ever
    meets the same version twice."""

    def __init__(self) -> None:
        super().__init__()
        self.rewrites = 0
        self.armed = False

    def get_versioned(self, requests):
        out = super().get_versioned(requests)
        if self.armed and any(r.key == "c/0/0" for r in requests):
            self.rewrites += 1
            self.put("c/0/0", bytes(bytearray(self.raw("c/0/0"))))  # a new bytes object: a new version
        return out


def test_a_shard_that_changes_under_every_read_gives_up_with_a_store_error_naming_it():
    store = ChangingStore()
    a, _ = _sharded(store)
    store.armed = True
    with pytest.raises(StoreError, match=r"c/0/0.*changed during each of 4 reads"):
        a[0:10, 0:10]
    assert store.rewrites == shard_reads.MAX_ATTEMPTS * 2  # an index and a ranges read per attempt


def test_a_shard_that_changes_once_is_read_again_and_the_data_is_the_new_one():
    store = CountingStore()
    a, data = _sharded(store)
    np.testing.assert_array_equal(a[0:10, 0:10], data[0:10, 0:10])  # index kept
    other = zarrpy.open_array(store, mode="r+")
    other[0:32, 0:32] = 5
    store.reset()
    np.testing.assert_array_equal(a[0:10, 0:10], 5)
    # the conditional read found a new version: the index again, then the inner chunk
    assert store.requests == 3 and not store.sizes


def test_a_write_through_the_handle_drops_its_kept_index():
    store = CountingStore()
    a, data = _sharded(store)
    a = zarrpy.open_array(store, mode="r+")
    np.testing.assert_array_equal(a[0:10, 0:10], data[0:10, 0:10])  # index kept
    store.reset()
    np.testing.assert_array_equal(a[0:10, 0:10], data[0:10, 0:10])
    assert store.requests == 1  # the inner chunks only, on the kept index's version
    a[0:4, 0:4] = 3  # rewrites shard c/0/0: its kept index is dropped
    data[0:4, 0:4] = 3
    store.reset()
    np.testing.assert_array_equal(a[0:10, 0:10], data[0:10, 0:10])
    # the index again (no failed condition first), then the inner chunks
    assert store.requests == 2 and store.reads_of("c/0/0") == 2 and not store.sizes


def test_a_shard_deleted_since_its_index_was_kept_reads_as_fill():
    store = CountingStore()
    a, data = _sharded(store)
    np.testing.assert_array_equal(a[0:10, 0:10], data[0:10, 0:10])
    zarrpy.open_array(store, mode="r+")[0:32, 0:32] = 0  # all fill: the shard is deleted
    assert store.raw("c/0/0") is None
    expected = data.copy()
    expected[0:32, 0:32] = 0
    np.testing.assert_array_equal(a[0:10, 0:10], 0)
    np.testing.assert_array_equal(a[30:40, 30:40], expected[30:40, 30:40])


class UnversionedStore(Store):
    """A store with only the required methods: ``get_versioned`` is the
    default (a size request, then the read; no versions)."""

    def __init__(self) -> None:
        self.inner = MemoryStore()
        self.sizes = 0

    def get(self, key, byte_range=None):
        return self.inner.get(key, byte_range)

    def getsize(self, key):
        self.sizes += 1
        return self.inner.getsize(key)

    def _set(self, key, value):
        self.inner.set(key, value)

    def _delete(self, key):
        self.inner.delete(key)

    def list_prefix(self, prefix):
        return self.inner.list_prefix(prefix)


def test_a_store_that_tells_no_versions_keeps_no_index_and_reads_right_after_a_rewrite():
    store = UnversionedStore()
    a, data = _sharded(store)
    np.testing.assert_array_equal(a[0:10, 0:10], data[0:10, 0:10])
    first = store.sizes
    assert first == 1  # the default get_versioned asks the size: the one place a size request remains
    np.testing.assert_array_equal(a[0:10, 0:10], data[0:10, 0:10])
    assert store.sizes == 2 * first  # nothing kept: the index is read again
    zarrpy.open_array(store, mode="r+")[0:32, 0:32] = 9
    np.testing.assert_array_equal(a[0:10, 0:10], 9)


def test_an_index_entry_past_the_shard_end_is_refused_with_the_length_from_the_suffix_read():
    store = CountingStore()
    a, _ = _sharded(store)
    shard = bytearray(store.raw("c/0/0"))
    # index at the end: 16 (offset, nbytes) pairs of uint64, then a crc32c; point entry 0 past the end
    n = 16 * 16
    index = bytearray(shard[-n - 4:-4])
    struct.pack_into("<QQ", index, 0, len(shard) + 10, 8)
    import google_crc32c

    shard[-n - 4:-4] = index
    shard[-4:] = struct.pack("<I", google_crc32c.value(bytes(index)))
    store.put("c/0/0", bytes(shard))
    store.reset()
    with pytest.raises(ChunkDecodeError, match="c/0/0"):
        a[0:4, 0:4]
    assert not store.sizes and store.requests == 1  # refused after the index read, nothing else read


def test_a_huge_read_fetches_a_bounded_number_of_chunks_per_batch(monkeypatch):
    monkeypatch.setattr(chunk_io, "STAGED_READ_OBJECTS", 3)
    store = CountingStore()
    a = zarrpy.create_array(store, shape=(40, 40), dtype="uint16", chunks=(10, 10), compressors=[ZSTD])
    data = np.arange(1600, dtype="uint16").reshape(40, 40)
    a[...] = data
    store.reset()
    np.testing.assert_array_equal(a[...], data)
    assert store.batches == 6 and sum(store.batch_keys.values()) == 16  # 16 chunks, 3 per batch


def test_versioned_reads_of_the_memory_store_follow_replacements_through_any_store_over_the_dict():
    backing: dict[str, bytes] = {}
    one, two = MemoryStore(backing), MemoryStore(backing)
    one.set("k", b"abc")
    first = one.get_versioned([VersionedRequest("k")])[0]
    assert first == ObjectRead(b"abc", 3, first.version)
    assert two.get_versioned([VersionedRequest("k", None, first.version)])[0].data == b"abc"
    two.set("k", b"abd")
    again = one.get_versioned([VersionedRequest("k", None, first.version)])[0]
    assert again.changed and again.size == 3 and again.version != first.version
