"""scale_offset array-to-array codec (zarr-extensions; zarr-python 3.2+ writes it).

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset
V3 name: ``scale_offset``; no V2 form (numcodecs' ``fixedscaleoffset``, which
also casts, stays with the numcodecs adapter).

Encoding is ``out = (in - offset) * scale``, decoding ``out = in / scale +
offset``, both in the arithmetic of the array's own data type, which the
codec keeps (a ``cast_value`` after it narrows the type). ``offset`` and
``scale`` are values of that type in its fill-value JSON; each is optional
(0 and 1), and so is the whole configuration.

- Integer types: exact. Every intermediate and final value must be
  representable in the type, and decoding's division must be exact; anything
  else is an error (encode: CodecError; decode: ChunkDecodeError), never a
  wrapped value. ``uint8`` with ``offset`` 10 cannot encode 5.
- Floating-point types: IEEE arithmetic in the type, rounding each step to
  nearest; overflow gives infinity and ``0 * inf`` NaN, as the type does (the
  same bits zarr-python writes).
- ``scale`` 0 is refused: decoding could not invert it.

The fill value is encoded too: the encoded chunk's fill is ``(fill - offset)
* scale``.

>>> ScaleOffsetCodec.from_config({"offset": 5, "scale": 0.1}).to_config()
{'offset': 5, 'scale': 0.1}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..core.dtypes import DataType
from ..errors import ChunkDecodeError, CodecError, MetadataError
from ._config import check_keys
from ._elementwise import ElementwiseDecoder
from ._value_cast import NumberFormat, number_format
from .abc import ArrayToArrayCodec, ChunkSpec
from .partial import PARTIAL, ArrayPartialDecoder, CodecCapabilities

NAME = "scale_offset"


class ArithmeticError_(ValueError):
    """A value leaves the data type (the message says which)."""


@dataclass(frozen=True)
class _Plan:
    fmt: NumberFormat
    offset: Any  # a scalar of the type (Python int for integer types)
    scale: Any


class ScaleOffsetCodec(ArrayToArrayCodec):
    """``(x - offset) * scale`` in the array's own type; decoding inverts it."""

    name = NAME
    __slots__ = ("offset", "scale", "_plans")

    def __init__(self, offset: Any = None, scale: Any = None):
        for field, value in (("offset", offset), ("scale", scale)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, str))):
                raise CodecError(f"codec {NAME!r}: {field!r} must be a number or a fill-value string, got {value!r}")
        self.offset, self.scale = offset, scale
        self._plans: dict[DataType, _Plan] = {}

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> ScaleOffsetCodec:
        config = check_keys(NAME, config, optional=("offset", "scale"))
        for field in ("offset", "scale"):
            if field in config and config[field] is None:
                raise CodecError(f"codec {NAME!r}: {field!r} must be a scalar, got null")
        return cls(config.get("offset"), config.get("scale"))

    def to_config(self) -> dict[str, Any] | None:
        config = {k: v for k, v in (("offset", self.offset), ("scale", self.scale)) if v is not None}
        return config or None

    # -- binding ---------------------------------------------------------
    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        plan = self._plan(spec.dtype)
        fill = np.asarray(spec.fill_value if spec.fill_value is not None else spec.dtype.default_fill(), spec.dtype.numpy)
        try:
            encoded = _encode(fill.reshape(1), plan)
        except ArithmeticError_ as exc:
            raise CodecError(f"codec {NAME!r}: the fill value cannot be encoded: {exc}") from None
        return ChunkSpec(spec.shape, spec.dtype, encoded[0])

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        try:
            return ArrayBytes.from_array(_encode(chunk.array, self._plan(spec.dtype)))
        except ArithmeticError_ as exc:
            raise CodecError(f"codec {NAME!r}: cannot encode: {exc}") from None

    def decode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        return _decode_chunk(chunk, self._plan(spec.dtype))

    @property
    def capabilities(self) -> CodecCapabilities:
        return PARTIAL

    def partial_decoder(self, input: ArrayPartialDecoder, spec: ChunkSpec) -> ArrayPartialDecoder:
        """Each element decodes alone: ask ``input`` for the same selection, decode it."""
        plan = self._plan(spec.dtype)
        return ElementwiseDecoder(input, lambda part: _decode_chunk(part, plan))

    def _plan(self, dtype: DataType) -> _Plan:
        plan = self._plans.get(dtype)
        if plan is None:
            fmt = None if dtype.is_variable else number_format(dtype.numpy)
            if fmt is None:
                raise CodecError(
                    f"codec {NAME!r}: data type {dtype.name!r} is not supported (integer and floating-point types only)"
                )
            offset = _parse(dtype, fmt, "offset", 0 if self.offset is None else self.offset)
            scale = _parse(dtype, fmt, "scale", 1 if self.scale is None else self.scale)
            if scale == 0:
                raise CodecError(f"codec {NAME!r}: 'scale' must not be zero (decoding divides by it)")
            plan = _Plan(fmt, offset, scale)
            self._plans[dtype] = plan  # a benign race: every thread computes the same plan
        return plan


