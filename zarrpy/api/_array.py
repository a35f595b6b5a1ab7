"""The user-facing Array: numpy-style reads and writes over chunked storage.

This module orchestrates: the indexer says which chunks a selection touches,
the store fetches their bytes in one batch, the bound codec chain decodes them
on the shared pool, and the results are scattered into the output. Writes run
the same path backwards (read-modify-write only for partly covered chunks).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ._info import ArrayInfo
from ._node import ARRAY_METADATA, Node, join_key, location, read_metadata
from ..pipeline.convert import v2_to_v3
from ..metadata.v2 import ArrayMetadataV2
from ..core._typing import ChunkCoords, Shape
from ..core.chunk_grid import RegularChunkGrid
from ..metadata.chunk_key_encoding import decode_chunk_key, encode_chunk_key
from ..codecs.abc import ChunkSpec
from ..codecs.chain import CodecChain
from ..pipeline.concurrency import for_each_batch, map_chunks
from ..errors import (
    BoundsCheckError,
    CodecError,
    NodeNotFoundError,
    SelectionError,
    at_key,
)
from ..core.indexing import ChunkProjection, OrthogonalIndexer
from ..core.ragged import RaggedArray
from ..pipeline.locks import locked
from ..pipeline.values import all_equal, coerce_ragged, coerce_value, empty_elements, fill_scalar, from_numpy, to_numpy
from ..metadata.v3 import ArrayMetadataV3
from ..stores.abc import Store


class Array(Node):
    """A chunked, compressed N-dimensional array in a store.

    Open one with :func:`zarrpy.open_array` or create one with
    :func:`zarrpy.create_array`. Indexing follows numpy: ``a[1:5, ::2]``,
    ``a[..., 3]``, ``a[-1]``; ``a.oindex[[1, 5], :]`` selects orthogonally.
    """

    def __init__(
        self,
        store: Store,
        path: str,
        metadata: ArrayMetadataV3,
        *,
        read_only: bool = False,
        write_empty_chunks: bool = False,
    ):
        self.write_empty_chunks = write_empty_chunks
        super().__init__(store, path, metadata, read_only=read_only)

    _kind = "array"

    def _apply_metadata(self, stored: ArrayMetadataV3 | ArrayMetadataV2) -> None:
        # The stored document (V3 or V2) is kept for writing back; the
        # pipeline always runs on one V3 description of the same bytes.
        self._metadata = stored
        self._v3 = metadata = stored if isinstance(stored, ArrayMetadataV3) else v2_to_v3(stored)
        self._chain = CodecChain.from_json(metadata.codecs)
        self._grid = RegularChunkGrid(metadata.shape, metadata.chunk_shape)
        self._fill = fill_scalar(metadata)
        self._spec = ChunkSpec(metadata.chunk_shape, metadata.data_type, metadata.fill_value)
        self._bound = self._chain.bind(self._spec)
        self._numpy_path = self._bound.has_numpy_path
        self._can_read_partially = self._bound.has_partial_decoder
        # A sharded array: the chain is one codec that can also update a stored
        # shard in place of a read-decode-merge-encode of the whole shard.
        a2b = self._chain.array_to_bytes
        plain = not self._chain.array_to_array and not self._chain.bytes_to_bytes
        self._sharding = a2b if plain and hasattr(a2b, "update") else None
        if self._sharding is not None:
            config = self._sharding.to_config()
            self._inner_chunks = tuple(config["chunk_shape"])
            self._inner_chain = CodecChain.from_json(config["codecs"])
        else:
            self._inner_chunks = metadata.chunk_shape
            self._inner_chain = self._chain
        # Ragged numeric elements (numcodecs vlen-array): RaggedArray at the edge.
        serializer = self._inner_chain.array_to_bytes
        self._ragged = (
            np.dtype(serializer.to_config()["dtype"]).newbyteorder("=")
            if serializer.name == "numcodecs.vlen-array" else None
        )

    @classmethod
    def open(cls, store: Store, path: str = "", *, read_only: bool = False, **kwargs: Any) -> Array:
        metadata = read_metadata(store, path, kwargs.pop("zarr_format", None))
        if not isinstance(metadata, ARRAY_METADATA):
            raise NodeNotFoundError(f"{location(store, path)} holds a group, not an array; use zarrpy.open_group")
        return cls(store, path, metadata, read_only=read_only, **kwargs)

    # -- description ---------------------------------------------------
    @property
    def shape(self) -> Shape:
        return self._v3.shape

    @property
    def chunks(self) -> Shape:
        """Shape of a chunk (the inner chunk of a sharded array, as in zarr-python)."""
        return self._inner_chunks

    @property
    def shards(self) -> Shape | None:
        """Shape of a shard, or None when the array is not sharded."""
        return self._v3.chunk_shape if self._sharding is not None else None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._v3.data_type.numpy

    @property
    def fill_value(self) -> Any:
        return self._v3.fill_value

    @property
    def nbytes(self) -> int:
        """Bytes the whole array takes in memory, uncompressed."""
        return self.size * self.dtype.itemsize

    @property
    def codecs(self) -> tuple:
        return self._chain.codecs

    @property
    def filters(self) -> tuple:
        """Array-to-array codecs (inside the shards of a sharded array)."""
        return self._inner_chain.array_to_array

    @property
    def serializer(self):
        return self._inner_chain.array_to_bytes

    @property
    def compressors(self) -> tuple:
        return self._inner_chain.bytes_to_bytes

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        return self._v3.dimension_names

    @property
    def cdata_shape(self) -> Shape:
        """Number of chunks along each dimension."""
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunks))

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

    def chunk_key(self, coords: ChunkCoords) -> str:
        """The store key of the chunk at grid ``coords``."""
        return join_key(self._path, encode_chunk_key(self._v3.chunk_key_encoding, coords))

    # -- what is stored: one listing each, never a chunk read ------------
    def stored_chunk_keys(self) -> list[str]:
        """Keys of the chunks present in the store (shards, when sharded)."""
        prefix = join_key(self._path, "")
        return [key for key in self._store.list_prefix(prefix) if self._is_chunk_key(key, prefix)]

    def _is_chunk_key(self, key: str, prefix: str) -> bool:
        return decode_chunk_key(self._v3.chunk_key_encoding, key[len(prefix):], self.ndim) is not None

    def _stored_sizes(self) -> tuple[int, int]:
        """(stored chunk objects, bytes of metadata and chunks), from the
        sizes the store lists (:meth:`Store.list_prefix_with_sizes`)."""
        prefix = join_key(self._path, "")
        documents = {join_key(self._path, name) for name in self._metadata.to_documents()}
        nobjects = nbytes = 0
        for key, size in self._store.list_prefix_with_sizes(prefix):
            if self._is_chunk_key(key, prefix):
                nobjects += 1
                nbytes += size
            elif key in documents:
                nbytes += size
        return nobjects, nbytes

    def _chunks_per_object(self) -> int:
        """Chunks in one stored object: a whole shard's inner chunks, or 1."""
        shards = self.shards
        return 1 if shards is None else math.prod(s // c for s, c in zip(shards, self.chunks))

    def nbytes_stored(self) -> int:
        """Bytes of metadata and chunks in the store, from the sizes the store
        reports (no value is downloaded)."""
        return self._stored_sizes()[1]

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
        return self.nshards_initialized * self._chunks_per_object()

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
        return f"<zarrpy.Array {self.name} shape={self.shape} dtype={self.dtype}>"

    @property
    def metadata(self) -> ArrayMetadataV3 | ArrayMetadataV2:
        """The stored metadata document (V3, or V2 for a V2 array)."""
        return self._metadata

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = np.asarray(self[...])
        return out if dtype is None else out.astype(dtype)

    def __reduce__(self):
        return (_reopen, (self._store, self._path, self._read_only, self.write_empty_chunks))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Array)
            and other._store == self._store
            and other._path == self._path
            and other._metadata == self._metadata
        )

    __hash__ = object.__hash__

    # -- reading -------------------------------------------------------
    def __getitem__(self, selection: Any) -> Any:
        return self._read(OrthogonalIndexer(selection, self.shape, self._grid.chunk_shape, max_arrays=1))

    def get_basic_selection(self, selection: Any = Ellipsis) -> Any:
        return self._read(OrthogonalIndexer(selection, self.shape, self._grid.chunk_shape, max_arrays=0))

    def get_orthogonal_selection(self, selection: Any) -> Any:
        return self._read(OrthogonalIndexer(selection, self.shape, self._grid.chunk_shape))

    @property
    def oindex(self) -> _Selector:
        """Orthogonal selection: each dimension indexed independently."""
        return _Selector(self.get_orthogonal_selection, self.set_orthogonal_selection)

    @property
    def blocks(self) -> _Selector:
        """Selection by chunk: ``a.blocks[i, j]`` is the region of chunk
        ``(i, j)``, ``a.blocks[1:3]`` that of chunks 1 and 2 (inner chunks of
        a sharded array), as zarr-python's ``blocks``; assignable too."""
        return _Selector(self.get_block_selection, self.set_block_selection)

    def get_block_selection(self, selection: Any) -> Any:
        return self[self._block_region(selection)]

    def set_block_selection(self, selection: Any, value: Any) -> None:
        self[self._block_region(selection)] = value

    def _block_region(self, selection: Any) -> tuple[slice, ...]:
        """The array region (slices) that a selection of chunk indices covers."""
        items = selection if isinstance(selection, tuple) else (selection,)
        if sum(item is Ellipsis for item in items) > 1:
            raise SelectionError("a block selection may hold one Ellipsis at most")
        if Ellipsis in items:
            i = items.index(Ellipsis)
            items = items[:i] + (slice(None),) * (self.ndim - len(items) + 1) + items[i + 1:]
        if len(items) > self.ndim:
            raise SelectionError(f"block selection {selection!r} has more than {self.ndim} dimensions")
        items = items + (slice(None),) * (self.ndim - len(items))
        region = []
        for axis, (item, n, c, s) in enumerate(zip(items, self.cdata_shape, self.chunks, self.shape)):
            if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
                i = int(item) + n if item < 0 else int(item)
                if not 0 <= i < n:
                    raise BoundsCheckError(f"block index {int(item)} is out of bounds for axis {axis} with {n} chunks")
                start, stop = i, i + 1
            elif isinstance(item, slice) and item.step in (None, 1):
                start, stop, _ = item.indices(n)
                stop = max(start, stop)
            else:
                raise SelectionError(f"block selection: expected integers or slices with step 1, got {item!r}")
            region.append(slice(start * c, min(stop * c, s)))
        return tuple(region)

    def _read(self, indexer: OrthogonalIndexer) -> Any:
        out = np.empty(indexer.shape, dtype=self.dtype)

        def read_batch(batch: list[ChunkProjection]) -> None:
            whole = [p for p in batch if not self._reads_partially(p)]
            raw = self._fetch([self.chunk_key(p.chunk_coords) for p in whole])
            for proj, data in zip(whole, raw):
                self._read_into(out, proj, data)
            for proj in batch:
                if self._reads_partially(proj):
                    self._read_part_into(out, proj)

        for_each_batch(read_batch, indexer)
        if indexer.is_scalar:
            return out[()]
        return RaggedArray.from_list(list(out.reshape(-1)), self._ragged, shape=out.shape) if self._ragged else out

    def _fill_block(self, shape: Shape) -> Any:
        """What to assign where a missing chunk is read."""
        return self._fill if self._ragged is None else empty_elements(shape, self._ragged)

    def _read_into(self, out: np.ndarray, proj: ChunkProjection, data: bytes | None) -> None:
        if data is None:
            out[proj.out_selection] = self._fill_block(proj.out_block_shape)
            return
        chunk = self._decode_chunk(proj.chunk_coords, data)
        block = chunk[(*proj.chunk_selection, Ellipsis)].reshape(proj.out_block_shape)
        if block.ndim == 0:
            block = block[()]  # an object element, not a 0-d array stored as one
        out[proj.out_selection] = block

    def _partial_decoder(self, key: str):
        if self._sharding is not None:
            return self._bound.partial_decoder(self._store.reader(key), map_fn=map_chunks)
        return self._bound.partial_decoder(self._store.reader(key))

    def _fetch(self, keys: list[str]) -> list[bytes | None]:
        """Whole values of ``keys`` in one batched store call (none for no keys)."""
        return self._store.get_partial_values([(k, None) for k in keys]) if keys else []

    def _reads_partially(self, proj: ChunkProjection) -> bool:
        """Read only part of this chunk? When the chain can and little is wanted."""
        if not self._can_read_partially or proj.is_complete:
            return False
        if self._sharding is not None:
            return True
        return math.prod(proj.chunk_block_shape) * 2 <= math.prod(self._grid.chunk_shape)

    def _read_part_into(self, out: np.ndarray, proj: ChunkProjection) -> None:
        key = self.chunk_key(proj.chunk_coords)
        decoder = self._partial_decoder(key)
        try:
            part = decoder.decode_selection(proj.chunk_dim_selection)
            if part is None:
                out[proj.out_selection] = self._fill_block(proj.out_block_shape)
                return
            block = to_numpy(part, self._v3.data_type).reshape(proj.out_block_shape)
        except CodecError as exc:
            raise at_key(exc, key) from exc
        out[proj.out_selection] = block[()] if block.ndim == 0 else block

    def _decode_chunk(self, coords: ChunkCoords, data: bytes) -> np.ndarray:
        try:
            if self._numpy_path:
                return self._bound.decode_numpy(data)
            if self._ragged is not None:
                return RaggedArray.from_array_bytes(self._bound.decode(data), self._ragged).to_object_array()
            return to_numpy(self._bound.decode(data), self._v3.data_type)
        except CodecError as exc:
            raise at_key(exc, self.chunk_key(coords)) from exc

    def _read_stored_chunk(self, coords: ChunkCoords) -> np.ndarray:
        """One whole stored chunk or shard (full shape, edge padding included)."""
        data = self._store.get(self.chunk_key(tuple(coords)))
        if data is None:
            return self._fill_chunk()
        return self._decode_chunk(tuple(coords), data).copy()

    # -- block API -----------------------------------------------------
    def _block_items(self, coords_list: Iterable[ChunkCoords]) -> dict[ChunkCoords, list[tuple[int, ChunkCoords, tuple[slice, ...]]]]:
        """Group chunk coords (of ``chunks``) by the stored object holding them:
        outer coords -> [(position, coords, selection inside the object)]."""
        grid = self._grid.grid_shape
        inner_grid = self.cdata_shape
        groups: dict[ChunkCoords, list] = {}
        for i, coords in enumerate(coords_list):
            coords = tuple(int(c) for c in coords)
            if len(coords) != self.ndim or not all(0 <= c < g for c, g in zip(coords, inner_grid)):
                raise SelectionError(f"chunk {coords} is outside the chunk grid {inner_grid}")
            outer, sel = [], []
            for c, cs, ocs, s in zip(coords, self.chunks, self._grid.chunk_shape, self.shape):
                start, stop = c * cs, min((c + 1) * cs, s)
                outer.append(start // ocs)
                sel.append(slice(start - outer[-1] * ocs, stop - outer[-1] * ocs))
            assert all(o < g for o, g in zip(outer, grid))
            groups.setdefault(tuple(outer), []).append((i, coords, tuple(sel)))
        return groups

    def read_chunk(self, coords: ChunkCoords) -> np.ndarray:
        """The part of the array one chunk covers (see :meth:`read_chunks`)."""
        return self.read_chunks([coords])[0]

    def read_chunks(self, coords_list: Iterable[ChunkCoords]) -> list[np.ndarray]:
        """Many chunks (inner chunks of a sharded array) in one call.

        Each result is the chunk's region of the array (edge chunks clipped to
        the array's shape), in the order asked. Chunks in one shard share one
        index read; stored objects are fetched in batches on the thread pool.
        """
        coords_list = list(coords_list)
        results: list[Any] = [None] * len(coords_list)
        groups = self._block_items(coords_list)

        def read_group(batch: list[ChunkCoords]) -> None:
            if not self._can_read_partially:
                for outer, data in zip(batch, self._fetch([self.chunk_key(g) for g in batch])):
                    chunk = self._fill_chunk() if data is None else self._decode_chunk(outer, data)
                    for i, _, sel in groups[outer]:
                        results[i] = np.array(chunk[(*sel, Ellipsis)])
                return
            for outer in batch:
                key = self.chunk_key(outer)
                decoder = self._partial_decoder(key)
                members = groups[outer]
                try:
                    if hasattr(decoder, "decode_selections"):  # one batched read per shard
                        parts = decoder.decode_selections([sel for _, _, sel in members])
                    else:
                        parts = [decoder.decode_selection(sel) for _, _, sel in members]
                    for (i, _, sel), part in zip(members, parts):
                        shape = tuple(s.stop - s.start for s in sel)
                        results[i] = (np.full(shape, self._fill, dtype=self.dtype) if part is None
                                      else to_numpy(part, self._v3.data_type).reshape(shape))
                except CodecError as exc:
                    raise at_key(exc, key) from exc

        for_each_batch(read_group, list(groups))
        return results

    def write_chunks(self, chunks: Mapping[ChunkCoords, Any]) -> None:
        """Write many chunks (inner chunks of a sharded array) in one call.

        ``chunks`` maps chunk coords to data shaped like the chunk's region of
        the array (edge chunks clipped). Writes are grouped by stored object:
        each shard is read at most once (not at all when the call covers it
        whole) and written once; other inner chunks keep their bytes.
        """
        self._check_writable()
        items = list(chunks.items())
        groups = self._block_items(coords for coords, _ in items)
        values = []
        for coords, data in items:
            region = tuple(
                slice(c * cs, min((c + 1) * cs, s)) for c, cs, s in zip(coords, self.chunks, self.shape)
            )
            values.append(coerce_value(data, self._v3.data_type, tuple(r.stop - r.start for r in region)))
        projections = []
        for outer, members in groups.items():
            for i, _, sel in members:
                shape = tuple(s.stop - s.start for s in sel)
                complete = self._covers(outer, sel)
                projections.append((ChunkProjection(outer, sel, sel, shape, (), shape, complete), values[i]))
        self._write_projections(projections)

    def _covers(self, outer: ChunkCoords, sel: tuple[slice, ...]) -> bool:
        region = self._grid.chunk_region(outer)
        return all(s.start == 0 and s.stop == r.stop - r.start for s, r in zip(sel, region))

    def _fill_chunk(self) -> np.ndarray:
        if self._ragged is not None:
            return empty_elements(self._grid.chunk_shape, self._ragged)
        return np.full(self._grid.chunk_shape, self._fill, dtype=self.dtype)

    # -- writing -------------------------------------------------------
    def __setitem__(self, selection: Any, value: Any) -> None:
        self._write(OrthogonalIndexer(selection, self.shape, self._grid.chunk_shape, max_arrays=1), value)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        self._write(OrthogonalIndexer(selection, self.shape, self._grid.chunk_shape, max_arrays=0), value)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        self._write(OrthogonalIndexer(selection, self.shape, self._grid.chunk_shape), value)

    def _write(self, indexer: OrthogonalIndexer, value: Any) -> None:
        self._check_writable()
        value = self._coerce(value, indexer.shape)
        self._write_projections(
            [(p, value[(*p.out_selection, Ellipsis)].reshape(p.chunk_block_shape)) for p in indexer]
        )

    def _coerce(self, value: Any, shape: Shape) -> np.ndarray:
        """``value`` as this array's elements broadcast to ``shape``, or a clear
        error before anything is written (numpy's assignment rules)."""
        if self._ragged is not None:
            return coerce_ragged(value, self._ragged, shape)
        return coerce_value(value, self._v3.data_type, shape)

    def _write_projections(self, projections: list[tuple[ChunkProjection, np.ndarray]]) -> None:
        """Store blocks: each (projection, block) writes ``block`` at the
        projection's place in its chunk. Several blocks may share a chunk."""
        by_key: dict[str, list[tuple[ChunkProjection, np.ndarray]]] = {}
        for proj, block in projections:
            by_key.setdefault(self.chunk_key(proj.chunk_coords), []).append((proj, block))
        covered = {k for k, group in by_key.items() if self._group_covers(group)}
        needs_old = [k for k in by_key if k not in covered]
        # Two phases: every chunk is merged and encoded before the first is
        # stored, so a corrupt old chunk or a codec error writes nothing. The
        # chunks read and rewritten stay locked until stored.
        encoded: list[tuple[str, bytes | None]] = []

        def encode_batch(batch: list[str]) -> None:
            reread = [k for k in batch if k not in covered]
            old = dict(zip(reread, self._fetch(reread)))
            encoded.extend((k, self._merge_and_encode(k, by_key[k], old.get(k), k in covered)) for k in batch)

        def store_batch(batch: list[tuple[str, bytes | None]]) -> None:
            for key, data in batch:
                if data is None:
                    self._remove_chunk(key)
                else:
                    self._store.set(key, data)

        with locked(self._lock_token, needs_old):
            for_each_batch(encode_batch, list(by_key))
            for_each_batch(store_batch, encoded)

    def _group_covers(self, group: list[tuple[ChunkProjection, np.ndarray]]) -> bool:
        """Do these writes cover their chunk's in-array region whole? (Blocks
        from one write_chunks call are distinct inner chunks, so sizes add up.)"""
        if any(p.is_complete for p, _ in group):
            return True
        region = self._grid.chunk_region(group[0][0].chunk_coords)
        return len(group) > 1 and sum(math.prod(p.chunk_block_shape) for p, _ in group) == math.prod(
            r.stop - r.start for r in region
        )

    def _merge_and_encode(
        self, key: str, group: list[tuple[ChunkProjection, np.ndarray]], old: bytes | None, covered: bool
    ) -> bytes | None:
        """The chunk at ``key`` after writing each block of ``group`` into it
        (later blocks win), encoded; None when it holds only the fill value.
        ``covered``: the blocks cover the chunk whole, so ``old`` is not needed."""
        coords = group[0][0].chunk_coords
        data_type = self._v3.data_type
        if covered:
            old = None
        if self._sharding is not None:
            try:
                if len(group) == 1 and group[0][0].is_complete and not self._is_edge(coords):
                    block = from_numpy(group[0][1].reshape(self._grid.chunk_shape), data_type, self._ragged)
                    return self._sharding.encode_or_none(block, self._spec)
                writes = [(p.chunk_dim_selection, from_numpy(np.asarray(b), data_type, self._ragged)) for p, b in group]
                return self._sharding.update_many(old, writes, self._spec)
            except CodecError as exc:
                raise at_key(exc, key) from exc
        if len(group) == 1 and group[0][0].is_complete and not self._is_edge(coords):
            chunk = group[0][1].reshape(self._grid.chunk_shape)
        else:
            chunk = self._fill_chunk() if old is None else self._decode_chunk(coords, old).copy()
            for proj, block in group:
                chunk[proj.chunk_selection] = block
        if not self.write_empty_chunks and self._is_fill(chunk):
            return None
        return self._encode_chunk(chunk)

    def _remove_chunk(self, key: str) -> None:
        """Delete a chunk (or shard) that holds only the fill value. A store
        that cannot delete (a zip archive) gets the encoded fill chunk instead
        where one is stored, so no stale value can show through later."""
        if self._store.supports_deletes:
            self._store.delete(key)
        elif self._store.exists(key):
            self._store.set(key, self._encode_chunk(self._fill_chunk()))

    def _is_fill(self, chunk: np.ndarray) -> bool:
        if self._ragged is not None:
            return all(len(element) == 0 for element in chunk.reshape(-1))
        return all_equal(chunk, self._fill)

    def _encode_chunk(self, chunk: np.ndarray) -> bytes:
        if self._numpy_path:
            return self._bound.encode_numpy(chunk)
        return self._bound.encode(from_numpy(chunk, self._v3.data_type, self._ragged))

    @property
    def _lock_token(self) -> Any:
        return self._store.url or id(self._store)

    def _is_edge(self, coords: ChunkCoords) -> bool:
        return any((c + 1) * cs > s for c, cs, s in zip(coords, self._grid.chunk_shape, self.shape))

    # -- shape changes -------------------------------------------------
    def resize(self, *new_shape: int | Sequence[int]) -> None:
        """Change the shape. Chunks wholly outside the new shape are deleted;
        chunks cut by the new edge are rewritten with the fill value past it,
        so growing again later shows fill, never stale data."""
        self._check_writable()
        shape = tuple(new_shape[0]) if len(new_shape) == 1 and not isinstance(new_shape[0], int) else new_shape
        shape = tuple(int(s) for s in shape)  # type: ignore[union-attr]
        if len(shape) != self.ndim or any(s < 0 for s in shape):
            raise SelectionError(f"new shape {shape} must have {self.ndim} non-negative dimensions")
        old_grid = self._grid
        new_grid = RegularChunkGrid(shape, self._grid.chunk_shape)
        shrinks = any(n < o for n, o in zip(shape, old_grid.shape))
        stored = self._stored_coords() if shrinks else []
        # Chunks that stay but lose part of their region: reset that part to fill.
        cut = [
            c for c in stored
            if new_grid.contains(c)
            and any(min((ci + 1) * cs, o) > n for ci, cs, n, o in zip(c, self._grid.chunk_shape, shape, old_grid.shape))
        ]
        for coords in cut:
            chunk = self._read_stored_chunk(coords)
            region = new_grid.chunk_region(coords)
            keep = tuple(slice(0, r.stop - r.start) for r in region)
            fresh = self._fill_chunk()
            fresh[keep] = chunk[keep]
            key = self.chunk_key(coords)
            if not self.write_empty_chunks and self._is_fill(fresh):
                self._remove_chunk(key)
            else:
                self._store.set(key, self._encode_chunk(fresh))
        for coords in stored:
            if not new_grid.contains(coords):
                self._remove_chunk(self.chunk_key(coords))
        self._write_metadata(self._metadata.evolve(shape=shape))

    def append(self, data: Any, axis: int = 0) -> Shape:
        """Grow along ``axis`` and write ``data`` into the new part."""
        if not isinstance(data, np.ndarray) or data.dtype != self.dtype:
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

    def _stored_coords(self) -> list[ChunkCoords]:
        prefix = join_key(self._path, "")
        enc = self._v3.chunk_key_encoding
        out = []
        for key in self._store.list_prefix(prefix):
            coords = decode_chunk_key(enc, key[len(prefix):], self.ndim)
            if coords is not None:
                out.append(coords)
        return out


class _Selector:
    """``a.oindex`` / ``a.blocks``: ``[]`` reads and writes through one pair of methods."""

    __slots__ = ("_get", "_set")

    def __init__(self, get: Any, set_: Any):
        self._get, self._set = get, set_

    def __getitem__(self, selection: Any) -> Any:
        return self._get(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._set(selection, value)


def _reopen(store: Store, path: str, read_only: bool, write_empty_chunks: bool) -> Array:
    return Array.open(store, path, read_only=read_only, write_empty_chunks=write_empty_chunks)


__all__ = ["Array"]
