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
complex types (each part rounded); and the integers the spec lists, ``int8``
to ``int64``, ``uint8`` to ``uint64``, ``numpy.datetime64`` and
``numpy.timedelta64`` (as int64), rounded from their highest set bit exactly
as zarrs does: each element's bits, read as an unsigned integer of its width
(a negative signed value too: its two's complement), keep ``keepbits`` bits
below and including the highest set one, rounded to nearest with ties to
even, and an addition that would carry out of the width saturates instead
(``uint8`` 255 with ``keepbits`` 3 is 224, not 0). zarrs itself rounds no
time type (it refuses them); zarrpy follows the spec there.

Decoding is the identity, so any selection decodes partially: the decoder
below is asked for it and the values handed back unchanged.

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
from .partial import PARTIAL, ArrayPartialDecoder, CodecCapabilities

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
        if _integer_width(spec.dtype.numpy) is None:
            _component(spec.dtype.numpy, spec.dtype.name)
        else:
            self._check_integer_keepbits(spec)
        return spec

    def _check_integer_keepbits(self, spec: ChunkSpec) -> None:
        # The spec requires keepbits >= 1; for integers 0 would also mean a shift by the
        # full width, which zarrs does not define either (its result depends on the build).
        if self.keepbits < 1:
            raise CodecError(
                f"codec 'bitround': 'keepbits' must be at least 1 for integer data type {spec.dtype.name!r}, got 0"
            )

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        width = _integer_width(spec.dtype.numpy)
        if width is not None:
            self._check_integer_keepbits(spec)
            bits = np.ascontiguousarray(chunk.array).reshape(-1).view(_UINT_OF[width])
            return ArrayBytes.from_array(_round_integers(bits, self.keepbits).view(spec.dtype.numpy).reshape(spec.shape))
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

    @property
    def capabilities(self) -> CodecCapabilities:
        return PARTIAL

    def partial_decoder(self, input: ArrayPartialDecoder, spec: ChunkSpec) -> ArrayPartialDecoder:
        """Decoding is the identity: the decoder below answers every selection."""
        return input


_UINT_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _integer_width(dtype: np.dtype) -> int | None:
    """Bytes per element of an integer type bitround rounds from its highest set bit, else None."""
    if dtype.kind in "iumM" and dtype.itemsize in _UINT_OF and dtype.name not in ("int2", "int4", "uint2", "uint4"):
        return dtype.itemsize
    return None


def _round_integers(bits: np.ndarray, keepbits: int) -> np.ndarray:
    """zarrs' integer rounding of unsigned ``bits``: keep ``keepbits`` bits from the
    highest set one, round to nearest (ties to even), saturate on carry-out."""
    utype = bits.dtype.type
    width = bits.dtype.itemsize * 8
    one = utype(1)
    length = np.zeros(bits.shape, dtype=np.int64)  # bit length of each element
    x = bits.copy()
    for k in (32, 16, 8, 4, 2, 1):
        if k >= width:
            continue
        big = x >= (one << utype(k))
        length += big * k
        x = np.where(big, x >> utype(k), x)
    length += x > 0
    active = length > keepbits
    maskbits = np.where(active, length - keepbits, 1).astype(bits.dtype)
    all_set = utype(~utype(0))
    mask = (all_set >> maskbits) << maskbits
    half_quantum1 = (one << (maskbits - one)) - one
    increment = ((bits >> maskbits) & one) + half_quantum1
    total = bits + increment  # wraps on overflow: saturate those
    total = np.where(total < bits, all_set, total)
    return np.where(active, total & mask, bits)


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
