"""packbits beyond the contract: the sub-byte ml_dtypes types at the numpy
level (:func:`pack` / :func:`unpack`, so they work once zarrpy has those data
types), sign extension, zarrs' whole-byte form, bad configurations and
corrupt chunks."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.codecs.contract import spec_of
from zarrpy.codecs.packbits import PackBitsCodec, component_layout, pack, unpack
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import ChunkDecodeError, CodecError

SUB_BYTE = {"int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4, "float6_e2m3fn": 6,
            "float6_e3m2fn": 6}  # fmt: skip


def reference_stream(codes: list[int], bits: int) -> bytes:
    """The spec's bit stream of ``bits``-bit codes, LSB first, built with Python ints."""
    value = sum((c & ((1 << bits) - 1)) << (i * bits) for i, c in enumerate(codes))
    return value.to_bytes((len(codes) * bits + 7) // 8, "little")


@pytest.mark.parametrize("name", sorted(SUB_BYTE))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_sub_byte_types_pack_to_their_bit_width(name, data):
    dtype = np.dtype(getattr(ml_dtypes, name))
    bits = SUB_BYTE[name]
    assert component_layout(dtype).bits == bits
    codes = data.draw(st.lists(st.integers(0, 2**bits - 1), max_size=40))
    array = np.array(codes, dtype=np.uint8).view(dtype)  # ml_dtypes keeps the code in the low bits
    packed = pack(array, 0, bits - 1)
    assert packed == reference_stream(codes, bits)
    back = unpack(packed, dtype, array.shape, 0, bits - 1)
    assert back.dtype == dtype and back.view(np.uint8).tolist() == codes


@pytest.mark.parametrize("name", ["int4", "int2"])
def test_signed_sub_byte_values(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    values = np.array([-1, 1, -2, 0], dtype=dtype)
    back = unpack(pack(values, 0, SUB_BYTE[name] - 1), dtype, (4,), 0, SUB_BYTE[name] - 1)
    assert back.astype(np.int8).tolist() == [-1, 1, -2, 0]


def test_int4_fewer_bits_sign_extends_to_four_bits():
    dtype = np.dtype(ml_dtypes.int4)
    values = np.array([-3, 2, -1, 3], dtype=dtype)  # all fit in 3 bits
    packed = pack(values, 0, 2)
    assert len(packed) == 2  # 12 bits
    back = unpack(packed, dtype, (4,), 0, 2)
    assert back.astype(np.int8).tolist() == [-3, 2, -1, 3]
    assert back.view(np.uint8).max() < 16  # ml_dtypes' layout: nothing above bit 3


def test_float4_round_trips_through_the_codec_functions():
    dtype = np.dtype(ml_dtypes.float4_e2m1fn)
    values = np.array([0.5, -1.5, 6.0, -0.0, 3.0], dtype=dtype)
    back = unpack(pack(values, 0, 3), dtype, (5,), 0, 3)
    assert back.view(np.uint8).tolist() == values.view(np.uint8).tolist()


def test_int16_sign_extends_to_sixteen_bits_per_the_spec():
    # zarrs sign-extends only within the byte holding the top bit (bits 6-7
    # here), which would read -3 as 0x00fd; the spec says N = 16 bits.
    codec = PackBitsCodec(last_bit=5)
    spec = spec_of("int16", (3,))
    data = codec.encode(ArrayBytes.from_array(np.array([-3, 31, -32], dtype=np.int16)), spec)
    assert codec.decode(data, spec).array.tolist() == [-3, 31, -32]


def test_whole_bytes_zarrs_form_written_and_spec_form_read():
    codec = PackBitsCodec(padding_encoding="first_byte")
    spec = spec_of("uint16", (2,))
    data = codec.encode(ArrayBytes.from_array(np.array([1, 258], dtype=np.uint16)), spec)
    assert data == bytes.fromhex("01000201")  # what zarrs writes: the bytes codec's layout, no padding byte
    assert codec.decode(b"\x00" + data, spec).array.tolist() == [1, 258]  # the spec's form
    with pytest.raises(ChunkDecodeError, match="padding byte"):
        codec.decode(b"\x03" + data, spec)


def test_padding_byte_checked_and_length_checked():
    codec = PackBitsCodec(padding_encoding="last_byte")
    spec = spec_of("bool", (3,))
    data = codec.encode(ArrayBytes.from_array(np.array([True, False, True])), spec)
    assert data == bytes([0b101, 5])
    with pytest.raises(ChunkDecodeError, match="padding byte says 4"):
        codec.decode(bytes([0b101, 4]), spec)
    with pytest.raises(ChunkDecodeError, match="expected 2 bytes"):
        codec.decode(b"\x05", spec)


def test_numcodecs_layout_is_first_byte():
    # the spec: "first_byte" is numcodecs' PackBits layout (bool only)
    import numcodecs

    values = np.array([True, False, True, True, False, False, False, False, True])
    codec = PackBitsCodec(padding_encoding="first_byte")
    ours = codec.encode(ArrayBytes.from_array(values), spec_of("bool", (9,)))
    theirs = bytes(numcodecs.PackBits().encode(values))
    assert ours[0] == theirs[0] and len(ours) == len(theirs)  # same padding count and length
    # numcodecs packs most significant bit first (numpy's default), the spec least significant first
    assert np.unpackbits(np.frombuffer(ours[1:], np.uint8), bitorder="little")[:9].tolist() == values.tolist()


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"padding_encoding": "middle"}, "padding_encoding"),
        ({"first_bit": -1}, "first_bit"),
        ({"last_bit": 1.5}, "last_bit"),
        ({"first_bit": 3, "last_bit": 2}, "last_bit"),
        ({"first_bit": True}, "first_bit"),
    ],
)
def test_bad_configuration_names_codec_and_field(config, field):
    with pytest.raises(CodecError, match=f"codec 'packbits'.*'{field}'"):
        codec_from_json({"name": "packbits", "configuration": config})


def test_bits_outside_the_data_type():
    with pytest.raises(CodecError, match="'last_bit' 8.*'uint8'"):
        PackBitsCodec(last_bit=8).resolve(spec_of("uint8", (2,)))
    with pytest.raises(CodecError, match="'first_bit' 2 .*'bool'"):
        PackBitsCodec(first_bit=2).resolve(spec_of("bool", (2,)))
    with pytest.raises(CodecError, match="packbits.*'string'"):
        PackBitsCodec().resolve(spec_of("string", (2,)))


def test_nulls_read_as_unset():
    codec = PackBitsCodec.from_config({"padding_encoding": None, "first_bit": None, "last_bit": None})
    assert codec.to_config() == {}
    assert PackBitsCodec.from_config({"padding_encoding": "none"}).to_config() == {}


@pytest.mark.parametrize(
    ("name", "values"),
    [("int4", [-8, -1, 0, 3, 7]), ("uint2", [0, 1, 2, 3, 1]), ("float4_e2m1fn", [0.5, -1.5, 6.0, -0.0, 3.0]),
     ("float6_e3m2fn", [0.5, -1.5, 6.0, -0.0, 3.0]), ("bfloat16", [1.5, -2.0, 3.0, 4.0, 5.0])],
)
def test_arrays_of_ml_dtypes_types(name, values):
    import zarrpy

    dtype = getattr(ml_dtypes, name)
    data = np.array(values, dtype=dtype)
    array = zarrpy.create_array({}, shape=(5,), dtype=dtype, chunks=(3,), compressors=None,
                                serializer={"name": "packbits", "configuration": {"padding_encoding": "last_byte"}})
    array[...] = data
    assert array[...].view(np.uint8).tolist() == data.view(np.uint8).tolist()
