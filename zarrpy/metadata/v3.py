"""Zarr V3 ``zarr.json``: parse, validate and serialise into frozen dataclasses.

Codecs stay as plain JSON objects here (``{"name", "configuration"}``);
turning them into codec objects is the codec layer's job, so metadata never
depends on the codec registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..core.dtypes import DataType
from ..core.limits import check_shape
from ..errors import MetadataError
from ._parse import (
    dump_json_document,
    parse_attributes,
    parse_json_document,
    parse_named,
    parse_shape,
)

_ARRAY_KEYS = {
    "zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
    "fill_value", "codecs", "attributes", "storage_transformers", "dimension_names",
}
_GROUP_KEYS = {"zarr_format", "node_type", "attributes"}
# Group members outside the spec that zarr-python writes and reads as its own.
# A null one is read as absent (zarr-python up to 3.1.3 wrote
# ``"consolidated_metadata": null`` into every group); any other value is
# kept, whether or not it says ``"must_understand": false``.
_GROUP_PEER_KEYS = frozenset({"consolidated_metadata"})

_KEY_ENCODING_DEFAULT_SEPARATOR = {"default": "/", "v2": "."}


@dataclass(frozen=True, slots=True)
class ChunkKeyEncodingSpec:
    """``chunk_key_encoding``: ``default`` or ``v2`` with a separator."""

    name: str = "default"
    separator: str = "/"

    @classmethod
    def from_json(cls, value: Any) -> ChunkKeyEncodingSpec:
        name, config, _ = parse_named(value, "chunk_key_encoding", allow_optional=False)
        if name not in _KEY_ENCODING_DEFAULT_SEPARATOR:
            raise MetadataError(
                f"chunk_key_encoding: unknown encoding {name!r}; known: default, v2"
            )
        config = dict(config or {})
        sep = config.pop("separator", _KEY_ENCODING_DEFAULT_SEPARATOR[name])
        if config:
            raise MetadataError(f"chunk_key_encoding: unknown configuration field(s) {sorted(config)}")
        if sep not in ("/", "."):
            raise MetadataError(f"chunk_key_encoding: separator must be '/' or '.', got {sep!r}")
        return cls(name, sep)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "configuration": {"separator": self.separator}}


def _parse_chunk_grid(value: Any, ndim: int) -> tuple[int, ...]:
    name, config, _ = parse_named(value, "chunk_grid", allow_optional=False)
    if name != "regular":
        raise MetadataError(f"chunk_grid: unknown chunk grid {name!r}; known: regular")
    config = dict(config or {})
    if "chunk_shape" not in config:
        raise MetadataError("chunk_grid: configuration is missing 'chunk_shape'")
    chunk_shape = parse_shape(config.pop("chunk_shape"), "chunk_grid.chunk_shape", positive=True)
    if config:
        raise MetadataError(f"chunk_grid: unknown configuration field(s) {sorted(config)}")
    if len(chunk_shape) != ndim:
        raise MetadataError(
            f"chunk_grid.chunk_shape: has {len(chunk_shape)} dimensions but shape has {ndim}"
        )
    return chunk_shape


def _parse_codecs(value: Any) -> tuple[dict[str, Any], ...]:
    if not isinstance(value, list) or not value:
        raise MetadataError(f"codecs: expected a non-empty list, got {value!r}")
    out = []
    for i, item in enumerate(value):
        name, config, must = parse_named(item, f"codecs[{i}]")
        codec: dict[str, Any] = {"name": name}
        if config is not None:
            codec["configuration"] = config
        if not must:
            codec["must_understand"] = False
        out.append(codec)
    return tuple(out)


def _split_extra(doc: dict[str, Any], known: set[str], what: str,
                 peer: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Unknown members: kept if ``must_understand: false``, else an error.

    ``peer`` members (written by zarr-python outside the spec) are kept
    unless null, which is dropped.
    """
    extra = {}
    for key in set(doc) - known:
        value = doc[key]
        if key in peer:
            if value is not None:
                extra[key] = value
        elif isinstance(value, dict) and value.get("must_understand") is False:
            extra[key] = value
        else:
            raise MetadataError(
                f"{what}: unknown member {key!r} (an extension zarrpy does not understand; "
                f"only members with \"must_understand\": false may be ignored)"
            )
    return extra


