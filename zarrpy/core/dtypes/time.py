"""numpy's datetime64 / timedelta64 as zarr-python 3 names them.

V3 names ``numpy.datetime64`` / ``numpy.timedelta64`` with a
``{"unit", "scale_factor"}`` configuration; values and fill values are int64
counts of the unit, NaT the int64 minimum (the default fill value).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import MetadataError
from .family import DataTypeFamily
from .fill_json import parse_int

if TYPE_CHECKING:
    from .data_type import DataType

_BASE = {"numpy.datetime64": "datetime64", "numpy.timedelta64": "timedelta64"}
_NAMES = {"M": "numpy.datetime64", "m": "numpy.timedelta64"}
UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "generic")
"""The ``unit`` values a datetime64/timedelta64 configuration may have (numpy's units)."""
NAT = np.iinfo(np.int64).min
"""The int64 count numpy stores for NaT (zarr-python's fill-value JSON for it)."""


class NumpyTime(DataTypeFamily):
    """``numpy.datetime64`` / ``numpy.timedelta64`` with a unit and a scale factor."""

    names = ("numpy.datetime64", "numpy.timedelta64")

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        if not isinstance(configuration, dict) or set(configuration) != {"unit", "scale_factor"}:
            raise MetadataError(f"{name!r} needs configuration {{\"unit\": …, \"scale_factor\": …}}, got {configuration!r}")
        unit, scale = configuration["unit"], configuration["scale_factor"]
        if unit not in UNITS:
            raise MetadataError(f"{name!r}: unit {unit!r} is not one of {', '.join(UNITS)}")
        if isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale < 2**31:
            raise MetadataError(f"{name!r}: scale_factor must be an integer in [1, 2**31), got {scale!r}")
        if unit == "generic" and scale != 1:
            raise MetadataError(f"{name!r}: a generic unit takes no scale_factor, got {scale!r}")
        base = _BASE[name]
        return np.dtype(base if unit == "generic" else f"{base}[{scale}{unit}]")

    def dtype_to_json(self, data_type: DataType) -> dict[str, Any]:
        unit, scale = np.datetime_data(data_type.numpy)
        return {"name": data_type.name, "configuration": {"unit": unit, "scale_factor": int(scale)}}

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        return _NAMES.get(dtype.kind)

    def dtype_for_numpy(self, name: str, dtype: np.dtype) -> np.dtype:
        return dtype.newbyteorder("=")

    def default_fill(self, data_type: DataType) -> Any:
        return np.array("NaT", dtype=data_type.numpy)[()]  # as zarr-python

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        count = NAT if value == "NaT" else parse_int(value, np.dtype(np.int64))
        return np.array(count, dtype=np.int64).view(data_type.numpy)[()]

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        return int(np.asarray(value).view(np.int64))  # NaT: the int64 minimum, as zarr-python writes


__all__ = ["NAT", "UNITS", "NumpyTime"]
