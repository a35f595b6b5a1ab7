"""Composable partial decoders (the zarrs model).

A chain's partial decoder is built bottom-up, each codec wrapping the decoder
of the stage below it (:meth:`~zarrpy.codecs.chain.BoundChain.partial_decoder`):

- the stored value is a :class:`~zarrpy.core.byte_reader.ByteReader` (a
  store key, or a byte range of an enclosing shard: :class:`RangeReader`);
- each bytes-to-bytes codec turns the reader of its encoded bytes into a
  reader of its decoded bytes (``crc32c`` passes ranges through; a
  compressor inherits :class:`WholeBytesDecoder`, which decodes once);
- the array-to-bytes codec turns that reader into an
  :class:`ArrayPartialDecoder` of its chunk (``bytes`` reads the byte ranges
  of the selection; ``sharding_indexed`` reads its index and then the inner
  chunks through the inner chain's partial decoders);
- each array-to-array codec wraps the array decoder below it.

A codec with no cheaper way inherits the decode-everything default, so every
chain has a partial decoder; :class:`CodecCapabilities` says which codecs
really read less than everything, and :func:`reads_partially` is the one
rule that decides, from them, whether a read goes through the partial
decoder or reads the value whole.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..core.byte_range import ByteRequest, RangeRequest, slice_bytes
from ..core.byte_reader import ByteReader, BytesReader, PrefetchedReader, RangeReader
from ..core.selection import Points, dim_indices

T = TypeVar("T")
R = TypeVar("R")

ChunkSelection = tuple[Any, ...]
"""One entry per chunk dimension: a slice with a positive step, or a 1-D
integer array (orthogonal indexing, like ``chunk[np.ix_(...)]``)."""

MapFn = Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]]


def serial_map(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(x) for x in items]``: the map used when the caller gives none."""
    return [fn(x) for x in items]


@dataclass(frozen=True, slots=True)
class CodecCapabilities:
    """What a codec's partial decoder can do better than decoding everything.

    ``partial_decode``: the decoder reads (or decodes) only part of its input
    for a part of the output (``bytes``: byte ranges; ``crc32c``: passes
    ranges through; ``sharding_indexed``: the index and needed inner chunks).
    A chain decodes partially when every codec in it does.
    """

    partial_decode: bool = False
    skips_checks: bool = False
    """True when partial reads skip a check whole reads make (``crc32c``: a
    checksum covers the whole value, so ranges pass through unchecked, as in
    zarrs). Callers that can read whole (a plain chunk, an inner chunk) then
    do, so checksums stay checked; a value too big to read whole for a small
    part (a shard followed by ``crc32c``) is read partially, unchecked."""


WHOLE_ONLY = CodecCapabilities()
"""A codec that must decode its whole input for any part of the output (the default)."""

PARTIAL = CodecCapabilities(partial_decode=True)
"""A codec whose partial decoder reads or decodes only part of its input."""

PARTIAL_UNCHECKED = CodecCapabilities(partial_decode=True, skips_checks=True)
"""As :data:`PARTIAL`, but partial reads skip a check whole reads make
(``crc32c``'s checksum, which covers all the bytes); see ``skips_checks``."""


def reads_partially(
    caps: CodecCapabilities, wanted: int, total: int, *, holds_chunks: bool = False, indexed: bool = False,
    every_part_whole: bool = False,
) -> bool:
    """Whether a read of ``wanted`` of a stored value's ``total`` elements goes
    through the value's partial decoder; else the value is read and decoded
    whole. The one rule of zarrpy's reads: the pipeline asks it per stored
    chunk (:class:`~zarrpy.pipeline.chunk_io.ChunkIO`), a shard per inner
    chunk (:class:`~zarrpy.codecs.sharding.partial.ShardPartialDecoder`).

    - Whole when the chain cannot read partially (``caps.partial_decode``
      False): its partial decoder would decode everything anyway.
    - Whole when partial reads skip a check whole reads make
      (``caps.skips_checks``: ``crc32c``), so the checksum is checked, unless
      the value ``holds_chunks`` (a stored shard): that may be far too big to
      read whole for a small part. An inner chunk is never exempt: the shard
      around it already bounds what a whole read of it costs.
    - Partial when the value is ``indexed``: its decoder finds each part
      through an index and reads that part whole (a shard whose chain is the
      sharding codec alone), so even reading every part costs no more bytes
      than a whole read, and saves the parts not wanted; unless
      ``every_part_whole``: the read needs every part and each is read whole
      anyway (compressed inner chunks), so the whole value is the same bytes
      in one request instead of the index and then the parts (tensorstore's
      rule).
    - Otherwise partial when at most half the elements are wanted: past
      that, the extra requests and the scattered decoding of many ranges cost
      more than the bytes they save.

    Chunk I/O passes ``holds_chunks``, ``indexed`` and ``every_part_whole``
    for its stored chunks; a shard passes none of them for its inner chunks,
    nested shards included: the shard around them already bounds what
    reading one whole costs.

    Callers first rule out what only they know: a selection that takes the
    whole chunk, or a value small enough that one request for all of it is
    cheaper than a partial read (``Store.whole_read_nbytes``).
    """
    if not caps.partial_decode or (caps.skips_checks and not holds_chunks):
        return False
    if indexed:
        return not every_part_whole
    return 2 * wanted <= total


