"""RaggedArray: construction, indexing, conversions to and from ArrayBytes,
and round trips through the vlen-array codec path with numcodecs as oracle."""

from __future__ import annotations

import doctest

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zarrpy.core.ragged as ragged_module
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.vlen_v2 import decode_vlen_array, encode_vlen_array
from zarrpy.errors import ChunkDecodeError, CodecError
from zarrpy.core.ragged import RaggedArray

LISTS = [[1, 2, 3], [], [4], [5, 6]]


def ragged(items=LISTS, dtype="int16", **kw) -> RaggedArray:
    return RaggedArray.from_list(items, dtype, **kw)


def as_lists(r: RaggedArray) -> list:
    return [a.tolist() for a in r.to_list()]


def test_module_doctests():
    assert doctest.testmod(ragged_module).failed == 0


# -- construction -------------------------------------------------------------


def test_from_list_layout():
    r = ragged()
    assert r.offsets.dtype == np.int64 and r.offsets.tolist() == [0, 3, 3, 4, 6]
    assert r.values.dtype == np.int16 and r.values.tolist() == [1, 2, 3, 4, 5, 6]
    assert r.dtype == np.int16 and r.shape == (4,) and r.ndim == 1 and r.size == 4 and len(r) == 4
    assert r.nbytes == 12
    assert r.lengths.tolist() == [3, 0, 1, 2]
    assert as_lists(r) == LISTS


def test_from_list_infers_dtype_and_untyped_empties_do_not_vote():
    assert ragged([[1, 2], [], None], dtype=None).dtype == np.int64
    assert ragged([[1, 2], [0.5]], dtype=None).dtype == np.float64
    assert ragged([], dtype=None).dtype == np.float64
    assert ragged([[], None], dtype=None).dtype == np.float64
    # A typed empty numpy array does count.
    assert ragged([np.array([], "u1"), np.array([3], "u1")], dtype=None).dtype == np.uint8
    assert ragged([np.array([1], "i2"), np.array([], "f4")], dtype=None).dtype == np.float32


def test_from_list_none_is_an_empty_element_like_numcodecs():
    r = ragged([[1], None, [2]])
    assert as_lists(r) == [[1], [], [2]]


def test_from_list_big_endian_dtype_is_stored_native():
    r = ragged([[1, 256]], dtype=">i2")
    assert r.dtype == np.dtype("=i2") and r.values.tolist() == [1, 256]


def test_from_list_object_array_keeps_its_shape():
    obj = np.empty((2, 3), dtype=object)
    for i in range(6):
        obj.flat[i] = np.arange(i, dtype="f8")
    r = RaggedArray.from_list(obj)
    assert r.shape == (2, 3) and r.dtype == np.float64
    assert [[a.tolist() for a in row] for row in r.to_list()] == [
        [[], [0.0], [0.0, 1.0]],
        [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0, 4.0]],
    ]
    assert r.to_object_array().shape == (2, 3)


@pytest.mark.parametrize(
    "items, dtype, error",
    [
        ([[1, 2], [[3]]], "i2", ValueError),  # an element is 2-D
        ([[1], 5], "i2", ValueError),  # a scalar element
        ([["a"]], None, TypeError),  # strings are not numbers
        ([[1]], "U3", TypeError),
        ([[1]], object, TypeError),
        ([[1]], "M8[s]", TypeError),
        ([[1]], [("a", "i2")], TypeError),
    ],
)
def test_from_list_rejects(items, dtype, error):
    with pytest.raises(error):
        RaggedArray.from_list(items, dtype)


def test_from_list_shape_must_hold_every_element():
    assert ragged(shape=(2, 2)).shape == (2, 2)
    with pytest.raises(ValueError, match="does not hold 4"):
        ragged(shape=(3,))


def test_constructor_checks_offsets():
    v = np.arange(4, dtype="i4")
    assert RaggedArray([0, 1, 4], v).to_list()[1].tolist() == [1, 2, 3]
    for offsets, match in [([1, 4], "start at 0"), ([0, 3, 2, 4], "decrease at element 1"),
                           ([0, 3], "end at 3"), ([], "n\\+1")]:
        with pytest.raises(ValueError, match=match):
            RaggedArray(offsets, v)
    with pytest.raises(TypeError):
        RaggedArray([0.0, 4.0], v)
    with pytest.raises(ValueError, match="1-D"):
        RaggedArray([0, 4], v.reshape(2, 2))


