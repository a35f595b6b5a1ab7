"""The codec contract for ``zstd`` (golden bytes from numcodecs 0.17.1)."""

from __future__ import annotations

from tests.codecs.contract import CodecContract, Golden
from zarrpy.codecs.zstd import ZstdCodec

DATA = list(b"zarr " * 20)


class TestZstdContract(CodecContract):
    codec_class = ZstdCodec
    configs = [{"level": 0, "checksum": False}, {"level": 3, "checksum": True}, {"level": -1}, {"level": 22}, None]
    golden = [
        # numcodecs.Zstd(level=0).encode(b"zarr " * 20)
        Golden({"level": 0, "checksum": False}, "uint8", (100,), DATA,
               "28b52ffd2064650000287a6172722001008ca96801", "numcodecs 0.17.1"),
        # numcodecs.Zstd(level=3, checksum=True).encode(b"zarr " * 20)
        Golden({"level": 3, "checksum": True}, "uint8", (100,), DATA,
               "28b52ffd2464650000287a6172722001008ca968019f14ba45", "numcodecs 0.17.1"),
    ]
