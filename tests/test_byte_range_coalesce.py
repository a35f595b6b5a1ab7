"""The one byte-range coalescer (zarrpy.core.byte_range): coalesce_ranges and read_coalesced.

Its users are the vlen and sharding partial decoders (their request counts are
pinned in tests/codecs/test_vlen.py and tests/codecs/sharding/); these are the
properties of the coalescer itself, for any ranges and any gap limit.
"""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import zarrpy.core.byte_range as byte_range_module
from zarrpy.core.byte_range import (
    CoalescedRead,
    RangeRequest,
    ShortRead,
    coalesce_ranges,
    read_coalesced,
    slice_bytes,
)
from zarrpy.core.byte_reader import ByteReader

SOURCE = bytes(range(256)) * 3  # 768 distinct-ish bytes


class Reader(ByteReader):
    """A ByteReader over ``value`` that records requests (``batched``: its own
    read_many, recording batches; else the default, one call per request)."""

    def __init__(self, value: bytes | None, *, batched: bool = True, truncate: int | None = None):
        self.value = value if truncate is None or value is None else value[:truncate]
        self.calls: list = []
        self.batches: list[list] = []
        if batched:
            self.read_many = self._read_many

    def _get(self, request):
        return None if self.value is None else slice_bytes(self.value, request)

    def __call__(self, request=None):
        self.calls.append(request)
        return self._get(request)

    def _read_many(self, requests):
        self.batches.append(list(requests))
        return [self._get(r) for r in requests]

    @property
    def requests(self) -> list:
        return self.calls + [r for batch in self.batches for r in batch]


class Short(Exception):
    def __init__(self, info: ShortRead):
        super().__init__(info)
        self.info = info


@st.composite
def ranges(draw, size: int = len(SOURCE), max_count: int = 30):
    """Ranges inside ``[0, size]``: clustered so overlaps, repeats, adjacency and
    empty ranges are common."""
    n = draw(st.integers(0, max_count))
    starts, ends = [], []
    anchor = draw(st.integers(0, size))
    for _ in range(n):
        if draw(st.booleans()):
            anchor = draw(st.integers(0, size))
        kind = draw(st.sampled_from(["near", "adjacent", "repeat", "empty"]))
        if kind == "adjacent" and ends:
            start = ends[-1]
        elif kind == "repeat" and starts:
            i = draw(st.integers(0, len(starts) - 1))
            starts.append(starts[i])
            ends.append(ends[i])
            continue
        else:
            start = min(size, max(0, anchor + draw(st.integers(-20, 20))))
        length = 0 if kind == "empty" else draw(st.integers(0, min(40, size - start)))
        starts.append(start)
        ends.append(start + length)
    return starts, ends


gaps = st.one_of(st.integers(0, 8), st.integers(0, 1000))


# -- coalesce_ranges ---------------------------------------------------------


@given(ranges(), gaps)
def test_runs_are_sorted_disjoint_cover_every_range_and_never_outnumber_it(rs, gap):
    starts, ends = rs
    run_starts, run_ends = coalesce_ranges(starts, ends, gap)
    nonempty = [(s, e) for s, e in zip(starts, ends) if e > s]
    assert len(run_starts) == len(run_ends) <= len(nonempty) <= len(starts)
    assert (run_ends > run_starts).all()
    # Sorted, and separated by more than the gap (else they would be one run).
    assert (run_starts[1:] > run_ends[:-1] + gap).all()
    # Each nonempty range lies inside exactly one run.
    for s, e in nonempty:
        inside = [(rs_, re_) for rs_, re_ in zip(run_starts, run_ends) if rs_ <= s and e <= re_]
        assert len(inside) == 1
    # Every run starts and ends at a requested boundary, and each of its
    # bytes is requested or lies in a gap of at most ``gap`` bytes.
    covered = np.zeros(len(SOURCE) + 1, dtype=bool)
    for s, e in nonempty:
        covered[s:e] = True
    for rs_, re_ in zip(run_starts.tolist(), run_ends.tolist()):
        assert rs_ in starts and re_ in ends
        hole = 0
        for b in range(rs_, re_):
            hole = 0 if covered[b] else hole + 1
            assert hole <= gap


@given(ranges(), gaps)
def test_ranges_farther_apart_than_the_gap_are_not_merged(rs, gap):
    starts, ends = rs
    run_starts, run_ends = coalesce_ranges(starts, ends, gap)

    def run_of(s):
        return int(np.searchsorted(run_starts, s, side="right")) - 1

    # Walking the ranges in order: one that starts more than ``gap`` bytes past
    # everything before it opens a new run; any other joins the previous run.
    nonempty = sorted((s, e) for s, e in zip(starts, ends) if e > s)
    for (prev, _), (s, e), reach in zip(nonempty, nonempty[1:], np.maximum.accumulate([e for _, e in nonempty])):
        if s > reach + gap:
            assert run_of(s) == run_of(prev) + 1
        else:
            assert run_of(s) == run_of(prev)


