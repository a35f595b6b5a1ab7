"""Chunk I/O: the one layer that touches both stores and codecs.

A :class:`ChunkIO` is bound to one array's store, path and (V3) metadata.
Reads turn a selection's chunk projections into store requests, fetch in
batches, decode on the shared pool and scatter into an output buffer the
caller gives (so reads into caller buffers, or a decoded-chunk cache, slot in
here without touching the API layer). A chunk whose chain decodes partially
(``bytes``, ``crc32c``, ``sharding_indexed``: see
:mod:`zarrpy.codecs.partial`) is read through its partial decoder when
:func:`~zarrpy.codecs.partial.reads_partially` says so.

``ChunkIO`` is the one class the API uses, built from parts by job: it *is*
a :class:`~.chunk_keys.ChunkKeys` (keys, listing, grouping: what every other
part needs, so a base class), and it *has* a
:class:`~.cached_reads.CachedChunks` when reads go through a cache (which
needs only this module's loading function, so composition keeps that one
dependency explicit) and a :class:`~.shard_reads.ShardReads` (the staged
planner of partial shard reads). This module keeps the reads and writes.

Writes go the same way back: blocks are grouped by stored key, the keys that
need their old value are fetched in one batch, and each is updated through
:meth:`BoundChain.update` (so a shard rewrites only the inner chunks
written, with no sharding special case here); every chunk is encoded before
the first is stored, so a codec error or a corrupt old chunk writes nothing.
On stores with conditional writes an update is written only if its chunk is
unchanged since the read, and redone when it changed (:mod:`.optimistic`);
elsewhere updated keys are locked (in this process, across processes where
the store locks updates, and by the synchronizer when there is one).
"""

from __future__ import annotations

import functools
import math
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, Callable, Hashable, Iterable, Iterator, Mapping, NamedTuple, Sequence

import numpy as np

from ..codecs.chain import BoundChain, chain_from_json
from ..codecs.fill import fill_chunk, fixed_fill
from ..codecs.merge import ChunkWrite
from ..codecs.partial import ArrayPartialDecoder, ChunkSelection, DecodeOptions, IndexedDecoder, MapFn, reads_partially
from ..core._typing import BytesLike, ChunkCoords, Shape
from ..core.batches import even_runs
from ..core.byte_range import ObjectRead, VersionedRequest
from ..core.byte_reader import BytesReader
from ..core.chunk_grid import ChunkGrid
from ..core.paths import join_key
from ..core.chunk_spec import ChunkSpec
from ..core.limits import check_chunk_nbytes
from ..core.indexing import ChunkProjection, OrthogonalIndexer, whole_chunk_box
from ..core.point_indexing import PointIndexer
from ..errors import CodecError, MetadataError, OutTypeError, SelectionError, UnknownCodecError, at_key
from ..metadata.chunk_key_encoding import decode_chunk_key
from ..metadata.v3 import ArrayMetadataV3
from ..stores.abc import Store
from .cache_hook import ChunkCache
from .cached_reads import CachedChunks, cache_prefix
from .chunk_keys import ChunkKeys, Member, StoredChunk, StoredSizes
from .synchronizer import Synchronizer
from .concurrency import for_each_batch, map_chunks, max_workers
from .locks import locked
from .optimistic import update_conditionally, write_all
from .answer_drain import AnswerDrain
from .io_pool import map_io
from .scatter import Projection, put as _put, put_fill as _put_fill
from .shard_reads import IndexCache, ShardReads
from ..core.dtypes.optional import reads_in_pairs
from .paired import PairedStrings
from .values import ElementForm


INLINE_READ_NBYTES = 1 << 20
"""Reads of chunks decoding to at most this many bytes in all (1 MiB) run in
the calling thread, without the pool (see :meth:`ChunkIO._small_read`)."""

_PART = object()
"""Marks a chunk of a staged read that is read in part, by its own reader."""

_Task = tuple[str, list["Projection"], Any]
"""One stored chunk of a staged read: key, projections, and the fetched
value (None before the fetch or when missing; :data:`_PART`: read in part)."""

STAGED_READ_OBJECTS = 1024
"""A read on a store where each request is a round trip fetches at most
this many stored chunks per batch before decoding them (so a huge read holds
the encoded bytes of that many at a time, and costs one batch per 1024)."""

Indexer = OrthogonalIndexer | PointIndexer


@dataclass(frozen=True, slots=True)
class BlockWrite:
    """``block`` (elements, shaped like the selection) written at
    ``projection``'s place in its stored chunk."""

    projection: Projection
    block: np.ndarray


class ChunkData(NamedTuple):
    """Elements for one (inner) chunk of :meth:`ChunkIO.write_chunks`: the
    chunk's region of the array (edge chunks clipped)."""

    coords: ChunkCoords
    data: np.ndarray


