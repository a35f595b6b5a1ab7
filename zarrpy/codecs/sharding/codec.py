"""sharding_indexed array-to-bytes codec (core): many inner chunks in one stored object.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/
V3 name: ``sharding_indexed``; no V2 id.

A shard (the outer chunk) is cut into inner chunks of ``chunk_shape``; each
inner chunk that differs from the fill value is encoded with ``codecs`` and
stored, and an index of ``(offset, nbytes)`` pairs, encoded with
``index_codecs``, sits at the ``index_location`` (``"end"`` or ``"start"``).
Offsets are absolute from the start of the shard. Layout and checks:
reference/ZARR-FORMAT-NOTES.md §9 and :mod:`.index`.

Shards are always written compact, inner chunks in the codec's
``subchunk_write_order`` (:mod:`.order`; default C order of their
coordinates), then (or after) the index. Reading takes any order and gaps.
The write order is a setting of the codec object, as zarr-python's, not of
its JSON: :meth:`~ShardingCodec.to_config` leaves it out, and
:meth:`~ShardingCodec.from_config` takes it (zarr-python's ``from_dict``
does too) so that a configuration a user writes can carry it.

- :meth:`ShardingCodec.encode` / :meth:`~ShardingCodec.decode`: whole shards;
  :meth:`~ShardingCodec.encode_or_none` is ``encode`` that returns None when
  every inner chunk is fill (the array layer then deletes the shard key).
- :meth:`~ShardingCodec.partial_decoder`: reads the index once, then the
  inner chunks a selection needs in one batched read
  (:class:`~.partial.ShardPartialDecoder`).
- :meth:`~ShardingCodec.update`: writes a block into an encoded shard,
  copying untouched inner chunks' bytes as they are.

>>> ShardingCodec.from_config({"chunk_shape": [2, 2]}).to_config()  # doctest: +NORMALIZE_WHITESPACE
{'chunk_shape': [2, 2],
 'codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}}],
 'index_codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}}, {'name': 'crc32c'}],
 'index_location': 'end'}
"""

from __future__ import annotations

import itertools
from types import EllipsisType
from typing import Any, Mapping, Sequence

import numpy as np

from ...core._typing import BytesLike, Shape
from ...core.array_bytes import ArrayBytes
from ...core.batches import even_runs
from ...errors import CodecError
from ...core.indexing import OrthogonalIndexer
from ...core.point_indexing import PointIndexer
from ...core.selection import Points
from .._config import check_choice, check_keys
from ..abc import ArrayToBytesCodec, ByteReader, ChunkSpec, InnerChunks
from ..chain import BoundChain, CodecChain
from ..merge import ChunkWrite
from ..partial import (
    DEFAULT_OPTIONS,
    PARTIAL,
    CodecCapabilities,
    DecodeOptions,
    MapFn,
    is_full_selection,
)
from ._layout import InnerWork, ShardLayout, normalise_selection
from .index import EMPTY_OFFSET, NAME, ShardIndex, index_spec
from .order import DEFAULT_WRITE_ORDER, WRITE_ORDERS
from .partial import DECODE_GROUPS, DEFAULT_MAX_GAP_NBYTES, ShardPartialDecoder

INDEX_LOCATIONS = ("start", "end")
DEFAULT_CODECS: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
DEFAULT_INDEX_CODECS: list[dict[str, Any]] = [
    {"name": "bytes", "configuration": {"endian": "little"}},
    {"name": "crc32c"},
]

Selection = Sequence[Any] | Points


_LAYOUTS_KEPT = 16
"""Shard specs one codec remembers its bound layout for (arrays sharing it)."""


