"""Reads into a caller's buffer: ``Array.read(selection, out=)`` and ``out=`` on
``get_basic_selection`` / ``get_orthogonal_selection`` (issue 11).

The chunks are scattered straight into ``out`` (a view of a bigger array
included), so the result equals numpy's selection and no array the size of
the output is allocated on the way; a buffer of the wrong shape or dtype is
a SelectionError naming both.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.core.dtypes.optional import optional_of
from zarrpy.errors import SelectionError


def _slice(n: int) -> st.SearchStrategy[slice]:
    return st.builds(slice, st.integers(0, n), st.integers(0, n), st.sampled_from([None, 1, 2, 3]))


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 9)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    sharded = draw(st.booleans())
    shards = tuple(c * draw(st.integers(1, 2)) for c in chunks) if sharded else None
    selection = tuple(draw(_slice(s)) for s in shape)
    return shape, chunks, shards, selection


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), method=st.sampled_from(["read", "get_basic_selection", "get_orthogonal_selection"]))
def test_out_equals_numpy_and_is_the_result(case, method):
    shape, chunks, shards, selection = case
    data = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape) * 7 - 11
    a = zarrpy.create_array({}, shape=shape, chunks=chunks, shards=shards, dtype="int32", fill_value=-1)
    a[...] = data
    want = data[selection]
    big = np.full((want.shape[0] + 2, *want.shape[1:]), 99, dtype="int32")  # out is a view of a bigger array
    out = big[1:-1]
    got = getattr(a, method)(selection, out=out)
    assert got is out
    np.testing.assert_array_equal(out, want)
    assert (big[0] == 99).all() and (big[-1] == 99).all()  # nothing written outside the view


def test_orthogonal_index_arrays_into_out():
    data = np.arange(60, dtype="float64").reshape(6, 10)
    a = zarrpy.create_array({}, shape=(6, 10), chunks=(4, 3), dtype="float64")
    a[...] = data
    out = np.empty((3, 2), dtype="float64")
    a.get_orthogonal_selection(([5, 0, 5], [9, 1]), out=out)
    np.testing.assert_array_equal(out, data[np.ix_([5, 0, 5], [9, 1])])


def test_strided_out_view():
    data = np.arange(48, dtype="uint16").reshape(6, 8)
    a = zarrpy.create_array({}, shape=(6, 8), chunks=(4, 4), dtype="uint16")
    a[...] = data
    big = np.zeros((6, 16), dtype="uint16")
    out = big[:, ::2]  # not contiguous
    a.read(out=out)
    np.testing.assert_array_equal(out, data)
    assert (big[:, 1::2] == 0).all()


@pytest.mark.parametrize(
    "out, fragment",
    [
        (np.empty((3, 4), dtype="int32"), r"shape \(3, 4\) does not match the selection's shape \(4, 4\)"),
        (np.empty((4, 4), dtype="int64"), "dtype int64 does not match the array's dtype int32"),
        ([[0] * 4] * 4, "expected a numpy array, got list"),
    ],
)
def test_bad_out_names_both_and_writes_nothing(out, fragment):
    a = zarrpy.create_array({}, shape=(4, 4), chunks=(2, 2), dtype="int32")
    with pytest.raises(SelectionError, match=fragment):
        a.read(out=out)


def test_read_only_out_is_refused():
    a = zarrpy.create_array({}, shape=(4,), chunks=(2,), dtype="int32")
    out = np.zeros(4, dtype="int32")
    out.flags.writeable = False
    with pytest.raises(SelectionError, match="read-only"):
        a.read(out=out)


@pytest.mark.parametrize("dtype", [optional_of("int16")], ids=["optional"])
def test_types_that_build_their_result_take_no_out(dtype):
    a = zarrpy.create_array({}, shape=(4,), chunks=(2,), dtype=dtype)
    with pytest.raises(SelectionError, match="reads into a new result"):
        a.read(out=np.empty(4, dtype=a.metadata.data_type.numpy))


def test_strings_read_into_a_string_buffer():
    a = zarrpy.create_array({}, shape=(5,), chunks=(2,), dtype=str)
    a[...] = ["a", "bb", "", "héllo", "z"]
    out = np.empty(5, dtype=np.dtypes.StringDType())
    assert a.read(out=out) is out
    assert out.tolist() == ["a", "bb", "", "héllo", "z"]


def test_peak_memory_is_far_below_the_output_size():
    """Without out a read allocates the output; with out it allocates per-chunk
    scratch only (here: chunks of 1/16 of the array)."""
    shape, chunks = (2048, 1024), (512, 256)
    a = zarrpy.create_array({}, shape=shape, chunks=chunks, dtype="float64", compressors=None)
    a[...] = 1.5
    out = np.empty(shape, dtype="float64")
    nbytes = out.nbytes
    tracemalloc.start()
    try:
        a.read(out=out)
        _, with_out = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        fresh = a.read()
        _, without_out = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (out == 1.5).all() and (fresh == 1.5).all()
    assert without_out >= nbytes  # the comparison is meaningful: a plain read allocates the output
    assert with_out < nbytes // 2, (with_out, nbytes)
