"""The codec contract for ``packbits`` (golden bytes: chunks the zarrs
pipeline wrote, ``spec-fixtures/zarrs-codecs/``); lossy bit ranges are
checked against a per-component model of the spec written here with Python
integers."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.packbits import PackBitsCodec
from zarrpy.core.array_bytes import ArrayBytes

ZARRS = "zarrs-python 0.2.3 (zarrs pipeline)"
ALL_DTYPES = ("bool", "uint8", "int8", "int16", "uint16", "int32", "uint64", "int64", "float16", "float32",
              "float64", "complex64", "complex128")


def component_bits(dtype: np.dtype) -> tuple[int, int]:
    """(bits per component, components per element) per the spec."""
    if dtype.kind == "b":
        return 1, 1
    if dtype.kind == "c":
        return 4 * dtype.itemsize, 2
    return 8 * dtype.itemsize, 1


def model_round_trip(array: np.ndarray, first: int, last: int) -> np.ndarray:
    """What decoding gives per the spec: bits first..last of each component
    kept in place, sign-extended to N bits for signed integers, the rest 0."""
    n, _ = component_bits(array.dtype)
    width = max(1, n // 8)
    raw = np.ascontiguousarray(array).reshape(-1).astype(array.dtype.newbyteorder("<")).view(np.uint8)
    out = bytearray()
    for i in range(0, raw.size, width):
        value = int.from_bytes(raw[i : i + width].tobytes(), "little")
        kept = (value >> first) & ((1 << (last - first + 1)) - 1)
        if array.dtype.kind == "i" and kept >> (last - first):
            kept -= 1 << (last - first + 1)
        out += ((kept << first) % (1 << (8 * width))).to_bytes(width, "little")
    return np.frombuffer(bytes(out), dtype=array.dtype.newbyteorder("<")).astype(array.dtype).reshape(array.shape)


class TestPackBitsContract(CodecContract):
    codec_class = PackBitsCodec
    configs = [{}, {"padding_encoding": "first_byte"}, {"padding_encoding": "last_byte"},
               {"first_bit": 2, "last_bit": 6}, {"padding_encoding": "first_byte", "first_bit": 3, "last_bit": 12},
               {"padding_encoding": "last_byte", "last_bit": 0}]
    dtypes = ALL_DTYPES
    golden = [
        # zarrs pipeline, spec-fixtures/zarrs-codecs/packbits_bool chunk c/0/0 (12 bits)
        Golden({}, "bool", (3, 4), [[True, False, False, True], [False, False, True, False],
                                    [False, True, False, False]], "4902", ZARRS),
        # packbits_bool_first_byte chunk c/0/0: 4 padding bits, said first
        Golden({"padding_encoding": "first_byte"}, "bool", (3, 4),
               [[False, True, False, False], [False, False, True, False], [True, False, True, False]], "044205",
               ZARRS),
        # packbits_int16_bits_2_12 chunk c/0/0: 11 bits per value, 4 padding bits, said last
        Golden({"padding_encoding": "last_byte", "first_bit": 2, "last_bit": 12}, "int16", (4, 3),
               [[-4084, -4056, -4028], [-3944, -3916, -3888], [-3804, -3776, -3748], [-3664, -3636, -3608]],
               "035460044dd8421a26118a5764e31cf50804", ZARRS),
        # packbits_uint8_3bits chunk c/0
        Golden({"first_bit": 0, "last_bit": 2}, "uint8", (4,), [3, 2, 1, 0], "5300", ZARRS),
    ]

    def specs(self, codec):
        need = 1 + (codec.last_bit or 0)
        dtypes = [d for d in self.dtypes if component_bits(np.dtype(d))[0] >= need]
        shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)
        return st.builds(spec_of, st.sampled_from(dtypes), shapes)

    def expected_round_trip(self, codec, spec, chunk):
        n, _ = component_bits(spec.dtype.numpy)
        first, last = codec.first_bit or 0, n - 1 if codec.last_bit is None else codec.last_bit
        if (first, last) == (0, n - 1):
            return chunk
        return ArrayBytes.from_array(model_round_trip(chunk.array, first, last))

    def bad_config(self, codec):
        return {**codec.to_config(), "no_such_key": 1}
