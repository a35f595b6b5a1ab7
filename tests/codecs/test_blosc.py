"""blosc codec: configuration and typesize, c-blosc1 frames, header checks, numcodecs parity."""

from __future__ import annotations

import doctest
import struct
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy.codecs.blosc as blosc_module
from tests.strategies import assert_identical, chain_round_trip, dtypes_and_arrays, shapes, spec_for
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.blosc import BloscCodec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChunkDecodeError, CodecError

AVAILABLE_CNAMES = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]  # c-blosc in numcodecs has no snappy
SHUFFLES = ["noshuffle", "shuffle", "bitshuffle"]

ARRAY = (np.arange(5000, dtype="<u4") % 97 * 1000).astype("<u4")
SPEC = spec_for(ARRAY)
RAW = ARRAY.tobytes()


def uint8_spec(n: int) -> ChunkSpec:
    return ChunkSpec((n,), DataType.from_json("uint8"), 0)


def header(frame: bytes) -> tuple[int, ...]:
    """(version, versionlz, flags, typesize, nbytes, blocksize, cbytes)."""
    return struct.unpack_from("<BBBBIII", frame)


def test_module_doctests():
    assert doctest.testmod(blosc_module).failed == 0


def test_importing_the_codec_does_not_initialise_blosc():
    code = "import sys, zarrpy, zarrpy.codecs.blosc; assert 'numcodecs' not in sys.modules, 'numcodecs imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- configuration -------------------------------------------------------


@pytest.mark.parametrize("cname", ["lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib"])
@pytest.mark.parametrize("shuffle", SHUFFLES)
def test_config_round_trip(cname, shuffle):
    config = {"typesize": 4, "cname": cname, "clevel": 7, "shuffle": shuffle, "blocksize": 0}
    codec = codec_from_json({"name": "blosc", "configuration": config})
    assert isinstance(codec, BloscCodec)
    assert codec.to_json() == {"name": "blosc", "configuration": config}
    assert list(codec.to_config()) == ["typesize", "cname", "clevel", "shuffle", "blocksize"]


@pytest.mark.parametrize(
    "config",
    [
        {"cname": "lz4", "clevel": 0, "shuffle": "noshuffle", "blocksize": 0},
        {"typesize": 1, "cname": "zstd", "clevel": 9, "shuffle": "bitshuffle", "blocksize": 1 << 20},
        {"typesize": 256, "cname": "blosclz", "clevel": 1, "shuffle": "shuffle", "blocksize": 4096},
    ],
)
def test_config_round_trip_edges(config):
    assert BloscCodec.from_config(config).to_config() == config


def test_missing_blocksize_reads_as_zero():
    codec = BloscCodec.from_config({"typesize": 2, "cname": "lz4", "clevel": 5, "shuffle": "shuffle"})
    assert codec.to_config()["blocksize"] == 0


