"""bytes codec: configuration, byte layout per type, size checks, all core types."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy.codecs.bytes as bytes_module
from tests.strategies import CORE_DTYPE_NAMES, assert_identical, chain_round_trip, dtypes_and_arrays, shapes, spec_for
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.bytes import BytesCodec
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChunkDecodeError, CodecError

STRING = DataType("string", np.dtype("O"), True)


def encode(codec: BytesCodec, array: np.ndarray) -> bytes:
    spec = codec.resolve(spec_for(array))
    return codec.encode(ArrayBytes.from_array(array), spec)


def decode(codec: BytesCodec, data: bytes, like: np.ndarray) -> np.ndarray:
    return codec.decode(data, spec_for(like)).array


def test_module_doctests():
    assert doctest.testmod(bytes_module).failed == 0


# -- configuration -------------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "bytes"},
    ],
)
def test_config_round_trip(obj):
    codec = codec_from_json(obj)
    assert isinstance(codec, BytesCodec)
    assert codec.to_json() == obj


def test_empty_configuration_reads_as_no_endian():
    assert codec_from_json({"name": "bytes", "configuration": {}}).to_json() == {"name": "bytes"}


def test_legacy_alias_endian():
    codec = codec_from_json({"name": "endian", "configuration": {"endian": "big"}})
    assert isinstance(codec, BytesCodec)
    assert codec.to_json() == {"name": "bytes", "configuration": {"endian": "big"}}


@pytest.mark.parametrize(
    "config, field",
    [
        ({"endian": "middle"}, "endian"),
        ({"endian": "Little"}, "endian"),
        ({"endian": 1}, "endian"),
        ({"endian": "little", "order": "C"}, "order"),
        (["little"], "configuration"),
    ],
)
def test_bad_config(config, field):
    with pytest.raises(CodecError, match="bytes") as info:
        BytesCodec.from_config(config)
    assert field in str(info.value)


@pytest.mark.parametrize("name", ["uint16", "int32", "float64", "complex64"])
def test_endian_required_for_multibyte_types(name):
    with pytest.raises(CodecError, match="'bytes'.*'endian'"):
        BytesCodec(None).resolve(ChunkSpec((2,), DataType.from_json(name), 0))


@pytest.mark.parametrize("name", ["bool", "int8", "uint8", "r8", "r16", "r24"])
def test_endian_optional_for_one_byte_and_raw_types(name):
    dtype = DataType.from_json(name)
    spec = ChunkSpec((2,), dtype, dtype.default_fill())
    assert BytesCodec(None).resolve(spec) == spec


def test_variable_length_types_are_rejected():
    with pytest.raises(CodecError, match="'bytes'.*variable"):
        BytesCodec("little").resolve(ChunkSpec((2,), STRING, ""))


# -- byte layout ---------------------------------------------------------


def test_layout_little_and_big():
    array = np.array([0x0102, 0x0304], dtype="uint16")
    assert encode(BytesCodec("little"), array) == b"\x02\x01\x04\x03"
    assert encode(BytesCodec("big"), array) == b"\x01\x02\x03\x04"


def test_layout_bool_is_zero_or_one():
    assert encode(BytesCodec(None), np.array([True, False, True])) == b"\x01\x00\x01"


def test_layout_complex_is_real_then_imaginary():
    array = np.array([1 + 2j], dtype="complex64")
    assert encode(BytesCodec("little"), array) == np.array([1, 2], dtype="<f4").tobytes()
    assert encode(BytesCodec("big"), array) == np.array([1, 2], dtype=">f4").tobytes()


def test_layout_is_c_order_even_for_fortran_input():
    array = np.asfortranarray(np.arange(6, dtype="uint8").reshape(2, 3))
    assert encode(BytesCodec(None), array) == bytes(range(6))


def test_raw_types_are_copied_verbatim():
    dtype = DataType.from_json("r24")
    array = np.frombuffer(bytes(range(12)), dtype=dtype.numpy)
    for endian in ("little", "big", None):
        data = encode(BytesCodec(endian), array)
        assert data == bytes(range(12))
        assert_identical(decode(BytesCodec(endian), data, array), array)


@pytest.mark.parametrize("name", CORE_DTYPE_NAMES)
@pytest.mark.parametrize("endian", ["little", "big"])
def test_round_trip_every_core_type(name, endian):
    array = (np.arange(24) % 7).astype(name).reshape(2, 3, 4)
    codec = BytesCodec(endian)
    data = encode(codec, array)
    assert len(data) == codec.compute_encoded_size(spec_for(array)) == array.nbytes
    assert_identical(decode(codec, data, array), array)


@pytest.mark.parametrize("delta", [-1, 1, -4])
def test_wrong_length_is_a_decode_error(delta):
    array = np.arange(6, dtype="uint16").reshape(2, 3)
    data = encode(BytesCodec("little"), array)
    data = data[:delta] if delta < 0 else data + bytes(delta)
    with pytest.raises(ChunkDecodeError, match="'bytes'.*expected 12 bytes"):
        BytesCodec("little").decode(data, spec_for(array))


def test_decoded_array_is_native_order():
    array = np.array([1.5, -2.0], dtype="float64")
    out = decode(BytesCodec("big"), encode(BytesCodec("big"), array), array)
    assert out.dtype == np.dtype("float64") and out.dtype.isnative


def test_nan_payloads_survive_both_orders():
    bits = np.array([0x7FC00001, 0xFFC00000, 0x7F800001, 0x80000000], dtype="uint32")
    array = bits.view("float32")
    for endian in ("little", "big"):
        out = decode(BytesCodec(endian), encode(BytesCodec(endian), array), array)
        assert_identical(out.view("uint32"), bits)


@settings(max_examples=100, deadline=None)
@given(array=dtypes_and_arrays(shapes(min_dims=1)), endian=st.sampled_from(["little", "big"]))
def test_chain_round_trip(array, endian):
    codecs = [{"name": "bytes", "configuration": {"endian": endian}}]
    encoded, decoded = chain_round_trip(codecs, array)
    assert_identical(decoded, array)
    assert encoded == array.astype(array.dtype.newbyteorder("<" if endian == "little" else ">")).tobytes()