@dataclass(frozen=True, slots=True)
class DecodeOptions:
    """Settings a partial decoder passes down to the decoders it builds.

    ``map_fn(fn, items)`` runs independent pieces of work (the inner chunks of
    a shard): the array layer passes its thread pool's map, so codecs own no
    threads. A whole shard's ``decode_into`` calls it as its last step,
    so a caller that waits for the work itself may pass a ``map_fn`` that
    only queues it (the reads that decode answers as they arrive do).
    ``max_gap_nbytes``: byte ranges this close are read as one (None: each
    codec's default).
    """

    map_fn: MapFn = serial_map
    max_gap_nbytes: int | None = None


DEFAULT_OPTIONS = DecodeOptions()
"""The options used when none are given: pieces run one after another in
the calling thread, and each codec uses its own gap for merging ranges."""


# -- readers -------------------------------------------------------------------
# ByteReader and the plain readers live in core (zarrpy.core.byte_reader) and
# are re-exported here, where codecs and their users have always found them.


class WholeBytesDecoder(ByteReader):
    """The default bytes-to-bytes partial decoder: read everything below once,
    decode it once, and answer every request from the decoded bytes."""

    __slots__ = ("_input", "_decode", "_value", "_loaded")
    # cheap_requests: False (the default), since the first request decodes everything.

    def __init__(self, input: ByteReader, decode: Callable[[bytes], bytes]):
        self._input, self._decode = input, decode
        self._value: bytes | None = None
        self._loaded = False

    def _whole(self) -> bytes | None:
        if not self._loaded:
            raw = self._input(None)
            self._value = None if raw is None else self._decode(raw)
            self._loaded = True
        return self._value

    def __call__(self, request: ByteRequest | None = None) -> bytes | None:
        value = self._whole()
        return None if value is None else slice_bytes(value, request)

    def read_many(self, requests: Sequence[ByteRequest | None]) -> list[bytes | None]:
        """Each request sliced from the decoded bytes (decoded once, on the first read)."""
        value = self._whole()
        return [None if value is None else slice_bytes(value, r) for r in requests]


# -- array decoders ------------------------------------------------------------


class ArrayPartialDecoder(ABC):
    """Decodes parts of one stored chunk, reading only what it needs.

    Results have the selection's shape, or are None when the chunk does not
    exist (the caller uses the fill value).
    """

    __slots__ = ()

    @abstractmethod
    def decode_selections(self, selections: Sequence[ChunkSelection]) -> list[ArrayBytes | None]:
        """Several selections of the chunk, with the reads batched."""

    def decode_selection(self, selection: ChunkSelection) -> ArrayBytes | None:
        """One orthogonal selection of the chunk (see :data:`ChunkSelection`)."""
        return self.decode_selections([selection])[0]

    @property
    def decodes_into(self) -> bool:
        """True when :meth:`decode_selections_into` writes straight into its
        destinations, with no decoded selection in between (a shard of
        fixed-size elements); then a caller holding the output should call
        it. Default: False (it would only copy)."""
        return False

    def decode_selections_into(self, selections: Sequence[ChunkSelection], dests: Sequence[np.ndarray],
                               map_fn: MapFn | None = None) -> bool:
        """:meth:`decode_selections` with each selection written into its
        ``dests`` entry (writable, shaped like the selection, of the chunk's
        fixed-size numpy dtype; maybe a view into a bigger array). False, with
        nothing written, when the chunk is missing (the caller fills).
        ``map_fn``, when given, runs this call's independent pieces instead of
        the decoder's own: it is called last, with nothing done after it, so
        a caller that waits for the work itself may pass one that only
        queues it (see :class:`DecodeOptions`). Default: decode the
        selections, then copy them in (zarrs' ``partial_decode_into``)."""
        parts = self.decode_selections(selections)
        if any(part is None for part in parts):
            return False
        for part, dest in zip(parts, dests):
            assert part is not None
            dest[...] = part.array.reshape(dest.shape)
        return True


