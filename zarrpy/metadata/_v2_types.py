"""V2 element types: ``dtype`` strings and ``fill_value`` JSON (ZARR-FORMAT-NOTES.md §5, §13).

The value-level half of :mod:`zarrpy.metadata.v2`, which documents the forms
accepted and written and re-exports everything public here.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

import numpy as np

from ..core.dtypes import DataType
from ..core.dtypes import parse_int as _parse_int
from ..core.dtypes.registry import family_for_numpy, family_for_v2_name
from ..errors import MetadataError
from ._parse import parse_shape

_TYPESTR = re.compile(r"^([<>|])([biufcmMSUVO])(\d*)(\[\d*[A-Za-z]+\])?$")
_SIZES = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8), "c": (8, 16), "m": (8,), "M": (8,)}


# -- dtype ---------------------------------------------------------------------


def parse_dtype_v2(value: Any, field_name: str = "dtype") -> np.dtype:
    """The numpy dtype of a V2 ``dtype`` member, in its stored byte order.

    Raises MetadataError naming ``field_name`` for anything that is not a V2
    typestr or structured list zarrpy can describe.
    """
    if isinstance(value, str):
        return _parse_typestr(value, field_name)
    if isinstance(value, list):
        return _parse_structured(value, field_name)
    raise MetadataError(f"{field_name}: expected a numpy typestr (e.g. '<f8') or a list of fields, got {value!r}")


def _parse_typestr(s: str, field_name: str) -> np.dtype:
    m = _TYPESTR.match(s)
    family = family_for_v2_name(s) if m is None else None
    if family is not None:  # a data type's own V2 name, e.g. tensorstore's "bfloat16"
        try:
            return family.dtype_from_v2(s)
        except MetadataError as exc:
            raise MetadataError(f"{field_name}: {exc}") from None
    if m is None:
        raise MetadataError(
            f"{field_name}: {s!r} is not a V2 dtype string: expected a byte order ('<', '>' or '|'), "
            "a kind (b i u f c m M S U V O) and a size, e.g. '<f8', '|b1', '|S5', '<U3', '<M8[ns]', '|O'"
        )
    order, kind, size_text, unit = m.groups()
    if kind == "O":
        if size_text or unit or order != "|":
            raise MetadataError(f"{field_name}: the object dtype is written '|O', got {s!r}")
        return np.dtype(object)
    if unit and kind not in "mM":
        raise MetadataError(f"{field_name}: {s!r}: only datetime (M) and timedelta (m) types take a unit")
    if not size_text:
        raise MetadataError(f"{field_name}: {s!r} has no size")
    size = int(size_text)
    if kind in _SIZES and size not in _SIZES[kind]:
        what = {"f": "extended-precision floats are platform-dependent and not supported",
                "c": "extended-precision complex numbers are platform-dependent and not supported"}.get(kind, "")
        raise MetadataError(
            f"{field_name}: {s!r}: kind {kind!r} takes a size of {', '.join(map(str, _SIZES[kind]))} bytes"
            + (f" ({what})" if what else "")
        )
    if kind in "SUV" and size < 1:
        raise MetadataError(f"{field_name}: {s!r}: fixed-length types need a size of at least 1")
    try:
        dt = np.dtype(f"{kind}{size}{unit or ''}")
    except TypeError as exc:
        raise MetadataError(f"{field_name}: {s!r} is not a valid dtype: {exc}") from None
    if dt.itemsize > 1 and kind != "S" and kind != "V":
        dt = dt.newbyteorder("<" if order in "<|" else ">")
    return dt


def _parse_structured(fields: list[Any], field_name: str) -> np.dtype:
    if not fields:
        raise MetadataError(f"{field_name}: a structured dtype needs at least one field")
    parts: list[tuple[str, np.dtype[Any]] | tuple[str, np.dtype[Any], tuple[int, ...]]] = []
    names: set[str] = set()
    for i, item in enumerate(fields):
        where = f"{field_name}[{i}]"
        if not isinstance(item, list) or len(item) not in (2, 3) or not isinstance(item[0], str):
            raise MetadataError(f"{where}: expected [name, dtype] or [name, dtype, shape], got {item!r}")
        name = item[0]
        if not name or name in names:
            raise MetadataError(f"{where}: field names must be unique and non-empty, got {name!r}")
        names.add(name)
        sub = parse_dtype_v2(item[1], where)
        if sub.hasobject:
            raise MetadataError(f"{where}: object fields are not supported in structured dtypes")
        if len(item) == 3:
            parts.append((name, sub, parse_shape(item[2], f"{where}.shape", positive=True)))
        else:
            parts.append((name, sub))
    try:
        return np.dtype(parts)
    except (TypeError, ValueError) as exc:
        raise MetadataError(f"{field_name}: not a valid structured dtype: {exc}") from None


def dtype_to_json_v2(dtype: np.dtype) -> str | list[Any]:
    """The V2 ``dtype`` member for a numpy dtype (the inverse of :func:`parse_dtype_v2`)."""
    dtype = np.dtype(dtype)
    if dtype.fields is not None:
        out = []
        for name in dtype.names or ():
            sub = dtype.fields[name][0]
            if sub.subdtype is not None:
                base, shape = sub.subdtype
                out.append([name, dtype_to_json_v2(base), list(shape)])
            else:
                out.append([name, dtype_to_json_v2(sub)])
        return out
    if dtype.kind == "O":
        return "|O"
    plugin = _plugin_dtype(dtype)  # a dtype numpy does not define (ml_dtypes): its family names it
    if plugin is not None:
        own = plugin.to_v2()
        if own is None:
            raise MetadataError(f"dtype: data type {dtype.name!r} has no Zarr V2 form")
        return own
    return dtype.str


# -- fill values ---------------------------------------------------------------


def _plugin_dtype(dtype: np.dtype) -> DataType | None:
    """The data type of a dtype numpy does not define (ml_dtypes' bfloat16, ...), or None.

    Such types write the same fill-value JSON in V2 as in V3 (tensorstore does).
    """
    if type(dtype).__module__ == "numpy.dtypes":
        return None
    found = family_for_numpy(dtype)
    if found is None:
        raise MetadataError(f"dtype: numpy dtype {dtype.name!r} has no Zarr data type")
    return DataType(found[1], dtype, found[0].is_variable, found[0])


def parse_fill_value_v2(value: Any, dtype: np.dtype, object_codec: str | None = None) -> Any:
    """Decode a V2 ``fill_value`` for ``dtype`` (see the module docstring).

    Numbers come back as numpy scalars in native byte order; ``S`` as
    ``numpy.bytes_``, ``U`` as ``numpy.str_``; ``V`` and structured as the raw
    ``bytes``; object arrays as ``str`` / ``bytes``; null as None (object
    arrays: ``""``/``b""``, and None for vlen-array).
    """
    kind = dtype.kind
    plugin = _plugin_dtype(dtype) if value is not None else None
    if plugin is not None:
        try:
            return plugin.family.fill_from_v2(plugin, value)
        except (ValueError, TypeError, OverflowError, binascii.Error, MetadataError) as exc:
            raise MetadataError(f"fill_value: {value!r} is not valid for data type {plugin.name!r}: {exc}") from None
    try:
        if kind == "O":
            return _parse_object_fill(value, object_codec)
        if value is None:
            return None
        if dtype.fields is not None or kind == "V":
            raw = _b64(value)
            if len(raw) != dtype.itemsize:
                raise ValueError(f"expected base64 of {dtype.itemsize} bytes, got {len(raw)}")
            return raw
        if kind == "S":
            raw = _b64(value)
            if len(raw) > dtype.itemsize:
                raise ValueError(f"expected at most {dtype.itemsize} bytes, got {len(raw)}")
            return np.bytes_(raw)
        if kind == "U":
            if not isinstance(value, str):
                raise TypeError("expected a string")
            if len(value) > dtype.itemsize // 4:
                raise ValueError(f"expected at most {dtype.itemsize // 4} characters")
            return np.str_(value)
        native = dtype.newbyteorder("=")
        if kind == "b":
            if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
                return np.bool_(value)
            raise TypeError("expected true or false")
        if kind in "iu":
            return native.type(_parse_int(value, native))
        if kind == "f":
            return _parse_float(value, native)
        if kind == "c":
            if not isinstance(value, list) or len(value) != 2:
                raise TypeError("expected [real, imag]")
            part = np.dtype(f"f{native.itemsize // 2}")
            out = np.zeros((), dtype=native)
            out.real, out.imag = (_parse_float(v, part) for v in value)
            return out[()]
        if kind in "mM":
            if value == "NaT":
                return np.array("NaT", dtype=native)[()]
            return np.array(_parse_int(value, np.dtype("i8")), dtype="i8").view(native)[()]
    except (ValueError, TypeError, OverflowError, binascii.Error) as exc:
        raise MetadataError(f"fill_value: {value!r} is not valid for dtype {dtype_to_json_v2(dtype)!r}: {exc}") from None
    raise MetadataError(f"fill_value: dtype {dtype_to_json_v2(dtype)!r} has no fill-value encoding")  # pragma: no cover


def encode_fill_value_v2(value: Any, dtype: np.dtype, object_codec: str | None = None) -> Any:
    """The V2 JSON ``fill_value`` for a parsed value (the inverse of :func:`parse_fill_value_v2`).

    NaN payloads are lost: V2 knows only ``"NaN"``. Raises MetadataError if
    ``value`` does not fit ``dtype``.
    """
    kind = dtype.kind
    plugin = _plugin_dtype(dtype)
    if value is not None and plugin is not None:
        return plugin.family.fill_to_v2(plugin, plugin.coerce_fill(value))
    if kind == "O":
        if object_codec == "vlen-utf8":
            if not isinstance(value, str):
                raise MetadataError(f"fill_value: a string array needs a str fill value, got {value!r}")
            return str(value)
        if object_codec == "vlen-bytes":
            if not isinstance(value, (bytes, bytearray, np.bytes_)):
                raise MetadataError(f"fill_value: a bytes array needs a bytes fill value, got {value!r}")
            return base64.standard_b64encode(bytes(value)).decode("ascii")
        if value not in (None, b""):
            raise MetadataError(f"fill_value: a vlen-array fill value can only be the empty element, got {value!r}")
        return None
    if value is None:
        return None
    try:
        if dtype.fields is not None or kind == "V":
            raw = bytes(value) if isinstance(value, (bytes, bytearray)) else np.asarray(value, dtype=dtype).tobytes()
            if len(raw) != dtype.itemsize:
                raise ValueError(f"expected {dtype.itemsize} bytes, got {len(raw)}")
            return base64.standard_b64encode(raw).decode("ascii")
        if kind == "S":
            return base64.standard_b64encode(bytes(np.array(value, dtype=dtype)[()])).decode("ascii")
        if kind == "U":
            return str(np.array(value, dtype=dtype)[()])
        scalar = np.asarray(value).astype(dtype.newbyteorder("="))[()]
        if kind == "b":
            return bool(scalar)
        if kind in "iu":
            return int(scalar)
        if kind == "f":
            return _float_to_json(float(scalar))
        if kind == "c":
            return [_float_to_json(float(scalar.real)), _float_to_json(float(scalar.imag))]
        if kind in "mM":
            return int(np.asarray(scalar).view("i8"))
    except (ValueError, TypeError, OverflowError) as exc:
        raise MetadataError(f"fill_value: {value!r} cannot be stored as dtype {dtype_to_json_v2(dtype)!r}: {exc}") from None
    raise MetadataError(f"fill_value: dtype {dtype_to_json_v2(dtype)!r} has no fill-value encoding")  # pragma: no cover


def _parse_object_fill(value: Any, object_codec: str | None) -> Any:
    legacy_empty = value is None or (type(value) is int and value == 0)
    if object_codec == "vlen-utf8":
        if legacy_empty:
            return ""
        if not isinstance(value, str):
            raise TypeError("expected a string (or the legacy 0 / null, read as '')")
        return value
    if object_codec == "vlen-bytes":
        if legacy_empty:
            return b""
        return _b64(value)
    if legacy_empty:
        return None
    raise ValueError("a vlen-array fill value must be null or 0 (the empty element)")


def _b64(value: Any) -> bytes:
    if not isinstance(value, str):
        raise TypeError("expected a base64 string")
    return base64.b64decode(value, validate=True)




def _parse_float(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, bool):
        raise TypeError("expected a number, got a boolean")
    if isinstance(value, (int, float)):
        return dtype.type(value)
    special = {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}
    if isinstance(value, str) and value in special:
        return dtype.type(special[value])
    raise TypeError('expected a number, "NaN", "Infinity" or "-Infinity"')


def _float_to_json(f: float) -> Any:
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


__all__ = ["dtype_to_json_v2", "encode_fill_value_v2", "parse_dtype_v2", "parse_fill_value_v2"]
