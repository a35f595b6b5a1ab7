"""Structured (record) types: zarr-python 3's ``struct`` (and its legacy ``structured``).

V3 forms, as zarr-python 3.4 reads and writes them (zarr-extensions
``data-types/struct``)::

    {"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": "float64"},
        {"name": "b", "data_type": {"name": "struct", "configuration": {...}}}]}}
    {"name": "structured", "configuration": {"fields": [["a", "float64"], ...]}}   # legacy, read

``struct`` is written for new arrays, also when one is created from a
``structured`` data type (:func:`as_written`); a stored ``structured`` keeps
its name and tuple-style fields when its metadata is rewritten. Fields may be any
fixed-size zarrpy type (numbers, datetimes, raw bytes, fixed-length text,
nested structs); variable-length fields are refused.

In memory a struct is a packed numpy structured dtype. A V3 struct's fields
are little-endian (native on little-endian hosts): V3 metadata has no per-field
byte order, the ``bytes`` codec's ``endian`` applies to every field (zarr-python
writes ``"little"``; a ``bytes`` codec without ``endian`` on a struct with
multi-byte fields means little-endian to zarr-python, and zarrpy stores the
in-memory layout, which is the same). A V2 struct keeps the byte order of each
field as the ``.zarray`` list spells it (``[["a", ">f8"], ["b", "<i4"]]``),
and the chunk holds exactly that layout, as zarr-python reads and writes it.
Subarray fields (``["b", "<f8", [2]]``) exist only in V2: zarr-python 3.4
reads and writes none, and the V3 struct has no field shape.

Fill values (V3): an object of field values, each in its field type's JSON
(``{"a": "NaN", "b": {"x": 3, "y": "YWI="}}``); a missing field takes that
field type's default (NaT for datetimes, as zarr-python). A base64 string of
the little-endian element bytes is read too (zarr-python's legacy form, and
what zarrpy writes for ``structured``). The default fill value is all zero
bytes (zarr-python's ``default_scalar``, a zero datetime included). V2 fill
values are base64 of the element in the ``.zarray`` layout
(:mod:`zarrpy.metadata._v2_types`). User fill values may be a tuple or list
(one value per field), a dict by field name, a ``numpy.void`` or the raw bytes
of one element in the in-memory layout.
"""

from __future__ import annotations

import base64
import sys
from typing import Any, Literal

import numpy as np

from ...errors import MetadataError
from .data_type import DataType  # data_type -> registry loads this module by name, at run time: no cycle
from .family import DataTypeFamily
from .fill_json import b64

STRUCT = "struct"
"""The V3 name zarrpy writes for structured types (zarr-python 3's current one)."""
LEGACY_STRUCT = "structured"
"""zarr-python's earlier V3 name for structured types: read, and kept when rewritten."""


def is_struct(dtype: np.dtype) -> bool:
    """True for a numpy structured dtype (one with fields)."""
    return dtype.fields is not None


def pack_struct(dtype: np.dtype, order: Literal["<", ">"] | None = "<", where: str = "") -> np.dtype:
    """``dtype`` with its fields packed (no padding or offsets), in field order.

    ``order`` ``"<"``/``">"`` sets every field's byte order (nested fields and
    subarrays included); None keeps each field's own. Raises MetadataError
    naming the field for titles, object or variable-length fields, and field
    types zarrpy has no data type for.
    """
    if dtype.names is None or dtype.fields is None:
        raise MetadataError(f"{where or 'dtype'}: expected a structured dtype, got {dtype}")
    if not dtype.names:
        raise MetadataError(f"{where or 'dtype'}: a struct needs at least one field")
    parts: list[Any] = []
    for name in dtype.names:
        sub, _offset, *title = dtype.fields[name]
        path = f"{where}.{name}" if where else name
        if title:
            raise MetadataError(f"field {path!r} has a title ({title[0]!r}); struct fields have names only")
        shape: tuple[int, ...] = ()
        if sub.subdtype is not None:
            sub, shape = sub.subdtype
        if sub.fields is not None:
            sub = pack_struct(sub, order, path)
        else:
            if sub.hasobject or sub.kind in "OT" or (sub.kind in "SU" and sub.itemsize == 0):
                raise MetadataError(
                    f"field {path!r} has the variable-length type {sub}; struct fields must have a fixed size"
                )
            try:
                field_type = DataType.from_numpy(sub)
            except MetadataError as exc:
                raise MetadataError(f"field {path!r}: {exc}") from None
            if field_type.is_variable:  # pragma: no cover - refused above; a plugin could claim one
                raise MetadataError(f"field {path!r} has the variable-length type {field_type.name!r}")
            if order is not None and sub.itemsize > 1 and sub.byteorder != "|":
                sub = sub.newbyteorder(order)
        parts.append((name, sub, shape) if shape else (name, sub))
    try:
        return np.dtype(parts)
    except (TypeError, ValueError) as exc:  # pragma: no cover - rebuilt from a valid dtype
        raise MetadataError(f"{where or 'dtype'}: not a valid structured dtype: {exc}") from None


