"""The codec contract for ``cast_value`` (golden bytes from cast-value-rs 0.5.1,
the backend zarr-python's ``cast_value`` runs)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.cast_value import CastValueCodec
from zarrpy.core.array_bytes import ArrayBytes

LOSSY = {"data_type": "uint8", "rounding": "towards-zero", "out_of_range": "clamp",
         "scalar_map": {"encode": [["NaN", 0], ["Infinity", 255], ["-Infinity", 0]]}}
SOURCES = {"float64": ("uint8", "int16", "int32", "uint32", "float16", "float32"),
           "int64": ("int8", "int16", "int32", "uint8", "uint16", "uint32"),
           "uint8": ("float32", "float64")}  # fmt: skip


class TestCastValueContract(CodecContract):
    codec_class = CastValueCodec
    configs = [{"data_type": "float64"}, {"data_type": "int64", "out_of_range": "wrap"}, LOSSY]
    golden = [Golden(LOSSY, "float64", (3,), [1.7, -3.0, 300.0], "0100ff", "cast-value-rs 0.5.1")]

    def specs(self, codec):
        shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)
        return st.builds(spec_of, st.sampled_from(SOURCES[codec.data_type.name]), shapes)

    def expected_round_trip(self, codec, spec, chunk):
        x = chunk.array
        if codec.data_type.name != "uint8":  # exact widening; NaNs come back as the hardware's float64 round trip
            return ArrayBytes.from_array(x.astype(codec.data_type.numpy).astype(x.dtype))
        v = x.astype(np.float64)
        with np.errstate(invalid="ignore"):
            out = np.where(np.isnan(v), 0, np.where(np.isposinf(v), 255, np.clip(np.trunc(np.nan_to_num(v, posinf=0, neginf=0)), 0, 255)))
        return ArrayBytes.from_array((out + 0.0).astype(x.dtype))

    def expects_partial_decode(self, codec):
        return True

    def large_case(self, codec):
        source = SOURCES[codec.data_type.name][-1 if codec.data_type.name != "int64" else 2]
        spec = spec_of(source, (64, 64))
        data = (np.arange(64 * 64) % 200).astype(source).reshape(64, 64)
        return spec, ArrayBytes.from_array(data), (slice(3, 5), np.array([40, 10, 11]))
