"""Zarr data types: V3 names <-> numpy dtypes, fill-value JSON, and the plugin registry.

:class:`DataType` is what the rest of zarrpy handles; each one belongs to a
:class:`DataTypeFamily` (the plugin interface) found through the registry
(:mod:`.registry`: built-ins, :func:`register_data_type`, and the entry-point
group ``zarrpy.data_types``).
"""

from __future__ import annotations

from .bits import bit_size
from .data_type import DataType
from .family import DataTypeFamily
from .fill_json import parse_int
from .raw import RAW_BYTES
from .registry import ENTRY_POINT_GROUP, register_data_type
from .text import BYTES_DTYPE, STRING_DTYPE
from .time import NAT

__all__ = [
    "BYTES_DTYPE",
    "DataType",
    "DataTypeFamily",
    "ENTRY_POINT_GROUP",
    "NAT",
    "RAW_BYTES",
    "STRING_DTYPE",
    "bit_size",
    "parse_int",
    "register_data_type",
]
