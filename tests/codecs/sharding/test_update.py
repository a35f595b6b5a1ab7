"""ShardingCodec.update: decode, numpy-assign, encode semantics; untouched inner
chunks keep their bytes; fill chunks are dropped; an all-fill shard is None."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.sharding._helpers import (
    CRC,
    EMPTY,
    LE,
    STRING,
    as_strings,
    fixed,
    inner_bytes,
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
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.errors import ChecksumError, CodecError

ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}


def update_one(codec, old, selection, block, s):
    """The shard after one write of ``block`` at ``selection``."""
    return codec.update_many(old, [(selection, block)], s)


def _positions(shape, inner):
    grid = tuple(s // c for s, c in zip(shape, inner))
    return grid, list(itertools.product(*(range(g) for g in grid)))


def _check_compact(shard, nchunks, location):
    entries = [e for e in read_entries(shard, nchunks, location) if e[0] != EMPTY]
    assert sum(n for _, n in entries) + 16 * nchunks + 4 == len(shard)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_update_matches_numpy(data):
    shape, inner = data.draw(shard_layouts())
    dtype = data.draw(core_dtypes())
    fill = np.zeros((), dtype)[()]
    location = data.draw(st.sampled_from(["start", "end"]))
    codec = sharding(inner, data.draw(st.sampled_from([[LE], [LE, ZSTD]])), index_location=location)
    s = spec(shape, dtype, fill)
    if data.draw(st.booleans()):
        before = data.draw(shard_arrays(shape, inner, dtype, fill))
        old = codec.encode_or_none(fixed(before), s)
    else:
        before, old = np.full(shape, fill, dtype), None
    selection = data.draw(selections(shape))
    ix = to_ix(selection, shape)
    block_shape = before[ix].shape
    block = data.draw(hnp.arrays(dtype, block_shape))
    if data.draw(st.booleans()):
        block[...] = fill  # writing the fill value back
    expected = before.copy()
    expected[ix] = block

    new = update_one(codec, old, selection, fixed(block), s)

    grid, coords = _positions(shape, inner)
    nchunks = len(coords)
    fill_bits = np.full(inner, fill, dtype).tobytes()
    expected_stored = [
        expected[tuple(slice(i * c, (i + 1) * c) for i, c in zip(cc, inner))].tobytes() != fill_bits for cc in coords
    ]
    if not any(expected_stored):
        assert new is None
        return
    assert_identical(codec.decode(new, s).array, expected)
    _check_compact(new, nchunks, location)
    new_inner = inner_bytes(new, nchunks, location)
    assert [b is not None for b in new_inner] == expected_stored
    if old is not None:
        old_inner = inner_bytes(old, nchunks, location)
        touched = touched_chunks(selection, shape, inner)
        for k, cc in enumerate(coords):
            if cc not in touched:
                assert new_inner[k] == old_inner[k]  # byte-identical, None stays None


def test_untouched_inner_chunks_are_copied_not_reencoded():
    # A corrupt inner chunk the write does not touch survives as it is: it was
    # neither decoded nor re-encoded.
    codec = sharding([2], [LE, CRC])
    s = spec((6,), "uint8")
    old = bytearray(codec.encode(fixed(np.array([1, 2, 3, 4, 5, 6], "uint8")), s))
    old[1] ^= 0xFF  # inner chunk 0, data byte: its crc no longer matches
    new = update_one(codec, bytes(old), (slice(4, 5),), fixed(np.array([9], "uint8")), s)
    assert inner_bytes(new, 3)[0] == bytes(old[0:6])
    assert inner_bytes(new, 3)[1] == bytes(old[6:12])
    with pytest.raises(ChecksumError):
        update_one(codec, bytes(old), (slice(1, 2),), fixed(np.array([9], "uint8")), s)


def test_complete_inner_chunks_are_not_decoded():
    codec = sharding([2], [LE, CRC])
    s = spec((4,), "uint8")
    old = bytearray(codec.encode(fixed(np.array([1, 2, 3, 4], "uint8")), s))
    old[0] ^= 0xFF  # corrupt inner chunk 0, which the write covers whole
    new = update_one(codec, bytes(old), (slice(0, 2),), fixed(np.array([7, 8], "uint8")), s)
    assert codec.decode(new, s).array.tolist() == [7, 8, 3, 4]
    assert inner_bytes(new, 2)[1] == bytes(old[6:12])


def test_missing_shard_and_all_fill_results():
    codec = sharding([2, 2])
    s = spec((4, 4), "int16", -1)
    assert update_one(codec, None, (slice(0, 4), slice(0, 4)), fixed(np.full((4, 4), -1, "int16")), s) is None
    new = update_one(codec, None, (slice(1, 2), np.array([3])), fixed(np.array([[5]], "int16")), s)
    expected = np.full((4, 4), -1, "int16")
    expected[1, 3] = 5
    assert_identical(codec.decode(new, s).array, expected)
    assert [b is not None for b in inner_bytes(new, 4)] == [False, True, False, False]
    assert len(new) == 8 + 68
    # Writing the fill back empties the shard: the caller deletes the key.
    assert update_one(codec, new, (slice(1, 2), slice(3, 4)), fixed(np.array([[-1]], "int16")), s) is None


def test_selection_forms_and_numpy_blocks():
    codec = sharding([2, 2], index_location="start")
    s = spec((4, 4), "float32")
    before = np.arange(16, dtype="float32").reshape(4, 4)
    old = codec.encode(fixed(before), s)
    # Integers keep their dimension; unsorted and repeated arrays; numpy block.
    new = update_one(codec, old, (2, np.array([3, 0, 3])), np.array([[1.5, 2.5, 3.5]], "float32"), s)
    expected = before.copy()
    expected[np.ix_([2], [3, 0, 3])] = [[1.5, 2.5, 3.5]]
    assert_identical(codec.decode(new, s).array, expected)
    assert expected[2, 3] == 3.5
    # A block in another byte order is written as the shard's type.
    new = update_one(codec, old, (slice(0, 1), slice(0, 2)), np.array([[1.0, 2.0]], ">f4"), s)
    assert codec.decode(new, s).array[0, :3].tolist() == [1.0, 2.0, 2.0]


def test_update_rejects_bad_blocks():
    codec = sharding([2])
    s = spec((4,), "uint16")
    with pytest.raises(CodecError, match=r"block of shape \(3,\) for a selection of shape \(2,\)"):
        update_one(codec, None, (slice(0, 2),), fixed(np.zeros(3, "uint16")), s)
    with pytest.raises(CodecError, match="does not match data type 'uint16'"):
        update_one(codec, None, (slice(0, 2),), strings(["a", "b"], (2,)), s)


def test_nested_update():
    inner = {"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2], "codecs": [LE, ZSTD]}}
    codec = sharding([4, 4], [inner])
    s = spec((8, 8), "int32", 0)
    before = np.zeros((8, 8), "int32")
    before[0:4, 4:8] = 1
    before[5, 5] = 2
    old = codec.encode(fixed(before), s)
    new = update_one(codec, old, (slice(3, 6), slice(0, 2)), fixed(np.full((3, 2), 9, "int32")), s)
    expected = before.copy()
    expected[3:6, 0:2] = 9
    assert_identical(codec.decode(new, s).array, expected)
    assert inner_bytes(new, 4)[1] == inner_bytes(old, 4)[1]


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_strings_update(data):
    shape, inner = data.draw(shard_layouts(max_dims=2))
    n = int(np.prod(shape))
    fill = data.draw(st.sampled_from(["", "-"]))
    words = st.one_of(st.just(fill), st.text(max_size=4))
    codec = sharding(inner, [{"name": "vlen-utf8"}])
    s = ChunkSpec(shape, STRING, fill)
    before = np.array(data.draw(st.lists(words, min_size=n, max_size=n)), dtype=object).reshape(shape)
    old = codec.encode_or_none(strings(before.reshape(-1).tolist(), shape), s)
    selection = data.draw(selections(shape))
    ix = to_ix(selection, shape)
    m = before[ix].size
    block = np.array(data.draw(st.lists(words, min_size=m, max_size=m)), dtype=object).reshape(before[ix].shape)
    expected = before.copy()
    expected[ix] = block
    new = update_one(codec, old, selection, strings(block.reshape(-1).tolist(), block.shape), s)
    if all(x == fill for x in expected.reshape(-1)):
        assert new is None
    else:
        assert as_strings(codec.decode(new, s)).tolist() == expected.tolist()


@pytest.mark.integration
def test_zarr_python_reads_updated_shards(tmp_path):
    zarr = pytest.importorskip("zarr")
    from zarr.storage import LocalStore

    codec = sharding([2, 2], [LE, ZSTD])
    z = zarr.create_array(store=LocalStore(str(tmp_path)), shape=(4, 4), chunks=(4, 4), serializer=codec.to_json(),
                          compressors=None, dtype="uint16", fill_value=0)
    z[:] = np.arange(16, dtype="uint16").reshape(4, 4)
    path = tmp_path / "c" / "0" / "0"
    s = spec((4, 4), "uint16")
    new = update_one(codec, path.read_bytes(), (slice(1, 3), slice(1, 3)), fixed(np.zeros((2, 2), "uint16")), s)
    path.write_bytes(new)
    expected = np.arange(16, dtype="uint16").reshape(4, 4)
    expected[1:3, 1:3] = 0
    np.testing.assert_array_equal(z[:], expected)
    # A shard zarr-python wrote (morton order) keeps the untouched chunks' bytes.
    z[:] = np.arange(16, dtype="uint16").reshape(4, 4) + 1
    old = path.read_bytes()
    new = update_one(codec, old, (slice(0, 2), slice(0, 1)), fixed(np.array([[7], [7]], "uint16")), s)
    for k in (1, 2, 3):
        assert inner_bytes(new, 4)[k] == inner_bytes(old, 4)[k]


def test_raw_index_helper_matches_codec():
    # Sanity check of the helper the tests compare against.
    codec = sharding([2])
    shard = codec.encode(fixed(np.array([0, 0, 1, 1], "uint8")), spec((4,), "uint8"))
    assert shard == b"\x01\x01" + raw_index([(EMPTY, EMPTY), (0, 2)])
    assert isinstance(codec.decode(shard, spec((4,), "uint8")), ArrayBytes)
