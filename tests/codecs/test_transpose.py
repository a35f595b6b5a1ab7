"""transpose codec: configuration, resolve, numpy semantics, variable-length chunks."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy.codecs.transpose as transpose_module
from tests.strategies import assert_identical, chain_round_trip, dtypes_and_arrays, permutations_of, shapes, spec_for
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.registry import codec_from_json
from zarrpy.codecs.transpose import TransposeCodec
from zarrpy.core.dtypes import DataType
from zarrpy.errors import CodecError

STRING = DataType("string", np.dtype("O"), True)


def test_module_doctests():
    assert doctest.testmod(transpose_module).failed == 0


# -- configuration -------------------------------------------------------


@pytest.mark.parametrize("order", [[0], [1, 0], [0, 1], [2, 0, 1], [3, 1, 0, 2]])
def test_config_round_trip(order):
    obj = {"name": "transpose", "configuration": {"order": order}}
    codec = codec_from_json(obj)
    assert isinstance(codec, TransposeCodec)
    assert codec.to_json() == obj
    assert codec.order == tuple(order)


@pytest.mark.parametrize(
    "config, field",
    [
        ({"order": [0, 0]}, "order"),
        ({"order": [1, 2]}, "order"),
        ({"order": [0, -1]}, "order"),
        ({"order": "C"}, "order"),
        ({"order": "F"}, "order"),
        ({"order": [0.0, 1.0]}, "order"),
        ({"order": [True, False]}, "order"),
        ({"order": 1}, "order"),
        ({}, "order"),
        (None, "order"),
        ({"order": [1, 0], "extra": 1}, "extra"),
    ],
)
def test_bad_config(config, field):
    with pytest.raises(CodecError, match="transpose") as info:
        TransposeCodec.from_config(config)
    assert field in str(info.value)


# -- resolve -------------------------------------------------------------


def test_resolve_permutes_the_shape():
    spec = ChunkSpec((2, 3, 4), DataType.from_json("int16"), 0)
    assert TransposeCodec([2, 0, 1]).resolve(spec) == ChunkSpec((4, 2, 3), spec.dtype, 0)


@pytest.mark.parametrize("order, shape", [([1, 0], (5,)), ([0], (2, 3)), ([0, 1, 2], (2, 3))])
def test_resolve_rejects_wrong_ndim(order, shape):
    with pytest.raises(CodecError, match="'transpose'.*dimensions"):
        TransposeCodec(order).resolve(ChunkSpec(shape, DataType.from_json("uint8"), 0))


# -- encode / decode -----------------------------------------------------


def test_encode_matches_numpy_transpose():
    array = np.arange(24, dtype="int32").reshape(2, 3, 4)
    codec = TransposeCodec([2, 0, 1])
    spec = spec_for(array)
    encoded = codec.encode(ArrayBytes.from_array(array), spec)
    assert encoded.shape == (4, 2, 3)
    assert_identical(encoded.array, np.transpose(array, [2, 0, 1]))
    assert encoded.array.flags.c_contiguous
    assert_identical(codec.decode(encoded, spec).array, array)


def test_stored_bytes_match_the_spec_definition():
    # B[B_pos] = A[A_pos] with B_pos[i] = A_pos[order[i]].
    array = np.arange(6, dtype="uint8").reshape(2, 3)
    encoded, _ = chain_round_trip([{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes"}], array)
    assert encoded == bytes([0, 3, 1, 4, 2, 5])


def test_variable_length_chunks_are_permuted_elementwise():
    items = [b"a", b"", b"ccc", b"dd", b"eeeee", b"f"]  # shape (2, 3), C order
    offsets = np.cumsum([0] + [len(x) for x in items])
    chunk = ArrayBytes.variable(offsets, b"".join(items), (2, 3))
    spec = ChunkSpec((2, 3), STRING, "")
    codec = TransposeCodec([1, 0])
    encoded = codec.encode(chunk, spec)
    assert encoded.shape == (3, 2)
    got = [encoded.data[encoded.offsets[i]:encoded.offsets[i + 1]] for i in range(6)]
    assert got == [b"a", b"dd", b"", b"eeeee", b"ccc", b"f"]
    decoded = codec.decode(encoded, spec)
    assert decoded.shape == (2, 3)
    assert decoded.data == chunk.data
    assert list(decoded.offsets) == list(chunk.offsets)


@st.composite
def transposed_arrays(draw):
    array = draw(dtypes_and_arrays(shapes(min_dims=1)))
    return array, draw(permutations_of(array.ndim))


@settings(max_examples=100, deadline=None)
@given(case=transposed_arrays(), endian=st.sampled_from(["little", "big"]))
def test_chain_round_trip(case, endian):
    array, order = case
    codecs = [{"name": "transpose", "configuration": {"order": order}}, {"name": "bytes", "configuration": {"endian": endian}}]
    encoded, decoded = chain_round_trip(codecs, array)
    assert_identical(decoded, array)
    expected = np.ascontiguousarray(np.transpose(array, order))
    assert encoded == expected.astype(array.dtype.newbyteorder("<" if endian == "little" else ">")).tobytes()


@settings(max_examples=50, deadline=None)
@given(case=transposed_arrays(), second=st.data())
def test_two_transposes_compose(case, second):
    array, first = case
    order2 = second.draw(permutations_of(array.ndim))
    codecs = [
        {"name": "transpose", "configuration": {"order": first}},
        {"name": "transpose", "configuration": {"order": order2}},
        {"name": "bytes", "configuration": {"endian": "little"}},
    ]
    encoded, decoded = chain_round_trip(codecs, array)
    assert_identical(decoded, array)
    expected = np.transpose(np.transpose(array, first), order2)
    assert encoded == np.ascontiguousarray(expected).astype(array.dtype.newbyteorder("<")).tobytes()
