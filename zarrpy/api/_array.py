"""The user-facing Array: numpy-style reads and writes over chunked storage.

This module is the API only: it parses selections and values and hands chunk
work to :class:`~zarrpy.pipeline.chunk_io.ChunkIO`, the one layer that
touches both the store and the codecs.
"""

from __future__ import annotations

import copy
import functools
import itertools
import math
from typing import Any, Callable, Iterable, Iterator, Literal, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ..codecs.abc import ArrayToBytesCodec, BytesToBytesCodec, ArrayToArrayCodec, Codec
from ..core._typing import ArrayValueLike, BasicSelection, ChunkCoords, MaskLike, Selection, Shape
from ..core.chunk_grid import REGULAR, REGULAR_BOUNDED, ChunkGrid
from ..core.indexing import ChunkProjection, OrthogonalIndexer, block_region
from ..core.point_indexing import has_index_arrays, is_orthogonal_arrays, is_vectorized, with_index_arrays
from ..errors import IrregularChunksError, ProcessLocalError, SelectionError
from ..metadata.nodes import ArrayMetadata
from ..metadata.v3 import ArrayMetadataV3
from ..pipeline.cache_hook import ChunkCache
from ..pipeline.synchronizer import Synchronizer
from ..pipeline.chunk_io import StoredSizes, BlockWrite, ChunkData, ChunkIO, Indexer
from ..pipeline.convert import v2_to_v3
from ..pipeline.values import coerce_value, ragged_rows, user_fill
from ..stores.abc import Store
from ._buffer_fit import Buffer, read_into
from ._info import ArrayInfo, dtype_text
from ._node import Node, array_metadata, location, read_nodes


_LISTED_CHUNKS = 64
"""Whole-array indexers over at most this many chunks keep their projections."""


class _ListedIndexer(OrthogonalIndexer):
    """An :class:`OrthogonalIndexer` whose projections are listed once
    (they are frozen: every read of the same selection gets the same ones)."""

    def __init__(self, indexer: OrthogonalIndexer):  # noqa: D107 -- copies a built indexer
        self.__dict__.update(indexer.__dict__)
        self._projections = tuple(OrthogonalIndexer.__iter__(indexer))

    def __iter__(self) -> Iterator[ChunkProjection]:
        return iter(self._projections)


@functools.lru_cache(maxsize=256)
def _whole_indexer(shape: Shape, grid: ChunkGrid | Shape) -> OrthogonalIndexer:
    """``a[...]``'s indexer for any array of ``shape`` read on ``grid`` (a
    regular grid given as its chunk shape, cheaper to hash): the same for
    all of them, so built once (with its projections listed when there are
    few), not on every whole read."""
    indexer = OrthogonalIndexer(Ellipsis, shape, grid, max_arrays=1)
    if indexer.grid.nchunks <= _LISTED_CHUNKS:
        return _ListedIndexer(indexer)
    return indexer


WRITE_BATCH = 4096
"""Chunks a write plans and encodes at a time: bounds the memory of writes
over huge regions (a larger write is not all-or-nothing across batches)."""


