"""Byte-range requests shared by stores and partial decoders.

Frozen, slotted value types (after zarr-python's ``ByteRequest``):
``RangeRequest(start, end)`` is ``[start, end)``, ``OffsetRequest(offset)`` is
``[offset, EOF)`` and ``SuffixRequest(length)`` the last ``length`` bytes.
``None`` everywhere means "the whole value".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Hashable, NamedTuple, TypeAlias

import numpy as np

if TYPE_CHECKING:  # byte_reader builds on this module's requests
    from .byte_reader import ByteReader


@dataclass(frozen=True, slots=True)
class RangeRequest:
    """Bytes ``[start, end)`` of a value (zarr-python's ``RangeByteRequest``)."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid byte range [{self.start}, {self.end})")


@dataclass(frozen=True, slots=True)
class OffsetRequest:
    """Bytes from ``offset`` to the end of a value (zarr-python's ``OffsetByteRequest``)."""

    offset: int

    def __post_init__(self) -> None:
        if self.offset < 0:
            raise ValueError(f"invalid byte offset {self.offset}")


@dataclass(frozen=True, slots=True)
class SuffixRequest:
    """The last ``length`` bytes of a value (zarr-python's ``SuffixByteRequest``);
    all of it when shorter."""

    length: int

    def __post_init__(self) -> None:
        if self.length < 0:
            raise ValueError(f"invalid suffix length {self.length}")


ByteRequest: TypeAlias = RangeRequest | OffsetRequest | SuffixRequest
"""Any one byte-range request; ``None`` where a request is taken means the whole value."""


class VersionedRequest(NamedTuple):
    """One request of :meth:`~zarrpy.stores.abc.Store.get_versioned`: bytes
    of ``key`` (``range`` None: all of them), answered only if the object
    still has version ``if_match`` when one is given."""

    key: str
    range: ByteRequest | None = None
    if_match: Hashable | None = None


UNKNOWN_SIZE = -1
"""The :attr:`ObjectRead.size` of a changed answer that told no length."""


@dataclass(frozen=True, slots=True)
class ObjectRead:
    """The answer to a :class:`VersionedRequest`: the bytes, and what the
    store told of the object with them, in the same request.

    ``size`` is the object's whole length (from ``Content-Range``, an
    object's metadata, ``fstat``), so a suffix read needs no separate size
    request. ``version`` identifies the object's content (an ETag, a GCS
    generation, size + mtime + inode of a local file); None when the store
    cannot tell versions, and then nothing read from it may be kept between
    reads. ``data`` is None when the request's ``if_match`` no longer holds
    (:attr:`changed`): the object was replaced, and nothing of it was read;
    ``size`` is then :data:`UNKNOWN_SIZE` where the backend's refusal does
    not tell the length (S3, most HTTP servers).
    """

    data: bytes | None
    size: int
    version: Hashable | None

    @property
    def changed(self) -> bool:
        """True when the object no longer has the version the request named."""
        return self.data is None


def span(request: ByteRequest | None, size: int) -> tuple[int, int]:
    """``request`` as ``[start, stop)`` within a value of ``size`` bytes,
    clamped as a file read clamps it (``start == stop``: nothing to read)."""
    if request is None:
        return 0, size
    if isinstance(request, RangeRequest):
        return min(request.start, size), min(max(request.end, request.start), size)
    if isinstance(request, OffsetRequest):
        return min(request.offset, size), size
    if isinstance(request, SuffixRequest):
        return max(0, size - request.length), size
    raise TypeError(f"not a byte request: {request!r}")


def slice_bytes(value: bytes, request: ByteRequest | None) -> bytes:
    """Apply a request to a whole in-memory value (clamped like a file read)."""
    if request is None:
        return value
    if isinstance(request, RangeRequest):
        return value[request.start : request.end]
    if isinstance(request, OffsetRequest):
        return value[request.offset :]
    if isinstance(request, SuffixRequest):
        return value[max(0, len(value) - request.length) :] if request.length else b""
    raise TypeError(f"not a byte request: {request!r}")


# -- coalesced reads --------------------------------------------------------
# The one range coalescer (DESIGN: "range coalescing (one place)"). It lives
# here, beside the request types, because its users are partial decoders:
# codecs may import core but not stores, and the reader they are given may be
# any ByteReader (a store key, a shard's inner chunk, a test double), so the
# merging cannot be a method of one store class.


def coalesce_ranges(starts: Any, ends: Any, max_gap_nbytes: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Merge byte ranges ``[starts[i], ends[i])`` into sorted, disjoint runs.

    Empty ranges are dropped; ranges that overlap, touch, or are separated by
    at most ``max_gap_nbytes`` unrequested bytes become one run. Returns the
    runs' ``(starts, ends)`` as int64 arrays.

    >>> coalesce_ranges([0, 5, 7, 20], [3, 6, 8, 20], 1)
    (array([0, 5]), array([3, 8]))
    """
    s = np.asarray(starts, dtype=np.int64).reshape(-1)
    e = np.asarray(ends, dtype=np.int64).reshape(-1)
    if s.shape != e.shape:
        raise ValueError(f"{s.size} range starts but {e.size} ends")
    if max_gap_nbytes < 0:
        raise ValueError(f"max_gap_nbytes must be >= 0, not {max_gap_nbytes}")
    keep = e > s
    s, e = s[keep], e[keep]
    if not s.size:
        return s, e
    order = np.argsort(s, kind="stable")
    s, e = s[order], np.maximum.accumulate(e[order])
    new_run = np.empty(s.size, dtype=bool)
    new_run[0] = True
    new_run[1:] = s[1:] > e[:-1] + max_gap_nbytes
    first = np.flatnonzero(new_run)
    last = np.append(first[1:] - 1, s.size - 1)
    return s[first], e[last]


@dataclass(frozen=True, slots=True)
class ShortRead:
    """A merged read that came back short (or missing), as handed to the
    caller's ``short_read_error``. Positions are in the caller's coordinates
    (before ``offset``)."""

    start: int
    """Where the merged read starts."""
    end: int
    """Where it should have ended."""
    got_end: int
    """Where the bytes that came back end (``start`` when none did)."""
    missing: bool
    """True if the value does not exist (the reader returned None)."""
    request: int
    """The first requested range (lowest start, then end, then index) that
    the read does not cover."""


class CoalescedRead:
    """The bytes of many requested ranges, fetched by :func:`read_coalesced`.

    Positions are int64 arrays, or Python lists for a single range (the
    usual partial read of one inner chunk), where numpy would cost more
    than the bookkeeping it does.
    """

    __slots__ = ("starts", "ends", "run_starts", "_run", "_data")

    def __init__(self, starts: Any, ends: Any, run_starts: Any, run: Any, data: list[bytes]):
        self.starts, self.ends = starts, ends
        self.run_starts = run_starts
        self._run, self._data = run, data

    @property
    def nreads(self) -> int:
        """How many merged reads were made."""
        return len(self._data)

    def pieces(self, *, copy: bool = True) -> list[Any]:
        """Each requested range's bytes, in request order: ``bytes``, or with
        ``copy=False`` read-only memoryviews into the merged reads (no copy;
        for consumers that take any buffer)."""
        data = self._data
        run_starts = _as_list(self.run_starts)
        views: list[memoryview | None] = [None] * len(data)
        out: list[Any] = []
        for s, e, r in zip(_as_list(self.starts), _as_list(self.ends), _as_list(self._run)):
            if e <= s:
                out.append(b"")
                continue
            lo = s - run_starts[r]
            if lo == 0 and e - s == len(data[r]):
                out.append(data[r])
                continue
            view = views[r]
            if view is None:
                view = views[r] = memoryview(data[r])
            piece = view[lo : lo + e - s]
            out.append(bytes(piece) if copy else piece)
        return out

    def joined(self) -> tuple[bytes, np.ndarray]:
        """Every merged read concatenated, and where each requested range
        starts in it (its length is ``ends - starts``): for vectorised gathers
        of many small ranges. An empty range's position is meaningless."""
        starts = np.asarray(self.starts, dtype=np.int64)
        if not self._data:
            return b"", np.zeros_like(starts)
        run_pos = np.zeros(len(self._data) + 1, dtype=np.int64)
        np.cumsum([len(d) for d in self._data], out=run_pos[1:])
        r = np.asarray(self._run, dtype=np.int64)
        return b"".join(self._data), starts - np.asarray(self.run_starts, dtype=np.int64)[r] + run_pos[r]


def read_coalesced(
    read: ByteReader,
    starts: Any,
    ends: Any,
    max_gap_nbytes: int,
    *,
    short_read_error: Callable[[ShortRead], Exception],
    offset: int = 0,
) -> CoalescedRead:
    """Read the ranges ``[starts[i], ends[i])`` of one value in few requests.

    The ranges are merged by :func:`coalesce_ranges` and fetched with one
    ``read.read_many`` call (a :class:`~zarrpy.core.byte_reader.ByteReader`'s
    batched read); nothing is read when every range is empty. ``offset`` is
    added to every position sent to the reader (ranges relative to a part of
    the value). A merged read that comes back short or missing raises
    ``short_read_error(ShortRead(...))`` for the first such read.
    """
    one = _one_range(starts, ends)
    if one is not None:  # one range: one run, nothing to merge, no numpy
        s: Any = [one[0]]
        e: Any = [one[1]]
        run_starts, run_ends, run = s, e, [0]
    else:
        s = np.asarray(starts, dtype=np.int64).reshape(-1)
        e = np.asarray(ends, dtype=np.int64).reshape(-1)
        run_starts, run_ends = coalesce_ranges(s, e, max_gap_nbytes)
        # The run holding each range (empty ranges: any run, they take no bytes).
        run = np.clip(np.searchsorted(run_starts, s, side="right") - 1, 0, None)
    if not len(run_starts):
        return CoalescedRead(s, e, run_starts, run, [])
    bounds = list(zip(_as_list(run_starts), _as_list(run_ends)))
    requests = [RangeRequest(offset + lo, offset + hi) for lo, hi in bounds]
    got = read.read_many(requests)
    data: list[bytes] = []
    for i, ((lo, hi), piece) in enumerate(zip(bounds, got)):
        if piece is None or len(piece) != hi - lo:
            got_end = lo + (0 if piece is None else len(piece))
            sl, el = _as_list(s), _as_list(e)
            members = [j for j, (r, a, b) in enumerate(zip(_as_list(run), sl, el)) if r == i and b > a and b > got_end]
            first = min(members, key=lambda j: (sl[j], el[j], j))
            raise short_read_error(ShortRead(lo, hi, got_end, piece is None, first))
        data.append(piece)
    return CoalescedRead(s, e, run_starts, run, data)


def _one_range(starts: Any, ends: Any) -> tuple[int, int] | None:
    """``(start, end)`` when exactly one non-empty range is asked for, else None."""
    if any(isinstance(v, np.ndarray) and v.ndim != 1 for v in (starts, ends)):
        return None  # the numpy path flattens it
    try:
        if len(starts) != 1 or len(ends) != 1:
            return None
        s, e = int(starts[0]), int(ends[0])
    except TypeError:  # a 0-d array or a scalar: the numpy path reshapes it
        return None
    return (s, e) if e > s else None


def _as_list(values: Any) -> list[int]:
    """Positions as Python ints (an array's ``tolist``; a list as it is)."""
    out: list[int] = values.tolist() if isinstance(values, np.ndarray) else values
    return out


__all__ = [
    "UNKNOWN_SIZE", "ByteRequest", "CoalescedRead", "ObjectRead", "OffsetRequest", "RangeRequest", "ShortRead", "SuffixRequest",
    "VersionedRequest",
    "coalesce_ranges", "read_coalesced", "slice_bytes", "span",
]
