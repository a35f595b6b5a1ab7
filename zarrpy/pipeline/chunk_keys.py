"""Where an array's chunks are: their store keys, listing, and grouping.

:class:`ChunkKeys` knows one array's store, path and metadata, and the unit
it reads and writes (a shard's inner chunks, else the stored chunks). It
names the stored chunk at grid coordinates, lists the chunks present (one
listing), sizes them, and groups (inner) chunk coordinates by the stored
object holding them. It reads no value and knows no codec: the reading and
writing layer (:class:`~zarrpy.pipeline.chunk_io.ChunkIO`) builds on it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable, NamedTuple

from ..core._typing import ChunkCoords, Shape
from ..core.chunk_grid import ChunkGrid
from ..core.paths import join_key
from ..errors import SelectionError
from ..metadata.chunk_key_encoding import decode_chunk_key, encode_chunk_key
from ..metadata.v3 import ArrayMetadataV3
from ..stores.abc import Store


class StoredChunk(NamedTuple):
    """A chunk object present in the store."""

    key: str
    coords: ChunkCoords
    """Its coordinates in the (outer) chunk grid."""


class StoredSizes(NamedTuple):
    """What an array takes in its store, from the sizes the store lists."""

    objects: int
    """Stored chunk objects (shards, when sharded)."""
    nbytes: int
    """Bytes of the metadata documents and the chunks."""


@dataclass(frozen=True, slots=True)
class Member:
    """One requested (inner) chunk inside the stored object that holds it:
    its position in the request list and its selection in that object."""

    position: int
    selection: tuple[slice, ...]

    @property
    def shape(self) -> Shape:
        """Shape of the chunk's region inside the stored object."""
        return tuple(s.stop - s.start for s in self.selection)


class ChunkKeys:
    """The keys and listing of one array's chunks (see the module docstring).

    ``unit_grid`` is the grid of the read/write unit: a shard's inner chunks
    when the chunks are plain shards (a regular grid over the whole array:
    every shard's edges are multiples of the inner chunk's), else None for
    the stored chunks' grid itself.
    """

    def __init__(self, store: Store, path: str, metadata: ArrayMetadataV3, unit_grid: ChunkGrid | None = None):
        self.store = store
        self.path = path
        self.metadata = metadata
        self.grid: ChunkGrid = metadata.grid
        """The stored chunks (shards, when sharded)."""
        self.unit_grid: ChunkGrid = self.grid if unit_grid is None else unit_grid
        """The read/write unit's chunks: inner chunks of a shard, else :attr:`grid`."""

    @property
    def shape(self) -> Shape:
        """The array's shape."""
        return self.metadata.shape

    @property
    def chunk_shape(self) -> Shape:
        """Shape of the read/write unit: inner chunks of a shard, else chunks
        (ValueError when they have no one shape: a rectilinear grid)."""
        return self.unit_grid.chunk_shape

    def outer_of(self, coords: ChunkCoords) -> ChunkCoords:
        """The stored chunk holding the unit (inner) chunk at ``coords``."""
        if self.unit_grid is self.grid:
            return coords
        return tuple([g.index_to_chunk(u.offset(c)) for c, u, g in zip(coords, self.unit_grid.dims, self.grid.dims)])

    def units_of(self, outer: ChunkCoords) -> list[ChunkCoords]:
        """The unit (inner) chunks inside the array that the stored chunk at ``outer`` holds."""
        if self.unit_grid is self.grid:
            return [outer]
        ranges = []
        for c, u, g in zip(outer, self.unit_grid.dims, self.grid.dims):
            start = g.offset(c)
            stop = start + g.data_size(c)
            ranges.append(range(u.index_to_chunk(start), u.index_to_chunk(stop - 1) + 1) if stop > start else range(0))
        return list(itertools.product(*ranges))

    def key(self, coords: ChunkCoords) -> str:
        """The store key of the stored chunk at grid ``coords``."""
        return join_key(self.path, encode_chunk_key(self.metadata.chunk_key_encoding, coords))

    def stored_keys(self) -> list[StoredChunk]:
        """Every stored chunk's key and grid coordinates (one listing), sorted
        by coordinates (row-major grid order), whatever order the store lists in."""
        prefix = join_key(self.path, "")
        out = []
        for key in self.store.list_prefix(prefix):
            coords = decode_chunk_key(self.metadata.chunk_key_encoding, key[len(prefix):], len(self.shape))
            if coords is not None:
                out.append(StoredChunk(key, coords))
        return sorted(out, key=lambda chunk: chunk.coords)

    def is_chunk_key(self, key: str) -> bool:
        """True if ``key`` (a full store key) names a chunk of this array."""
        prefix = join_key(self.path, "")
        return key.startswith(prefix) and decode_chunk_key(
            self.metadata.chunk_key_encoding, key[len(prefix):], len(self.shape)
        ) is not None

    def stored_sizes(self, documents: Iterable[str]) -> StoredSizes:
        """Stored chunks, and bytes of them and of ``documents`` (the node's
        metadata names), from one listing with sizes; nothing is read."""
        prefix = join_key(self.path, "")
        names = {join_key(self.path, name) for name in documents}
        nobjects = nbytes = 0
        for key, size in self.store.list_prefix_with_sizes(prefix):
            if self.is_chunk_key(key):
                nobjects += 1
                nbytes += size
            elif key in names:
                nbytes += size
        return StoredSizes(nobjects, nbytes)

    def members(self, coords_list: Iterable[ChunkCoords]) -> dict[ChunkCoords, list[Member]]:
        """Group (inner) chunk coords by the stored chunk holding them.

        Raises SelectionError for coords outside the (inner) chunk grid."""
        units, grid = self.unit_grid, self.grid
        groups: dict[ChunkCoords, list[Member]] = {}
        for i, coords in enumerate(coords_list):
            coords = tuple(int(c) for c in coords)
            if not units.contains(coords):
                raise SelectionError(f"chunk {coords} is outside the chunk grid {units.grid_shape}")
            region = units.chunk_region(coords)
            outer = self.outer_of(coords)
            origin = grid.chunk_origin(outer)
            sel = tuple([slice(r.start - o, r.stop - o) for r, o in zip(region, origin)])
            groups.setdefault(outer, []).append(Member(i, sel))
        return groups


__all__ = ["ChunkKeys", "Member", "StoredChunk", "StoredSizes"]