class ChunkIO(ChunkKeys):
    """Reads and writes the chunks of one array (see the module docstring)."""

    def __init__(
        self, store: Store, path: str, metadata: ArrayMetadataV3, *, write_empty_chunks: bool = False,
        cache: ChunkCache | None = None,
        synchronizer: Synchronizer | None = None,
        subchunk_write_order: str | None = None,
    ):
        self.synchronizer = synchronizer
        """Locks keys across processes for read-modify-write, when given."""
        self.write_empty_chunks = write_empty_chunks
        self.cache = cache
        """Decoded (inner) chunks are read through it when given (see :meth:`read_chunk_shape`)."""
        where = f"array {path or '/'!r} in {store.display_name}"
        try:
            self.chain = chain_from_json(metadata.codecs)  # shared by arrays with the same codecs
        except UnknownCodecError as exc:
            raise UnknownCodecError(f"{where}: {exc}") from None
        if subchunk_write_order is not None:  # a write setting, not in the metadata
            from ..codecs.sharding.codec import chain_with_write_order  # loaded only for arrays given an order

            self.chain = chain_with_write_order(self.chain, subchunk_write_order)
        self.spec = ChunkSpec(metadata.chunk_shape, metadata.data_type, metadata.fill_value)
        """The chunk spec of the grid's nominal chunk shape (the one chunk shape
        of a regular grid); :meth:`spec_at` gives each chunk's own."""
        self.bound: BoundChain = self.chain.bind(self.spec)
        """The chain bound to :attr:`spec`; :meth:`bound_at` gives each chunk's own."""
        chain = self.chain
        plain = not chain.array_to_array and not chain.bytes_to_bytes
        self.inner = chain.array_to_bytes.inner_chunks() if plain else None
        """The chunks stored independently inside each stored chunk (a
        shard's inner chunks), or None."""
        super().__init__(store, path, metadata, ChunkGrid.regular(metadata.shape, self.inner.shape)
                         if self.inner is not None else None)
        grid = self.grid
        self._uniform_shape = uniform = grid.uniform_chunk_shape
        """The one shape every stored chunk has (a regular grid), else None."""
        read = self.read_grid
        self.index_keys = (uniform or grid, (uniform or grid) if read is grid else read.uniform_chunk_shape or read)
        """What whole-array indexers are built from, for writes and reads: the
        grid, or its one chunk shape (cheaper to hash) when it has one."""
        self._bounds: dict[Shape, BoundChain] = {metadata.chunk_shape: self.bound}
        try:
            if self.inner is not None:
                _check_shard_edges(grid, self.inner.shape)
            check_chunk_nbytes(
                self.inner.shape if self.inner is not None else self._uniform_shape or grid.max_chunk_shape,
                None if metadata.data_type.is_variable else metadata.data_type.numpy.itemsize,
                "codecs: sharding_indexed chunk_shape" if self.inner is not None else "chunk_grid.chunk_shape",
            )
        except MetadataError as exc:
            raise MetadataError(f"{where}: {exc}") from None
        fill = metadata.fill_value if metadata.data_type.is_variable else fixed_fill(self.spec)[()]
        self.form = ElementForm(metadata.data_type, fill, chain.array_to_bytes.ragged_dtype())
        self._options = DecodeOptions(map_fn=map_chunks)
        self._cached = CachedChunks(cache, self, self._load_chunks) if cache is not None else None
        """Reads through the cache, when one is given (see :mod:`.cached_reads`)."""
        self.read_form: ElementForm | PairedStrings = (
            PairedStrings(self.form) if cache is None and self.form.ragged is None and reads_in_pairs(
                metadata.data_type) else self.form)
        """How a read's buffer holds elements: the element form, or value/flag
        pairs for optional strings (:mod:`.paired`; not through a cache, whose
        chunks are in the element form)."""
        self._indexes = IndexCache(cache, cache_prefix(self))
        """Checked shard indexes with the version of their shard (see :mod:`.shard_reads`)."""
        self._shard_reads = ShardReads(store, self.bound_for_key, self._options, self._indexes) if self.inner else None
        """Plans partial reads of shards in two batches (a plain chain whose
        array-to-bytes codec is sharding; other chains read shard by shard)."""

    @property
    def read_grid(self) -> ChunkGrid:
        """The chunk grid read indexers use: the cache's unit (inner chunks
        of a shard) when reads go through a cache, else the stored chunks."""
        return self.unit_grid if self.cache is not None else self.grid

    # -- each stored chunk's shape ---------------------------------------
    def spec_at(self, coords: ChunkCoords) -> ChunkSpec:
        """The chunk spec of the stored chunk at ``coords`` (its own shape:
        the edge chunks of ``zarrs.regular_bounded``, each chunk of a
        ``rectilinear`` grid)."""
        return self.bound_at(coords).spec

    def bound_at(self, coords: ChunkCoords) -> BoundChain:
        """The chain bound to the stored chunk at ``coords``: :attr:`bound`
        on a regular grid; otherwise bound once per distinct chunk shape."""
        if self._uniform_shape is not None:
            return self.bound
        shape = self.grid.chunk_shape_at(coords)
        bound = self._bounds.get(shape)
        if bound is None:
            if len(self._bounds) >= _MAX_BOUND_SHAPES:
                self._bounds = {self.spec.shape: self.bound}
            try:
                bound = self.chain.bind(ChunkSpec(shape, self.spec.dtype, self.spec.fill_value))
            except CodecError as exc:
                raise at_key(exc, self.key(coords)) from exc
            self._bounds[shape] = bound
        return bound

    def bound_for_key(self, key: str) -> BoundChain:
        """:meth:`bound_at` the stored chunk under ``key`` (a key of this array)."""
        if self._uniform_shape is not None:
            return self.bound
        coords = decode_chunk_key(self.metadata.chunk_key_encoding, key[len(join_key(self.path, "")):], len(self.shape))
        assert coords is not None, key
        return self.bound_at(coords)

    # -- what reads keep: decoded chunks, shard indexes -------------
    def forget(self, coords: Iterable[ChunkCoords]) -> None:
        """Drop the cached (inner) chunks and shard indexes of the stored chunks at ``coords``."""
        coords = list(coords)
        if self.inner is not None:
            self._indexes.discard([self.key(c) for c in coords])
        if self._cached is not None:
            self._cached.forget(coords)

    def forget_all(self) -> None:
        """Drop every cached chunk and shard index of this array (its shape changed)."""
        self._indexes.clear()
        if self._cached is not None:
            self._cached.forget_all()

    # -- reading -------------------------------------------------------
    def indexer(self, selection: Any, *, max_arrays: int | None = None) -> OrthogonalIndexer:
        """An orthogonal indexer of ``selection`` over the stored chunk grid
        (``max_arrays``: how many dimensions may take index arrays)."""
        return OrthogonalIndexer(selection, self.shape, self.grid, max_arrays=max_arrays)

    def point_indexer(self, selection: Any, *, write: bool = False) -> PointIndexer:
        """A pointwise (numpy advanced) selection, grouped by the read unit
        (inner chunks of a shard), so partial reads stay inside them; a
        write's projections address stored chunks, a cached read's the unit."""
        return PointIndexer(selection, self.shape, self.grid if write else self.read_grid, self.unit_grid)

    def read(self, indexer: Indexer, out: np.ndarray | None = None) -> Any:
        """The selection ``indexer`` describes, as numpy (a scalar for an
        all-integer selection; a RaggedArray for ragged elements).

        With ``out`` (a numpy array of the selection's shape and the array's
        dtype; a view into a bigger array is fine) the chunks are scattered
        straight into it, no intermediate array, and ``out`` is returned.
        Raises SelectionError naming both shapes or dtypes when it does not fit.
        """
        if out is not None:
            self._check_out(out, indexer)
            if indexer.flat_output and not out.flags.c_contiguous:
                # Points land by flat position: a strided out gets one copy.
                out[...] = self.read(indexer)
                return out
            self.read_into(out.reshape(-1) if indexer.flat_output else out, indexer)
            return out
        buffer = self._output(indexer.shape)
        self.read_into(self._flat(buffer) if indexer.flat_output else buffer, indexer)
        return self.read_form.scalar(buffer) if indexer.is_scalar else self.read_form.result(buffer)

    def read_validity(self, indexer: Indexer) -> np.ndarray:
        """For zarrs' optional types: whether each selected element is present
        at each optional level (see :func:`~.values.optional_validity`);
        DataTypeError for any other type."""
        buffer = self._output(indexer.shape)
        self.read_into(self._flat(buffer) if indexer.flat_output else buffer, indexer)
        return self.read_form.validity(buffer)

    def _flat(self, buffer: np.ndarray) -> np.ndarray:
        """A point read's buffer with its selection axes flattened."""
        return buffer.reshape((-1, *self.read_form.element_shape))

    def _output(self, shape: Shape) -> np.ndarray:
        """An empty result of ``shape``, or SelectionError when memory cannot hold it."""
        try:
            return self.read_form.empty(shape)
        except (ValueError, MemoryError) as exc:
            nbytes = math.prod(shape) * math.prod(self.read_form.element_shape) * self.read_form.dtype.itemsize
            raise SelectionError(
                f"a selection of shape {tuple(shape)} needs {nbytes} bytes of memory, more than can be "
                f"allocated ({exc}); read it in parts"
            ) from None

    def _check_out(self, out: Any, indexer: Indexer) -> None:
        if not isinstance(out, np.ndarray) or isinstance(out, np.ma.MaskedArray):
            raise OutTypeError(f"out: expected a numpy array, got {type(out).__name__}")
        if not self.form.reads_into_buffers:
            raise SelectionError(
                f"out: data type {self.form.data_type.name!r} reads into a new result (ragged or optional elements)"
            )
        if out.shape != tuple(indexer.shape):
            raise SelectionError(f"out: shape {out.shape} does not match the selection's shape {tuple(indexer.shape)}")
        if out.dtype != self.form.dtype:
            raise SelectionError(f"out: dtype {out.dtype} does not match the array's dtype {self.form.dtype}")
        if not out.flags.writeable:
            raise SelectionError("out: the array is read-only")

    def read_into(self, out: np.ndarray, projections: Iterable[Projection]) -> None:
        """Scatter the chunks of ``projections`` into ``out`` (shaped like the
        selection; flattened for point selections). Projections into one
        stored chunk (points in several inner chunks of a shard) share one
        fetch, or one partial decoder and so one index read. With a cache,
        projections address (inner) chunks, taken from the cache or read and
        kept there (:class:`~.cached_reads.CachedChunks`)."""
        if self._cached is not None:
            self._cached.read_into(out, projections)
            return
        by_key: dict[str, list[Projection]] = {}
        for proj in projections:
            by_key.setdefault(self.key(proj.chunk_coords), []).append(proj)
        if not self.store.reads_in_place:
            items = list(by_key.items())
            for start in range(0, len(items), STAGED_READ_OBJECTS):  # bounded encoded bytes in memory
                self._read_staged(out, items[start:start + STAGED_READ_OBJECTS])
            return

        def read_batch(batch: list[tuple[str, list[Projection]]]) -> None:
            in_part = [self._reads_partially(group) for _, group in batch]
            whole = [item for item, part in zip(batch, in_part) if not part]
            # One scratch decoder for the batch (per chunk shape): its buffer is
            # taken once, by the first chunk that is not decoded straight into ``out``.
            with self._scratch_decoders(out) as decoders:  # local files: each read into scratch, decoded, copied out
                for key, group in whole:
                    with self.store.get_scratch(key) as data:
                        self._scatter_whole(out, key, group, data, decoders)
            for (key, group), part in zip(batch, in_part):
                if part:
                    self._scatter_part(out, key, group)

        items = list(by_key.items())
        if self._small_read(len(items)):
            read_batch(items)  # less work than handing it to the pool costs
        else:
            for_each_batch(read_batch, items)

    def _read_staged(self, out: np.ndarray, items: list[tuple[str, list[Projection]]]) -> None:
        """:meth:`read_into` where each request is a round trip (object
        stores; memory): the stored chunks the read needs are fetched in a
        few batches in flight at once, each decoded as soon as it is in; the
        shards read in part take two stages (:class:`ShardReads`): their
        indexes, with the whole chunks, which decode meanwhile; then their
        inner chunks, again in a few batches decoded as they come in."""
        in_part = [self._reads_partially(group) for _, group in items]
        whole = [item for item, part in zip(items, in_part) if not part]
        part = [item for item, part in zip(items, in_part) if part]

        def decode_batch(batch: list[_Task]) -> None:
            with self._scratch_decoders(out) as decoders:
                for key, group, value in batch:
                    if value is _PART:
                        self._scatter_part(out, key, group)
                    else:
                        self._scatter_whole(out, key, group, value, decoders)

        def decode_all(tasks: list[_Task]) -> None:
            if (self._small_read(len(tasks)) and not part) or (self.inner is not None and len(tasks) < max_workers()):
                # Too few chunks to share out (or few shards, whose inner chunks
                # the pool decodes side by side when their loop runs here).
                decode_batch(tasks)
            else:
                for_each_batch(decode_batch, tasks)

        groups = 1 if self._small_read(len(items)) else 2 * max_workers()

        def decode_whole(data: list[bytes | None]) -> None:
            decode_all([(key, group, value) for (key, group), value in zip(whole, data)])

        if part and self._shard_reads is not None and self.store.sends_at_once:
            self._read_shards_as_answered(out, part, whole)
            return
        if part and self._shard_reads is not None:
            # Stage 1: the shards' indexes with the whole chunks, which decode
            # while stage 2 fetches the shards' inner chunks, each batch of
            # shards decoded as soon as its bytes are in.
            groups_of = {key: group for key, group in part}
            selections_of = _selections_of(part)
            self._shard_reads.read(
                list(selections_of.items()),
                lambda key, decoder: self._scatter_decoded_part(out, key, groups_of[key], decoder,
                                                                selections=selections_of[key]),
                [k for k, _ in whole], decode_whole, groups=groups)
            return
        if not part and len(whole) > 1 and self.store.sends_at_once:
            self._read_as_answered(out, whole)
            return
        # Plain chunks (and shards read whole): fetched in a few batches at
        # once, each decoded as soon as it is in.
        tasks: list[_Task] = [(k, g, None) for k, g in whole] + [(k, g, _PART) for k, g in part]

        def fetch_and_decode(batch: list[_Task]) -> None:
            fetch = [i for i, t in enumerate(batch) if t[2] is not _PART]
            for i, value in zip(fetch, self._fetch([batch[i][0] for i in fetch])):
                batch[i] = (batch[i][0], batch[i][1], value)
            decode_all(batch)

        if self.store.whole_read_nbytes:  # requests are cheap (memory): one batch, decoded on the pool
            fetch_and_decode(tasks)
        else:  # each batch mostly waits on the network: all in flight at once
            map_io(fetch_and_decode, even_runs(tasks, groups))

    def _read_as_answered(self, out: np.ndarray, whole: list[tuple[str, list[Projection]]]) -> None:
        """Whole chunks on a store that sends a batch at once (HTTP, S3): one
        batch, each chunk decoded as soon as its answer is in, by this thread
        and pool threads while answers queue up (:class:`AnswerDrain`), so
        little decoding is left once the last answer is in. A shard's inner
        chunks join the same queue (its ``map_fn`` queues them), so a few
        big shards share out as evenly as many small chunks."""
        drain: AnswerDrain[Callable[[], None]] = AnswerDrain(lambda work: work())
        scatter = self._whole_scatter(out, whole, drain)
        pending = self.store.submit_versioned([VersionedRequest(key) for key, _ in whole],
                                              on_answer=lambda i, answer: drain.put(lambda: scatter(i, answer)))
        pending.when_done(drain.close)
        if not pending.live:
            pending.result()  # a store that answers the batch all at once, here
        drain.run()  # every answer decoded, no helper still writing into out
        pending.result()  # a failed request's error

    def _read_shards_as_answered(self, out: np.ndarray, part: list[tuple[str, list[Projection]]],
                                 whole: list[tuple[str, list[Projection]]]) -> None:
        """Shards read in part, and chunks read whole, on a store that sends
        a batch at once: the two stages of :meth:`ShardReads.read_answered`,
        each shard's ranges sent from the store's loop as its index comes in,
        every answer decoded as it arrives (:class:`AnswerDrain`)."""
        assert self._shard_reads is not None
        drain: AnswerDrain[Callable[[], None]] = AnswerDrain(lambda work: work())
        groups_of = {key: group for key, group in part}
        selections_of = _selections_of(part)

        def ready(key: str, decoder: IndexedDecoder) -> None:
            # Its inner chunks join the drain, not the pool: a drain thread
            # waiting on the pool would wait for helpers busy with the drain.
            self._scatter_decoded_part(out, key, groups_of[key], decoder, _queue_on(drain, key), selections_of[key])

        def ready_parts(key: str, decoder: IndexedDecoder, parts: frozenset[int]) -> None:
            dests = self._part_dests(out, decoder, groups_of[key])
            assert dests is not None  # splits(key, decoder) said so
            try:
                decoder.decode_parts_into(selections_of[key], dests, parts)
            except CodecError as exc:
                raise at_key(exc, key) from exc

        self._shard_reads.read_answered(
            list(selections_of.items()), ready,
            [key for key, _ in whole], self._whole_scatter(out, whole, drain), drain,
            ready_parts, lambda key, decoder: self._part_dests(out, decoder, groups_of[key]) is not None)

    def _whole_scatter(self, out: np.ndarray, whole: list[tuple[str, list[Projection]]],
                       drain: AnswerDrain[Callable[[], None]]) -> Callable[[int, ObjectRead | None], None]:
        """``scatter(i, answer)``: the answer for ``whole[i]`` decoded into
        ``out``, a shard's inner chunks queued on ``drain`` (its ``map_fn``
        queues them, each error named by the shard's key)."""

        def scatter(i: int, answer: ObjectRead | None) -> None:
            key, group = whole[i]
            queued = DecodeOptions(map_fn=_queue_on(drain, key), max_gap_nbytes=self._options.max_gap_nbytes)
            with self._scratch_decoders(out) as decoders:
                self._scatter_whole(out, key, group, None if answer is None else answer.data, decoders, queued)

        return scatter

    def _small_read(self, nchunks: int) -> bool:
        """Whether ``nchunks`` stored chunks of fixed-size elements decode to
        at most :data:`INLINE_READ_NBYTES`: then the calling thread reads
        them itself, since waking pool threads and waiting for them costs
        more than decoding that little (a small array's whole read)."""
        itemsize = None if self.form.data_type.is_variable else self.form.dtype.itemsize
        return itemsize is not None and nchunks * math.prod(self.spec.shape) * itemsize <= INLINE_READ_NBYTES

    def _reads_partially(self, group: list[Projection]) -> bool:
        """Read only part of this chunk? Not when it is wanted whole, nor when
        the whole of it is cheaper on this store; else as the one rule says
        (:func:`~zarrpy.codecs.partial.reads_partially`): a plain shard is
        read through its index unless the read needs every inner chunk
        whole, a chunk whose partial reads skip a check (crc32c) is read
        whole unless it holds chunks, others when at most half is wanted."""
        if any([p.is_complete for p in group]):
            return False
        bound = self.bound_at(group[0].chunk_coords)
        stored = bound.encoded_size
        if stored is not None and stored <= self.store.whole_read_nbytes:
            return False  # cheaper whole on this store
        wanted = sum(math.prod(p.chunk_block_shape) for p in group)
        indexed = self.inner is not None
        return reads_partially(
            bound.capabilities, wanted, bound.spec.size, holds_chunks=bound.holds_chunks,
            indexed=indexed, every_part_whole=indexed and self._needs_every_inner_chunk(group))

    def _needs_every_inner_chunk(self, group: list[Projection]) -> bool:
        """Does one selection of this shard touch each of its inner chunks
        (inside the array) while the inner chunks are read whole anyway
        (compressed)? Then the shard is read whole: the same bytes, in one
        request instead of its index and then its chunks (tensorstore's rule)."""
        assert self.inner is not None
        if len(group) != 1 or not isinstance(group[0], ChunkProjection) or self.bound.inner_reads_partially:
            return False
        proj = group[0]
        for sel, ic, r in zip(proj.chunk_dim_selection, self.inner.shape, self.grid.chunk_region(proj.chunk_coords)):
            n = -(-(r.stop - r.start) // ic)
            if isinstance(sel, slice):
                start, stop, step = sel.indices(r.stop - r.start)
                if step > ic:  # may skip inner chunks
                    touched = np.unique(np.arange(start, stop, step) // ic).size
                else:  # every inner chunk from the first index's to the last's
                    count = len(range(start, stop, step))
                    touched = 0 if count == 0 else (start + (count - 1) * step) // ic - start // ic + 1
            else:
                touched = np.unique(np.asarray(sel) // ic).size
            if touched != n:
                return False
        return True

    def _scratch_decoders(self, out: np.ndarray) -> Any:
        """For one batch of reads into ``out``: the chain's scratch decoder on a
        regular grid (its ``with`` gives the decoding function, or None), else
        one per chunk shape (:class:`_ScratchDecoders`)."""
        return self.bound.scratch_decoder(like=out) if self._uniform_shape is not None else _ScratchDecoders(out)

    def _scatter_whole(
        self, out: np.ndarray, key: str, group: list[Projection], data: Any,
        decoders: _ScratchDecoders | Callable[[BytesLike], np.ndarray | None] | None = None,
        into_options: DecodeOptions | None = None,
    ) -> None:
        """Scatter one stored chunk (``data``; None: missing) into ``out``:
        straight into its box when it takes the whole chunk (with
        ``into_options``, default the array's), else through the scratch
        decoder ``decoders`` has for its chain (see
        :meth:`BoundChain.scratch_decoder`), else the chain's usual decoding."""
        if data is None:
            for proj in group:
                _put_fill(out, proj, self.read_form)
            return
        bound = self.bound_at(group[0].chunk_coords)
        decode = decoders.get(bound) if isinstance(decoders, _ScratchDecoders) else decoders
        dest = self._whole_dest(out, group[0]) if len(group) == 1 else None
        if dest is None and self.inner is not None and self.read_form.reads_into_buffers:
            # A shard fetched whole (it needs every inner chunk) but wanted in
            # part: its inner chunks decode through its partial decoder over
            # the bytes in hand, each taken whole straight into ``out``, not
            # the whole shard into a new array that is then copied.
            reader = BytesReader(memoryview(data).cast("B"))
            self._scatter_decoded_part(out, key, group, bound.partial_decoder(reader, self._options),
                                       None if into_options is None else into_options.map_fn)
            return
        try:
            if dest is not None and bound.decode_into(data, dest, into_options or self._options):
                return
            if decode is not None and self.read_form.reads_into_buffers:  # decompress into scratch, view, copy out
                chunk = decode(data)
                if chunk is not None:
                    for proj in group:
                        _put(out, proj, chunk[(*proj.chunk_selection, Ellipsis)], len(self.read_form.element_shape))
                    return
            with bound.decoded(data) as decoded:
                chunk = self.read_form.to_numpy(decoded)
                for proj in group:
                    _put(out, proj, chunk[(*proj.chunk_selection, Ellipsis)], len(self.read_form.element_shape))
        except CodecError as exc:
            raise at_key(exc, key) from exc

    def _whole_dest(self, out: np.ndarray, proj: Projection) -> np.ndarray | None:
        """``out``'s box for a projection taking its whole chunk, so the chunk
        can be decoded straight into it (:meth:`BoundChain.decode_into`); else None."""
        if not self.read_form.decodes_into_boxes:
            return None
        shape = self._uniform_shape or self.grid.chunk_shape_at(proj.chunk_coords)
        return whole_chunk_box(out, proj, shape)

    def _scatter_part(self, out: np.ndarray, key: str, group: list[Projection]) -> None:
        with self.store.open_reader(key) as reader:
            bound = self.bound_at(group[0].chunk_coords)
            self._scatter_decoded_part(out, key, group, bound.partial_decoder(reader, self._options))

    def _scatter_decoded_part(
        self, out: np.ndarray, key: str, group: list[Projection], decoder: ArrayPartialDecoder,
        into_map: MapFn | None = None, selections: list[ChunkSelection] | None = None,
    ) -> None:
        """The selections of ``group`` from one stored chunk's ``decoder``
        into ``out``: straight into their boxes where they can be (with
        ``into_map``, when given, running the decoder's pieces: it may only
        queue them), else decoded and copied. ``selections``, when given,
        are ``group``'s (the list the read was planned with)."""
        if selections is None:
            selections = [p.chunk_dim_selection for p in group]
        dests = self._part_dests(out, decoder, group)
        if dests is not None:
            try:
                if decoder.decode_selections_into(selections, dests, into_map):
                    return
            except CodecError as exc:
                raise at_key(exc, key) from exc
            for proj in group:
                _put_fill(out, proj, self.read_form)
            return
        try:
            parts = decoder.decode_selections(selections)
            blocks = []
            for proj, part in zip(group, parts):
                if part is not None and proj.pick is not None:
                    part = part.take(proj.pick, proj.chunk_block_shape)
                blocks.append(None if part is None else self.read_form.to_numpy(part))
        except CodecError as exc:
            raise at_key(exc, key) from exc
        for proj, block in zip(group, blocks):
            if block is None:
                _put_fill(out, proj, self.read_form)
            else:
                _put(out, proj, block, len(self.read_form.element_shape))

    def _part_dests(self, out: np.ndarray, decoder: ArrayPartialDecoder, group: list[Projection]) -> list[np.ndarray] | None:
        """Views of ``out`` for each projection of ``group`` when ``decoder``
        can decode straight into them (a shard of fixed-size elements, boxes
        of ``out`` shaped like the selections), else None."""
        if not (decoder.decodes_into and self.read_form.reads_into_buffers):
            return None
        dests = []
        for proj in group:
            if proj.pick is not None or not all([isinstance(s, slice) for s in proj.out_selection]):
                return None
            dest = out[(*proj.out_selection, Ellipsis)]  # a view, even of a 0-d out
            if dest.shape != tuple(proj.chunk_block_shape):
                return None
            dests.append(dest)
        return dests

    def _fetch(self, keys: list[str]) -> list[bytes | None]:
        """Whole values of ``keys`` in one batched store call (none for no keys)."""
        return self.store.get_partial_values([(k, None) for k in keys]) if keys else []

    def decode(self, coords: ChunkCoords, data: bytes) -> np.ndarray:
        """A whole stored chunk, decoded, as numpy elements."""
        return self.decode_key(self.key(coords), data)

    def decode_key(self, key: str, data: bytes) -> np.ndarray:
        """The stored chunk ``key`` holding ``data``, decoded, as numpy elements."""
        try:
            return self.form.to_numpy(self.bound_for_key(key).decode(data))
        except CodecError as exc:
            raise at_key(exc, key) from exc

    # -- the block API: (inner) chunks by coordinates --------------------
    def read_chunks(self, coords_list: Sequence[ChunkCoords]) -> list[np.ndarray]:
        """The region of each (inner) chunk, in the order asked; chunks in one
        stored object share one index read and one batched fetch. With a
        cache, cached chunks come from it (copied: results are the caller's)
        and the others are kept there."""
        if self._cached is None:
            return self._load_chunks(coords_list)
        coords_list = [tuple(int(c) for c in coords) for coords in coords_list]
        chunks = self._cached.chunks(coords_list)
        return [np.array(chunks[coords]) for coords in coords_list]

    def _load_chunks(self, coords_list: Sequence[ChunkCoords]) -> list[np.ndarray]:
        results: list[Any] = [None] * len(coords_list)
        groups = self.members(coords_list)

        decoders: Mapping[str, ArrayPartialDecoder] = {}
        fetched: dict[ChunkCoords, bytes | None] | None = None  # whole chunks fetched up front, if any
        # The units are whole (inner) chunks: only a plain shard's are read in
        # part, through its index (reads_partially's ``indexed`` case); any
        # other stored chunk is wanted whole.
        partial = self.inner is not None
        if not self.store.reads_in_place:  # each stage one batch, before anything is decoded
            if partial and self._shard_reads is not None:  # every shard's index, then every inner chunk
                decoders = self._shard_reads.prepare(
                    [(self.key(outer), [m.selection for m in members]) for outer, members in groups.items()])
            elif not partial:
                fetched = dict(zip(groups, self._fetch([self.key(o) for o in groups])))

        def read_group(batch: list[ChunkCoords]) -> None:
            whole = [] if partial else batch
            values = [fetched[o] for o in whole] if fetched is not None else self._fetch([self.key(o) for o in whole])
            for outer, data in zip(whole, values):
                chunk = self._fill_chunk(outer) if data is None else self.decode(outer, data)
                for m in groups[outer]:
                    region: tuple[slice | EllipsisType, ...] = (*m.selection, Ellipsis)
                    results[m.position] = np.array(chunk[region])
            for outer in batch:
                if outer in whole:
                    continue
                key = self.key(outer)
                members = groups[outer]
                try:
                    if key in decoders:
                        parts = decoders[key].decode_selections([m.selection for m in members])
                    else:
                        with self.store.open_reader(key) as reader:
                            decoder = self.bound_at(outer).partial_decoder(reader, self._options)
                            parts = decoder.decode_selections([m.selection for m in members])
                    for m, part in zip(members, parts):
                        results[m.position] = (
                            self._fill_region(m.shape) if part is None else self.form.to_numpy(part).reshape(m.shape)
                        )
                except CodecError as exc:
                    raise at_key(exc, key) from exc

        for_each_batch(read_group, list(groups))
        return results

    def write_chunks(self, items: Sequence[ChunkData]) -> None:
        """Write (inner) chunks given as ``(coords, elements of the chunk's
        region)``, grouped by stored object: each is read at most once (not
        at all when the call covers it whole) and written once."""
        groups = self.members(item.coords for item in items)
        blocks = []
        for outer, members in groups.items():
            region = self.grid.chunk_region(outer)
            for m in members:
                complete = all(s.start == 0 and s.stop == r.stop - r.start for s, r in zip(m.selection, region))
                proj = ChunkProjection(
                    chunk_coords=outer,
                    chunk_selection=m.selection,
                    chunk_dim_selection=m.selection,
                    chunk_block_shape=m.shape,
                    out_selection=(),
                    out_block_shape=m.shape,
                    is_complete=complete,
                )
                blocks.append(BlockWrite(proj, items[m.position].data))
        self.write(blocks)

    def _fill_chunk(self, coords: ChunkCoords) -> np.ndarray:
        return self.form.to_numpy(fill_chunk(self.spec_at(coords)))

    def _fill_region(self, shape: Shape) -> np.ndarray:
        fill = self.form.fill_block(shape)
        if self.form.ragged is not None:
            ragged: np.ndarray = fill
            return ragged
        if self.form.dtype.kind == "O":  # np.full would parse a bytes fill (an optional element) as numbers
            out = np.empty(shape, dtype=self.form.dtype)
            out[...] = fill
            return out
        return np.full(shape, fill, dtype=self.form.dtype)

    # -- writing -------------------------------------------------------
    def write(self, blocks: Sequence[BlockWrite]) -> None:
        """Store ``blocks``; several may share a stored chunk (later ones win).
        A stored chunk the blocks cover whole is encoded from them alone; the
        others are read, merged and written back (see :meth:`_apply`)."""
        by_key: dict[str, list[BlockWrite]] = {}
        for b in blocks:
            by_key.setdefault(self.key(b.projection.chunk_coords), []).append(b)
        whole = {k: self._covers(group) for k, group in by_key.items()}
        covered = [k for k in by_key if whole[k]]
        needs_old = [k for k in by_key if not whole[k]]
        self._apply(covered, needs_old, lambda key: [self._chunk_write(b) for b in by_key[key]])
        self.forget({b.projection.chunk_coords for b in blocks})

    def _apply(self, covered: list[str], needs_old: list[str], writes: Callable[[str], list[ChunkWrite]]) -> None:
        """Store the stored chunks ``covered`` (written whole) and update
        ``needs_old`` (read, merged, written back) with ``writes(key)``.

        Every chunk is encoded before the first is stored, so a codec error
        or a corrupt old chunk writes nothing. On a store with conditional
        writes each update is written only if its chunk did not change since
        it was read, and is redone on what is there when it did
        (:mod:`.optimistic`: writers in other processes lose nothing, with no
        lock); elsewhere updates are done under this process's key locks,
        the store's cross-process update locks and the synchronizer, if any."""

        def merged(items: list[tuple[str, bytes | None]]) -> list[bytes | None]:
            out: list[bytes | None] = [None] * len(items)

            def encode_batch(batch: list[int]) -> None:
                for i in batch:
                    key, old = items[i]
                    out[i] = self._update(key, old, writes(key))

            for_each_batch(encode_batch, range(len(items)))
            return out

        conditional = self.store.supports_conditional_writes
        with self._locked(needs_old, across_processes=not conditional):
            if conditional:
                whole = list(zip(covered, merged([(k, None) for k in covered])))
                update_conditionally(self.store, needs_old, merged, self._empty_value, first=whole)
            else:
                old = dict(zip(needs_old, self._fetch(needs_old)))
                keys = covered + needs_old
                self._store_all(list(zip(keys, merged([(k, old.get(k)) for k in keys]))))

    def _chunk_write(self, b: BlockWrite) -> ChunkWrite:
        proj = b.projection
        block = np.asarray(b.block) if self.form.ragged is None else b.block
        return ChunkWrite(proj.write_selection, self.form.to_array_bytes(block.reshape(proj.chunk_block_shape)))

    def _update(self, key: str, old: bytes | None, writes: Sequence[ChunkWrite]) -> bytes | None:
        try:
            return self.bound_for_key(key).update(old, writes, keep_fill=self.write_empty_chunks)
        except CodecError as exc:
            raise at_key(exc, key) from exc

    def _covers(self, group: list[BlockWrite]) -> bool:
        """Do these writes cover their chunk's in-array region whole? (Several
        orthogonal blocks for one chunk come from one write_chunks call: distinct
        inner chunks, so sizes add up; point blocks may repeat points.)"""
        if any(b.projection.is_complete for b in group):
            return True
        if len(group) < 2 or not all(isinstance(b.projection, ChunkProjection) for b in group):
            return False
        region = self.grid.chunk_region(group[0].projection.chunk_coords)
        return bool(sum(math.prod(b.projection.chunk_block_shape) for b in group) == math.prod(
            r.stop - r.start for r in region
        ))

    def _store_batch(self, batch: list[tuple[str, bytes | None]]) -> None:
        for key, data in batch:
            if data is None:
                self.remove(key)
            else:
                self.store.set(key, data)

    def _store_all(self, encoded: list[tuple[str, bytes | None]]) -> None:
        """Write (or, for None, delete) every stored chunk: local files from
        the chunk pool, batch by batch; elsewhere every write in one batch
        of concurrent requests and every delete in one batched delete."""
        if self.store.reads_in_place or not self.store.supports_deletes:
            for_each_batch(self._store_batch, encoded)
        else:
            write_all(self.store, encoded)

    def _empty_value(self, key: str) -> bytes:
        """The stored chunk ``key`` holding only the fill value (a shard: no inner chunk)."""
        bound = self.bound_for_key(key)
        return bound.encode(fill_chunk(bound.spec))

    def remove(self, key: str) -> None:
        """Delete a stored chunk that holds only the fill value. A store that
        cannot delete (a zip archive) gets the encoded fill chunk instead
        where one is stored, so no stale value can show through later."""
        if self.store.supports_deletes:
            self.store.delete(key)
        elif self.store.exists(key):
            self.store.set(key, self._empty_value(key))

    @contextmanager
    def _locked(self, keys: Sequence[str], *, across_processes: bool = True) -> Iterator[None]:
        """This process's per-key locks; ``across_processes``, also the
        store's update locks (:meth:`~zarrpy.stores.abc.Store.locked_for_update`);
        and the synchronizer's when there is one."""
        with locked(self._lock_token, keys):
            with self.store.locked_for_update(keys) if across_processes and keys else nullcontext():
                if self.synchronizer is None:
                    yield
                else:
                    with self.synchronizer.locked(self._lock_token, keys):
                        yield

    @property
    def _lock_token(self) -> Hashable:
        """The store's identity: equal for two store objects over the same data,
        so their writers share per-key locks and cache entries."""
        return self.store.identity

    # -- shape changes -------------------------------------------------
    def trim(self, new_shape: Shape) -> None:
        """:meth:`fit` for the array resized to ``new_shape``."""
        self.fit(self.metadata.resized(new_shape))

    def fit(self, new: ArrayMetadataV3) -> None:
        """Make the store fit the array's new metadata ``new`` (its shape
        changed): chunks wholly outside it are deleted; chunks it cuts get the
        fill value past the new edge (so growing again later shows fill,
        never stale data); a chunk whose stored shape changes (the edge
        chunks of ``zarrs.regular_bounded``) is stored again at its new
        shape, the part outside the array as fill."""
        self.forget_all()
        new_grid = new.grid
        for key, coords in self.stored_keys():
            if not new_grid.contains(coords):
                self.remove(key)
                continue
            keep = new_grid.data_shape_at(coords)
            old_extent = self.grid.data_shape_at(coords)
            chunk = self.grid.chunk_shape_at(coords)
            if new_grid.chunk_shape_at(coords) != chunk:
                self._store_reshaped(key, coords, new_grid.chunk_shape_at(coords), keep)
                continue
            keep = tuple(max(0, k) for k in keep)
            if all(k >= e for k, e in zip(keep, old_extent)):
                continue
            writes = [
                ChunkWrite(sel, fill_chunk(self.spec, tuple(s.stop - s.start for s in sel)))
                for sel in _outside(keep, chunk)
            ]
            self._apply([], [key], lambda _: writes)

    def _store_reshaped(self, key: str, coords: ChunkCoords, shape: Shape, keep: Shape) -> None:
        """Store the chunk ``key`` again at ``shape``: its first ``keep``
        elements along each dimension as they are, the rest fill."""
        bound = self.chain.bind(ChunkSpec(shape, self.spec.dtype, self.spec.fill_value))
        with self._locked([key]):
            old = self._fetch([key])[0]
            if old is None:
                return
            held = tuple(min(k, n) for k, n in zip(keep, self.grid.data_shape_at(coords)))
            part = self.decode_key(key, old)[tuple(slice(0, n) for n in held)]
            write = ChunkWrite(tuple(slice(0, n) for n in held), self.form.to_array_bytes(np.ascontiguousarray(part)))
            try:
                value = bound.update(None, [write], keep_fill=self.write_empty_chunks)
            except CodecError as exc:
                raise at_key(exc, key) from exc
            if value is None:
                self.remove(key)
            else:
                self.store.set(key, value)


_MAX_BOUND_SHAPES = 4096
"""Distinct chunk shapes :meth:`ChunkIO.bound_at` keeps a bound chain for."""


class _ScratchDecoders:
    """The scratch decoders (:meth:`BoundChain.scratch_decoder`) of one batch
    of reads into ``like``: one per bound chain, i.e. per chunk shape, each
    entered on first use and left with the batch."""

    __slots__ = ("like", "_open")

    def __init__(self, like: np.ndarray):
        self.like = like
        self._open: dict[int, tuple[Any, Callable[[BytesLike], np.ndarray | None] | None]] = {}

    def __enter__(self) -> _ScratchDecoders:
        return self

    def get(self, bound: BoundChain) -> Callable[[BytesLike], np.ndarray | None] | None:
        entry = self._open.get(id(bound))
        if entry is None:
            decoder = bound.scratch_decoder(like=self.like)
            entry = self._open[id(bound)] = (decoder, decoder.__enter__())
        return entry[1]

    def __exit__(self, *exc: object) -> None:
        for decoder, _ in self._open.values():
            decoder.__exit__(None, None, None)
        self._open.clear()


def _check_shard_edges(grid: ChunkGrid, inner: Shape) -> None:
    """MetadataError unless every stored edge length of the shard grid is a
    multiple of the inner chunk shape (as zarr-python checks a rectilinear
    shard grid; a ``zarrs.regular_bounded`` edge shard must divide too)."""
    for axis, (dim, c) in enumerate(zip(grid.dims, inner)):
        bad = [e for e in dim.codec_sizes() if e % c]
        if bad:
            raise MetadataError(
                f"chunk_grid: shard edge length {bad[0]} along axis {axis} is not a multiple of the "
                f"sharding_indexed inner chunk length {c}"
            )


def _outside(keep: Shape, shape: Shape) -> list[tuple[slice, ...]]:
    """Disjoint boxes covering ``shape`` minus the box ``[0, keep)``."""
    boxes = []
    for d, (k, n) in enumerate(zip(keep, shape)):
        if k >= n:
            continue
        boxes.append(tuple(
            slice(0, keep[i]) if i < d else slice(k, n) if i == d else slice(0, shape[i]) for i in range(len(shape))
        ))
    return boxes


def _selections_of(part: list[tuple[str, list[Projection]]]) -> dict[str, list[ChunkSelection]]:
    """Each shard's selections as one list, which its read is planned and
    decoded with: the shard's decoder then walks them once (it remembers
    the walk of the last list it was given)."""
    return {key: [p.chunk_dim_selection for p in group] for key, group in part}


def _queue_on(drain: AnswerDrain[Callable[[], None]], key: str) -> MapFn:
    """A ``map_fn`` that queues each piece on ``drain`` (returning no
    results), its decoding errors named by ``key``: for the decoders that
    call their ``map_fn`` last (see :class:`DecodeOptions`)."""

    def run(fn: Callable[[Any], Any], item: Any) -> None:
        try:
            fn(item)
        except CodecError as exc:
            raise at_key(exc, key) from exc

    def queue(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        for item in items:
            drain.put(functools.partial(run, fn, item))
        return []

    return queue


__all__ = [
    "BlockWrite", "ChunkData", "ChunkIO", "Member", "StoredChunk", "StoredSizes"]
