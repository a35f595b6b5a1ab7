"""The core spec's numeric types: bool, (u)int8..64, float16..64, complex64/128."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import MetadataError
from .family import DataTypeFamily
from .fill_json import float_to_json, parse_float, parse_int

if TYPE_CHECKING:
    from .data_type import DataType

_CORE = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)


def complex_from_json(value: Any, dtype: np.dtype, part: np.dtype) -> Any:
    """``[real, imag]`` JSON (each a float form) as a complex scalar of ``dtype`` with parts ``part``."""
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError("expected [real, imag]")
    out = np.zeros(2, dtype=part)
    out[0], out[1] = (parse_float(v, part) for v in value)
    return out.view(dtype)[0]


def complex_to_json(value: Any, part: np.dtype) -> list[Any]:
    """A complex scalar as ``[real, imag]`` JSON (its parts viewed as ``part``)."""
    re, im = np.asarray(value).reshape(1).view(part)
    return [float_to_json(re), float_to_json(im)]


class CoreNumbers(DataTypeFamily):
    """bool, integers, IEEE floats and complex numbers, named as numpy names them."""

    names = _CORE

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        self.no_configuration(name, configuration)
        return np.dtype(name)

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        if dtype.kind not in "biufc" or dtype.fields is not None or type(dtype).__module__ != "numpy.dtypes":
            return None
        native = dtype.newbyteorder("=") if dtype.byteorder not in ("=", "|") else dtype
        return native.name if native.name in _CORE else None

    def dtype_for_numpy(self, name: str, dtype: np.dtype) -> np.dtype:
        return np.dtype(name)

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        dt = data_type.numpy
        if dt.kind == "b":
            if not isinstance(value, bool):
                raise ValueError("expected true or false")
            return np.bool_(value)
        if dt.kind in "iu":
            return dt.type(parse_int(value, dt))
        if dt.kind == "f":
            return parse_float(value, dt)
        return complex_from_json(value, dt, np.dtype(f"f{dt.itemsize // 2}"))

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        kind = data_type.numpy.kind
        if kind == "b":
            return bool(value)
        if kind in "iu":
            return int(value)
        if kind == "f":
            return float_to_json(value)
        if kind == "c":
            return complex_to_json(value, np.dtype(f"f{data_type.numpy.itemsize // 2}"))
        raise MetadataError(f"data type {data_type.name!r} has no fill-value codec")  # pragma: no cover


__all__ = ["CoreNumbers", "complex_from_json", "complex_to_json"]
