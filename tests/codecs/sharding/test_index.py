"""Shard index: byte layout per the format notes §9, the ShardIndex value, and its checks."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.codecs.sharding._helpers import (
    EMPTY,
    LE,
    fixed,
    raw_index,
    read_entries,
    sharding,
    spec,
)
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.sharding import ShardIndex
from zarrpy.codecs.sharding.index import index_spec
from zarrpy.errors import ChecksumError, ChunkDecodeError


def bound_index(grid, crc=True):
    codecs = [LE, {"name": "crc32c"}] if crc else [LE]
    return CodecChain.from_json(codecs).bind(index_spec(grid))


# -- byte layout ---------------------------------------------------------------


@pytest.mark.parametrize("grid", [(1,), (4,), (2, 2), (3, 1, 2)])
def test_index_size_is_16n_plus_4(grid):
    n = int(np.prod(grid))
    assert bound_index(grid).encoded_size == 16 * n + 4
    assert bound_index(grid, crc=False).encoded_size == 16 * n
    codec = sharding([1] * len(grid))
    layout = codec.layout(spec(grid))
    assert layout.index_nbytes == 16 * n + 4


def test_end_location_layout_2x2():
    codec = sharding([2, 2])
    data = np.arange(16, dtype="<u2").reshape(4, 4)
    shard = codec.encode(fixed(data), spec((4, 4)))
    assert len(shard) == 4 * 8 + 68
    entries = read_entries(shard, 4, "end")
    # Compact, C order, offsets from byte 0.
    assert entries == [(0, 8), (8, 8), (16, 8), (24, 8)]
    assert shard[0:8] == data[0:2, 0:2].tobytes()
    assert shard[8:16] == data[0:2, 2:4].tobytes()
    assert shard[16:24] == data[2:4, 0:2].tobytes()
    assert shard[-68:] == raw_index(entries)


def test_start_location_offsets_are_absolute_first_data_at_68():
    codec = sharding([2, 2], index_location="start")
    data = np.arange(1, 17, dtype="<u2").reshape(4, 4)
    shard = codec.encode(fixed(data), spec((4, 4)))
    entries = read_entries(shard, 4, "start")
    assert entries[0] == (68, 8)
    assert [o for o, _ in entries] == [68, 76, 84, 92]
    assert shard[68:76] == data[0:2, 0:2].tobytes()
    assert shard[:68] == raw_index(entries)


def test_empty_entries_are_all_ones_pairs():
    codec = sharding([2, 2])
    data = np.zeros((4, 4), dtype="u2")
    data[3, 3] = 7  # only inner chunk (1, 1) is stored
    shard = codec.encode(fixed(data), spec((4, 4)))
    entries = read_entries(shard, 4)
    assert entries[:3] == [(EMPTY, EMPTY)] * 3
    assert entries[3] == (0, 8)
    assert shard[-68:-4].count(b"\xff") == 48
    assert len(shard) == 8 + 68


def test_all_fill_shard_encodes_as_index_only():
    codec = sharding([2, 2])
    shard = codec.encode(fixed(np.zeros((4, 4), "u2")), spec((4, 4)))
    assert shard == raw_index([(EMPTY, EMPTY)] * 4)
    assert codec.encode_or_none(fixed(np.zeros((4, 4), "u2")), spec((4, 4))) is None


# -- ShardIndex value ----------------------------------------------------------


def test_shard_index_accessors():
    index = ShardIndex((2, 3))
    assert index.nchunks == 6 and index.is_empty()
    assert index.entries.shape == (2, 3, 2) and index.entries.dtype == np.uint64
    index.set(4, 100, 20)
    assert index.get(4) == (100, 20) and index.get(0) is None
    assert index.present().tolist() == [False, False, False, False, True, False]
    assert index.stored_nbytes() == 20
    other = ShardIndex((2, 3))
    assert index != other
    other.set(4, 100, 20)
    assert index == other
    index.clear(4)
    assert index.is_empty()
    assert "0/6" in repr(index)


def test_shard_index_round_trip():
    index = ShardIndex((2, 2))
    index.set(1, 0, 5)
    index.set(2, 5, 7)
    chain = bound_index((2, 2))
    encoded = index.encode(chain)
    assert encoded == raw_index([(EMPTY, EMPTY), (0, 5), (5, 7), (EMPTY, EMPTY)])
    back = ShardIndex.decode(encoded, chain, (2, 2), index_offset=12, shard_nbytes=12 + len(encoded))
    assert back == index


# -- checks --------------------------------------------------------------------


def decode(entries, shard_nbytes=None, index_offset=None, crc=True, grid=(2, 2)):
    return ShardIndex.decode(
        raw_index(entries, crc), bound_index(grid, crc), grid, index_offset=index_offset, shard_nbytes=shard_nbytes
    )


E = (EMPTY, EMPTY)


def test_checksum_mismatch():
    encoded = bytearray(raw_index([(0, 1), E, E, E]))
    encoded[3] ^= 0x10
    with pytest.raises(ChecksumError, match="sharding_indexed.*index.*checksum"):
        ShardIndex.decode(bytes(encoded), bound_index((2, 2)), (2, 2), index_offset=None, shard_nbytes=None)


def test_wrong_index_size():
    with pytest.raises(ChunkDecodeError, match="index needs 68 bytes, got 67"):
        ShardIndex.decode(raw_index([E] * 4)[1:], bound_index((2, 2)), (2, 2), index_offset=None, shard_nbytes=None)


@pytest.mark.parametrize("pair", [(EMPTY, 3), (3, EMPTY)])
def test_half_empty_pair(pair):
    with pytest.raises(ChunkDecodeError, match=r"sharding_indexed.*inner chunk \(0, 1\) is half empty"):
        decode([E, pair, E, E])


def test_range_past_the_end():
    decode([E, (68, 10), E, E], shard_nbytes=78, index_offset=0)
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(0, 1\) ends at byte 79, past the end of the 78-byte"):
        decode([E, (69, 10), E, E], shard_nbytes=78, index_offset=0)


def test_range_wrapping_around():
    with pytest.raises(ChunkDecodeError, match="impossible range"):
        decode([(2**63, 2**63 + 5), E, E, E])


@pytest.mark.parametrize("location", ["start", "end"])
def test_range_overlapping_the_index(location):
    # A 10-byte shard body and a 68-byte index.
    if location == "start":
        good, bad, offset = (68, 10), (60, 10), 0
    else:
        good, bad, offset = (0, 10), (5, 10), 10
    decode([good, E, E, E], shard_nbytes=78, index_offset=offset)
    with pytest.raises(ChunkDecodeError, match="overlaps the index"):
        decode([bad, E, E, E], shard_nbytes=78, index_offset=offset)


def test_overlapping_ranges():
    decode([(0, 4), (4, 4), E, (8, 0)], shard_nbytes=80, index_offset=12)
    with pytest.raises(ChunkDecodeError, match=r"inner chunks \(0, 0\) and \(1, 1\) overlap"):
        decode([(0, 5), E, E, (4, 4)], shard_nbytes=80, index_offset=12)


def test_zero_length_ranges_never_overlap():
    decode([(3, 0), (3, 0), (0, 8), E], shard_nbytes=76, index_offset=8)


def test_checks_without_the_shard_length():
    # A partial reader of an end index knows neither length nor index offset:
    # the range checks that need them are skipped, the others run.
    decode([(10**12, 5), E, E, E])
    with pytest.raises(ChunkDecodeError, match="overlap"):
        decode([(0, 5), (2, 5), E, E])


def test_index_codecs_without_crc():
    entries = [(0, 2), E, E, (2, 2)]
    index = decode(entries, crc=False, shard_nbytes=4 + 64, index_offset=4)
    assert index.get(3) == (2, 2)
    assert struct.unpack("<QQ", raw_index(entries, False)[:16]) == (0, 2)


# -- lookups -------------------------------------------------------------------


def test_a_read_only_index_answers_lookups_like_its_entries():
    index = ShardIndex((3, 4))
    for pos in (0, 5, 11):
        index.set(pos, 100 * pos + 7, pos + 1)
    index.clear(5)
    assert index.get(0) == (7, 1) and index.get(5) is None  # writable: read from the array
    expected = [index.get(p) for p in range(12)]
    index.entries.setflags(write=False)  # as readers keep them: answered from a list made once
    got = [index.get(p) for p in range(12)]
    assert got == expected and got[11] == (1107, 12)
    assert index.get(np.int64(11)) == (1107, 12) and index.get(-1) == (1107, 12)
    assert all(type(v) is int for pair in got if pair is not None for v in pair)
    with pytest.raises(IndexError):
        index.get(12)


# -- the two checks: Python ints (small indexes) and numpy (large) ----------------


_entry = st.one_of(
    st.just(E),
    st.tuples(st.sampled_from([EMPTY]), st.integers(0, 200)),  # half empty
    st.tuples(st.integers(0, 200), st.integers(0, 40)),
    st.tuples(st.integers(2**64 - 50, 2**64 - 2), st.integers(0, 100)),  # may wrap
)


def _outcome(check):
    try:
        check()
    except ChunkDecodeError as exc:
        return str(exc)
    return None


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(_entry, min_size=6, max_size=6), shard_nbytes=st.one_of(st.none(), st.integers(0, 300)),
       index_offset=st.one_of(st.none(), st.integers(0, 300)))
def test_the_checks_on_ints_and_on_arrays_agree(entries, shard_nbytes, index_offset):
    index = ShardIndex((2, 3), np.array(entries, dtype=np.uint64).reshape(2, 3, 2))
    on_ints = _outcome(lambda: index._check_pairs(index.pairs(), index_offset, 100, shard_nbytes))
    on_arrays = _outcome(lambda: index._check_arrays(index_offset, 100, shard_nbytes))
    assert on_ints == on_arrays


def test_a_large_index_is_checked_with_numpy():
    # 32 x 16 inner chunks: past the small-index limit, the same errors.
    grid = (32, 16)
    entries = [E] * 512
    entries[300] = (EMPTY, 4)
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(18, 12\) is half empty"):
        decode(entries, grid=grid)
    entries[300] = (0, 8)
    index = decode(entries, grid=grid, shard_nbytes=8 + 16 * 512 + 4, index_offset=8)
    assert index.get(300) == (0, 8) and index.entries.flags.writeable


def test_a_small_decoded_index_makes_its_array_only_when_asked():
    index = decode([(0, 4), E, E, (4, 4)], shard_nbytes=80, index_offset=12)
    assert index._entries is None  # held as ints
    assert index.get(3) == (4, 4) and index.get(1) is None and index.nbytes == 64
    index.set(1, 8, 2)  # written: the array is made, lookups read it
    assert index.entries.flags.writeable and index.get(1) == (8, 2) and index.get(3) == (4, 4)
    assert index.entries[0, 1].tolist() == [8, 2]


def test_a_frozen_small_index_stays_on_ints_and_its_array_is_read_only():
    index = decode([(0, 4), E, E, (4, 4)], shard_nbytes=80, index_offset=12)
    index.freeze()
    assert not index.entries.flags.writeable and index.entries.tolist() == [[[0, 4], [EMPTY, EMPTY]],
                                                                              [[EMPTY, EMPTY], [4, 4]]]
    assert index.get(3) == (4, 4) and index.pairs()[0] == (0, 4)
    with pytest.raises(ValueError):
        index.set(1, 8, 2)
