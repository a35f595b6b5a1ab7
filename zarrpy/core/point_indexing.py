"""Vectorised (pointwise) selections -> per-chunk projections, with numpy.

``a.vindex[...]``, coordinate and mask selections pick elements the way
numpy's advanced indexing does: the integer arrays (and N-D boolean masks,
as their ``nonzero()``) broadcast together into one set of points; slices
mixed in add their own dimensions, placed as numpy places them (the
broadcast dimensions where the first array was when the arrays are
adjacent, else first).

:class:`PointIndexer` turns such a selection into one flat coordinate array
per dimension, groups the points by chunk with one stable sort (no Python
loop per element) and yields one :class:`PointProjection` per chunk touched,
so each chunk is read once. Grouping is by *unit* chunk: the inner chunk of
a sharded array, so a partial read of a shard asks for a small box inside
each inner chunk that holds points, never a box spanning the shard.
"""

from __future__ import annotations

import math

from typing import Any, Iterator

import numpy as np

from ._typing import ChunkCoords, Shape
from .chunk_grid import ChunkGrid, as_grid
from .selection import Points, check_slice
from ..errors import BoundsCheckError, SelectionError


class PointProjection:
    """How one chunk takes part in a pointwise selection.

    The same attributes as :class:`~zarrpy.core.indexing.ChunkProjection`,
    for ``n`` points: ``chunk_selection`` is the points' coordinates in the
    chunk (a numpy index giving ``n`` elements), ``out_selection`` their
    positions in the flattened output. ``chunk_dim_selection`` is the
    smallest orthogonal box holding them (what partial decoders read) and
    ``pick`` the points' C-order positions in that box; both are computed
    on first use, since a chunk read whole needs neither.
    """

    __slots__ = ("chunk_coords", "points", "out_positions", "is_complete", "_box", "_pick")

    def __init__(self, chunk_coords: ChunkCoords, points: tuple[np.ndarray, ...], out_positions: Any, complete: bool):
        self.chunk_coords = chunk_coords
        self.points = points
        self.out_positions = out_positions
        self.is_complete = complete
        self._box: tuple[np.ndarray, ...] | None = None
        self._pick: np.ndarray | None = None

    @property
    def chunk_selection(self) -> tuple[np.ndarray, ...]:
        """The points' coordinates in the chunk, one int array per dimension (a numpy index)."""
        return self.points

    @property
    def chunk_block_shape(self) -> Shape:
        """Shape of the elements taken from the chunk: ``(n,)`` for ``n`` points."""
        return (int(self.points[0].size),)

    @property
    def out_selection(self) -> tuple[Any, ...]:
        """Where the points go in the flattened output: a 1-tuple of positions."""
        return (self.out_positions,)

    @property
    def out_block_shape(self) -> Shape:
        """Shape of the block written to the output: that of :attr:`chunk_block_shape`."""
        return self.chunk_block_shape

    @property
    def write_selection(self) -> Points:
        """The selection a write of this block takes in its chunk."""
        return Points(self.points)

    @property
    def chunk_dim_selection(self) -> tuple[np.ndarray, ...]:
        """The smallest orthogonal box holding the points: per dimension, the
        sorted distinct coordinates (what a partial decoder reads)."""
        if self._box is None:
            self._load_box()
        assert self._box is not None
        return self._box

    @property
    def pick(self) -> np.ndarray:
        """The points' C-order positions in :attr:`chunk_dim_selection`'s box, in point order."""
        if self._pick is None:
            self._load_box()
        assert self._pick is not None
        return self._pick

    def _load_box(self) -> None:
        box, where = [], []
        for coord in self.points:
            values, inverse = np.unique(coord, return_inverse=True)
            box.append(values)
            where.append(inverse.reshape(-1))
        self._box = tuple(box)
        self._pick = np.ravel_multi_index(tuple(where), tuple(v.size for v in box)).astype(np.int64, copy=False)


def with_index_arrays(selection: Any) -> Any:
    """``selection`` with every array-like (a list, a zarrpy Array, ...)
    turned into a numpy index array once, so nothing is read twice."""
    if isinstance(selection, tuple):
        return tuple([as_index_array(s) if is_array_like(s) else s for s in selection])
    return as_index_array(selection) if is_array_like(selection) else selection


def has_index_arrays(selection: Any) -> bool:
    """Does ``selection`` (index arrays already numpy) hold an index array in any dimension?"""
    items = selection if isinstance(selection, tuple) else (selection,)
    return any(isinstance(s, np.ndarray) for s in items)


