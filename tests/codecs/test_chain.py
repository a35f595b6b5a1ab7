"""Codec chains: ordering rules, binding, sizes, and whole-pipeline property tests."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import (
    assert_identical,
    chain_round_trip,
    dtypes_and_arrays,
    permutations_of,
    shapes,
    spec_for,
)
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.abc import ArrayToBytesCodec, ChunkSpec
from zarrpy.codecs.blosc import BloscCodec
from zarrpy.codecs.bytes import BytesCodec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.crc32c import Crc32cCodec
from zarrpy.codecs.gzip import GzipCodec
from zarrpy.codecs.transpose import TransposeCodec
from zarrpy.codecs.zstd import ZstdCodec
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChecksumError, ChunkDecodeError, CodecError, UnknownCodecError

LE = {"name": "bytes", "configuration": {"endian": "little"}}
UINT16 = DataType.from_json("uint16")


# -- construction rules --------------------------------------------------


@pytest.mark.parametrize(
    "codecs, match",
    [
        ([], "array-to-bytes"),
        ([{"name": "transpose", "configuration": {"order": [0]}}], "array-to-bytes"),
        ([{"name": "gzip", "configuration": {"level": 1}}], "'gzip'"),
        ([LE, LE], "'bytes'.*exactly one"),
        ([{"name": "gzip", "configuration": {"level": 1}}, LE], "'gzip'.*after"),
        ([LE, {"name": "transpose", "configuration": {"order": [0]}}], "'transpose'.*before"),
        ([LE, "crc32c", {"name": "transpose", "configuration": {"order": [0]}}], "'transpose'"),
    ],
)
def test_bad_codec_order(codecs, match):
    with pytest.raises(CodecError, match=match):
        CodecChain.from_json(codecs)


def test_non_codec_is_rejected():
    with pytest.raises(CodecError):
        CodecChain([BytesCodec(), object()])  # type: ignore[list-item]


def test_unknown_codec_in_chain():
    with pytest.raises(UnknownCodecError, match="'lz77'"):
        CodecChain.from_json([LE, {"name": "lz77"}])


def test_transpose_with_wrong_ndim_fails_at_bind():
    chain = CodecChain.from_json([{"name": "transpose", "configuration": {"order": [1, 0]}}, LE])
    with pytest.raises(CodecError, match="'transpose'"):
        chain.bind(ChunkSpec((2, 3, 4), UINT16, 0))


def test_bytes_without_endian_on_uint16_fails_at_bind():
    chain = CodecChain.from_json([{"name": "bytes"}])
    with pytest.raises(CodecError, match="'bytes'.*'endian'"):
        chain.bind(ChunkSpec((4,), UINT16, 0))


def test_bytes_without_endian_on_uint8_binds():
    chain = CodecChain.from_json([{"name": "bytes"}, "zstd"])
    array = np.arange(10, dtype="uint8")
    _, decoded = chain_round_trip(chain.to_json(), array)
    assert_identical(decoded, array)


def test_json_round_trip_and_equality():
    codecs = [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        LE,
        {"name": "crc32c"},
        {"name": "zstd", "configuration": {"level": 3, "checksum": True}},
    ]
    chain = CodecChain.from_json(codecs)
    assert chain.to_json() == codecs
    assert CodecChain.from_json(chain.to_json()) == chain
    assert chain.codecs == (TransposeCodec([1, 0]), BytesCodec("little"), Crc32cCodec(), ZstdCodec(3, True))
    assert chain.array_to_bytes == BytesCodec("little")


# -- sizes ----------------------------------------------------------------


def test_encoded_size_is_known_without_compressors():
    spec = ChunkSpec((10, 10), UINT16, 0)
    assert CodecChain.from_json([LE]).bind(spec).encoded_size == 200
    assert CodecChain.from_json([LE, "crc32c", "crc32c"]).bind(spec).encoded_size == 208
    assert CodecChain.from_json([LE, "crc32c", "gzip"]).bind(spec).encoded_size is None


def test_chunk_decoding_to_the_wrong_size_is_a_decode_error():
    array = np.arange(12, dtype="uint16").reshape(3, 4)
    bound = CodecChain.from_json([LE, {"name": "zstd", "configuration": {"level": 1}}]).bind(spec_for(array))
    too_short = ZstdCodec(1).encode(array.tobytes()[:-2], None)
    too_long = ZstdCodec(1).encode(array.tobytes() + b"\x00\x00", None)
    for data in (too_short, too_long):
        with pytest.raises(ChunkDecodeError, match="'bytes'.*24 bytes"):
            bound.decode(data)


def test_array_to_bytes_codec_returning_the_wrong_shape_is_a_decode_error():
    class Flattening(ArrayToBytesCodec):
        name = "test.flattening"
        __slots__ = ()

        def encode(self, chunk, spec):
            return chunk.array.tobytes()

        def decode(self, data, spec):
            return ArrayBytes.fixed(data, (spec.size,), spec.dtype.numpy)

    array = np.arange(6, dtype="uint8").reshape(2, 3)
    bound = CodecChain([Flattening()]).bind(spec_for(array))
    with pytest.raises(ChunkDecodeError, match=r"shape \(6,\), expected \(2, 3\)"):
        bound.decode(bound.encode(ArrayBytes.from_array(array)))


def test_zero_dimensional_chunk_round_trip():
    array = np.array(7.5, dtype="float32")
    _, decoded = chain_round_trip([LE, "crc32c"], array)
    assert_identical(decoded, array)


# -- whole pipelines -----------------------------------------------------

BYTES_TO_BYTES = [
    Crc32cCodec(),
    GzipCodec(1),
    GzipCodec(9),
    ZstdCodec(0),
    ZstdCodec(-3, checksum=True),
    BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"),
    BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle", blocksize=256),
    BloscCodec(cname="blosclz", clevel=9, shuffle="noshuffle", typesize=1),
]


@st.composite
def pipelines(draw):
    """(array, codec list): transpose?, bytes (endian), 0-3 bytes-to-bytes codecs."""
    array = draw(dtypes_and_arrays(shapes(min_dims=1, max_dims=3, max_side=5)))
    codecs = []
    if draw(st.booleans()):
        codecs.append(TransposeCodec(draw(permutations_of(array.ndim))))
    codecs.append(BytesCodec(draw(st.sampled_from(["little", "big"]))))
    codecs.extend(draw(st.lists(st.sampled_from(BYTES_TO_BYTES), max_size=3)))
    return array, codecs


@settings(max_examples=100, deadline=None)
@given(case=pipelines())
def test_pipeline_round_trip(case):
    array, codecs = case
    chain = CodecChain(codecs)
    bound = chain.bind(spec_for(array))
    encoded = bound.encode(ArrayBytes.from_array(array))
    if bound.encoded_size is not None:
        assert len(encoded) == bound.encoded_size
    assert_identical(bound.decode(encoded).array, array)
    # The JSON form builds the same chain.
    assert CodecChain.from_json(chain.to_json()) == chain


@settings(max_examples=100, deadline=None)
@given(case=pipelines(), flips=st.lists(st.integers(0, 10**6), min_size=1, max_size=3), cut=st.booleans())
def test_corrupt_pipeline_input_is_a_decode_error_or_a_well_formed_chunk(case, flips, cut):
    array, codecs = case
    bound = CodecChain(codecs).bind(spec_for(array))
    original = bound.encode(ArrayBytes.from_array(array))
    encoded = bytearray(original)
    if cut:
        del encoded[flips[0] % (len(encoded) + 1):]
    elif encoded:
        for f in flips:
            encoded[f % len(encoded)] ^= 1 << (f % 8)
    try:
        decoded = bound.decode(bytes(encoded))
    except ChunkDecodeError:
        return
    assert decoded.shape == array.shape
    assert decoded.array.dtype == array.dtype
    if isinstance(codecs[-1], Crc32cCodec):
        assert bytes(encoded) == original  # an outermost checksum lets no change through


def test_checksum_error_surfaces_through_compressors():
    array = np.arange(100, dtype="int32")
    bound = CodecChain([BytesCodec("little"), Crc32cCodec(), GzipCodec(1)]).bind(spec_for(array))
    inner = Crc32cCodec().encode(array.tobytes(), None)
    tampered = GzipCodec(1).encode(inner[:-1] + bytes([inner[-1] ^ 1]), None)
    with pytest.raises(ChecksumError):
        bound.decode(tampered)
