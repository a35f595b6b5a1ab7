"""The codec contract for ``conditional`` (golden bytes by hand from the
specification: header byte, then the data after the codecs its bits name;
``crc32c`` appends the CRC32C, little-endian). Two classes: codecs read from
metadata (the spec's default decision: no nested codec applied) and codecs
told to apply every nested codec."""

from __future__ import annotations

from tests.codecs.contract import CodecContract, Golden
from zarrpy.codecs.conditional import ConditionalCodec

CRC = {"codecs": [{"name": "crc32c"}]}
CONFIGS = [
    CRC,
    {"codecs": [{"name": "crc32c"}, {"name": "gzip", "configuration": {"level": 5}}], "header_bits": 16},
    {"codecs": [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]},
    {"codecs": []},
]


class TestConditionalContract(CodecContract):
    codec_class = ConditionalCodec
    configs = CONFIGS
    golden = [Golden(CRC, "uint8", (3,), [1, 2, 3], "00010203", "conditional spec, mask 0 (by hand)")]


class TestConditionalAlwaysContract(TestConditionalContract):
    codec_class = ConditionalCodec
    golden = [Golden(CRC, "uint8", (3,), [1, 2, 3], "010102031ef230f1", "conditional spec, mask 1, CRC32C (by hand)")]

    def make(self, config):
        return ConditionalCodec.from_config(config).with_decision("always")
