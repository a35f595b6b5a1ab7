"""bitround array-to-array codec (zarr-extensions; zarrs writes it).

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/bitround
V3 name: ``bitround``; V2: the numcodecs filter ``bitround`` (same
configuration, same bits) stays with the numcodecs adapter, and so does the
deprecated V3 name ``numcodecs.bitround``.

Encoding rounds each float's mantissa to ``keepbits`` bits, to nearest with
ties to even, exactly as ``numcodecs.BitRound`` does (add half a quantum less
one plus the lowest kept bit, then clear the dropped bits; the addition wraps
like numcodecs' integer arithmetic). Decoding is the identity: the rounded
values are ordinary floats. A ``keepbits`` at or above the type's mantissa
width keeps every value (zarrs does the same; numcodecs refuses one above).

Data types: float16, float32, float64, bfloat16 (7 mantissa bits) and the
complex types (each part rounded). Integers, which the spec also lists
(rounded from their highest set bit, a zarrs extension), are refused.

>>> BitRoundCodec.from_config({"keepbits": 3}).to_config()
{'keepbits': 3}
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..errors import CodecError
from ._config import check_int, check_keys
from .abc import ArrayToArrayCodec, ChunkSpec

_NAME = "bitround"
# mantissa bits per float component width, by numpy dtype name of a component
_MANTISSA_BITS = {"float16": 10, "float32": 23, "float64": 52, "bfloat16": 7}
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


class BitRoundCodec(ArrayToArrayCodec):
    """Round float mantissas to ``keepbits`` bits (lossy; decode is the identity)."""

    name = _NAME
    __slots__ = ("keepbits",)

    def __init__(self, keepbits: int):
        self.keepbits = check_int(_NAME, "keepbits", keepbits, 0, 2**31 - 1)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> BitRoundCodec:
        config = check_keys(_NAME, config, required=("keepbits",))
        return cls(config["keepbits"])

    def to_config(self) -> dict[str, Any]:
        return {"keepbits": self.keepbits}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        _component(spec.dtype.numpy, spec.dtype.name)
        return spec

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        component = _component(spec.dtype.numpy, spec.dtype.name)
        mantissa = _MANTISSA_BITS[component.name]
        if self.keepbits >= mantissa:
            return chunk
        bits = np.ascontiguousarray(chunk.array).reshape(-1).view(_UINT[component.itemsize]).copy()
        maskbits = mantissa - self.keepbits
        utype = bits.dtype.type
        mask = ~utype((1 << maskbits) - 1)
        half_quantum1 = utype((1 << (maskbits - 1)) - 1)
        bits += ((bits >> utype(maskbits)) & utype(1)) + half_quantum1  # wraps, as numcodecs does
        bits &= mask
        return ArrayBytes.from_array(bits.view(spec.dtype.numpy).reshape(spec.shape))

    def decode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        return chunk


def _component(dtype: np.dtype, name: str) -> np.dtype:
    """The float type of one component of ``dtype`` (itself, or a complex part).

    Raises CodecError naming the codec when the type has no mantissa to round.
    """
    if dtype.kind == "c":
        dtype = np.dtype(f"f{dtype.itemsize // 2}")
    if dtype.name not in _MANTISSA_BITS or dtype.itemsize not in _UINT:
        raise CodecError(
            f"codec 'bitround': data type {name!r} is not supported (floating-point and complex types only)"
        )
    return dtype


__all__ = ["BitRoundCodec"]