# -- indexing -----------------------------------------------------------------


def test_integer_index_is_a_view_and_negative_counts_from_the_end():
    r = ragged().copy()
    assert r[0].tolist() == [1, 2, 3] and r[-1].tolist() == [5, 6] and r[1].size == 0
    assert r[np.int64(-4)].tolist() == [1, 2, 3]
    assert np.shares_memory(r[3], r.values)
    r[3][0] = 50
    assert r.values.tolist() == [1, 2, 3, 4, 50, 6]
    for bad in (4, -5):
        with pytest.raises(IndexError):
            r[bad]


def test_slices_share_memory_when_consecutive():
    r = ragged()
    s = r[1:3]
    assert isinstance(s, RaggedArray) and as_lists(s) == [[], [4]]
    assert s.offsets.tolist() == [0, 0, 1] and np.shares_memory(s.values, r.values)
    assert as_lists(r[2:]) == [[4], [5, 6]]
    assert as_lists(r[3:1]) == [] and r[3:1].shape == (0,)
    assert as_lists(r[10:]) == []
    stepped = r[::-2]
    assert as_lists(stepped) == [[5, 6], []]
    assert not np.shares_memory(stepped.values, r.values)


def test_gather_by_int_array_list_and_mask():
    r = ragged()
    assert as_lists(r[[3, 0, 0, -3]]) == [[5, 6], [1, 2, 3], [1, 2, 3], []]
    assert as_lists(r[np.array([2])]) == [[4]]
    assert as_lists(r[np.array([], dtype=np.int64)]) == []
    assert as_lists(r[np.array([True, False, False, True])]) == [[1, 2, 3], [5, 6]]
    with pytest.raises(IndexError):
        r[[0, 4]]
    with pytest.raises(IndexError):
        r.take([-5])


def test_take_matches_numpy_on_random_indices():
    rng = np.random.default_rng(0)
    items = [rng.integers(0, 100, rng.integers(0, 5)).astype("u2") for _ in range(50)]
    r = RaggedArray.from_list(items)
    idx = rng.integers(-50, 50, 200)
    got = r.take(idx)
    assert got.equals([items[i] for i in idx])


def test_n_dimensional_indexing_follows_numpy():
    items = [list(range(i)) for i in range(12)]
    r = ragged(items, shape=(3, 4))
    ref = np.empty((3, 4), dtype=object)
    for i in range(12):
        ref.flat[i] = items[i]
    assert len(r) == 3
    assert r[1, 2].tolist() == ref[1, 2] and r[-1, -1].tolist() == ref[2, 3]
    for key in [1, (slice(None), 1), (slice(0, 2), slice(1, 3)), ([2, 0], slice(None, None, -1)), Ellipsis]:
        got = r[key]
        want = ref[key]
        assert got.shape == want.shape, key
        assert [a.tolist() for a in got.to_object_array().reshape(-1)] == list(want.reshape(-1)), key
    # A whole row is consecutive in C order: a view.
    assert np.shares_memory(r[1].values, r.values)
    assert [row.shape for row in r] == [(4,)] * 3
    with pytest.raises(IndexError):
        r[3, 0]


def test_zero_dimensional():
    r = ragged([[7, 8]], shape=())
    assert r.shape == () and r.size == 1 and r[()].tolist() == [7, 8]
    assert r.to_list().tolist() == [7, 8]
    with pytest.raises(TypeError):
        len(r)
    assert RaggedArray.from_array_bytes(r.to_array_bytes(), "i2").equals(r)


def test_iteration_and_reshape():
    r = ragged()
    assert [a.tolist() for a in r] == LISTS
    r2 = r.reshape(2, 2)
    assert r2.shape == (2, 2) and np.shares_memory(r2.values, r.values)
    assert r.reshape(-1, 1).shape == (4, 1)
    assert [as_lists(row) for row in r2] == [LISTS[:2], LISTS[2:]]
    with pytest.raises(ValueError):
        r.reshape(3)


def test_equals():
    r = ragged()
    assert r.equals(ragged()) and r.equals(LISTS) and r.equals(r[:])
    assert not r.equals(ragged(dtype="int32"))
    assert not r.equals([[1, 2, 3], [], [4], [5, 7]])
    assert not r.equals([[1, 2], [3], [4], [5, 6]])  # same values, other lengths
    assert not r.equals(r.reshape(2, 2))
    assert not r.equals("abc")
    f = ragged([[np.nan, 1.0], [-0.0]], dtype="f8")
    assert f.equals([[np.nan, 1.0], [0.0]])


