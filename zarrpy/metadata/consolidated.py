"""Consolidated metadata: the metadata of a whole hierarchy in one document.

This module owns both stored forms -- reading and writing the V2
``.zmetadata`` document and the V3 ``consolidated_metadata`` member -- and
:class:`ConsolidatedMetadata`, the snapshot a :class:`~zarrpy.Group` holds.

Opening a group and listing a hierarchy of n nodes normally costs a listing
and a metadata request per group. With consolidated metadata the root group
carries a copy of every node's metadata below it, so the whole hierarchy is
known after ONE request. Two forms exist (ZARR-FORMAT-NOTES.md §14):

- **V2**: ``.zmetadata`` beside the root's ``.zgroup``:
  ``{"zarr_consolidated_format": 1, "metadata": {"sub/.zgroup": {...},
  "sub/y/.zarray": {...}, "sub/y/.zattrs": {...}, ...}}``.
- **V3**: an inline member of the root group's ``zarr.json``:
  ``"consolidated_metadata": {"kind": "inline", "must_understand": false,
  "metadata": {"sub": {<zarr.json>}, "sub/y": {<zarr.json>}}}`` -- keys are
  flat paths relative to the group; each child group's entry carries its own
  ``consolidated_metadata`` with empty ``metadata`` (as zarr-python 3.4.2
  writes it). Nested entries (a child group whose own ``metadata`` is not
  empty, as early zarr-python 3 wrote them) are read too.

**It is a snapshot.** Nothing keeps it up to date: a node created, changed or
deleted after :func:`~zarrpy.consolidate_metadata` is not seen by a group opened from
the snapshot (and a deleted node still is). Call :func:`~zarrpy.consolidate_metadata`
again after changing the hierarchy, or open with ``use_consolidated=False``
to read the live hierarchy. A :class:`~zarrpy.Group` that creates a member
itself stops using its snapshot (it reads live from then on), so it always
sees what it wrote.

>>> import zarrpy
>>> store = {}
>>> g = zarrpy.create_group(store)
>>> _ = g.create_group("sub").create_array("y", shape=(4,), dtype="int8", chunks=(2,))
>>> g = zarrpy.consolidate_metadata(store)
>>> sorted(g.consolidated_metadata)
['sub', 'sub/y']
>>> zarrpy.open_group(store, mode="r")["sub/y"].shape  # answered from the snapshot
(4,)
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from typing import Any, Iterator

from ..core.paths import METADATA_KEY, ZARRAY_KEY, ZATTRS_KEY, ZGROUP_KEY, join_key, normalize_path
from ..errors import MetadataError
from ._parse import dump_json_document, parse_json_document
from .nodes import AnyMetadata
from .v2 import ArrayMetadataV2, GroupMetadataV2
from .v3 import ArrayMetadataV3, GroupMetadataV3

CONSOLIDATED_MEMBER = "consolidated_metadata"
"""The member of a V3 group's ``zarr.json`` that holds inline consolidated metadata."""
ZMETADATA_KEY = ".zmetadata"
"""V2 consolidated metadata, at the root of a consolidated hierarchy."""


class ConsolidatedMetadata(Mapping[str, AnyMetadata]):
    """A read-only mapping: node path relative to a group -> that node's metadata.

    Every node below the group is listed (flat paths such as ``"sub/y"``),
    the group itself is not. :meth:`below` gives the mapping of a child group
    without copying: all views share one dict and one sorted key list, and a
    view is a key prefix plus the slice of sorted keys that carry it (keys
    with a common prefix are contiguous in sorted order).
    """

    __slots__ = ("_nodes", "_keys", "_prefix", "_lo", "_hi")

    def __init__(self, nodes: Mapping[str, AnyMetadata]):
        self._nodes = dict(nodes)
        self._keys = sorted(self._nodes)
        self._prefix = ""
        self._lo, self._hi = 0, len(self._keys)

    def below(self, rel: str) -> ConsolidatedMetadata:
        """The mapping for the child group at ``rel`` (paths relative to it)."""
        view = object.__new__(ConsolidatedMetadata)
        view._nodes, view._keys = self._nodes, self._keys
        view._prefix = self._prefix + rel + "/"
        # "/" + 1 == "0": every key starting with prefix lies in [prefix, prefix[:-1] + "0")
        view._lo = bisect_left(self._keys, view._prefix, self._lo, self._hi)
        view._hi = bisect_left(self._keys, view._prefix[:-1] + "0", view._lo, self._hi)
        return view

    def __getitem__(self, rel: str) -> AnyMetadata:
        if not isinstance(rel, str) or not rel:
            raise KeyError(rel)
        return self._nodes[self._prefix + rel]

    def __contains__(self, rel: object) -> bool:
        return isinstance(rel, str) and bool(rel) and (self._prefix + rel) in self._nodes

    def __iter__(self) -> Iterator[str]:
        n = len(self._prefix)
        return (key[n:] for key in self._keys[self._lo : self._hi])

    def __len__(self) -> int:
        return self._hi - self._lo

    def __repr__(self) -> str:
        return f"<ConsolidatedMetadata of {len(self)} nodes>"


# -- reading ---------------------------------------------------------------------


