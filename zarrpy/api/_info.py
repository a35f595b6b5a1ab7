"""Printable summaries of an array: ``print(a.info)``, ``a.info_complete()``.

Both cost metadata (already read when the array was opened) and one store
listing; neither reads a chunk. ``info`` shows what zarr-python's
``Array.info`` shows plus the initialized chunk count; ``info_complete``
adds the stored bytes and the storage ratio, from the sizes the store
reports with its listing (:meth:`~zarrpy.stores.abc.Store.list_prefix_with_sizes`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.dtypes import DataType
from ..core.dtypes.optional import inner_type, is_optional
from ..stores.abc import Store

if TYPE_CHECKING:
    from ._array import Array
    from ._group import Group

# as_dict() key -> label of the printed table (zarr-python's labels).
_LABELS = {
    "name": "Name",
    "type": "Type",
    "zarr_format": "Zarr format",
    "data_type": "Data type",
    "fill_value": "Fill value",
    "shape": "Shape",
    "shard_shape": "Shard shape",
    "chunk_shape": "Chunk shape",
    "order": "Order",
    "read_only": "Read-only",
    "store": "Store type",
    "concurrent_updates": "Concurrent updates",
    "filters": "Filters",
    "serializer": "Serializer",
    "compressors": "Compressors",
    "nbytes": "No. bytes",
    "nbytes_stored": "No. bytes stored",
    "storage_ratio": "Storage ratio",
    "shards_initialized": "Shards Initialized",
    "chunks_initialized": "Chunks Initialized",
    "members": "No. members",
    "arrays": "No. arrays",
    "groups": "No. groups",
}
# Keys of as_dict() not printed: the full chain repeats filters/serializer/compressors.
_NOT_PRINTED = {"codecs"}


def human_bytes(n: int) -> str:
    """``n`` as zarr-python prints byte counts: ``"2000000 (1.9M)"``."""
    if n < 1024:
        return str(n)
    value, unit = float(n), ""
    for unit in "KMGTP":
        value /= 1024
        if value < 1024:
            break
    return f"{n} ({value:.1f}{unit})"


_SHORT_NAMES = {"variable_length_bytes": "bytes"}
"""Printed names that differ from the Zarr V3 name: the spelling ``dtype=`` takes."""


def data_type_text(data_type: DataType, ragged: np.dtype | None = None) -> str:
    """A data type as zarrpy prints it everywhere (``Array.info``, ``Group.tree()``,
    every CLI command): its Zarr V3 name (``int32``, ``string``; ``bytes`` for
    ``variable_length_bytes``), with its configuration when it has one
    (``numpy.datetime64(unit='ns', scale_factor=1)``), ``optional int16`` for
    zarrs' nullable type and ``ragged int32`` for 1-D vectors of ``ragged``
    elements -- never numpy's spelling (``StringDType()``, ``>i4``), which
    depends on the format and the numpy version rather than on the stored type."""
    if ragged is not None:
        return f"ragged {data_type_text(DataType.from_numpy(ragged))}"
    if is_optional(data_type):
        return f"optional {data_type_text(inner_type(data_type))}"
    doc = data_type.to_json()
    if not isinstance(doc, dict) or not doc.get("configuration"):
        return _SHORT_NAMES.get(data_type.name, data_type.name)
    return _codec_text(doc)


def dtype_text(array: Array) -> str:
    """``array``'s element type as :func:`data_type_text` prints it."""
    return data_type_text(array._v3.data_type, array._io.form.ragged)


def _codec_text(codec_json: dict[str, Any]) -> str:
    config = codec_json.get("configuration") or {}
    return f"{codec_json['name']}({', '.join(f'{k}={v!r}' for k, v in config.items())})"


@dataclass(frozen=True)
class _Info:
    """Named values that print as zarr-python's info table; :meth:`as_dict`
    gives them JSON-friendly (``zarrpy info --json``)."""

    fields: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.fields)

    def __str__(self) -> str:
        return _table(self.fields)

    __repr__ = __str__


