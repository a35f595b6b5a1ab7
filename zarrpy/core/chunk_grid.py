"""The regular chunk grid: which chunks exist and which region each covers.

Edge chunks are stored at full chunk shape; only the part inside the array
(``chunk_region``) holds data, the rest is written as the fill value.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator

from ._typing import ChunkCoords, Shape


@dataclass(frozen=True, slots=True)
class RegularChunkGrid:
    """A regular grid of ``chunk_shape`` chunks over an array of ``shape``."""

    shape: Shape
    chunk_shape: Shape

    @property
    def grid_shape(self) -> Shape:
        """Number of chunks along each dimension (ceil division)."""
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunk_shape))

    @property
    def nchunks(self) -> int:
        """Total number of chunks in the grid."""
        n = 1
        for g in self.grid_shape:
            n *= g
        return n

    def all_chunk_coords(self) -> Iterator[ChunkCoords]:
        """Every chunk's grid coordinates, in C order."""
        return itertools.product(*(range(g) for g in self.grid_shape))

    def chunk_region(self, coords: ChunkCoords) -> tuple[slice, ...]:
        """The array region (clipped to the array) covered by a chunk."""
        return tuple(
            slice(c * cs, min((c + 1) * cs, s)) for c, cs, s in zip(coords, self.chunk_shape, self.shape)
        )

    def contains(self, coords: ChunkCoords) -> bool:
        """True when ``coords`` names a chunk of this grid (right length, each in range)."""
        return len(coords) == len(self.shape) and all(0 <= c < g for c, g in zip(coords, self.grid_shape))


__all__ = ["RegularChunkGrid"]