def load_consolidated(
    metadata: AnyMetadata, zmetadata: bytes | None, path: str
) -> ConsolidatedMetadata | None:
    """The snapshot a group holds (None if it holds none).

    ``metadata`` is the group's own metadata (a V3 group's snapshot is its
    ``consolidated_metadata`` member); ``zmetadata`` the raw ``.zmetadata``
    next to a V2 group, or None. Raises MetadataError naming the document and
    the entry when the snapshot is malformed or names an impossible hierarchy.
    """
    if isinstance(metadata, GroupMetadataV3):
        member = metadata.extra.get(CONSOLIDATED_MEMBER)
        if member is None:
            return None
        key = join_key(path, METADATA_KEY)
        nodes_v3 = parse_consolidated_v3(member, key)
        _check_hierarchy(nodes_v3, key)
        return ConsolidatedMetadata(nodes_v3)
    if isinstance(metadata, GroupMetadataV2) and zmetadata is not None:
        key = join_key(path, ZMETADATA_KEY)
        nodes = parse_consolidated_v2(parse_json_document(zmetadata, key), key)
        nodes.pop("", None)  # the group itself: its live .zgroup/.zattrs were read with it
        _check_hierarchy(nodes, key)
        return ConsolidatedMetadata(nodes)
    return None


def parse_consolidated_v3(member: Any, key: str = METADATA_KEY) -> dict[str, ArrayMetadataV3 | GroupMetadataV3]:
    """The nodes of a V3 ``consolidated_metadata`` member, by relative path."""
    where = f"{key!r}: {CONSOLIDATED_MEMBER}"
    if not isinstance(member, Mapping):
        raise MetadataError(f"{where}: expected an object, got {member!r}")
    if member.get("kind") != "inline":
        raise MetadataError(f"{where}: kind: only 'inline' is supported, got {member.get('kind')!r}")
    entries = member.get("metadata")
    if not isinstance(entries, Mapping):
        raise MetadataError(f"{where}: 'metadata' must be an object, got {entries!r}")
    nodes: dict[str, ArrayMetadataV3 | GroupMetadataV3] = {}
    for rel, doc in entries.items():
        if not _is_node_path(rel):
            raise MetadataError(f"{where}: {rel!r} is not a valid relative node path")
        if not isinstance(doc, Mapping):
            raise MetadataError(f"{where}: entry {rel!r}: expected a zarr.json object, got {doc!r}")
        try:
            if doc.get("node_type") == "array":
                nodes[rel] = ArrayMetadataV3.from_json(dict(doc))
            elif doc.get("node_type") == "group":
                nodes[rel] = group = GroupMetadataV3.from_json(dict(doc))
                inner = group.extra.get(CONSOLIDATED_MEMBER)
                if inner is not None:  # nested form: entries relative to this child
                    for sub, meta in parse_consolidated_v3(inner, f"{key}[{rel}]").items():
                        nodes.setdefault(f"{rel}/{sub}", meta)
            else:
                raise MetadataError(f"node_type must be 'array' or 'group', got {doc.get('node_type')!r}")
        except MetadataError as exc:
            if where in str(exc):
                raise
            raise MetadataError(f"{where}: entry {rel!r}: {exc}") from None
    return nodes


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


def _is_node_path(rel: Any) -> bool:
    """Is ``rel`` a non-empty relative node path in normal form (no ``..``, no ``//``)?"""
    try:
        return isinstance(rel, str) and bool(rel) and normalize_path(rel) == rel
    except MetadataError:
        return False


def _check_hierarchy(nodes: Mapping[str, AnyMetadata], key: str) -> None:
    """Refuse a snapshot whose nodes cannot form a hierarchy."""
    for rel in nodes:
        if not _is_node_path(rel):
            raise MetadataError(f"{key!r}: consolidated metadata lists {rel!r}, which is not a valid node path")
        parent = rel.rpartition("/")[0]
        if parent and not isinstance(nodes.get(parent), (GroupMetadataV3, GroupMetadataV2)):
            what = "missing" if parent not in nodes else "an array"
            raise MetadataError(f"{key!r}: consolidated metadata lists {rel!r} but its parent {parent!r} is {what}")


# -- writing ---------------------------------------------------------------------


def consolidated_member_v3(nodes: Mapping[str, AnyMetadata]) -> dict[str, Any]:
    """The ``consolidated_metadata`` member for ``nodes`` (V3, by relative path),
    as zarr-python 3.4.2 writes it: child groups carry an empty snapshot."""
    entries: dict[str, Any] = {}
    for rel in sorted(nodes):
        meta = nodes[rel]
        if not isinstance(meta, (ArrayMetadataV3, GroupMetadataV3)):
            raise MetadataError(f"node {rel!r} is Zarr V{meta.zarr_format}; V3 consolidated metadata holds V3 nodes")
        if isinstance(meta, GroupMetadataV3):
            meta = meta.evolve(extra={**meta.extra, CONSOLIDATED_MEMBER: _empty_member()})
        entries[rel] = meta.to_json()
    return {"kind": "inline", "must_understand": False, "metadata": entries}


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


def _empty_member() -> dict[str, Any]:
    return {"kind": "inline", "must_understand": False, "metadata": {}}


__all__ = [
    "CONSOLIDATED_MEMBER",
    "ConsolidatedMetadata",
    "ZMETADATA_KEY",
    "consolidated_member_v3",
    "dump_consolidated_v2",
    "load_consolidated",
    "parse_consolidated_v2",
    "parse_consolidated_v3",
]
