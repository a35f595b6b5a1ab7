"""The codec contract for ``scale_offset`` (golden bytes from zarr-python 3.4.2's
``ScaleOffset(offset=3, scale=2)``)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.scale_offset import ScaleOffsetCodec
from zarrpy.core.array_bytes import ArrayBytes

INT_CONFIG = {"offset": 3, "scale": 2}
FLOAT_CONFIG = {"offset": 0.5, "scale": 4.0}


class TestScaleOffsetContract(CodecContract):
    codec_class = ScaleOffsetCodec
    configs = [None, INT_CONFIG, FLOAT_CONFIG]
    golden = [Golden(INT_CONFIG, "int16", (3,), [7, 10, 5], "08000e000400", "zarr-python 3.4.2")]

    def dtypes_for(self, codec):
        config = codec.to_config()
        if config == INT_CONFIG:
            return ("int16", "int32", "int64")
        if config == FLOAT_CONFIG:
            return ("float16", "float32", "float64")
        return ("uint8", "int16", "int64", "uint64", "float32", "float64")

    def specs(self, codec):
        shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)
        return st.builds(spec_of, st.sampled_from(self.dtypes_for(codec)), shapes)

    def elements(self, spec, shape):
        if spec.dtype.numpy.kind == "i" and spec.dtype.name != "int8":
            return hnp.arrays(spec.dtype.numpy, tuple(shape), elements=st.integers(-1000, 1000)).map(ArrayBytes.from_array)
        return super().elements(spec, shape)

    def expected_round_trip(self, codec, spec, chunk):
        x = chunk.array
        if x.dtype.kind != "f":
            return chunk
        config = codec.to_config() or {}
        dt = x.dtype
        off, sc = dt.type(config.get("offset", 0)), dt.type(config.get("scale", 1))
        with np.errstate(all="ignore"):  # the spec's formulas in the type (-0.0 / 1 + 0 is +0.0)
            return ArrayBytes.from_array(np.asarray(((x - off) * sc) / sc + off))

    def expects_partial_decode(self, codec):
        return True

    def large_case(self, codec):
        dtype = self.dtypes_for(codec)[1]
        spec = spec_of(dtype, (64, 64))
        return spec, ArrayBytes.from_array((np.arange(64 * 64) % 500).astype(dtype).reshape(64, 64)), (slice(3, 5), np.array([40, 10, 11]))