def as_written(data_type: DataType) -> DataType:
    """The data type a new array stores for ``data_type``: ``struct`` for the
    legacy ``structured`` (zarr-extensions: read it, write ``struct``; its
    fields then take the object form and the fill value the field-object
    form); any other type as it is."""
    if data_type.name != LEGACY_STRUCT:
        return data_type
    return DataType(STRUCT, data_type.numpy, data_type.is_variable, data_type.family)


def has_multi_byte_fields(dtype: np.dtype) -> bool:
    """zarr-python's rule for the default ``bytes`` endian: some top-level field
    is more than one byte (a nested struct or ``S3`` counts by its size)."""
    return any(dtype.fields[name][0].itemsize > 1 for name in dtype.names or ())  # type: ignore[index]


def field_byte_orders(dtype: np.dtype) -> set[str]:
    """The byte orders (``"little"``/``"big"``) of a struct's multi-byte
    fields that have one, nested fields and subarrays included."""
    out: set[str] = set()
    for name in dtype.names or ():
        sub = dtype.fields[name][0]  # type: ignore[index]
        base = sub.subdtype[0] if sub.subdtype is not None else sub
        if base.fields is not None:
            out |= field_byte_orders(base)
        elif base.itemsize > 1 and base.byteorder != "|" and type(base).__module__ == "numpy.dtypes":
            little = base.byteorder == "<" or (base.byteorder == "=" and sys.byteorder == "little")
            out.add("little" if little else "big")
    return out


def v3_endian(dtype: np.dtype) -> str | None:
    """The ``bytes`` codec ``endian`` that stores struct ``dtype`` in its own
    layout: its fields' one byte order (``"little"`` when none has one but some
    field is multi-byte, as zarr-python), None for 1-byte fields only -- or
    ``"mixed"`` when the fields differ (no V3 form: V3 stores every field in
    the codec's one order)."""
    orders = field_byte_orders(dtype)
    if len(orders) > 1:
        return "mixed"
    if orders:
        return orders.pop()
    return "little" if has_multi_byte_fields(dtype) else None


def unswappable_fields(dtype: np.dtype, where: str = "") -> list[str]:
    """Paths of the fields numpy cannot byte-swap (ml_dtypes' multi-byte types:
    ``newbyteorder`` leaves them as they are), nested structs included."""
    out: list[str] = []
    for name in dtype.names or ():
        sub = dtype.fields[name][0]  # type: ignore[index]
        base = sub.subdtype[0] if sub.subdtype is not None else sub
        path = f"{where}.{name}" if where else name
        if base.fields is not None:
            out += unswappable_fields(base, path)
        elif type(base).__module__ != "numpy.dtypes" and base.itemsize > 1:
            out.append(path)
    return out


