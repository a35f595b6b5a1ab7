"""Fixed-size raw bytes: zarr-python's ``raw_bytes`` and the core spec's ``r<bits>``.

Both are numpy ``V<n>``. A numpy ``V<n>`` becomes ``raw_bytes`` (zarr-python
reads no ``r<bits>``); ``r<bits>`` names are read and kept when read. Fill
values: base64 for ``raw_bytes`` (as zarr-python writes), a list of byte
values for ``r<bits>`` (as the core spec), either accepted on read.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import MetadataError
from .family import DataTypeFamily
from .fill_json import b64, parse_raw

if TYPE_CHECKING:
    from .data_type import DataType

RAW_BYTES = "raw_bytes"
"""zarr-python's V3 name for fixed-size raw bytes (numpy ``V<n>``)."""
MAX_ITEMSIZE = 2**31 - 1
"""The largest element numpy's fixed-size types (``V``, ``S``, ``U``) can have."""


class _Raw(DataTypeFamily):
    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        return parse_raw(value, data_type.numpy.itemsize)

    def coerce_fill(self, data_type: DataType, value: Any) -> Any:
        return parse_raw(value, data_type.numpy.itemsize)


class RawBytes(_Raw):
    """``raw_bytes`` with ``{"length_bytes": n}``: numpy ``V<n>``."""

    names = (RAW_BYTES,)

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        n = configuration.get("length_bytes") if isinstance(configuration, dict) else None
        if not isinstance(configuration, dict) or set(configuration) != {"length_bytes"} \
                or isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ITEMSIZE:
            raise MetadataError(
                f"{RAW_BYTES!r} needs configuration {{\"length_bytes\": n}} with n an integer in [1, {MAX_ITEMSIZE}], "
                f"got {configuration!r}"
            )
        return np.dtype(f"V{n}")

    def dtype_to_json(self, data_type: DataType) -> dict[str, Any]:
        return {"name": RAW_BYTES, "configuration": {"length_bytes": data_type.numpy.itemsize}}

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        plain_void = type(dtype) is np.dtypes.VoidDType and dtype.fields is None and dtype.subdtype is None
        return RAW_BYTES if plain_void and dtype.itemsize > 0 else None

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        return b64(bytes(value))


class RawBits(_Raw):
    """The core spec's ``r<bits>`` (a positive multiple of 8 bits): numpy ``V<bits/8>``."""

    name_pattern = re.compile(r"r\d+")

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        self.no_configuration(name, configuration)
        bits = int(name[1:]) if len(name) <= 12 else 0  # a longer name is no size numpy can hold
        if bits <= 0 or bits % 8 or bits // 8 > MAX_ITEMSIZE:
            raise MetadataError(f"{name[:40]!r} must have a positive multiple of 8 bits, at most {8 * MAX_ITEMSIZE}")
        return np.dtype(f"V{bits // 8}")

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        return None  # numpy V<n> is raw_bytes

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        return list(bytes(value))


__all__ = ["RAW_BYTES", "RawBits", "RawBytes"]
