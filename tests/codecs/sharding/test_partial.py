"""Partial reads of shards: partial == full[selection], and the reads they cost."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.codecs.sharding._helpers import (
    EMPTY,
    LE,
    STRING,
    CountingReader,
    PlainReader,
    as_strings,
    fixed,
    index_request,
    raw_index,
    read_entries,
    selections,
    shard_arrays,
    shard_layouts,
    sharding,
    spec,
    strings,
    to_ix,
    touched_chunks,
)
from tests.strategies import assert_identical, core_dtypes
from zarrpy.core.byte_range import RangeRequest, SuffixRequest
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.sharding import ShardPartialDecoder
from zarrpy.errors import BoundsCheckError, ChecksumError, ChunkDecodeError
from zarrpy.stores.memory import MemoryStore

ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}


def needed_nbytes(shard, codec, shape, selection, location):
    """Stored bytes of the inner chunks ``selection`` touches."""
    grid = tuple(s // c for s, c in zip(shape, codec.chunk_shape))
    entries = read_entries(shard, int(np.prod(grid)), location)
    total = 0
    for coords in touched_chunks(selection, shape, codec.chunk_shape):
        offset, nbytes = entries[int(np.ravel_multi_index(coords, grid))]
        if offset != EMPTY:
            total += nbytes
    return total


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_partial_equals_full_selection(data):
    shape, inner = data.draw(shard_layouts())
    dtype = data.draw(core_dtypes())
    fill = np.zeros((), dtype)[()]
    arr = data.draw(shard_arrays(shape, inner, dtype, fill))
    location = data.draw(st.sampled_from(["start", "end"]))
    codec = sharding(inner, data.draw(st.sampled_from([[LE], [LE, ZSTD]])), index_location=location)
    s = spec(shape, dtype, fill)
    shard = codec.encode(fixed(arr), s)
    selection = data.draw(selections(shape))
    gap = data.draw(st.sampled_from([0, 64 * 1024]))

    reader = CountingReader(shard)
    decoder = codec.partial_decoder(reader, s, max_gap_nbytes=gap)
    assert reader.calls == [] and reader.batches == []  # lazy
    part = decoder.decode_selection(selection)
    assert_identical(part.array, arr[to_ix(selection, shape)])

    nchunks = int(np.prod([a // b for a, b in zip(shape, inner)]))
    assert reader.calls == [index_request(codec, nchunks)]
    touched = len(list(touched_chunks(selection, shape, codec.chunk_shape)))
    # One batch for the inner chunks read whole; an uncompressed inner chunk
    # needed only in part is read through its own partial decoder.
    assert len(reader.batches) <= max(1, touched)
    index_nbytes = 16 * nchunks + 4
    needed = needed_nbytes(shard, codec, shape, selection, location)
    if gap == 0:
        assert reader.nbytes <= index_nbytes + needed
        if codec.codecs.codecs[-1].name != "bytes":
            assert reader.nbytes == index_nbytes + needed
    else:
        # Coalesced: at most the span of the shard's data, never the index twice.
        assert reader.nbytes <= len(shard)
        if codec.codecs.codecs[-1].name != "bytes":
            assert index_nbytes + needed <= reader.nbytes
    if needed == 0:
        assert reader.batches == []

    # The index is kept: a second selection reads only inner chunks.
    decoder.decode_selection(selection)
    assert len(reader.calls) == 1


@pytest.mark.parametrize("location", ["start", "end"])
def test_index_read_kind(location):
    codec = sharding([2, 2], index_location=location)
    s = spec((4, 4))
    shard = codec.encode(fixed(np.arange(16, dtype="uint16").reshape(4, 4)), s)
    reader = CountingReader(shard)
    part = codec.partial_decoder(reader, s).decode_selection((slice(1, 2), slice(2, 4)))
    assert part.array.tolist() == [[6, 7]]
    expected = RangeRequest(0, 68) if location == "start" else SuffixRequest(68)
    assert reader.calls == [expected]
    offset = 68 + 8 if location == "start" else 8
    # Inner chunk (0, 1) is bytes [offset, offset + 8); its row 1 is the last 4 of them,
    # read through the inner `bytes` codec's own partial decoder.
    assert reader.batches == [[RangeRequest(offset + 4, offset + 8)]]


def test_missing_shard_is_none_after_one_read():
    codec = sharding([2])
    reader = CountingReader(None)
    decoder = codec.partial_decoder(reader, spec((4,)))
    assert decoder.decode_selection((slice(0, 4),)) is None
    assert decoder.index() is None
    assert decoder.read_inner([0, 1]) == {}
    assert len(reader.calls) == 1 and reader.batches == []


def test_all_empty_selection_reads_only_the_index():
    codec = sharding([2])
    s = spec((6,), "int8", 3)
    shard = codec.encode(fixed(np.array([3, 3, 1, 2, 3, 3], "int8")), s)
    reader = CountingReader(shard)
    out = codec.partial_decoder(reader, s).decode_selection((np.array([5, 0, 4]),))
    assert out.array.tolist() == [3, 3, 3]
    assert len(reader.calls) == 1 and reader.batches == []


def test_coalescing():
    codec = sharding([1])
    s = spec((8,), "uint8")
    shard = codec.encode(fixed(np.arange(1, 9, dtype="uint8")), s)  # 8 one-byte inner chunks at 0..7
    sel = (np.array([0, 1, 2, 5, 7]),)
    reader = CountingReader(shard)
    assert codec.partial_decoder(reader, s, max_gap_nbytes=0).decode_selection(sel).array.tolist() == [1, 2, 3, 6, 8]
    assert reader.batches == [[RangeRequest(0, 3), RangeRequest(5, 6), RangeRequest(7, 8)]]
    reader = CountingReader(shard)
    assert codec.partial_decoder(reader, s, max_gap_nbytes=1).decode_selection(sel).array.tolist() == [1, 2, 3, 6, 8]
    assert reader.batches == [[RangeRequest(0, 3), RangeRequest(5, 8)]]
    reader = CountingReader(shard)
    codec.partial_decoder(reader, s).decode_selection(sel)
    assert reader.batches == [[RangeRequest(0, 8)]]


def test_reader_without_read_many():
    codec = sharding([2])
    s = spec((6,))
    shard = codec.encode(fixed(np.arange(6, dtype="uint16")), s)
    reader = PlainReader(shard)
    out = codec.partial_decoder(reader, s, max_gap_nbytes=0).decode_selection((np.array([0, 5]),))
    assert out.array.tolist() == [0, 5]
    # Each element is half of its inner chunk: the inner `bytes` codec reads just it.
    assert reader.requests == [SuffixRequest(52), RangeRequest(0, 2), RangeRequest(10, 12)]


def test_integers_keep_their_dimension_and_are_bounds_checked():
    codec = sharding([2, 2])
    s = spec((4, 4))
    arr = np.arange(16, dtype="uint16").reshape(4, 4)
    decoder = codec.partial_decoder(CountingReader(codec.encode(fixed(arr), s)), s)
    assert decoder.decode_selection((3, slice(None))).array.tolist() == [arr[3].tolist()]
    with pytest.raises(BoundsCheckError):
        decoder.decode_selection((4, slice(None)))


def test_through_the_bound_chain_and_a_store():
    codec = sharding([2, 2], [LE, ZSTD])
    s = spec((4, 6), "float64", np.nan)
    arr = np.full((4, 6), np.nan)
    arr[:, 4:] = 1.5
    store = MemoryStore()
    bound = CodecChain([codec]).bind(s)
    store.set("c/0", bound.encode(fixed(arr)))
    decoder = bound.partial_decoder(store.reader("c/0"))
    assert isinstance(decoder, ShardPartialDecoder)
    assert_identical(decoder.decode_selection((slice(1, 4, 2), slice(3, 6))).array, arr[1:4:2, 3:6])
    assert bound.partial_decoder(store.reader("c/missing")).decode_selection((slice(0, 1), slice(0, 1))) is None
    # A compressor after the sharding codec means whole reads: one request for the whole shard.
    zstd_bound = CodecChain.from_json([codec, ZSTD]).bind(s)
    assert not zstd_bound.capabilities.partial_decode
    store.set("c/1", zstd_bound.encode(fixed(arr)))
    reader = CountingReader(store.get("c/1"))
    part = zstd_bound.partial_decoder(reader).decode_selection((slice(1, 4, 2), slice(3, 6)))
    assert_identical(part.array, arr[1:4:2, 3:6])
    assert reader.calls == [None] and reader.batches == []


def test_nested_partial_decode():
    inner = {"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2], "codecs": [LE, ZSTD]}}
    codec = sharding([4, 4], [inner], index_location="start")
    s = spec((8, 8), "int32", -1)
    arr = np.arange(64, dtype="int32").reshape(8, 8)
    arr[4:, :4] = -1
    shard = codec.encode(fixed(arr), s)
    reader = CountingReader(shard)
    sel = (np.array([7, 0, 5]), slice(1, 8, 3))
    assert_identical(codec.partial_decoder(reader, s).decode_selection(sel).array, arr[to_ix(sel, (8, 8))])
    # Nested shards read sub-chunk ranges: the outer index, then each touched
    # inner shard's own index (68 bytes at its start) and only the inner-inner
    # chunks the selection needs -- never a whole inner shard.
    assert reader.calls[0] == RangeRequest(0, 68)
    assert all(r.end - r.start == 68 for r in reader.calls[1:]) and len(reader.calls) == 4
    assert reader.nbytes < len(shard)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_strings_partial_equals_full(data):
    shape, inner = data.draw(shard_layouts(max_dims=2))
    n = int(np.prod(shape))
    fill = data.draw(st.sampled_from(["", "-"]))
    items = data.draw(st.lists(st.one_of(st.just(fill), st.text(max_size=5)), min_size=n, max_size=n))
    codec = sharding(inner, [{"name": "vlen-utf8"}], index_location=data.draw(st.sampled_from(["start", "end"])))
    s = ChunkSpec(shape, STRING, fill)
    shard = codec.encode(strings(items, shape), s)
    full = as_strings(codec.decode(shard, s))
    selection = data.draw(selections(shape))
    reader = CountingReader(shard)
    part = codec.partial_decoder(reader, s).decode_selection(selection)
    assert as_strings(part).tolist() == full[to_ix(selection, shape)].tolist()
    assert len(reader.calls) == 1 and len(reader.batches) <= 1


# -- corrupt shards ------------------------------------------------------------


def _decode_all(shard, location="end"):
    codec = sharding([2], index_location=location)
    return codec.partial_decoder(CountingReader(shard), spec((4,))).decode_selection((slice(0, 4),))


@pytest.mark.parametrize("location", ["start", "end"])
def test_shorter_than_index(location):
    with pytest.raises(ChunkDecodeError, match="shard of 35 bytes is shorter than its 36-byte index"):
        _decode_all(b"\x00" * 35, location)
    with pytest.raises(ChunkDecodeError, match="shorter than its"):
        _decode_all(b"", location)


def test_index_checksum():
    index = bytearray(raw_index([(0, 4), (EMPTY, EMPTY)]))
    index[0] ^= 1
    with pytest.raises(ChecksumError):
        _decode_all(b"\x00" * 4 + bytes(index))


@pytest.mark.parametrize("location", ["start", "end"])
def test_offsets_past_the_end_show_as_short_reads(location):
    # The decoder read only the index, so it learns the shard's length from
    # the short read. (With the index at the end, a range that points into
    # the index itself is not caught here; a whole-shard decode catches it.)
    if location == "end":
        shard = b"\x00" * 8 + raw_index([(0, 4), (50, 4)])
    else:
        shard = raw_index([(36, 4), (50, 4)]) + b"\x00" * 8
    with pytest.raises(ChunkDecodeError, match=r"shard ends before inner chunk \(1,\) \(bytes \[50, 54\); the shard ends at byte 44\)"):
        _decode_all(shard, location)


def test_start_index_overlap_and_half_empty():
    with pytest.raises(ChunkDecodeError, match="overlaps the index"):
        _decode_all(raw_index([(30, 4), (EMPTY, EMPTY)]) + b"\x00" * 4, "start")
    with pytest.raises(ChunkDecodeError, match="half empty"):
        _decode_all(b"\x00" * 4 + raw_index([(0, 4), (EMPTY, 0)]))
    with pytest.raises(ChunkDecodeError, match="overlap"):
        _decode_all(b"\x00" * 8 + raw_index([(0, 4), (2, 4)]))


def test_corrupt_inner_chunk():
    codec = sharding([2], [LE, ZSTD])
    shard = b"\x00" * 4 + raw_index([(0, 4), (EMPTY, EMPTY)])
    decoder = codec.partial_decoder(CountingReader(shard), spec((4,)))
    assert decoder.decode_selection((slice(2, 4),)).array.tolist() == [0, 0]
    with pytest.raises(ChunkDecodeError, match=r"sharding_indexed.*inner chunk \(0,\)"):
        decoder.decode_selection((slice(0, 1),))
