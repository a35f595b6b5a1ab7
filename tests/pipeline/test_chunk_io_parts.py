"""ChunkIO is split by job (keys and listing, cached reads, reads and
writes) and stays the one class the API uses, its names where they were."""

from __future__ import annotations

import numpy as np

import zarrpy
from zarrpy.cache import Cache
from zarrpy.pipeline import cached_reads, chunk_io, chunk_keys, scatter
from zarrpy.stores import MemoryStore


def test_names_stay_importable_from_chunk_io():
    assert chunk_io.StoredChunk is chunk_keys.StoredChunk
    assert chunk_io.StoredSizes is chunk_keys.StoredSizes
    assert chunk_io.Member is chunk_keys.Member
    assert chunk_io.Projection is scatter.Projection
    assert set(chunk_io.__all__) >= {"BlockWrite", "ChunkData", "ChunkIO", "Member", "StoredChunk", "StoredSizes"}


def test_one_class_composed_of_the_parts():
    store = MemoryStore()
    a = zarrpy.create_array(store, shape=(8, 8), dtype="uint8", chunks=(2, 2), shards=(4, 4),
                            fill_value=0)
    a[...] = np.arange(64, dtype="uint8").reshape(8, 8)
    io = zarrpy.open_array(store, mode="r", cache=Cache(1 << 20))._io
    assert isinstance(io, chunk_keys.ChunkKeys) and isinstance(io._cached, cached_reads.CachedChunks)
    assert io.key((1, 0)) == "c/1/0" and [c.coords for c in io.stored_keys()] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert io.chunk_shape == (2, 2) and io.units_of((1, 0)) == [(2, 0), (2, 1), (3, 0), (3, 1)]
    assert io.outer_of((3, 1)) == (1, 0)
    assert cached_reads.cache_prefix(io) == (store.identity, "", (8, 8), io.unit_grid)
    assert io.unit_grid.chunk_shape == (2, 2)
