"""Chunk grids: which chunks exist, which region each covers, what shape each is stored at.

A :class:`ChunkGrid` is one *dimension grid* per array dimension, bound to
the array's length along it (its ``extent``). Three kinds of dimension
cover the grids zarrpy reads and writes:

- :class:`FixedDimension`: chunks of one edge length (the ``regular`` grid,
  and a bare integer in a ``rectilinear`` one). The last chunk may hang
  over the array's end; it is stored at the full edge length, the part past
  the end holding the fill value.
- :class:`VaryingDimension`: explicit edge lengths, one per chunk (a list in
  a ``rectilinear`` grid). Their sum may exceed the extent (an array shrunk
  after it was written): the last chunk that overlaps the array is stored
  at its full edge length, like a regular edge chunk.
- :class:`BoundedDimension`: zarrs' ``zarrs.regular_bounded``: regular, but
  the edge chunk is stored clipped to the array (no fill-value padding).

Everything the indexers and the chunk I/O ask of a grid goes through these
few methods, so a selection, a chunk key or a resize never special-cases a
kind of grid. Positions are element indices along one dimension; a chunk
index ``i`` counts chunks from 0 along it.
"""

from __future__ import annotations

import bisect
import itertools
from typing import Iterable, Iterator, Sequence

import numpy as np

from ._typing import ChunkCoords, Shape

REGULAR = "regular"
"""The core grid's V3 name."""
RECTILINEAR = "rectilinear"
"""The zarr-extensions rectilinear grid's V3 name."""
REGULAR_BOUNDED = "zarrs.regular_bounded"
"""zarrs' bounded regular grid's V3 name."""


class _Dimension:
    """Equality and hashing of the dimension grids: by :meth:`_key`, which
    names the kind, so dimensions of different kinds never compare equal."""

    __slots__ = ()

    def _key(self) -> tuple[object, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Dimension) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