class ShardingCodec(ArrayToBytesCodec):
    """Inner chunks of ``chunk_shape`` encoded with ``codecs``, plus an index.

    ``codecs`` and ``index_codecs`` are codec chains (V3 JSON lists or
    :class:`~zarrpy.codecs.chain.CodecChain`); ``index_codecs`` must produce
    a fixed size (no compressors). ``subchunk_write_order`` is the order
    inner chunks are written in (one of :data:`~.order.WRITE_ORDERS`); it is
    not part of the JSON, but it is part of the codec's value (equality,
    hash, repr), so two codecs that write different bytes never compare equal.
    """

    name = NAME
    __slots__ = ("chunk_shape", "codecs", "index_codecs", "index_location", "subchunk_write_order", "_layouts")
    decodes_buffers = True  # a shard is only ever sliced (memoryview): any buffer will do

    def __init__(
        self,
        chunk_shape: Sequence[int],
        codecs: CodecChain | Sequence[Any] | None = None,
        index_codecs: CodecChain | Sequence[Any] | None = None,
        index_location: str = "end",
        subchunk_write_order: str = DEFAULT_WRITE_ORDER,
    ):
        self.chunk_shape: tuple[int, ...] = _parse_chunk_shape(chunk_shape)
        self.codecs: CodecChain = CodecChain.from_field(NAME, "codecs", DEFAULT_CODECS if codecs is None else codecs)
        self.index_codecs: CodecChain = CodecChain.from_field(
            NAME, "index_codecs", DEFAULT_INDEX_CODECS if index_codecs is None else index_codecs
        )
        self.index_location: str = check_choice(NAME, "index_location", index_location, INDEX_LOCATIONS)
        self.subchunk_write_order: str = check_choice(
            NAME, "subchunk_write_order", subchunk_write_order, WRITE_ORDERS
        )
        # The layout bound last: arrays ask again and again for the same spec.
        self._layouts: dict[int, tuple[ChunkSpec, ShardLayout]] = {}
        """Bound layouts by the id of their spec (kept alive here, so ids stay
        unique): arrays sharing this codec each keep theirs."""
        # Reject compressed indexes up front; a stand-in grid of one chunk.
        self._bind_index((1,) * len(self.chunk_shape))

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> ShardingCodec:
        config = check_keys(
            NAME, config, required=("chunk_shape",),
            optional=("codecs", "index_codecs", "index_location", "subchunk_write_order"),
        )
        for field in ("codecs", "index_codecs"):
            if field in config and config[field] is None:
                raise CodecError(f"codec {NAME!r}: {field!r} must be a list of codecs, got null")
        return cls(
            config["chunk_shape"],
            config.get("codecs", DEFAULT_CODECS),
            config.get("index_codecs", DEFAULT_INDEX_CODECS),
            config.get("index_location", "end"),
            config.get("subchunk_write_order", DEFAULT_WRITE_ORDER),
        )

    def to_config(self) -> dict[str, Any]:
        return {
            "chunk_shape": list(self.chunk_shape),
            "codecs": self.codecs.to_json(),
            "index_codecs": self.index_codecs.to_json(),
            "index_location": self.index_location,
        }

    def with_write_order(self, order: str) -> ShardingCodec:
        """This codec writing its inner chunks in ``order``, and so does every
        sharding codec nested inside it (one order for the whole array)."""
        inner = self.codecs.array_to_bytes
        codecs = self.codecs
        if isinstance(inner, ShardingCodec):
            nested = inner.with_write_order(order)
            if nested is not inner:
                codecs = CodecChain([*codecs.array_to_array, nested, *codecs.bytes_to_bytes])
        if order == self.subchunk_write_order and codecs is self.codecs:
            return self
        return ShardingCodec(self.chunk_shape, codecs, self.index_codecs, self.index_location,
                             check_choice(NAME, "subchunk_write_order", order, WRITE_ORDERS))

    def __eq__(self, other: object) -> bool:
        return (super().__eq__(other) and isinstance(other, ShardingCodec)
                and other.subchunk_write_order == self.subchunk_write_order
                and other.codecs == self.codecs)  # nested sharding codecs' orders

    def __hash__(self) -> int:
        return hash((super().__hash__(), self.subchunk_write_order))

    def __repr__(self) -> str:
        if self.subchunk_write_order == DEFAULT_WRITE_ORDER:
            return super().__repr__()
        return f"{type(self).__name__}({self.to_config()}, subchunk_write_order={self.subchunk_write_order!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Not the bound layouts; the chains carry nested codecs' own orders.
        return (ShardingCodec, (self.chunk_shape, self.codecs, self.index_codecs, self.index_location,
                                self.subchunk_write_order))

    def evolve(self, spec: ChunkSpec) -> ShardingCodec:
        """This codec with its chains' chunk-dependent settings filled in
        (e.g. blosc ``typesize`` of the inner chunks)."""
        codecs = self.codecs.evolve(self._inner_spec(spec))
        index = self.index_codecs
        if len(spec.shape) == len(self.chunk_shape):
            grid = tuple(max(s // c, 1) for s, c in zip(spec.shape, self.chunk_shape))
            index = self.index_codecs.evolve(index_spec(grid))
        if codecs == self.codecs and index == self.index_codecs:
            return self
        return ShardingCodec(self.chunk_shape, codecs, index, self.index_location, self.subchunk_write_order)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        self.layout(spec)
        return spec

    def inner_chunks(self) -> InnerChunks:
        return InnerChunks(self.chunk_shape, self.codecs)

    def ragged_dtype(self) -> np.dtype | None:
        return self.codecs.array_to_bytes.ragged_dtype()

    def layout(self, spec: ChunkSpec) -> ShardLayout:
        """Validate against a shard ``spec`` and bind the inner and index chains.

        Raises CodecError (naming the codec and field) if ``chunk_shape`` does
        not divide the shard shape, the index chain has no fixed size, or the
        inner chain does not accept the inner chunks.
        """
        if len(spec.shape) != len(self.chunk_shape):
            raise CodecError(
                f"codec {NAME!r}: 'chunk_shape' {list(self.chunk_shape)} has {len(self.chunk_shape)} "
                f"dimensions, the shard shape {tuple(spec.shape)} has {len(spec.shape)}"
            )
        if any(s % c for s, c in zip(spec.shape, self.chunk_shape)):
            raise CodecError(
                f"codec {NAME!r}: 'chunk_shape' {list(self.chunk_shape)} does not evenly divide "
                f"the shard shape {tuple(spec.shape)}"
            )
        known = self._layouts.get(id(spec))
        if known is not None and known[0] is spec:
            return known[1]
        inner_spec = self._inner_spec(spec)
        try:
            inner = self.codecs.bind(inner_spec)
        except CodecError as exc:
            raise CodecError(f"codec {NAME!r}: 'codecs': {exc}") from None
        grid = tuple(s // c for s, c in zip(spec.shape, self.chunk_shape))
        layout = ShardLayout(spec, inner_spec, inner, self._bind_index(grid), self.index_location == "start",
                             self.subchunk_write_order)
        layouts = self._layouts
        if len(layouts) >= _LAYOUTS_KEPT:
            try:
                del layouts[next(iter(layouts))]  # the oldest
            except (KeyError, RuntimeError, StopIteration):  # another thread got there first
                pass
        layouts[id(spec)] = (spec, layout)
        return layout

    # -- whole shards --------------------------------------------------
    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        """Encode a whole shard; inner chunks equal to the fill value are left
        out (an all-fill shard is a valid shard with an all-empty index)."""
        layout = self.layout(spec)
        return layout.build((pos, layout.encode_inner(inner)) for pos, inner in layout.split(chunk))

    def encode_or_none(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes | None:
        """Like :meth:`encode`, but None when every inner chunk is the fill value."""
        layout = self.layout(spec)
        pieces = [(pos, layout.encode_inner(inner)) for pos, inner in layout.split(chunk)]
        return layout.build(pieces) if pieces else None

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        """Decode a whole shard; empty inner chunks read as the fill value.

        Raises
        ------
        ChecksumError
            If the index checksum (or an inner chunk's) does not match.
        ChunkDecodeError
            If the shard is shorter than its index, the index describes
            impossible ranges (see :meth:`.index.ShardIndex.decode`), or an
            inner chunk does not decode.
        """
        layout = self.layout(spec)
        index = layout.read_index(data)
        return layout.assemble(_decode_stored(layout, index, data))

    def decode_into(
        self, data: BytesLike, spec: ChunkSpec, dest: np.ndarray, options: DecodeOptions = DEFAULT_OPTIONS
    ) -> bool:
        """A whole shard of a fixed-size type decoded inner chunk by inner
        chunk into its place in ``dest`` (missing ones get the fill value),
        the inner chunks in parallel through ``options.map_fn``: no
        shard-sized buffer, no reassembly. Variable-length shards: False.
        ``map_fn`` is called last, with nothing done after it, so it may
        queue the work for the caller to wait for (see :class:`DecodeOptions`)."""
        layout = self.layout(spec)
        if layout.is_variable or dest.dtype != layout.fill.dtype:
            return False
        index = layout.read_index(data)
        view = memoryview(data)
        inner_shape = layout.inner_spec.shape
        # Each inner chunk's box of ``dest``, by flat position (C order).
        boxes = [dest[_box(coords, inner_shape)] for coords in itertools.product(*map(range, layout.grid_shape))]
        entries = index.pairs()
        stored = []
        for pos, (offset, _) in enumerate(entries):
            if offset != EMPTY_OFFSET:
                stored.append(pos)
            else:
                boxes[pos][...] = layout.fill

        def decode_group(positions: list[int]) -> None:
            work: list[InnerWork] = []
            for pos in positions:
                offset, nbytes = entries[pos]
                work.append((pos, view[offset : offset + nbytes], boxes[pos], []))
            layout.decode_inner_chunks(work, like=dest)

        # A few groups, not one task per inner chunk: a task costs about what a small chunk does.
        options.map_fn(decode_group, even_runs(stored, DECODE_GROUPS))
        return True

    def index_nbytes(self, spec: ChunkSpec) -> int:
        """Encoded size of the index of a shard of ``spec`` (``16·n + 4``
        bytes with the default index codecs)."""
        return self.layout(spec).index_nbytes

    def read_index(self, data: bytes, spec: ChunkSpec) -> ShardIndex:
        """The checked index of a whole encoded shard."""
        return self.layout(spec).read_index(data)

    # -- partial reads and writes --------------------------------------
    @property
    def capabilities(self) -> CodecCapabilities:
        return PARTIAL

    def partial_decoder(
        self,
        input: ByteReader,
        spec: ChunkSpec,
        options: DecodeOptions = DEFAULT_OPTIONS,
        *,
        max_gap_nbytes: int | None = None,
        map_fn: MapFn | None = None,
    ) -> ShardPartialDecoder:
        """A reader of selections of one stored shard; see :class:`~.partial.ShardPartialDecoder`.

        ``input`` is a :class:`~zarrpy.codecs.abc.ByteReader` of the shard. It
        is not called until the first selection is decoded. ``options``
        (``max_gap_nbytes`` and ``map_fn`` override its fields) carries the
        map that runs inner chunks' decoding: the array layer passes its
        thread pool's, so the codec itself owns no threads.
        """
        gap = max_gap_nbytes if max_gap_nbytes is not None else options.max_gap_nbytes
        return ShardPartialDecoder(
            self.layout(spec), input,
            max_gap_nbytes=DEFAULT_MAX_GAP_NBYTES if gap is None else gap,
            map_fn=map_fn or options.map_fn,
        )

    def update(
        self, old: bytes | None, writes: Sequence[ChunkWrite], spec: ChunkSpec, *, keep_fill: bool = False
    ) -> bytes | None:
        """The shard after ``writes``; see :meth:`update_many`. Inner chunks
        that hold only the fill value are never stored, so ``keep_fill`` has
        no effect inside a shard; a shard left with no inner chunk is None."""
        if len(writes) == 1 and is_full_selection(writes[0].selection, spec.shape):
            return self.encode_or_none(writes[0].block.reshape(spec.shape), spec)
        return self.update_many(old, [(w.selection, w.block) for w in writes], spec)

    def update_many(
        self, old: bytes | None, writes: Sequence[tuple[Selection, ArrayBytes]], spec: ChunkSpec
    ) -> bytes | None:
        """The shard after writing each ``block`` at its ``selection`` (later
        writes win where they overlap); None if it ends up all fill.

        ``old`` is the shard's current encoding (None: missing, all fill).
        ``selection`` has per shard dimension a slice or a 1-D integer array
        (orthogonal), or is :class:`~zarrpy.core.selection.Points` (split
        among the inner chunks they fall in); ``block`` has the selection's shape. Semantics: decode,
        ``shard[np.ix_(...)] = block``, encode. Inner chunks the selection
        does not touch keep their encoded bytes as they are; inner chunks it
        covers whole are encoded from ``block`` without decoding the old ones;
        the others are decoded, merged and re-encoded. Inner chunks equal to
        the fill value are left out. The result is a fresh, compact shard in
        this codec's write order, whatever order ``old`` had.

        Raises
        ------
        CodecError
            If ``block`` does not have the selection's shape or kind.
        ChunkDecodeError
            If ``old`` (or an inner chunk that must be merged) is corrupt.
        """
        layout = self.layout(spec)
        index = layout.read_index(old) if old is not None else ShardIndex(layout.grid_shape)
        view = memoryview(old if old is not None else b"")
        current: dict[int, ArrayBytes] = {}
        for selection, block in writes:
            indexer: OrthogonalIndexer | PointIndexer = (
                PointIndexer.from_points(selection, spec.shape, self.chunk_shape)
                if isinstance(selection, Points)
                else OrthogonalIndexer(normalise_selection(selection), spec.shape, self.chunk_shape)
            )
            if isinstance(block, np.ndarray):
                block = ArrayBytes.from_array(block)
            if block.shape != indexer.shape:
                raise CodecError(f"codec {NAME!r}: block of shape {block.shape} for a selection of shape {indexer.shape}")
            if block.is_fixed == layout.is_variable:
                raise CodecError(f"codec {NAME!r}: block {block!r} does not match data type {spec.dtype.name!r}")
            if block.is_fixed:
                source = block.array
                if source.dtype != layout.fill.dtype:
                    source = source.astype(layout.fill.dtype)
            else:
                source = block.to_bytes_objects()
            for proj in indexer:
                pos = layout.position(proj.chunk_coords)
                part = source[proj.out_selection]
                if proj.is_complete and not indexer.flat_output:
                    current[pos] = _as_chunk(part, layout.inner_spec.shape)
                    continue
                base = current.get(pos)
                if base is None:
                    # Points covering an inner chunk replace it whole, from the fill value.
                    stored = None if proj.is_complete else index.get(pos)
                    if stored is None:
                        base = layout.fill_chunk()
                    else:
                        base = layout.decode_inner(pos, bytes(view[stored[0] : stored[0] + stored[1]]))
                current[pos] = _merge(base, proj.chunk_selection, part)
        new: dict[int, bytes | None] = {
            pos: None if layout.is_fill(inner) else layout.encode_inner(inner) for pos, inner in current.items()
        }
        keep = set(np.flatnonzero(index.present()).tolist()) | set(new)
        pieces: list[tuple[int, bytes | memoryview]] = []
        for pos in sorted(keep):  # build() lays them out in the write order
            encoded = new.get(pos)
            if encoded is not None:
                pieces.append((pos, encoded))
            elif pos not in new:
                location = index.get(pos)
                assert location is not None  # a stored inner chunk
                offset, nbytes = location
                pieces.append((pos, view[offset : offset + nbytes]))
        return layout.build(pieces) if pieces else None

    # -- helpers -------------------------------------------------------
    def _inner_spec(self, spec: ChunkSpec) -> ChunkSpec:
        return ChunkSpec(self.chunk_shape, spec.dtype, spec.fill_value)

    def _bind_index(self, grid: tuple[int, ...]) -> BoundChain:
        try:
            bound = self.index_codecs.bind(index_spec(grid))
        except CodecError as exc:
            raise CodecError(f"codec {NAME!r}: 'index_codecs': {exc}") from None
        if bound.encoded_size is None:
            raise CodecError(
                f"codec {NAME!r}: 'index_codecs' must produce a fixed size; "
                "compressors are not allowed in the index chain"
            )
        return bound


def chain_with_write_order(chain: CodecChain, order: str) -> CodecChain:
    """``chain`` with its sharding codec (and the ones nested in it) writing
    inner chunks in ``order``; a chain whose array-to-bytes codec is not
    sharding comes back as it is. CodecError for an unknown order."""
    codec = chain.array_to_bytes
    if not isinstance(codec, ShardingCodec):
        check_choice(NAME, "subchunk_write_order", order, WRITE_ORDERS)
        return chain
    ordered = codec.with_write_order(order)
    if ordered is codec:
        return chain
    return CodecChain([*chain.array_to_array, ordered, *chain.bytes_to_bytes])


def _decode_stored(layout: ShardLayout, index: ShardIndex, data: bytes) -> dict[int, ArrayBytes]:
    view = memoryview(data)
    out = {}
    for pos in np.flatnonzero(index.present()).tolist():
        offset, nbytes = index.get(pos)  # type: ignore[misc]
        out[pos] = layout.decode_inner(pos, bytes(view[offset : offset + nbytes]))
    return out


def _as_chunk(part: np.ndarray, shape: tuple[int, ...]) -> ArrayBytes:
    if part.dtype == object:
        return ArrayBytes.from_bytes_list(part.reshape(-1).tolist(), shape)
    return ArrayBytes.from_array(np.ascontiguousarray(part).reshape(shape))


def _merge(base: ArrayBytes, chunk_selection: tuple[Any, ...], part: np.ndarray) -> ArrayBytes:
    """``base`` with ``part`` written at ``chunk_selection``."""
    if part.dtype == object:
        merged = np.array(base.to_bytes_objects(), copy=True)
        merged[chunk_selection] = part
        return ArrayBytes.from_bytes_list(merged.reshape(-1).tolist(), base.shape)
    merged = np.array(base.array, copy=True)
    merged[chunk_selection] = part
    return ArrayBytes.from_array(merged)


def _parse_chunk_shape(value: Any) -> tuple[int, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise CodecError(f"codec {NAME!r}: 'chunk_shape' must be a list of positive integers, got {value!r}")
    for n in value:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise CodecError(f"codec {NAME!r}: 'chunk_shape' must be a list of positive integers, got {list(value)!r}")
    return tuple(int(n) for n in value)


def _box(coords: tuple[int, ...], inner_shape: Shape) -> tuple[slice | EllipsisType, ...]:
    """The key of an inner chunk's box in a shard's array: its slices and an
    Ellipsis, which keeps the box of a 0-d shard a view (``dest[()]`` is a scalar)."""
    return (*(slice(c * n, (c + 1) * n) for c, n in zip(coords, inner_shape)), Ellipsis)


__all__ = ["ShardingCodec", "chain_with_write_order"]
