"""Selections -> per-chunk projections, vectorised with numpy.

A user selection is normalised per dimension into a *dimension indexer*
(integer, slice with positive step, or sorted-or-not integer array). The
orthogonal product of the dimensions' per-chunk pieces gives one
:class:`ChunkProjection` per chunk touched: what to take from the chunk, where
it goes in the output, and whether it covers the chunk's in-array region whole
(a complete chunk needs no read-modify-write).

Every chunk-side selection is a slice or an integer array per chunk dimension
(integers become length-1 slices); ``chunk_block_shape`` is the shape of that
block, and ``out_selection`` addresses the same elements in the output, whose
integer-indexed dimensions are dropped. Selections with more than one array
are already passed through ``np.ix_``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ._typing import ChunkCoords, Shape
from .chunk_grid import ChunkGrid, DimensionGrid, as_grid
from .point_indexing import as_index_array, is_array_like
from .selection import check_slice
from ..errors import BoundsCheckError, SelectionError


@dataclass(slots=True)
class ChunkProjection:
    """How one chunk takes part in a selection (a value: never changed once
    made; not frozen only because a frozen dataclass costs five times as
    much to make, and one is made per chunk of every read).

    ``chunk_selection`` indexes the decoded chunk with numpy (``np.ix_`` form
    when several dimensions take arrays); ``chunk_dim_selection`` is the same
    selection per dimension (slices and 1-D integer arrays, orthogonal), the
    form partial decoders take.
    """

    chunk_coords: ChunkCoords
    chunk_selection: tuple[Any, ...]
    chunk_dim_selection: tuple[Any, ...]
    chunk_block_shape: Shape
    out_selection: tuple[Any, ...]
    out_block_shape: Shape
    is_complete: bool

    pick = None
    """Point projections pick elements out of ``chunk_dim_selection``'s box; this one takes it whole."""

    @property
    def write_selection(self) -> tuple[Any, ...]:
        """The selection a write of this block takes in its chunk."""
        return self.chunk_dim_selection



def whole_chunk_box(out: np.ndarray, proj: Any, chunk_shape: Shape) -> np.ndarray | None:
    """``out``'s region for ``proj`` (a chunk or point projection) when it
    takes its whole, unclipped chunk of ``chunk_shape`` into a box of ``out`` (a view a chunk
    can be decoded straight into); else None."""
    shape = tuple(chunk_shape)
    if not (
        proj.is_complete and proj.pick is None
        and tuple(proj.out_block_shape) == shape and tuple(proj.chunk_block_shape) == shape
        and all([isinstance(s, slice) and s.step in (None, 1) for s in proj.out_selection])
    ):
        return None
    box: np.ndarray = out[(*proj.out_selection, Ellipsis)]  # a view, also of a 0-d out (out[()] is a scalar)
    return box

@dataclass(slots=True)
class _DimPiece:
    chunk_index: int
    chunk_sel: slice | np.ndarray
    out_sel: slice | np.ndarray | None  # None: dimension dropped (integer index)
    nitems: int
    complete: bool


class _IntDim:
    __slots__ = ("index", "dim")
    nitems = 1
    drops = True

    def __init__(self, index: int, dim_len: int, dim: DimensionGrid):
        if not -dim_len <= index < dim_len:
            raise BoundsCheckError(f"index {index} is out of bounds for a dimension of length {dim_len}")
        self.index = index % dim_len if dim_len else index
        self.dim = dim

    def pieces(self) -> list[_DimPiece]:
        dim = self.dim
        ci = dim.index_to_chunk(self.index)
        off = self.index - dim.offset(ci)
        return [_DimPiece(ci, slice(off, off + 1), None, 1, dim.data_size(ci) == 1)]