class Array(Node[ArrayMetadata]):
    """A chunked, compressed N-dimensional array in a store.

    Open one with :func:`zarrpy.open_array` or create one with
    :func:`zarrpy.create_array`. Indexing follows numpy: ``a[1:5, ::2]``,
    ``a[..., 3]``, ``a[-1]``; ``a.oindex[[1, 5], :]`` selects orthogonally,
    ``a.vindex[[1, 5], [0, 2]]`` pointwise (numpy's advanced indexing).
    """

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: ArrayMetadata,
        *,
        read_only: bool = False,
        write_empty_chunks: bool = False,
        cache: ChunkCache | None = None,
        synchronizer: Synchronizer | None = None,
        subchunk_write_order: str | None = None,
    ):
        self._write_empty_chunks = bool(write_empty_chunks)
        self._subchunk_write_order = subchunk_write_order
        self._cache = cache
        self._synchronizer = synchronizer
        super().__init__(store, path, metadata, read_only=read_only)

    _kind = "array"

    def _apply_metadata(self, stored: ArrayMetadata) -> None:
        # The stored document (V3 or V2) is kept for writing back; the
        # pipeline always runs on one V3 description of the same bytes.
        self._metadata = stored
        self._v3 = metadata = stored if isinstance(stored, ArrayMetadataV3) else v2_to_v3(stored)
        self._io = ChunkIO(
            self._store, self._path, metadata, write_empty_chunks=self.write_empty_chunks, cache=self._cache,
            synchronizer=self._synchronizer, subchunk_write_order=self._subchunk_write_order,
        )
        inner = self._io.inner
        self._inner_chain = inner.codecs if inner is not None else self._io.chain

    @property
    def cache(self) -> ChunkCache | None:
        """The cache decoded chunks are read through (``open_array(..., cache=)``), or None."""
        return self._cache

    @property
    def synchronizer(self) -> Synchronizer | None:
        """Locks chunks across processes during writes (``synchronizer=``), or None."""
        return self._synchronizer

    @property
    def write_empty_chunks(self) -> bool:
        """Store chunks that hold only the fill value (default False: delete them)."""
        return self._write_empty_chunks

    @write_empty_chunks.setter
    def write_empty_chunks(self, value: bool) -> None:
        self._write_empty_chunks = self._io.write_empty_chunks = bool(value)

    @property
    def subchunk_write_order(self) -> str | None:
        """The order inner chunks are written in inside each shard
        (``subchunk_write_order=`` of :func:`zarrpy.create_array` and
        :func:`zarrpy.open_array`: ``"lexicographic"`` unless given), or None
        when the array is not sharded. A write setting: the metadata does
        not hold it (as in zarr-python), and reads take any order."""
        order = getattr(self._io.chain.array_to_bytes, "subchunk_write_order", None)  # the API names no codec
        return order if isinstance(order, str) else None

    @classmethod
    def open(
        cls, store: Store, path: str = "", *, read_only: bool = False, zarr_format: int | None = None,
        write_empty_chunks: bool = False, cache: ChunkCache | None = None, synchronizer: Synchronizer | None = None,
        subchunk_write_order: str | None = None,
    ) -> Array:
        """Open the array at ``path`` of ``store`` (``zarr_format`` None: whichever
        is there). NodeNotFoundError when there is none, or a group is there.
        Users call :func:`zarrpy.open_array`, which also takes paths and URLs."""
        metadata = array_metadata(store, path, read_nodes(store, [path], zarr_format)[0], zarr_format)
        return cls(store, path, metadata, read_only=read_only, write_empty_chunks=write_empty_chunks, cache=cache,
                   synchronizer=synchronizer, subchunk_write_order=subchunk_write_order)

    # -- description ---------------------------------------------------
    @property
    def shape(self) -> Shape:
        """The array's shape (elements along each dimension)."""
        return self._v3.shape

    @property
    def chunks(self) -> Shape:
        """Shape of a chunk (the inner chunk of a sharded array, as in zarr-python).

        Raises IrregularChunksError (a NotImplementedError, as zarr-python
        raises) for an unsharded array whose chunk grid is ``rectilinear``
        with edges of several lengths: see :attr:`read_chunk_sizes`."""
        grid = self._io.unit_grid
        if not grid.is_regular:
            raise IrregularChunksError(
                f"array {self.name!r} has a {grid.kind} chunk grid: its chunks have no single shape; "
                "use read_chunk_sizes (or write_chunk_sizes) for each chunk's size"
            )
        return grid.chunk_shape

    @property
    def shards(self) -> Shape | None:
        """Shape of a shard, or None when the array is not sharded.

        Raises IrregularChunksError (a NotImplementedError, as zarr-python)
        when the shard grid is ``rectilinear``: see :attr:`write_chunk_sizes`."""
        if self._io.inner is None:
            return None
        grid = self._io.grid
        if not grid.is_regular:
            raise IrregularChunksError(
                f"array {self.name!r} has a {grid.kind} shard grid: its shards have no single shape; "
                "use write_chunk_sizes for each shard's size"
            )
        return grid.chunk_shape

    @property
    def is_sharded(self) -> bool:
        """True when the stored chunks are shards (one ``sharding_indexed`` codec)."""
        return self._io.inner is not None

    @property
    def read_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Per dimension, the size of each chunk reads go by (the inner chunks
        of a sharded array), clipped to the array: dask's ``chunks``
        convention, zarr-python's name. Any chunk grid."""
        return self._io.unit_grid.chunk_sizes

    @property
    def write_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Per dimension, the size of each stored chunk (each shard of a
        sharded array), clipped to the array; zarr-python's name. Any chunk grid."""
        return self._io.grid.chunk_sizes

    @property
    def chunk_grid(self) -> dict[str, Any]:
        """The ``chunk_grid`` member of the metadata, as stored in a V3
        ``zarr.json`` (``regular`` for a V2 array)."""
        return self._v3.grid_spec.to_json()

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the elements as read (native byte order;
        ``StringDType`` for strings, object for variable-length bytes)."""
        return self._v3.data_type.numpy

    @property
    def fill_value(self) -> Any:
        """The fill value (zarrs' optional types: ``numpy.ma.masked`` for
        missing, else the inner value)."""
        return user_fill(self._v3.data_type, self._v3.fill_value)

    @property
    def nbytes(self) -> int:
        """Bytes the whole array takes in memory, uncompressed."""
        return self.size * self.dtype.itemsize

    @property
    def codecs(self) -> tuple[Codec, ...]:
        """The whole stored codec chain (for a sharded array: the sharding codec)."""
        return self._io.chain.codecs

    @property
    def filters(self) -> tuple[ArrayToArrayCodec, ...]:
        """Array-to-array codecs (inside the shards of a sharded array)."""
        return self._inner_chain.array_to_array

    @property
    def serializer(self) -> ArrayToBytesCodec:
        """The array-to-bytes codec (inside the shards of a sharded array)."""
        return self._inner_chain.array_to_bytes

    @property
    def compressors(self) -> tuple[BytesToBytesCodec, ...]:
        """Bytes-to-bytes codecs (inside the shards of a sharded array)."""
        return self._inner_chain.bytes_to_bytes

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        """A name (or None) per dimension, as stored; None when the metadata has none."""
        return self._v3.dimension_names

    @property
    def cdata_shape(self) -> Shape:
        """Number of chunks along each dimension (inner chunks of a sharded array)."""
        return self._io.unit_grid.grid_shape

    @property
    def nchunks(self) -> int:
        """Number of chunks in the grid (inner chunks of a sharded array), stored or not."""
        return math.prod(self.cdata_shape)

    def chunk_key(self, coords: ChunkCoords) -> str:
        """The store key of the chunk at grid ``coords``."""
        return self._io.key(coords)

    # -- what is stored: one listing each, never a chunk read ------------
    def stored_chunk_keys(self) -> list[str]:
        """Keys of the chunks present in the store (shards, when sharded),
        sorted by chunk coordinates (row-major: ``c/0/9`` before ``c/1/0``,
        ``c/2`` before ``c/10``) on every store, whatever order it lists in."""
        return [chunk.key for chunk in self._io.stored_keys()]

    def _stored_sizes(self) -> StoredSizes:
        """Stored chunk objects and bytes of metadata and chunks, from the
        sizes the store lists (:meth:`Store.list_prefix_with_sizes`)."""
        return self._io.stored_sizes(self._metadata.to_documents())

    def _chunks_per_object(self) -> int:
        """Chunks in one stored object: a whole shard's inner chunks, or 1
        (a shard grid of several shard shapes: see :meth:`_chunks_in_objects`)."""
        if not self.is_sharded:
            return 1
        return math.prod(s // c for s, c in zip(self._v3.chunk_shape, self.chunks))

    def _chunks_in_objects(self, nobjects: int) -> int:
        """Inner chunks in the stored objects (``nobjects`` of them), each shard
        counting all its inner chunks, as zarr-python 3.1+ counts them."""
        if not self.is_sharded or self._io.grid.uniform_chunk_shape is not None:
            return nobjects * self._chunks_per_object()
        grid, inner = self._io.grid, self.chunks
        return sum(math.prod(s // c for s, c in zip(grid.chunk_shape_at(chunk.coords), inner))
                   for chunk in self._io.stored_keys() if grid.contains(chunk.coords))

    def nbytes_stored(self) -> int:
        """Bytes of metadata and chunks in the store, from the sizes the store
        reports (no value is downloaded)."""
        return self._stored_sizes().nbytes

    @property
    def nshards_initialized(self) -> int:
        """Stored chunk objects: shards of a sharded array, else chunks
        (zarr-python's ``_nshards_initialized``)."""
        return len(self.stored_chunk_keys())

    @property
    def nchunks_initialized(self) -> int:
        """Chunks initialized, counted as zarr-python 3.1+ does: each stored
        shard counts all its inner chunks (so edge shards can make this exceed
        ``nchunks``); unsharded, the number of stored chunks."""
        return self._chunks_in_objects(self.nshards_initialized)

    @property
    def info(self) -> ArrayInfo:
        """A printable summary (``print(a.info)``): metadata and one listing
        for the initialized chunk count; no chunk is read."""
        return ArrayInfo.of(self)

    def info_complete(self) -> ArrayInfo:
        """:attr:`info` plus stored bytes and storage ratio (zarr-python's
        name): one listing with sizes, no chunk is read."""
        return ArrayInfo.of(self, complete=True)

    def __repr__(self) -> str:
        return f"<zarrpy.Array {self._where} shape={self.shape} dtype={dtype_text(self)}>"

    @property
    def order(self) -> Literal["C", "F"]:
        """The memory order of the chunks as stored: a V2 array's ``order``
        ("C" or "F"); "C" for V3, whose chunks are C order (a ``transpose``
        filter stores another), as zarr-python's default."""
        order = getattr(self._metadata, "order", "C")
        return "F" if order == "F" else "C"

    @property
    def metadata(self) -> ArrayMetadata:
        """The stored metadata document (V3, or V2 for a V2 array)."""
        return self._metadata

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        out = np.asarray(self[...])
        return out if dtype is None else out.astype(dtype)

    def _reopen_args(self) -> tuple[Store, str, bool, bool, Synchronizer | None, str | None]:
        """What :func:`_reopen` needs for another handle on this array: store and
        path, with the synchronizer and the write settings (not the cache,
        which holds this process's memory)."""
        return (self._store, self._path, self._read_only, self.write_empty_chunks, self._synchronizer,
                self._subchunk_write_order)

    def __reduce__(self) -> tuple[Callable[..., Array], tuple[Any, ...]]:
        """Pickles by store and path; the worker that unpickles it reopens it.

        Raises ProcessLocalError when the store lives in this process's memory
        (``MemoryStore``, fsspec's ``memory://``): whether a pickle crosses a
        process boundary cannot be told, and a copy in another process would
        read another store's data and lose its writes. ``copy.copy`` and
        ``copy.deepcopy`` do not pickle and work on every store.
        """
        if self._store.process_local:
            store = self._store.display_name
            raise ProcessLocalError(
                f"cannot pickle array {self.name!r} on {store!r}: that store lives in this process's memory, "
                "so another process (a dask or multiprocessing worker) would not see its data and its writes "
                "would be lost. Put the array in a directory (a path or LocalStore) or an object store "
                "(s3://, gs://, ...) to share it between processes; within one process use dask's threaded "
                "scheduler (scheduler='threads'), which does not pickle"
            )
        return (_reopen, self._reopen_args())

    def __copy__(self) -> Array:
        return _reopen(*self._reopen_args())

    def __deepcopy__(self, memo: dict[int, Any]) -> Array:
        # As the copy module did through __reduce__: the arguments deep-copied
        # (a MemoryStore copies its contents), then reopened.
        return _reopen(*copy.deepcopy(self._reopen_args(), memo))

    def __dask_tokenize__(self) -> tuple[Any, ...]:
        """dask's token (``dask.base.tokenize``): the store, the path and the
        metadata, without pickling the array (refused on in-memory stores)."""
        return ("zarrpy.Array", self._store.identity, self._path, self._metadata.to_documents())

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Array)
            and other._store == self._store
            and other._path == self._path
            and other._metadata == self._metadata
        )

    __hash__ = object.__hash__

    # -- reading -------------------------------------------------------
    def __getitem__(self, selection: Selection) -> Any:
        return self._read(self._plain_indexer(selection))

    def get_basic_selection(self, selection: BasicSelection = Ellipsis, *, out: np.ndarray | None = None) -> Any:
        """Integers and slices per dimension (``a[...]``); ``out``: see :meth:`read`."""
        return self._read(self._basic_indexer(selection), out)

    def get_orthogonal_selection(self, selection: Selection, *, out: np.ndarray | None = None) -> Any:
        """Each dimension indexed on its own (``a.oindex[...]``); ``out``: see :meth:`read`."""
        return self._read(self._orthogonal_indexer(selection), out)

    def get_coordinate_selection(self, selection: Selection, *, out: np.ndarray | None = None) -> Any:
        """Points: one integer array per dimension, broadcast together
        (``a.vindex[rows, cols]``); the result has the broadcast shape.
        ``out``: see :meth:`read`."""
        return self._read(self._coordinate_indexer(selection), out)

    def get_mask_selection(self, mask: MaskLike, *, out: np.ndarray | None = None) -> Any:
        """The elements where the boolean ``mask`` (of the array's shape) is
        True, in C order, as ``data[mask]``; ``out``: see :meth:`read`."""
        return self._read(self._mask_indexer(mask), out)

    def get_vectorized_selection(self, selection: Selection, *, out: np.ndarray | None = None) -> Any:
        """numpy's advanced indexing (``a.vindex[...]``): integer arrays and
        N-D boolean masks broadcast into points, slices mixed in add their
        dimensions where numpy puts them; ``out``: see :meth:`read`."""
        return self._read(self._vector_indexer(selection), out)

    def read(self, selection: Selection = Ellipsis, *, out: np.ndarray | None = None) -> Any:
        """``a[selection]``, or with ``out`` written straight into the caller's
        numpy array (of the selection's shape and the array's dtype; a view of
        a bigger array is fine) with no intermediate array; returns ``out``.

        Raises SelectionError naming both shapes (or dtypes) when ``out`` does
        not fit; ragged and optional arrays build their results and take no ``out``.
        """
        return self._read(self._plain_indexer(selection), out)

    def read_into(self, buf: Buffer, selection: Selection = Ellipsis) -> Buffer:
        """Read ``a[selection]`` into the growable buffer ``buf`` and return it.

        ``buf``'s size becomes the number of rows read (the first axis of the
        result) and it reallocates only when its capacity is short: reading
        same-size windows again and again allocates once, and a shorter last
        window just sets a smaller size. Fixed-size types take a
        :class:`~zarrpy.buffers.GrowableArray` of the array's dtype whose
        ``shape_tail`` is the rest of the result's shape, and the chunks are
        scattered straight into it; strings, bytes and ragged vectors take a
        :class:`~zarrpy.buffers.GrowableRagged` of that kind and a 1-D result.

        Raises SelectionError when the selection picks one element (no rows)
        or the buffer's kind, dtype or row shape does not fit (naming both).
        """
        label = f"array at {location(self._store, self._path)}"
        return read_into(self, buf, selection, self.selection_shape(selection), label)

    def selection_shape(self, selection: Selection) -> Shape:
        """The shape ``a[selection]`` has, from the selection alone (nothing is read)."""
        return tuple(self._plain_indexer(selection).shape)

    @property
    def oindex(self) -> _Selector:
        """Orthogonal selection: each dimension indexed independently."""
        return _Selector(self.get_orthogonal_selection, self.set_orthogonal_selection)

    @property
    def vindex(self) -> _Selector:
        """Vectorised (pointwise) selection, as numpy's advanced indexing:
        ``a.vindex[[0, 2], [1, 3]]`` is the two elements ``(0, 1)`` and
        ``(2, 3)``; ``a.vindex[mask]`` the elements where an N-D boolean mask
        is True. Assignable too; where points repeat, the last value wins."""
        return _Selector(self.get_vectorized_selection, self.set_vectorized_selection)

    @property
    def validity(self) -> _Selector:
        """zarrs' optional types: ``a.validity[selection]`` (any selection
        ``a[selection]`` takes) is a bool array of the selection's shape plus
        one last axis, one entry per optional level, outermost first: True
        where the element is present at that level. ``a[selection]`` is
        masked where any level is missing; for ``optional(optional(T))``,
        ``[True, False]`` is an outer value that is a missing inner one (fill
        ``[null]``), ``[False, False]`` a missing outer one (fill ``null``).
        Read-only; DataTypeError for arrays of other types."""
        return _Selector(lambda selection: self._io.read_validity(self._plain_indexer(selection)), _read_only_validity)

    def _plain_indexer(self, selection: Any, *, write: bool = False) -> Indexer:
        """``a[selection]``'s indexer, routed as zarr-python routes it
        (see :func:`~zarrpy.core.point_indexing.is_vectorized`); a write's
        projections address stored chunks, a read's the read unit."""
        if selection is Ellipsis:  # the whole array: built once per shape and grid
            return _whole_indexer(self.shape, self._io.index_keys[0 if write else 1])
        selection = with_index_arrays(selection)
        if is_vectorized(selection, self.ndim):
            return self._io.point_indexer(selection, write=write)
        max_arrays = None if is_orthogonal_arrays(selection, self.ndim) else 1  # a[mask0, mask1]: np.ix_
        return OrthogonalIndexer(selection, self.shape, self._chunk_grid(write), max_arrays=max_arrays)

    def _chunk_grid(self, write: bool) -> ChunkGrid:
        return self._io.grid if write else self._io.read_grid

    def _basic_indexer(self, selection: Any, *, write: bool = False) -> OrthogonalIndexer:
        return OrthogonalIndexer(selection, self.shape, self._chunk_grid(write), max_arrays=0)

    def _orthogonal_indexer(self, selection: Any, *, write: bool = False) -> OrthogonalIndexer:
        return OrthogonalIndexer(with_index_arrays(selection), self.shape, self._chunk_grid(write))

    def _vector_indexer(self, selection: Any, *, write: bool = False) -> Indexer:
        selection = with_index_arrays(selection)
        if not has_index_arrays(selection) or not self.ndim:
            return self._basic_indexer(selection, write=write)
        return self._io.point_indexer(selection, write=write)

    def _coordinate_indexer(self, selection: Any, *, write: bool = False) -> Indexer:
        items = with_index_arrays(selection)
        items = items if isinstance(items, tuple) else (items,)
        for item in items:
            integer = isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))
            if not integer and not (isinstance(item, np.ndarray) and item.dtype.kind in "iu"):
                raise SelectionError(
                    f"coordinate selection: expected integers or integer arrays, one per dimension, got {item!r}; "
                    "use .vindex for masks and slices"
                )
        if len(items) != self.ndim:
            raise SelectionError(
                f"coordinate selection: {len(items)} index arrays for a {self.ndim}-dimensional array"
            )
        return self._io.point_indexer(items, write=write)

    def _mask_indexer(self, mask: Any, *, write: bool = False) -> Indexer:
        mask = with_index_arrays(mask)
        if not isinstance(mask, np.ndarray) or mask.dtype != bool or mask.shape != self.shape:
            got = f"{mask.dtype} array of shape {mask.shape}" if isinstance(mask, np.ndarray) else type(mask).__name__
            raise SelectionError(f"mask selection: expected a boolean array of shape {self.shape}, got {got}")
        if not self.ndim:
            raise SelectionError("mask selection of a 0-d array: read it with a[()]")
        return self._io.point_indexer(mask, write=write)

    @property
    def blocks(self) -> _Selector:
        """Selection by stored chunk, as zarr-python's ``blocks``: ``a.blocks[i, j]``
        is the region of chunk ``(i, j)`` (of shard ``(i, j)`` in a sharded
        array), ``a.blocks[1:3]`` that of blocks 1 and 2; assignable too. A
        slice past the last block is empty, as numpy cuts a slice. For the
        inner chunks of a sharded array see :attr:`inner_blocks`."""
        return _Selector(self.get_block_selection, self.set_block_selection)

    def get_block_selection(self, selection: BasicSelection) -> Any:
        """The region of the blocks (chunks, or shards when sharded) ``selection``
        picks by index (integers and slices; see :attr:`blocks`), as ``a[region]`` reads it."""
        return self[self._block_region(selection, inner=False)]

    def set_block_selection(self, selection: BasicSelection, value: ArrayValueLike) -> None:
        """Write ``value`` (broadcast) to the region of the blocks ``selection`` picks (see :attr:`blocks`)."""
        self[self._block_region(selection, inner=False)] = value

    @property
    def inner_blocks(self) -> _Selector:
        """Selection by chunk of :attr:`chunks` (the inner chunks of a sharded
        array; the same as :attr:`blocks` otherwise): ``a.inner_blocks[i, j]``
        is the region of inner chunk ``(i, j)``, on the grid of :attr:`cdata_shape`."""
        return _Selector(self.get_inner_block_selection, self.set_inner_block_selection)

    def get_inner_block_selection(self, selection: BasicSelection) -> Any:
        """The region of the inner chunks ``selection`` picks (see :attr:`inner_blocks`)."""
        return self[self._block_region(selection, inner=True)]

    def set_inner_block_selection(self, selection: BasicSelection, value: ArrayValueLike) -> None:
        """Write ``value`` (broadcast) to the region of the inner chunks ``selection`` picks."""
        self[self._block_region(selection, inner=True)] = value

    def _block_region(self, selection: Any, *, inner: bool) -> tuple[slice, ...]:
        """The array region (slices) a selection of block indices covers: on the
        grid of :attr:`chunks` (``inner``) or of the stored chunks (shards)."""
        if inner or not self.is_sharded:
            return block_region(selection, self.shape, self._io.unit_grid, "chunks")
        return block_region(selection, self.shape, self._io.grid, "shards")

    def _read(self, indexer: Indexer, out: np.ndarray | None = None) -> Any:
        return self._io.read(indexer, out)

    # -- block API -----------------------------------------------------
    def read_chunk(self, coords: ChunkCoords) -> np.ndarray:
        """The part of the array one chunk covers (see :meth:`read_chunks`)."""
        return self.read_chunks([coords])[0]

    def read_chunks(self, coords_list: Iterable[ChunkCoords]) -> list[np.ndarray]:
        """Many chunks (inner chunks of a sharded array) in one call.

        Each result is the chunk's region of the array (edge chunks clipped to
        the array's shape), in the order asked. Chunks in one shard share one
        index read; stored objects are fetched in batches on the thread pool.
        """
        return self._io.read_chunks(list(coords_list))

    def write_chunks(self, chunks: Mapping[ChunkCoords, Any]) -> None:
        """Write many chunks (inner chunks of a sharded array) in one call.

        ``chunks`` maps chunk coords to data shaped like the chunk's region of
        the array (edge chunks clipped). Writes are grouped by stored object:
        each shard is read at most once (not at all when the call covers it
        whole) and written once; other inner chunks keep their bytes.
        """
        self._check_writable()
        items = []
        grid = self._io.unit_grid
        for coords, data in chunks.items():
            coords = tuple(int(c) for c in coords)
            if not grid.contains(coords):
                raise SelectionError(f"chunk {coords} is outside the chunk grid {grid.grid_shape}")
            items.append(ChunkData(coords, self._coerce(data, grid.data_shape_at(coords))))
        self._io.write_chunks(items)

    # -- writing -------------------------------------------------------
    def __setitem__(self, selection: Selection, value: ArrayValueLike) -> None:
        self._write(self._plain_indexer(selection, write=True), value)

    def set_basic_selection(self, selection: BasicSelection, value: ArrayValueLike) -> None:
        """Write ``value`` (broadcast to the selection's shape) at integers and
        slices per dimension, as ``a[selection] = value``."""
        self._write(self._basic_indexer(selection, write=True), value)

    def set_orthogonal_selection(self, selection: Selection, value: ArrayValueLike) -> None:
        """Write ``value`` (broadcast) where each dimension is indexed on its own
        (``a.oindex[selection] = value``); repeated indices: the last value wins."""
        self._write(self._orthogonal_indexer(selection, write=True), value)

    def set_coordinate_selection(self, selection: Selection, value: ArrayValueLike) -> None:
        """Write ``value`` (broadcast to the points' shape) at the points of
        :meth:`get_coordinate_selection`; where points repeat, the last value wins."""
        self._write(self._coordinate_indexer(selection, write=True), value)

    def set_mask_selection(self, mask: MaskLike, value: ArrayValueLike) -> None:
        """Write ``value`` where the boolean ``mask`` (of the array's shape) is True."""
        self._write(self._mask_indexer(mask, write=True), value)

    def set_vectorized_selection(self, selection: Selection, value: ArrayValueLike) -> None:
        """``a.vindex[selection] = value`` (see :attr:`vindex`)."""
        self._write(self._vector_indexer(selection, write=True), value)

    def _coerce(self, value: Any, shape: Shape) -> np.ndarray:
        """``value`` as this array's elements broadcast to ``shape``, or a clear
        error before anything is written (numpy's assignment rules)."""
        return self._io.form.coerce(value, shape)

    def _write(self, indexer: Indexer, value: Any) -> None:
        """Each chunk the selection touches is read (unless covered whole),
        merged and written once, under its key's lock: never a read-modify-write
        of the array, which would lose other writers' updates."""
        self._check_writable()
        value = self._coerce(value, indexer.shape)
        if indexer.flat_output:
            value = value.reshape(-1)
        blocks = (BlockWrite(p, value[(*p.out_selection, Ellipsis)]) for p in indexer)
        # A write of up to WRITE_BATCH chunks encodes every chunk before storing the first
        # (all or nothing); a larger one streams batch by batch in bounded memory.
        while batch := list(itertools.islice(blocks, WRITE_BATCH)):
            self._io.write(batch)

    # -- shape changes -------------------------------------------------
    def resize(self, *new_shape: int | Sequence[int]) -> None:
        """Change the shape. Chunks wholly outside the new shape are deleted;
        chunks cut by the new edge are rewritten with the fill value past it,
        so growing again later shows fill, never stale data."""
        self._check_writable()
        first = new_shape[0] if len(new_shape) == 1 else None
        # resize(2, 3) or resize((2, 3)); int() as given (numpy integers too)
        dims: Sequence[Any] = first if first is not None and not isinstance(first, int) else new_shape
        shape = tuple(int(s) for s in dims)
        if len(shape) != self.ndim or any(s < 0 for s in shape):
            raise SelectionError(f"new shape {shape} must have {self.ndim} non-negative dimensions")
        self._io.forget_all()  # cached edge chunks are clipped to the old shape
        stored = self._metadata
        new = stored.resized(shape) if isinstance(stored, ArrayMetadataV3) else stored.evolve(shape=shape)
        new_v3 = new if isinstance(new, ArrayMetadataV3) else v2_to_v3(new)
        if self._io.grid.kind != REGULAR:  # the resized grid checked before anything changes (shards stay
            ChunkIO(self._store, self._path, new_v3)  # whole inner chunks when a rectilinear one grows)
        if any(n < o for n, o in zip(shape, self.shape)) or self._io.grid.kind == REGULAR_BOUNDED:
            self._io.fit(new_v3)
        self._write_metadata(new)

    def append(self, data: ArrayValueLike, axis: int = 0) -> Shape:
        """Grow along ``axis`` and write ``data`` into the new part."""
        ragged = self._io.form.ragged
        if ragged is not None:
            data = ragged_rows(data, ragged)
        elif not isinstance(data, np.ndarray) or data.dtype != self.dtype:
            data = coerce_value(data, self._v3.data_type, np.shape(data))
        if data.ndim != self.ndim:
            raise SelectionError(f"data has {data.ndim} dimensions, array has {self.ndim}")
        axis = axis % self.ndim
        for i, (a, b) in enumerate(zip(data.shape, self.shape)):
            if i != axis and a != b:
                raise SelectionError(f"data shape {data.shape} does not match array shape {self.shape} off axis {axis}")
        old = self.shape[axis]
        new_shape = tuple(s + data.shape[axis] if i == axis else s for i, s in enumerate(self.shape))
        self.resize(new_shape)
        sel = tuple(slice(old, None) if i == axis else slice(None) for i in range(self.ndim))
        self[sel] = data
        return self.shape


class _Selector:
    """``a.oindex`` / ``a.blocks`` …: ``[]`` reads and writes through one pair of methods."""

    __slots__ = ("_get", "_set")

    def __init__(self, get: Callable[[Any], Any], set_: Callable[[Any, Any], None]):
        self._get, self._set = get, set_

    def __getitem__(self, selection: Any) -> Any:
        return self._get(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._set(selection, value)


def _read_only_validity(selection: Any, value: Any) -> None:
    raise TypeError("a.validity is read-only: write masked values (missing at the outermost level), None, "
                    "or elements built by zarrpy.core.dtypes.optional.optional_elements")


def _reopen(
    store: Store, path: str, read_only: bool, write_empty_chunks: bool, synchronizer: Synchronizer | None = None,
    subchunk_write_order: str | None = None,
) -> Array:
    return Array.open(store, path, read_only=read_only, write_empty_chunks=write_empty_chunks,
                      synchronizer=synchronizer, subchunk_write_order=subchunk_write_order)


__all__ = ["Array"]
