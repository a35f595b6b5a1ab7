"""The codec contract for ``crc32c`` (golden bytes from numcodecs 0.17.1)."""

from __future__ import annotations

from tests.codecs.contract import CodecContract, Golden
from zarrpy.codecs.crc32c import Crc32cCodec


class TestCrc32cContract(CodecContract):
    codec_class = Crc32cCodec
    configs = [None, {}]
    golden = [
        # numcodecs.CRC32C().encode(bytes(range(16)) + b"zarrpy")
        Golden(None, "uint8", (22,), list(bytes(range(16)) + b"zarrpy"),
               "000102030405060708090a0b0c0d0e0f7a61727270794e847943", "numcodecs 0.17.1"),
    ]

    def expects_partial_decode(self, codec):
        return True  # ranges pass through (unchecked) to the bytes codec
