"""Zarr V2 ``.zarray`` / ``.zgroup`` / ``.zattrs`` / ``.zmetadata``: parse, validate, serialise.

Spec: https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html; the forms peers
write are in ZARR-FORMAT-NOTES.md §1, §5, §11-§14.

This module only describes documents. Codecs stay as their V2 JSON objects
(``{"id": ..., ...}``); turning V2 metadata into the one V3 codec list that the
pipeline runs is :mod:`zarrpy.convert`'s job (layer L4), so nothing here
imports a codec or numcodecs.

**Reading is lenient** where peers are known to differ: only ``zarr_format``,
``shape``, ``chunks`` and ``dtype`` are required (a missing ``compressor``,
``filters`` or ``fill_value`` reads as null, ``order`` as ``"C"``,
``dimension_separator`` as ``"."``); ``filters: []`` reads as null (zarr-python
#2842); unknown keys are ignored and not written back, as zarr-python does.

**dtype** is kept verbatim (:attr:`ArrayMetadataV2.dtype`, a typestr or a
structured list) and parsed into :attr:`ArrayMetadataV2.numpy_dtype`, which
keeps the stored byte order (``"|"`` on a multi-byte type reads as little-
endian). Accepted: ``|b1``; ``i``/``u`` of 1, 2, 4, 8 bytes; ``f`` of 2, 4,
8; ``c`` of 8, 16; ``M8``/``m8`` with or without a unit; ``S``/``U``/``V`` of
at least one item; ``|O``; structured lists ``[[name, typestr(, shape)], ...]``
of those (no objects inside). Extended precision (``f16``, ``c32``) and
anything numpy cannot read are refused. Whether zarrpy can *store* a parsed
type is :mod:`zarrpy.convert`'s question: today S, U, M, m and structured
types parse here but have no zarrpy data type yet.

**Object arrays** (``|O``) need an object codec in ``filters`` or as the
``compressor``: ``vlen-utf8``, ``vlen-bytes`` or ``vlen-array`` (the first one
found, scanning ``filters + [compressor]`` as zarr-python does). ``pickle``
(it runs code on read), ``json2`` and ``msgpack2`` are refused.

**fill_value** is kept twice: :attr:`~ArrayMetadataV2.fill_value_json`, the
JSON as stored (written back unchanged), and :attr:`~ArrayMetadataV2.fill_value`,
parsed for the dtype: null is None ("undefined"; zarr-python reads missing
chunks as zeros); floats may be ``"NaN"``, ``"Infinity"``, ``"-Infinity"``;
complex is ``[re, im]``; ``S``, ``V`` and structured fills are base64 of the
raw bytes; ``U`` fills are plain strings (as zarr-python writes them);
``M8``/``m8`` fills are the int64 count. For ``|O`` arrays, ``0`` or null reads
as ``""`` (vlen-utf8) or ``b""`` (vlen-bytes) -- zarr-python 2 wrote those
for empty fills -- but zarrpy never writes them: a new string array gets
``""``, a bytes array the base64 of its fill. vlen-array fills must be null or
0 (the empty element) and are written as null.

**Writing** matches zarr-python 3.4.2 byte for byte: ``.zarray`` members in the
order shape, chunks, dtype, fill_value, order, filters, dimension_separator,
compressor, zarr_format; ``.zattrs`` always written (``{}`` when empty); JSON
indented by 2.

>>> meta = ArrayMetadataV2.from_json(
...     {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<f8",
...      "compressor": {"id": "zstd", "level": 0}, "fill_value": "NaN",
...      "order": "C", "filters": None})
>>> meta.numpy_dtype.str, meta.fill_value
('<f8', np.float64(nan))
>>> sorted(meta.to_documents())
['.zarray', '.zattrs']
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np

from ..errors import MetadataError
from ._parse import dump_json_document, parse_attributes, parse_json_document, parse_shape

ZARRAY_KEY = ".zarray"
ZGROUP_KEY = ".zgroup"
ZATTRS_KEY = ".zattrs"
ZMETADATA_KEY = ".zmetadata"

OBJECT_CODEC_IDS = ("vlen-utf8", "vlen-bytes", "vlen-array", "pickle", "json2", "msgpack2")
"""Ids zarr-python treats as object codecs, in its search order."""

SUPPORTED_OBJECT_CODEC_IDS = ("vlen-utf8", "vlen-bytes", "vlen-array")

_REFUSED_OBJECT_CODECS = {
    "pickle": "it runs arbitrary code when a chunk is read",
    "json2": "zarrpy has no data type for arbitrary JSON objects",
    "msgpack2": "zarrpy has no data type for arbitrary msgpack objects",
}

_TYPESTR = re.compile(r"^([<>|])([biufcmMSUVO])(\d*)(\[\d*[A-Za-z]+\])?$")
_SIZES = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8), "c": (8, 16), "m": (8,), "M": (8,)}
_NATIVE = "<" if sys.byteorder == "little" else ">"
_UNSET: Any = object()


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


def _parse_structured(fields: list, field_name: str) -> np.dtype:
    if not fields:
        raise MetadataError(f"{field_name}: a structured dtype needs at least one field")
    parts = []
    names = set()
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


def dtype_to_json_v2(dtype: np.dtype) -> str | list:
    """The V2 ``dtype`` member for a numpy dtype (the inverse of :func:`parse_dtype_v2`)."""
    dtype = np.dtype(dtype)
    if dtype.fields is not None:
        out = []
        for name in dtype.names:
            sub = dtype.fields[name][0]
            if sub.subdtype is not None:
                base, shape = sub.subdtype
                out.append([name, dtype_to_json_v2(base), list(shape)])
            else:
                out.append([name, dtype_to_json_v2(sub)])
        return out
    if dtype.kind == "O":
        return "|O"
    return dtype.str


# -- codec objects -----------------------------------------------------------


def _parse_codec(value: Any, field_name: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not isinstance(value.get("id"), str) or not value["id"]:
        raise MetadataError(f"{field_name}: expected a codec object with a string 'id', got {value!r}")
    return dict(value)


def _parse_filters(value: Any) -> tuple[dict[str, Any], ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise MetadataError(f"filters: expected a list of codec objects or null, got {value!r}")
    if not value:
        return None  # non-conformant but in the wild (zarr-python #2842): same as null
    return tuple(_parse_codec(f, f"filters[{i}]") for i, f in enumerate(value))


def find_object_codec(
    filters: tuple[dict[str, Any], ...] | None, compressor: dict[str, Any] | None
) -> tuple[str, dict[str, Any]] | None:
    """The first object codec in ``filters + [compressor]`` as ``(field, codec)``, or None."""
    candidates = [(f"filters[{i}]", f) for i, f in enumerate(filters or ())]
    if compressor is not None:
        candidates.append(("compressor", compressor))
    for where, codec in candidates:
        if codec.get("id") in OBJECT_CODEC_IDS:
            return where, codec
    return None


# -- fill values ---------------------------------------------------------------


def parse_fill_value_v2(value: Any, dtype: np.dtype, object_codec: str | None = None) -> Any:
    """Decode a V2 ``fill_value`` for ``dtype`` (see the module docstring).

    Numbers come back as numpy scalars in native byte order; ``S`` as
    ``numpy.bytes_``, ``U`` as ``numpy.str_``; ``V`` and structured as the raw
    ``bytes``; object arrays as ``str`` / ``bytes``; null as None (object
    arrays: ``""``/``b""``, and None for vlen-array).
    """
    kind = dtype.kind
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


def _parse_int(value: Any, dtype: np.dtype) -> int:
    if isinstance(value, bool):
        raise TypeError("expected an integer, got a boolean")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("expected an integer")
        value = int(value)
    if not isinstance(value, int):
        raise TypeError("expected an integer")
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise OverflowError(f"out of range [{info.min}, {info.max}]")
    return value


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


# -- documents -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ArrayMetadataV2:
    """A V2 array: its ``.zarray`` plus the attributes from ``.zattrs``.

    Build one with :meth:`from_json` / :meth:`from_bytes` (stored documents)
    or the constructor (new arrays; ``fill_value_json`` is then computed from
    ``fill_value``). ``filters`` is None or a non-empty tuple.
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: str | list
    compressor: dict[str, Any] | None = None
    fill_value: Any = None
    order: str = "C"
    filters: tuple[dict[str, Any], ...] | None = None
    dimension_separator: str = "."
    attributes: dict[str, Any] = field(default_factory=dict)
    fill_value_json: Any = _UNSET
    numpy_dtype: np.dtype = field(init=False, repr=False)

    zarr_format = 2
    node_type = "array"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "shape", parse_shape(list(self.shape), "shape"))
        set_(self, "chunks", parse_shape(list(self.chunks), "chunks", positive=True))
        if len(self.chunks) != len(self.shape):
            raise MetadataError(f"chunks: has {len(self.chunks)} dimensions but shape has {len(self.shape)}")
        if self.order not in ("C", "F"):
            raise MetadataError(f"order: expected 'C' or 'F', got {self.order!r}")
        if self.dimension_separator not in (".", "/"):
            raise MetadataError(f"dimension_separator: expected '.' or '/', got {self.dimension_separator!r}")
        if self.compressor is not None:
            set_(self, "compressor", _parse_codec(self.compressor, "compressor"))
        if self.filters is not None:
            set_(self, "filters", _parse_filters(list(self.filters)))
        set_(self, "attributes", parse_attributes(self.attributes, "attributes (.zattrs)"))
        dt = parse_dtype_v2(self.dtype)
        set_(self, "numpy_dtype", dt)
        object_codec = self._check_object_codec(dt)
        if self.fill_value_json is _UNSET:
            set_(self, "fill_value_json", encode_fill_value_v2(self.fill_value, dt, object_codec))

    def _check_object_codec(self, dt: np.dtype) -> str | None:
        if dt.kind != "O":
            return None
        found = find_object_codec(self.filters, self.compressor)
        if found is None:
            raise MetadataError(
                "filters: an object array ('|O') needs an object codec in filters or as the compressor "
                f"(one of {', '.join(SUPPORTED_OBJECT_CODEC_IDS)}); found none"
            )
        where, codec = found
        codec_id = codec["id"]
        if codec_id in _REFUSED_OBJECT_CODECS:
            raise MetadataError(
                f"{where}: object codec {codec_id!r} is not supported: {_REFUSED_OBJECT_CODECS[codec_id]} "
                f"(supported: {', '.join(SUPPORTED_OBJECT_CODEC_IDS)})"
            )
        return codec_id

    # -- properties ---------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def object_codec(self) -> dict[str, Any] | None:
        """The object codec of a ``|O`` array (``{"id": "vlen-utf8"}`` …), else None."""
        if self.numpy_dtype.kind != "O":
            return None
        found = find_object_codec(self.filters, self.compressor)
        return None if found is None else found[1]

    # -- JSON ---------------------------------------------------------------
    @classmethod
    def from_json(cls, zarray: Mapping[str, Any], zattrs: Mapping[str, Any] | None = None) -> ArrayMetadataV2:
        """Parse a ``.zarray`` document and (optionally) its ``.zattrs``."""
        if not isinstance(zarray, Mapping):
            raise MetadataError(f".zarray: expected a JSON object, got {type(zarray).__name__}")
        if zarray.get("zarr_format") != 2:
            raise MetadataError(f"zarr_format: expected 2, got {zarray.get('zarr_format')!r}")
        for key in ("shape", "chunks", "dtype"):
            if key not in zarray:
                raise MetadataError(f".zarray: required member {key!r} is missing")
        dt = parse_dtype_v2(zarray["dtype"])
        filters = _parse_filters(zarray.get("filters"))
        compressor = zarray.get("compressor")
        compressor = None if compressor is None else _parse_codec(compressor, "compressor")
        raw_fill = zarray.get("fill_value")
        fill = None
        if dt.kind != "O":
            fill = parse_fill_value_v2(raw_fill, dt)
        else:
            found = find_object_codec(filters, compressor)
            if found is not None and found[1]["id"] in SUPPORTED_OBJECT_CODEC_IDS:
                fill = parse_fill_value_v2(raw_fill, dt, found[1]["id"])
            # else: __post_init__ names the missing or refused object codec
        return cls(
            shape=tuple(parse_shape(zarray["shape"], "shape")),
            chunks=tuple(parse_shape(zarray["chunks"], "chunks", positive=True)),
            dtype=zarray["dtype"],
            compressor=compressor,
            fill_value=fill,
            order=zarray.get("order", "C"),
            filters=filters,
            dimension_separator=zarray.get("dimension_separator", "."),
            attributes=parse_attributes(zattrs, "attributes (.zattrs)"),
            fill_value_json=raw_fill,
        )

    def to_json(self) -> dict[str, Any]:
        """The ``.zarray`` document, members in zarr-python's order."""
        return {
            "shape": list(self.shape),
            "chunks": list(self.chunks),
            "dtype": self.dtype,
            "fill_value": self.fill_value_json,
            "order": self.order,
            "filters": None if self.filters is None else [dict(f) for f in self.filters],
            "dimension_separator": self.dimension_separator,
            "compressor": None if self.compressor is None else dict(self.compressor),
            "zarr_format": 2,
        }

    @classmethod
    def from_bytes(cls, zarray: bytes, zattrs: bytes | None = None, key: str = ZARRAY_KEY) -> ArrayMetadataV2:
        """Parse stored documents; errors name ``key`` (the ``.zarray`` store key)."""
        try:
            attrs_key = key[: -len(ZARRAY_KEY)] + ZATTRS_KEY if key.endswith(ZARRAY_KEY) else ZATTRS_KEY
            attrs = None if zattrs is None else parse_json_document(zattrs, attrs_key)
            return cls.from_json(parse_json_document(zarray, key), attrs)
        except MetadataError as exc:
            if key in str(exc):
                raise
            raise MetadataError(f"{key!r}: {exc}") from None

    def to_documents(self) -> dict[str, bytes]:
        """``{".zarray": ..., ".zattrs": ...}`` serialised as zarr-python writes them."""
        return {ZARRAY_KEY: dump_json_document(self.to_json()), ZATTRS_KEY: dump_json_document(self.attributes)}

    def evolve(self, **changes: Any) -> ArrayMetadataV2:
        """A copy with some members replaced; a new ``fill_value`` re-encodes its JSON."""
        if "fill_value" in changes and "fill_value_json" not in changes:
            changes["fill_value_json"] = _UNSET
        return replace(self, **changes)

    def __eq__(self, other: object) -> bool:
        # Compare the stored form: a NaN fill value must equal itself.
        return isinstance(other, ArrayMetadataV2) and self.to_documents() == other.to_documents()

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class GroupMetadataV2:
    """A V2 group: ``.zgroup`` plus the attributes from ``.zattrs``."""

    attributes: dict[str, Any] = field(default_factory=dict)

    zarr_format = 2
    node_type = "group"

    @classmethod
    def from_json(cls, zgroup: Mapping[str, Any], zattrs: Mapping[str, Any] | None = None) -> GroupMetadataV2:
        """Parse ``.zgroup`` (unknown members ignored) and optionally ``.zattrs``."""
        if not isinstance(zgroup, Mapping):
            raise MetadataError(f".zgroup: expected a JSON object, got {type(zgroup).__name__}")
        if zgroup.get("zarr_format") != 2:
            raise MetadataError(f"zarr_format: expected 2, got {zgroup.get('zarr_format')!r}")
        return cls(attributes=parse_attributes(zattrs, "attributes (.zattrs)"))

    @classmethod
    def from_bytes(cls, zgroup: bytes, zattrs: bytes | None = None, key: str = ZGROUP_KEY) -> GroupMetadataV2:
        try:
            attrs_key = key[: -len(ZGROUP_KEY)] + ZATTRS_KEY if key.endswith(ZGROUP_KEY) else ZATTRS_KEY
            attrs = None if zattrs is None else parse_json_document(zattrs, attrs_key)
            return cls.from_json(parse_json_document(zgroup, key), attrs)
        except MetadataError as exc:
            if key in str(exc):
                raise
            raise MetadataError(f"{key!r}: {exc}") from None

    def to_json(self) -> dict[str, Any]:
        return {"zarr_format": 2}

    def to_documents(self) -> dict[str, bytes]:
        """``{".zgroup": ..., ".zattrs": ...}`` serialised as zarr-python writes them."""
        return {ZGROUP_KEY: dump_json_document(self.to_json()), ZATTRS_KEY: dump_json_document(self.attributes)}

    def evolve(self, **changes: Any) -> GroupMetadataV2:
        return replace(self, **changes)


