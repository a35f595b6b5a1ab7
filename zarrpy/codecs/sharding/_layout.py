"""A sharding codec bound to one shard spec: splitting, assembling, laying out.

:class:`ShardLayout` holds what every shard operation needs once per spec:
the inner grid, the inner and index chains bound to their specs, the encoded
index size and the fill value in comparable form. It cuts a shard into inner
chunks and puts decoded inner chunks back together, for fixed-size chunks
(numpy reshapes) and variable-length ones (``ArrayBytes.take``), and writes a
compact shard from encoded inner chunks, in its write order (:mod:`.order`).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterable, Iterator

import numpy as np

from ...core._typing import BytesLike, Shape
from ...core.array_bytes import ArrayBytes
from ...errors import ChunkDecodeError, CodecError
from ..abc import ChunkSpec
from ..chain import BoundChain
from ..fill import fill_chunk, fixed_fill, rows_equal_fill, variable_fill, variable_is_fill
from .index import NAME, ShardIndex
from .order import DEFAULT_WRITE_ORDER, is_c_order, write_order, write_rank


InnerWork = tuple[int, Any, np.ndarray | None, list[tuple[np.ndarray, Any, Any]]]
"""One inner chunk for :meth:`ShardLayout.decode_inner_chunks`: position,
encoded bytes, the output box taking it whole (or None), parts copied out."""

_INDEX_CACHE_ENTRIES = 64
"""Checked shard indexes a layout remembers (oldest forgotten first)."""


class ShardLayout:
    """Inner grid, bound chains and fill value of one shard spec."""

    __slots__ = (
        "spec", "inner_spec", "grid_shape", "nchunks", "chunk_size",
        "inner", "index_chain", "index_nbytes", "index_at_start", "write_order", "_fill", "_fill_bytes",
        "_indexes",
    )

    def __init__(self, spec: ChunkSpec, inner_spec: ChunkSpec, inner: BoundChain, index_chain: BoundChain,
                 index_at_start: bool, write_order: str = DEFAULT_WRITE_ORDER):
        self.spec = spec
        self.inner_spec = inner_spec
        self.grid_shape: Shape = tuple(s // c for s, c in zip(spec.shape, inner_spec.shape))
        self.nchunks = int(np.prod(self.grid_shape, dtype=np.int64))
        self.chunk_size = inner_spec.size
        self.inner = inner
        self.index_chain = index_chain
        self.index_nbytes: int = index_chain.encoded_size  # type: ignore[assignment]
        self.index_at_start = index_at_start
        self.write_order = write_order
        """The ``subchunk_write_order`` shards are written in (see :mod:`.order`)."""
        self._indexes: dict[tuple[bytes, int | None, int | None], ShardIndex] = {}
        """Checked indexes by (encoded index, its offset, shard length): see :meth:`checked_index`."""
        try:
            self._fill = None if spec.dtype.is_variable else fixed_fill(spec)
            self._fill_bytes = variable_fill(spec) if spec.dtype.is_variable else None
        except CodecError as exc:
            raise CodecError(f"codec {NAME!r}: {exc}") from None

    @property
    def is_variable(self) -> bool:
        return self._fill is None

    @property
    def fill(self) -> np.ndarray:
        """The fill value of a fixed-size type, as a 0-d array."""
        if self._fill is None:
            raise CodecError(f"codec {NAME!r}: data type {self.spec.dtype.name!r} is variable-length")
        return self._fill

    @property
    def fill_bytes(self) -> bytes:
        """The fill value of a variable-length type, as element bytes."""
        if self._fill_bytes is None:
            raise CodecError(f"codec {NAME!r}: data type {self.spec.dtype.name!r} is fixed-size")
        return self._fill_bytes

    # -- positions -----------------------------------------------------
    def coords(self, position: int) -> tuple[int, ...]:
        return tuple(int(c) for c in np.unravel_index(position, self.grid_shape))

    def position(self, coords: Iterable[int]) -> int:
        """The flat C-order position of inner chunk ``coords`` (checked to lie in the grid)."""
        coords = tuple(coords)
        position = 0
        for c, n in zip(coords, self.grid_shape, strict=True):
            if not 0 <= c < n:
                raise ValueError(f"inner chunk coordinates {coords} outside the grid {self.grid_shape}")
            position = position * n + int(c)
        return position

    @property
    def writes_c_order(self) -> bool:
        """Are inner chunks written in the C order of their positions?"""
        return is_c_order(self.write_order)

    def written_positions(self) -> np.ndarray:
        """Every flat position, in the order inner chunks are written (read-only)."""
        return write_order(self.grid_shape, self.write_order)

    def write_ranks(self) -> np.ndarray:
        """Each flat position's place in the written order (read-only)."""
        return write_rank(self.grid_shape, self.write_order)

    def block_order(self) -> np.ndarray:
        """Shard flat indices, shape ``(nchunks, chunk_size)``: row i lists
        inner chunk i's elements (C order inside it) by their shard position."""
        flat = np.arange(self.spec.size, dtype=np.int64).reshape(self.spec.shape)
        return self._to_blocks(flat)

    def _to_blocks(self, arr: np.ndarray) -> np.ndarray:
        """``(nchunks, chunk_size)`` view/copy of a shard-shaped array, by inner chunk."""
        interleaved = [n for g, c in zip(self.grid_shape, self.inner_spec.shape) for n in (g, c)]
        ndim = len(self.grid_shape)
        order = [2 * i for i in range(ndim)] + [2 * i + 1 for i in range(ndim)]
        return arr.reshape(interleaved).transpose(order).reshape(self.nchunks, self.chunk_size)

    def _from_blocks(self, blocks: np.ndarray) -> np.ndarray:
        ndim = len(self.grid_shape)
        split = (*self.grid_shape, *self.inner_spec.shape)
        order = [i for d in range(ndim) for i in (d, ndim + d)]
        return np.ascontiguousarray(blocks.reshape(split).transpose(order)).reshape(self.spec.shape)

    # -- splitting and assembling --------------------------------------
    def split(self, chunk: ArrayBytes) -> list[tuple[int, ArrayBytes]]:
        """The inner chunks of a shard that differ from the fill value, as
        ``(position, inner chunk)`` in C order."""
        if chunk.shape != self.spec.shape:
            raise CodecError(f"codec {NAME!r}: shard of shape {chunk.shape}, expected {self.spec.shape}")
        shape = self.inner_spec.shape
        if not self.is_variable:
            if not chunk.is_fixed:
                raise CodecError(f"codec {NAME!r}: expected a fixed-size shard, got {chunk!r}")
            arr = chunk.array
            if arr.dtype != self.fill.dtype:
                arr = arr.astype(self.fill.dtype)
            blocks = np.ascontiguousarray(self._to_blocks(arr))
            keep = ~rows_equal_fill(blocks, self.fill)
            return [(int(i), ArrayBytes.from_array(blocks[i].reshape(shape))) for i in np.flatnonzero(keep)]
        if chunk.is_fixed:
            raise CodecError(f"codec {NAME!r}: expected a variable-length shard, got {chunk!r}")
        ordered = chunk.take(self.block_order().reshape(-1), (chunk.size,))
        offsets, data, m = ordered.offsets, ordered.data, self.chunk_size
        lengths = np.diff(offsets).reshape(self.nchunks, m)
        fill, nfill = self.fill_bytes, len(self.fill_bytes)
        candidates = (lengths == nfill).all(axis=1)
        out = []
        for i in range(self.nchunks):
            lo, hi = int(offsets[i * m]), int(offsets[(i + 1) * m])
            if candidates[i] and (nfill == 0 or data[lo:hi] == fill * m):
                continue
            inner_offsets = offsets[i * m : (i + 1) * m + 1] - offsets[i * m]
            out.append((i, ArrayBytes.variable(inner_offsets, data[lo:hi], shape)))
        return out

    def is_fill(self, inner: ArrayBytes) -> bool:
        """True if every element of an inner chunk equals the fill value
        (bit for bit for fixed-size types)."""
        if not self.is_variable:
            return bool(rows_equal_fill(inner.array.reshape(1, -1), self.fill)[0])
        return variable_is_fill(inner, self.fill_bytes)

    def fill_chunk(self) -> ArrayBytes:
        """An inner chunk of fill values."""
        return fill_chunk(self.inner_spec)

    def assemble(self, inner_chunks: dict[int, ArrayBytes]) -> ArrayBytes:
        """The whole shard from decoded inner chunks (missing ones are fill)."""
        m = self.chunk_size
        if not self.is_variable:
            blocks = np.empty((self.nchunks, m), dtype=self.fill.dtype)
            if len(inner_chunks) < self.nchunks:
                blocks[...] = self.fill
            for i, inner in inner_chunks.items():
                blocks[i] = inner.array.reshape(-1)
            return ArrayBytes.from_array(self._from_blocks(blocks))
        lengths, parts = [], []
        fill_lengths = np.full(m, len(self.fill_bytes), dtype=np.int64)
        fill_data = self.fill_bytes * m
        for i in range(self.nchunks):
            stored = inner_chunks.get(i)
            if stored is None:
                lengths.append(fill_lengths)
                parts.append(fill_data)
            else:
                lengths.append(np.diff(stored.offsets))
                parts.append(stored.data)
        ordered = _from_lengths(np.concatenate(lengths) if lengths else np.zeros(0, np.int64),
                                b"".join(parts), (self.spec.size,))
        inverse = np.empty(self.spec.size, dtype=np.int64)
        inverse[self.block_order().reshape(-1)] = np.arange(self.spec.size, dtype=np.int64)
        return ordered.take(inverse, self.spec.shape)

    # -- inner chunks --------------------------------------------------
    def encode_inner(self, inner: ArrayBytes) -> bytes:
        return self.inner.encode(inner)

    def decode_inner(self, position: int, data: bytes) -> ArrayBytes:
        """Decode one inner chunk; errors name the codec and the inner chunk."""
        with self._naming(position):
            return self.inner.decode(data)

    def decode_inner_into(self, position: int, data: Any, dest: np.ndarray) -> None:
        """Decode one inner chunk into ``dest`` (its region of the output);
        errors name the codec and the inner chunk, as :meth:`decode_inner`'s."""
        with self._naming(position):
            if self.inner.decode_into(data, dest):
                return
        with self.decoded_inner(position, data) as chunk:
            dest[...] = chunk.array

    @contextmanager
    def decoded_inner(self, position: int, data: Any) -> Iterator[ArrayBytes]:
        """:meth:`decode_inner` into a scratch buffer (see
        :meth:`BoundChain.decoded`): the chunk is valid inside the block only."""
        with self._naming(position):
            decoded = self.inner.decoded(data)
            chunk = decoded.__enter__()
        try:
            yield chunk
        finally:
            decoded.__exit__(None, None, None)

    def decode_inner_chunks(self, work: Iterable[InnerWork], like: np.ndarray) -> None:
        """Decode whole inner chunks into an output, each ``(position, encoded
        bytes, box, copies)``: ``box`` is the output's box taking the inner
        chunk whole (or None), ``copies`` are ``(dest, out_selection,
        chunk_selection)`` parts of it for an inner chunk taken in part
        (``dest[out_selection] = elements[chunk_selection]``).

        The usual inner chain (plain ``bytes`` and one compressor that
        decodes into a buffer) gets one scratch buffer for all of ``work``,
        placed like ``like`` within its page: each inner chunk is
        decompressed into it and copied out, except into a C-contiguous box,
        which gets the decompressor's output directly. Any other chain, and
        any frame the compressor refuses (corrupt data then gets
        :meth:`decode_inner`'s error), goes through :meth:`decode_inner_into`
        or :meth:`decoded_inner`.
        """
        with self.inner.scratch_decoder(like=like) as decode:
            for position, data, box, copies in work:
                if box is not None and (decode is None or box.flags.c_contiguous):
                    self.decode_inner_into(position, data, box)
                    continue
                elements = decode(data) if decode is not None else None
                if elements is not None:
                    if box is not None:
                        box[...] = elements
                    for dest, out_selection, chunk_selection in copies:
                        dest[out_selection] = elements[chunk_selection]
                elif box is not None:
                    self.decode_inner_into(position, data, box)
                else:
                    with self.decoded_inner(position, data) as chunk:
                        for dest, out_selection, chunk_selection in copies:
                            dest[out_selection] = chunk.array[chunk_selection]

    @contextmanager
    def _naming(self, position: int) -> Iterator[None]:
        """Decoding errors inside name the codec and the inner chunk."""
        try:
            yield
        except ChunkDecodeError as exc:
            raise type(exc)(f"codec {NAME!r}: inner chunk {self.coords(position)}: {exc}") from None
        except CodecError as exc:
            raise ChunkDecodeError(f"codec {NAME!r}: inner chunk {self.coords(position)}: {exc}") from None

    # -- the shard as bytes --------------------------------------------
    def read_index(self, shard: BytesLike) -> ShardIndex:
        """Decode and check the index of a whole encoded shard."""
        n, k = len(shard), self.index_nbytes
        if n < k:
            raise ChunkDecodeError(
                f"codec {NAME!r}: shard of {n} bytes is shorter than its {k}-byte index"
            )
        start = 0 if self.index_at_start else n - k
        return ShardIndex.decode(
            bytes(memoryview(shard)[start : start + k]), self.index_chain, self.grid_shape,
            index_offset=start, shard_nbytes=n,
        )

    def decode_index(self, encoded: bytes, index_offset: int | None, shard_nbytes: int | None) -> ShardIndex:
        return ShardIndex.decode(
            encoded, self.index_chain, self.grid_shape, index_offset=index_offset, shard_nbytes=shard_nbytes
        )

    def checked_index(self, encoded: bytes, index_offset: int | None, shard_nbytes: int | None) -> ShardIndex:
        """:meth:`decode_index` for readers, remembered: the same encoded
        index at the same place in a shard of the same length decodes and
        checks to the same entries, so repeated reads of a shard skip the
        work. The index returned is read-only (its entries cannot be set)."""
        key = (encoded, index_offset, shard_nbytes)
        cache = self._indexes
        index = cache.get(key)
        if index is None:
            index = self.decode_index(encoded, index_offset, shard_nbytes)
            index.freeze()
            if len(cache) >= _INDEX_CACHE_ENTRIES:
                try:
                    del cache[next(iter(cache))]
                except (KeyError, StopIteration, RuntimeError):  # another thread got there first
                    pass
            cache[key] = index
        return index

    def build(self, pieces: Iterable[tuple[int, Any]]) -> bytes:
        """A compact shard: ``pieces`` (position, encoded bytes-like), each
        position once, laid out in the write order, then (or before them)
        the index."""
        if self.writes_c_order:
            ordered = sorted(pieces, key=_position)  # callers give C order: a linear pass
        else:
            rank = self.write_ranks()
            ordered = sorted(pieces, key=lambda piece: int(rank[piece[0]]))
        index = ShardIndex(self.grid_shape)
        offset = self.index_nbytes if self.index_at_start else 0
        parts = []
        for position, data in ordered:
            nbytes = len(data)
            index.set(position, offset, nbytes)
            parts.append(data)
            offset += nbytes
        encoded_index = index.encode(self.index_chain)
        if self.index_at_start:
            parts.insert(0, encoded_index)
        else:
            parts.append(encoded_index)
        return b"".join(parts)


