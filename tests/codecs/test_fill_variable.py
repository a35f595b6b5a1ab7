"""``is_fill`` on variable-length chunks held as numpy elements: the quick
look at the first and last element must never change the answer."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.fill import is_fill
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.dtypes import DataType

STRING = DataType.from_json("string")
BYTES = DataType.from_json("variable_length_bytes")


def _spec(shape, dtype, fill):
    return ChunkSpec(shape, dtype, fill)


@settings(max_examples=200, deadline=None)
@given(
    fill=st.sampled_from(["", "x", "\x00", "\U0001F600", "a long fill value past sixteen bytes"]),
    others=st.lists(st.one_of(st.just(None), st.text(max_size=20)), min_size=1, max_size=30),
)
def test_strings_agree_with_comparing_every_element(fill, others):
    values = [fill if v is None else v for v in others]
    elements = np.array(values, dtype=STRING.numpy)
    spec = _spec(elements.shape, STRING, fill)
    expected = all(v == fill for v in values)
    assert is_fill(ArrayBytes.from_elements(elements), spec) is expected
    # the same elements through offsets and data
    assert is_fill(ArrayBytes.from_strings(elements.astype(object)), spec) is expected


@settings(max_examples=200, deadline=None)
@given(
    fill=st.sampled_from([b"", b"x", b"\x00\x00"]),
    others=st.lists(st.one_of(st.just(None), st.binary(max_size=6)), min_size=1, max_size=30),
    rows=st.integers(1, 2),
)
def test_bytes_agree_with_comparing_every_element(fill, others, rows):
    values = [fill if v is None else v for v in others]
    values = values[: len(values) - len(values) % rows] or [fill] * rows
    elements = np.empty(len(values), dtype=object)
    elements[:] = values
    elements = elements.reshape(rows, -1)
    spec = _spec(elements.shape, BYTES, fill)
    assert is_fill(ArrayBytes.from_elements(elements), spec) is all(v == fill for v in values)


def test_only_the_middle_differs():
    elements = np.array(["", "", "not fill", "", ""], dtype=STRING.numpy)
    assert is_fill(ArrayBytes.from_elements(elements), _spec((5,), STRING, "")) is False
    assert is_fill(ArrayBytes.from_elements(elements[[0, 1, 3]]), _spec((3,), STRING, "")) is True