# -- consolidated metadata -----------------------------------------------------


def parse_consolidated_v2(doc: Mapping[str, Any], key: str = ZMETADATA_KEY) -> dict[str, ArrayMetadataV2 | GroupMetadataV2]:
    """The nodes listed in a ``.zmetadata`` document, by node path (``""`` is the root).

    A possibly stale snapshot (ZARR-FORMAT-NOTES.md §14): callers decide
    whether to trust it. Raises MetadataError naming ``key`` and the entry.
    """
    if not isinstance(doc, Mapping) or doc.get("zarr_consolidated_format") != 1:
        got = doc.get("zarr_consolidated_format") if isinstance(doc, Mapping) else doc
        raise MetadataError(f"{key!r}: zarr_consolidated_format: expected 1, got {got!r}")
    entries = doc.get("metadata")
    if not isinstance(entries, Mapping):
        raise MetadataError(f"{key!r}: 'metadata' must be an object")
    nodes: dict[str, ArrayMetadataV2 | GroupMetadataV2] = {}
    for entry_key, value in entries.items():
        path, _, name = entry_key.rpartition("/")
        if name not in (ZARRAY_KEY, ZGROUP_KEY):
            continue
        if path in nodes:
            raise MetadataError(f"{key!r}: node {path!r} is listed as both an array and a group")
        attrs = entries.get(f"{path}/{ZATTRS_KEY}" if path else ZATTRS_KEY)
        try:
            cls = ArrayMetadataV2 if name == ZARRAY_KEY else GroupMetadataV2
            nodes[path] = cls.from_json(value, attrs)
        except MetadataError as exc:
            raise MetadataError(f"{key!r}: entry {entry_key!r}: {exc}") from None
    return nodes


