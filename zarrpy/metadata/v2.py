"""Zarr V2 ``.zarray`` / ``.zgroup`` / ``.zattrs``: parse, validate, serialise.

(``.zmetadata``, V2 consolidated metadata, is :mod:`zarrpy.metadata.consolidated`.)

Spec: https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html; the forms peers
write are in ZARR-FORMAT-NOTES.md §1, §5, §11-§14.

This module only describes documents. Codecs stay as their V2 JSON objects
(``{"id": ..., ...}``); turning V2 metadata into the one V3 codec list that the
pipeline runs is :mod:`zarrpy.pipeline.convert`'s job (layer L4), so nothing here
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
type is :mod:`zarrpy.pipeline.convert`'s question: today S, U, M, m and structured
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

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np

from ..core.paths import ZARRAY_KEY, ZATTRS_KEY, ZGROUP_KEY
from ..core.limits import check_shape
from ..errors import MetadataError
from ._parse import dump_json_document, parse_attributes, parse_json_document, parse_shape
from ._v2_types import dtype_to_json_v2, encode_fill_value_v2, parse_dtype_v2, parse_fill_value_v2


OBJECT_CODEC_IDS = ("vlen-utf8", "vlen-bytes", "vlen-array", "pickle", "json2", "msgpack2")
"""Ids zarr-python treats as object codecs, in its search order."""

SUPPORTED_OBJECT_CODEC_IDS = ("vlen-utf8", "vlen-bytes", "vlen-array")

_REFUSED_OBJECT_CODECS = {
    "pickle": "it runs arbitrary code when a chunk is read",
    "json2": "zarrpy has no data type for arbitrary JSON objects",
    "msgpack2": "zarrpy has no data type for arbitrary msgpack objects",
}

_UNSET: Any = object()


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


# -- documents -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ArrayMetadataV2:
    """A V2 array: its ``.zarray`` plus the attributes from ``.zattrs``.

    Build one with :meth:`from_json` / :meth:`from_bytes` (stored documents)
    or the constructor (new arrays; ``fill_value_json`` is then computed from
    ``fill_value``, and ``fill_value`` becomes what that JSON reads back as:
    a NaN loses its payload and sign). ``filters`` is None or a non-empty tuple.
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: str | list[Any]
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
        check_shape(self.shape, "shape")
        check_shape(self.chunks, "chunks")
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
            encoded = encode_fill_value_v2(self.fill_value, dt, object_codec)
            set_(self, "fill_value_json", encoded)
            # The fill value readers will see: V2 stores every NaN as "NaN", so
            # a NaN's payload and sign do not survive. Were the old bits kept,
            # a chunk holding them would be skipped as empty and read back as
            # another NaN, and chunks written before and after would differ.
            set_(self, "fill_value", parse_fill_value_v2(encoded, dt, object_codec))

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
        codec_id: str = codec["id"]  # one of OBJECT_CODEC_IDS: find_object_codec matched it
        if codec_id in _REFUSED_OBJECT_CODECS:
            raise MetadataError(
                f"{where}: object codec {codec_id!r} is not supported: {_REFUSED_OBJECT_CODECS[codec_id]} "
                f"(supported: {', '.join(SUPPORTED_OBJECT_CODEC_IDS)})"
            )
        return codec_id

    # -- properties ---------------------------------------------------------
    @property
    def ndim(self) -> int:
        """Number of dimensions."""
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
        """Parse stored ``.zgroup`` (and ``.zattrs``) bytes; errors name ``key``."""
        try:
            attrs_key = key[: -len(ZGROUP_KEY)] + ZATTRS_KEY if key.endswith(ZGROUP_KEY) else ZATTRS_KEY
            attrs = None if zattrs is None else parse_json_document(zattrs, attrs_key)
            return cls.from_json(parse_json_document(zgroup, key), attrs)
        except MetadataError as exc:
            if key in str(exc):
                raise
            raise MetadataError(f"{key!r}: {exc}") from None

    def to_json(self) -> dict[str, Any]:
        """The ``.zgroup`` document (attributes go to ``.zattrs``)."""
        return {"zarr_format": 2}

    def to_documents(self) -> dict[str, bytes]:
        """``{".zgroup": ..., ".zattrs": ...}`` serialised as zarr-python writes them."""
        return {ZGROUP_KEY: dump_json_document(self.to_json()), ZATTRS_KEY: dump_json_document(self.attributes)}

    def evolve(self, **changes: Any) -> GroupMetadataV2:
        """A copy with some members replaced (e.g. ``attributes``)."""
        return replace(self, **changes)


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
    "encode_fill_value_v2",
    "find_object_codec",
    "parse_dtype_v2",
    "parse_fill_value_v2",
    "parse_node_metadata_v2",
]
