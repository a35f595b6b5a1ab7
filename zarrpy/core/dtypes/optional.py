"""zarrs' ``optional`` (nullable) data type: any data type, plus "missing".

V3 JSON, as zarrs 0.23 writes it (``zarrs_data_type::OptionalDataType``)::

    "data_type": {"name": "zarrs.optional",
                  "configuration": {"name": "int16", "configuration": {}}}

The inner type is ``name`` plus ``configuration`` (zarrs requires the member;
``{}`` for a type without one, and zarrpy writes it so; a missing one is
read as ``{}``). Inner types nest (``optional`` of ``optional``). zarrpy
reads the name ``optional`` too (zarrs' name before it took the ``zarrs.``
prefix; kept when such an array's metadata is rewritten) and writes
``zarrs.optional`` for new arrays.

Known limit: the in-memory dtype of an optional string and of optional bytes
is the same numpy ``object`` dtype, so those two :class:`DataType` values
compare equal (their JSON differs; nothing in zarrpy keys on the equality).

Fill values: ``null`` is missing; ``[v]`` is present with the inner type's
fill-value JSON ``v`` (``[null]`` is "present, inner missing" for a nested
type).

**Elements inside zarrpy** are the inner element's bytes followed by one
validity byte (1 present, 0 missing) -- the layout zarrs gives its optional
fill values in memory, so the pipeline (indexing, chunk I/O, sharding)
carries them unchanged:

- inner type of fixed size: a packed numpy structured element
  ``[("value", inner), ("valid", bool)]``; a missing element's value is all
  zero bytes (so "all missing" compares equal to the ``null`` fill bit for
  bit, as zarrs decodes it);
- variable-length inner type (``string``, bytes): variable-length elements,
  the inner element's bytes then the validity byte; a missing element is the
  single byte ``0``.

The ``zarrs.optional`` codec (:mod:`zarrpy.codecs.optional`) splits such
chunks into mask and values. The user-facing form (numpy masked arrays) is
made at the array edge, :mod:`zarrpy.pipeline.values`.

The inner :class:`~zarrpy.core.dtypes.DataType` travels in the numpy dtype's
``metadata`` (key :data:`META_KEY`); :func:`inner_type` reads it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MetadataError
from .data_type import DataType
from .family import DataTypeFamily

OPTIONAL = "zarrs.optional"
"""The V3 name of zarrs' nullable data type (an inner type plus a validity mask)."""
META_KEY = "zarrpy.optional.inner"
VALUE, VALID = "value", "valid"


class EncodedOptional(bytes):
    """A fill value of an optional type over a variable-length type, in
    element form (inner bytes + validity byte); marks it as already coerced."""

    __slots__ = ()


def optional_dtype(inner: DataType) -> np.dtype:
    """The numpy dtype of ``optional`` over ``inner`` (the inner type in its metadata)."""
    if inner.is_variable:
        return np.dtype(object, metadata={META_KEY: inner})
    return np.dtype([(VALUE, inner.numpy), (VALID, np.bool_)], metadata={META_KEY: inner})


def inner_type(data_type: DataType) -> DataType:
    """The inner data type of an optional ``data_type``."""
    meta = data_type.numpy.metadata
    inner = meta.get(META_KEY) if meta else None
    if inner is None:
        raise MetadataError(f"data type {data_type.name!r} has lost its inner type (numpy dtype {data_type.numpy})")
    return inner  # type: ignore[no-any-return]


def is_optional(data_type: DataType) -> bool:
    """True for zarrs' optional type (any nesting)."""
    meta = data_type.numpy.metadata
    return bool(meta) and META_KEY in meta  # type: ignore[operator]


def reads_in_pairs(data_type: DataType) -> bool:
    """True for an optional string type with one optional level: its reads
    fill value/flag pairs (:mod:`zarrpy.pipeline.paired`)."""
    if not is_optional(data_type):
        return False
    inner = inner_type(data_type)
    return inner.is_string and not is_optional(inner)


def is_paired_box(dest: Any, shape: tuple[int, ...]) -> bool:
    """Whether ``dest`` is a box of a paired read's buffer for a chunk of
    ``shape``: StringDType, ``shape`` plus a last axis of 2 (value, flag)."""
    return bool(dest.dtype.kind == "T" and dest.shape == (*tuple(shape), 2))