class _SliceDim:
    __slots__ = ("start", "stop", "step", "nitems", "dim")
    drops = False

    def __init__(self, sel: slice, dim_len: int, dim: DimensionGrid):
        self.start, self.stop, self.step = sel.indices(dim_len)
        if self.step <= 0:
            raise SelectionError("negative or zero steps are handled as integer arrays")
        self.nitems = len(range(self.start, self.stop, self.step))
        self.dim = dim

    def pieces(self) -> list[_DimPiece]:
        """Per chunk touched, what this dimension takes from it (a list: the
        caller takes them all, and a list is cheaper than a generator)."""
        out: list[_DimPiece] = []
        if self.nitems == 0:
            return out
        start, stop, step = self.start, self.stop, self.step
        last = start + (self.nitems - 1) * step
        for ci, c0, c1 in self.dim.spans(start, last):
            first = start if start >= c0 else start + -(-(c0 - start) // step) * step
            end = min(stop, c1)
            if first >= end:
                continue
            n = -(-(end - first) // step)
            out0 = (first - start) // step
            complete = step == 1 and first == c0 and end == c1
            out.append(_DimPiece(ci, slice(first - c0, end - c0, step), slice(out0, out0 + n), n, complete))
        return out


class _ArrayDim:
    __slots__ = ("index", "nitems", "dim", "from_slice")
    drops = False

    def __init__(self, index: np.ndarray, dim_len: int, dim: DimensionGrid, *, from_slice: bool = False):
        self.from_slice = from_slice
        if index.dtype == bool:
            if index.shape != (dim_len,):  # a malformed mask, not an index past the end
                raise SelectionError(
                    f"boolean index of length {index.shape[0] if index.ndim == 1 else index.shape} "
                    f"does not match a dimension of length {dim_len}"
                )
            index = np.flatnonzero(index)
        index = index.astype(np.int64, copy=False)
        if index.size and (index.min() < -dim_len or index.max() >= dim_len):
            bad = index[(index < -dim_len) | (index >= dim_len)][0]
            raise BoundsCheckError(f"index {int(bad)} is out of bounds for a dimension of length {dim_len}")
        self.index = np.where(index < 0, index + dim_len, index)
        self.nitems = int(self.index.size)
        self.dim = dim

    def pieces(self) -> list[_DimPiece]:
        out: list[_DimPiece] = []
        if self.nitems == 0:
            return out
        idx, dim = self.index, self.dim
        chunk_ids = dim.chunks_of(idx)
        if np.all(chunk_ids[1:] >= chunk_ids[:-1]):
            order = None
            sorted_ids, sorted_idx = chunk_ids, idx
        else:
            order = np.argsort(chunk_ids, kind="stable")
            sorted_ids, sorted_idx = chunk_ids[order], idx[order]
        bounds = np.flatnonzero(np.diff(sorted_ids)) + 1
        starts = np.concatenate(([0], bounds))
        ends = np.concatenate((bounds, [len(sorted_ids)]))
        for s, e in zip(starts.tolist(), ends.tolist()):
            ci = int(sorted_ids[s])
            c0 = dim.offset(ci)
            local = sorted_idx[s:e] - c0
            region = dim.data_size(ci)
            complete = (e - s) == region and bool(np.array_equal(local, np.arange(region)))
            out_sel = slice(s, e) if order is None else order[s:e]
            out.append(_DimPiece(ci, local, out_sel, e - s, complete))
        return out


def _dim_indexer(sel: Any, dim_len: int, dim: DimensionGrid, allow_arrays: bool) -> _IntDim | _SliceDim | _ArrayDim:
    if isinstance(sel, slice):  # the usual case first
        check_slice(sel)
        if sel.step is not None and sel.step < 0:
            start, stop, step = sel.indices(dim_len)
            return _ArrayDim(np.arange(start, stop, step, dtype=np.int64), dim_len, dim, from_slice=True)
        return _SliceDim(sel, dim_len, dim)
    if isinstance(sel, (int, np.integer)) and not isinstance(sel, (bool, np.bool_)):
        return _IntDim(int(sel), dim_len, dim)
    if allow_arrays and is_array_like(sel):
        arr = as_index_array(sel)
        if arr.ndim == 0 and arr.dtype != bool:
            return _IntDim(int(arr), dim_len, dim)
        if arr.ndim != 1:
            raise SelectionError(
                f"an orthogonal index array must be 1-D, got shape {arr.shape}; "
                "use .vindex for numpy's pointwise indexing with N-D arrays"
            )
        return _ArrayDim(arr, dim_len, dim)
    if is_array_like(sel):
        raise SelectionError(
            f"a basic selection takes integers, slices and '...', got {type(sel).__name__}; "
            "for index arrays use .oindex (orthogonal) or .vindex (pointwise, as numpy)"
        )
    raise SelectionError(f"unsupported selection {sel!r}: use integers, slices, '...' or index arrays")


def _expand(selection: Any, ndim: int) -> tuple[Any, ...]:
    """Tuple-ise, expand ``...`` and pad with full slices."""
    items: tuple[Any, ...] = selection if isinstance(selection, tuple) else (selection,)
    n_ellipsis = 0
    for s in items:  # by identity: `None in items` would compare index arrays elementwise
        if s is None:
            raise SelectionError("np.newaxis (None) is not supported in zarr selections")
        if s is Ellipsis:
            n_ellipsis += 1
    if n_ellipsis > 1:
        raise SelectionError("a selection can contain at most one '...'")
    if n_ellipsis:
        i = next(i for i, s in enumerate(items) if s is Ellipsis)
        fill = ndim - (len(items) - 1)
        items = items[:i] + (slice(None),) * max(fill, 0) + items[i + 1 :]
    if len(items) > ndim:
        raise BoundsCheckError(f"too many indices: array is {ndim}-dimensional, selection has {len(items)}")
    return items + (slice(None),) * (ndim - len(items))


class OrthogonalIndexer:
    """Basic and orthogonal selections (``arr[...]`` and ``arr.oindex[...]``).

    ``shape`` is the output shape; iterating yields :class:`ChunkProjection`.
    With ``allow_arrays=False`` only integers, slices and ``...`` are accepted;
    plain ``__getitem__`` allows a single index array (where numpy's and
    orthogonal semantics agree).
    """

    flat_output = False

    def __init__(self, selection: Any, shape: Shape, grid: ChunkGrid | Shape, *, max_arrays: int | None = None):
        sel = _expand(selection, len(shape))
        self.grid = grid = as_grid(grid, shape)
        self.dims: list[_IntDim | _SliceDim | _ArrayDim] = []
        n_arrays = n_user_arrays = 0
        allow_arrays = max_arrays != 0
        for axis, (s, n, g) in enumerate(zip(sel, shape, grid.dims)):
            try:
                dim = _dim_indexer(s, n, g, allow_arrays)
            except (BoundsCheckError, SelectionError) as exc:
                raise type(exc)(f"{exc} (axis {axis})") from None
            self.dims.append(dim)
            if isinstance(dim, _ArrayDim):
                n_arrays += 1
                n_user_arrays += not dim.from_slice
        if max_arrays is not None and n_user_arrays > max_arrays:
            raise SelectionError(
                f"{n_user_arrays} index arrays where at most {max_arrays} may be given; "
                "use .oindex (orthogonal) or .vindex (pointwise, as numpy)"
            )
        self._kept = [i for i, d in enumerate(self.dims) if not d.drops]
        self.shape: Shape = tuple([self.dims[i].nitems for i in self._kept])
        # Only integers select a scalar; on a 0-d array, `...` keeps the 0-d
        # array (numpy: a[()] is the element, a[...] a 0-d array).
        self.is_scalar = not self._kept and not (not shape and _has_ellipsis(selection))
        self._ix = n_arrays > 1

    def __iter__(self) -> Iterator[ChunkProjection]:
        # List comprehensions, not generator expressions: inlined since
        # Python 3.12, they make the per-chunk work here a third cheaper.
        kept = self._kept
        for pieces in itertools.product(*[d.pieces() for d in self.dims]):
            dim_sel = tuple([p.chunk_sel for p in pieces])
            out_sel = tuple([pieces[i].out_sel for i in kept])
            chunk_sel = dim_sel
            if self._ix:
                chunk_sel = _ix(dim_sel)
                out_sel = _ix(out_sel)
            yield ChunkProjection(
                tuple([p.chunk_index for p in pieces]),
                chunk_sel,
                dim_sel,
                tuple([p.nitems for p in pieces]),
                out_sel,
                tuple([pieces[i].nitems for i in kept]),
                all([p.complete for p in pieces]),
            )


def _has_ellipsis(selection: Any) -> bool:
    return any([s is Ellipsis for s in (selection if isinstance(selection, tuple) else (selection,))])


def block_region(selection: Any, shape: Shape, grid: ChunkGrid | Shape, unit: str = "chunks") -> tuple[slice, ...]:
    """The array region (slices) a selection of block indices covers
    (zarr-python's ``blocks``): integers and step-1 slices over the chunks
    of ``grid`` (a chunk grid, or a regular chunk shape; named ``unit`` in
    messages), one Ellipsis at most; edge blocks are clipped to ``shape``.
    A slice is cut to the grid as numpy cuts one, so a slice past the last
    block is empty."""
    grid = as_grid(grid, shape)
    ndim = len(shape)
    items = selection if isinstance(selection, tuple) else (selection,)
    if sum(item is Ellipsis for item in items) > 1:
        raise SelectionError("a block selection may hold one Ellipsis at most")
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items = items[:i] + (slice(None),) * (ndim - len(items) + 1) + items[i + 1:]
    if len(items) > ndim:
        raise SelectionError(f"block selection {selection!r} has more than {ndim} dimensions")
    items = items + (slice(None),) * (ndim - len(items))
    region = []
    for axis, (item, dim) in enumerate(zip(items, grid.dims)):
        n = dim.nchunks
        if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            i = int(item) + n if item < 0 else int(item)
            if not 0 <= i < n:
                raise BoundsCheckError(f"block index {int(item)} is out of bounds for axis {axis} with {n} {unit}")
            start, stop = i, i + 1
        elif isinstance(item, slice) and item.step in (None, 1):
            check_slice(item)
            start, stop, _ = item.indices(n)
            stop = max(start, stop)
        else:
            raise SelectionError(f"block selection: expected integers or slices with step 1, got {item!r}")
        if start == stop:
            edge = dim.offset(start) if start < n else dim.extent
            region.append(slice(edge, edge))
        else:
            region.append(slice(dim.offset(start), dim.offset(stop - 1) + dim.data_size(stop - 1)))
    return tuple(region)


def _ix(sel: tuple[Any, ...]) -> tuple[Any, ...]:
    """Orthogonal indexing for mixed slices and arrays via ``np.ix_`` (the
    slices here are the indexer's own: explicit start and stop, positive step)."""
    parts = [np.arange(s.start, s.stop, s.step or 1) if isinstance(s, slice) else s for s in sel]
    return np.ix_(*parts)


__all__ = ["ChunkProjection", "OrthogonalIndexer", "block_region"]
