"""Zarr data types: V3 names <-> numpy dtypes, and fill-value JSON.

A :class:`DataType` is an immutable description of one element type. Fixed-size
types map to a numpy dtype in native byte order (the stored byte order belongs
to the ``bytes`` codec, not to the type). Variable-length types (strings,
bytes) are flagged ``is_variable`` and travel through the pipeline as
variable-form :class:`~zarrpy.core.array_bytes.ArrayBytes`.

>>> DataType.from_json("float32").fill_from_json("NaN")
np.float32(nan)
>>> DataType.from_json("complex64").fill_to_json(np.complex64(1 - 1j))
[1.0, -1.0]
"""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MetadataError

_CORE: dict[str, str] = {
    "bool": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "complex64": "complex64",
    "complex128": "complex128",
}

# Variable-length types: every name peers write -> kind. zarrpy writes
# "string" and "variable_length_bytes" (zarr-python's names), and keeps the
# name it read when it rewrites an existing array's metadata.
_VARIABLE: dict[str, str] = {
    "string": "string",
    "variable_length_bytes": "bytes",
    "bytes": "bytes",
    "binary": "bytes",
}
STRING_DTYPE = np.dtypes.StringDType()
# Fixed-length text types (zarr-python's names; numpy S and U).
_FIXED_LENGTH = ("null_terminated_bytes", "fixed_length_utf32")
BYTES_DTYPE = np.dtype(object)

# numpy's datetime64 / timedelta64 as zarr-python 3 names them (V3 names with
# a {"unit", "scale_factor"} configuration; int64 counts, NaT the minimum).
_TIME: dict[str, str] = {"numpy.datetime64": "datetime64", "numpy.timedelta64": "timedelta64"}
_TIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "generic")
_TIME_NAMES = {"M": "numpy.datetime64", "m": "numpy.timedelta64"}
RAW_BYTES = "raw_bytes"
"""zarr-python's name for fixed-size raw bytes (numpy ``V<n>``); the core
spec's ``r<bits>`` names read as the same type and are kept when read."""
NAT = np.iinfo(np.int64).min
"""The int64 count numpy stores for NaT (zarr-python's fill-value JSON for it)."""

