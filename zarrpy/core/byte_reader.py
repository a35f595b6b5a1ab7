"""The byte-reader protocol: how codecs read one stored value, and the plain readers.

Codecs never see a store. A partial decoder gets a :class:`ByteReader` of
the value it decodes (a store key, a range of an enclosing shard, bytes in
memory, ranges a read planner fetched beforehand) and asks it for byte
ranges. The protocol lives in core because both sides meet here: stores
implement it (``KeyReader`` over a key), codecs consume it and wrap it
(``crc32c`` passes ranges through, compressors decode once), and the
pipeline builds the prefetched readers of its staged reads.

Every member is declared, so no caller asks a reader what it can do before
calling it (the zarrs model: ``BytesPartialDecoderTraits``). Only
``__call__`` must be written; the others have defaults a reader inherits by
subclassing :class:`ByteReader` explicitly (PEP 544), and overrides where it
can do better. Every zarrpy reader does.
"""

from __future__ import annotations

import bisect
import threading
from typing import Protocol, Sequence

from .byte_range import ByteRequest, OffsetRequest, RangeRequest, SuffixRequest, slice_bytes, span


class ByteReader(Protocol):
    """Reads one stored value (a chunk, a shard) by byte range.

    ``reader(request)`` returns the requested bytes (``None`` request: all of
    them), or None when the value does not exist; a range past the end comes
    back short. The other members have working defaults (see the module
    docstring).
    """

    __slots__ = ()

    def __call__(self, request: ByteRequest | None = None) -> bytes | None: ...

    def read_many(self, requests: Sequence[ByteRequest | None]) -> list[bytes | None]:
        """The bytes of each request, in order (None: the value is missing).

        Default: one call per request. A reader over a store answers them in
        one batched store call instead (one round trip on a remote store).
        """
        return [self(r) for r in requests]

    def size(self) -> int | None:
        """The value's length in bytes without reading it, or None when the
        value is missing or the reader cannot tell (the default).

        A shard checks its index against it before any inner chunk is read;
        with None it reads the index by a request that needs no length (a
        suffix read), and an entry past the end shows as a short read.
        """
        return None

    @property
    def cheap_requests(self) -> bool:
        """True when a request costs little more than the bytes it copies (a
        local file read by position, bytes in memory) and the reader may be
        called from several threads at once. A shard then reads its inner
        chunks in a few groups, each decoded as soon as it is read, instead
        of in one batch before any is decoded. Default: False."""
        return False


class RangeReader(ByteReader):
    """A :class:`ByteReader` of bytes ``[offset, offset+length)`` of another
    reader: an inner chunk inside a shard, read by its own chain."""

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
        return list(self.parent.read_many([self._translate(r) for r in requests]))

    def size(self) -> int:
        """The range's length: what a nested shard checks its index against."""
        return self.length

    @property
    def cheap_requests(self) -> bool:
        """Whether the parent's requests are cheap."""
        return self.parent.cheap_requests


class BytesReader(ByteReader):
    """A :class:`ByteReader` of bytes already in memory (None: a missing
    value); over a ``memoryview`` its answers are views, not copies."""

    __slots__ = ("value",)
    cheap_requests = True
    """Requests slice memory."""

    def __init__(self, value: bytes | memoryview | None):
        self.value = value

    def __call__(self, request: ByteRequest | None = None) -> bytes | None:
        # A view answers where bytes are asked: every reader of it takes any buffer.
        return None if self.value is None else slice_bytes(self.value, request)  # type: ignore[arg-type]

    def size(self) -> int | None:
        """The value's length, or None when it is missing."""
        return None if self.value is None else len(self.value)


class PrefetchedReader(ByteReader):
    """A :class:`ByteReader` of one stored value whose needed ranges were
    fetched beforehand (by the read planner, for many values in one batch):
    a request inside a fetched range is answered from memory; any other goes
    to ``fallback`` (a reader of the value), so an unplanned request costs a
    round trip but never a wrong answer. ``total`` is the value's length."""

    __slots__ = ("total", "fallback", "_fetched", "_adding")
    cheap_requests = True
    """Fetched ranges are sliced from memory."""

    def __init__(self, total: int, fallback: ByteReader):
        self.total, self.fallback = total, fallback
        # (starts, ends, data), sorted by start: replaced whole by add(), so a
        # reader on another thread sees the ranges before or after, never half.
        self._fetched: tuple[list[int], list[int], list[bytes]] = ([], [], [])
        self._adding = threading.Lock()

    def add(self, ranges: Sequence[RangeRequest], data: Sequence[bytes]) -> None:
        """Keep the fetched ``data`` of disjoint ``ranges`` (sorted or not);
        safe beside reads and other adds on other threads (ranges answered
        one by one are added as they come)."""
        with self._adding:
            starts, ends, kept = self._fetched
            items = sorted([*zip(starts, ends, kept), *((r.start, r.start + len(d), d) for r, d in zip(ranges, data))],
                           key=lambda item: item[0])
            self._fetched = ([a for a, _, _ in items], [b for _, b, _ in items], [d for _, _, d in items])

    def _cached(self, request: ByteRequest | None) -> bytes | None:
        start, end = span(request, self.total)
        starts, ends, kept = self._fetched
        i = bisect.bisect_right(starts, start) - 1
        if i < 0 or end > ends[i]:
            return None
        data, lo = kept[i], start - starts[i]
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


__all__ = ["ByteReader", "BytesReader", "PrefetchedReader", "RangeReader"]
