"""Strings and bytes: variable-length (``string``, ``variable_length_bytes``) and
fixed-length (``null_terminated_bytes`` = numpy ``S``, ``fixed_length_utf32`` = ``U``)."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import MetadataError
from .family import DataTypeFamily
from .fill_json import b64
from .raw import MAX_ITEMSIZE

if TYPE_CHECKING:
    from .data_type import DataType

STRING_DTYPE = np.dtypes.StringDType()
"""The numpy dtype variable-length strings read as (numpy 2's ``StringDType``)."""
BYTES_DTYPE = np.dtype(object)
"""The numpy dtype variable-length bytes read as (object, holding ``bytes``)."""


class VariableLength(DataTypeFamily):
    """Variable-length strings and bytes under every name peers write.

    zarrpy writes ``string`` and ``variable_length_bytes`` (zarr-python's
    names); ``bytes`` (zarrs) and ``binary`` read as variable-length bytes,
    and a name read is kept when an existing array's metadata is rewritten.
    """

    names = ("string", "variable_length_bytes", "bytes", "binary")
    is_variable = True

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        self.no_configuration(name, configuration)
        return STRING_DTYPE if name == "string" else BYTES_DTYPE

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        return "string" if dtype.kind == "T" or (dtype.kind == "U" and dtype.itemsize == 0) else None

    def dtype_for_numpy(self, name: str, dtype: np.dtype) -> np.dtype:
        return STRING_DTYPE

    def default_fill(self, data_type: DataType) -> Any:
        return "" if data_type.is_string else b""

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        if data_type.is_string:
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

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        return value if data_type.is_string else b64(value)

    def coerce_fill(self, data_type: DataType, value: Any) -> Any:
        if data_type.is_string and isinstance(value, (str, np.str_)):
            return str(value)
        if not data_type.is_string and isinstance(value, (bytes, bytearray, np.bytes_)):
            return bytes(value)
        raise TypeError(f"expected {'str' if data_type.is_string else 'bytes'}, got {type(value).__name__}")


class FixedLengthText(DataTypeFamily):
    """``null_terminated_bytes`` (numpy ``S<n>``) and ``fixed_length_utf32`` (``U<n>``),
    as zarr-python names them: ``{"length_bytes": n}``."""

    names = ("null_terminated_bytes", "fixed_length_utf32")

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        n = configuration.get("length_bytes") if isinstance(configuration, dict) else None
        unit = 4 if name == "fixed_length_utf32" else 1
        if not isinstance(configuration, dict) or isinstance(n, bool) or not isinstance(n, int) \
                or not 1 <= n <= MAX_ITEMSIZE or n % unit or set(configuration) != {"length_bytes"}:
            raise MetadataError(
                f"{name!r} needs configuration {{\"length_bytes\": n}} with n a positive "
                f"multiple of {unit}, at most {MAX_ITEMSIZE}, got {configuration!r}"
            )
        return np.dtype(f"S{n}" if unit == 1 else f"U{n // 4}")

    def dtype_to_json(self, data_type: DataType) -> dict[str, Any]:
        return {"name": data_type.name, "configuration": {"length_bytes": data_type.numpy.itemsize}}

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        if dtype.kind in "SU" and dtype.itemsize:
            return "null_terminated_bytes" if dtype.kind == "S" else "fixed_length_utf32"
        if dtype.kind == "S":
            raise MetadataError(
                f"data_type: numpy dtype {dtype.str!r} is ambiguous; use dtype=str for strings "
                "or dtype=bytes for variable-length bytes"
            )
        return None

    def dtype_for_numpy(self, name: str, dtype: np.dtype) -> np.dtype:
        return dtype.newbyteorder("=") if dtype.kind == "U" else dtype

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        if data_type.numpy.kind == "S":
            if not isinstance(value, str):
                raise TypeError("expected a base64 string")
            return np.bytes_(base64.b64decode(value, validate=True))
        if not isinstance(value, str):
            raise TypeError("expected a JSON string")
        return np.str_(value)

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        return b64(bytes(value)) if data_type.numpy.kind == "S" else str(value)

    def coerce_fill(self, data_type: DataType, value: Any) -> Any:
        kind = data_type.numpy.kind
        want = (bytes, np.bytes_) if kind == "S" else (str, np.str_)
        if not isinstance(value, want) or len(value) > data_type.numpy.itemsize // (4 if kind == "U" else 1):
            raise ValueError(f"expected a {data_type.numpy} value")
        return data_type.numpy.type(value)

    def default_fill(self, data_type: DataType) -> Any:
        return np.zeros((), dtype=data_type.numpy)[()]


__all__ = ["BYTES_DTYPE", "STRING_DTYPE", "FixedLengthText", "VariableLength"]