def dump_consolidated_v2(nodes: Mapping[str, ArrayMetadataV2 | GroupMetadataV2]) -> bytes:
    """A ``.zmetadata`` document for ``nodes`` (by node path), as zarr-python writes it."""
    metadata: dict[str, Any] = {}
    for path in sorted(nodes):
        meta = nodes[path]
        prefix = f"{path}/" if path else ""
        name = ZARRAY_KEY if isinstance(meta, ArrayMetadataV2) else ZGROUP_KEY
        metadata[prefix + name] = meta.to_json()
        metadata[prefix + ZATTRS_KEY] = meta.attributes
    return dump_json_document({"metadata": metadata, "zarr_consolidated_format": 1})


def parse_node_metadata_v2(
    zarray: bytes | None, zgroup: bytes | None, zattrs: bytes | None, path: str = ""
) -> ArrayMetadataV2 | GroupMetadataV2:
    """The V2 node at ``path`` from its raw documents (absent ones as None).

    Raises MetadataError if both or neither of ``.zarray`` and ``.zgroup``
    exist, naming the keys.
    """
    prefix = f"{path}/" if path else ""
    if zarray is not None and zgroup is not None:
        raise MetadataError(f"{prefix}{ZARRAY_KEY} and {prefix}{ZGROUP_KEY} both exist: the node is ambiguous")
    if zarray is not None:
        return ArrayMetadataV2.from_bytes(zarray, zattrs, prefix + ZARRAY_KEY)
    if zgroup is not None:
        return GroupMetadataV2.from_bytes(zgroup, zattrs, prefix + ZGROUP_KEY)
    raise MetadataError(f"no {prefix}{ZARRAY_KEY} or {prefix}{ZGROUP_KEY}: not a V2 node")


__all__ = [
    "ArrayMetadataV2",
    "GroupMetadataV2",
    "OBJECT_CODEC_IDS",
    "dtype_to_json_v2",
    "dump_consolidated_v2",
    "encode_fill_value_v2",
    "find_object_codec",
    "parse_consolidated_v2",
    "parse_dtype_v2",
    "parse_fill_value_v2",
    "parse_node_metadata_v2",
]
