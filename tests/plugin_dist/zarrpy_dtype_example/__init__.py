"""An example zarrpy data-type plugin: ``example.q8_8``, signed 8.8 fixed point.

Registered only through the ``zarrpy.data_types`` entry-point group (see
``pyproject.toml``). Elements are stored as little-endian int16 counts of
1/256 (numpy ``int16`` in memory); fill values are JSON numbers in real
units (``1.5`` is the count 384). The V2 form is the dtype string
``"example.q8_8"``. A separate package from the codec plugin, so loading one
never imports the other.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrpy.core.dtypes import DataType, DataTypeFamily
from zarrpy.errors import MetadataError

SCALE = 256


class FixedPoint88(DataTypeFamily):
    """Signed 8.8 fixed point stored as int16."""

    names = ("example.q8_8",)
    v2_names = ("example.q8_8",)

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        self.no_configuration(name, configuration)
        return np.dtype("int16")

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        return None  # int16 stays int16; ask for this type by name

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError("expected a number")
        return self.coerce_fill(data_type, value)

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        return int(value) / SCALE

    def coerce_fill(self, data_type: DataType, value: Any) -> Any:
        if isinstance(value, np.int16):  # already a count
            return value
        count = float(value) * SCALE
        if not count.is_integer() or not -(2**15) <= count < 2**15:
            raise MetadataError(f"{value!r} is not a multiple of 1/256 in [-128, 128)")
        return np.int16(count)

    def dtype_from_v2(self, text: str) -> np.dtype:
        return np.dtype("<i2")

    def dtype_to_v2(self, data_type: DataType) -> str:
        return "example.q8_8"
