"""Nested zarrs optional types at the array edge: values masked where missing at any level,
each level's validity in ``a.validity``, and the levels written back with ``optional_elements``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.core.dtypes.optional import optional_elements, optional_of
from zarrpy.errors import DataTypeError

VALIDITY = [[True, True], [True, False], [False, False], [True, True], [True, True], [False, False]]
MASK = [False, True, True, False, False, True]


def nested(inner, depth=2):
    dt = inner
    for _ in range(depth):
        dt = optional_of(dt)
    return dt


@pytest.mark.parametrize("sharded", [False, True])
def test_fixed_nested_reads_values_and_levels(sharded):
    shards = {"shards": (6,)} if sharded else {}
    a = zarrpy.create_array({}, shape=(6,), dtype=nested("float64"), chunks=(2,), **shards)
    values = [1.5, 0.0, 0.0, np.nan, -2.0, 0.0]
    a[...] = optional_elements(a.metadata.data_type, values, VALIDITY)
    got = a[...]
    assert isinstance(got, np.ma.MaskedArray) and got.dtype == np.float64
    assert got.mask.tolist() == MASK
    assert np.array_equal(got.data, np.array([1.5, 0, 0, np.nan, -2.0, 0]), equal_nan=True)
    assert a.validity[...].tolist() == VALIDITY
    # every selection form, and one element
    assert a.validity[1:4].tolist() == VALIDITY[1:4]
    assert a.validity.__getitem__([0, 5]).tolist() == [VALIDITY[0], VALIDITY[5]]
    assert a.validity[1].tolist() == [True, False]
    assert a[1] is np.ma.masked and a[4] == -2.0
    assert a.oindex[[4, 1]].mask.tolist() == [False, True]
    assert a.vindex[np.array([True, False, False, False, True, False])].tolist() == [1.5, -2.0]


@pytest.mark.parametrize("inner, values", [
    ("string", ["a", "", "", "héllo", "", ""]),
    ("bytes", [b"\x01", b"", b"", b"x\x00", b"\x00\x01", b""]),
])
def test_variable_nested_reads_values_and_levels(inner, values):
    a = zarrpy.create_array({}, shape=(6,), dtype=nested(inner), chunks=(4,))
    a[...] = optional_elements(a.metadata.data_type, values, VALIDITY)
    got = a[...]
    assert got.mask.tolist() == MASK
    assert [v for v, m in zip(got.data.tolist(), MASK) if not m] == [values[i] for i in (0, 3, 4)]
    assert a.validity[...].tolist() == VALIDITY
    assert a[3] == values[3] and a[2] is np.ma.masked


def test_three_levels():
    a = zarrpy.create_array({}, shape=(4,), dtype=nested("int16", 3), chunks=(3,))
    levels = [[True, True, True], [True, True, False], [True, False, False], [False, False, False]]
    a[...] = optional_elements(a.metadata.data_type, [-7, 0, 0, 0], levels)
    assert a.validity[...].tolist() == levels
    assert a[...].mask.tolist() == [False, True, True, True] and a[0] == -7


@pytest.mark.parametrize("fill, validity, shown", [
    (None, [False, False], np.ma.masked),  # JSON null: missing outer value
    ("inner missing", [True, False], np.ma.masked),  # JSON [null]
    (7, [True, True], 7),  # JSON [[7]]
])
def test_fill_values_read_at_their_level(fill, validity, shown):
    dt = nested("uint8")
    if fill == "inner missing":
        fill = optional_elements(dt, [0], [[True, False]])[0]
    a = zarrpy.create_array({}, shape=(3,), dtype=dt, chunks=(2,), fill_value=fill)
    assert a.validity[...].tolist() == [validity] * 3
    assert (a[0] is np.ma.masked) if shown is np.ma.masked else a[0] == shown
    assert (a.fill_value is np.ma.masked) if shown is np.ma.masked else a.fill_value == shown


def test_masked_values_and_none_write_a_missing_outer_value():
    a = zarrpy.create_array({}, shape=(4,), dtype=nested("int32"), chunks=(2,))
    a[...] = np.ma.MaskedArray([1, 2, 3, 4], mask=[False, True, False, False])
    a[3] = None
    assert a.validity[...].tolist() == [[True, True], [False, False], [True, True], [False, False]]
    a[...] = a[...]  # what a read returns writes back (missing at the outer level)
    assert a[...].mask.tolist() == [False, True, False, True]


def test_optional_elements_checks_the_shape_of_the_levels():
    with pytest.raises(ValueError, match=r"validity of shape \(2, 1\) for values of shape \(2,\) and a data type "
                                         r"of 2 optional level\(s\): expected \(2, 2\)"):
        optional_elements(nested("uint8"), [1, 2], [[True], [True]])
    # a missing level makes the ones inside it missing, whatever the caller said
    e = optional_elements(nested("uint8"), [3], [[False, True]])
    assert e["valid"].tolist() == [False] and e["value"]["valid"].tolist() == [False]


def test_plain_object_arrays_are_values_not_elements():
    """bytes and strings in an object array are the values, even ones ending in a 0 or 1 byte."""
    a = zarrpy.create_array({}, shape=(3,), dtype=optional_of("bytes"), chunks=(2,))
    a[...] = np.array([b"ab", b"c\x01", b"\x00"], dtype=object)
    assert a[...].tolist() == [b"ab", b"c\x01", b"\x00"]
    s = zarrpy.create_array({}, shape=(2,), dtype=nested("string"), chunks=(2,))
    s[...] = np.ma.MaskedArray(np.array(["x", "y"], dtype=object), mask=[False, True])
    assert s[...].tolist() == ["x", None]


def test_validity_is_for_optional_arrays_and_read_only():
    plain = zarrpy.create_array({}, shape=(2,), dtype="uint8")
    with pytest.raises(DataTypeError, match="data type 'uint8' is not optional: its elements have no validity"):
        plain.validity[...]
    a = zarrpy.create_array({}, shape=(2,), dtype=optional_of("uint8"))
    assert a.validity[...].tolist() == [[False], [False]]  # one level
    with pytest.raises(TypeError, match="a.validity is read-only"):
        a.validity[0] = [True]


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(1, 3), inner=st.sampled_from(["int8", "float32", "string"]),
       levels=st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=1, max_size=9),
       chunk=st.integers(1, 4), sharded=st.booleans())
def test_levels_round_trip(depth, inner, levels, chunk, sharded):
    validity = np.array(levels)[:, :depth]
    n = len(levels)
    values = [f"v{i}" for i in range(n)] if inner == "string" else list(range(n))
    shards = {"shards": (chunk * 2,)} if sharded else {}
    a = zarrpy.create_array({}, shape=(n,), dtype=nested(inner, depth), chunks=(chunk,), **shards)
    a[...] = optional_elements(a.metadata.data_type, values, validity)
    canonical = np.logical_and.accumulate(validity, axis=-1)
    assert a.validity[...].tolist() == canonical.tolist()
    got = a[...]
    present = canonical.all(axis=-1)
    assert got.mask.tolist() == (~present).tolist()
    want = np.array(values, dtype=object)[present].tolist()
    assert [v.item() if hasattr(v, "item") else v for v in got.data[present].tolist()] == want
