"""Composable partial decoders (the zarrs model).

A chain's partial decoder is built bottom-up, each codec wrapping the decoder
of the stage below it (:meth:`~zarrpy.codecs.chain.BoundChain.partial_decoder`):

- the stored value is a :class:`~zarrpy.codecs.abc.ByteReader` (a store key,
  or a byte range of an enclosing shard: :class:`RangeReader`);
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
really read less than everything, so callers can decide whether a partial
read is worth it.
"""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, TypeVar


from ..core.array_bytes import ArrayBytes
from ..core.selection import Points, dim_indices
from ..core.byte_range import ByteRequest, OffsetRequest, RangeRequest, SuffixRequest, slice_bytes

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


@dataclass(frozen=True, slots=True)
class DecodeOptions:
    """Settings a partial decoder passes down to the decoders it builds.

    ``map_fn(fn, items)`` runs independent pieces of work (the inner chunks of
    a shard): the array layer passes its thread pool's map, so codecs own no
    threads. ``max_gap_nbytes``: byte ranges this close are read as one
    (None: each codec's default).
    """

    map_fn: MapFn = serial_map
    max_gap_nbytes: int | None = None


DEFAULT_OPTIONS = DecodeOptions()
"""The options used when none are given: pieces run one after another in
the calling thread, and each codec uses its own gap for merging ranges."""


# -- readers -------------------------------------------------------------------


class ByteReader(Protocol):
    """Reads one stored value (a chunk, a shard) by byte range.

    Codecs see this instead of a store: ``reader(request)`` returns the
    requested bytes (``None`` request: all of them), ``reader.read_many``
    answers many requests in one batched store call. Both return None when
    the value does not exist. A range past the end comes back short.
    """

    def __call__(self, request: ByteRequest | None = None) -> bytes | None: ...

    def read_many(self, requests: Sequence[ByteRequest | None]) -> list[bytes | None]:
        """The bytes of each request, in order, in one batched read (None: the value is missing)."""
        ...

    # Optional: ``size() -> int | None``, the value's length (None: missing)
    # without reading it. A shard checks its index against it before any
    # inner chunk is read; readers without it skip that check.
    #
    # Optional: ``cheap_requests: bool``, True when a request costs little
    # more than the bytes it copies (a local file read by position, bytes in
    # memory) and the reader may be called from several threads at once. A
    # shard then reads its inner chunks in a few groups, each decoded as soon
    # as it is read, instead of in one batch before any is decoded.


class RangeReader:
    """A :class:`~zarrpy.codecs.abc.ByteReader` of bytes ``[offset, offset+length)``
    of another reader: an inner chunk inside a shard, read by its own chain."""

    __slots__ = ("parent", "offset", "length")

    def __init__(self, parent: ByteReader, offset: int, length: int):
        self.parent, self.offset, self.length = parent, offset, length

    def _translate(self, request: ByteRequest | None) -> RangeRequest:
        o, n = self.offset, self.length
        if request is None:
            return RangeRequest(o, o + n)
        if isinstance(request, RangeRequest):
            start = min(request.start, n)
            return RangeRequest(o + start, o + max(start, min(request.end, n)))
        if isinstance(request, OffsetRequest):
            return RangeRequest(o + min(request.offset, n), o + n)
        if isinstance(request, SuffixRequest):
            return RangeRequest(o + max(0, n - request.length), o + n)
        raise TypeError(f"not a byte request: {request!r}")

    def __call__(self, request: ByteRequest | None = None) -> bytes | None:
        return self.parent(self._translate(request))

    def read_many(self, requests: Sequence[ByteRequest | None]) -> list[bytes | None]:
        """The requests, taken relative to the range, in one batched read of the parent."""
        translated = [self._translate(r) for r in requests]
        read_many = getattr(self.parent, "read_many", None)
        if read_many is not None:
            return list(read_many(translated))
        return [self.parent(r) for r in translated]

    def size(self) -> int:
        """The range's length: what a nested shard checks its index against."""
        return self.length

    @property
    def cheap_requests(self) -> bool:
        """Whether the parent's requests are cheap (see :class:`ByteReader`)."""
        return bool(getattr(self.parent, "cheap_requests", False))