class OptionalFamily(DataTypeFamily):
    """``zarrs.optional`` (read also as ``optional``): a nullable wrapper of any type."""

    names = (OPTIONAL, "optional")

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        if not isinstance(configuration, dict):
            raise MetadataError(
                f"{name!r} needs configuration {{\"name\": <inner data type>, \"configuration\": {{...}}}}, "
                f"got {configuration!r}"
            )
        unknown = set(configuration) - {"name", "configuration"}
        if unknown:
            raise MetadataError(f"{name!r}: unknown configuration member(s) {sorted(unknown)}")
        inner_name = configuration.get("name")
        if not isinstance(inner_name, str):
            raise MetadataError(f"{name!r}: configuration 'name' must be a data type name, got {inner_name!r}")
        inner_config = configuration.get("configuration", {})
        if not isinstance(inner_config, dict):
            raise MetadataError(f"{name!r}: configuration 'configuration' must be an object, got {inner_config!r}")
        try:
            inner = DataType.from_json({"name": inner_name, "configuration": inner_config} if inner_config else inner_name)
        except MetadataError as exc:
            raise MetadataError(f"{name!r}: inner {exc!s}") from None
        return optional_dtype(inner)

    def is_variable_dtype(self, dtype: np.dtype) -> bool:
        return dtype.kind == "O"

    def dtype_to_json(self, data_type: DataType) -> dict[str, Any]:
        inner = inner_type(data_type).to_json()
        if isinstance(inner, str):
            inner = {"name": inner, "configuration": {}}
        else:
            inner = {"name": inner["name"], "configuration": inner.get("configuration") or {}}
        return {"name": data_type.name, "configuration": inner}

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        return None  # made by name only: zarrs.optional wraps a type, numpy has no such dtype

    def dtype_to_v2(self, data_type: DataType) -> str | list[Any] | None:
        raise MetadataError(f"data type {data_type.name!r} has no Zarr V2 form (zarrs writes it in V3 only)")

    # -- fill values ----------------------------------------------------
    def default_fill(self, data_type: DataType) -> Any:
        return missing(data_type)

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        if value is None:
            return missing(data_type)
        if not isinstance(value, list) or len(value) != 1:
            raise ValueError("expected null (missing) or a one-element list [inner fill value]")
        inner = inner_type(data_type)
        return present(data_type, inner.fill_from_json(value[0]))

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        inner_value, valid = split(data_type, value)
        if not valid:
            return None
        return [inner_type(data_type).fill_to_json(inner_value)]

    def coerce_fill(self, data_type: DataType, value: Any) -> Any:
        if value is None or value is np.ma.masked:
            return missing(data_type)
        if data_type.is_variable and isinstance(value, EncodedOptional):
            split(data_type, value)  # checks it
            return value
        if isinstance(value, np.void) and value.dtype == data_type.numpy:
            return value
        return present(data_type, inner_type(data_type).coerce_fill(value))


def optional_of(inner: Any) -> DataType:
    """The optional data type over ``inner`` (a DataType, a V3 name or JSON
    member, or a numpy dtype): ``optional_of("int16")``."""
    inner_dt = inner if isinstance(inner, DataType) else DataType.from_numpy(inner)
    dtype = optional_dtype(inner_dt)
    return DataType(OPTIONAL, dtype, inner_dt.is_variable, None)  # type: ignore[arg-type]


def optional_default_serializer(data_type: DataType) -> dict[str, Any]:
    """The serializer zarrs gives optional ``data_type`` by default (its
    ``ArrayBuilder``): ``zarrs.optional`` with a ``packbits`` mask and the
    inner type's serializer (``bytes`` little-endian, ``vlen-utf8``,
    ``vlen-bytes``; another ``zarrs.optional`` for a nested type)."""
    inner = inner_type(data_type)
    if is_optional(inner):
        data: dict[str, Any] = optional_default_serializer(inner)
    elif inner.is_variable:
        data = {"name": "vlen-utf8" if inner.is_string else "vlen-bytes"}
    else:
        data = {"name": "bytes", "configuration": {"endian": "little"}}
    return {"name": OPTIONAL, "configuration": {"mask_codecs": [{"name": "packbits"}], "data_codecs": [data]}}