@dataclass(frozen=True)
class ArrayMetadataV3:
    """A V3 array's ``zarr.json``."""

    shape: tuple[int, ...]
    data_type: DataType
    chunk_shape: tuple[int, ...]
    fill_value: Any
    codecs: tuple[dict[str, Any], ...]
    chunk_key_encoding: ChunkKeyEncodingSpec = ChunkKeyEncodingSpec()
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_names: tuple[str | None, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    zarr_format = 3
    node_type = "array"

    def __post_init__(self) -> None:
        check_shape(self.shape, "shape")
        check_shape(self.chunk_shape, "chunk_grid.chunk_shape")
        if len(self.chunk_shape) != len(self.shape):
            raise MetadataError(
                f"chunk_grid.chunk_shape: has {len(self.chunk_shape)} dimensions but shape has {len(self.shape)}"
            )
        if self.dimension_names is not None and len(self.dimension_names) != len(self.shape):
            raise MetadataError(
                f"dimension_names: has {len(self.dimension_names)} entries but shape has {len(self.shape)}"
            )

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ArrayMetadataV3:
        if doc.get("zarr_format") != 3:
            raise MetadataError(f"zarr_format: expected 3, got {doc.get('zarr_format')!r}")
        if doc.get("node_type") != "array":
            raise MetadataError(f"node_type: expected 'array', got {doc.get('node_type')!r}")
        for key in ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs"):
            if key not in doc:
                raise MetadataError(f"zarr.json: required member {key!r} is missing")
        extra = _split_extra(doc, _ARRAY_KEYS, "zarr.json")
        shape = parse_shape(doc["shape"], "shape")
        data_type = DataType.from_json(doc["data_type"])
        transformers = doc.get("storage_transformers") or []
        if not isinstance(transformers, list):
            raise MetadataError("storage_transformers: expected a list")
        for i, t in enumerate(transformers):
            name, _, must = parse_named(t, f"storage_transformers[{i}]")
            if must:
                raise MetadataError(f"storage_transformers[{i}]: unsupported storage transformer {name!r}")
        dim_names = doc.get("dimension_names")
        if dim_names is not None:
            if not isinstance(dim_names, list) or not all(n is None or isinstance(n, str) for n in dim_names):
                raise MetadataError(f"dimension_names: expected a list of strings or null, got {dim_names!r}")
            dim_names = tuple(dim_names)
        return cls(
            shape=shape,
            data_type=data_type,
            chunk_shape=_parse_chunk_grid(doc["chunk_grid"], len(shape)),
            fill_value=data_type.fill_from_json(doc["fill_value"]),
            codecs=_parse_codecs(doc["codecs"]),
            chunk_key_encoding=ChunkKeyEncodingSpec.from_json(doc["chunk_key_encoding"]),
            attributes=parse_attributes(doc.get("attributes")),
            dimension_names=dim_names,
            extra=extra,
        )

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "shape": list(self.shape),
            "data_type": self.data_type.to_json(),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(self.chunk_shape)}},
            "chunk_key_encoding": self.chunk_key_encoding.to_json(),
            "fill_value": self.data_type.fill_to_json(self.fill_value),
            "codecs": [dict(c) for c in self.codecs],
            "attributes": self.attributes,
        }
        if self.dimension_names is not None:
            doc["dimension_names"] = list(self.dimension_names)
        doc.update({"zarr_format": 3, "node_type": "array", "storage_transformers": []})
        doc.update(self.extra)
        return doc

    @classmethod
    def from_bytes(cls, raw: bytes, key: str = "zarr.json") -> ArrayMetadataV3:
        try:
            return cls.from_json(parse_json_document(raw, key))
        except MetadataError as exc:
            if key in str(exc):
                raise
            raise MetadataError(f"{key!r}: {exc}") from None

    def to_bytes(self) -> bytes:
        return dump_json_document(self.to_json())

    def to_documents(self) -> dict[str, bytes]:
        """The node's stored documents: ``{"zarr.json": …}``."""
        return {"zarr.json": self.to_bytes()}

    def __eq__(self, other: object) -> bool:
        # Compare the JSON form: a NaN fill value must equal itself.
        return isinstance(other, ArrayMetadataV3) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def evolve(self, **changes: Any) -> ArrayMetadataV3:
        """A copy with some members replaced (e.g. ``shape``, ``attributes``)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class GroupMetadataV3:
    """A V3 group's ``zarr.json``."""

    attributes: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    zarr_format = 3
    node_type = "group"

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> GroupMetadataV3:
        if doc.get("zarr_format") != 3:
            raise MetadataError(f"zarr_format: expected 3, got {doc.get('zarr_format')!r}")
        if doc.get("node_type") != "group":
            raise MetadataError(f"node_type: expected 'group', got {doc.get('node_type')!r}")
        extra = _split_extra(doc, _GROUP_KEYS, "zarr.json", _GROUP_PEER_KEYS)
        return cls(attributes=parse_attributes(doc.get("attributes")), extra=extra)

    def to_json(self) -> dict[str, Any]:
        doc = {"attributes": self.attributes, "zarr_format": 3, "node_type": "group"}
        doc.update(self.extra)
        return doc

    def to_bytes(self) -> bytes:
        return dump_json_document(self.to_json())

    def to_documents(self) -> dict[str, bytes]:
        """The node's stored documents: ``{"zarr.json": …}``."""
        return {"zarr.json": self.to_bytes()}

    def evolve(self, **changes: Any) -> GroupMetadataV3:
        return replace(self, **changes)


def parse_node_metadata(raw: bytes, key: str) -> ArrayMetadataV3 | GroupMetadataV3:
    """Parse a ``zarr.json`` stored under ``key`` as an array or a group."""
    doc = parse_json_document(raw, key)
    node_type = doc.get("node_type")
    try:
        if node_type == "array":
            return ArrayMetadataV3.from_json(doc)
        if node_type == "group":
            return GroupMetadataV3.from_json(doc)
    except MetadataError as exc:
        raise MetadataError(f"{key!r}: {exc}") from None
    raise MetadataError(f"{key!r}: node_type must be 'array' or 'group', got {node_type!r}")


__all__ = ["ArrayMetadataV3", "ChunkKeyEncodingSpec", "GroupMetadataV3", "parse_node_metadata"]
