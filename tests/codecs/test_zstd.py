"""zstd codec: configuration, frames with and without content size, safety, numcodecs parity."""

from __future__ import annotations

import doctest
import struct
import threading
import tracemalloc

import numpy as np
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy.codecs.zstd as zstd_module
from tests.strategies import assert_identical, chain_round_trip, dtypes_and_arrays, permutations_of, shapes
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.registry import codec_from_json
from zarrpy.codecs.zstd import ZstdCodec
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChunkDecodeError, CodecError

UINT8 = DataType.from_json("uint8")


def uint8_spec(n: int) -> ChunkSpec:
    return ChunkSpec((n,), UINT8, 0)


RAW = bytes(range(256)) * 40 + b"zarrpy" * 100
SPEC = uint8_spec(len(RAW))


def no_content_size(data: bytes, **kwargs) -> bytes:
    return zstandard.ZstdCompressor(write_content_size=False, **kwargs).compress(data)


def test_module_doctests():
    assert doctest.testmod(zstd_module).failed == 0


# -- configuration -------------------------------------------------------


@pytest.mark.parametrize("level", [-131072, -5, 0, 1, 3, 22])
@pytest.mark.parametrize("checksum", [False, True])
def test_config_round_trip(level, checksum):
    obj = {"name": "zstd", "configuration": {"level": level, "checksum": checksum}}
    codec = codec_from_json(obj)
    assert isinstance(codec, ZstdCodec)
    assert (codec.level, codec.checksum) == (level, checksum)
    assert codec.to_json() == obj
    assert list(codec.to_config()) == ["level", "checksum"]


def test_checksum_absent_reads_false_and_is_written():
    codec = codec_from_json({"name": "zstd", "configuration": {"level": 3}})
    assert codec.to_config() == {"level": 3, "checksum": False}


def test_absent_configuration_reads_as_zarr_python_default():
    assert codec_from_json({"name": "zstd"}).to_config() == {"level": 0, "checksum": False}
    assert ZstdCodec().to_config() == {"level": 0, "checksum": False}


def test_numcodecs_alias():
    assert codec_from_json({"name": "numcodecs.zstd", "configuration": {"level": 1}}) == ZstdCodec(1)


@pytest.mark.parametrize(
    "config, field",
    [
        ({"level": "3"}, "level"),
        ({"level": 3.0}, "level"),
        ({"level": False}, "level"),
        ({"level": None}, "level"),
        ({"level": 3, "checksum": 1}, "checksum"),
        ({"level": 3, "checksum": "true"}, "checksum"),
        ({"level": 3, "checksum": None}, "checksum"),
        ({"level": 3, "checksum": False, "threads": 2}, "threads"),
        ([3], "configuration"),
    ],
)
def test_bad_config(config, field):
    with pytest.raises(CodecError, match="zstd") as info:
        ZstdCodec.from_config(config)
    assert field in str(info.value)


# -- encoding ------------------------------------------------------------


@pytest.mark.parametrize("level", [-100, 0, 3, 19])
@pytest.mark.parametrize("checksum", [False, True])
def test_encode_writes_one_frame_with_content_size(level, checksum):
    out = ZstdCodec(level, checksum).encode(RAW, SPEC)
    params = zstandard.get_frame_parameters(out)
    assert params.content_size == len(RAW)
    assert params.has_checksum == checksum
    assert zstandard.ZstdDecompressor().decompress(out) == RAW
    assert ZstdCodec(level, checksum).decode(out, SPEC) == RAW


def test_empty_input_round_trips():
    codec = ZstdCodec()
    out = codec.encode(b"", uint8_spec(0))
    assert codec.decode(out, uint8_spec(0)) == b""


def test_decode_without_content_size():
    assert ZstdCodec().decode(no_content_size(RAW), SPEC) == RAW


def test_decode_concatenated_frames():
    half = len(RAW) // 2
    codec = ZstdCodec()
    for data in (
        codec.encode(RAW[:half], SPEC) + codec.encode(RAW[half:], SPEC),
        no_content_size(RAW[:half]) + codec.encode(RAW[half:], SPEC),
        codec.encode(b"", SPEC) + codec.encode(RAW, SPEC),
    ):
        assert codec.decode(data, SPEC) == RAW


def test_decode_skips_skippable_frame():
    skippable = struct.pack("<II", 0x184D2A50, 4) + b"meta"
    assert ZstdCodec().decode(skippable + ZstdCodec().encode(RAW, SPEC), SPEC) == RAW


@pytest.mark.parametrize("tail", [b"x", b"\x00" * 8, b"\x28\xb5\x2f\xfd"])
def test_decode_rejects_trailing_garbage(tail):
    for frame in (ZstdCodec().encode(RAW, SPEC), no_content_size(RAW)):
        with pytest.raises(ChunkDecodeError, match="zstd"):
            ZstdCodec().decode(frame + tail, SPEC)


