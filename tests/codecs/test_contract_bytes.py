"""The codec contract for ``bytes`` (golden bytes from zarr-python 3.4.2)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.bytes import BytesCodec
from zarrpy.core.array_bytes import ArrayBytes


class TestBytesContract(CodecContract):
    codec_class = BytesCodec
    configs = [{"endian": "little"}, {"endian": "big"}, None]
    golden = [
        # zarr.create_array(int16 (2, 3), serializer=BytesCodec(endian=...)); chunk "c/0/0"
        Golden({"endian": "little"}, "int16", (2, 3), [[-2, -1, 0], [1, 2, 3]], "feffffff0000010002000300",
               "zarr-python 3.4.2"),
        Golden({"endian": "big"}, "int16", (2, 3), [[-2, -1, 0], [1, 2, 3]], "fffeffff0000000100020003",
               "zarr-python 3.4.2"),
        # no endian: 1-byte types only; the bytes are the values
        Golden(None, "uint8", (3,), [0, 127, 255], "007fff", "the spec (one byte per element)"),
    ]

    def specs(self, codec):
        if codec.endian is None:
            shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)
            return st.builds(spec_of, st.sampled_from(["bool", "int8", "uint8"]), shapes)
        return super().specs(codec)

    def expects_partial_decode(self, codec):
        return True

    def large_case(self, codec):
        if codec.endian is None:
            spec = spec_of("uint8", (64, 64))
            return spec, ArrayBytes.from_array((np.arange(4096) % 251).astype("uint8").reshape(64, 64)), (
                slice(1, 3), np.array([5, 2]))
        return super().large_case(codec)
