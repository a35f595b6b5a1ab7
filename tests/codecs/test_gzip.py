"""gzip codec: configuration, RFC 1952 output, decoding safety, numcodecs parity."""

from __future__ import annotations

import doctest
import gzip as stdlib_gzip
import tracemalloc
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy.codecs.gzip as gzip_module
from tests.strategies import assert_identical, chain_round_trip, dtypes_and_arrays, shapes, spec_for
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.gzip import GzipCodec
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChunkDecodeError, CodecError

UINT8 = DataType.from_json("uint8")


def uint8_spec(n: int) -> ChunkSpec:
    return ChunkSpec((n,), UINT8, 0)


RAW = bytes(range(256)) * 40 + b"zarrpy" * 100
SPEC = uint8_spec(len(RAW))


def test_module_doctests():
    assert doctest.testmod(gzip_module).failed == 0


# -- configuration -------------------------------------------------------


@pytest.mark.parametrize("level", range(10))
def test_config_round_trip(level):
    obj = {"name": "gzip", "configuration": {"level": level}}
    codec = codec_from_json(obj)
    assert isinstance(codec, GzipCodec)
    assert codec.level == level
    assert codec.to_json() == obj
    assert codec_from_json(codec.to_json()) == codec


def test_missing_level_reads_as_zarr_python_default():
    assert GzipCodec.from_config({}).to_config() == {"level": 5}
    assert codec_from_json({"name": "gzip"}).to_config() == {"level": 5}
    assert GzipCodec().level == 5


@pytest.mark.parametrize(
    "config, field",
    [
        ({"level": "5"}, "level"),
        ({"level": 5.0}, "level"),
        ({"level": True}, "level"),
        ({"level": None}, "level"),
        ({"level": 5, "mtime": 0}, "mtime"),
        ([5], "configuration"),
        ("level=5", "configuration"),
    ],
)
def test_bad_config(config, field):
    with pytest.raises(CodecError, match="gzip") as info:
        GzipCodec.from_config(config)
    assert field in str(info.value)


def test_bad_constructor_argument():
    with pytest.raises(CodecError, match="'gzip'.*'level'"):
        GzipCodec("12")  # any integer is read; the range is checked at create (test_write_only_settings)


def test_codec_is_immutable_value():
    a, b = GzipCodec(3), GzipCodec(3)
    assert a == b and hash(a) == hash(b)
    assert a != GzipCodec(4)
    assert repr(a) == "GzipCodec({'level': 3})"


# -- encoding ------------------------------------------------------------


@pytest.mark.parametrize("level", [0, 1, 5, 9])
def test_encode_is_one_rfc1952_member(level):
    out = GzipCodec(level).encode(RAW, SPEC)
    assert out[:3] == b"\x1f\x8b\x08"  # magic, deflate
    assert int.from_bytes(out[-4:], "little") == len(RAW)  # ISIZE
    assert int.from_bytes(out[-8:-4], "little") == zlib.crc32(RAW)
    assert stdlib_gzip.decompress(out) == RAW
    assert GzipCodec(level).decode(out, SPEC) == RAW


def test_level_zero_stores():
    assert len(GzipCodec(0).encode(RAW, SPEC)) > len(RAW)
    assert len(GzipCodec(9).encode(RAW, SPEC)) < len(RAW) // 4


def test_empty_input_round_trips():
    codec = GzipCodec()
    out = codec.encode(b"", uint8_spec(0))
    assert codec.decode(out, uint8_spec(0)) == b""


def test_decode_accepts_memoryview():
    codec = GzipCodec()
    assert codec.decode(memoryview(codec.encode(RAW, SPEC)), SPEC) == RAW


def test_decode_multi_member():
    data = stdlib_gzip.compress(RAW[:1000], mtime=0) + stdlib_gzip.compress(RAW[1000:], mtime=0)
    assert GzipCodec().decode(data, SPEC) == RAW


def test_decode_accepts_zero_padding_like_gzip():
    data = GzipCodec().encode(RAW, SPEC) + bytes(16)
    assert GzipCodec().decode(data, SPEC) == RAW


@pytest.mark.parametrize("tail", [b"x", b"\x1f\x8b", b"\x00\x00garbage", b"not gzip at all"])
def test_decode_rejects_trailing_garbage(tail):
    data = GzipCodec().encode(RAW, SPEC) + tail
    with pytest.raises(ChunkDecodeError, match="gzip"):
        GzipCodec().decode(data, SPEC)


