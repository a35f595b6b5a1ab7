"""The codec contract for ``blosc`` (golden bytes from numcodecs 0.17.1)."""

from __future__ import annotations

from tests.codecs.contract import CodecContract, Golden
from zarrpy.codecs.blosc import BloscCodec

DATA = [i % 7 for i in range(2000)]  # uint16: 4000 bytes


class TestBloscContract(CodecContract):
    codec_class = BloscCodec
    # numcodecs < 0.17 compresses large frames with blosc's threads from the
    # main thread: block offsets then follow the order the blocks finish.
    deterministic_encode = False
    configs = [
        {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"},
        {"cname": "zstd", "clevel": 5, "shuffle": "bitshuffle", "typesize": 2, "blocksize": 0},
        {"cname": "blosclz", "clevel": 5, "shuffle": "noshuffle", "typesize": 1},
        {"cname": "zlib", "clevel": 1, "shuffle": "shuffle", "typesize": 4, "blocksize": 256},
        {"cname": "lz4hc", "clevel": 9, "shuffle": "shuffle", "typesize": 8},
    ]
    golden = [
        # numcodecs.Blosc(cname, clevel=5, shuffle, blocksize=0).encode(numpy.arange(2000, dtype="<u2") % 7)
        Golden({"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}, "uint16", (2000,), DATA,
               "02012102a00f0000a00f00004600000014000000180000007f000102030405060700ffffffffffffffb850000102"
               "0304120000001f000100ffffffffffffffbe500000000000", "numcodecs 0.17.1"),
        Golden({"cname": "zstd", "clevel": 5, "shuffle": "bitshuffle", "typesize": 2, "blocksize": 0}, "uint16",
               (2000,), DATA,
               "02019402a00f0000a00f000048000000140000003000000028b52ffd60a00e350100b02a954aa552a9544c2693c9"
               "64329970381c0e87c3e1000400aec4f9020e28030794818b2a46", "numcodecs 0.17.1"),
        Golden({"cname": "blosclz", "clevel": 5, "shuffle": "noshuffle", "typesize": 2}, "uint16", (2000,), DATA,
               "02010002a00f0000a00f000056000000140000001d0000002d0000010002000300040005000600e0ffffffffffff"
               "ffbd0d020005001d0000002d0600000001000200030004000500e0ffffffffffffffbd0d02000400",
               "numcodecs 0.17.1"),
    ]

    def from_v2(self, codec, v2):
        # V2 blosc has no typesize: it is the item size of what blosc receives.
        return type(codec).from_v2_config(v2, typesize=codec.typesize or 1)

    def expected_from_v2(self, codec):
        return codec if codec.typesize is not None else codec.from_config({**codec.to_config(), "typesize": 1})
