"""Zarr V3 ``zarr.json``: parse, validate and serialise into frozen dataclasses.

Codecs stay as plain JSON objects here (``{"name", "configuration"}``);
turning them into codec objects is the codec layer's job, so metadata never
depends on the codec registry.
"""

from __future__ import annotations

import marshal
import threading
from dataclasses import dataclass, field, replace
from collections.abc import Mapping
from typing import Any, TypeAlias

import numpy as np

from ..core.chunk_grid import ChunkGrid
from ..core.dtypes import DataType
from ..core.dtypes import registry as dtype_registry
from ..core.limits import check_shape
from ..errors import MetadataError
from .chunk_grid import ChunkGridSpec
from ._parse import (
    dump_json_document,
    parse_attributes,
    parse_json_document,
    parse_named,
    parse_shape,
    same_json,
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

_KEY_ENCODING_DEFAULT_SEPARATOR = {"default": "/", "v2": ".", "zarrs.default_suffix": "/"}

DEFAULT_SUFFIX = "zarrs.default_suffix"
"""zarrs' ``default`` encoding with a ``suffix`` after every key (``c/1/2.tiff``)."""


@dataclass(frozen=True, slots=True)
class ChunkKeyEncodingSpec:
    """``chunk_key_encoding``: ``default`` or ``v2`` with a separator, or
    zarrs' ``zarrs.default_suffix`` with a separator and a ``suffix``
    (keys: :mod:`zarrpy.metadata.chunk_key_encoding`)."""

    name: str = "default"
    separator: str = "/"
    suffix: str = ""
    """``zarrs.default_suffix``'s suffix (empty for the others)."""

    @classmethod
    def from_json(cls, value: Any) -> ChunkKeyEncodingSpec:
        """Parse the ``chunk_key_encoding`` member (a name, or ``{"name", "configuration"?}``);
        MetadataError for an unknown name, separator or field, or a bad suffix."""
        name, config, _ = parse_named(value, "chunk_key_encoding", allow_optional=False)
        if name not in _KEY_ENCODING_DEFAULT_SEPARATOR:
            raise MetadataError(
                f"chunk_key_encoding: unknown encoding {name!r}; known: default, v2, {DEFAULT_SUFFIX}"
            )
        config = dict(config or {})
        sep = config.pop("separator", _KEY_ENCODING_DEFAULT_SEPARATOR[name])
        suffix = _parse_key_suffix(config.pop("suffix", None)) if name == DEFAULT_SUFFIX else ""
        if config:
            raise MetadataError(f"chunk_key_encoding: unknown configuration field(s) {sorted(config)}")
        if sep not in ("/", "."):
            raise MetadataError(f"chunk_key_encoding: separator must be '/' or '.', got {sep!r}")
        return cls(name, sep, suffix)

    def to_json(self) -> dict[str, Any]:
        """The ``chunk_key_encoding`` member, separator always stated (and
        the suffix, after it, as zarrs writes it)."""
        if self.name == DEFAULT_SUFFIX:
            return {"name": self.name, "configuration": {"separator": self.separator, "suffix": self.suffix}}
        return {"name": self.name, "configuration": {"separator": self.separator}}


def _parse_key_suffix(value: Any) -> str:
    """``zarrs.default_suffix``'s ``suffix``: a string (required, as in zarrs)
    that adds no path step of its own (no empty, ``.`` or ``..`` segment
    after a ``/``), so keys stay inside the array."""
    if not isinstance(value, str):
        raise MetadataError(f"chunk_key_encoding: {DEFAULT_SUFFIX!r} needs a string 'suffix', got {value!r}")
    if any(part in ("", ".", "..") for part in value.split("/")[1:]) or "\\" in value or "\0" in value:
        raise MetadataError(f"chunk_key_encoding: suffix {value!r}: a '/' in it must start a plain name "
                            "(not '', '.' or '..'), and it may hold no '\\' or NUL")
    return value


ChunkKeyEncodingLike: TypeAlias = ChunkKeyEncodingSpec | str | Mapping[str, object] | None
"""``chunk_key_encoding=``: a :class:`ChunkKeyEncodingSpec`, a name (``"default"``,
``"v2"``), the V3 JSON object, or zarr-python's ``{"name": ..., "separator": ...}``
(with ``"suffix"`` for ``zarrs.default_suffix``); None is ``default`` with ``/``."""


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
    """A V3 array's ``zarr.json``.

    ``chunk_grid`` is the ``chunk_grid`` member when it is not the core
    ``regular`` grid (``rectilinear``, ``zarrs.regular_bounded``); None for a
    ``regular`` grid of ``chunk_shape``. With a grid given, ``chunk_shape`` is
    its :attr:`~zarrpy.metadata.chunk_grid.ChunkGridSpec.nominal_chunk_shape`
    (set from it): the chunk shape of ``zarrs.regular_bounded``, the largest
    edges of ``rectilinear``. :attr:`grid` is the grid itself.
    """

    shape: tuple[int, ...]
    data_type: DataType
    chunk_shape: tuple[int, ...]
    fill_value: Any
    codecs: tuple[dict[str, Any], ...]
    chunk_key_encoding: ChunkKeyEncodingSpec = ChunkKeyEncodingSpec()
    attributes: dict[str, Any] = field(default_factory=dict)
    dimension_names: tuple[str | None, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    chunk_grid: ChunkGridSpec | None = None

    zarr_format = 3
    node_type = "array"

    def __post_init__(self) -> None:
        check_shape(self.shape, "shape")
        if self.chunk_grid is not None:
            if self.chunk_grid.is_regular_json:
                object.__setattr__(self, "chunk_shape", tuple(self.chunk_grid.chunk_shapes))
                object.__setattr__(self, "chunk_grid", None)
            else:
                self.chunk_grid.check(self.shape)
                object.__setattr__(self, "chunk_shape", self.chunk_grid.nominal_chunk_shape)
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
        """Number of dimensions."""
        return len(self.shape)

    @property
    def grid_spec(self) -> ChunkGridSpec:
        """The ``chunk_grid`` member as a value (``regular`` included)."""
        return self.chunk_grid if self.chunk_grid is not None else ChunkGridSpec.regular(self.chunk_shape)

    @property
    def grid(self) -> ChunkGrid:
        """The chunk grid over :attr:`shape` (see :mod:`zarrpy.core.chunk_grid`)."""
        if self.chunk_grid is None:
            return ChunkGrid.regular(self.shape, self.chunk_shape)
        return self.chunk_grid.bind(self.shape)

    def resized(self, shape: tuple[int, ...]) -> ArrayMetadataV3:
        """A copy for the array resized to ``shape``, its grid resized as
        zarr-python resizes one (see :meth:`ChunkGridSpec.resized`)."""
        grid = None if self.chunk_grid is None else self.chunk_grid.resized(shape)
        return replace(self, shape=shape, chunk_grid=grid)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ArrayMetadataV3:
        """Parse and check an array's ``zarr.json`` document (MetadataError naming the bad member)."""
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
        grid = ChunkGridSpec.from_json(doc["chunk_grid"], shape)
        return cls(
            shape=shape,
            data_type=data_type,
            chunk_shape=grid.nominal_chunk_shape,
            chunk_grid=None if grid.is_regular_json else grid,
            fill_value=data_type.fill_from_json(doc["fill_value"]),
            codecs=_parse_codecs(doc["codecs"]),
            chunk_key_encoding=ChunkKeyEncodingSpec.from_json(doc["chunk_key_encoding"]),
            attributes=parse_attributes(doc.get("attributes")),
            dimension_names=dim_names,
            extra=extra,
        )

    def to_json(self) -> dict[str, Any]:
        """The ``zarr.json`` document."""
        doc: dict[str, Any] = {
            "shape": list(self.shape),
            "data_type": self.data_type.to_json(),
            "chunk_grid": self.grid_spec.to_json(),
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
        """Parse stored ``zarr.json`` bytes; errors name ``key``."""
        try:
            return cls.from_json(parse_json_document(raw, key))
        except MetadataError as exc:
            if key in str(exc):
                raise
            raise MetadataError(f"{key!r}: {exc}") from None

    def to_bytes(self) -> bytes:
        """The ``zarr.json`` document as stored (UTF-8 JSON, indented as zarr-python writes it)."""
        return dump_json_document(self.to_json())

    def to_documents(self) -> dict[str, bytes]:
        """The node's stored documents: ``{"zarr.json": …}``."""
        return {"zarr.json": self.to_bytes()}

    def __eq__(self, other: object) -> bool:
        # Compare the JSON text: a NaN fill value or attribute must equal itself.
        return isinstance(other, ArrayMetadataV3) and same_json(self.to_json(), other.to_json())

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
        """Parse a group's ``zarr.json`` document. Unknown members are kept in
        ``extra`` when marked ``must_understand: false``, else MetadataError."""
        if doc.get("zarr_format") != 3:
            raise MetadataError(f"zarr_format: expected 3, got {doc.get('zarr_format')!r}")
        if doc.get("node_type") != "group":
            raise MetadataError(f"node_type: expected 'group', got {doc.get('node_type')!r}")
        extra = _split_extra(doc, _GROUP_KEYS, "zarr.json", _GROUP_PEER_KEYS)
        return cls(attributes=parse_attributes(doc.get("attributes")), extra=extra)

    def to_json(self) -> dict[str, Any]:
        """The ``zarr.json`` document."""
        doc = {"attributes": self.attributes, "zarr_format": 3, "node_type": "group"}
        doc.update(self.extra)
        return doc

    def to_bytes(self) -> bytes:
        """The ``zarr.json`` document as stored (UTF-8 JSON, indented as zarr-python writes it)."""
        return dump_json_document(self.to_json())

    def to_documents(self) -> dict[str, bytes]:
        """The node's stored documents: ``{"zarr.json": …}``."""
        return {"zarr.json": self.to_bytes()}

    def evolve(self, **changes: Any) -> GroupMetadataV3:
        """A copy with some members replaced (e.g. ``attributes``)."""
        return replace(self, **changes)


def parse_node_metadata(raw: bytes, key: str) -> ArrayMetadataV3 | GroupMetadataV3:
    """Parse a ``zarr.json`` stored under ``key`` as an array or a group.

    An array's document is parsed and validated once per distinct content
    (see :class:`_ParsedArrays`): the same bytes again give a new
    :class:`ArrayMetadataV3` with fresh copies of its mutable members.
    """
    found = _parsed_arrays.get(raw)
    if found is not None:
        return found
    doc = parse_json_document(raw, key)
    node_type = doc.get("node_type")
    try:
        if node_type == "array":
            fill_json = doc.get("fill_value")
            metadata = ArrayMetadataV3.from_json(doc)
            _parsed_arrays.put(raw, metadata, fill_json)
            return metadata
        if node_type == "group":
            return GroupMetadataV3.from_json(doc)
    except MetadataError as exc:
        raise MetadataError(f"{key!r}: {exc}") from None
    raise MetadataError(f"{key!r}: node_type must be 'array' or 'group', got {node_type!r}")


# Fill values of these types are immutable: a memoised one is handed out as is.
_IMMUTABLE_FILLS = (bool, int, float, complex, str, bytes, type(None), np.bool_, np.number, np.datetime64, np.timedelta64)


class _ParsedArrays:
    """Array ``zarr.json`` documents already parsed and validated, by their
    exact bytes: opening many arrays with the same document (or one array
    again) parses and validates it once.

    Keyed on the raw bytes alone, so a document that changed on disk is a
    new key and is parsed afresh (the store is read on every open; only the
    parse is saved). Nothing cached is ever handed out: each hit builds a
    new :class:`ArrayMetadataV3` whose mutable members (``attributes``,
    ``extra``, the ``codecs`` objects, a fill value of a mutable type) are
    fresh copies, so a caller changing its metadata changes nobody else's.
    The immutable members (shape tuples, the frozen :class:`DataType` and
    :class:`ChunkKeyEncodingSpec`) are shared. A hit whose data type's name
    is now registered to another family (``register_data_type(...,
    replace=True)``) is parsed again; so is a document whose data type is
    structured (numpy lets a structured dtype's field names be changed).

    Bounded: documents up to :data:`MAX_DOCUMENT_NBYTES`, at most
    :data:`MAX_ENTRIES` of them (the oldest go first). Thread-safe.
    """

    MAX_ENTRIES = 512
    MAX_DOCUMENT_NBYTES = 16 << 10

    def __init__(self) -> None:
        # raw bytes -> (template, marshalled (attributes, extra, codecs), fill JSON or None)
        self._entries: dict[bytes, tuple[ArrayMetadataV3, bytes, Any]] = {}
        self._lock = threading.Lock()

    def get(self, raw: bytes) -> ArrayMetadataV3 | None:
        if type(raw) is not bytes or len(raw) > self.MAX_DOCUMENT_NBYTES:
            return None
        entry = self._entries.get(raw)
        if entry is None:
            return None
        template, members, fill_json = entry
        data_type = template.data_type
        try:
            if dtype_registry.family_for_name(data_type.name) is not data_type.family:
                return None
            attributes, extra, codecs = marshal.loads(members)
            fill = template.fill_value if fill_json is None else data_type.fill_from_json(fill_json)
        except (MetadataError, ValueError, TypeError, EOFError):  # anything unusual: parse the document again
            return None
        metadata = object.__new__(ArrayMetadataV3)
        fields = metadata.__dict__
        fields.update(template.__dict__)
        fields["attributes"] = attributes
        fields["extra"] = extra
        fields["codecs"] = codecs
        fields["fill_value"] = fill
        return metadata

    def put(self, raw: bytes, metadata: ArrayMetadataV3, fill_json: Any) -> None:
        if type(raw) is not bytes or len(raw) > self.MAX_DOCUMENT_NBYTES or metadata.data_type.numpy.fields:
            return
        try:
            members = marshal.dumps((metadata.attributes, metadata.extra, metadata.codecs))
            marshal.loads(members)  # too deep for marshal: not kept
        except (ValueError, RecursionError):
            return
        fill = metadata.fill_value
        if isinstance(fill, _IMMUTABLE_FILLS):
            fill_json = None  # the parsed value itself is handed out
        template = object.__new__(ArrayMetadataV3)
        template.__dict__.update(metadata.__dict__)  # the caller's mutable members are copied out on each hit
        with self._lock:
            if len(self._entries) >= self.MAX_ENTRIES:
                try:
                    del self._entries[next(iter(self._entries))]
                except (KeyError, StopIteration, RuntimeError):
                    pass
            self._entries[raw] = (template, members, fill_json)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


_parsed_arrays = _ParsedArrays()


__all__ = ["ArrayMetadataV3", "ChunkKeyEncodingLike", "ChunkKeyEncodingSpec", "GroupMetadataV3", "parse_node_metadata"]
