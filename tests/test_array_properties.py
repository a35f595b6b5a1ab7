"""Property tests: zarrpy indexing, writes, resize and append against numpy.

Each example builds a small array (0-4 dimensions, zero-length dimensions
included, random chunk shape) in a MemoryStore, mirrors it with a numpy
reference, applies the same selection or assignment to both and compares
shape, dtype and bits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as npst

import zarrpy

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    database=None,  # do not leave a .hypothesis/ directory in the checkout
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

DTYPES = ["int16", "uint8", "float32", "float64", "bool", "complex64"]
FILLS = {"int16": -5, "uint8": 200, "float32": np.nan, "float64": -0.5, "bool": True, "complex64": 1 - 1j}

RAW = {"name": "bytes", "configuration": {"endian": "little"}}


def random_values(dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    dt = np.dtype(dtype)
    n = math.prod(shape)
    if dt.kind == "b":
        out = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        out = rng.integers(info.min, info.max, n, endpoint=True).astype(dt)
    elif dt.kind == "f":
        out = rng.integers(-1000, 1000, n).astype(dt) / 8
        out[rng.random(n) < 0.1] = np.nan
    else:
        out = (rng.integers(-100, 100, n) + 1j * rng.integers(-100, 100, n)).astype(dt)
    return out.reshape(shape)


def assert_same(actual: Any, expected: Any) -> None:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    a = np.ascontiguousarray(actual)
    e = np.ascontiguousarray(expected)
    if a.tobytes() != e.tobytes():
        np.testing.assert_array_equal(a, e)  # a readable message
        raise AssertionError(f"bits differ:\n{a!r}\n{e!r}")


@st.composite
def arrays(draw, max_dims: int = 4, min_dims: int = 0):
    """(zarrpy array, numpy reference, rng) with the reference already written
    (except possibly some chunks left at the fill value)."""
    ndim = draw(st.integers(min_dims, max_dims))
    shape = tuple(draw(st.lists(st.integers(0, 7 if ndim <= 2 else 4), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, max(s, 1) + 1)) for s in shape)
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    fill = FILLS[dtype]
    a = zarrpy.create_array({}, shape=shape, dtype=dtype, chunks=chunks, fill_value=fill,
                            serializer=RAW if np.dtype(dtype).itemsize > 1 else {"name": "bytes"},
                            compressors=None)
    ref = random_values(dtype, shape, rng)
    if draw(st.booleans()):
        a[...] = ref
    else:  # leave everything outside a random block at the fill value
        block = tuple(slice(0, draw(st.integers(0, s))) for s in shape)
        ref_full = np.full(shape, fill, dtype=dtype)
        ref_full[block] = ref[block]
        ref = ref_full
        a[block] = ref[block]
    return a, ref, rng


def _basic_index(shape):
    return npst.basic_indices(shape, min_dims=0, allow_newaxis=False, allow_ellipsis=True)


def _slices(n: int):
    """Slices with any start/stop (past the ends too) and any non-zero step."""
    bound = st.none() | st.integers(-n - 3, n + 3)
    step = st.none() | st.integers(-4, 4).filter(lambda s: s != 0)
    return st.builds(slice, bound, bound, step)


@st.composite
def wide_basic_index(draw, shape):
    """Like basic_indices, but with out-of-range slice bounds and negative
    integers, and Ellipsis anywhere."""
    parts = []
    for n in shape:
        options = [_slices(n)]
        if n > 0:
            options.append(st.integers(-n, n - 1))
        parts.append(draw(st.one_of(*options)))
    # drop trailing dimensions (implicit full slices) or replace a run by Ellipsis
    mode = draw(st.sampled_from(["full", "trailing", "ellipsis"]))
    if mode == "trailing" and parts:
        parts = parts[: draw(st.integers(0, len(parts)))]
    elif mode == "ellipsis":
        i = draw(st.integers(0, len(parts)))
        j = draw(st.integers(i, len(parts)))
        parts = parts[:i] + [Ellipsis] + parts[j:]
    if len(parts) == 1 and draw(st.booleans()):
        return parts[0]
    return tuple(parts)


def _negative_steps(sel) -> int:
    parts = sel if isinstance(sel, tuple) else (sel,)
    return sum(1 for s in parts if isinstance(s, slice) and s.step is not None and s.step < 0)


def basic_index(shape, max_negative_steps: int | None):
    strategy = _basic_index(shape) | wide_basic_index(shape)
    if max_negative_steps is not None:
        strategy = strategy.filter(lambda s: _negative_steps(s) <= max_negative_steps)
    return strategy


# --------------------------------------------------------------------------
# basic selections
#
# Each property runs twice: with any selection, and with at most one slice of
# negative step, so that a failure specific to several negative steps does not
# hide other failures (hypothesis reports one failure per test).

MAX_NEG = pytest.mark.parametrize("max_negative_steps", [None, 1], ids=["any", "max1negstep"])


@MAX_NEG
@SETTINGS
@given(data=st.data())
def test_basic_selection_read(data, max_negative_steps):
    a, ref, _ = data.draw(arrays())
    sel = data.draw(basic_index(ref.shape, max_negative_steps), label="sel")
    assert_same(a[sel], ref[sel])


@MAX_NEG
@SETTINGS
@given(data=st.data())
def test_basic_selection_write(data, max_negative_steps):
    a, ref, rng = data.draw(arrays())
    sel = data.draw(basic_index(ref.shape, max_negative_steps), label="sel")
    target_shape = ref[sel].shape
    if data.draw(st.booleans(), label="scalar value"):
        value = random_values(str(ref.dtype), (), rng)[()]
    else:
        value = random_values(str(ref.dtype), target_shape, rng)
    a[sel] = value
    ref[sel] = value
    assert_same(a[...], ref)
    # and a fresh handle on the same store sees the same
    assert_same(zarrpy.open_array(a.store)[...], ref)


# --------------------------------------------------------------------------
# orthogonal selections


@st.composite
def orthogonal_index(draw, shape, unique: bool):
    """Per dimension: an int list (negative ints, unsorted; duplicates unless
    ``unique``), a bool mask, a slice or an int. Returns the selection and the
    equivalent numpy expression parts (index arrays for np.ix_, and which
    dimensions are dropped)."""
    sel, ix, drop = [], [], []
    for n in shape:
        kinds = ["list", "mask", "slice"] + (["int"] if n > 0 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "list":
            if n == 0:
                idx = []
            elif unique:
                idx = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
                idx = [i - n if draw(st.booleans()) else i for i in idx]
            else:
                idx = draw(st.lists(st.integers(-n, n - 1), max_size=n + 2))
            sel.append(list(idx) if draw(st.booleans()) else np.asarray(idx, dtype=np.int64))
            ix.append(np.asarray(idx, dtype=np.intp))
            drop.append(False)
        elif kind == "mask":
            mask = np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
            sel.append(mask)
            ix.append(np.flatnonzero(mask))
            drop.append(False)
        elif kind == "slice":
            s = draw(_slices(n))
            sel.append(s)
            ix.append(np.arange(n)[s])
            drop.append(False)
        else:
            i = draw(st.integers(-n, n - 1))
            sel.append(i)
            ix.append(np.asarray([i], dtype=np.intp))
            drop.append(True)
    return tuple(sel), ix, drop


def _ix_reference(ref: np.ndarray, ix, drop):
    if ref.ndim == 0:
        return ref[()]
    out = ref[np.ix_(*ix)]
    return out.reshape(tuple(n for n, d in zip(out.shape, drop) if not d))


@SETTINGS
@given(data=st.data())
def test_oindex_read(data):
    a, ref, _ = data.draw(arrays(min_dims=1))
    sel, ix, drop = data.draw(orthogonal_index(ref.shape, unique=False), label="sel")
    assert_same(a.oindex[sel], _ix_reference(ref, ix, drop))


@SETTINGS
@given(data=st.data())
def test_oindex_write(data):
    a, ref, rng = data.draw(arrays(min_dims=1))
    sel, ix, drop = data.draw(orthogonal_index(ref.shape, unique=True), label="sel")
    target_shape = _ix_reference(ref, ix, drop).shape
    value = random_values(str(ref.dtype), target_shape, rng)
    a.oindex[sel] = value
    block = ref[np.ix_(*ix)]
    block[...] = value.reshape(block.shape)
    ref[np.ix_(*ix)] = block
    assert_same(a[...], ref)


@SETTINGS
@given(data=st.data())
def test_single_index_array_in_plain_getitem(data):
    """``a[[...]]`` / ``a[mask]`` with one index array behave like numpy."""
    a, ref, _ = data.draw(arrays(min_dims=1))
    n = ref.shape[0]
    if data.draw(st.booleans()):
        idx = np.asarray(data.draw(st.lists(st.integers(-max(n, 1), max(n, 1) - 1), max_size=5 if n else 0)), dtype=np.intp)
    else:
        idx = np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    assert_same(a[idx], ref[idx])


# --------------------------------------------------------------------------
# resize and append


@st.composite
def shape_ops(draw, ndim: int):
    ops = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["resize", "append", "write"]))
        if kind == "resize":
            ops.append(("resize", tuple(draw(st.integers(0, 9)) for _ in range(ndim))))
        elif kind == "append":
            ops.append(("append", draw(st.integers(0, ndim - 1)), draw(st.integers(0, 4))))
        else:
            ops.append(("write",))
    return ops


def _resize_ref(ref: np.ndarray, shape: tuple[int, ...], fill) -> np.ndarray:
    out = np.full(shape, fill, dtype=ref.dtype)
    common = tuple(slice(0, min(a, b)) for a, b in zip(ref.shape, shape))
    out[common] = ref[common]
    return out


@SETTINGS
@given(data=st.data())
def test_resize_and_append_match_numpy(data):
    """Shrinking then growing shows the fill value in the regrown part, never
    the data that was there before the shrink."""
    a, ref, rng = data.draw(arrays(min_dims=1, max_dims=3))
    fill = FILLS[str(ref.dtype)]
    for op in data.draw(shape_ops(ref.ndim), label="ops"):
        if op[0] == "resize":
            a.resize(op[1])
            ref = _resize_ref(ref, op[1], fill)
        elif op[0] == "append":
            _, axis, n = op
            shape = tuple(n if i == axis else s for i, s in enumerate(ref.shape))
            extra = random_values(str(ref.dtype), shape, rng)
            a.append(extra, axis=axis)
            ref = np.concatenate([ref, extra], axis=axis)
        else:
            ref = random_values(str(ref.dtype), ref.shape, rng)
            a[...] = ref
        assert a.shape == ref.shape
        assert_same(a[...], ref)
    again = zarrpy.open_array(a.store)
    assert again.shape == ref.shape
    assert_same(again[...], ref)


@pytest.mark.parametrize("dtype", ["int16", "float32"])
def test_shrink_then_grow_never_shows_stale_data(dtype):
    """The deterministic core of the property above, on chunks cut by the edge."""
    fill = FILLS[dtype]
    a = zarrpy.create_array({}, shape=(7, 5), dtype=dtype, chunks=(3, 2), fill_value=fill, compressors=None)
    data = random_values(dtype, (7, 5), np.random.default_rng(0))
    a[...] = data
    a.resize((4, 3))
    a.resize((7, 5))
    expected = np.full((7, 5), fill, dtype=dtype)
    expected[:4, :3] = data[:4, :3]
    assert_same(a[...], expected)