def _parse(dtype: DataType, fmt: NumberFormat, field: str, value: Any) -> Any:
    try:
        scalar = dtype.fill_from_json(value)
    except MetadataError as exc:
        raise CodecError(f"codec {NAME!r}: {field!r}: {exc}") from None
    return int(scalar) if fmt.is_int else np.asarray(scalar, dtype.numpy)[()]


def _decode_chunk(chunk: ArrayBytes, plan: _Plan) -> ArrayBytes:
    try:
        return ArrayBytes.from_array(_decode(chunk.array, plan))
    except ArithmeticError_ as exc:
        raise ChunkDecodeError(f"codec {NAME!r}: cannot decode: {exc}") from None


# -- arithmetic -----------------------------------------------------------------


def _encode(values: np.ndarray, plan: _Plan) -> np.ndarray:
    if not plan.fmt.is_int:
        with np.errstate(over="ignore", invalid="ignore"):
            out: np.ndarray = np.asarray((values - plan.offset) * plan.scale)
            return out
    fmt, wide = plan.fmt, _wide(plan.fmt)
    x = values.astype(wide)
    _require(x, fmt.lo + plan.offset, fmt.hi + plan.offset, fmt, values, f"x - {plan.offset}")
    d = np.asarray(x - _as(wide, plan.offset))
    lo, hi = _quotient_bounds(fmt.lo, fmt.hi, plan.scale)
    _require(d, lo, hi, fmt, values, f"(x - {plan.offset}) * {plan.scale}")
    encoded: np.ndarray = np.asarray(d * _as(wide, plan.scale)).astype(fmt.dtype)
    return encoded


def _decode(values: np.ndarray, plan: _Plan) -> np.ndarray:
    if not plan.fmt.is_int:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out: np.ndarray = np.asarray(values / plan.scale + plan.offset)
            return out
    fmt, wide = plan.fmt, _wide(plan.fmt)
    y = values.astype(wide)
    scale = plan.scale
    if wide == np.uint64:
        inexact = (y % np.uint64(scale)) != 0
    else:
        inexact = (y % np.int64(scale)) != 0
    if inexact.any():
        i = int(np.flatnonzero(inexact)[0])
        raise ArithmeticError_(f"{_item(values, i)} / {scale} is not an integer ({fmt.dtype.name} cannot hold it)")
    lo, hi = (scale * fmt.lo, scale * fmt.hi) if scale > 0 else (scale * fmt.hi, scale * fmt.lo)
    _require(y, lo, hi, fmt, values, f"x / {scale}")
    q = np.asarray(y // _as(wide, scale))
    _require(q, fmt.lo - plan.offset, fmt.hi - plan.offset, fmt, values, f"x / {scale} + {plan.offset}")
    decoded: np.ndarray = np.asarray(q + _as(wide, plan.offset)).astype(fmt.dtype)
    return decoded


def _wide(fmt: NumberFormat) -> np.dtype:
    """The container the integer arithmetic runs in: every value of the type, and every checked result, fits."""
    return np.dtype(np.uint64) if fmt.hi > np.iinfo(np.int64).max else np.dtype(np.int64)


def _as(wide: np.dtype, value: int) -> Any:
    """``value`` in ``wide``, two's complement for a negative one in uint64 (wrapping arithmetic is then exact)."""
    return wide.type(value % (1 << 64)) if wide == np.uint64 else wide.type(value)


def _quotient_bounds(lo: int, hi: int, scale: int) -> tuple[int, int]:
    """The ``d`` with ``lo <= d * scale <= hi``, as an interval."""
    if scale > 0:
        return -(-lo // scale), hi // scale
    return -(-hi // scale), lo // scale


def _require(wide: np.ndarray, lo: int, hi: int, fmt: NumberFormat, values: np.ndarray, what: str) -> None:
    """Raise when an element of ``wide`` (the value named ``what``) is outside ``[lo, hi]`` or the type."""
    lo, hi = max(lo, fmt.lo), min(hi, fmt.hi)
    info = np.iinfo(wide.dtype)
    if lo > hi:
        bad = np.ones(wide.shape, dtype=bool)
    else:
        bad = np.zeros(wide.shape, dtype=bool)
        if lo > int(info.min):
            bad |= wide < wide.dtype.type(lo)
        if hi < int(info.max):
            bad |= wide > wide.dtype.type(hi)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        raise ArithmeticError_(
            f"{what} for x = {_item(values, i)} is outside {fmt.dtype.name} [{fmt.lo}, {fmt.hi}]"
        )


def _item(values: np.ndarray, i: int) -> Any:
    return np.asarray(values).reshape(-1)[i].item()


__all__ = ["ScaleOffsetCodec"]
