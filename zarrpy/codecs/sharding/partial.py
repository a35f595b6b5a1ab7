"""Partial reads of one shard: the index once, then only the inner chunks needed.

A :class:`ShardPartialDecoder` works on a
:class:`~zarrpy.codecs.abc.ByteReader` of one stored shard and makes, per
decoder, exactly one read for the index (a suffix read when it sits at the
end, a prefix read at the start) and, per :meth:`~ShardPartialDecoder.decode_selection`,
at most one batched ``read.read_many`` for the inner chunks the selection
touches. Byte ranges separated by at most ``max_gap_nbytes`` are merged into
one request, and each inner chunk is sliced out of it afterwards.

The index is checked against the shard's length before any inner chunk is
read: the decoder asks its reader for the length (``reader.size()``: a stat,
a dict length, a HEAD request) and then reads the index by an explicit
range, so an entry past the end, into the index or over another entry is a
:class:`~zarrpy.errors.ChunkDecodeError`, never an allocation of what it
claims. A reader that cannot tell the length (``size()`` None: the payload
of a ``crc32c`` value) gets a suffix read, and a missing shard answers it
with None; an entry past the end then shows as the inner chunk's short read.

Which inner chunks are read in part, through the inner chain's own partial
decoder, is :func:`~zarrpy.codecs.partial.reads_partially`'s to say.
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Sequence

import numpy as np

from ...core.array_bytes import ArrayBytes
from ...core.batches import even_runs
from ...core.byte_range import ByteRequest, RangeRequest, ShortRead, SuffixRequest, read_coalesced
from ...errors import ChunkDecodeError
from ...core.byte_reader import ByteReader, RangeReader
from ..partial import DecodeOptions, IndexedDecoder, MapFn, reads_partially, serial_map
from ...core.indexing import ChunkProjection, OrthogonalIndexer, whole_chunk_box
from ..fill import fill_variable
from ._layout import InnerWork, ShardLayout, gather_variable, normalise_selection
from .index import NAME, ShardIndex

DECODE_GROUPS = min(8, max(2, os.cpu_count() or 2))
"""Inner chunks decoded whole are handed to ``map_fn`` in at most this many
groups (a partial read's and a whole shard's decode alike): one per core, up
to 8. Each group costs more than its Python overhead when groups run side by
side (on 2 cores a 169-chunk region read took 35.9 ms of CPU in 8 groups,
32.6 in 2, and 20.2 ms against 17.7 ms of wall time), so no more groups than
there are cores to run them."""

DEFAULT_MAX_GAP_NBYTES = 64 * 1024
"""Ranges this close together are read as one (cheaper than a second request)."""


_Runs = tuple[list[tuple[RangeRequest, list[int]]], frozenset[int], bool]
"""What :meth:`ShardPartialDecoder._runs` gives: the merged ranges with their
inner chunks, the touched inner chunks stored nowhere, and whether any is an
inner shard read in part."""


class ShardPartialDecoder(IndexedDecoder):
    """Reads selections of one stored shard (see the module docstring).

    The decoded index is kept, so one decoder reads it at most once; decoders
    are cheap and meant for one read operation on one shard. Not thread-safe
    while the index is first loaded.
    """

    __slots__ = ("layout", "max_gap_nbytes", "_read", "_index", "_loaded", "_map", "_last_runs", "_last_walk")

    def __init__(
        self, layout: ShardLayout, read: ByteReader, *, max_gap_nbytes: int = DEFAULT_MAX_GAP_NBYTES, map_fn: Any = None
    ):
        self._map = map_fn or (lambda f, items: [f(x) for x in items])
        self.layout = layout
        self.max_gap_nbytes = max_gap_nbytes
        self._read = read
        self._index: ShardIndex | None = None
        self._loaded = False
        self._last_runs: tuple[ShardIndex | None, Sequence[tuple[Any, ...]], _Runs] | None = None
        self._last_walk: tuple[Sequence[tuple[Any, ...]], list[tuple[int, int, ChunkProjection]]] | None = None

    def index(self) -> ShardIndex | None:
        """The shard's checked index (read on first use, unless the read
        planner loaded it: :meth:`load_index`), or None if the shard is missing.

        Raises
        ------
        ChecksumError
            If the index checksum does not match.
        ChunkDecodeError
            If the shard is shorter than its index or the index is malformed.
        """
        if not self._loaded:
            layout = self.layout
            k = layout.index_nbytes
            total = self._read.size()
            if total is None:  # length unknown (or the shard missing: the read says None)
                self.load_index(self._read(self.index_request()), None)
                return self._index
            if total < k:
                raise ChunkDecodeError(f"codec {NAME!r}: shard of {total} bytes is shorter than its {k}-byte index")
            request = RangeRequest(0, k) if layout.index_at_start else RangeRequest(total - k, total)
            self.load_index(self._read(request), total)
        return self._index

    def index_request(self) -> ByteRequest:
        """The one request that fetches the index without knowing the shard's
        length: a suffix read when it is at the end (the store's answer
        carries the length, which :meth:`load_index` checks it against)."""
        k = self.layout.index_nbytes
        return RangeRequest(0, k) if self.layout.index_at_start else SuffixRequest(k)

    def load_index(self, raw: bytes | None, total: int | None) -> ShardIndex | None:
        """Decode and check the index from ``raw`` (what :meth:`index_request`,
        or an explicit range, read; None: the shard is missing) against the
        shard's length ``total`` (None: unknown), and keep it.

        Raises ChunkDecodeError when the shard is shorter than its index or an
        entry runs past its end, into the index or over another entry.
        """
        layout = self.layout
        k = layout.index_nbytes
        self._index = None
        if raw is not None:
            if (total is not None and total < k) or len(raw) < k:
                n = len(raw) if total is None else total
                raise ChunkDecodeError(f"codec {NAME!r}: shard of {n} bytes is shorter than its {k}-byte index")
            raw = bytes(raw[:k]) if layout.index_at_start else bytes(raw[len(raw) - k:])
            offset = 0 if layout.index_at_start else None if total is None else total - k
            self._index = layout.checked_index(raw, offset, total)
        self._loaded = True
        return self._index

    def use_index(self, index: ShardIndex | None) -> None:
        """Take an index checked earlier (a cached one, whose shard the read
        planner confirms unchanged): no index read at all."""
        self._index, self._loaded = index, True

    def prepare(self, selections: Sequence[tuple[Any, ...]]) -> None:
        """Walk ``selections`` (the inner chunks they touch; no index needed)
        while the index is in flight, so :meth:`byte_ranges` and the
        decoding take the walk made here (remembered for this list)."""
        self._walk(selections)

    def byte_ranges(self, selections: Sequence[tuple[Any, ...]]) -> list[RangeRequest]:
        """The merged byte ranges :meth:`decode_selections` (or ``_into``)
        will read for ``selections``, once the index is loaded: every stored
        inner chunk they touch, whole, merged as :meth:`read_inner` merges
        them. A planner fetches them for many shards in one batch; an inner
        chunk read in part reads inside these ranges."""
        return [request for request, _ in self._runs(selections)[0]]

    def parts_by_range(self, selections: Sequence[tuple[Any, ...]]) -> list[frozenset[int]] | None:
        """The inner chunks each of :meth:`byte_ranges` holds, the ones
        stored nowhere with the first; None for inner shards read in part
        (nested sharding: they read through their own index) and for no
        ranges at all."""
        runs, unstored, nested = self._runs(selections)
        if nested or not runs:
            return None
        parts = [frozenset(positions) for _, positions in runs]
        parts[0] |= unstored
        return parts

    def decode_parts_into(self, selections: Sequence[tuple[Any, ...]], dests: Sequence[np.ndarray],
                          parts: frozenset[int]) -> bool:
        """:meth:`decode_selections_into` of the inner chunks ``parts`` only,
        one after another in the calling thread."""
        return self.decode_selections_into(selections, dests, serial_map, parts)

    def _runs(self, selections: Sequence[tuple[Any, ...]]) -> _Runs:
        """The merged ranges of the stored inner chunks ``selections`` touch,
        each with those inner chunks; the touched ones stored nowhere; and
        whether any is an inner shard read in part through its own index.
        Remembered for the last ``selections`` (the same object) and index:
        a planner asks :meth:`byte_ranges` and then :meth:`parts_by_range`
        of one selection, on the event loop between an index's answer and
        the ranges' requests."""
        index = self.index()
        last = self._last_runs
        if last is not None and last[0] is index and last[1] is selections:
            return last[2]
        runs = self._runs_of(index, selections)
        self._last_runs = (index, selections, runs)
        return runs

    def _runs_of(self, index: ShardIndex | None, selections: Sequence[tuple[Any, ...]]) -> _Runs:
        if index is None:
            return [], frozenset(), False
        layout = self.layout
        touched = [(pos, p) for _, pos, p in self._walk(selections)]
        positions = {pos for pos, _ in touched}
        nested = set()
        if layout.inner.holds_chunks:
            # Inner shards (nested sharding) read in part read their own index
            # and ranges, through the fallback: the whole inner shard could be huge.
            nested = self._read_in_part(touched)
            positions -= nested
        stored: list[tuple[int, int, int]] = []
        unstored = set()
        for pos in positions:
            loc = index.get(pos)
            if loc is not None and loc[1] > 0:
                stored.append((loc[0], loc[0] + loc[1], pos))
            else:
                unstored.add(pos)
        if not stored:
            return [], frozenset(unstored), bool(nested)
        stored.sort()
        # Merged as coalesce_ranges merges (overlapping, touching or at most
        # max_gap_nbytes apart), on the few ints at hand: this runs between
        # an index's answer and the ranges' requests, where numpy calls
        # cost several times what they cost warm.
        gap = self.max_gap_nbytes
        runs: list[tuple[RangeRequest, list[int]]] = []
        run_start, run_end, held = stored[0][0], stored[0][1], [stored[0][2]]
        for start, end, pos in stored[1:]:
            if start > run_end + gap:
                runs.append((RangeRequest(run_start, run_end), held))
                run_start, run_end, held = start, end, []
            run_end = max(run_end, end)
            held.append(pos)
        runs.append((RangeRequest(run_start, run_end), held))
        return runs, frozenset(unstored), bool(nested)

    def _walk(self, selections: Sequence[tuple[Any, ...]]) -> list[tuple[int, int, ChunkProjection]]:
        """``(selection's number, inner chunk position, projection)`` of every
        inner chunk ``selections`` touch, remembered for the last
        ``selections`` (the same object): the planner's ranges and each of
        a shard's ranges decoded as it arrives walk one selection once."""
        last = self._last_walk
        if last is not None and last[0] is selections:
            return last[1]
        layout = self.layout
        walk: list[tuple[int, int, ChunkProjection]] = []
        for i, selection in enumerate(selections):
            indexer = OrthogonalIndexer(normalise_selection(selection), layout.spec.shape, layout.inner_spec.shape)
            walk.extend((i, layout.position(p.chunk_coords), p) for p in indexer)
        self._last_walk = (selections, walk)
        return walk

    def decode_selection(self, selection: tuple[Any, ...]) -> ArrayBytes | None:
        """The orthogonal ``selection`` of the shard, or None if the shard is missing.

        ``selection`` has one entry per shard dimension: a slice with a
        positive step or a 1-D integer array (an integer counts as a
        length-1 array). The result has the selection's shape; elements of
        empty inner chunks are the fill value.

        Raises
        ------
        ChunkDecodeError
            If the index or a needed inner chunk is corrupt, or the shard ends
            before an inner chunk the index points to.
        """
        return self.decode_selections([selection])[0]

    def decode_selections(self, selections: Sequence[tuple[Any, ...]]) -> list[ArrayBytes | None]:
        """Several selections of the shard (see :meth:`decode_selection`) with
        one index read and one batched read of every inner chunk they need
        whole. When the inner chain reads partially (``bytes`` only, nested
        shards), an inner chunk needed only in part is read through the inner
        chain's own partial decoder instead, over that chunk's byte range."""
        index = self.index()
        if index is None:
            return [None] * len(selections)
        layout = self.layout
        plans = []
        for selection in selections:
            indexer = OrthogonalIndexer(normalise_selection(selection), layout.spec.shape, layout.inner_spec.shape)
            plans.append((indexer, [(layout.position(p.chunk_coords), p) for p in indexer]))
        stored = [(pos, p) for _, projections in plans for pos, p in projections if index.get(pos) is not None]
        in_part = self._read_in_part(stored)
        needed = {pos for pos, _ in stored} - in_part
        raw = self.read_inner(sorted(needed))
        decoded = dict(self._map(lambda item: (item[0], layout.decode_inner(*item)), list(raw.items())))
        parts = {k: v for got in self._map(self._decode_part, self._part_requests(stored, in_part)) for k, v in got}
        out: list[ArrayBytes | None] = []
        for indexer, projections in plans:
            pieces = []
            for pos, proj in projections:
                inner = decoded.get(pos)
                if inner is not None:
                    pieces.append(inner.select(proj.chunk_dim_selection))
                else:
                    pieces.append(parts.get(id(proj)))
            out.append(self._assemble(indexer, projections, pieces))
        return out

    @property
    def decodes_into(self) -> bool:
        """Whether :meth:`decode_selections_into` can be used (fixed-size elements)."""
        return not self.layout.is_variable

    def decode_selections_into(self, selections: Sequence[tuple[Any, ...]], dests: Sequence[np.ndarray],
                               map_fn: MapFn | None = None, parts: frozenset[int] | None = None) -> bool:
        """:meth:`decode_selections` of a fixed-size shard, each selection
        written into its ``dests`` entry (writable, shaped like the
        selection, maybe a view into a bigger array) instead of a new array:
        an inner chunk taken whole into a box of its dest is decoded straight
        into it, others are decoded in a scratch buffer and their part
        copied. False (nothing written) when the shard is missing."""
        index = self.index()
        if index is None:
            return False
        layout = self.layout
        by_pos: dict[int, list[tuple[np.ndarray, ChunkProjection]]] = {}
        for i, pos, proj in self._walk(selections):
            if parts is not None and pos not in parts:
                continue  # another range's inner chunk
            if index.get(pos) is None:
                dests[i][proj.out_selection] = layout.fill
            else:
                by_pos.setdefault(pos, []).append((dests[i], proj))
        work = list(by_pos.items())
        part_positions = self._read_in_part((pos, p) for pos, items in work for _, p in items)
        in_part = {pos: items for pos, items in work if pos in part_positions}
        inner_shape = layout.inner_spec.shape

        # A few groups, not a task per inner chunk (a task costs about what a
        # small chunk does); each a run of neighbouring inner chunks, which
        # usually lie next to each other in the shard. Where requests are
        # cheap (a local file), each group reads its own inner chunks, so the
        # first groups decode while the others still read; elsewhere one
        # batched read fetches them all first.
        whole = sorted((item for item in work if item[0] not in in_part), key=lambda item: item[0])
        fetched = None
        if whole and not self._read.cheap_requests:
            fetched = self.read_inner([pos for pos, _ in whole], copy=False)

        def read_and_decode(items: list[tuple[int, list[tuple[np.ndarray, ChunkProjection]]]]) -> None:
            raw = fetched if fetched is not None else self.read_inner([pos for pos, _ in items], copy=False)
            work: list[InnerWork] = []
            for pos, targets in items:
                box = whole_chunk_box(targets[0][0], targets[0][1], inner_shape) if len(targets) == 1 else None
                copies = [] if box is not None else [(d, p.out_selection, p.chunk_selection) for d, p in targets]
                work.append((pos, raw[pos], box, copies))
            layout.decode_inner_chunks(work, like=items[0][1][0][0])

        def decode_part(item: tuple[int, list[tuple[np.ndarray, ChunkProjection]]]) -> None:
            pos, targets = item
            got = self._decode_part((pos, [p for _, p in targets]))
            for (dest, proj), (_, block) in zip(targets, got):
                assert block is not None  # a stored inner chunk
                dest[proj.out_selection] = block.array.reshape(proj.out_block_shape)

        run = map_fn or self._map  # called last: a map_fn that only queues the work may be given
        run(read_and_decode, even_runs(whole, DECODE_GROUPS))
        run(decode_part, list(in_part.items()))
        return True

    def _read_in_part(self, projections: Iterable[tuple[int, ChunkProjection]]) -> set[int]:
        """The positions, among ``projections`` (position, projection into that
        inner chunk), of the inner chunks read in part: through the inner
        chain's own partial decoder, over the chunk's byte range. The rule is
        :func:`~zarrpy.codecs.partial.reads_partially`, asked with the largest
        part wanted of each inner chunk."""
        caps, total = self.layout.inner.capabilities, self.layout.chunk_size
        if not reads_partially(caps, 0, total):
            return set()  # not even a read of nothing would be partial: skip the sizes
        largest: dict[int, int] = {}
        for pos, proj in projections:
            n = math.prod(proj.chunk_block_shape)
            if n > largest.get(pos, -1):
                largest[pos] = n
        return {pos for pos, n in largest.items() if reads_partially(caps, n, total)}

    def _part_requests(
        self, stored: list[tuple[int, ChunkProjection]], in_part: set[int]
    ) -> list[tuple[int, list[ChunkProjection]]]:
        """Per inner chunk read in part: its position and the projections into it."""
        by_pos: dict[int, list[ChunkProjection]] = {}
        for pos, proj in stored:
            if pos in in_part:
                by_pos.setdefault(pos, []).append(proj)
        return list(by_pos.items())

    def _decode_part(self, item: tuple[int, list[ChunkProjection]]) -> list[tuple[int, ArrayBytes | None]]:
        pos, projections = item
        index = self.index()
        location = None if index is None else index.get(pos)
        assert location is not None  # only stored inner chunks are read in part
        offset, nbytes = location
        decoder = self.layout.inner.partial_decoder(
            RangeReader(self._read, offset, nbytes), DecodeOptions(max_gap_nbytes=self.max_gap_nbytes)
        )
        try:
            got = decoder.decode_selections([p.chunk_dim_selection for p in projections])
        except ChunkDecodeError as exc:
            raise type(exc)(f"codec {NAME!r}: inner chunk {self.layout.coords(pos)}: {exc}") from None
        return [(id(p), g) for p, g in zip(projections, got)]

    def _assemble(
        self, indexer: OrthogonalIndexer, projections: list[tuple[int, ChunkProjection]], pieces: list[ArrayBytes | None]
    ) -> ArrayBytes:
        layout = self.layout
        if not layout.is_variable:
            out = np.empty(indexer.shape, dtype=layout.fill.dtype)
            for (_, proj), piece in zip(projections, pieces):
                out[proj.out_selection] = layout.fill if piece is None else piece.array
            return ArrayBytes.from_array(out)
        size = int(np.prod(indexer.shape, dtype=np.int64))
        out_flat = np.arange(size, dtype=np.int64).reshape(indexer.shape)
        gathered = []
        for (_, proj), piece in zip(projections, pieces):
            where = out_flat[proj.out_selection].reshape(-1)
            part = fill_variable(layout.fill_bytes, (where.size,)) if piece is None else piece.reshape((where.size,))
            gathered.append((where, part))
        return gather_variable(gathered, indexer.shape)

    def read_inner(self, positions: Sequence[int], *, copy: bool = True) -> dict[int, Any]:
        """The stored bytes of the inner chunks at flat ``positions`` (empty
        ones are left out), fetched with one batched read; with ``copy=False``
        as memoryviews into the merged reads (see :meth:`CoalescedRead.pieces`).

        Returns an empty dict if the shard is missing.
        """
        index = self.index()
        if index is None:
            return {}
        wanted = []
        for pos in positions:
            loc = index.get(pos)
            if loc is not None:
                wanted.append((loc[0], loc[1], pos))
        wanted.sort()
        starts = [offset for offset, _, _ in wanted]
        ends = [offset + nbytes for offset, nbytes, _ in wanted]

        def short(s: ShortRead) -> ChunkDecodeError:
            offset, nbytes, pos = wanted[s.request]
            return ChunkDecodeError(
                f"codec {NAME!r}: the shard ends before inner chunk {self.layout.coords(pos)} "
                f"(bytes [{offset}, {offset + nbytes}); the shard "
                + ("is missing)" if s.missing else f"ends at byte {s.got_end})")
            )

        got = read_coalesced(self._read, starts, ends, self.max_gap_nbytes, short_read_error=short)
        return {pos: piece for (_, _, pos), piece in zip(wanted, got.pieces(copy=copy))}


__all__ = ["DECODE_GROUPS", "DEFAULT_MAX_GAP_NBYTES", "ShardPartialDecoder"]