class FixedDimension(_Dimension):
    """Chunks of edge ``size`` along a dimension of length ``extent``."""

    __slots__ = ("size", "extent", "nchunks")
    uniform = True
    """Every chunk is stored at the same edge length."""

    def __init__(self, size: int, extent: int):
        self.size, self.extent = size, extent
        self.nchunks = -(-extent // size)

    def offset(self, i: int) -> int:
        """Where chunk ``i`` starts."""
        return i * self.size

    def data_size(self, i: int) -> int:
        """Elements of chunk ``i`` inside the array."""
        return min(self.size, self.extent - i * self.size)

    def codec_size(self, i: int) -> int:
        """The edge length chunk ``i`` is stored (encoded) at."""
        return self.size

    def index_to_chunk(self, position: int) -> int:
        """The chunk holding ``position`` (in ``[0, extent)``)."""
        return position // self.size

    def chunks_of(self, positions: np.ndarray) -> np.ndarray:
        """:meth:`index_to_chunk` of each of ``positions`` (int64, in range)."""
        return positions // self.size

    def local_of(self, positions: np.ndarray) -> np.ndarray:
        """Each of ``positions`` counted from the start of its chunk."""
        return positions % self.size

    def spans(self, first: int, last: int) -> list[tuple[int, int, int]]:
        """``(i, start, stop)`` of every chunk holding a position of
        ``[first, last]`` (both in range), ``stop`` clipped to the extent."""
        cl, n = self.size, self.extent
        return [(ci, ci * cl, min(ci * cl + cl, n)) for ci in range(first // cl, last // cl + 1)]

    def codec_sizes(self) -> tuple[int, ...]:
        """The distinct stored edge lengths (what a shard's inner chunks must divide)."""
        return (self.size,)

    def resize(self, extent: int) -> FixedDimension:
        """This dimension over a new length (a regular dimension covers any)."""
        return FixedDimension(self.size, extent)

    def _key(self) -> tuple[object, ...]:
        return ("fixed", self.size, self.extent)

    def __repr__(self) -> str:
        return f"FixedDimension(size={self.size}, extent={self.extent})"


class BoundedDimension(FixedDimension):
    """``zarrs.regular_bounded``: as :class:`FixedDimension`, but the last
    chunk is stored clipped to the array."""

    __slots__ = ()
    uniform = False

    def codec_size(self, i: int) -> int:
        return self.data_size(i)

    def codec_sizes(self) -> tuple[int, ...]:
        edge = self.extent % self.size
        if not edge:
            return (self.size,)
        return (edge,) if self.extent < self.size else (edge, self.size)

    def resize(self, extent: int) -> BoundedDimension:
        return BoundedDimension(self.size, extent)

    def _key(self) -> tuple[object, ...]:
        return ("bounded", self.size, self.extent)

    def __repr__(self) -> str:
        return f"BoundedDimension(size={self.size}, extent={self.extent})"


class VaryingDimension(_Dimension):
    """Explicit edge lengths ``edges`` (each at least 1, summing to at least
    ``extent``) along a dimension of length ``extent``."""

    __slots__ = ("edges", "extent", "nchunks", "_starts", "_ends", "_ends_array", "_starts_array")
    uniform = False

    def __init__(self, edges: Sequence[int], extent: int):
        self.edges = tuple(edges)
        self.extent = extent
        ends = tuple(itertools.accumulate(self.edges))
        self._ends = ends
        self._starts = (0, *ends[:-1])
        self.nchunks = 0 if extent == 0 else bisect.bisect_left(ends, extent) + 1
        self._ends_array: np.ndarray | None = None
        self._starts_array: np.ndarray | None = None

    @property
    def edge_sum(self) -> int:
        """The sum of the edge lengths: the most this dimension can hold."""
        return self._ends[-1] if self._ends else 0

    def offset(self, i: int) -> int:
        """Where chunk ``i`` starts."""
        return self._starts[i]

    def data_size(self, i: int) -> int:
        """Elements of chunk ``i`` inside the array."""
        return min(self.edges[i], self.extent - self._starts[i])

    def codec_size(self, i: int) -> int:
        """The edge length chunk ``i`` is stored (encoded) at: its edge."""
        return self.edges[i]

    def index_to_chunk(self, position: int) -> int:
        """The chunk holding ``position`` (in ``[0, extent)``), by bisection."""
        return bisect.bisect_right(self._ends, position)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._ends_array is None:
            self._starts_array = np.asarray(self._starts, dtype=np.int64)
            self._ends_array = np.asarray(self._ends, dtype=np.int64)
        assert self._starts_array is not None
        return self._starts_array, self._ends_array

    def chunks_of(self, positions: np.ndarray) -> np.ndarray:
        """:meth:`index_to_chunk` of each of ``positions`` (int64, in range)."""
        return np.searchsorted(self._arrays()[1], positions, side="right").astype(np.int64, copy=False)

    def local_of(self, positions: np.ndarray) -> np.ndarray:
        """Each of ``positions`` counted from the start of its chunk."""
        local: np.ndarray = positions - self._arrays()[0][self.chunks_of(positions)]
        return local

    def spans(self, first: int, last: int) -> list[tuple[int, int, int]]:
        """``(i, start, stop)`` of every chunk holding a position of ``[first, last]``, ``stop`` clipped to the extent."""
        n, starts, ends = self.extent, self._starts, self._ends
        return [(ci, starts[ci], min(ends[ci], n))
                for ci in range(bisect.bisect_right(ends, first), bisect.bisect_right(ends, last) + 1)]

    def codec_sizes(self) -> tuple[int, ...]:
        """The distinct edge lengths (what a shard's inner chunks must divide)."""
        return tuple(sorted(set(self.edges)))

    def resize(self, extent: int) -> VaryingDimension:
        """This dimension over a new length, as zarr-python resizes one:
        growing past the edges' sum appends one chunk of the growth;
        shrinking keeps every edge (chunks past the end simply hold no data)."""
        if extent > self.edge_sum:
            return VaryingDimension((*self.edges, extent - self.edge_sum), extent)
        return VaryingDimension(self.edges, extent)

    def _key(self) -> tuple[object, ...]:
        return ("varying", self.edges, self.extent)

    def __repr__(self) -> str:
        return f"VaryingDimension(edges={self.edges}, extent={self.extent})"


DimensionGrid = FixedDimension | VaryingDimension
"""One dimension of a chunk grid (:class:`BoundedDimension` is a :class:`FixedDimension`)."""


class ChunkGrid:
    """The chunks of an array: one :data:`DimensionGrid` per dimension, and
    the name of the metadata grid they come from (``kind``)."""

    __slots__ = ("dims", "kind", "_hash")

    def __init__(self, dims: Sequence[DimensionGrid], kind: str = REGULAR):
        self.dims: tuple[DimensionGrid, ...] = tuple(dims)
        self.kind = kind
        self._hash: int | None = None

    @classmethod
    def regular(cls, shape: Shape, chunk_shape: Shape) -> ChunkGrid:
        """A regular grid of ``chunk_shape`` chunks over ``shape``."""
        return cls([FixedDimension(c, s) for c, s in zip(chunk_shape, shape)], REGULAR)

    @property
    def shape(self) -> Shape:
        """The array's shape."""
        return tuple([d.extent for d in self.dims])

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.dims)

    @property
    def grid_shape(self) -> Shape:
        """Number of chunks along each dimension (those that overlap the array)."""
        return tuple([d.nchunks for d in self.dims])

    @property
    def nchunks(self) -> int:
        """Total number of chunks in the grid."""
        n = 1
        for d in self.dims:
            n *= d.nchunks
        return n

    @property
    def is_regular(self) -> bool:
        """Chunks of one shape, placed every that many elements (a ``regular``
        grid, a ``rectilinear`` one of bare integers, ``zarrs.regular_bounded``,
        whose edge chunks are merely stored clipped)."""
        return all([isinstance(d, FixedDimension) for d in self.dims])

    @property
    def chunk_shape(self) -> Shape:
        """The one chunk shape of a regular grid (see :attr:`is_regular`); ValueError for any other."""
        if not self.is_regular:
            raise ValueError(f"a {self.kind} chunk grid has no single chunk shape; see chunk_sizes")
        return tuple([d.size for d in self.dims])  # type: ignore[union-attr]

    @property
    def uniform_chunk_shape(self) -> Shape | None:
        """The shape every chunk is stored at, when they all share one; else None."""
        if all([d.uniform for d in self.dims]):
            return tuple([d.size for d in self.dims])  # type: ignore[union-attr]
        return None

    @property
    def max_chunk_shape(self) -> Shape:
        """The largest stored edge along each dimension (what bounds one chunk's size)."""
        return tuple([max(d.codec_sizes()) for d in self.dims])

    @property
    def chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Per dimension, the elements of each chunk inside the array (dask's
        ``chunks`` convention: the edge chunk clipped)."""
        return tuple(tuple(d.data_size(i) for i in range(d.nchunks)) for d in self.dims)

    def all_chunk_coords(self) -> Iterator[ChunkCoords]:
        """Every chunk's grid coordinates, in C order."""
        return itertools.product(*(range(d.nchunks) for d in self.dims))

    def chunk_region(self, coords: ChunkCoords) -> tuple[slice, ...]:
        """The array region (clipped to the array) covered by a chunk."""
        out = []
        for d, c in zip(self.dims, coords):
            start = d.offset(c)
            out.append(slice(start, start + d.data_size(c)))
        return tuple(out)

    def chunk_origin(self, coords: ChunkCoords) -> ChunkCoords:
        """Where a chunk starts in the array."""
        return tuple([d.offset(c) for d, c in zip(self.dims, coords)])

    def chunk_shape_at(self, coords: ChunkCoords) -> Shape:
        """The shape the chunk at ``coords`` is stored (encoded) at."""
        return tuple([d.codec_size(c) for d, c in zip(self.dims, coords)])

    def data_shape_at(self, coords: ChunkCoords) -> Shape:
        """The shape of the chunk's region inside the array."""
        return tuple([d.data_size(c) for d, c in zip(self.dims, coords)])

    def chunk_of(self, position: Sequence[int]) -> ChunkCoords:
        """The chunk holding the element at ``position`` (in range)."""
        return tuple([d.index_to_chunk(p) for d, p in zip(self.dims, position)])

    def contains(self, coords: ChunkCoords) -> bool:
        """True when ``coords`` names a chunk of this grid (right length, each in range)."""
        return len(coords) == len(self.dims) and all(0 <= c < d.nchunks for c, d in zip(coords, self.dims))

    def resize(self, shape: Shape) -> ChunkGrid:
        """The grid of the array resized to ``shape`` (see each dimension's ``resize``)."""
        return ChunkGrid([d.resize(s) for d, s in zip(self.dims, shape)], self.kind)

    def codec_sizes(self, axis: int) -> tuple[int, ...]:
        """The distinct stored edge lengths along ``axis``."""
        return self.dims[axis].codec_sizes()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChunkGrid) and self.kind == other.kind and self.dims == other.dims

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.kind, self.dims))
        return self._hash

    def __repr__(self) -> str:
        return f"ChunkGrid({list(self.dims)!r}, kind={self.kind!r})"


def RegularChunkGrid(shape: Shape, chunk_shape: Shape) -> ChunkGrid:  # noqa: N802 -- the grid's name, kept
    """A regular grid of ``chunk_shape`` chunks over an array of ``shape``."""
    return ChunkGrid.regular(tuple(shape), tuple(chunk_shape))


def as_grid(grid: ChunkGrid | Iterable[int], shape: Shape) -> ChunkGrid:
    """``grid`` as a :class:`ChunkGrid` over ``shape``: a chunk shape (a
    tuple of ints, as the sharding codec's indexers give) is a regular grid."""
    return grid if isinstance(grid, ChunkGrid) else ChunkGrid.regular(tuple(shape), tuple(grid))


__all__ = [
    "REGULAR", "RECTILINEAR", "REGULAR_BOUNDED", "BoundedDimension", "ChunkGrid", "DimensionGrid", "FixedDimension",
    "RegularChunkGrid", "VaryingDimension", "as_grid",
]
