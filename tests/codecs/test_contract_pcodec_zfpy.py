"""The codec contracts for the numcodecs adapters of the codecs that live in
other packages: ``numcodecs.pcodec`` (pcodec) and ``numcodecs.zfpy`` (zfpy).
Both packages are in the test extra, so these run. Golden bytes are
numcodecs 0.17.1's own output (pcodec 1.1.0, zfpy 1.0.1); zfpy's lossy
results are numcodecs' ``decode(encode(x))``."""

from __future__ import annotations

import numcodecs
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.registry import get_codec_class
from zarrpy.core.array_bytes import ArrayBytes


class TestPcodecContract(CodecContract):
    codec_class = get_codec_class("numcodecs.pcodec")
    configs = [{"level": 8}, {"level": 3, "delta_encoding_order": 1, "mode_spec": "classic", "delta_spec": "try_consecutive"}]
    dtypes = ("int32", "int64", "uint32", "uint64", "float32", "float64")
    golden = [
        # numcodecs.get_codec({"id": "pcodec", "level": 8}).encode(numpy.array([1, 5, -3, 100, 7, 7, 7, 2**40], "<i8"))
        Golden({"level": 8}, "int64", (8,), [1, 5, -3, 100, 7, 7, 7, 2**40],
               "70636f210300030204010407000000230070ffffffffffffffdf01000000000001008000920a2020006785420100",
               "numcodecs 0.17.1 + pcodec 1.1.0"),
    ]


class TestZfpyContract(CodecContract):
    codec_class = get_codec_class("numcodecs.zfpy")
    configs = [{"mode": 3, "precision": 14}, {"mode": 4, "tolerance": 0.5}, {"mode": 2, "rate": 12}]
    dtypes = ("float32", "float64")
    golden = [
        # numcodecs.get_codec({"id": "zfpy", "mode": 3, "precision": 14}).encode(a): header, then the stream
        Golden({"mode": 3, "precision": 14}, "float32", (2, 3), [[1.5, 2.25, -3.0], [100.0, 0.001, 7.0]],
               "7a667005260000100000d0800d09836228046208002904040b80254094620922a518120000000000",
               "numcodecs 0.17.1 + zfpy 1.0.1"),
    ]

    def specs(self, codec):
        shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=6)  # zfpy: 1-4 dims
        return st.builds(spec_of, st.sampled_from(self.dtypes), shapes)

    def elements(self, spec, shape):
        floats = st.floats(-1e6, 1e6, width=8 * spec.dtype.numpy.itemsize)
        return hnp.arrays(spec.dtype.numpy, tuple(shape), elements=floats).map(ArrayBytes.from_array)

    def expected_round_trip(self, codec, spec, chunk):
        ref = numcodecs.get_codec({"id": "zfpy", **codec.to_config()})
        return ArrayBytes.from_array(np.asarray(ref.decode(ref.encode(chunk.array))).reshape(spec.shape))

    def large_case(self, codec):
        spec = spec_of("float64", (16, 16))
        data = (np.arange(256, dtype=np.float64) / 7).reshape(16, 16)
        return spec, ArrayBytes.from_array(data), (slice(3, 5), np.array([9, 1]))
