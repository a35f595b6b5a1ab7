"""The codec contract for ``numcodecs.vlen-array`` (golden bytes from numcodecs 0.17.1)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.codecs.contract import CodecContract, Golden, chunk_of, spec_of
from zarrpy.codecs.vlen_array import VlenArrayCodec
from zarrpy.core.array_bytes import ArrayBytes


class TestVlenArrayContract(CodecContract):
    codec_class = VlenArrayCodec
    configs = [{"dtype": "<i2"}, {"dtype": ">i4"}, {"dtype": "<f8"}, {"dtype": "|u1"}, {"dtype": ">c8"}]
    dtypes = ("variable_length_bytes",)
    golden = [
        # numcodecs.VLenArray("<i2").encode([[1, -2], [], [300]]); decoded elements are little-endian bytes
        Golden({"dtype": "<i2"}, "variable_length_bytes", (3,), [bytes.fromhex("0100feff"), b"", bytes.fromhex("2c01")],
               "03000000040000000100feff00000000020000002c01", "numcodecs 0.17.1"),
        # numcodecs.VLenArray(">i4").encode([[1, 2**20], [-1]])
        Golden({"dtype": ">i4"}, "variable_length_bytes", (2,), [bytes.fromhex("0100000000001000"), bytes.fromhex("ffffffff")],
               "0200000008000000000000010010000004000000ffffffff", "numcodecs 0.17.1"),
    ]

    def elements(self, spec, shape):
        # vectors of whole 8-byte groups fit every configured item size
        n = int(np.prod(shape, dtype=np.int64))
        vector = st.integers(0, 3).flatmap(lambda k: st.binary(min_size=8 * k, max_size=8 * k))
        return st.lists(vector, min_size=n, max_size=n).map(lambda xs: ArrayBytes.from_bytes_list(xs, tuple(shape)))

    def large_case(self, codec):
        spec = spec_of("variable_length_bytes", (100,))
        return spec, chunk_of([bytes(range(8)) * (i % 4) for i in range(100)], spec), (slice(3, 5),)
