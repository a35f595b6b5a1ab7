"""JSON forms of scalar fill values shared by data-type families.

Integers are JSON integers (a whole float is accepted); floats are numbers or
``"NaN"``/``"Infinity"``/``"-Infinity"``, or ``"0x…"`` hex of the bit pattern
for a NaN with a payload; raw bytes are base64 or a list of byte values
(ZARR-FORMAT-NOTES.md §5).
"""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def parse_int(value: Any, dtype: np.dtype) -> int:
    """A JSON integer fill value for an integer ``dtype`` (a whole float is accepted)."""
    if isinstance(value, bool):
        raise TypeError("expected an integer, got a boolean")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("expected an integer")
        value = int(value)
    if not isinstance(value, int):
        raise TypeError("expected an integer")
    info = _iinfo(dtype)
    if not info[0] <= value <= info[1]:
        raise OverflowError(f"out of range [{info[0]}, {info[1]}]")
    return value


def _iinfo(dtype: np.dtype) -> tuple[int, int]:
    """(min, max) of an integer dtype, numpy's or ml_dtypes' (int2, uint4, ...)."""
    try:
        info = np.iinfo(dtype)
    except ValueError:
        import ml_dtypes  # only the ml_dtypes integer types get here

        ml_info: Any = ml_dtypes.iinfo(dtype)  # type: ignore[no-untyped-call]
        return int(ml_info.min), int(ml_info.max)
    return int(info.min), int(info.max)


def parse_float(value: Any, dtype: np.dtype) -> Any:
    """A JSON float fill value as a scalar of ``dtype`` (any float type, ml_dtypes' included)."""
    if isinstance(value, bool):
        raise TypeError("expected a number, got a boolean")
    if isinstance(value, (int, float)):
        if type(dtype).__module__ == "numpy.dtypes":  # numpy's own floats: the scalar type casts directly
            return dtype.type(value)
        return np.array(value, dtype=np.float64).astype(dtype)[()]
    if value == "NaN":
        return np.array(np.nan).astype(dtype)[()]
    if value == "Infinity":
        return np.array(np.inf).astype(dtype)[()]
    if value == "-Infinity":
        return np.array(-np.inf).astype(dtype)[()]
    if isinstance(value, str) and value.startswith("0x"):
        bits_type = _UNSIGNED.get(dtype.itemsize)
        digits = value[2:]
        if bits_type is None or len(digits) != dtype.itemsize * 2:
            raise ValueError(f"hex float must have {dtype.itemsize * 2} hex digits")
        return np.array(int(digits, 16), dtype=bits_type).view(dtype)[()]
    raise ValueError('expected a number, "NaN", "Infinity", "-Infinity" or "0x…"')


def float_to_json(value: Any) -> Any:
    """A float scalar as JSON: a number, a special-value name, or hex for a NaN with a payload."""
    value = np.asarray(value)
    bits_type = _UNSIGNED[value.dtype.itemsize]
    with np.errstate(invalid="ignore"):  # a signalling NaN's payload is what is being written
        is_nan = bool(np.isnan(value))
    if is_nan:
        bits = int(value.view(bits_type))
        canonical = int(np.array(np.nan).astype(value.dtype).view(bits_type))
        if bits == canonical:
            return "NaN"
        return "0x" + format(bits, f"0{value.dtype.itemsize * 2}x")
    f = float(value)
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


def parse_raw(value: Any, nbytes: int) -> bytes:
    """``nbytes`` raw bytes from base64, a list of byte values, bytes or a numpy void."""
    if isinstance(value, (bytes, bytearray)):
        raw = bytes(value)
    elif isinstance(value, str):
        raw = base64.b64decode(value, validate=True)
    elif isinstance(value, list):
        if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in value):
            raise ValueError("expected a list of byte values 0..255")
        raw = bytes(value)
    elif isinstance(value, np.void):
        raw = value.tobytes()
    else:
        raise TypeError("expected a list of byte values")
    if len(raw) != nbytes:
        raise ValueError(f"expected {nbytes} bytes, got {len(raw)}")
    return raw


def b64(raw: bytes) -> str:
    """``raw`` as base64 text: the fill-value JSON of raw and variable-length
    bytes, as zarr-python writes it."""
    return base64.b64encode(raw).decode("ascii")
