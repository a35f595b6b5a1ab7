"""The codec contract for ``gzip`` (golden bytes from numcodecs 0.17.1)."""

from __future__ import annotations

from tests.codecs.contract import CodecContract, Golden
from zarrpy.codecs.gzip import GzipCodec

DATA = list(b"zarr " * 20)
# A gzip header holds the mtime (bytes 4-7; numcodecs writes the time, zarrpy 0)
# and the OS (byte 9; numcodecs/Python's gzip writes 255, zlib 3): not compared.
HEADER_VARIES = (4, 5, 6, 7, 9)


class TestGzipContract(CodecContract):
    codec_class = GzipCodec
    configs = [{"level": 1}, {"level": 5}, {"level": 9}, {"level": 0}, None]
    golden = [
        # numcodecs.GZip(level=...).encode(b"zarr " * 20), mtime zeroed
        Golden({"level": 1}, "uint8", (100,), DATA, "1f8b08000000000004ffab4a2c2a52a8a22d01001a87fbd964000000",
               "numcodecs 0.17.1", HEADER_VARIES),
        Golden({"level": 9}, "uint8", (100,), DATA, "1f8b08000000000002ffab4a2c2a52a8a22d01001a87fbd964000000",
               "numcodecs 0.17.1", HEADER_VARIES),
    ]