def test_repr():
    assert repr(ragged()) == "RaggedArray([[1, 2, 3], [], [4], [5, 6]], dtype=int16)"
    long = repr(ragged([list(range(20))] * 10, dtype="u1", shape=(5, 2)))
    assert long.startswith("RaggedArray([[0, 1, 2, 3, 4, 5, 6, 7, ...], ")
    assert long.endswith("[0, 1, 2, 3, 4, 5, 6, 7, ...], ...], shape=(5, 2), dtype=uint8)")


# -- ArrayBytes ---------------------------------------------------------------


def test_to_array_bytes_is_little_endian_with_byte_offsets():
    ab = ragged([[1, 2], [], [3]]).to_array_bytes()
    assert not ab.is_fixed and ab.shape == (3,)
    assert ab.offsets.tolist() == [0, 4, 4, 6]
    assert ab.data == bytes.fromhex("010002000300")


def test_from_array_bytes_is_a_view_of_the_chunk():
    ab = ArrayBytes.variable([0, 8, 8, 24], np.arange(3, dtype="<f8").tobytes(), (3,))
    r = RaggedArray.from_array_bytes(ab, "float64")
    assert as_lists(r) == [[0.0], [], [1.0, 2.0]]
    assert r.offsets.tolist() == [0, 1, 1, 3]
    if np.little_endian:
        assert np.shares_memory(r.values, np.frombuffer(ab.data, np.uint8))
        assert not r.values.flags.writeable and r.copy().values.flags.writeable


def test_from_array_bytes_keeps_the_chunk_shape():
    ab = ragged(shape=(2, 2)).to_array_bytes()
    assert ab.shape == (2, 2)
    assert RaggedArray.from_array_bytes(ab, "i2").shape == (2, 2)


def test_from_array_bytes_rejects_lengths_off_the_item_size():
    ab = ArrayBytes.variable([0, 4, 4, 9, 12], bytes(12), (2, 2))
    with pytest.raises(ChunkDecodeError, match=r"position \(1, 0\) has 5 bytes, not a multiple of the item size 4"):
        RaggedArray.from_array_bytes(ab, "int32")
    # Every length a multiple of 2: fine as int16.
    ok = ArrayBytes.variable([0, 4, 4, 10, 12], bytes(12), (2, 2))
    assert RaggedArray.from_array_bytes(ok, "i2").lengths.tolist() == [[2, 0], [3, 1]]
    # Item size 1 accepts any length.
    assert RaggedArray.from_array_bytes(ab, "u1").lengths.tolist() == [[4, 0], [5, 3]]


def test_from_array_bytes_rejects_fixed_chunks_and_bad_dtypes():
    with pytest.raises(CodecError, match="variable-length chunk"):
        RaggedArray.from_array_bytes(ArrayBytes.from_array(np.zeros(3, "i2")), "i2")
    ab = ragged().to_array_bytes()
    with pytest.raises(TypeError):
        RaggedArray.from_array_bytes(ab, "U2")


def test_empty_ragged_array():
    r = ragged([])
    assert r.size == 0 and r.offsets.tolist() == [0] and r.to_list() == []
    ab = r.to_array_bytes()
    assert ab.offsets.tolist() == [0] and ab.data == b""
    assert RaggedArray.from_array_bytes(ab, "i2").equals(r)


# -- properties: round trips and numcodecs as oracle ----------------------------

DTYPES = st.sampled_from(["<i2", "<f8"])


@st.composite
def ragged_lists(draw, dtype=None):
    """(dtype, list of 1-D arrays of random lengths, including empty)."""
    dtype = np.dtype(draw(DTYPES) if dtype is None else dtype)
    n = draw(st.integers(0, 12))
    elements = hnp.from_dtype(dtype, allow_nan=True, allow_infinity=True) if dtype.kind == "f" else None
    items = [
        draw(hnp.arrays(dtype, st.integers(0, 9), elements=elements))
        for _ in range(n)
    ]
    return dtype, items