class StructFamily(DataTypeFamily):
    """``struct`` (written) and ``structured`` (read, kept): numpy structured dtypes."""

    names = (STRUCT, LEGACY_STRUCT)

    # -- names and configuration ---------------------------------------------

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        if not isinstance(configuration, dict) or set(configuration) != {"fields"}:
            raise MetadataError(f"{name!r} needs configuration {{\"fields\": [...]}}, got {configuration!r}")
        fields = configuration["fields"]
        if not isinstance(fields, list) or not fields:
            raise MetadataError(f"{name!r}: 'fields' must be a non-empty list, got {fields!r}")
        parts: list[tuple[str, np.dtype]] = []
        seen: set[str] = set()
        for i, item in enumerate(fields):
            where = f"fields[{i}]"
            if isinstance(item, dict) and set(item) == {"name", "data_type"}:
                fname, ftype = item["name"], item["data_type"]
            elif isinstance(item, list) and len(item) == 2:  # legacy tuple-style field
                fname, ftype = item
            else:
                raise MetadataError(
                    f"{name!r}: {where}: expected {{\"name\": …, \"data_type\": …}} or [name, data_type], got {item!r}"
                )
            if not isinstance(fname, str) or not fname or fname in seen:
                raise MetadataError(f"{name!r}: {where}: field names must be unique non-empty strings, got {fname!r}")
            seen.add(fname)
            try:
                field_type = DataType.from_json(ftype)
            except MetadataError as exc:
                raise MetadataError(f"{name!r}: field {fname!r}: {_strip(str(exc))}") from None
            if field_type.is_variable:
                raise MetadataError(
                    f"{name!r}: field {fname!r} has the variable-length type {field_type.name!r}; "
                    "struct fields must have a fixed size"
                )
            parts.append((fname, field_type.numpy))
        try:
            return pack_struct(np.dtype(parts), "<")
        except (TypeError, ValueError) as exc:
            raise MetadataError(f"{name!r}: not a valid structured dtype: {exc}") from None

    def dtype_to_json(self, data_type: DataType) -> dict[str, Any]:
        fields: list[Any] = []
        for fname, field_type in _field_types(data_type, "data_type"):
            if data_type.name == LEGACY_STRUCT:
                fields.append([fname, field_type.to_json()])
            else:
                fields.append({"name": fname, "data_type": field_type.to_json()})
        return {"name": data_type.name, "configuration": {"fields": fields}}

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        return STRUCT if type(dtype) is np.dtypes.VoidDType and dtype.fields is not None else None

    def dtype_for_numpy(self, name: str, dtype: np.dtype) -> np.dtype:
        return pack_struct(dtype, "<")

    # -- fill values ----------------------------------------------------------

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        dtype = data_type.numpy
        if isinstance(value, dict):
            out = np.zeros((), dtype=dtype)
            for fname, field_type in _field_types(data_type, "fill_value"):
                if fname in value:  # other keys are ignored, as zarr-python does
                    try:
                        out[fname] = field_type.fill_from_json(value[fname])
                    except MetadataError as exc:
                        raise ValueError(f"field {fname!r}: {_strip(str(exc))}") from None
                else:
                    out[fname] = field_type.default_fill()
            return out[()]
        if isinstance(value, str):  # base64 of the little-endian element (legacy, and `structured`)
            raw = base64.b64decode(value, validate=True)
            if len(raw) != dtype.itemsize:
                raise ValueError(f"expected base64 of {dtype.itemsize} bytes, got {len(raw)}")
            return np.frombuffer(raw, dtype=_ordered(dtype, "<")).astype(dtype)[0]
        raise TypeError("expected an object of field values or a base64 string")

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        dtype = data_type.numpy
        scalar = np.asarray(value, dtype=dtype)
        if data_type.name == LEGACY_STRUCT:
            return b64(scalar.astype(_ordered(dtype, "<")).tobytes())
        return {fname: field_type.fill_to_json(scalar[fname][()]) for fname, field_type in _field_types(data_type, "fill_value")}

    def coerce_fill(self, data_type: DataType, value: Any) -> Any:
        dtype = data_type.numpy
        if isinstance(value, np.void) and value.dtype.fields is not None:
            if len(value.dtype.names or ()) != len(dtype.names or ()):
                raise ValueError(f"expected {len(dtype.names or ())} fields, got {value.dtype}")
            return np.asarray(value).astype(dtype)[()]
        if isinstance(value, (bytes, bytearray, np.void)):
            raw = bytes(value)
            if len(raw) != dtype.itemsize:
                raise ValueError(f"expected {dtype.itemsize} bytes, got {len(raw)}")
            return np.frombuffer(raw, dtype=dtype)[0]
        return _coerce_fields(dtype, value, "")[()]