class BytesReader:
    """A :class:`~zarrpy.codecs.abc.ByteReader` of bytes already in memory
    (None: a missing value)."""

    __slots__ = ("value",)
    cheap_requests = True
    """Requests slice memory (see :class:`ByteReader`)."""

    def __init__(self, value: bytes | None):
        self.value = value

    def __call__(self, request: ByteRequest | None = None) -> bytes | None:
        return None if self.value is None else slice_bytes(self.value, request)

    def read_many(self, requests: Sequence[ByteRequest | None]) -> list[bytes | None]:
        """Each request sliced from the bytes in memory."""
        return [self(r) for r in requests]

    def size(self) -> int | None:
        """The value's length, or None when it is missing."""
        return None if self.value is None else len(self.value)


class PrefetchedReader:
    """A :class:`ByteReader` of one stored value whose needed ranges were
    fetched beforehand (by the read planner, for many values in one batch):
    a request inside a fetched range is answered from memory; any other goes
    to ``fallback`` (a reader of the value), so an unplanned request costs a
    round trip but never a wrong answer. ``total`` is the value's length."""

    __slots__ = ("total", "fallback", "_starts", "_ends", "_data")
    cheap_requests = True
    """Fetched ranges are sliced from memory (see :class:`ByteReader`)."""

    def __init__(self, total: int, fallback: ByteReader):
        self.total, self.fallback = total, fallback
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._data: list[bytes] = []

    def add(self, ranges: Sequence[RangeRequest], data: Sequence[bytes]) -> None:
        """Keep the fetched ``data`` of disjoint ``ranges`` (sorted or not)."""
        for r, d in sorted(zip(ranges, data), key=lambda item: item[0].start):
            self._starts.append(r.start)
            self._ends.append(r.start + len(d))
            self._data.append(d)
        order = sorted(range(len(self._starts)), key=self._starts.__getitem__)
        self._starts = [self._starts[i] for i in order]
        self._ends = [self._ends[i] for i in order]
        self._data = [self._data[i] for i in order]

    def _span(self, request: ByteRequest | None) -> tuple[int, int]:
        n = self.total
        if request is None:
            return 0, n
        if isinstance(request, RangeRequest):
            return min(request.start, n), min(max(request.end, request.start), n)
        if isinstance(request, OffsetRequest):
            return min(request.offset, n), n
        if isinstance(request, SuffixRequest):
            return max(0, n - request.length), n
        raise TypeError(f"not a byte request: {request!r}")

    def _cached(self, request: ByteRequest | None) -> bytes | None:
        start, end = self._span(request)
        i = bisect.bisect_right(self._starts, start) - 1
        if i < 0 or end > self._ends[i]:
            return None
        data, lo = self._data[i], start - self._starts[i]
        if lo == 0 and end - start == len(data):
            return data
        return bytes(memoryview(data)[lo : lo + end - start])

    def __call__(self, request: ByteRequest | None = None) -> bytes | None:
        got = self._cached(request)
        return got if got is not None else self.fallback(request)

    def read_many(self, requests: Sequence[ByteRequest | None]) -> list[bytes | None]:
        """Each request from the fetched ranges; the others in one batched read of ``fallback``."""
        out = [self._cached(r) for r in requests]
        missing = [i for i, got in enumerate(out) if got is None]
        if missing:
            for i, got in zip(missing, self.fallback.read_many([requests[i] for i in missing])):
                out[i] = got
        return out

    def size(self) -> int:
        """The value's length, as the store reported it with the fetched bytes."""
        return self.total


class WholeBytesDecoder:
    """The default bytes-to-bytes partial decoder: read everything below once,
    decode it once, and answer every request from the decoded bytes."""

    __slots__ = ("_input", "_decode", "_value", "_loaded")
    cheap_requests = False
    """Not while the first request decodes everything (see :class:`ByteReader`)."""

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

    @abstractmethod
    def byte_ranges(self, selections: Sequence[ChunkSelection]) -> list[RangeRequest]:
        """The merged byte ranges decoding ``selections`` reads, once the index is there."""


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
    "selection_shape",
    "serial_map",
]
