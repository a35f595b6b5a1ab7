"""Writes follow numpy's assignment rules (issue #8).

numpy is the reference throughout: whatever ``ref[sel] = value`` raises,
zarrpy raises (and stores nothing: the store's bytes are unchanged);
whatever it stores, zarrpy stores.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.errors import MetadataError

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
DTYPES = [*INTS, "bool", "float16", "float32", "float64"]
LAYOUTS = {
    "plain": {"chunks": (2,)},
    "sharded": {"chunks": (2,), "shards": (4,)},
    "v2": {"chunks": (2,), "zarr_format": 2},
}
START = [1, 0, 1, 1, 0, 1]


def make(dtype: str, layout: str) -> tuple[zarrpy.Array, dict, np.ndarray]:
    """An array holding START (so chunks are stored), its dict store, and numpy's copy."""
    store: dict = {}
    a = zarrpy.create_array(store, shape=(len(START),), dtype=dtype, **LAYOUTS[layout])
    ref = np.array(START, dtype=dtype)
    a[...] = ref
    return a, store, ref


def numpy_outcome(action):
    """('raises', exception type) or ('ok', None), with numpy's cast warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            action()
        except Exception as exc:  # numpy's own verdict, whatever it is
            return "raises", type(exc)
    return "ok", None


def check_like_numpy(a: zarrpy.Array, store: dict, ref: np.ndarray, apply) -> None:
    """Apply ``apply`` to numpy's copy and to ``a``: same error, or same values."""
    before = dict(store)
    trial = ref.copy()  # numpy may write part of a refused list; zarrpy writes none of it
    outcome, exc_type = numpy_outcome(lambda: apply(trial))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if outcome == "ok":
            apply(a)
            ref[...] = trial
        else:
            with pytest.raises(exc_type):
                apply(a)
            assert store == before, "a refused write changed the store"
    np.testing.assert_array_equal(a[...], ref)
    np.testing.assert_array_equal(zarrpy.open_array(store)[...], ref)


def set_at(sel, value):
    def apply(target):
        target[sel] = value
    return apply


def bounds(dtype: str) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", INTS)
def test_python_int_just_out_of_range_raises_and_stores_nothing(dtype, layout):
    lo, hi = bounds(dtype)
    for value in (lo, hi, lo - 1, hi + 1, 2**64, -(2**63) - 1, 2**100):
        a, store, ref = make(dtype, layout)
        check_like_numpy(a, store, ref, set_at(1, value))
        check_like_numpy(a, store, ref, set_at(slice(0, 3), value))
        check_like_numpy(a, store, ref, set_at(slice(2, 4), [lo, value]))
    # The boundaries themselves are stored; one past them is refused.
    a, store, _ = make(dtype, layout)
    a[0:2] = [lo, hi]
    assert a[0:2].tolist() == [lo, hi]
    before = dict(store)
    with pytest.raises(OverflowError, match=dtype):
        a[5] = hi + 1
    with pytest.raises(OverflowError, match=dtype):
        a[4:6] = [0, lo - 1]
    assert store == before


def test_issue_examples():
    a = zarrpy.create_array({}, shape=(4,), dtype="i4", chunks=(2,))
    with pytest.raises(OverflowError):
        a[0] = 2**40
    u = zarrpy.create_array({}, shape=(4,), dtype="uint8", chunks=(2,))
    with pytest.raises(OverflowError):
        u[0] = 256
    with pytest.raises(OverflowError):
        u[0] = -1
    assert u[...].tolist() == [0, 0, 0, 0]
    u[0:2] = np.array([256, 257])  # a numpy array is cast as numpy casts it
    assert u[...].tolist() == [0, 1, 0, 0]


@settings(max_examples=60)
@given(
    dtype=st.sampled_from(DTYPES),
    layout=st.sampled_from(list(LAYOUTS)),
    value=st.one_of(
        st.integers(min_value=-(2**65), max_value=2**65),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
    ),
    start=st.integers(0, 5),
)
def test_python_scalars_like_numpy(dtype, layout, value, start):
    a, store, ref = make(dtype, layout)
    check_like_numpy(a, store, ref, set_at(start, value))
    check_like_numpy(a, store, ref, set_at(slice(start, None), value))


@settings(max_examples=60)
@given(
    dtype=st.sampled_from(DTYPES),
    layout=st.sampled_from(list(LAYOUTS)),
    values=st.lists(
        st.one_of(st.integers(min_value=-(2**65), max_value=2**65), st.floats(allow_nan=False, width=32)),
        min_size=3, max_size=3,
    ),
)
def test_python_lists_like_numpy(dtype, layout, values):
    a, store, ref = make(dtype, layout)
    check_like_numpy(a, store, ref, set_at(slice(1, 4), values))