def test_decode_every_truncation_fails():
    for frame in (ZstdCodec().encode(RAW, SPEC), no_content_size(RAW)):
        for cut in range(len(frame)):
            with pytest.raises(ChunkDecodeError, match="zstd"):
                ZstdCodec().decode(frame[:cut], SPEC)


def test_decode_checks_checksum():
    frame = bytearray(ZstdCodec(3, checksum=True).encode(RAW, SPEC))
    frame[-1] ^= 0xFF
    with pytest.raises(ChunkDecodeError, match="zstd"):
        ZstdCodec().decode(bytes(frame), SPEC)


def test_frame_claiming_too_much_is_rejected_before_allocating():
    # A frame header that states 2**40 decoded bytes, then nothing.
    lying = zstandard.MAGIC_NUMBER.to_bytes(4, "little") + bytes([0xE0]) + (1 << 40).to_bytes(8, "little")
    lying += b"\x01\x00\x00"  # one empty raw last block
    assert zstandard.frame_content_size(lying) == 1 << 40
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError, match="claims"):
            ZstdCodec().decode(lying, uint8_spec(100))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_decompression_bomb_without_content_size_is_stopped_early():
    bomb = no_content_size(bytes(64 << 20))  # 64 MiB of zeros in ~2 KiB
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError, match="more than the chunk can hold"):
            ZstdCodec().decode(bomb, uint8_spec(1000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_variable_length_spec_streams_without_limit():
    spec = ChunkSpec((3,), DataType("string", np.dtype("O"), True), "")
    for frame in (ZstdCodec().encode(RAW, spec), no_content_size(RAW)):
        assert ZstdCodec().decode(frame, spec) == RAW


def test_threads_share_no_state():
    codecs = [ZstdCodec(1), ZstdCodec(5, True), ZstdCodec(-3)]
    errors = []

    def work(i):
        try:
            for j in range(40):
                codec = codecs[(i + j) % 3]
                data = RAW[: 100 * (j + 1)]
                assert codec.decode(codec.encode(data, SPEC), SPEC) == data
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@settings(max_examples=100, deadline=None)
@given(data=st.binary(min_size=0, max_size=300), flips=st.lists(st.integers(0, 10**6), min_size=1, max_size=4),
       checksum=st.booleans(), content_size=st.booleans())
def test_corrupt_input_never_escapes_as_another_error(data, flips, checksum, content_size):
    frame = zstandard.ZstdCompressor(write_checksum=checksum, write_content_size=content_size).compress(data)
    corrupt = bytearray(frame)
    for f in flips:
        corrupt[f % len(corrupt)] ^= 1 << (f % 8)
    try:
        out = ZstdCodec().decode(bytes(corrupt), uint8_spec(len(data)))
    except ChunkDecodeError:
        return
    assert isinstance(out, bytes)


@settings(max_examples=50, deadline=None)
@given(junk=st.binary(max_size=64))
def test_random_bytes_never_escape_as_another_error(junk):
    try:
        ZstdCodec().decode(junk, uint8_spec(100))
    except ChunkDecodeError:
        pass


# -- numcodecs oracle ----------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("level", [-5, 0, 3, 19])
@pytest.mark.parametrize("checksum", [False, True])
def test_numcodecs_reads_ours_and_we_read_theirs(level, checksum):
    from numcodecs import Zstd

    ours = ZstdCodec(level, checksum).encode(RAW, SPEC)
    assert bytes(Zstd(level=level, checksum=checksum).decode(ours)) == RAW
    theirs = Zstd(level=level, checksum=checksum).encode(RAW)
    assert ZstdCodec(level, checksum).decode(theirs, SPEC) == RAW


@pytest.mark.integration
@pytest.mark.parametrize("level, checksum", [(0, False), (3, True), (-1, False)])
def test_json_matches_zarr_python(level, checksum):
    from zarr.codecs import ZstdCodec as ZarrZstd

    assert ZstdCodec(level, checksum).to_json() == ZarrZstd(level=level, checksum=checksum).to_dict()


# -- through a chain -----------------------------------------------------


@st.composite
def transposed_arrays(draw):
    array = draw(dtypes_and_arrays(shapes(min_dims=1)))
    return array, draw(permutations_of(array.ndim))


@settings(max_examples=75, deadline=None)
@given(case=transposed_arrays(), level=st.integers(-10, 10), checksum=st.booleans())
def test_chain_round_trip(case, level, checksum):
    array, order = case
    codecs = [
        {"name": "transpose", "configuration": {"order": order}},
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": level, "checksum": checksum}},
    ]
    encoded, decoded = chain_round_trip(codecs, array)
    assert_identical(decoded, array)
    stored = zstandard.ZstdDecompressor().decompress(encoded)
    assert stored == np.ascontiguousarray(np.transpose(array, order)).astype(array.dtype.newbyteorder("<")).tobytes()
