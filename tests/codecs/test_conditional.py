"""conditional beyond the contract: the header, write-time decisions, and refusals."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from tests.codecs.contract import spec_of
from zarrpy.codecs.conditional import ConditionalCodec
from zarrpy.codecs.registry import codec_from_json
from zarrpy.errors import ChunkDecodeError, CodecError

SPEC = spec_of("uint8", (64,))
GZIP = {"name": "gzip", "configuration": {"level": 5}}
CRC = {"name": "crc32c"}


def test_compress_if_smaller_applies_a_codec_only_when_it_pays():
    codec = ConditionalCodec([GZIP], decide="compress_if_smaller")
    zeros = bytes(64)
    random = np.random.default_rng(0).integers(0, 256, 64, dtype=np.uint8).tobytes()
    packed = codec.encode(zeros, SPEC)
    assert packed[0] == 1 and gzip.decompress(packed[1:]) == zeros
    raw = codec.encode(random, SPEC)
    assert raw == b"\x00" + random
    assert codec.decode(packed, SPEC) == zeros and codec.decode(raw, SPEC) == random


def test_a_function_decides_per_codec_and_decoding_undoes_them_in_reverse():
    codec = ConditionalCodec([GZIP, CRC], header_bits=16, decide=lambda i, c, data, encoded: c.name == "crc32c")
    out = codec.encode(b"abc", SPEC)
    assert out[:2] == b"\x02\x00" and out[2:5] == b"abc" and len(out) == 9
    both = ConditionalCodec([GZIP, CRC], decide="always").encode(b"abc", SPEC)
    assert both[0] == 3 and ConditionalCodec([GZIP, CRC]).decode(both, SPEC) == b"abc"


def test_the_default_decision_is_the_specs_mask_of_zeros():
    assert codec_from_json({"name": "conditional", "configuration": {"codecs": [GZIP]}}).encode(b"xyz", SPEC) == b"\x00xyz"


def test_headers_naming_codecs_it_does_not_have_are_refused():
    codec = ConditionalCodec([GZIP])
    with pytest.raises(ChunkDecodeError, match="past the 1 configured"):
        codec.decode(b"\x02abc", SPEC)
    with pytest.raises(ChunkDecodeError, match="shorter than the 1-byte header"):
        codec.decode(b"", SPEC)
    with pytest.raises(ChunkDecodeError, match=r"codec 'conditional': 'codecs\[0\]'"):
        codec.decode(b"\x01not gzip", SPEC)


@pytest.mark.parametrize(
    "config, match",
    [
        ({"codecs": [{"name": "bytes"}]}, r"'codecs\[0\]' \('bytes'\) is not a bytes-to-bytes"),
        ({"codecs": [GZIP], "header_bits": 4}, "multiple of 8"),
        ({"codecs": [GZIP] * 9, "header_bits": 8}, "at least the number of codecs"),
        ({"codecs": GZIP}, "must be a list"),
        ({"codecs": [], "mask": 1}, "unknown"),
        ({"codecs": [{"name": "nope"}]}, r"'codecs\[0\]'"),
    ],
)
def test_bad_configuration_names_codec_and_field(config, match):
    with pytest.raises(CodecError, match=f"codec 'conditional'.*{match}"):
        codec_from_json({"name": "conditional", "configuration": config})