def test_decode_rejects_zlib_and_raw_deflate():
    with pytest.raises(ChunkDecodeError, match="gzip"):
        GzipCodec().decode(zlib.compress(RAW), SPEC)
    with pytest.raises(ChunkDecodeError, match="gzip"):
        GzipCodec().decode(b"", SPEC)


def test_decode_every_truncation_fails():
    data = GzipCodec().encode(RAW, SPEC)
    for cut in range(len(data)):
        with pytest.raises(ChunkDecodeError, match="gzip"):
            GzipCodec().decode(data[:cut], SPEC)


def test_decode_detects_crc_and_size_mismatch():
    data = bytearray(GzipCodec().encode(RAW, SPEC))
    bad_crc = bytes(data[:-8]) + bytes([data[-8] ^ 1]) + bytes(data[-7:])
    bad_size = bytes(data[:-4]) + (len(RAW) + 1).to_bytes(4, "little")
    for bad in (bad_crc, bad_size):
        with pytest.raises(ChunkDecodeError, match="gzip"):
            GzipCodec().decode(bad, SPEC)


def test_decompression_bomb_is_stopped_without_allocating():
    bomb = zlib.compress(bytes(64 << 20), 9, wbits=31)  # 64 MiB of zeros, ~64 KiB
    spec = uint8_spec(1000)
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError, match="more than the chunk can hold"):
            GzipCodec().decode(bomb, spec)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


def test_variable_length_spec_has_no_limit():
    spec = ChunkSpec((3,), DataType("string", np.dtype("O"), True), "")
    data = GzipCodec().encode(RAW, spec)
    assert GzipCodec().decode(data, spec) == RAW


@settings(max_examples=100, deadline=None)
@given(data=st.binary(min_size=0, max_size=300), flips=st.lists(st.integers(0, 10**6), min_size=1, max_size=4))
def test_corrupt_input_never_escapes_as_another_error(data, flips):
    encoded = bytearray(GzipCodec().encode(data, uint8_spec(len(data))))
    for f in flips:
        encoded[f % len(encoded)] ^= 1 << (f % 8)
    try:
        out = GzipCodec().decode(bytes(encoded), uint8_spec(len(data)))
    except ChunkDecodeError:
        return
    # Only header fields without a checksum (MTIME, XFL, OS) may flip unseen.
    assert out == data


# -- numcodecs oracle ----------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("level", [0, 1, 5, 9])
def test_numcodecs_reads_ours_and_we_read_theirs(level):
    from numcodecs import GZip

    ours = GzipCodec(level).encode(RAW, SPEC)
    assert bytes(GZip(level).decode(ours)) == RAW
    theirs = GZip(level).encode(RAW)
    assert GzipCodec(level).decode(theirs, SPEC) == RAW


@pytest.mark.integration
@pytest.mark.parametrize("level", [0, 5, 9])
def test_json_matches_zarr_python(level):
    from zarr.codecs import GzipCodec as ZarrGzip

    assert GzipCodec(level).to_json() == ZarrGzip(level=level).to_dict()


# -- through a chain -----------------------------------------------------
# 0-d arrays are left to test_chain.py: ArrayBytes.from_array turns them 1-d.


@settings(max_examples=75, deadline=None)
@given(array=dtypes_and_arrays(shapes(min_dims=1)), level=st.integers(0, 9), endian=st.sampled_from(["little", "big"]))
def test_chain_round_trip(array, level, endian):
    codecs = [{"name": "bytes", "configuration": {"endian": endian}}, {"name": "gzip", "configuration": {"level": level}}]
    encoded, decoded = chain_round_trip(codecs, array)
    assert_identical(decoded, array)
    assert stdlib_gzip.decompress(encoded) == array.astype(array.dtype.newbyteorder("<" if endian == "little" else ">")).tobytes()


def test_chain_rejects_wrong_decoded_size():
    array = np.arange(12, dtype="uint16").reshape(3, 4)
    bound = CodecChain.from_json(
        [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]
    ).bind(spec_for(array))
    short = zlib.compress(array.tobytes()[:-2], 1, wbits=31)
    with pytest.raises(ChunkDecodeError):
        bound.decode(short)