class IndexedDecoder(ArrayPartialDecoder):
    """A partial decoder of a value that holds an index of where its parts
    are (a shard), read in two steps a read planner can batch over many
    values: :meth:`index_request`, answered with the value's length to
    :meth:`load_index` (or a kept index to :meth:`use_index`), then the
    ranges :meth:`byte_ranges` names, fetched before decoding."""

    __slots__ = ()

    @abstractmethod
    def index_request(self) -> ByteRequest:
        """The one request that fetches the index without knowing the value's length."""

    @abstractmethod
    def load_index(self, raw: bytes | None, total: int | None) -> Any:
        """Check and keep the index read by :meth:`index_request` (None: the
        value is missing) against the value's length ``total``; return it."""

    @abstractmethod
    def use_index(self, index: Any) -> None:
        """Take an index returned by :meth:`load_index` earlier (no read)."""

    def prepare(self, selections: Sequence[ChunkSelection]) -> None:
        """Do what planning ``selections`` needs no index for, while the
        index is in flight (a planner calls it after sending the index
        request), so the step from the index's answer to the requests for
        its ranges is short. The default: nothing."""

    @abstractmethod
    def byte_ranges(self, selections: Sequence[ChunkSelection]) -> list[RangeRequest]:
        """The merged byte ranges decoding ``selections`` reads, once the index is there."""

    def parts_by_range(self, selections: Sequence[ChunkSelection]) -> list[frozenset[int]] | None:
        """For each of :meth:`byte_ranges` (in its order), the parts (inner
        chunks, by flat position) that decode from that range alone, those
        stored nowhere (read as the fill value) with the first: a planner
        whose ranges answer one by one may then decode each range's parts
        as it arrives (:meth:`decode_parts_into`). None (the default): the
        ranges decode only together."""
        return None

    def decode_parts_into(self, selections: Sequence[ChunkSelection], dests: Sequence[np.ndarray],
                          parts: frozenset[int]) -> bool:
        """:meth:`decode_selections_into`, writing only what the parts
        ``parts`` of :meth:`parts_by_range` hold, from the ranges fetched so
        far (pieces run one after another in the calling thread). Only for
        decoders whose :meth:`parts_by_range` is not None."""
        raise NotImplementedError(f"{type(self).__name__} decodes its ranges only together")


class WholeChunkDecoder(ArrayPartialDecoder):
    """The default: decode the whole chunk once (``load()``; None when it is
    missing), then take each selection from it."""

    __slots__ = ("_load", "_chunk", "_loaded")

    def __init__(self, load: Callable[[], ArrayBytes | None]):
        self._load = load
        self._chunk: ArrayBytes | None = None
        self._loaded = False

    def decode_selections(self, selections: Sequence[ChunkSelection]) -> list[ArrayBytes | None]:
        if not self._loaded:
            self._chunk = self._load()
            self._loaded = True
        chunk = self._chunk
        return [None if chunk is None else chunk.select(s) for s in selections]


def selection_shape(selection: ChunkSelection | Points, shape: Sequence[int]) -> tuple[int, ...]:
    """The shape of ``chunk[selection]`` for a chunk of ``shape``."""
    if isinstance(selection, Points):
        return selection.shape
    return tuple(len(p) for p in dim_indices(selection, shape))


def full_selection(shape: Sequence[int]) -> ChunkSelection:
    """The selection of a whole chunk of ``shape``."""
    return tuple(slice(0, n) for n in shape)


def is_full_selection(selection: ChunkSelection | Points, shape: Sequence[int]) -> bool:
    """True when ``selection`` is the whole chunk, in order (points never are:
    their block is not shaped like the chunk)."""
    return not isinstance(selection, Points) and all(
        isinstance(s, slice) and s.indices(n) == (0, n, 1) for s, n in zip(selection, shape)
    )


__all__ = [
    "ArrayPartialDecoder",
    "ByteReader",
    "BytesReader",
    "ChunkSelection",
    "CodecCapabilities",
    "DEFAULT_OPTIONS",
    "DecodeOptions",
    "IndexedDecoder",
    "PARTIAL",
    "PARTIAL_UNCHECKED",
    "PrefetchedReader",
    "RangeReader",
    "WHOLE_ONLY",
    "WholeBytesDecoder",
    "WholeChunkDecoder",
    "full_selection",
    "is_full_selection",
    "reads_partially",
    "selection_shape",
    "serial_map",
]
