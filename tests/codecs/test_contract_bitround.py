"""The codec contract for ``bitround`` (golden bytes and every lossy result
checked against numcodecs 0.17.1's ``BitRound``)."""

from __future__ import annotations

import numcodecs
import numpy as np

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.bitround import BitRoundCodec
from zarrpy.core.array_bytes import ArrayBytes

_MANTISSA = {"float16": 10, "float32": 23, "float64": 52}


def numcodecs_bitround(keepbits: int, array: np.ndarray) -> np.ndarray:
    """numcodecs' result, complex parts rounded one by one, keepbits past the
    mantissa keeping the value (numcodecs refuses those)."""
    flat = np.ascontiguousarray(array).reshape(-1)
    parts = flat.view(f"f{flat.dtype.itemsize // 2}") if flat.dtype.kind == "c" else flat
    if keepbits >= _MANTISSA[parts.dtype.name]:
        return array.copy()
    out = np.asarray(numcodecs.BitRound(keepbits).encode(parts)).view(parts.dtype)
    return out.view(array.dtype).reshape(array.shape)


class TestBitRoundContract(CodecContract):
    codec_class = BitRoundCodec
    configs = [{"keepbits": 0}, {"keepbits": 3}, {"keepbits": 10}, {"keepbits": 23}, {"keepbits": 60}]
    dtypes = ("float16", "float32", "float64", "complex64", "complex128")
    golden = [
        # numcodecs.BitRound(keepbits=3).encode(numpy.array([3.14159, -2.71828, 0.5], dtype="<f4"))
        Golden({"keepbits": 3}, "float32", (3,), [3.14159, -2.71828, 0.5], "00005040000030c00000003f",
               "numcodecs 0.17.1"),
    ]

    def expected_round_trip(self, codec, spec, chunk):
        return ArrayBytes.from_array(numcodecs_bitround(codec.keepbits, chunk.array))

    def expects_partial_decode(self, codec):
        return True  # decoding is the identity: selections pass through to ``bytes``

    def large_case(self, codec):
        spec = spec_of("float32", (64, 64))
        data = (np.arange(64 * 64, dtype=np.float32) / 7).reshape(64, 64)
        return spec, ArrayBytes.from_array(data), (slice(3, 5), np.array([40, 10, 11]))