@dataclass(frozen=True)
class ArrayInfo(_Info):
    """A snapshot summary of an array; ``str()`` prints it as a table and
    :meth:`as_dict` gives the values (JSON-friendly; ``zarrpy info --json``)."""

    @classmethod
    def of(cls, array: Array, *, complete: bool = False) -> ArrayInfo:
        """Describe ``array``: one listing (a sized one if ``complete``), no chunk read."""
        a = array
        v3 = a._v3
        d: dict[str, Any] = {
            "name": a.name,
            "type": "Array",
            "zarr_format": a.zarr_format,
            "data_type": dtype_text(a),
            "fill_value": v3.data_type.fill_to_json(a.fill_value),
            "shape": a.shape,
        }
        if a.shards is not None:
            d["shard_shape"] = a.shards
        d.update(
            chunk_shape=a.chunks,
            order=getattr(a.metadata, "order", "C"),
            read_only=a.read_only,
            store=type(a.store).__name__,
        )
        if not a.read_only:
            d["concurrent_updates"] = concurrent_updates(a.store, a.synchronizer)
        d.update(
            filters=[c.to_json() for c in a.filters],
            serializer=a.serializer.to_json(),
            compressors=[c.to_json() for c in a.compressors],
            codecs=[c.to_json() for c in a.codecs],
            nbytes=a.nbytes,
        )
        if complete:
            sizes = a._stored_sizes()
            nobjects, nbytes_stored = sizes.objects, sizes.nbytes
            d["nbytes_stored"] = nbytes_stored
            if nbytes_stored:
                d["storage_ratio"] = round(a.nbytes / nbytes_stored, 1)
        else:
            nobjects = a.nshards_initialized
        if a.shards is not None:
            d["shards_initialized"] = f"{nobjects}/{math.prod(a._io.grid.grid_shape)}"
        d["chunks_initialized"] = f"{nobjects * a._chunks_per_object()}/{a.nchunks}"
        return cls(d)


@dataclass(frozen=True)
class GroupInfo(_Info):
    """A snapshot summary of a group (``print(g.info)``); ``complete`` adds
    the counts of its direct members (one listing and one metadata request)."""

    @classmethod
    def of(cls, group: Group, *, complete: bool = False) -> GroupInfo:
        d: dict[str, Any] = {
            "name": group.name,
            "type": "Group",
            "zarr_format": group.zarr_format,
            "read_only": group.read_only,
            "store": type(group.store).__name__,
        }
        if complete:
            members = group.members()
            arrays = sum(1 for _, node in members if node.metadata.node_type == "array")
            d.update(members=len(members), arrays=arrays, groups=len(members) - arrays)
        return cls(d)


def concurrent_updates(store: Store, synchronizer: object) -> str:
    """How writers in several processes updating parts of one stored chunk
    (inner chunks of one shard) are kept from losing each other's writes."""
    if store.supports_conditional_writes:
        return "safe (conditional writes)"
    if store.locks_updates:
        return "safe on this machine (update locks)"
    if synchronizer is not None:
        return "safe (synchronizer)"
    return "unsafe: write whole chunks (shards) per process, or give a synchronizer"


def _table(fields: dict[str, Any]) -> str:
    """``fields`` as zarr-python prints info: one ``label : value`` row each."""
    rows = []
    for key, value in fields.items():
        if key in _NOT_PRINTED:
            continue
        if key in ("nbytes", "nbytes_stored"):
            value = human_bytes(value)
        elif key in ("filters", "compressors"):
            value = "(" + ", ".join(_codec_text(c) for c in value) + ("," if len(value) == 1 else "") + ")"
        elif key == "serializer":
            value = _codec_text(value)
        rows.append((_LABELS.get(key, key), value))
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label.ljust(width)} : {value}" for label, value in rows)


__all__ = ["ArrayInfo", "GroupInfo", "data_type_text", "dtype_text", "human_bytes"]
