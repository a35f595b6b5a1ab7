"""Bits per element, for codecs that pack elements (``packbits``)."""

from __future__ import annotations

import numpy as np


def bit_size(dtype: np.dtype) -> int:
    """Bits per element that carry information: 1 for bool, 2/4/6 for the
    sub-byte ``ml_dtypes`` types (int2, uint4, float4_e2m1fn, float6_*, ...),
    ``8 * itemsize`` otherwise. ``packbits`` packs elements to this width."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return 1
    if dtype.itemsize == 1 and dtype.kind == "V" and dtype.fields is None:
        bits = _SUB_BYTE_BITS.get(dtype.name)
        if bits is not None:
            return bits
    return 8 * dtype.itemsize


# ml_dtypes' sub-byte types, by numpy dtype name (each stored one per byte).
_SUB_BYTE_BITS = {
    "int1": 1, "uint1": 1, "int2": 2, "uint2": 2, "int4": 4, "uint4": 4,
    "float4_e2m1fn": 4, "float6_e2m3fn": 6, "float6_e3m2fn": 6,
}


__all__ = ["bit_size"]
