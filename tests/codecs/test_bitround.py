"""bitround beyond the contract: numcodecs' exact bits for every keepbits of
every float width (hypothesis over all bit patterns), zarrs' exact bits for
every integer width (zarrista), and refusals."""

from __future__ import annotations

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import spec_of
from zarrpy.codecs.bitround import BitRoundCodec
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import CodecError

MANTISSA = {"float16": 10, "float32": 23, "float64": 52}


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_matches_numcodecs_bit_for_bit(data):
    dtype = data.draw(st.sampled_from(sorted(MANTISSA)))
    keepbits = data.draw(st.integers(0, MANTISSA[dtype]))
    array = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=2, max_side=8)))
    ours = BitRoundCodec(keepbits).encode(ArrayBytes.from_array(array), spec_of(dtype, array.shape)).array
    theirs = np.asarray(numcodecs.BitRound(keepbits).encode(array)).view(dtype)
    assert ours.dtype == np.dtype(dtype)
    assert ours.tobytes() == theirs.tobytes()


def test_decode_is_the_identity():
    chunk = ArrayBytes.from_array(np.array([1.2345], dtype=np.float32))
    assert BitRoundCodec(2).decode(chunk, spec_of("float32", (1,))) is chunk


def test_types_without_bits_to_round_are_refused():
    for dtype in ("bool", "string", "int4", "float8_e4m3fn"):
        with pytest.raises(CodecError, match=f"codec 'bitround': data type '{dtype}'"):
            BitRoundCodec(3).resolve(spec_of(dtype, (2,)))
    with pytest.raises(CodecError, match="codec 'bitround': 'keepbits' must be at least 1"):
        BitRoundCodec(0).resolve(spec_of("int32", (2,)))


INTEGERS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def test_integer_rounding_matches_zarrs_own_tests_and_the_registry_sample():
    # zarrs' codec_bitround_uint8 / codec_bitround_uint tests, and the registry's bitround_uint8 table
    cases = [
        ("uint8", 3, [0, 3, 7, 15, 17, 54, 89, 128, 255], [0, 3, 7, 16, 16, 56, 96, 128, 224]),
        ("uint32", 3, [0, 1024, 1280, 1664, 1685, 123145182, 4294967295], [0, 1024, 1280, 1536, 1792, 117440512, 3758096384]),
        ("uint8", 3, [0, 1, 10, 11, 100, 123, 200, 208, 209, 255], [0, 1, 10, 12, 96, 128, 192, 192, 224, 224]),
        ("int8", 2, [-1, -128, 127, 5], [-64, -128, -128, 4]),  # two's complement bits; 127 carries to 128 = -128; 5 ties to 4
    ]
    for dtype, keepbits, values, expected in cases:
        arr = np.array(values, dtype=dtype)
        got = BitRoundCodec(keepbits).encode(ArrayBytes.from_array(arr), spec_of(dtype, arr.shape)).array
        assert got.dtype == np.dtype(dtype) and got.tolist() == expected, (dtype, keepbits)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_integers_match_zarrs_bit_for_bit(data):
    zt = pytest.importorskip("zarrista")
    dtype = data.draw(st.sampled_from(INTEGERS))
    width = np.dtype(dtype).itemsize * 8
    keepbits = data.draw(st.integers(1, width + 2))
    array = data.draw(hnp.arrays(dtype, st.integers(1, 12)))
    ours = BitRoundCodec(keepbits).encode(ArrayBytes.from_array(array), spec_of(dtype, array.shape)).array
    fill = zt.FillValue(bytes(np.dtype(dtype).itemsize))
    theirs = zt.codec.bitround(keepbits).encode(zt.ArrayBytes(array.tobytes()), [array.size], zt.DataType.from_string(dtype), fill)
    assert ours.tobytes() == bytes(memoryview(theirs.bytes))


def test_time_types_round_as_int64():
    spec = spec_of({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}, (3,))
    arr = np.array([0, 1234567, -(2**63)], dtype="int64").view("datetime64[s]")
    got = BitRoundCodec(4).encode(ArrayBytes.from_array(arr), spec).array
    assert got.dtype == arr.dtype
    assert got.view("int64").tolist() == [0, 1179648, -(2**63)]  # NaT keeps its one set bit


def test_partial_decoding_passes_selections_through():
    from zarrpy.codecs.chain import CodecChain
    from zarrpy.codecs.partial import BytesReader

    spec = spec_of("uint16", (8, 8))
    bound = CodecChain([BitRoundCodec(3), codec_from_json({"name": "bytes", "configuration": {"endian": "little"}})]).bind(spec)
    data = (np.arange(64, dtype=np.uint16) * 997).reshape(8, 8)
    encoded = bound.encode(ArrayBytes.from_array(data))
    assert bound.capabilities.partial_decode
    part = bound.partial_decoder(BytesReader(encoded)).decode_selection((slice(1, 3), np.array([5, 0])))
    assert part.array.tolist() == bound.decode(encoded).array[1:3][:, [5, 0]].tolist()


@pytest.mark.parametrize("config", [{}, {"keepbits": -1}, {"keepbits": 2.5}, {"keepbits": True}, {"keepbits": 3, "x": 1}])
def test_bad_configuration_names_codec_and_field(config):
    with pytest.raises(CodecError, match="codec 'bitround'"):
        codec_from_json({"name": "bitround", "configuration": config})


def test_numcodecs_name_stays_the_adapter_with_the_same_bits():
    adapter = codec_from_json({"name": "numcodecs.bitround", "configuration": {"keepbits": 5}})
    array = np.linspace(-3, 3, 17, dtype=np.float64)
    spec = spec_of("float64", (17,))
    ours = BitRoundCodec(5).encode(ArrayBytes.from_array(array), spec).array
    assert adapter.encode(ArrayBytes.from_array(array), spec).array.tobytes() == ours.tobytes()
