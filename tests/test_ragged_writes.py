"""Every way of writing into a ragged (numcodecs vlen-array) array stores what
numpy gives for the same assignment into an object array of 1-D vectors, or
is refused with a zarrpy error before anything is stored.

The reference reads a value the way the docs promise: a numeric array holds
one vector per row along its last axis, a list of numbers is one vector, and
other lists, object arrays and RaggedArrays hold one vector per item.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import zarrpy
from zarrpy import RaggedArray
from zarrpy.errors import BroadcastError, DataTypeError, ZarrpyError

FORMATS = {
    "v3": {"zarr_format": 3},
    "v3-sharded": {"zarr_format": 3, "shards": "twice"},
    "v2": {"zarr_format": 2},
}


def create(store: dict, shape: tuple[int, ...], chunks: tuple[int, ...], fmt: str, dtype: str = "int32"):
    kwargs = dict(FORMATS[fmt])
    if kwargs.pop("shards", None):
        kwargs["shards"] = tuple(2 * c for c in chunks)
    return zarrpy.create_array(store, shape=shape, dtype=dtype, chunks=chunks,
                               serializer="numcodecs.vlen-array", **kwargs)


def vectors(shape: tuple[int, ...], leaves: list[list[int]]) -> np.ndarray:
    """The reference: an object array of ``shape`` holding 1-D int64 arrays."""
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    for i, leaf in enumerate(leaves):
        flat[i] = np.array(leaf, dtype=np.int64)
    return out


def stored(a) -> list:
    """What the array holds, read fresh from its store, as nested lists."""
    back = zarrpy.open_array(a.store, path=a.path)[...]
    assert isinstance(back, RaggedArray) and back.shape == a.shape
    return back.tolist()


def as_lists(ref: np.ndarray) -> list:
    return RaggedArray.from_list(ref, "int64").tolist()


# -- the forms a value can take -------------------------------------------------------


def _nested(shape: tuple[int, ...], leaves: list, wrap: Callable[[list], Any]) -> Any:
    if not shape:
        return wrap(leaves[0])
    step = int(np.prod(shape[1:], dtype=np.int64))
    return [_nested(shape[1:], leaves[k * step:(k + 1) * step], wrap) for k in range(shape[0])]


ENCODINGS: dict[str, Callable[[tuple[int, ...], list[list[int]]], Any]] = {
    "lists": lambda shape, leaves: _nested(shape, leaves, list),
    "tuples": lambda shape, leaves: _nested(shape, leaves, tuple),
    "list-of-arrays": lambda shape, leaves: _nested(shape, leaves, lambda x: np.array(x, dtype=np.int16)),
    "object-array": vectors,
    "ragged": lambda shape, leaves: RaggedArray.from_list(leaves, "int64", shape=shape),
    # Equal lengths only: one vector per row along the last axis.
    "numeric": lambda shape, leaves: np.array(leaves, dtype=np.int64).reshape(*shape, len(leaves[0])),
    "numeric-float": lambda shape, leaves: np.array(leaves, dtype=np.float64).reshape(*shape, len(leaves[0])),
}
EQUAL_LENGTHS = {"numeric", "numeric-float"}


# -- the forms a selection can take ----------------------------------------------------


def _ints(draw, n: int) -> list[int]:
    """Distinct positions (negative ones too), in any order."""
    return draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=n, unique_by=lambda i: i % n))


@st.composite
def selections(draw, shape: tuple[int, ...]):
    """(name, how zarrpy writes it, the numpy key it stands for)."""
    n = shape[0]
    kind = draw(st.sampled_from(["int", "slice", "step", "fancy", "mask", "ellipsis", "oindex", "vindex",
                                 "basic", "orthogonal", "coordinate", "mask-method", "vectorized", "blocks"]))
    if kind in ("int", "basic"):
        i = draw(st.integers(-n, n - 1))
        key: Any = (i,) if kind == "basic" else i
    elif kind == "slice":
        start, stop = sorted(draw(st.lists(st.integers(-n - 1, n + 1), min_size=2, max_size=2)))
        key = slice(start, stop)
    elif kind == "step":
        key = slice(draw(st.integers(-n, n)), None, draw(st.sampled_from([2, 3, -1, -2])))
    elif kind in ("fancy",):
        key = _ints(draw, n)
    elif kind in ("mask", "mask-method"):
        key = np.array(draw(st.lists(st.booleans(), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
                       ).reshape(shape)
    elif kind == "ellipsis":
        key = Ellipsis
    elif kind in ("oindex", "orthogonal"):
        key = tuple(_ints(draw, s) for s in shape)
    elif kind == "blocks":
        key = draw(st.integers(0, -(-n // 2) - 1))  # chunk rows are 2 long
    else:  # vindex, coordinate, vectorized: points
        count = draw(st.integers(1, 4))
        points = draw(st.lists(st.tuples(*(st.integers(0, s - 1) for s in shape)), min_size=1, max_size=count,
                               unique=True))
        key = tuple(np.array(p) for p in zip(*points))
    return kind, key


def write(a, kind: str, key: Any, value: Any) -> None:
    if kind in ("int", "slice", "step", "fancy", "mask", "ellipsis"):
        a[key] = value
    elif kind == "oindex":
        a.oindex[key] = value
    elif kind == "vindex":
        a.vindex[key] = value
    elif kind == "basic":
        a.set_basic_selection(key, value)
    elif kind == "orthogonal":
        a.set_orthogonal_selection(key, value)
    elif kind == "coordinate":
        a.set_coordinate_selection(key, value)
    elif kind == "mask-method":
        a.set_mask_selection(key, value)
    elif kind == "vectorized":
        a.set_vectorized_selection(key, value)
    else:
        a.blocks[key] = value


def numpy_key(kind: str, key: Any, shape: tuple[int, ...]) -> Any:
    if kind in ("oindex", "orthogonal"):
        return np.ix_(*key)
    if kind == "blocks":
        return slice(2 * key, 2 * key + 2)
    return key


def assign(ref: np.ndarray, key: Any, value: np.ndarray) -> None:
    """numpy's assignment into the object array: ``value`` broadcast to the
    positions ``key`` picks, one vector to each."""
    positions = np.arange(ref.size).reshape(ref.shape)[key]
    flat = ref.reshape(-1)
    for p, v in zip(np.ravel(positions), np.broadcast_to(value, np.shape(positions)).reshape(-1)):
        flat[p] = v


@st.composite
def leaves_for(draw, count: int, equal: bool) -> list[list[int]]:
    item = st.integers(-1000, 1000)
    if equal:
        width = draw(st.integers(0, 3))
        return draw(st.lists(st.lists(item, min_size=width, max_size=width), min_size=count, max_size=count))
    return draw(st.lists(st.lists(item, max_size=4), min_size=count, max_size=count))


@st.composite
def write_cases(draw):
    shape = draw(st.sampled_from([(5,), (4, 3), (1,), (3, 1)]))
    kind, key = draw(selections(shape))
    encoding = draw(st.sampled_from(sorted(ENCODINGS)))
    target = np.empty(shape)[numpy_key(kind, key, shape)].shape
    # The value's own outer shape: the selection's, or one that broadcasts to it.
    value_shape = draw(st.sampled_from([target, (), *((target[-1:],) if target else ())]))
    count = int(np.prod(value_shape, dtype=np.int64))
    leaves = draw(leaves_for(count, encoding in EQUAL_LENGTHS))
    if encoding in EQUAL_LENGTHS and count == 0:
        encoding = "object-array"  # no row to take a width from
    initial = draw(leaves_for(int(np.prod(shape)), False))
    return shape, kind, key, encoding, value_shape, leaves, initial


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=150, deadline=None)
@given(case=write_cases())
def test_every_write_form_stores_what_numpy_gives(fmt, case):
    shape, kind, key, encoding, value_shape, leaves, initial = case
    if kind == "blocks" and fmt == "v3-sharded":  # which grid blocks index there is not this test's business
        kind, key = "slice", numpy_key(kind, key, shape)
    a = create({}, shape, (2,) * len(shape), fmt)
    a[...] = vectors(shape, initial)
    ref = vectors(shape, initial)
    value = ENCODINGS[encoding](value_shape, leaves)
    write(a, kind, key, value)
    assign(ref, numpy_key(kind, key, shape), vectors(value_shape, leaves))
    assert stored(a) == as_lists(ref)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_2d_numeric_array_gives_one_row_to_each_position(fmt):
    """The issue's case: it stored [1, 2, 3, 4] in both positions."""
    a = create({}, (4,), (2,), fmt)
    a[0:2] = np.array([[1, 2], [3, 4]])
    a[2:] = [[5, 6], [7]]
    assert stored(a) == [[1, 2], [3, 4], [5, 6], [7]]
    a[::-1] = np.array([[9], [8], [7], [6]], dtype=np.int8)
    assert stored(a) == [[6], [7], [8], [9]]
    a[...] = np.array([1, 2])  # one vector, broadcast to every position
    assert stored(a) == [[1, 2]] * 4
    a[1] = [3, 4, 5]  # a list of numbers is one vector
    a[2] = ()
    a[3] = None  # an empty vector, as numcodecs reads None
    assert stored(a) == [[1, 2], [3, 4, 5], [], []]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_append_adds_one_element_per_item_or_row(fmt, encoding):
    a = create({}, (1,), (2,), fmt)
    a[0] = [1]
    a.append(ENCODINGS[encoding]((2,), [[2, 3], [4, 5]]))
    assert stored(a) == [[1], [2, 3], [4, 5]]
    b = create({}, (1, 2), (2, 2), fmt)
    b.append(ENCODINGS[encoding]((1, 2), [[7, 8], [9, 0]]))
    assert stored(b) == [[[], []], [[7, 8], [9, 0]]]