@settings(max_examples=60)
@given(
    dtype=st.sampled_from(DTYPES),
    layout=st.sampled_from(list(LAYOUTS)),
    source=st.sampled_from(["int64", "uint64", "float64", "float32", "int16"]),
    values=st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=4, max_size=4),
)
def test_numpy_arrays_cast_like_numpy(dtype, layout, source, values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        arr = np.array(values).astype(source)
    a, store, ref = make(dtype, layout)
    check_like_numpy(a, store, ref, set_at(slice(2, 6), arr))


@settings(max_examples=40)
@given(
    dtype=st.sampled_from(DTYPES),
    kind=st.sampled_from(["int64", "uint64", "float64", "float32"]),
    value=st.one_of(st.integers(min_value=-(2**63), max_value=2**63 - 1), st.floats(width=32)),
)
def test_numpy_scalars_like_numpy(dtype, kind, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            scalar = np.dtype(kind).type(value)
        except (OverflowError, ValueError):
            return  # not a scalar numpy can make (NaN as int64, -1 as uint64)
    a, store, ref = make(dtype, "plain")
    check_like_numpy(a, store, ref, set_at(3, scalar))


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_nan_and_inf_into_integers_raise(dtype, bad):
    a, store, ref = make(dtype, "sharded")
    before = dict(store)
    with pytest.raises((ValueError, OverflowError)):
        a[2] = bad
    with pytest.raises((ValueError, OverflowError)):
        a[0:2] = [1.0, bad]
    assert store == before
    np.testing.assert_array_equal(a[...], ref)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_floats_truncate_like_numpy(layout):
    a, store, ref = make("int16", layout)
    check_like_numpy(a, store, ref, set_at(slice(0, 4), [2.9, -2.9, 0.5, -0.5]))
    assert a[0:4].tolist() == [2, -2, 0, 0]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_refused_write_chunks_stores_nothing(layout):
    a, store, ref = make("uint8", layout)
    before = dict(store)
    with pytest.raises(OverflowError, match="uint8"):
        a.write_chunks({(0,): [7, 7], (1,): [0, 256]})  # the bad chunk comes second
    assert store == before
    np.testing.assert_array_equal(a[...], ref)
    a.write_chunks({(0,): np.array([256, 511])})  # arrays cast as in numpy
    assert a[0:2].tolist() == [0, 255]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_refused_append_stores_nothing(layout):
    a, store, ref = make("int8", layout)
    before = dict(store)
    with pytest.raises(OverflowError, match="int8"):
        a.append([1, 128])
    with pytest.raises(OverflowError):
        a.append([-129])
    assert store == before
    assert a.shape == ref.shape
    assert zarrpy.open_array(store).shape == ref.shape
    a.append([1, 127])
    a.append(np.array([128]))  # wraps like numpy's cast
    assert a[...].tolist() == [*START, 1, 127, -128]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_create_with_out_of_range_data_stores_nothing(layout):
    store: dict = {}
    with pytest.raises(OverflowError, match="uint16"):
        zarrpy.create_array(store, dtype="uint16", data=[1, 2, 65536], **LAYOUTS[layout])
    assert store == {}
    a = zarrpy.create_array(store, dtype="uint16", data=np.array([1, 2, 65536]), **LAYOUTS[layout])
    assert a[...].tolist() == [1, 2, 0]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype, fill", [("uint8", 256), ("uint8", -1), ("int32", 2**40), ("int64", 2**63),
                                         ("uint64", -1), ("int8", float("nan")), ("int16", float("inf"))])
def test_fill_value_out_of_range_refused_at_create(dtype, fill, layout):
    with pytest.raises((OverflowError, ValueError)):
        np.asarray(fill, dtype=dtype)  # numpy refuses it too
    store: dict = {}
    with pytest.raises(MetadataError, match="fill_value"):
        zarrpy.create_array(store, shape=(4,), dtype=dtype, fill_value=fill, **LAYOUTS[layout])
    assert store == {}


def test_strings_into_numbers_still_refused():
    a, store, _ = make("int32", "plain")
    before = dict(store)
    for bad in ("5", ["1", "2"], [1, "a"], np.array(["5"]), [b"1"], np.array([1, "2"], dtype=object)):
        with pytest.raises(TypeError):
            a[0:1] = bad
    assert store == before