# -- helpers ----------------------------------------------------------------------


def _coerce_fields(dtype: np.dtype, value: Any, where: str) -> np.ndarray:
    """A 0-d array of struct ``dtype`` from a tuple/list or dict of field values."""
    names = dtype.names or ()
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.fields is not None:
        value = value[()]
    if isinstance(value, np.void) and value.dtype.fields is not None:
        return np.asarray(value).astype(dtype)
    if isinstance(value, dict):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise ValueError(f"{_at(where)}unknown field(s) {unknown}; the fields are {list(names)}")
        items = [(n, value[n]) for n in names if n in value]
    elif isinstance(value, (tuple, list)):
        if len(value) != len(names):
            raise ValueError(f"{_at(where)}expected {len(names)} values (fields {list(names)}), got {len(value)}")
        items = list(zip(names, value))
    else:
        raise TypeError(f"{_at(where)}expected a tuple or dict of field values, a numpy.void or bytes, "
                        f"got {type(value).__name__}")
    out = np.zeros((), dtype=dtype)
    given = {n for n, _ in items}
    for fname in names:
        sub = dtype.fields[fname][0]  # type: ignore[index]
        path = f"{where}.{fname}" if where else fname
        base, shape = sub.subdtype if sub.subdtype is not None else (sub, ())
        if fname not in given:
            if base.fields is None:
                out[fname] = DataType.from_numpy(base).default_fill()
            continue
        v = dict(items)[fname]
        try:
            if shape:
                out[fname] = _coerce_subarray(base, shape, v, path)
            elif base.fields is not None:
                out[fname] = _coerce_fields(base, v, path)
            else:
                out[fname] = DataType.from_numpy(base).coerce_fill(v)
        except MetadataError as exc:
            raise ValueError(f"field {path!r}: {_strip(str(exc))}") from None
    return out


def _coerce_subarray(base: np.dtype, shape: tuple[int, ...], value: Any, where: str) -> np.ndarray:
    arr = np.asarray(value, dtype=object) if base.fields is not None else np.asarray(value)
    if arr.shape != shape:
        raise ValueError(f"field {where!r}: expected shape {shape}, got {arr.shape}")
    out = np.zeros(shape, dtype=base)
    for idx in np.ndindex(*shape):
        if base.fields is not None:
            out[idx] = _coerce_fields(base, arr[idx], where)
        else:
            out[idx] = DataType.from_numpy(base).coerce_fill(arr[idx][()] if isinstance(arr[idx], np.ndarray) else arr[idx])
    return out


def _field_types(data_type: DataType, what: str) -> list[tuple[str, DataType]]:
    """(name, data type) of each field; a subarray field (V2 only) raises MetadataError."""
    dtype = data_type.numpy
    out = []
    for fname in dtype.names or ():
        sub = dtype.fields[fname][0]  # type: ignore[index]
        if sub.subdtype is not None:
            raise MetadataError(
                f"field {fname!r} is a subarray of shape {sub.shape}; a Zarr V3 struct field has no shape "
                "(subarray fields exist only in Zarr V2: use zarr_format=2)"
            )
        out.append((fname, DataType.from_numpy(sub)))
    return out


def _ordered(dtype: np.dtype, order: Literal["<", ">"]) -> np.dtype:
    return dtype.newbyteorder(order)


def _at(where: str) -> str:
    return f"field {where!r}: " if where else ""


def _strip(message: str) -> str:
    """A nested data type's message without the ``data_type:``/``fill_value:`` prefix."""
    for prefix in ("data_type: ", "fill_value: "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


__all__ = [
    "LEGACY_STRUCT", "STRUCT", "as_written", "StructFamily", "has_multi_byte_fields", "is_struct", "pack_struct",
    "field_byte_orders", "unswappable_fields", "v3_endian",
]
