"""``ShardPartialDecoder.parts_by_range`` and ``decode_parts_into``: the inner
chunks each of ``byte_ranges`` holds (the unstored ones with the first), and
decoding a selection range by range, each with only its range's bytes added,
gives what numpy gives; checked on random shards and selections."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.partial import DecodeOptions
from zarrpy.codecs.sharding.partial import ShardPartialDecoder
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.byte_range import coalesce_ranges
from zarrpy.core.byte_reader import BytesReader, PrefetchedReader
from zarrpy.core.chunk_spec import ChunkSpec
from zarrpy.core.dtypes import DataType

SHAPE, INNER = (12, 10), (3, 2)  # 4 x 5 inner chunks
RAW = {"name": "bytes", "configuration": {"endian": "little"}}
CODECS = [{"name": "sharding_indexed", "configuration": {
    "chunk_shape": list(INNER), "codecs": [RAW], "index_codecs": [RAW, {"name": "crc32c"}]}}]


def _shard(values: np.ndarray) -> tuple[object, bytes]:
    dtype = DataType.from_numpy(values.dtype)
    bound = CodecChain.from_json(CODECS).bind(ChunkSpec(SHAPE, dtype, dtype.coerce_fill(0)))
    return bound, bound.encode(ArrayBytes.from_array(values))


@st.composite
def cases(draw: st.DrawFn) -> tuple[np.ndarray, tuple[slice, slice], int]:
    values = draw(st.integers(0, 2**32 - 1).map(lambda s: np.random.default_rng(s).integers(1, 9, SHAPE).astype(np.uint16)))
    for r in range(4):  # some inner chunks all fill: not stored
        for c in range(5):
            if draw(st.booleans()) and draw(st.booleans()):
                values[r * 3:(r + 1) * 3, c * 2:(c + 1) * 2] = 0
    sel = []
    for n in SHAPE:
        a = draw(st.integers(0, n - 1))
        sel.append(slice(a, draw(st.integers(a + 1, n))))
    return values, (sel[0], sel[1]), draw(st.sampled_from([0, 4, 12, 1 << 16]))


class _NoReads:
    """A fallback that fails the test: every read must come from the ranges added."""

    def __call__(self, request=None):  # type: ignore[no-untyped-def]
        raise AssertionError(f"a read outside the ranges added: {request}")

    def read_many(self, requests):  # type: ignore[no-untyped-def]
        raise AssertionError(f"reads outside the ranges added: {requests}")


@settings(max_examples=80, deadline=None, database=None)
@given(cases())
def test_ranges_decoded_one_by_one_give_the_selection(case) -> None:
    values, selection, gap = case
    bound, shard = _shard(values)
    whole = BytesReader(memoryview(shard).cast("B"))
    decoder = bound.partial_decoder(whole, DecodeOptions(max_gap_nbytes=gap))
    assert isinstance(decoder, ShardPartialDecoder)
    decoder.load_index(shard, len(shard))
    ranges = decoder.byte_ranges([selection])
    parts = decoder.parts_by_range([selection])
    if not ranges:
        assert parts is None
        return
    assert parts is not None and len(parts) == len(ranges)
    index = decoder.index()
    seen: set[int] = set()
    for i, (request, held) in enumerate(zip(ranges, parts)):
        assert not held & seen
        seen |= held
        for pos in held:
            loc = index.get(pos)
            if loc is None:
                assert i == 0  # stored nowhere: with the first range
            else:
                assert request.start <= loc[0] and loc[0] + loc[1] <= request.end

    # The ranges are the stored chunks touched, merged as coalesce_ranges merges them.
    stored = [loc for loc in (index.get(pos) for pos in set().union(*parts)) if loc is not None and loc[1] > 0]
    starts, ends = coalesce_ranges([o for o, _ in stored], [o + n for o, n in stored], gap)
    assert [(r.start, r.end) for r in ranges] == list(zip(starts.tolist(), ends.tolist()))

    # Range by range, each decode with only the ranges added so far.
    reader = PrefetchedReader(len(shard), _NoReads())
    by_range = bound.partial_decoder(reader, DecodeOptions(max_gap_nbytes=gap))
    by_range.use_index(index)
    out = np.full((selection[0].stop - selection[0].start, selection[1].stop - selection[1].start), 99, np.uint16)
    for request, held in zip(ranges, parts):
        reader.add([request], [shard[request.start:request.end]])
        assert by_range.decode_parts_into([selection], [out], held)
    np.testing.assert_array_equal(out, values[selection])


def test_one_selection_is_walked_once(monkeypatch) -> None:
    """``byte_ranges``, ``parts_by_range`` and each range's
    ``decode_parts_into`` of the same selections (as the read planner asks
    them: on the event loop, then as each range arrives) walk the selection
    once; other selections are walked anew, and a new index gives new
    ranges (the walk does not depend on it, the ranges do)."""
    from zarrpy.codecs.sharding import partial as partial_module

    values = np.arange(np.prod(SHAPE), dtype=np.uint16).reshape(SHAPE)
    values[0:3, 0:2] = 0  # inner chunk (0, 0) all fill: not stored
    bound, shard = _shard(values)
    decoder = bound.partial_decoder(BytesReader(memoryview(shard).cast("B")), DecodeOptions(max_gap_nbytes=0))
    decoder.load_index(shard, len(shard))
    walks = []
    real = partial_module.OrthogonalIndexer
    monkeypatch.setattr(partial_module, "OrthogonalIndexer", lambda *a: walks.append(a) or real(*a))
    selection = (slice(0, 7), slice(1, 6))
    selections = [selection]
    ranges, parts = decoder.byte_ranges(selections), decoder.parts_by_range(selections)
    assert parts is not None and len(parts) == len(ranges) > 1
    out = np.full((7, 5), 99, np.uint16)
    for held in parts:
        assert decoder.decode_parts_into(selections, [out], held)
    np.testing.assert_array_equal(out, values[selection])
    assert len(walks) == 1

    fresh = bound.partial_decoder(BytesReader(memoryview(shard).cast("B")), DecodeOptions(max_gap_nbytes=0))
    fresh.load_index(shard, len(shard))
    # Equal selections, but not the same object each time: walked each time.
    assert fresh.byte_ranges(list(selections)) == ranges and fresh.parts_by_range(list(selections)) == parts
    assert len(walks) == 3

    # A rewritten shard (chunk (0, 0) now stored): its index gives new ranges.
    values[0:3, 0:2] = 7
    _, rewritten = _shard(values)
    decoder.load_index(rewritten, len(rewritten))
    index = decoder.index()
    assert index is not None
    loc = index.get(0)
    assert loc is not None
    new_parts = decoder.parts_by_range(selections)
    assert new_parts is not None and 0 in set().union(*new_parts)
    assert any(r.start <= loc[0] < r.end for r in decoder.byte_ranges(selections))
    assert len(walks) == 3


def test_a_selection_prepared_before_its_index_is_not_walked_again(monkeypatch) -> None:
    """``prepare`` (the read planner calls it while the index is in
    flight) walks the selections with no index loaded; the ranges asked
    once the index is in take that walk."""
    from zarrpy.codecs.sharding import partial as partial_module

    values = np.arange(np.prod(SHAPE), dtype=np.uint16).reshape(SHAPE)
    bound, shard = _shard(values)
    walks = []
    real = partial_module.OrthogonalIndexer
    monkeypatch.setattr(partial_module, "OrthogonalIndexer", lambda *a: walks.append(a) or real(*a))
    decoder = bound.partial_decoder(BytesReader(memoryview(shard).cast("B")), DecodeOptions(max_gap_nbytes=0))
    selections = [(slice(2, 9), slice(1, 6))]
    decoder.prepare(selections)
    assert len(walks) == 1
    decoder.load_index(shard, len(shard))
    ranges = decoder.byte_ranges(selections)
    out = np.zeros((7, 5), np.uint16)
    assert decoder.decode_selections_into(selections, [out])
    np.testing.assert_array_equal(out, values[2:9, 1:6])
    assert len(walks) == 1 and ranges
