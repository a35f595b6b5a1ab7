"""DataType: one Zarr element type, as the rest of zarrpy sees it.

A :class:`DataType` is an immutable (name, numpy dtype) pair plus the
:class:`~zarrpy.core.dtypes.family.DataTypeFamily` that knows its JSON.
Fixed-size types map to a numpy dtype in native byte order (the stored byte
order belongs to the ``bytes`` codec, not to the type). Variable-length types
(strings, bytes) are flagged ``is_variable`` and travel through the pipeline
as variable-form :class:`~zarrpy.core.array_bytes.ArrayBytes`.

>>> DataType.from_json("float32").fill_from_json("NaN")
np.float32(nan)
>>> DataType.from_json("complex64").fill_to_json(np.complex64(1 - 1j))
[1.0, -1.0]
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass, field
from typing import Any, TypeAlias, cast

import numpy as np
import numpy.typing as npt

from ...errors import MetadataError
from .._typing import JSON
from . import registry
from .family import DataTypeFamily

_FILL_ERRORS = (ValueError, TypeError, OverflowError, binascii.Error)
MAX_NESTING = 128
"""JSON levels a ``data_type`` configuration may have (4 per nested struct, 1
per optional wrapper): deeper ones are refused before parsing, so no recursion
runs deep."""


def _nesting(obj: Any) -> int:
    """How many levels of lists/objects ``obj`` has (iterative: no recursion)."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            if deepest > MAX_NESTING:
                return deepest
            stack.extend((child, depth + 1) for child in item)
    return deepest


@dataclass(frozen=True, slots=True)
class DataType:
    """One Zarr element type.

    ``name`` is the V3 ``data_type`` name; ``numpy`` the in-memory dtype
    (native byte order for numbers); ``is_variable`` marks types whose
    elements have no fixed size; ``family`` is the registered
    :class:`DataTypeFamily` of ``name`` (looked up when not given).
    """

    name: str
    numpy: np.dtype
    is_variable: bool = False
    family: DataTypeFamily = field(default=None, compare=False, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.family is None:
            object.__setattr__(self, "family", registry.family_for_name(self.name))

    # -- construction -------------------------------------------------
    @classmethod
    def from_json(cls, obj: JSON) -> DataType:
        """Parse a V3 ``data_type`` member (a name or ``{"name": …, "configuration": …}``)."""
        config: dict[str, Any] | None = None
        if isinstance(obj, dict):
            unknown = set(obj) - {"name", "configuration"}
            if unknown:
                raise MetadataError(
                    f"data_type: unknown member(s) {sorted(unknown)} (must_understand is not allowed for data types)"
                )
            name = obj.get("name")
            raw_config = obj.get("configuration")
            if raw_config is not None and not isinstance(raw_config, dict):
                raise MetadataError(f"data_type: configuration must be an object, got {raw_config!r}")
            config = raw_config
        else:
            name = obj
        if not isinstance(name, str):
            raise MetadataError(f"data_type: expected a name string, got {obj!r}")
        if config is not None and _nesting(config) > MAX_NESTING:
            raise MetadataError(f"data_type: {name!r} is nested more than {MAX_NESTING} levels deep")
        family = registry.family_for_name(name)
        try:
            dtype = family.dtype_from_json(name, config)
        except MetadataError as exc:
            raise MetadataError(f"data_type: {exc}") from None

        return cls(name, dtype, family.is_variable_dtype(dtype), family)

    @classmethod
    def from_numpy(cls, dtype: DTypeLike) -> DataType:
        """The data type for a numpy dtype (or anything ``np.dtype`` accepts, or a V3 name)."""
        if isinstance(dtype, DataType):
            return dtype
        if isinstance(dtype, dict):  # a V3 data_type member, e.g. {"name": "zarrs.optional", ...}
            return cls.from_json(cast("dict[str, Any]", dtype))  # numpy's {"names", "formats"} form is refused there
        if dtype is str or dtype == "str":
            return cls.from_json("string")
        if dtype is bytes or (isinstance(dtype, str) and dtype in ("bytes", "binary")):
            return cls.from_json("variable_length_bytes")
        if isinstance(dtype, str) and registry.knows_name(dtype):
            try:
                return cls.from_json(dtype)
            except MetadataError:
                pass  # a name that needs a configuration: try numpy's reading of it below
        try:
            dt = np.dtype(dtype)
        except TypeError as exc:
            raise MetadataError(f"data_type: cannot interpret {dtype!r} as a data type") from exc
        if dt.kind == "O":
            raise MetadataError(
                f"data_type: numpy dtype {dt.str!r} is ambiguous; use dtype=str for strings "
                "or dtype=bytes for variable-length bytes"
            )
        found = registry.family_for_numpy(dt)
        if found is None:
            raise MetadataError(f"data_type: numpy dtype {dt.str!r} has no Zarr V3 data type")
        family, name = found
        return cls(name, family.dtype_for_numpy(name, dt), family.is_variable, family)

    def to_json(self) -> str | dict[str, Any]:
        """The V3 ``data_type`` member."""
        return self.family.dtype_to_json(self)

    @property
    def itemsize(self) -> int:
        """Bytes per element; 0 for variable-length types."""
        return 0 if self.is_variable else self.numpy.itemsize

    @property
    def is_string(self) -> bool:
        """True for variable-length strings (numpy ``StringDType``)."""
        return self.is_variable and self.numpy.kind == "T"

    # -- fill values --------------------------------------------------
    def default_fill(self) -> Any:
        """The fill value used when none is given (zero / False / empty / NaT)."""
        return self.family.default_fill(self)

    def fill_from_json(self, value: JSON) -> Any:
        """Decode a ``fill_value`` JSON member into a scalar of this type."""
        try:
            return self.family.fill_from_json(self, value)
        except (*_FILL_ERRORS, MetadataError) as exc:
            raise MetadataError(f"fill_value: {value!r} is not valid for data type {self.name!r}: {exc}") from None

    def fill_to_json(self, value: Any) -> JSON:
        """Encode a fill value (anything the type can cast) as JSON."""
        return self.family.fill_to_json(self, self.coerce_fill(value))

    def coerce_fill(self, value: Any) -> Any:
        """Cast a user-given fill value to this type, refusing lossy casts."""
        if value is None:
            return self.default_fill()
        try:
            return self.family.coerce_fill(self, value)
        except (*_FILL_ERRORS, MetadataError) as exc:
            raise MetadataError(f"fill_value: {value!r} cannot be cast to data type {self.name!r}: {exc}") from None

    def to_v2(self) -> str | list[Any] | None:
        """This type's own V2 ``dtype`` member, or None where the numpy typestr applies."""
        return self.family.dtype_to_v2(self)


DTypeLike: TypeAlias = npt.DTypeLike | DataType | dict[str, Any]
"""What a ``dtype=`` argument takes (:meth:`DataType.from_numpy`): anything
``numpy.dtype`` accepts, ``str``/``bytes`` for variable-length strings and
bytes, a V3 data type name (``"bfloat16"``, ``"string"``), a V3 ``data_type``
JSON object, or a :class:`DataType`."""

__all__ = ["DTypeLike", "DataType"]
