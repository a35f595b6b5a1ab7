"""The codec contract for ``zarrs.vlen`` (golden bytes written out from the
layout in https://codec.zarrs.dev/array_to_bytes/vlen with ``struct``)."""

from __future__ import annotations

import numpy as np

from tests.codecs.contract import CodecContract, Golden, chunk_of, spec_of
from zarrpy.codecs.vlen import VlenCodec

RAW_DATA = {"index_data_type": "uint32", "index_location": "end"}
GZIP_DATA = {
    "data_codecs": [{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 1}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "crc32c"}],
}
ITEMS = ["a", "", "héllo"]


class TestVlenContract(CodecContract):
    codec_class = VlenCodec
    configs = [None, RAW_DATA, GZIP_DATA, {"index_location": "end", "index_codecs": [
        {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]}]
    dtypes = ("string", "variable_length_bytes")
    golden = [
        # [L: u64 LE = 32][offsets 0, 1, 1, 7 as u64 LE]["a" "héllo"]
        Golden(None, "string", (3,), ITEMS,
               "200000000000000000000000000000000100000000000000010000000000000007000000000000006168c3a96c6c6f",
               "struct.pack per the zarrs vlen layout"),
        # ["a" "héllo"][offsets 0, 1, 1, 7 as u32 LE][L: u64 LE = 16]
        Golden(RAW_DATA, "string", (3,), ITEMS,
               "6168c3a96c6c6f000000000100000001000000070000001000000000000000",
               "struct.pack per the zarrs vlen layout"),
    ]

    def expects_partial_decode(self, codec):
        # elements are read by byte range when the data part is the raw bytes
        return codec.to_config()["data_codecs"] == [{"name": "bytes"}]

    def large_case(self, codec):
        spec = spec_of("string", (300,))
        values = [f"element {i} " * (i % 5) for i in range(300)]
        return spec, chunk_of(values, spec), (np.array([201, 7, 8]),)
