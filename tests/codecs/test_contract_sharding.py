"""The codec contract for ``sharding_indexed`` (golden bytes from zarr-python 3.4.2)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.codecs.contract import CodecContract, Golden, chunk_of, spec_of
from zarrpy.codecs.sharding import ShardingCodec

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
SHARD = [[1, 2, 0, 0], [0, 0, 0, 0], [7, 0, 0, 0], [0, 0, 0, 65535]]  # uint16 (4, 4)


class TestShardingContract(CodecContract):
    codec_class = ShardingCodec
    configs = [
        {"chunk_shape": [2, 2]},
        {"chunk_shape": [2, 3], "codecs": [BE, {"name": "gzip", "configuration": {"level": 1}}],
         "index_location": "start"},
        {"chunk_shape": [1, 2, 2], "codecs": [{"name": "transpose", "configuration": {"order": [2, 1, 0]}}, LE,
                                              {"name": "crc32c"}], "index_codecs": [BE]},
        {"chunk_shape": [4], "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}]},
        {"chunk_shape": [2], "codecs": [{"name": "vlen-utf8"}]},
        {"chunk_shape": [3], "codecs": [{"name": "zarrs.vlen"}], "index_location": "start"},
    ]
    keeps_fill = False  # all-fill inner chunks are never stored
    golden = [
        # zarr.create_array(uint16 (4, 4), chunks=(2, 2), shards=(4, 4), serializer=BytesCodec()); "c/0/0"
        Golden({"chunk_shape": [2, 2]}, "uint16", (4, 4), SHARD,
               "01000200000000000700000000000000000000000000ffff00000000000000000800000000000000ffffffffffffffff"
               "ffffffffffffffff0800000000000000080000000000000010000000000000000800000000000000002c1579",
               "zarr-python 3.4.2"),
        # zarr.create_array(uint16 (4, 4), serializer=ShardingCodec(chunk_shape=(2, 2), index_location="start"))
        Golden({"chunk_shape": [2, 2], "index_location": "start"}, "uint16", (4, 4), SHARD,
               "44000000000000000800000000000000ffffffffffffffffffffffffffffffff4c000000000000000800000000000000"
               "5400000000000000080000000000000070dbd5fb01000200000000000700000000000000000000000000ffff",
               "zarr-python 3.4.2"),
    ]

    def dtype_of(self, codec):
        inner = codec.codecs.array_to_bytes
        return ("string",) if inner.name in ("vlen-utf8", "zarrs.vlen") else ("uint16", "float64", "int8", "bool")

    def specs(self, codec):
        grid = st.tuples(*(st.integers(0, 3) for _ in codec.chunk_shape))
        shapes = grid.map(lambda g: tuple(n * c for n, c in zip(g, codec.chunk_shape)))
        return st.builds(spec_of, st.sampled_from(self.dtype_of(codec)), shapes)

    def expects_partial_decode(self, codec):
        return True

    def large_case(self, codec):
        shape = tuple(8 * c for c in codec.chunk_shape)
        dtype = self.dtype_of(codec)[0]
        spec = spec_of(dtype, shape)
        n = int(np.prod(shape))
        values = [f"v{i}" for i in range(n)] if dtype == "string" else (np.arange(n) % 1000 + 1).reshape(shape)
        return spec, chunk_of(values, spec), tuple(slice(0, c) for c in codec.chunk_shape)
