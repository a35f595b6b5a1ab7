"""Growable buffers (``zarrpy.GrowableArray``, ``zarrpy.GrowableRagged``).

Random operation sequences are checked against a plain list of rows /
elements; the growth policy against its exact reallocation counts; and the
two aliasing rules: every holder of a buffer sees a resize, and a view taken
before a reallocation is stale.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy import GrowableArray, GrowableRagged, RaggedArray
from zarrpy.errors import BoundsCheckError, SelectionError


class SmallSteps(GrowableArray):
    """A threshold of 64 bytes, so the linear-growth phase shows up in small tests."""

    growth_threshold_nbytes = 64


def test_public_module_reexports_the_classes():
    import zarrpy.buffers

    assert zarrpy.buffers.GrowableArray is zarrpy.GrowableArray is GrowableArray
    assert zarrpy.buffers.GrowableRagged is GrowableRagged
    assert zarrpy.buffers.__all__ == ["GrowableArray", "GrowableRagged"]


# -- GrowableArray against a list of rows ---------------------------------------

TAILS = [(), (2,), (2, 3)]
DTYPES = ["int32", "float64", "uint8"]


def _rows(draw, k, tail, dtype):
    return np.array(draw(st.lists(st.integers(0, 100), min_size=k * math.prod(tail), max_size=k * math.prod(tail))),
                    dtype=dtype).reshape((k, *tail))


@st.composite
def array_ops(draw):
    tail = draw(st.sampled_from(TAILS))
    dtype = draw(st.sampled_from(DTYPES))
    ops = []
    for _ in range(draw(st.integers(1, 25))):
        op = draw(st.sampled_from(["append", "extend", "resize", "clear", "shrink_to_fit", "reserve"]))
        if op == "append":
            ops.append((op, _rows(draw, 1, tail, dtype)[0]))
        elif op == "extend":
            ops.append((op, _rows(draw, draw(st.integers(0, 40)), tail, dtype)))
        elif op in ("resize", "reserve"):
            ops.append((op, draw(st.integers(0, 70))))
        else:
            ops.append((op, None))
    return tail, dtype, draw(st.sampled_from([GrowableArray, SmallSteps])), draw(st.integers(0, 8)), ops


@settings(max_examples=150, deadline=None)
@given(case=array_ops())
def test_growable_array_matches_a_list_of_rows(case):
    tail, dtype, cls, capacity, ops = case
    buf = cls(dtype, capacity, shape_tail=tail)
    assert buf.capacity == capacity and buf.reallocations == 0
    ref: list[np.ndarray] = []
    for op, arg in ops:
        cap, reallocs = buf.capacity, buf.reallocations
        if op == "append":
            buf.append(arg)
            ref.append(arg)
        elif op == "extend":
            buf.extend(arg)
            ref.extend(arg)
        elif op == "resize":
            old, predicted = buf.size, buf.grown_capacity(arg)
            buf.resize(arg)
            assert buf.capacity == predicted  # the capacity never changes when arg <= cap
            if arg > old:  # new rows are uninitialised: the caller fills them
                fill = np.arange((arg - old) * math.prod(tail)).reshape((arg - old, *tail)).astype(dtype)
                buf.nda[old:] = fill
                ref.extend(fill)
            else:
                del ref[arg:]
        elif op == "reserve":
            buf.reserve(arg)
            assert buf.capacity == max(cap, arg)  # exactly n when it grows
        elif op == "clear":
            buf.clear()
            ref.clear()
            assert buf.capacity == cap
        else:
            buf.shrink_to_fit()
            assert buf.capacity == buf.size
        # one reallocation exactly when the capacity changed
        assert buf.reallocations == reallocs + (buf.capacity != cap)
        assert buf.capacity >= buf.size == len(buf) == len(ref)
        assert buf.shape == buf.nda.shape == (len(ref), *tail)
        assert buf.nda.dtype == np.dtype(dtype)
        expected = np.array(ref, dtype=dtype).reshape((len(ref), *tail))
        np.testing.assert_array_equal(buf.nda, expected)
        np.testing.assert_array_equal(np.asarray(buf), expected)


@pytest.mark.parametrize("cap,n,expected", [(0, 1, 1), (1, 2, 2), (4, 5, 8), (4, 100, 100), (0, 0, 0), (8, 3, 8)])
def test_doubling_phase(cap, n, expected):
    buf = GrowableArray("int64", cap)
    assert buf.grown_capacity(n) == expected
    buf.resize(n)
    assert buf.capacity == expected and buf.reallocations == (expected != cap)


def test_threshold_phase_grows_by_whole_steps():
    # int64 rows of 8 bytes: the 64-byte threshold is a step of 8 rows
    buf = SmallSteps("int64")
    assert buf.grown_capacity(5) == 5
    buf.reserve(6)
    assert buf.grown_capacity(7) == 8  # doubling stops at the step
    buf.reserve(8)
    assert buf.grown_capacity(9) == 16 and buf.grown_capacity(17) == 24 and buf.grown_capacity(25) == 32
    big = GrowableArray("uint8", shape_tail=(1 << 20,))  # 1 MiB rows: 64 rows per step
    assert big.grown_capacity(1) == 1
    assert GrowableArray.growth_threshold_nbytes == 64 << 20


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 4097])
def test_appending_one_row_at_a_time_reallocates_log2_times(n):
    buf = GrowableArray("float32", shape_tail=(3,))
    for i in range(n):
        buf.append(np.full(3, i, dtype="float32"))
    # capacities 1, 2, 4, ..., 2**ceil(log2 n): that many plus one reallocations
    assert buf.reallocations == math.ceil(math.log2(n)) + 1
    assert buf.capacity == 2 ** math.ceil(math.log2(n))
    np.testing.assert_array_equal(buf.nda[:, 0], np.arange(n, dtype="float32"))


def test_appending_past_the_threshold_grows_linearly():
    buf = SmallSteps("int8")  # a step of 64 rows
    n = 1000
    for i in range(n):
        buf.append(i % 100)
    step = 64
    assert buf.reallocations == (math.ceil(math.log2(step)) + 1) + math.ceil((n - step) / step)
    assert buf.capacity == 1024


def test_same_size_resizes_reallocate_once():
    buf = GrowableArray("uint16", shape_tail=(4, 4))
    for _ in range(1000):
        buf.resize(37)
    assert buf.reallocations == 1 and buf.capacity == 37


def test_shrinking_never_reallocates():
    buf = GrowableArray("int32")
    buf.extend(np.arange(100))
    before = buf.reallocations
    for n in range(100, -1, -1):
        buf.resize(n)
    buf.clear()
    assert buf.reallocations == before and buf.capacity == 100
    buf.resize(100)  # growing back within the capacity is free too
    assert buf.reallocations == before


def test_a_resize_is_seen_through_every_reference():
    a = GrowableArray("int32")
    b = a
    holders = {"buf": a}
    a.resize(5)
    assert len(b) == 5 and holders["buf"].size == 5 and b.nda.shape == (5,)


def test_a_view_from_before_a_reallocation_is_stale():
    buf = GrowableArray("int64", capacity=2)
    buf.extend([1, 2])
    view = buf.nda
    assert np.shares_memory(view, buf.nda)
    buf.append(3)  # capacity 2 -> 4: new storage
    assert buf.reallocations == 1
    assert not np.shares_memory(view, buf.nda)
    view[0] = 100  # lost: the buffer no longer sees the old storage
    assert buf.nda.tolist() == [1, 2, 3]
    fresh = buf.nda  # the safe pattern: read .nda again after a call that may grow
    fresh[0] = 100
    assert buf.nda.tolist() == [100, 2, 3]


def test_a_view_survives_calls_that_do_not_reallocate():
    buf = GrowableArray("int64", capacity=10)
    buf.resize(3)
    view = buf.nda
    buf.resize(8)
    buf.resize(2)
    assert np.shares_memory(view, buf.nda) and buf.reallocations == 0


def test_numpy_protocol_and_repr():
    buf = GrowableArray("float64", shape_tail=(2,))
    buf.extend([[1, 2], [3, 4]])
    assert buf[1].tolist() == [3.0, 4.0] and buf[:, 0].tolist() == [1.0, 3.0]
    buf[0] = [9, 9]
    assert np.asarray(buf).tolist() == [[9, 9], [3, 4]]
    assert np.asarray(buf, dtype="int8").dtype == np.int8
    with pytest.raises(ValueError, match="without a copy"):
        np.asarray(buf, dtype="int8", copy=False)
    assert not np.shares_memory(np.array(buf, copy=True), buf.nda)
    assert [row.tolist() for row in buf] == [[9, 9], [3, 4]]
    assert repr(buf) == "GrowableArray(size=2, capacity=2, dtype=float64, shape_tail=(2,))"
    assert buf.row_nbytes == 16 and buf.dtype == np.float64 and buf.shape_tail == (2,)
    other = GrowableArray("float64", shape_tail=(2,))
    other.extend(buf)  # a GrowableArray is an array-like of rows
    assert other.nda.tolist() == buf.nda.tolist()


def test_extend_with_a_view_of_itself():
    buf = GrowableArray("int32", capacity=3)
    buf.extend([1, 2, 3])
    buf.extend(buf.nda)  # reallocates; the old storage is still read correctly
    assert buf.nda.tolist() == [1, 2, 3, 1, 2, 3]


@pytest.mark.parametrize("dtype", [object, np.dtypes.StringDType(), "S0"])
def test_variable_or_sizeless_dtypes_are_refused(dtype):
    with pytest.raises(TypeError, match="GrowableArray"):
        GrowableArray(dtype)


def test_bad_sizes_and_shapes():
    with pytest.raises(ValueError, match="capacity must be non-negative"):
        GrowableArray("int8", -1)
    with pytest.raises(ValueError, match="shape_tail"):
        GrowableArray("int8", shape_tail=(-2,))
    buf = GrowableArray("int8", shape_tail=(3,))
    with pytest.raises(ValueError, match="size must be non-negative"):
        buf.resize(-1)
    with pytest.raises(TypeError):
        buf.resize(2.5)
    with pytest.raises(SelectionError, match=r"\(2, 2\).*\(3,\)"):
        buf.extend(np.zeros((2, 2)))
    with pytest.raises(SelectionError, match=r"\(4,\).*\(3,\)"):
        buf.append([1, 2, 3, 4])
    with pytest.raises(ValueError):
        buf.append(["a", "b", "c"])  # numpy's own error; nothing is added
    assert buf.size == 0
    buf.extend([])  # an empty list adds nothing, whatever the row shape
    assert buf.size == 0


# -- GrowableRagged against a list of elements -------------------------------------

ELEMENTS = {
    "str": st.text(max_size=6),
    "bytes": st.binary(max_size=6),
    "int16": st.lists(st.integers(-(2**15), 2**15 - 1), max_size=6),
}


def _as_python(kind, items):
    return [list(map(int, x)) if kind == "int16" else x for x in items]


def _extend_form(kind, items, form):
    """The same elements as list, numpy array, or RaggedArray."""
    if form == "list":
        return items
    if kind == "str":
        return np.array(items, dtype=np.dtypes.StringDType())
    if kind == "bytes":
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out
    return RaggedArray.from_list(items, "int16")


@st.composite
def ragged_ops(draw):
    kind = draw(st.sampled_from(list(ELEMENTS)))
    element = ELEMENTS[kind]
    ops = []
    for _ in range(draw(st.integers(1, 20))):
        op = draw(st.sampled_from(["append", "extend", "resize", "clear", "shrink_to_fit", "reserve"]))
        if op == "append":
            ops.append((op, draw(element)))
        elif op == "extend":
            ops.append((op, (draw(st.lists(element, max_size=12)), draw(st.sampled_from(["list", "numpy"])))))
        elif op == "resize":
            ops.append((op, draw(st.integers(0, 30))))
        elif op == "reserve":
            ops.append((op, (draw(st.integers(0, 30)), draw(st.one_of(st.none(), st.integers(0, 100))))))
        else:
            ops.append((op, None))
    return kind, draw(st.integers(0, 4)), draw(st.integers(0, 16)), ops


@settings(max_examples=150, deadline=None)
@given(case=ragged_ops())
def test_growable_ragged_matches_a_list_of_elements(case):
    kind, capacity, values_capacity, ops = case
    buf = GrowableRagged(kind, capacity, values_capacity)
    assert (buf.capacity, buf.values_capacity, buf.reallocations) == (capacity, values_capacity, 0)
    empty = {"str": "", "bytes": b"", "int16": []}[kind]
    ref: list = []
    for op, arg in ops:
        reallocs = buf.reallocations
        if op == "append":
            buf.append(arg)
            ref.append(arg)
        elif op == "extend":
            items, form = arg
            buf.extend(_extend_form(kind, items, form))
            ref.extend(items)
        elif op == "resize":
            cap, vcap = buf.capacity, buf.values_capacity
            buf.resize(arg)
            ref = ref[:arg] + [empty] * (arg - len(ref))
            if arg <= cap:
                assert (buf.capacity, buf.values_capacity) == (cap, vcap) and buf.reallocations == reallocs
        elif op == "reserve":
            n, m = arg
            cap, vcap = buf.capacity, buf.values_capacity
            buf.reserve(n, values=m)
            assert buf.capacity == max(cap, n)
            assert buf.values_capacity == (vcap if m is None else max(vcap, m))
        elif op == "clear":
            cap, vcap = buf.capacity, buf.values_capacity
            buf.clear()
            ref = []
            assert (buf.capacity, buf.values_capacity, buf.reallocations) == (cap, vcap, reallocs)
        else:
            buf.shrink_to_fit()
            assert buf.capacity == buf.size and buf.values_capacity == buf.values.size
        assert buf.reallocations >= reallocs
        assert len(buf) == buf.size == len(ref) <= buf.capacity
        offsets = buf.offsets
        assert offsets.dtype == np.int64 and offsets.shape == (len(ref) + 1,) and offsets[0] == 0
        assert np.all(np.diff(offsets) >= 0) and offsets[-1] == buf.values.size <= buf.values_capacity
        assert _as_python(kind, buf.to_list()) == ref
        if ref:
            assert _as_python(kind, [buf[-1]]) == [ref[-1]]


@pytest.mark.parametrize("kind", ["str", "bytes", "int16"])
def test_ragged_extend_from_a_ragged_array_or_another_buffer(kind):
    items = {"str": ["a", "", "héllo"], "bytes": [b"a", b"", b"\x00z"], "int16": [[1, 2], [], [3]]}[kind]
    buf = GrowableRagged(kind)
    buf.extend(_extend_form(kind, items, "numpy"))
    other = GrowableRagged(kind)
    other.append(items[0])
    other.extend(buf)
    assert _as_python(kind, other.to_list()) == _as_python(kind, [items[0], *items])


def test_ragged_extend_from_a_ragged_array_slice_is_one_step():
    r = RaggedArray.from_list([[9], [1, 2], [], [3, 4, 5]], "int32")
    buf = GrowableRagged("int32")
    buf.append([7])
    buf.extend(r[1:])  # offsets not starting at 0 in values' terms: shifted in one go
    assert [x.tolist() for x in buf.to_list()] == [[7], [1, 2], [], [3, 4, 5]]
    assert buf.offsets.tolist() == [0, 1, 3, 3, 6]
    assert buf.as_ragged().equals(RaggedArray.from_list([[7], [1, 2], [], [3, 4, 5]], "int32"))


def test_ragged_to_numpy_matches_array_reads():
    s = GrowableRagged("str")
    s.extend(["a", "é", ""])
    out = s.to_numpy()
    assert out.dtype == np.dtypes.StringDType() and out.tolist() == ["a", "é", ""]
    b = GrowableRagged(bytes)
    b.extend([b"x", b""])
    out = b.to_numpy()
    assert out.dtype == object and out.tolist() == [b"x", b""]
    r = GrowableRagged("float32")
    r.extend([[1.5], []])
    ragged = r.to_numpy()
    assert isinstance(ragged, RaggedArray) and ragged.dtype == np.float32
    assert np.shares_memory(ragged.values, r.values)  # a view
    assert s.kind == "str" and b.kind == "bytes" and r.kind == "ragged" and r.dtype == np.float32


@pytest.mark.parametrize("kind", ["str", "bytes", "uint8"])
def test_ragged_appends_reallocate_log2_times(kind):
    buf = GrowableRagged(kind)
    element = {"str": "ab", "bytes": b"ab", "uint8": [1, 2]}[kind]
    n = 1000
    for _ in range(n):
        buf.append(element)
    # n + 1 offsets: capacities 2, 4, ..., 1024 (the constructor's 1 is not counted)
    offsets_reallocs = math.ceil(math.log2(n + 1))
    values_reallocs = math.ceil(math.log2(2 * n))  # capacities 2, 4, ..., 2048
    assert buf.reallocations == offsets_reallocs + values_reallocs
    assert buf.size == n and buf.values.size == 2 * n


def test_ragged_resize_is_seen_through_every_reference_and_views_go_stale():
    a = GrowableRagged("int64")
    b = a
    a.resize(5)
    assert len(b) == 5 and all(x.size == 0 for x in b.to_list())
    a.clear()
    a.extend([[1, 2]])
    view = a.values
    a.append(np.arange(100))  # values reallocate
    assert not np.shares_memory(view, a.values)
    assert a[0].tolist() == [1, 2] and a[1].tolist() == list(range(100))


def test_ragged_errors():
    with pytest.raises(TypeError, match="kind"):
        GrowableRagged("U3")
    with pytest.raises(TypeError, match="kind"):
        GrowableRagged(object)
    s = GrowableRagged("str")
    with pytest.raises(TypeError, match="str elements, not bytes"):
        s.append(b"x")
    with pytest.raises(TypeError, match=r"position \(1,\)"):
        s.extend(["a", 1, "c"])
    assert s.size == 0  # nothing added when an element is refused
    with pytest.raises(TypeError, match="bytes elements"):
        GrowableRagged("bytes").append("x")
    with pytest.raises(TypeError, match="use append for one element"):
        s.extend("abc")  # not three one-letter strings
    r = GrowableRagged("int8")
    with pytest.raises(TypeError, match="1-D numeric"):
        r.append(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="RaggedArray"):
        s.extend(RaggedArray.from_list([[1]]))
    with pytest.raises(TypeError, match="as_ragged"):
        s.as_ragged()
    with pytest.raises(BoundsCheckError, match="index 0"):
        s[0]
    with pytest.raises(SelectionError, match="integer index"):
        s[0:1]
    with pytest.raises(ValueError, match="size"):
        s.resize(-1)
    assert repr(r) == "GrowableRagged(ragged int8, size=0, capacity=0, values=0, values_capacity=0)"


def test_top_level_names():
    assert zarrpy.GrowableArray is GrowableArray and zarrpy.GrowableRagged is GrowableRagged
