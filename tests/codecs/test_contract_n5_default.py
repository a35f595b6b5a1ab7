"""The codec contract for ``n5_default`` (golden bytes built by hand from the
N5 4.0.0 block format the registry quotes: big-endian mode 0, rank, dims,
then the elements in F order, big-endian)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.n5_default import N5DefaultCodec
from zarrpy.core.array_bytes import ArrayBytes


def config(ndim, *extra):
    return {"codecs": [{"name": "transpose", "configuration": {"order": list(range(ndim - 1, -1, -1))}},
                       {"name": "bytes", "configuration": {"endian": "big"}}, *extra]}


RAW_2D = config(2)


class TestN5DefaultContract(CodecContract):
    codec_class = N5DefaultCodec
    configs = [RAW_2D, config(1, {"name": "gzip", "configuration": {"level": 5}}),
               config(3, {"name": "zstd", "configuration": {"level": 3, "checksum": False}})]
    dtypes = ("uint8", "int16", "uint32", "int64", "float32", "float64")
    golden = [Golden(RAW_2D, "int16", (2, 3), [[1, 2, 3], [4, 5, 6]],
                     "0000000200000002000000030001000400020005000300 06".replace(" ", ""), "N5 block format, by hand")]

    def specs(self, codec):
        ndim = len(codec.codecs.array_to_array[0].order)
        shapes = hnp.array_shapes(min_dims=ndim, max_dims=ndim, min_side=0, max_side=5)
        return st.builds(spec_of, st.sampled_from(self.dtypes), shapes)

    def large_case(self, codec):
        ndim = len(codec.codecs.array_to_array[0].order)
        shape = {1: (4096,), 2: (64, 64), 3: (16, 16, 16)}[ndim]
        spec = spec_of("uint16", shape)
        sel = tuple([slice(3, 5)] + [np.array([10, 2, 3])] * (ndim - 1))
        return spec, ArrayBytes.from_array((np.arange(4096, dtype=np.uint16) * 7).reshape(shape)), sel
