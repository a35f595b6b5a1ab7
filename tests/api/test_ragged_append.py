"""``Array.append`` on ragged arrays (numcodecs ``vlen-array``, V2 and V3).

The new elements may be an object array of 1-D vectors, a RaggedArray, a
list of vectors, or a numeric array (vectors along its last axis), as
docs/guide/strings.md ("Appending") shows.
"""

from __future__ import annotations

import numpy as np
import pytest

import zarrpy
from zarrpy import RaggedArray


def _vectors(*items, dtype="int32"):
    """An object array of 1-D numpy vectors, the form ``append`` takes."""
    out = np.empty(len(items), dtype=object)
    out[:] = [np.asarray(x, dtype=dtype) for x in items]
    return out


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_append_an_object_array_of_vectors(tmp_path, zarr_format):
    a = zarrpy.create_array(tmp_path / "r.zarr", shape=(0,), dtype="int32", chunks=(4,),
                            serializer="numcodecs.vlen-array", zarr_format=zarr_format)
    assert a.append(_vectors([1, 2, 3], [])) == (2,)
    assert a.append(_vectors([4], [5, 6], [7, 8, 9])) == (5,)
    again = zarrpy.open_array(tmp_path / "r.zarr")
    assert again.shape == (5,)
    assert again[...].equals(RaggedArray.from_list([[1, 2, 3], [], [4], [5, 6], [7, 8, 9]], "int32"))


def test_append_casts_each_vector_as_numpy_does():
    a = zarrpy.create_array({}, shape=(1,), dtype="int16", chunks=(2,), serializer="numcodecs.vlen-array")
    a[0] = np.array([1], dtype="int16")
    a.append(_vectors([2.0, 3.0], dtype="float64"))
    assert a[...].equals(RaggedArray.from_list([[1], [2, 3]], "int16"))


def test_append_along_axis_1_of_a_2d_ragged_array():
    a = zarrpy.create_array({}, shape=(2, 0), dtype="uint8", chunks=(2, 2), serializer="numcodecs.vlen-array")
    value = np.empty((2, 1), dtype=object)
    value[0, 0], value[1, 0] = np.array([1], "u1"), np.array([], "u1")
    assert a.append(value, axis=1) == (2, 1)
    assert a[...].equals(RaggedArray.from_list([[1], []], "uint8", shape=(2, 1)))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_append_a_ragged_array(zarr_format):
    a = zarrpy.create_array({}, shape=(0,), dtype="int32", chunks=(4,), serializer="numcodecs.vlen-array",
                            zarr_format=zarr_format)
    a.append(RaggedArray.from_list([[1], [2, 3]], "int32"))
    a.append(RaggedArray.from_list([[9], [], [4, 5, 6]], "int64")[1:])  # a slice, cast
    assert a[...].equals(RaggedArray.from_list([[1], [2, 3], [], [4, 5, 6]], "int32"))


@pytest.mark.parametrize(
    "value", [[[1], [2, 3]], [[1, 2], [3, 4]], [np.array([1]), np.array([2, 3])], np.array([[1, 2], [3, 4]])],
    ids=["lists", "equal-length-lists", "list-of-arrays", "2d-numeric"],
)
def test_append_a_list_of_vectors_or_a_numeric_array(value):
    a = zarrpy.create_array({}, shape=(1,), dtype="int32", chunks=(4,), serializer="numcodecs.vlen-array")
    a[0] = np.array([0], dtype="int32")
    assert a.append(value) == (3,)
    assert a[1:].equals(RaggedArray.from_list(list(value), "int32"))
    assert a[0].tolist() == [0]


def test_resize_then_assign_takes_every_ragged_value_form():
    """Growing, then writing the new part, is the same as append."""
    a = zarrpy.create_array({}, shape=(0,), dtype="int32", chunks=(4,), serializer="numcodecs.vlen-array")
    for value in (RaggedArray.from_list([[1], [2, 3]], "int32"), [[4, 5], []]):
        old = a.shape[0]
        a.resize(old + len(value))
        a[old:] = value
    assert a[...].equals(RaggedArray.from_list([[1], [2, 3], [4, 5], []], "int32"))