def test_coalesce_examples():
    assert [a.tolist() for a in coalesce_ranges([], [], 5)] == [[], []]
    assert [a.tolist() for a in coalesce_ranges([4, 4], [4, 4], 5)] == [[], []]
    assert [a.tolist() for a in coalesce_ranges([0, 3], [3, 6], 0)] == [[0], [6]]  # touching
    assert [a.tolist() for a in coalesce_ranges([0, 4], [3, 6], 0)] == [[0, 4], [3, 6]]
    assert [a.tolist() for a in coalesce_ranges([0, 4], [3, 6], 1)] == [[0], [6]]
    assert [a.tolist() for a in coalesce_ranges([5, 0], [9, 20], 0)] == [[0], [20]]  # contained
    with pytest.raises(ValueError):
        coalesce_ranges([0], [1, 2], 0)
    with pytest.raises(ValueError):
        coalesce_ranges([0], [1], -1)


def test_module_doctests():
    assert doctest.testmod(byte_range_module).failed == 0


# -- read_coalesced ------------------------------------------------------------


@pytest.mark.parametrize("as_arrays", [False, True], ids=["lists", "arrays"])
@pytest.mark.parametrize("batched", [True, False])
@given(rs=ranges(), gap=gaps, offset=st.integers(0, 64))
def test_every_range_gets_exactly_its_bytes_in_few_reads(batched, as_arrays, rs, gap, offset):
    starts, ends = rs
    source = bytes(offset) + SOURCE
    reader = Reader(source, batched=batched)
    given_starts, given_ends = (np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)) if as_arrays else rs
    got = read_coalesced(reader, given_starts, given_ends, gap, short_read_error=Short, offset=offset)
    assert isinstance(got, CoalescedRead)
    pieces = got.pieces()
    assert pieces == [SOURCE[s:e] for s, e in zip(starts, ends)]
    assert all(isinstance(p, bytes) for p in pieces)
    assert [bytes(p) for p in got.pieces(copy=False)] == pieces  # views into the merged reads, same bytes
    buffer, local = got.joined()
    assert [buffer[p : p + e - s] for p, s, e in zip(local.tolist(), starts, ends)] == pieces
    # The requests made are the merged runs, shifted by ``offset``, in one batch.
    run_starts, run_ends = coalesce_ranges(starts, ends, gap)
    expected = [RangeRequest(offset + s, offset + e) for s, e in zip(run_starts.tolist(), run_ends.tolist())]
    assert reader.requests == expected
    assert got.nreads == len(expected) <= sum(e > s for s, e in zip(starts, ends))
    if batched:
        assert reader.calls == [] and len(reader.batches) == (1 if expected else 0)
    # No byte is read twice.
    assert sum(r.end - r.start for r in reader.requests) == len(buffer)


@given(rs=ranges(), gap=gaps, cut=st.integers(0, len(SOURCE)))
@example(rs=([5], [300]), gap=0, cut=100)  # one range: the path without numpy
def test_a_short_read_names_the_first_range_it_does_not_cover(rs, gap, cut):
    starts, ends = rs
    reader = Reader(SOURCE, truncate=cut)
    run_starts, run_ends = coalesce_ranges(starts, ends, gap)
    short_runs = [(s, e) for s, e in zip(run_starts.tolist(), run_ends.tolist()) if e > cut]
    if not short_runs:
        got = read_coalesced(reader, starts, ends, gap, short_read_error=Short)
        assert got.pieces() == [SOURCE[s:e] for s, e in zip(starts, ends)]
        return
    with pytest.raises(Short) as info:
        read_coalesced(reader, starts, ends, gap, short_read_error=Short)
    short = info.value.info
    lo, hi = short_runs[0]
    assert (short.start, short.end, short.missing) == (lo, hi, False)
    assert short.got_end == max(lo, cut)
    uncovered = [
        (s, e, i) for i, (s, e) in enumerate(zip(starts, ends)) if e > s and lo <= s and e <= hi and e > short.got_end
    ]
    assert short.request == min(uncovered)[2]


def test_a_missing_value_is_reported_as_missing():
    with pytest.raises(Short) as info:
        read_coalesced(Reader(None), [10, 2], [12, 4], 0, short_read_error=Short)
    assert info.value.info == ShortRead(start=2, end=4, got_end=2, missing=True, request=1)


def test_only_empty_ranges_read_nothing():
    reader = Reader(SOURCE)
    got = read_coalesced(reader, [3, 9, 9], [3, 9, 9], 100, short_read_error=Short)
    assert got.pieces() == [b"", b"", b""] and got.nreads == 0
    assert reader.calls == [] and reader.batches == []
    buffer, local = got.joined()
    assert buffer == b"" and local.tolist() == [0, 0, 0]


def test_numpy_and_list_inputs_agree():
    starts, ends = np.array([5, 0, 40], dtype=np.uint32), np.array([9, 6, 41], dtype=np.uint32)
    a = read_coalesced(Reader(SOURCE), starts, ends, 2, short_read_error=Short)
    b = read_coalesced(Reader(SOURCE), starts.tolist(), ends.tolist(), 2, short_read_error=Short)
    assert a.pieces() == b.pieces() == [SOURCE[5:9], SOURCE[0:6], SOURCE[40:41]]
    assert a.nreads == b.nreads == 2
