"""Reads through a cache of decoded chunks.

With a cache (:class:`~.cache_hook.ChunkCache`), an array's reads go by its
read unit (a shard's inner chunks, else its chunks): each unit a read needs
is taken from the cache, or loaded with the others it lacks in one go and
kept there, read-only, unless a write invalidated anything meanwhile (the
cache's version). :class:`CachedChunks` does that for one array; the loading
itself is the reading layer's (:meth:`ChunkIO.read_chunks
<zarrpy.pipeline.chunk_io.ChunkIO.read_chunks>` without a cache), handed in
as a function, so this module knows no codec and no store value.

Cache keys are ``(*cache_prefix(keys), unit coords)``: the prefix names the
store (by identity: two store objects over the same data share entries), the
array's path, its shape (an edge unit's region depends on it) and its unit
shape. Shard indexes are kept under the same prefix
(:class:`~.shard_reads.IndexCache`), so forgetting an array forgets them too.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..core._typing import ChunkCoords
from .cache_hook import ChunkCache
from .chunk_keys import ChunkKeys
from .concurrency import for_each_batch
from .scatter import Projection, put


def cache_prefix(keys: ChunkKeys) -> tuple[Any, ...]:
    """The node's part of its chunks' cache keys: store, path, shape and
    unit shape (see the module docstring)."""
    return (keys.store.identity, keys.path, keys.shape, keys.unit_grid)


class CachedChunks:
    """The decoded (inner) chunks of one array, through ``cache``; ``load``
    reads the units at the coords given, in that order, without the cache."""

    def __init__(self, cache: ChunkCache, keys: ChunkKeys, load: Callable[[Sequence[ChunkCoords]], list[Any]]):
        self.cache, self.keys, self._load = cache, keys, load
        self._prefix = cache_prefix(keys)

    def _key(self, coords: ChunkCoords) -> tuple[Any, ...]:
        return (*self._prefix, coords)

    def read_into(self, out: np.ndarray, projections: Iterable[Projection]) -> None:
        """Scatter the units of ``projections`` (which address units) into
        ``out``; the missing ones are loaded in batches of whole stored
        chunks (one index read per shard) and kept. On a store where a
        request is a round trip, all of them are loaded at once first."""
        outer_of = self.keys.outer_of
        by_outer: dict[ChunkCoords, dict[ChunkCoords, list[Projection]]] = {}
        for proj in projections:
            outer = outer_of(proj.chunk_coords)
            by_outer.setdefault(outer, {}).setdefault(proj.chunk_coords, []).append(proj)

        loaded: dict[ChunkCoords, Any] = {}
        if not self.keys.store.reads_in_place:  # one staged load of every missing chunk, then scatter on the pool
            loaded = self.chunks([c for group in by_outer.values() for c in group])

        def read_batch(batch: list[dict[ChunkCoords, list[Projection]]]) -> None:
            # A batch holds whole stored chunks, so a shard's index is read once.
            units = [item for group in batch for item in group.items()]
            chunks = loaded or self.chunks([coords for coords, _ in units])
            for coords, group in units:
                for proj in group:
                    put(out, proj, chunks[coords][(*proj.chunk_selection, Ellipsis)])

        for_each_batch(read_batch, list(by_outer.values()), max_batch=64)

    def chunks(self, coords_list: Sequence[ChunkCoords]) -> dict[ChunkCoords, Any]:
        """The units at ``coords_list``: from the cache, else loaded together
        and kept there, read-only, unless a write invalidated anything meanwhile."""
        cache = self.cache
        chunks: dict[ChunkCoords, Any] = {}
        missing = []
        for coords in dict.fromkeys(coords_list):
            try:
                chunks[coords] = cache[self._key(coords)]
            except KeyError:
                missing.append(coords)
        if missing:
            version = cache.version
            for coords, chunk in zip(missing, self._load(missing)):
                if isinstance(chunk, np.ndarray):
                    chunk.setflags(write=False)
                cache.store_if_current(self._key(coords), chunk, version)
                chunks[coords] = chunk
        return chunks

    def forget(self, coords: Iterable[ChunkCoords]) -> None:
        """Drop the cached units of the stored chunks at ``coords``."""
        keys = [self._key(unit) for outer in coords for unit in self.keys.units_of(outer)]
        self.cache.discard(keys)

    def forget_all(self) -> None:
        """Drop every cached unit of the array (and anything else kept under its prefix)."""
        self.cache.discard_prefix(self._prefix)


__all__ = ["CachedChunks", "cache_prefix"]