def is_vectorized(selection: Any, ndim: int) -> bool:
    """Does plain ``a[selection]`` (index arrays already numpy) pick points?

    As in zarr-python: an N-D boolean mask, or one integer array per
    dimension (integers allowed, no slices), picks points; one 1-D array
    among integers and slices, or one 1-D integer/boolean array per
    dimension with a boolean among them, selects orthogonally. Beyond
    zarr-python, other mixes of several arrays (or an N-D integer array)
    follow numpy's advanced indexing instead of failing.
    """
    items = selection if isinstance(selection, tuple) else (selection,)
    arrays = [s for s in items if isinstance(s, np.ndarray)]
    if not arrays:
        return False
    if len(arrays) == 1:
        return arrays[0].ndim != 1
    return not is_orthogonal_arrays(selection, ndim)


def is_orthogonal_arrays(selection: Any, ndim: int) -> bool:
    """Is ``selection`` (index arrays already numpy) one 1-D array per
    dimension with a boolean among them? Plain ``a[selection]`` then selects
    each dimension on its own, like ``data[np.ix_(...)]`` (zarr-python's rule)."""
    items = selection if isinstance(selection, tuple) else (selection,)
    return (
        ndim > 1 and len(items) == ndim
        and all([isinstance(s, np.ndarray) and s.ndim == 1 for s in items])
        and any([s.dtype == bool for s in items])
    )


def is_array_like(item: Any) -> bool:
    """Is ``item`` an index array to be (a list, tuple, numpy array or anything
    with ``__array__``), rather than an integer, slice, ``...`` or ``None``?"""
    if isinstance(item, (slice, int, np.generic, str, bytes)) or item is Ellipsis or item is None:
        return False
    return isinstance(item, (list, tuple, np.ndarray)) or hasattr(item, "__array__")


def as_index_array(item: Any) -> np.ndarray:
    """An index array from any array-like (a list, a numpy array, a zarrpy
    Array): integers or booleans, else a SelectionError."""
    arr = np.asarray(item)
    if arr.size == 0 and arr.dtype.kind not in "biu":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "biu":
        raise SelectionError(f"an index array must hold integers or booleans, got dtype {arr.dtype}")
    return arr


def _expand(selection: Any, shape: Shape) -> list[Any]:
    """Items per array dimension: ``...`` expanded, trailing full slices
    added, each array-like an index array (a k-D mask covers k dimensions)."""
    items = list(selection) if isinstance(selection, tuple) else [selection]
    if any(s is None for s in items):
        raise SelectionError("np.newaxis (None) is not supported in zarr selections")
    items = [as_index_array(s) if is_array_like(s) else s for s in items]
    width = [s.ndim if isinstance(s, np.ndarray) and s.dtype == bool else 0 if s is Ellipsis else 1 for s in items]
    n_ellipsis = sum(1 for s in items if s is Ellipsis)
    if n_ellipsis > 1:
        raise SelectionError("a selection can contain at most one '...'")
    used = sum(width)
    if used > len(shape):
        raise BoundsCheckError(f"too many indices: array is {len(shape)}-dimensional, selection has {used}")
    if n_ellipsis:
        i = next(i for i, s in enumerate(items) if s is Ellipsis)
        items[i : i + 1] = [slice(None)] * (len(shape) - used)
    else:
        items += [slice(None)] * (len(shape) - used)
    return items