# Float bit widths -> the unsigned type holding their bit pattern.
_FLOAT_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass(frozen=True, slots=True)
class DataType:
    """One Zarr element type.

    ``name`` is the V3 ``data_type`` name; ``numpy`` the in-memory dtype
    (native byte order for numbers); ``is_variable`` marks types whose
    elements have no fixed size.
    """

    name: str
    numpy: np.dtype
    is_variable: bool = False

    # -- construction -------------------------------------------------
    @classmethod
    def from_json(cls, obj: Any) -> DataType:
        """Parse a V3 ``data_type`` member (a name or ``{"name": …}``)."""
        if isinstance(obj, dict):
            unknown = set(obj) - {"name", "configuration"}
            if unknown:
                raise MetadataError(
                    f"data_type: unknown member(s) {sorted(unknown)} (must_understand is not allowed for data types)"
                )
            name = obj.get("name")
            config = obj.get("configuration")
            if name in _FIXED_LENGTH:
                return cls._fixed_length(name, config)
            if name in _TIME:
                return cls._time(name, config)
            if name == RAW_BYTES:
                return cls._raw_bytes(config)
            if config not in (None, {}) and isinstance(name, str) and cls._knows(name):
                raise MetadataError(
                    f"data_type: data type {name!r} with configuration {config!r} is not supported "
                    f"({name!r} takes no configuration)"
                )
        else:
            name = obj
        if not isinstance(name, str):
            raise MetadataError(f"data_type: expected a name string, got {obj!r}")
        if name in _TIME:
            return cls._time(name, None)
        if name == RAW_BYTES:
            return cls._raw_bytes(None)
        if name in _CORE:
            return cls(name, np.dtype(_CORE[name]))
        if name in _VARIABLE:
            return cls(name, STRING_DTYPE if _VARIABLE[name] == "string" else BYTES_DTYPE, True)
        if name.startswith("r") and name[1:].isdigit():
            bits = int(name[1:])
            if bits <= 0 or bits % 8:
                raise MetadataError(f"data_type: {name!r} must have a positive multiple of 8 bits")
            return cls(name, np.dtype(f"V{bits // 8}"))
        raise MetadataError(
            f"data_type: unknown data type {name!r}; known: "
            f"{', '.join(sorted(_CORE) + sorted(_VARIABLE) + sorted(_TIME) + list(_FIXED_LENGTH))}, "
            f"{RAW_BYTES}, r<bits>"
        )

    @staticmethod
    def _knows(name: str) -> bool:
        """True for a data type name zarrpy knows (whatever its configuration)."""
        raw = name.startswith("r") and name[1:].isdigit()
        return name in _CORE or name in _VARIABLE or name in _TIME or name in _FIXED_LENGTH or name == RAW_BYTES or raw

    @classmethod
    def _fixed_length(cls, name: str, config: Any) -> DataType:
        """``null_terminated_bytes`` (numpy ``S``) / ``fixed_length_utf32`` (``U``)."""
        n = (config or {}).get("length_bytes") if isinstance(config, dict) else None
        unit = 4 if name == "fixed_length_utf32" else 1
        if isinstance(n, bool) or not isinstance(n, int) or n < 1 or n % unit or set(config) != {"length_bytes"}:
            raise MetadataError(
                f"data_type: {name!r} needs configuration {{\"length_bytes\": n}} with n a positive "
                f"multiple of {unit}, got {config!r}"
            )
        return cls(name, np.dtype(f"S{n}" if unit == 1 else f"U{n // 4}"))

    @classmethod
    def _raw_bytes(cls, config: Any) -> DataType:
        """zarr-python's ``raw_bytes`` (numpy ``V<n>``): ``{"length_bytes": n}``."""
        n = config.get("length_bytes") if isinstance(config, dict) else None
        if not isinstance(config, dict) or set(config) != {"length_bytes"} or isinstance(n, bool) \
                or not isinstance(n, int) or n < 1:
            raise MetadataError(
                f"data_type: {RAW_BYTES!r} needs configuration {{\"length_bytes\": n}} with n a positive "
                f"integer, got {config!r}"
            )
        return cls(RAW_BYTES, np.dtype(f"V{n}"))

    @classmethod
    def _time(cls, name: str, config: Any) -> DataType:
        """``numpy.datetime64`` / ``numpy.timedelta64`` with ``unit`` and ``scale_factor``."""
        if not isinstance(config, dict) or set(config) != {"unit", "scale_factor"}:
            raise MetadataError(
                f"data_type: {name!r} needs configuration {{\"unit\": …, \"scale_factor\": …}}, got {config!r}"
            )
        unit, scale = config["unit"], config["scale_factor"]
        if unit not in _TIME_UNITS:
            raise MetadataError(f"data_type: {name!r}: unit {unit!r} is not one of {', '.join(_TIME_UNITS)}")
        if isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale < 2**31:
            raise MetadataError(f"data_type: {name!r}: scale_factor must be an integer in [1, 2**31), got {scale!r}")
        if unit == "generic" and scale != 1:
            raise MetadataError(f"data_type: {name!r}: a generic unit takes no scale_factor, got {scale!r}")
        base = _TIME[name]
        return cls(name, np.dtype(base if unit == "generic" else f"{base}[{scale}{unit}]"))

    @classmethod
    def from_numpy(cls, dtype: Any) -> DataType:
        """The data type for a numpy dtype (or anything ``np.dtype`` accepts)."""
        if isinstance(dtype, DataType):
            return dtype
        if isinstance(dtype, str) and (dtype in _CORE or dtype in _VARIABLE):
            return cls.from_json("variable_length_bytes" if dtype in ("bytes", "binary") else dtype)
        if dtype is str or dtype == "str":
            return cls.from_json("string")
        if dtype is bytes:
            return cls.from_json("variable_length_bytes")
        try:
            dt = np.dtype(dtype)
        except TypeError as exc:
            raise MetadataError(f"data_type: cannot interpret {dtype!r} as a data type") from exc
        if dt.kind == "T" or (dt.kind == "U" and dt.itemsize == 0):
            return cls.from_json("string")
        if dt.kind in "SU" and dt.itemsize:
            name = "null_terminated_bytes" if dt.kind == "S" else "fixed_length_utf32"
            return cls._fixed_length(name, {"length_bytes": dt.itemsize})
        if dt.kind in "OS":
            raise MetadataError(
                f"data_type: numpy dtype {dt.str!r} is ambiguous; use dtype=str for strings "
                "or dtype=bytes for variable-length bytes"
            )
        if dt.kind == "V" and dt.fields is None and dt.subdtype is None:
            return cls(RAW_BYTES, np.dtype(f"V{dt.itemsize}"))  # zarr-python's name (it reads no r<bits>)
        if dt.kind in _TIME_NAMES:
            return cls(_TIME_NAMES[dt.kind], dt.newbyteorder("="))
        native = dt.newbyteorder("=") if dt.byteorder not in ("=", "|") else dt
        for name, np_name in _CORE.items():
            if np.dtype(np_name) == native:
                return cls(name, np.dtype(np_name))
        raise MetadataError(f"data_type: numpy dtype {dt.str!r} has no Zarr V3 data type")

    def to_json(self) -> str | dict[str, Any]:
        if self.name in _FIXED_LENGTH:
            return {"name": self.name, "configuration": {"length_bytes": self.numpy.itemsize}}
        if self.name == RAW_BYTES:
            return {"name": RAW_BYTES, "configuration": {"length_bytes": self.numpy.itemsize}}
        if self.name in _TIME:
            unit, scale = np.datetime_data(self.numpy)
            return {"name": self.name, "configuration": {"unit": unit, "scale_factor": int(scale)}}
        return self.name

    @property
    def itemsize(self) -> int:
        """Bytes per element; 0 for variable-length types."""
        return 0 if self.is_variable else self.numpy.itemsize

    # -- fill values --------------------------------------------------
    @property
    def is_string(self) -> bool:
        return self.is_variable and self.numpy.kind == "T"

    def default_fill(self) -> Any:
        """The fill value used when none is given (zero / False / empty)."""
        if self.is_variable:
            return "" if self.is_string else b""
        if self.numpy.kind in "mM":
            return np.array("NaT", dtype=self.numpy)[()]  # as zarr-python
        return np.zeros((), dtype=self.numpy)[()]

    def fill_from_json(self, value: Any) -> Any:
        """Decode a ``fill_value`` JSON member into a numpy scalar."""
        kind = self.numpy.kind
        try:
            if self.is_variable:
                if self.is_string:
                    if not isinstance(value, str):
                        raise TypeError("expected a JSON string")
                    return value
                if isinstance(value, str):
                    return base64.b64decode(value, validate=True)
                if isinstance(value, list) and all(
                    isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in value
                ):
                    return bytes(value)
                raise TypeError("expected a base64 string or a list of byte values")
            if kind == "b":
                if not isinstance(value, bool):
                    raise ValueError("expected true or false")
                return np.bool_(value)
            if kind in "iu":
                return self.numpy.type(parse_int(value, self.numpy))
            if kind == "f":
                return _parse_float(value, self.numpy)
            if kind == "c":
                if not isinstance(value, list) or len(value) != 2:
                    raise ValueError("expected [real, imag]")
                part = np.dtype(f"f{self.numpy.itemsize // 2}")
                re, im = (_parse_float(v, part) for v in value)
                out = np.zeros((), dtype=self.numpy)
                out.real, out.imag = re, im
                return out[()]
            if kind == "V":
                return _parse_raw(value, self.numpy.itemsize)
            if kind in "mM":
                count = NAT if value == "NaT" else parse_int(value, np.dtype(np.int64))
                return np.array(count, dtype=np.int64).view(self.numpy)[()]
            if kind == "S":
                if not isinstance(value, str):
                    raise TypeError("expected a base64 string")
                return np.bytes_(base64.b64decode(value, validate=True))
            if kind == "U":
                if not isinstance(value, str):
                    raise TypeError("expected a JSON string")
                return np.str_(value)
        except (ValueError, TypeError, OverflowError, binascii.Error) as exc:
            raise MetadataError(
                f"fill_value: {value!r} is not valid for data type {self.name!r}: {exc}"
            ) from None
        raise MetadataError(f"fill_value: data type {self.name!r} has no fill-value codec")

    def fill_to_json(self, value: Any) -> Any:
        """Encode a fill value (anything numpy can cast) as JSON."""
        kind = self.numpy.kind
        if self.is_variable:
            scalar = self.coerce_fill(value)
            return scalar if self.is_string else base64.b64encode(scalar).decode("ascii")
        if kind == "S":
            return base64.b64encode(bytes(self.coerce_fill(value))).decode("ascii")
        if kind == "U":
            return str(self.coerce_fill(value))
        if kind == "V":
            raw = bytes(self.coerce_fill(value))
            # raw_bytes: base64, as zarr-python writes; r<bits>: byte values, as the core spec.
            return base64.b64encode(raw).decode("ascii") if self.name == RAW_BYTES else list(raw)
        scalar = self.coerce_fill(value)
        if kind == "b":
            return bool(scalar)
        if kind in "iu":
            return int(scalar)
        if kind == "f":
            return _float_to_json(scalar)
        if kind == "c":
            return [_float_to_json(scalar.real), _float_to_json(scalar.imag)]
        if kind in "mM":
            return int(np.asarray(scalar).view(np.int64))  # NaT: the int64 minimum, as zarr-python writes
        raise MetadataError(f"fill_value: data type {self.name!r} has no fill-value codec")

    def coerce_fill(self, value: Any) -> Any:
        """Cast a user-given fill value to this type, refusing lossy casts."""
        if value is None:
            return self.default_fill()
        try:
            if self.is_variable:
                if self.is_string and isinstance(value, (str, np.str_)):
                    return str(value)
                if not self.is_string and isinstance(value, (bytes, bytearray, np.bytes_)):
                    return bytes(value)
                raise TypeError(f"expected {'str' if self.is_string else 'bytes'}, got {type(value).__name__}")
            if self.numpy.kind == "V":
                return _parse_raw(value, self.numpy.itemsize)
            if self.numpy.kind in "SU":
                want = (bytes, np.bytes_) if self.numpy.kind == "S" else (str, np.str_)
                if not isinstance(value, want) or len(value) > self.numpy.itemsize // (4 if self.numpy.kind == "U" else 1):
                    raise ValueError(f"expected a {self.numpy} value")
                return self.numpy.type(value)
            arr = np.asarray(value)
            if arr.shape != ():
                raise ValueError("expected a scalar")
            with np.errstate(invalid="ignore"):  # NaN/inf into integers: refused just below
                out = arr.astype(self.numpy)
            if self.numpy.kind in "iub" and arr.dtype.kind in "iuf" and out != arr:
                raise ValueError("value is out of range or not integral")
        except (ValueError, TypeError, OverflowError, binascii.Error) as exc:
            raise MetadataError(
                f"fill_value: {value!r} cannot be cast to data type {self.name!r}: {exc}"
            ) from None
        return out[()]


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
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise OverflowError(f"out of range [{info.min}, {info.max}]")
    return value


