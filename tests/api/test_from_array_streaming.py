"""``from_array`` into large shards: each shard streams inner chunk by inner chunk, the same bytes as a plain write."""

from __future__ import annotations

import numpy as np
import pytest

import zarrpy
from zarrpy.stores import MemoryStore

from tests.streamed_writes import WriterCountingStore

ZSTD = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]




def _values(shape) -> np.ndarray:
    data = (np.arange(np.prod(shape)) % 1009).reshape(shape).astype("uint16")
    data[:2048, :2048] = 0  # shard (0, 0) holds only the fill value
    return data


@pytest.mark.parametrize("source_kind", ["numpy", "zarrpy"])
def test_large_shards_stream_and_store_what_a_write_stores(source_kind):
    shape, chunks, shards = (4200, 2100), (128, 128), (2048, 2048)  # edge shards on both axes
    data = _values(shape)
    source = data
    if source_kind == "zarrpy":
        source = zarrpy.create_array({}, shape=shape, dtype="uint16", chunks=(500, 500))
        source[...] = data
    store = WriterCountingStore()
    a = zarrpy.from_array(store, data=source, chunks=chunks, shards=shards, compressors=ZSTD)
    assert np.array_equal(a[...], data)
    usual = zarrpy.create_array(MemoryStore(), shape=shape, dtype="uint16", chunks=chunks, shards=shards,
                                compressors=ZSTD)
    usual[...] = data
    keys = sorted(usual.stored_chunk_keys())
    assert sorted(a.stored_chunk_keys()) == keys and "c/0/0" not in keys
    assert all(a.store.get(k) == usual.store.get(k) for k in keys)
    assert sorted(store.streamed) == keys  # every stored shard was streamed


def test_small_shards_take_the_usual_write():
    store = WriterCountingStore()
    data = (np.arange(60_000) % 1009).reshape(300, 200).astype("uint16")
    a = zarrpy.from_array(store, data=data, chunks=(50, 50), shards=(100, 100))
    assert np.array_equal(a[...], data) and len(a.stored_chunk_keys()) == 6 and store.streamed == []
