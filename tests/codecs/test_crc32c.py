"""crc32c codec: configuration forms, the RFC 3720 test vector, checksum failures."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy.codecs.crc32c as crc32c_module
from tests.strategies import assert_identical, chain_round_trip, dtypes_and_arrays, shapes, spec_for
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.crc32c import Crc32cCodec
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChecksumError, ChunkDecodeError, CodecError

SPEC = ChunkSpec((9,), DataType.from_json("uint8"), 0)


def test_module_doctests():
    assert doctest.testmod(crc32c_module).failed == 0


# -- configuration -------------------------------------------------------


@pytest.mark.parametrize("obj", [{"name": "crc32c"}, {"name": "crc32c", "configuration": {}}, "crc32c"])
def test_config_forms_read_and_write_without_configuration(obj):
    codec = codec_from_json(obj)
    assert isinstance(codec, Crc32cCodec)
    assert codec.to_config() is None
    assert codec.to_json() == {"name": "crc32c"}


def test_numcodecs_alias():
    assert codec_from_json({"name": "numcodecs.crc32c"}) == Crc32cCodec()


@pytest.mark.parametrize("config, field", [({"location": "end"}, "location"), ([], "configuration"), ("x", "configuration"), (0, "configuration")])
def test_bad_config(config, field):
    with pytest.raises(CodecError, match="crc32c") as info:
        Crc32cCodec.from_config(config)
    assert field in str(info.value)


def test_codec_equality():
    assert Crc32cCodec() == Crc32cCodec() and hash(Crc32cCodec()) == hash(Crc32cCodec())


# -- encoding ------------------------------------------------------------


def test_rfc3720_test_vector():
    out = Crc32cCodec().encode(b"123456789", SPEC)
    assert out == b"123456789" + bytes.fromhex("839206e3")
    assert int.from_bytes(out[-4:], "little") == 0xE3069283
    assert Crc32cCodec().decode(out, SPEC) == b"123456789"


def test_empty_payload():
    out = Crc32cCodec().encode(b"", SPEC)
    assert out == bytes(4)  # CRC-32C of nothing is 0
    assert Crc32cCodec().decode(out, SPEC) == b""


def test_compute_encoded_size():
    assert Crc32cCodec().compute_encoded_size(0) == 4
    assert Crc32cCodec().compute_encoded_size(1000) == 1004


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_too_short_is_a_decode_error_not_a_checksum_error(n):
    with pytest.raises(ChunkDecodeError, match="crc32c.*too short") as info:
        Crc32cCodec().decode(bytes(n), SPEC)
    assert not isinstance(info.value, ChecksumError)


def test_every_single_bit_flip_is_detected():
    out = Crc32cCodec().encode(b"123456789", SPEC)
    for i in range(len(out)):
        for bit in range(8):
            corrupt = bytearray(out)
            corrupt[i] ^= 1 << bit
            with pytest.raises(ChecksumError, match="crc32c"):
                Crc32cCodec().decode(bytes(corrupt), SPEC)


def test_every_truncation_is_detected():
    out = Crc32cCodec().encode(bytes(range(100)), SPEC)
    for cut in range(len(out)):
        with pytest.raises(ChunkDecodeError, match="crc32c"):
            Crc32cCodec().decode(out[:cut], SPEC)


def test_decode_accepts_memoryview():
    out = Crc32cCodec().encode(b"abc", SPEC)
    assert Crc32cCodec().decode(memoryview(out), SPEC) == b"abc"


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=200), flips=st.lists(st.integers(0, 10**6), min_size=1, max_size=3))
def test_corruption_is_a_checksum_error(data, flips):
    out = bytearray(Crc32cCodec().encode(data, SPEC))
    for f in flips:
        out[f % len(out)] ^= 1 << (f % 8)
    try:
        decoded = Crc32cCodec().decode(bytes(out), SPEC)
    except ChecksumError:
        return
    assert decoded == data  # the flips cancelled out


@pytest.mark.integration
def test_numcodecs_agrees():
    from numcodecs import CRC32C

    data = bytes(range(256)) * 3
    ours = Crc32cCodec().encode(data, SPEC)
    assert bytes(CRC32C().encode(data)) == ours
    assert bytes(CRC32C().decode(ours)) == data


# -- through a chain -----------------------------------------------------


@settings(max_examples=75, deadline=None)
@given(array=dtypes_and_arrays(shapes(min_dims=1)), endian=st.sampled_from(["little", "big"]))
def test_chain_round_trip_and_encoded_size(array, endian):
    codecs = [{"name": "bytes", "configuration": {"endian": endian}}, {"name": "crc32c"}]
    encoded, decoded = chain_round_trip(codecs, array)
    assert_identical(decoded, array)
    bound = CodecChain.from_json(codecs).bind(spec_for(array))
    assert bound.encoded_size == array.nbytes + 4 == len(encoded)


def test_chain_reports_checksum_error():
    array = np.arange(10, dtype="float32")
    bound = CodecChain.from_json([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]).bind(spec_for(array))
    encoded = bytearray(bound.encode(ArrayBytes.from_array(array)))
    encoded[3] ^= 0x10
    with pytest.raises(ChecksumError):
        bound.decode(bytes(encoded))


def test_crc32c_before_a_compressor():
    # crc32c, then zstd: zstd's decoded output is 4 bytes longer than the chunk.
    array = np.arange(1000, dtype="int64")
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}, {"name": "zstd", "configuration": {"level": 1}}]
    _, decoded = chain_round_trip(codecs, array)
    assert_identical(decoded, array)