def optional_elements(data_type: DataType, values: Any, validity: Any) -> np.ndarray:
    """Elements of optional ``data_type`` (in the element form above, which
    ``array[...] = ...`` writes as they are) from the innermost type's
    ``values`` and ``validity``, a bool array of ``values``' shape plus one
    axis of the type's levels, outermost first -- what ``array[...]`` and
    ``array.validity[...]`` read. A level missing makes the levels inside
    it missing; values where an element is missing are ignored. Elements of
    a variable-length type are :class:`EncodedOptional` (so a write tells
    them from plain strings or bytes).

    >>> dt = optional_of(optional_of("uint8"))
    >>> e = optional_elements(dt, [5, 0, 0], [[True, True], [True, False], [False, False]])
    >>> e["valid"].tolist(), e["value"]["valid"].tolist(), e["value"]["value"].tolist()
    ([True, True, False], [True, False, False], [5, 0, 0])
    """
    levels = [data_type]
    while is_optional(inner := inner_type(levels[-1])):
        levels.append(inner)
    innermost = inner_type(levels[-1])
    if isinstance(values, np.ma.MaskedArray):
        values = values.data
    data = np.asarray(values, dtype=object if innermost.is_variable else innermost.numpy)
    valid = np.logical_and.accumulate(np.asarray(validity, dtype=bool), axis=-1)
    if valid.shape != (*data.shape, len(levels)):
        raise ValueError(f"validity of shape {valid.shape} for values of shape {data.shape} and a data type of "
                         f"{len(levels)} optional level(s): expected {(*data.shape, len(levels))}")
    if not data_type.is_variable:
        current = data
        for d in reversed(range(len(levels))):
            out = np.zeros(data.shape, dtype=levels[d].numpy)
            here = valid[..., d]
            out[VALUE][here] = current[here]
            out[VALID] = here
            current = out
        return current
    result = np.empty(data.shape, dtype=object)
    flat_valid = valid.reshape(-1, len(levels))
    for i, value in enumerate(data.reshape(-1)):
        element = b""
        for d in reversed(range(len(levels))):
            if not flat_valid[i, d]:
                element = b"\x00"
            else:
                element = (element_bytes(innermost, value) if d == len(levels) - 1 else element) + b"\x01"
        result.reshape(-1)[i] = EncodedOptional(element)
    return result


def missing(data_type: DataType) -> Any:
    """The missing element of optional ``data_type`` (its ``null`` fill value)."""
    if data_type.is_variable:
        return EncodedOptional(b"\x00")
    return np.zeros((), dtype=data_type.numpy)[()]


def present(data_type: DataType, inner_value: Any) -> Any:
    """The present element holding ``inner_value`` (already of the inner type)."""
    inner = inner_type(data_type)
    if data_type.is_variable:
        return EncodedOptional(element_bytes(inner, inner_value) + b"\x01")
    out = np.zeros((), dtype=data_type.numpy)
    out[VALUE] = inner_value
    out[VALID] = True
    return out[()]


def element_bytes(data_type: DataType, value: Any) -> bytes:
    """A variable-length element's bytes (UTF-8 for strings; nested optional elements as they are)."""
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)


def split(data_type: DataType, value: Any) -> tuple[Any, bool]:
    """``(inner value, present?)`` of an element of optional ``data_type``."""
    inner = inner_type(data_type)
    if data_type.is_variable:
        raw = bytes(value)
        if not raw or raw[-1] not in (0, 1):
            raise ValueError(f"not an optional element: {raw!r}")
        body, valid = raw[:-1], raw[-1] == 1
        if not valid:
            return inner.default_fill(), False
        if is_optional(inner):
            return EncodedOptional(body), True
        return (body.decode("utf-8") if inner.is_string else body), True
    arr = np.asarray(value)
    if arr.dtype != data_type.numpy:
        raise ValueError(f"not an element of {data_type.numpy}: {value!r}")
    return arr[VALUE][()], bool(arr[VALID])


__all__ = [
    "OPTIONAL",
    "EncodedOptional",
    "OptionalFamily",
    "inner_type",
    "is_optional",
    "is_paired_box",
    "missing",
    "optional_default_serializer",
    "optional_dtype",
    "reads_in_pairs",
    "optional_elements",
    "optional_of",
    "present",
    "split",
]
