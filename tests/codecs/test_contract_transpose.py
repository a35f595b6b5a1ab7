"""The codec contract for ``transpose`` (golden bytes from zarr-python 3.4.2)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.transpose import TransposeCodec
from zarrpy.core.array_bytes import ArrayBytes


class TestTransposeContract(CodecContract):
    codec_class = TransposeCodec
    configs = [{"order": [1, 0]}, {"order": [2, 0, 1]}, {"order": [0]}, {"order": []}, {"order": [0, 1]}]
    dtypes = ("uint8", "int32", "float64", "complex64", "bool", "string", "variable_length_bytes")
    golden = [
        # zarr.create_array(<i4 (2, 3), filters=[TransposeCodec(order=(1, 0))], serializer=BytesCodec()); "c/0/0"
        Golden({"order": [1, 0]}, "int32", (2, 3), [[-7, 993, 1993], [2993, 3993, 4993]],
               "f9ffffffb10b0000e1030000990f0000c907000081130000", "zarr-python 3.4.2"),
    ]

    def specs(self, codec):
        shapes = hnp.array_shapes(min_dims=len(codec.order), max_dims=len(codec.order), min_side=0, max_side=5)
        return st.builds(spec_of, st.sampled_from(self.dtypes), shapes)

    def expects_partial_decode(self, codec):
        return True  # the selection, permuted, read by range through `bytes`

    def large_case(self, codec):
        n = len(codec.order)
        spec = spec_of("uint16", (8,) * n)
        data = (np.arange(8**n, dtype=np.uint16) * 3).reshape(spec.shape)
        return spec, ArrayBytes.from_array(data), tuple(slice(1, 3) for _ in range(n))