def assert_same_items(r: RaggedArray, items: list[np.ndarray]) -> None:
    """Bit for bit: same count, each element with the same bytes (NaN payloads too)."""
    got = r.to_list()
    assert len(got) == len(items)
    for a, b in zip(got, items):
        assert a.dtype == np.asarray(b).dtype.newbyteorder("=")
        assert a.astype(a.dtype.newbyteorder("<")).tobytes() == np.asarray(b).astype(a.dtype.newbyteorder("<")).tobytes()


@settings(max_examples=200, deadline=None)
@given(ragged_lists())
def test_round_trip_through_array_bytes(case):
    dtype, items = case
    r = RaggedArray.from_list(items, dtype)
    assert_same_items(r, items)
    ab = r.to_array_bytes()
    assert ab.offsets.tolist() == [0, *np.cumsum([a.nbytes for a in items], dtype=np.int64).tolist()]
    assert ab.data == b"".join(a.astype(dtype.newbyteorder("<")).tobytes() for a in items)
    back = RaggedArray.from_array_bytes(ab, dtype)
    assert back.equals(r)
    assert_same_items(back, items)


@settings(max_examples=200, deadline=None)
@given(ragged_lists())
def test_round_trip_through_the_vlen_array_codec(case):
    dtype, items = case
    r = RaggedArray.from_list(items, dtype)
    buf = encode_vlen_array(r.to_array_bytes(), dtype)
    back = RaggedArray.from_array_bytes(decode_vlen_array(buf, (len(items),), dtype), dtype)
    assert back.equals(r)
    assert_same_items(back, items)


@settings(max_examples=200, deadline=None)
@given(ragged_lists(), st.sampled_from(["<", ">"]))
def test_numcodecs_encodes_zarrpy_decodes(case, order):
    dtype, items = case
    stored = dtype.newbyteorder(order)
    obj = np.empty(len(items), dtype=object)
    obj[:] = [a.astype(stored) for a in items] if items else []
    buf = numcodecs.VLenArray(stored.str).encode(obj)
    r = RaggedArray.from_array_bytes(decode_vlen_array(bytes(buf), (len(items),), stored), stored)
    assert r.dtype == dtype.newbyteorder("=")
    assert r.equals(items)
    assert_same_items(r, items)


@settings(max_examples=200, deadline=None)
@given(ragged_lists(), st.sampled_from(["<", ">"]))
def test_zarrpy_encodes_numcodecs_decodes(case, order):
    dtype, items = case
    stored = dtype.newbyteorder(order)
    r = RaggedArray.from_list(items, dtype)
    buf = encode_vlen_array(r.to_array_bytes(), stored)
    expected = numcodecs.VLenArray(stored.str).encode(r.to_object_array())
    assert buf == bytes(expected)
    decoded = numcodecs.VLenArray(stored.str).decode(buf)
    assert r.equals(list(decoded))
    assert_same_items(r, list(decoded))


def test_numcodecs_test_vector():
    """The vlen-array vector of ZARR-FORMAT-NOTES §11, both ways."""
    buf = bytes.fromhex("03000000040000000100020000000000020000000300")
    r = RaggedArray.from_array_bytes(decode_vlen_array(buf, (3,), "<i2"), "<i2")
    assert as_lists(r) == [[1, 2], [], [3]]
    assert encode_vlen_array(r.to_array_bytes(), "<i2") == buf


def test_corrupt_vlen_array_chunk_is_a_chunk_decode_error():
    # One element of 3 bytes cannot be int16 items.
    buf = bytes.fromhex("01000000" "03000000" "010203")
    with pytest.raises(ChunkDecodeError):
        RaggedArray.from_array_bytes(decode_vlen_array(buf, (1,), "<i2"), "<i2")
    # The same bytes wrapped by hand reach from_array_bytes' own check.
    ab = ArrayBytes.variable([0, 3], b"\x01\x02\x03", (1,))
    with pytest.raises(ChunkDecodeError, match=r"position \(0,\) has 3 bytes"):
        RaggedArray.from_array_bytes(ab, "<i2")


def test_a_million_elements_convert_both_ways():
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 8, 1_000_000)
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths * 4, out=offsets[1:])
    data = rng.integers(0, 2**31, int(lengths.sum()), dtype="<i4").tobytes()
    ab = ArrayBytes.variable(offsets, data, (lengths.size,))
    r = RaggedArray.from_array_bytes(ab, "<i4")
    assert r.size == 1_000_000 and np.array_equal(r.lengths, lengths)
    back = r.to_array_bytes()
    assert back.data == data and np.array_equal(back.offsets, offsets)