def _position(piece: tuple[int, Any]) -> int:
    return piece[0]


def normalise_selection(selection: Any) -> tuple[Any, ...]:
    """Per-dimension shard selection for :class:`~zarrpy.core.indexing.OrthogonalIndexer`:
    an integer becomes a length-1 array, so that no dimension is dropped."""
    if not isinstance(selection, tuple):
        selection = tuple(selection) if isinstance(selection, list) else (selection,)
    return tuple([
        s if type(s) is slice
        else np.array([int(s)], dtype=np.int64) if isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_))
        else s
        for s in selection
    ])


def gather_variable(pieces: list[tuple[np.ndarray, ArrayBytes]], shape: Shape) -> ArrayBytes:
    """A variable chunk of ``shape`` from pieces ``(flat output positions,
    elements in that order)`` that together cover every position once."""
    n = int(np.prod(shape, dtype=np.int64))
    if not pieces:
        return ArrayBytes.variable(np.zeros(n + 1, dtype=np.int64), b"", shape)
    positions = np.concatenate([p for p, _ in pieces])
    lengths = np.concatenate([np.diff(c.offsets) for _, c in pieces])
    ordered = _from_lengths(lengths, b"".join(c.data for _, c in pieces), (len(positions),))
    inverse = np.empty(n, dtype=np.int64)
    inverse[positions] = np.arange(len(positions), dtype=np.int64)
    return ordered.take(inverse, shape)


def _from_lengths(lengths: np.ndarray, data: bytes, shape: Shape) -> ArrayBytes:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return ArrayBytes.variable(offsets, data, shape)


__all__ = ["InnerWork", "ShardLayout", "gather_variable", "normalise_selection"]