def test_create_with_data_reads_vectors_as_writes_do():
    a = zarrpy.create_array({}, dtype="int32", serializer="numcodecs.vlen-array", data=[[1, 2], [3, 4]])
    assert a.shape == (2,) and stored(a) == [[1, 2], [3, 4]]
    b = zarrpy.create_array({}, dtype="int32", serializer="numcodecs.vlen-array", data=np.ones((3, 2, 1)))
    assert b.shape == (3, 2) and stored(b) == [[[1], [1]]] * 3


# -- refusals store nothing ------------------------------------------------------------

TYPE_REFUSALS = {
    "int": 5,
    "numpy-int": np.int32(5),
    "float": 5.0,
    "0-d array": np.array(5),
    "str": "abc",
    "bytes": b"ab",
    "strings": ["a", "b"],
    "string array": np.array(["a", "b"]),
    "numbers and vectors": [1, [2]],
    "irregular nesting": [[[1], [2]], [[3]]],
    "object array of numbers": np.array([1, 2], dtype=object),
    "2-D element in an object array": np.array([np.ones((2, 2)), None], dtype=object)[:1],
    "dict": {"a": 1},
    "structured": np.zeros(2, dtype=[("x", "<i4")]),
    "datetimes": np.array(["2020-01-01"], dtype="datetime64[D]"),
    "a string late in a long write": [[1], [2], [3], [4], "x"],
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("form", ["int", "slice", "ellipsis", "fancy", "mask", "oindex", "vindex", "append"])
@pytest.mark.parametrize("name", sorted(TYPE_REFUSALS))
def test_values_that_are_not_vectors_are_refused_and_nothing_is_stored(fmt, form, name):
    store: dict = {}
    a = create(store, (5,), (2,), fmt)
    a[...] = [[1], [2, 3], [], [4], [5, 6]]
    before = dict(store)
    with pytest.raises(ZarrpyError) as info:
        _write_form(a, form, TYPE_REFUSALS[name])
    assert isinstance(info.value, (TypeError, ValueError)), type(info.value)
    assert store == before
    assert stored(a) == [[1], [2, 3], [], [4], [5, 6]]


def _write_form(a, form: str, value: Any) -> None:
    if form == "append":
        a.append(value)
    elif form == "oindex":
        a.oindex[[0, 4]] = value
    elif form == "vindex":
        a.vindex[[1, 3]] = value
    else:
        key = {"int": 0, "slice": slice(0, 5), "ellipsis": Ellipsis, "fancy": [4, 0],
               "mask": np.array([True, False, True, True, False])}[form]
        a[key] = value


def test_the_refusal_says_what_an_element_is():
    a = create({}, (2,), (2,), "v3")
    with pytest.raises(DataTypeError, match=r"int 5 as an element of a ragged int32 array.*1-D sequence.*\[5\]"):
        a[0] = 5
    with pytest.raises(DataTypeError, match=r"str 'x' \(at position \(1,\) of the value\)"):
        a[...] = [[1], "x"]
    with pytest.raises(DataTypeError, match="one outer shape"):
        a[...] = [[[1], [2]], [[3]]]
    with pytest.raises(DataTypeError, match="wrap it in a list"):
        a.append([1, 2, 3])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("key, value", [
    (0, np.ones((2, 2))),  # two vectors into one position
    (0, [[1, 2], [3, 4]]),
    (slice(0, 2), np.ones((3, 2))),
    (slice(0, 2), [[1], [2], [3]]),
    (slice(0, 2), RaggedArray.from_list([[1], [2], [3]])),
    (Ellipsis, np.ones((5, 2, 2))),
])
def test_values_of_the_wrong_outer_shape_are_refused_and_nothing_is_stored(fmt, key, value):
    store: dict = {}
    a = create(store, (5,), (2,), fmt)
    a[...] = [[1], [2, 3], [], [4], [5, 6]]
    before = dict(store)
    with pytest.raises(BroadcastError, match="cannot be broadcast"):
        a[key] = value
    assert store == before


def test_out_of_range_numbers_are_refused_and_nothing_is_stored():
    store: dict = {}
    a = create(store, (3,), (2,), "v3", dtype="uint8")
    before = dict(store)
    with pytest.raises(OverflowError):
        a[...] = [[1], [2], [256]]
    assert store == before


def test_tolist_gives_python_lists_of_python_numbers():
    r = RaggedArray.from_list([[1, 2], [], [3]], "float32")
    assert r.tolist() == [[1.0, 2.0], [], [3.0]]
    assert type(r.tolist()[0][0]) is float
    assert r.reshape(3, 1).tolist() == [[[1.0, 2.0]], [[]], [[3.0]]]
    assert r[2:2].tolist() == []
    assert r[0:1].reshape(()).tolist() == [1.0, 2.0]
    # as numpy's tolist of the object array, with each vector a list as well
    obj = r.reshape(1, 3).to_object_array()
    assert r.reshape(1, 3).tolist() == [[v.tolist() for v in row] for row in obj]


def test_a_value_that_does_not_broadcast_is_a_value_error_for_every_type():
    a = zarrpy.create_array({}, shape=(3, 4), dtype="int32", chunks=(2, 2))
    with pytest.raises(BroadcastError, match=r"\(3, 3\).*\(2, 2\)") as info:
        a[0:2, 0:2] = np.ones((3, 3))
    assert isinstance(info.value, ValueError) and isinstance(info.value, zarrpy.SelectionError)