def test_missing_typesize_is_read_and_evolve_fills_it_in():
    codec = BloscCodec.from_config({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0})
    assert codec.typesize is None
    assert "typesize" not in codec.to_config()
    spec = ChunkSpec((10,), DataType.from_json("float64"), 0.0)
    assert codec.resolve(spec) == spec
    evolved = codec.evolve(spec)
    assert evolved.to_config() == {"typesize": 8, "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}
    assert codec.typesize is None  # the original is unchanged
    assert evolved.evolve(ChunkSpec((10,), DataType.from_json("int16"), 0)) is evolved
    assert codec != evolved


def test_evolve_for_variable_length_types_uses_one():
    spec = ChunkSpec((3,), DataType("string", np.dtype("O"), True), "")
    assert BloscCodec(cname="lz4").evolve(spec).typesize == 1


def test_encoding_without_typesize_equals_encoding_with_evolved_typesize():
    codec = BloscCodec(cname="lz4", shuffle="shuffle")
    evolved = codec.evolve(SPEC)
    frame = codec.encode(RAW, SPEC)
    assert frame == evolved.encode(RAW, SPEC)
    assert header(frame)[3] == 4


@pytest.mark.parametrize(
    "config, field",
    [
        ({"cname": "lz5", "clevel": 5, "shuffle": "shuffle"}, "cname"),
        ({"cname": "LZ4", "clevel": 5, "shuffle": "shuffle"}, "cname"),
        ({"cname": "lz4", "clevel": "5", "shuffle": "shuffle"}, "clevel"),
        ({"cname": "lz4", "clevel": True, "shuffle": "shuffle"}, "clevel"),
        ({"cname": "lz4", "clevel": 5, "shuffle": 1}, "shuffle"),
        ({"cname": "lz4", "clevel": 5, "shuffle": "auto"}, "shuffle"),
        ({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 0}, "typesize"),
        ({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": "4"}, "typesize"),
        ({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4.0}, "typesize"),
        ({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": None}, "typesize"),
        ({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": -1}, "blocksize"),
        ({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 2**31}, "blocksize"),
        ({"clevel": 5, "shuffle": "shuffle"}, "cname"),
        ({"cname": "lz4", "shuffle": "shuffle"}, "clevel"),
        ({"cname": "lz4", "clevel": 5}, "shuffle"),
        ({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "nthreads": 2}, "nthreads"),
        (None, "cname"),
        (["lz4"], "configuration"),
    ],
)
def test_bad_config(config, field):
    with pytest.raises(CodecError, match="blosc") as info:
        BloscCodec.from_config(config)
    assert field in str(info.value)


# -- frames --------------------------------------------------------------


@pytest.mark.parametrize("cname", AVAILABLE_CNAMES)
@pytest.mark.parametrize("shuffle", SHUFFLES)
def test_encode_writes_blosc1_frame(cname, shuffle):
    codec = BloscCodec(cname=cname, clevel=5, shuffle=shuffle, typesize=4)
    frame = codec.encode(RAW, SPEC)
    version, _, flags, typesize, nbytes, _, cbytes = header(frame)
    assert version == 2  # c-blosc1 format
    assert (typesize, nbytes, cbytes) == (4, len(RAW), len(frame))
    assert bool(flags & 0x01) == (shuffle == "shuffle") or flags & 0x02
    assert codec.decode(frame, SPEC) == RAW


def test_unavailable_compressor_is_a_codec_error_on_encode():
    with pytest.raises(CodecError, match="blosc.*snappy"):
        BloscCodec(cname="snappy", typesize=1).encode(RAW, SPEC)


@pytest.mark.parametrize("nbytes", [0, 1, 100, 127, 128, 5000])
def test_small_and_empty_inputs(nbytes):
    spec = uint8_spec(nbytes)
    data = bytes(range(256)) * 20
    codec = BloscCodec(cname="lz4", typesize=1)
    frame = codec.encode(data[:nbytes], spec)
    assert codec.decode(frame, spec) == data[:nbytes]


@pytest.mark.parametrize("blocksize", [0, 256, 1000, 1 << 16])
def test_blocksize_is_honoured_and_decodes(blocksize):
    codec = BloscCodec(cname="zstd", typesize=4, blocksize=blocksize)
    frame = codec.encode(RAW, SPEC)
    if blocksize:
        assert header(frame)[5] == min(blocksize, len(RAW))
    assert codec.decode(frame, SPEC) == RAW


def test_header_claiming_more_than_the_chunk_is_rejected():
    big = bytes(400_000)  # beyond the 64 KiB + 1/8 slack of a 100-byte chunk
    frame = BloscCodec(cname="lz4", typesize=4).encode(big, uint8_spec(len(big)))
    with pytest.raises(ChunkDecodeError, match="claims"):
        BloscCodec(cname="lz4").decode(frame, uint8_spec(100))


def test_lying_nbytes_is_rejected_before_blosc_runs():
    frame = bytearray(BloscCodec(cname="lz4", typesize=4).encode(RAW, SPEC))
    struct.pack_into("<I", frame, 4, 2**31)  # nbytes
    with pytest.raises(ChunkDecodeError, match="claims"):
        BloscCodec().decode(bytes(frame), ChunkSpec((3,), DataType("string", np.dtype("O"), True), ""))


@pytest.mark.parametrize("delta", [-1, 1, 1000])
def test_cbytes_must_match_the_input(delta):
    frame = bytearray(BloscCodec(cname="lz4", typesize=4).encode(RAW, SPEC))
    struct.pack_into("<I", frame, 12, len(frame) + delta)
    with pytest.raises(ChunkDecodeError, match="frame has"):
        BloscCodec().decode(bytes(frame), SPEC)


def test_memcpyed_frame_size_is_checked():
    frame = bytearray(BloscCodec(cname="lz4", clevel=0, typesize=1).encode(RAW[:1000], uint8_spec(1000)))
    assert frame[2] & 0x02  # clevel 0 copies
    struct.pack_into("<I", frame, 4, 1001)
    with pytest.raises(ChunkDecodeError, match="blosc"):
        BloscCodec().decode(bytes(frame), uint8_spec(1000))


def test_block_starts_outside_the_frame_are_rejected():
    frame = bytearray(BloscCodec(cname="lz4", typesize=4, blocksize=1024).encode(RAW, SPEC))
    struct.pack_into("<I", frame, 16, len(frame) + 5)
    with pytest.raises(ChunkDecodeError, match="outside"):
        BloscCodec().decode(bytes(frame), SPEC)


def test_every_truncation_fails():
    frame = BloscCodec(cname="zstd", typesize=4).encode(RAW, SPEC)
    for cut in range(len(frame)):
        with pytest.raises(ChunkDecodeError, match="blosc"):
            BloscCodec().decode(frame[:cut], SPEC)


@settings(max_examples=100, deadline=None)
@given(
    cname=st.sampled_from(AVAILABLE_CNAMES),
    shuffle=st.sampled_from(SHUFFLES),
    blocksize=st.sampled_from([0, 128, 1000]),
    flips=st.lists(st.integers(0, 10**6), min_size=1, max_size=4),
)
def test_corrupt_frames_never_escape_as_another_error(cname, shuffle, blocksize, flips):
    frame = bytearray(BloscCodec(cname=cname, shuffle=shuffle, typesize=4, blocksize=blocksize).encode(RAW, SPEC))
    for f in flips:
        frame[f % len(frame)] ^= 1 << (f % 8)
    try:
        out = BloscCodec().decode(bytes(frame), SPEC)
    except ChunkDecodeError:
        return
    assert isinstance(out, bytes) and len(out) <= len(RAW) + len(RAW) // 8 + 65536


@settings(max_examples=50, deadline=None)
@given(junk=st.binary(min_size=16, max_size=200))
def test_random_frames_never_escape_as_another_error(junk):
    # Make cbytes consistent so that the check reaches deeper.
    frame = bytearray(junk)
    struct.pack_into("<I", frame, 12, len(frame))
    try:
        BloscCodec().decode(bytes(frame), uint8_spec(1000))
    except ChunkDecodeError:
        pass


# -- numcodecs oracle ----------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("cname", AVAILABLE_CNAMES)
@pytest.mark.parametrize("shuffle", SHUFFLES)
@pytest.mark.parametrize("blocksize", [0, 1024])
def test_numcodecs_reads_ours_and_we_read_theirs(cname, shuffle, blocksize):
    from numcodecs import Blosc

    theirs_codec = Blosc(cname=cname, clevel=5, shuffle=SHUFFLES.index(shuffle), blocksize=blocksize, typesize=4)
    ours_codec = BloscCodec(cname=cname, clevel=5, shuffle=shuffle, blocksize=blocksize, typesize=4)
    ours = ours_codec.encode(RAW, SPEC)
    assert bytes(theirs_codec.decode(ours)) == RAW
    theirs = theirs_codec.encode(ARRAY)
    assert ours == bytes(theirs)  # byte-identical to V2 blosc
    assert ours_codec.decode(theirs, SPEC) == RAW


@pytest.mark.integration
@pytest.mark.parametrize("shuffle", SHUFFLES)
def test_json_matches_zarr_python(shuffle):
    from zarr.codecs import BloscCodec as ZarrBlosc

    ours = BloscCodec(cname="lz4", clevel=5, shuffle=shuffle, typesize=4, blocksize=0).to_json()
    theirs = ZarrBlosc(cname="lz4", clevel=5, shuffle=shuffle, typesize=4, blocksize=0).to_dict()
    assert ours == theirs
    assert list(ours["configuration"]) == list(theirs["configuration"])


# -- through a chain -----------------------------------------------------


@settings(max_examples=75, deadline=None)
@given(
    array=dtypes_and_arrays(shapes(min_dims=1)),
    cname=st.sampled_from(AVAILABLE_CNAMES),
    clevel=st.integers(0, 9),
    shuffle=st.sampled_from(SHUFFLES),
    blocksize=st.sampled_from([0, 256]),
    with_typesize=st.booleans(),
)
def test_chain_round_trip(array, cname, clevel, shuffle, blocksize, with_typesize):
    config = {"cname": cname, "clevel": clevel, "shuffle": shuffle, "blocksize": blocksize}
    if with_typesize:
        config["typesize"] = array.dtype.itemsize
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": config}]
    encoded, decoded = chain_round_trip(codecs, array)
    assert_identical(decoded, array)
    assert header(encoded)[4] == array.nbytes


def test_chain_encoded_size_is_unknown():
    chain = CodecChain.from_json([{"name": "bytes"}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "noshuffle"}}])
    assert chain.bind(uint8_spec(10)).encoded_size is None
