"""Exact value casts between integer and floating-point types (the ``cast_value`` rules).

One elementwise procedure, the zarr-extensions ``cast_value`` one, for every
pair of the real-number types zarrpy has: ``int2``..``int64``,
``uint2``..``uint64``, ``float16``/``32``/``64``, ``bfloat16`` and the
ml_dtypes 8/6/4-bit floats. Each input value, in order of the rules:

1. a ``scalar_map`` entry whose key equals it (the first such entry; a NaN
   key matches every NaN) gives the output;
2. NaN goes to NaN, and an infinity to the same infinity, where the output
   type has them; otherwise either is an error;
3. any other value is rounded to the output type's precision with the
   ``rounding`` mode (nearest-even, towards-zero, towards-positive,
   towards-negative, nearest-away), *then* checked against its range: a value
   still outside it is an error, unless ``out_of_range`` is ``"clamp"`` (to
   the type's minimum or maximum; to -inf or +inf for a float type that has
   them) or ``"wrap"`` (integer outputs: modulo 2**bits, two's complement).

"Rounded, then checked" is the spec's order: ``65519.0`` to ``float16`` (max
65504, next step 65536) rounds to 65504 and is in range; ``65520`` rounds to
65536 and is out of range. Signed zero is kept where the output has one.

The arithmetic is exact: every input is split into sign, an integer
magnitude (``uint64``) and a binary exponent, rounded with integer
operations, and only values already exact in the output type are converted
by numpy. No value goes through a wider float, so ``int64``/``uint64`` inputs
round correctly (``2**64 - 1`` towards zero to ``float32`` is
``18446742974197923840``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import ml_dtypes
import numpy as np

ROUNDING_MODES = ("nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away")
OUT_OF_RANGE_MODES = ("clamp", "wrap")

_INT_NAMES = {"int2", "int4", "int8", "int16", "int32", "int64", "uint2", "uint4", "uint8", "uint16", "uint32", "uint64"}
_FLOAT_NAMES = {
    "float16", "float32", "float64", "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3fnuz",
    "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
    "float4_e2m1fn",
}
REAL_TYPE_NAMES = frozenset(_INT_NAMES | _FLOAT_NAMES)
"""The numpy dtype names these casts take, in and out."""

_U64 = np.uint64
_ONE = np.uint64(1)


class CastError(ValueError):
    """A value has no output under the rules (the message says which and why)."""


@dataclass(frozen=True)
class NumberFormat:
    """What the procedure needs to know about a type.

    Integers: ``bits``, ``signed``, ``lo``/``hi``. Floats: ``precision`` (with
    the implicit bit), ``emin`` (the least normal exponent), ``subnormals``,
    ``max`` / ``min_positive`` (as float64), and which special values exist.
    """

    dtype: np.dtype
    is_int: bool
    bits: int = 0
    signed: bool = False
    lo: int = 0
    hi: int = 0
    precision: int = 0
    emin: int = 0
    subnormals: bool = True
    max: float = 0.0
    min_positive: float = 0.0
    has_inf: bool = False
    has_nan: bool = False
    has_negative: bool = True
    has_zero: bool = True


def number_format(dtype: np.dtype) -> NumberFormat | None:
    """The format of ``dtype``, or None when it is not one of :data:`REAL_TYPE_NAMES`."""
    name = dtype.name
    if name in _INT_NAMES:
        info: Any = ml_dtypes.iinfo(dtype) if name in ("int2", "int4", "uint2", "uint4") else np.iinfo(dtype)  # type: ignore[no-untyped-call]
        bits = {"int2": 2, "int4": 4, "uint2": 2, "uint4": 4}.get(name, dtype.itemsize * 8)
        return NumberFormat(dtype, True, bits=bits, signed=int(info.min) < 0, lo=int(info.min), hi=int(info.max))
    if name not in _FLOAT_NAMES:
        return None
    fi: Any = ml_dtypes.finfo(dtype)  # type: ignore[no-untyped-call]
    probe = np.array([np.inf, np.nan, 0.0, -1.0]).astype(dtype).astype(np.float64)
    return NumberFormat(
        dtype, False, precision=int(fi.nmant) + 1, emin=int(np.log2(float(fi.smallest_normal))),
        subnormals=float(fi.smallest_subnormal) < float(fi.smallest_normal), max=float(fi.max),
        min_positive=float(fi.smallest_subnormal), has_inf=bool(np.isinf(probe[0])), has_nan=bool(np.isnan(probe[1])),
        has_negative=bool(probe[3] == -1.0), has_zero=bool(probe[2] == 0.0),
    )  # fmt: skip


@dataclass
class _Split:
    """Inputs as ``(-1)**negative * mag * 2**exp``, with NaN and infinity masks."""

    negative: np.ndarray
    mag: np.ndarray  # uint64
    exp: np.ndarray  # int64
    nan: np.ndarray
    inf: np.ndarray
    as_float: np.ndarray | None  # float64 values (float inputs), for NaN/inf outputs and messages


def _split(values: np.ndarray, fmt: NumberFormat) -> _Split:
    n = values.size
    if fmt.is_int:
        if fmt.signed:
            wide = values.astype(np.int64)
            negative = wide < 0
            mag = np.where(negative, np.negative(wide), wide).view(_U64)  # -(-2**63) wraps to 2**63: right as uint64
        else:
            mag = values.astype(_U64)
            negative = np.zeros(n, dtype=bool)
        none = np.zeros(n, dtype=bool)
        return _Split(negative, mag, np.zeros(n, dtype=np.int64), none, none.copy(), None)
    f = values.astype(np.float64)
    nan, inf = np.isnan(f), np.isinf(f)
    mant, ex = np.frexp(np.where(nan | inf, 0.0, f))
    mag = np.ldexp(np.abs(mant), 53).astype(_U64)
    return _Split(np.signbit(f), mag, ex.astype(np.int64) - 53, nan, inf, f)


def _bit_length(v: np.ndarray) -> np.ndarray:
    n = np.zeros(v.shape, dtype=np.int64)
    x = v.copy()
    for k in (32, 16, 8, 4, 2, 1):
        big = x >= (_ONE << _U64(k))
        n += big * k
        x = np.where(big, x >> _U64(k), x)
    return n + (x > 0)


def _round(mag: np.ndarray, shift: np.ndarray, negative: np.ndarray, rounding: str) -> np.ndarray:
    """``mag / 2**shift`` (``shift >= 0``) rounded to an integer with ``rounding``."""
    s = np.minimum(shift, 65)  # past 64 bits every magnitude is below half a step
    inside = s < 64
    su = np.where(inside, s, 0).astype(_U64)
    q = np.where(inside, mag >> su, _U64(0))
    rem = np.where(inside, mag & ((_ONE << su) - _ONE), mag)
    has_half = (s >= 1) & (s <= 64)
    half = _ONE << np.clip(s - 1, 0, 63).astype(_U64)
    above, tie, inexact = has_half & (rem > half), has_half & (rem == half), rem != 0
    if rounding == "nearest-even":
        up = above | (tie & ((q & _ONE) == 1))
    elif rounding == "nearest-away":
        up = above | tie
    elif rounding == "towards-zero":
        up = np.zeros(q.shape, dtype=bool)
    elif rounding == "towards-positive":
        up = inexact & ~negative
    elif rounding == "towards-negative":
        up = inexact & negative
    else:  # pragma: no cover - the codec checks the mode
        raise CastError(f"unknown rounding mode {rounding!r}")
    out: np.ndarray = q + up.astype(_U64)
    return out


def _show(split: _Split, i: int) -> str:
    if split.as_float is not None:
        return repr(float(split.as_float[i]))
    v = int(split.mag[i])
    return str(-v if split.negative[i] else v)


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def cast_values(
    values: np.ndarray, source: NumberFormat, target: NumberFormat, rounding: str, out_of_range: str | None,
    scalar_map: Sequence[tuple[object, object]] = (),
) -> np.ndarray:
    """``values`` (of ``source.dtype``, any shape) cast to ``target.dtype``.

    ``scalar_map`` holds ``(input, output)`` pairs already of the two types.
    Raises CastError naming the first value the rules give no output for.
    """
    shape = values.shape
    flat = np.ascontiguousarray(values).reshape(-1)
    out = np.zeros(flat.size, dtype=target.dtype)
    todo = np.ones(flat.size, dtype=bool)
    if scalar_map:
        keys = flat.astype(np.float64) if not source.is_int else flat
        for key, mapped in scalar_map:
            k = np.asarray(key, dtype=source.dtype)
            if source.is_int:
                hit = keys == k
            else:
                kf = float(k.astype(np.float64))
                hit = np.isnan(keys) if np.isnan(kf) else keys == kf
            hit &= todo
            out[hit] = np.asarray(mapped, dtype=target.dtype)
            todo &= ~hit
    idx = np.flatnonzero(todo)
    if idx.size:
        out[idx] = _cast(flat[idx], source, target, rounding, out_of_range)
    return out.reshape(shape)


def _cast(flat: np.ndarray, source: NumberFormat, target: NumberFormat, rounding: str, oor: str | None) -> np.ndarray:
    sp = _split(flat, source)
    special = sp.nan | sp.inf
    if special.any():
        bad = (sp.nan & ~np.bool_(target.has_nan)) | (sp.inf & ~np.bool_(target.has_inf))
        if bad.any():
            i = _first(bad)
            raise CastError(
                f"{_show(sp, i)} has no value in {target.dtype.name} (only a scalar_map entry can give it one)"
            )
    if target.is_int:
        return _to_int(sp, target, rounding, oor)
    return _to_float(sp, special, target, rounding, oor)


def _to_int(sp: _Split, target: NumberFormat, rounding: str, oor: str | None) -> np.ndarray:
    left = np.clip(sp.exp, 0, 64)
    right = np.maximum(-sp.exp, 0)
    big = (sp.mag != 0) & ((sp.exp >= 64) | (_bit_length(sp.mag) + left > 64))  # |value| >= 2**64
    shifted = np.where(left < 64, sp.mag << np.minimum(left, 63).astype(_U64), _U64(0))  # mod 2**64 when big
    mag = np.where(sp.exp >= 0, shifted, _round(sp.mag, right, sp.negative, rounding))
    negative = sp.negative & ((mag != 0) | big)
    limit_neg = _U64(-target.lo)
    outside = big | np.where(negative, mag > limit_neg, mag > _U64(target.hi))
    if outside.any():
        if oor is None:
            i = _first(outside)
            raise CastError(f"{_show(sp, i)} is out of range of {target.dtype.name} [{target.lo}, {target.hi}]")
        if oor == "clamp":
            mag = np.where(outside, np.where(negative, limit_neg, _U64(target.hi)), mag)
    bits = np.where(negative, ~mag + _ONE, mag)  # two's complement, mod 2**64
    return _from_bits(bits, target)


def _from_bits(bits: np.ndarray, target: NumberFormat) -> np.ndarray:
    """The low ``target.bits`` of ``bits`` as values of the target type (sign-extended)."""
    n = target.bits
    if n < 64:
        bits = bits & ((_ONE << _U64(n)) - _ONE)
    if not target.signed:
        return bits.astype(target.dtype)
    if n == 64:
        return bits.view(np.int64)
    wide = bits.astype(np.int64)
    return (wide - np.where(wide >= (1 << (n - 1)), 1 << n, 0)).astype(target.dtype)


def _to_float(sp: _Split, special: np.ndarray, target: NumberFormat, rounding: str, oor: str | None) -> np.ndarray:
    p = target.precision
    nonzero = sp.mag != 0
    top = sp.exp + _bit_length(sp.mag) - 1  # exponent of the leading bit
    quantum = top - (p - 1)
    if target.subnormals:
        quantum = np.maximum(quantum, target.emin - (p - 1))
    shift = quantum - sp.exp
    exact = shift <= 0
    q = np.where(exact, sp.mag, _round(sp.mag, np.maximum(shift, 0), sp.negative, rounding))
    qexp = np.where(exact, sp.exp, quantum)
    with np.errstate(over="ignore"):
        value = np.ldexp(q.astype(np.float64), np.clip(qexp, -1200, 1200).astype(np.int32))  # exact, or inf past 2**1024
    value = np.where(nonzero, value, 0.0)
    finite = ~special
    outside = finite & (value > target.max)
    if not target.has_negative:
        outside |= finite & sp.negative & ((value != 0) | ~np.bool_(target.has_zero))
    if not target.has_zero:
        outside |= finite & (value < target.min_positive)
    result = np.where(sp.negative, -value, value)
    if outside.any():
        if oor != "clamp":
            i = _first(outside)
            why = " (wrap is for integer types)" if oor == "wrap" else ""
            raise CastError(
                f"{_show(sp, i)} is out of range of {target.dtype.name} after rounding{why}"
            )
        low_side = sp.negative | (value < target.min_positive)
        high = np.inf if target.has_inf else target.max
        low = (-np.inf if target.has_inf else -target.max) if target.has_negative else target.min_positive
        result = np.where(outside, np.where(low_side & (sp.negative | ~np.bool_(target.has_negative)), low, high), result)
    if special.any():
        assert sp.as_float is not None
        result = np.where(special, sp.as_float, result)
    return result.astype(target.dtype)


__all__ = ["CastError", "NumberFormat", "OUT_OF_RANGE_MODES", "REAL_TYPE_NAMES", "ROUNDING_MODES", "cast_values", "number_format"]
