"""The codec contract for ``zfp`` (zarrs' headerless zfp streams). Golden
bytes and lossy results are checked against zfpy 1.0.1, the one independent
writer installed (its stream after the 12-byte header it writes, which zarrs
leaves out); reversible mode must give the input back bit for bit; expert
mode has no independent writer, so it is only checked for consistency."""

from __future__ import annotations

import numpy as np
import zfpy
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.zfp import ZfpCodec, zfp_shape
from zarrpy.core.array_bytes import ArrayBytes

LOSSLESS_DTYPES = ("float32", "float64", "int32", "int64", "int8", "uint8", "int16", "uint16")


def zfpy_round_trip(codec: ZfpCodec, array: np.ndarray) -> np.ndarray:
    """zfpy's decode(encode(array)) in ``codec``'s mode (fixed_rate: zarrs'
    dims-3 rate is zfpy's ``rate * 4**3 / 4**dims``)."""
    field = array.reshape(zfp_shape(array.shape))
    params = dict(codec.params)
    if codec.mode == "fixed_rate":
        params["rate"] = params["rate"] * 4**3 / 4**field.ndim
    return zfpy.decompress_numpy(zfpy.compress_numpy(field, **params)).reshape(array.shape)


class TestZfpContract(CodecContract):
    codec_class = ZfpCodec
    configs = [{"mode": "reversible"}, {"mode": "fixed_precision", "precision": 12},
               {"mode": "fixed_accuracy", "tolerance": 0.25}, {"mode": "fixed_rate", "rate": 6.5},
               {"mode": "expert", "minbits": 1, "maxbits": 4000, "maxprec": 20, "minexp": -30}]
    min_side = 1
    golden = [
        # zfpy.compress_numpy(a, precision=14)[12:] (header stripped, trailing zero word dropped)
        Golden({"mode": "fixed_precision", "precision": 14}, "float32", (2, 3), [[1.5, 2.25, -3.0], [100.0, 0.001, 7.0]],
               "0d09836228046208002904040b80254094620922a5181200", "zfpy 1.0.1"),
    ]

    def specs(self, codec):
        dtypes = LOSSLESS_DTYPES if codec.mode in ("reversible", "fixed_precision", "expert") else ("float32", "float64")
        if codec.mode == "fixed_precision":
            dtypes = ("float32", "float64", "int32", "int64")  # zfpy's types, for the reference
        shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=6)
        return st.builds(spec_of, st.sampled_from(dtypes), shapes)

    def elements(self, spec, shape):
        dtype = spec.dtype.numpy
        if dtype.kind == "f":  # zfp takes finite values
            floats = st.floats(-1e6, 1e6, width=8 * dtype.itemsize)
            return hnp.arrays(dtype, tuple(shape), elements=floats).map(ArrayBytes.from_array)
        return super().elements(spec, shape)

    def expected_round_trip(self, codec, spec, chunk):
        if codec.mode == "reversible":
            return chunk
        if codec.mode == "expert":
            return ArrayBytes.from_array(codec.decode(codec.encode(chunk, spec), spec).array)
        return ArrayBytes.from_array(zfpy_round_trip(codec, chunk.array))

    def large_case(self, codec):
        spec = spec_of("float32", (16, 16))
        data = (np.arange(256, dtype=np.float32) / 7).reshape(16, 16)
        return spec, ArrayBytes.from_array(data), (slice(3, 5), np.array([9, 1]))
