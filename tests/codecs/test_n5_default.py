"""n5_default beyond the contract: block headers that differ from the chunk
(truncated and larger blocks), refused modes and ranks, hostile headers, and
configurations N5 cannot hold."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tests.codecs.contract import spec_of
from zarrpy.codecs.n5_default import N5DefaultCodec
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import ChunkDecodeError, CodecError

T2 = {"name": "transpose", "configuration": {"order": [1, 0]}}
BIG = {"name": "bytes", "configuration": {"endian": "big"}}


def block(shape, values: np.ndarray, mode: int = 0) -> bytes:
    return struct.pack(f">HH{len(shape)}I", mode, len(shape), *shape) + np.asarray(values).astype(">i2").T.tobytes()


def test_truncated_blocks_are_padded_and_larger_ones_cut():
    codec = N5DefaultCodec([T2, BIG])
    spec = spec_of("int16", (3, 4), fill=-1)
    small = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = codec.decode(block((2, 3), small), spec).array
    assert out.tolist() == [[0, 1, 2, -1], [3, 4, 5, -1], [-1, -1, -1, -1]]
    large = np.arange(20, dtype=np.int16).reshape(4, 5)
    assert codec.decode(block((4, 5), large), spec).array.tolist() == large[:3, :4].tolist()


def test_other_modes_ranks_and_short_or_hostile_headers_are_refused():
    codec = N5DefaultCodec([T2, BIG])
    spec = spec_of("int16", (3, 4))
    with pytest.raises(ChunkDecodeError, match="mode 1 \\(varlength\\)"):
        codec.decode(block((3, 4), np.zeros((3, 4)), mode=1), spec)
    with pytest.raises(ChunkDecodeError, match="3 dimensions, the array 2"):
        codec.decode(struct.pack(">HH3I", 0, 3, 1, 1, 1) + b"\0\0", spec)
    with pytest.raises(ChunkDecodeError, match="too short"):
        codec.decode(b"\0\0", spec)
    with pytest.raises(ChunkDecodeError, match="more than the chunk"):
        codec.decode(struct.pack(">HH2I", 0, 2, 2**32 - 1, 2**32 - 1), spec)
    with pytest.raises(ChunkDecodeError, match="codec 'n5_default'"):
        codec.decode(block((3, 4), np.zeros((3, 4)))[:-3], spec)


@pytest.mark.parametrize(
    "codecs, match",
    [
        ([BIG], "start with one 'transpose'"),
        ([T2, {"name": "bytes", "configuration": {"endian": "little"}}], "must be \"big\""),
        ([T2, BIG, {"name": "gzip"}, {"name": "crc32c"}], "at most one bytes-to-bytes"),
        ("transpose", "must be a list of codecs"),
    ],
)
def test_bad_configuration_names_codec_and_field(codecs, match):
    with pytest.raises(CodecError, match=f"codec 'n5_default'.*{match}"):
        codec_from_json({"name": "n5_default", "configuration": {"codecs": codecs}})
    with pytest.raises(CodecError, match="codec 'n5_default'.*unknown"):
        codec_from_json({"name": "n5_default", "configuration": {"codecs": [T2, BIG], "mode": 0}})


def test_transpose_must_reverse_every_dimension():
    codec = N5DefaultCodec([{"name": "transpose", "configuration": {"order": [0, 1]}}, BIG])
    with pytest.raises(CodecError, match=r"order must be \[1, 0\]"):
        codec.resolve(spec_of("int16", (2, 2)))


def test_creating_checks_what_n5_can_hold():
    codec = N5DefaultCodec([T2, BIG])
    for dtype in ("float16", "bool", "complex64"):
        with pytest.raises(CodecError, match="N5 has no data type"):
            codec.evolve(spec_of(dtype, (2, 2)))
    with pytest.raises(CodecError, match="no N5 compression"):
        N5DefaultCodec([T2, BIG, {"name": "crc32c"}]).evolve(spec_of("int16", (2, 2)))
    # one-byte types may leave endian out
    one_byte = N5DefaultCodec([T2, {"name": "bytes"}])
    spec = spec_of("uint8", (2, 3))
    data = np.arange(6, dtype=np.uint8).reshape(2, 3)
    assert one_byte.decode(one_byte.encode(ArrayBytes.from_array(data), spec), spec).array.tolist() == data.tolist()


@pytest.mark.parametrize("module", ["n5_default", "conditional", "cast_value", "scale_offset", "bitround"])
def test_module_doctests(module):
    import doctest
    import importlib

    assert doctest.testmod(importlib.import_module(f"zarrpy.codecs.{module}")).failed == 0