def _parse_float(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, bool):
        raise TypeError("expected a number, got a boolean")
    if isinstance(value, (int, float)):
        return dtype.type(value)
    if value == "NaN":
        return dtype.type("nan")
    if value == "Infinity":
        return dtype.type("inf")
    if value == "-Infinity":
        return dtype.type("-inf")
    if isinstance(value, str) and value.startswith("0x"):
        bits_type = _FLOAT_BITS.get(dtype.itemsize)
        digits = value[2:]
        if bits_type is None or len(digits) != dtype.itemsize * 2:
            raise ValueError(f"hex float must have {dtype.itemsize * 2} hex digits")
        return np.array(int(digits, 16), dtype=bits_type).view(dtype)[()]
    raise ValueError('expected a number, "NaN", "Infinity", "-Infinity" or "0x…"')


def _float_to_json(value: Any) -> Any:
    value = np.asarray(value)
    if np.isnan(value):
        bits_type = _FLOAT_BITS[value.dtype.itemsize]
        bits = int(value.view(bits_type))
        canonical = int(np.array(np.nan, dtype=value.dtype).view(bits_type))
        if bits == canonical:
            return "NaN"
        return "0x" + format(bits, f"0{value.dtype.itemsize * 2}x")
    f = float(value)
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


def _parse_raw(value: Any, nbytes: int) -> bytes:
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


__all__ = ["DataType", "bit_size"]