class PointIndexer:
    """A pointwise selection of an array of ``shape`` stored in the chunks
    of ``grid``, grouped by the chunks of ``unit_grid`` (default: ``grid``;
    the inner chunks of a sharded array, which nest in its shards). Either
    grid may be given as a regular chunk shape.

    ``shape`` is the output shape (numpy's); iterating yields
    :class:`PointProjection`, whose ``out_selection`` addresses the
    *flattened* output (``flat_output`` is True).
    """

    flat_output = True

    def __init__(self, selection: Any, shape: Shape, grid: ChunkGrid | Shape,
                 unit_grid: ChunkGrid | Shape | None = None):
        self.array_shape = tuple(shape)
        self.grid = as_grid(grid, self.array_shape)
        units = self.grid if unit_grid is None else as_grid(unit_grid, self.array_shape)
        self.unit_grid = self.grid if units == self.grid else units  # `is` below: the same grid
        self.coords: tuple[np.ndarray, ...]
        self.shape: Shape
        mask = selection[0] if isinstance(selection, tuple) and len(selection) == 1 else selection
        self._mask: np.ndarray | None = None
        if isinstance(mask, np.ndarray) and mask.dtype == bool and mask.shape == self.array_shape and mask.ndim:
            # A whole-array mask: projected chunk by chunk, no sort (see _mask_projections).
            self._mask = mask
            self.coords, self.shape = (), (int(np.count_nonzero(mask)),)
        else:
            self.coords, self.shape = _points(selection, self.array_shape)
        self.is_scalar = not self.shape

    @classmethod
    def from_points(cls, points: Points, shape: Shape, chunk_shape: Shape) -> PointIndexer:
        """Group ``points`` (in range, non-negative) of a ``shape`` array by
        its chunks: how a shard splits a point write among its inner chunks."""
        self = cls.__new__(cls)
        self.array_shape = tuple(shape)
        self.grid = self.unit_grid = as_grid(chunk_shape, self.array_shape)
        self.coords = tuple(np.asarray(c, dtype=np.int64).reshape(-1) for c in points.coords)
        self._mask = None
        self.shape = (len(points),)
        self.is_scalar = False
        return self

    @property
    def chunk_shape(self) -> Shape:
        """The stored chunks' shape, when the grid is regular."""
        return self.grid.chunk_shape

    @property
    def unit_shape(self) -> Shape:
        """The unit chunks' shape, when their grid is regular."""
        return self.unit_grid.chunk_shape

    def _outer(self, unit_coords: ChunkCoords) -> ChunkCoords:
        """The stored chunk holding the unit chunk at ``unit_coords``."""
        if self.unit_grid is self.grid:
            return unit_coords
        return tuple([g.index_to_chunk(u.offset(i)) for i, u, g in zip(unit_coords, self.unit_grid.dims, self.grid.dims)])

    def __iter__(self) -> Iterator[PointProjection]:
        if self._mask is not None:
            yield from self._mask_projections(self._mask)
            return
        coords = self.coords
        n = int(coords[0].size) if coords else 0
        if n == 0:
            return
        grid, units = self.grid, self.unit_grid
        unit_shape = units.grid_shape
        ids = _ravel([u.chunks_of(axis) for axis, u in zip(coords, units.dims)], unit_shape)
        if bool(np.all(ids[1:] >= ids[:-1])):
            order = None
            sorted_ids = ids
        else:
            # A stable sort of small keys is a radix sort in numpy: 8x faster.
            keys = ids.astype(np.uint16) if int(np.prod(unit_shape, dtype=np.int64)) <= 1 << 16 else ids
            order = np.argsort(keys, kind="stable")
            sorted_ids = ids[order]
        bounds = np.flatnonzero(sorted_ids[1:] != sorted_ids[:-1]) + 1
        starts = [0, *bounds.tolist()]
        ends = [*bounds.tolist(), n]
        # Everything per point is computed once for all chunks; each chunk
        # then takes views of it. A point's place in its stored chunk is its
        # coordinate less the chunk's start, since unit chunks nest in chunks.
        in_order = coords if order is None else tuple(axis[order] for axis in coords)
        local_all = tuple(g.local_of(axis) for axis, g in zip(in_order, grid.dims))
        positions = np.arange(n, dtype=np.int64) if order is None else order
        first_ids = sorted_ids[starts]
        unit_coords_all = zip(*(c.tolist() for c in np.unravel_index(first_ids, unit_shape)))
        whole_units = units is grid
        for s, e, unit_coords in zip(starts, ends, unit_coords_all):
            outer = self._outer(unit_coords)
            local = tuple([axis[s:e] for axis in local_all])
            complete = whole_units and _covers_chunk(local, grid.data_shape_at(outer))
            yield PointProjection(outer, local, positions[s:e], complete)


    def _mask_projections(self, mask: np.ndarray) -> Iterator[PointProjection]:
        """Per unit chunk, the True elements of its part of ``mask``, and their
        positions in ``data[mask]`` (C order), from per-row counts.

        A "row" is a run along the last axis. The output position of a True
        element is the count of Trues in the rows before it, plus those in
        its row left of its unit chunk, plus its rank in its row inside the
        chunk; the first two come from two small tables (rows x chunk
        columns), the last from a cumsum over the chunk's part of the mask.
        """
        shape, grid, units = self.array_shape, self.grid, self.unit_grid
        if not self.shape[0]:
            return
        rows = mask.reshape(-1, shape[-1])
        last = units.dims[-1]
        col_starts = np.array([last.offset(i) for i in range(last.nchunks)], dtype=np.int64)
        per_block = np.add.reduceat(rows, col_starts, axis=1, dtype=np.int64)  # rows x chunk columns
        left = np.cumsum(per_block, axis=1) - per_block  # Trues left of each chunk column, per row
        row_sums = per_block.sum(axis=1)
        before = np.cumsum(row_sums) - row_sums  # Trues in the rows before
        row_ids = np.arange(rows.shape[0], dtype=np.int64).reshape(shape[:-1])
        whole_units = units is grid
        for unit_coords in np.ndindex(units.grid_shape):
            region = units.chunk_region(unit_coords)
            part = mask[region]
            local = np.nonzero(part)
            if not local[0].size:
                continue
            # The chunk's Trues in one row land next to each other in the output.
            counts = np.count_nonzero(part, axis=-1).reshape(-1)
            row = row_ids[region[:-1]].reshape(-1)
            starts = before[row] + left[row, unit_coords[-1]]
            out_positions = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(local[0].size)
            outer = self._outer(unit_coords)
            offset = tuple(r.start - o for r, o in zip(region, grid.chunk_origin(outer)))
            points = tuple(p.astype(np.int64, copy=False) + off for p, off in zip(local, offset))
            complete = whole_units and local[0].size == part.size
            yield PointProjection(outer, points, out_positions, complete)


def _ravel(parts: list[np.ndarray], grid: Shape) -> np.ndarray:
    """Linear chunk ids (C order) of per-dimension chunk indices."""
    ids = np.zeros(parts[0].shape, dtype=np.int64)
    for p, g in zip(parts, grid):
        ids *= g
        ids += p
    return ids


def _covers_chunk(local: tuple[np.ndarray, ...], region: Shape) -> bool:
    """Do the points hit every element of a chunk's in-array region (of shape ``region``)?"""
    size = math.prod(region)  # Python ints: no overflow, and cheaper than numpy for a few numbers
    if local[0].size < size:
        return False
    return int(np.unique(np.ravel_multi_index(local, region)).size) == size


def _points(selection: Any, shape: Shape) -> tuple[tuple[np.ndarray, ...], Shape]:
    """The flat coordinates (one int64 array per dimension) of the elements
    numpy's ``array[selection]`` picks, and the result's shape."""
    items = _expand(selection, shape)
    per_dim: list[Any] = []  # per array dimension: an int64 index array (advanced) or a slice range
    adv_items: list[int] = []  # item numbers of advanced indices
    dim = 0
    for i, item in enumerate(items):
        if isinstance(item, np.ndarray) and item.dtype == bool:
            if item.shape != shape[dim : dim + item.ndim]:  # a malformed mask, not an index past the end
                raise SelectionError(
                    f"boolean index of shape {item.shape} does not match the array's dimensions "
                    f"{shape[dim : dim + item.ndim]} (axes {dim} to {dim + item.ndim - 1})"
                )
            for axis, part in enumerate(np.nonzero(item)):
                per_dim.append(("adv", part.astype(np.int64, copy=False), dim + axis))
            adv_items.append(i)
            dim += item.ndim
            continue
        if isinstance(item, slice):
            check_slice(item)
            per_dim.append(("slice", np.arange(*item.indices(shape[dim]), dtype=np.int64), dim))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            per_dim.append(("adv", np.asarray(int(item), dtype=np.int64), dim))
            adv_items.append(i)
        elif isinstance(item, np.ndarray):
            per_dim.append(("adv", item.astype(np.int64, copy=False), dim))
            adv_items.append(i)
        else:
            raise SelectionError(
                f"unsupported selection {item!r}: use integers, slices, '...', integer arrays or boolean masks"
            )
        dim += 1
    for kind, index, axis in per_dim:
        if kind == "adv" and index.size:
            n = shape[axis]
            if index.min() < -n or index.max() >= n:
                bad = index[(index < -n) | (index >= n)].reshape(-1)[0]
                raise BoundsCheckError(f"index {int(bad)} is out of bounds for axis {axis} with size {n}")
    try:
        broadcast = np.broadcast_shapes(*(index.shape for kind, index, _ in per_dim if kind == "adv"))
    except ValueError:
        shapes = [index.shape for kind, index, _ in per_dim if kind == "adv"]
        raise SelectionError(f"index arrays of shapes {shapes} cannot be broadcast together") from None
    adjacent = bool(adv_items) and adv_items == list(range(adv_items[0], adv_items[-1] + 1))
    slices = [(index, axis) for kind, index, axis in per_dim if kind == "slice"]
    before = 0
    if adjacent:
        first_adv_axis = next(axis for kind, _, axis in per_dim if kind == "adv")
        before = sum(1 for _, axis in slices if axis < first_adv_axis)
    out_shape = (
        tuple(index.size for index, _ in slices[:before]) + broadcast + tuple(index.size for index, _ in slices[before:])
    )
    nb = len(broadcast)
    coords = []
    slice_rank = 0
    for kind, index, axis in per_dim:
        n = shape[axis]
        if kind == "adv":
            index = np.where(index < 0, index + n, index) if index.size and index.min() < 0 else index
            full = np.broadcast_to(index, broadcast).reshape((1,) * before + broadcast + (1,) * (len(slices) - before))
        else:
            pos = slice_rank if slice_rank < before else slice_rank + nb
            slice_rank += 1
            full = index.reshape(tuple(index.size if j == pos else 1 for j in range(len(out_shape))))
        coords.append(np.ascontiguousarray(np.broadcast_to(full, out_shape)).reshape(-1))
    return tuple(coords), out_shape


__all__ = [
    "PointIndexer", "PointProjection", "as_index_array", "has_index_arrays", "is_array_like", "is_orthogonal_arrays",
    "is_vectorized", "with_index_arrays",
]
