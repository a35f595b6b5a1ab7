"""Migrate a Zarr V2 hierarchy to V3 by writing metadata only: no chunk is read or rewritten.

For every V2 array and group in the hierarchy, :func:`migrate_v3` writes a V3
``zarr.json`` beside the V2 documents: exactly :func:`zarrpy.pipeline.convert.v2_to_v3`
of the array, serialised (so the ``v2`` chunk key encoding with the V2
``dimension_separator`` keeps every chunk key; ``transpose`` stands for order
F; ``vlen-utf8`` / ``vlen-bytes`` / ``numcodecs.vlen-array`` for object
arrays; native ``gzip``/``zstd``/``blosc``/``crc32c`` or ``numcodecs.<id>``
for the other codecs), and for a group a ``zarr.json`` with its attributes.
Attributes move from ``.zattrs`` into ``zarr.json``.

Where it differs from zarr-python 3.4.2's ``zarr migrate v3``
(ZARR-FORMAT-NOTES.md §13): string and bytes arrays and blosc ``shuffle: -1``
migrate (zarr-python fails on both); a V2 group with ``.zmetadata`` gets V3
inline consolidated metadata built from the migrated documents, so a
consolidated hierarchy stays consolidated (zarr-python refuses consolidated
groups); and a re-run is not an error.

**Safety.** Everything is planned before anything is written: each node's
metadata is read and converted, and the run stops with
:class:`~zarrpy.errors.MetadataError` -- nothing written -- when a V2 node
cannot be converted or already has a ``zarr.json`` that is not the identical
migration (same JSON document; codec objects compared in normal form; a
group's consolidated metadata does not count). A node already migrated
identically is left alone, so an interrupted run can be re-run. The
``zarr.json`` documents are written deepest first and the root's last.
With ``remove_v2=True`` the V2 documents (``.zarray``, ``.zgroup``,
``.zattrs``, ``.zmetadata``) are deleted only after ALL ``zarr.json`` are
written. Array and Group objects opened before a migration keep their old
metadata: reopen them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api._array import Array
from ..api._group import Group
from ..api._node import NOT_CHILDREN, Node, location
from ..codecs.registry import codec_from_json
from ..core.paths import METADATA_KEY, V2_KEYS, join_key, normalize_path
from ..metadata.consolidated import CONSOLIDATED_MEMBER, ZMETADATA_KEY, consolidated_member_v3
from ..pipeline.convert import v2_to_v3
from ..errors import CodecError, MetadataError, NodeNotFoundError, ReadOnlyError
from ..metadata.v2 import ArrayMetadataV2, parse_node_metadata_v2
from ..metadata.v3 import ArrayMetadataV3, GroupMetadataV3, parse_node_metadata
from ..stores.abc import READ_ONLY_HINT, Store
from ..stores._store_like import StoreLike

_KEYS = (METADATA_KEY, *V2_KEYS, ZMETADATA_KEY)
_V2_DOCUMENTS = (*V2_KEYS, ZMETADATA_KEY)
_MAX_LISTED = 10


@dataclass(frozen=True)
class MigrationResult:
    """What :func:`migrate_v3` did: node paths (``""`` is the root) and store keys."""

    written: tuple[str, ...]
    """Nodes that got a new ``zarr.json``."""
    unchanged: tuple[str, ...]
    """V2 nodes whose ``zarr.json`` already was the identical migration."""
    removed: tuple[str, ...]
    """V2 documents deleted (``remove_v2=True``)."""

    @property
    def already_v3(self) -> bool:
        """Was there nothing to do: no V2 array or group below the node (a Zarr V3 hierarchy)?"""
        return not (self.written or self.unchanged or self.removed)


@dataclass
class _Node:
    path: str
    v3: ArrayMetadataV3 | GroupMetadataV3  # what zarr.json holds (or will hold)
    new_doc: bytes | None = None  # zarr.json to write
    migrated: bool = False  # a V2 node (migrated now or before)
    consolidate: bool = False  # a V2 group with .zmetadata
    v2_present: tuple[str, ...] = ()  # V2 document names present


def migrate_v3(
    node_or_path: Array | Group | StoreLike,
    *,
    path: str | None = None,
    remove_v2: bool = False,
    storage_options: dict[str, Any] | None = None,
    dry_run: bool = False,
) -> MigrationResult:
    """Write V3 metadata for every V2 node in a hierarchy, without touching chunks.

    Parameters
    ----------
    node_or_path
        An :class:`~zarrpy.Array` or :class:`~zarrpy.Group` (its store and
        path), a Store, a local path or an fsspec URL.
    path
        The node's path inside the store (relative to the node if one is given).
    remove_v2
        Delete ``.zarray``/``.zgroup``/``.zattrs``/``.zmetadata`` of every
        migrated node once all ``zarr.json`` are written.
    storage_options
        For fsspec URLs.
    dry_run
        Plan and check everything, write and delete nothing: the result
        lists what a real run would write and remove.

    Raises
    ------
    MetadataError
        Nothing written: a V2 node has no V3 form (the message names the node
        and the V2 field), or a node has both formats and its ``zarr.json`` is
        not the identical migration.
    NodeNotFoundError
        No node at the path.
    ReadOnlyError
        The store or the node is read-only.
    """
    store, root, read_only = _target(node_or_path, path, storage_options)
    if (read_only or store.read_only) and not dry_run:
        hint = store.read_only_hint if store.read_only else READ_ONLY_HINT
        raise ReadOnlyError(f"cannot migrate {location(store, root)}: it is read-only: {hint}")
    nodes = _plan(store, root)
    _add_consolidated(nodes)
    documents = {n.path: n.new_doc for n in nodes if n.new_doc is not None}
    if dry_run:
        return MigrationResult(
            written=tuple(sorted(documents)),
            unchanged=tuple(sorted(n.path for n in nodes if n.migrated and n.new_doc is None)),
            removed=tuple(sorted(join_key(n.path, name) for n in nodes for name in n.v2_present)) if remove_v2 else (),
        )
    for node_path in sorted(documents, key=lambda p: -p.count("/") if p else 1):
        store.set(join_key(node_path, METADATA_KEY), documents[node_path])
    removed: list[str] = []
    if remove_v2:
        for node in nodes:
            for name in node.v2_present:
                key = join_key(node.path, name)
                store.delete(key)
                removed.append(key)
    return MigrationResult(
        written=tuple(sorted(documents)),
        unchanged=tuple(sorted(n.path for n in nodes if n.migrated and n.new_doc is None)),
        removed=tuple(sorted(removed)),
    )


def _target(node_or_path: Array | Group | StoreLike, path: str | None, storage_options: dict[str, Any] | None) -> tuple[Store, str, bool]:
    if isinstance(node_or_path, Node):
        base = node_or_path.path
        return node_or_path.store, join_key(base, normalize_path(path)) if path else base, node_or_path.read_only
    from ..stores import store_from_url

    return store_from_url(node_or_path, storage_options=storage_options), normalize_path(path), False


def _plan(store: Store, root: str) -> list[_Node]:
    """Read and convert every node; raise before anything is written."""
    nodes: list[_Node] = []
    problems: list[str] = []
    level = [root]
    while level:
        raw = store.get_partial_values([(join_key(p, k), None) for p in level for k in _KEYS])
        groups: list[str] = []
        for i, node_path in enumerate(level):
            docs = dict(zip(_KEYS, raw[len(_KEYS) * i : len(_KEYS) * (i + 1)]))
            try:
                node = _plan_node(node_path, docs)
            except MetadataError as exc:
                problems.append(str(exc))
                continue
            if node is None:
                if node_path == root:
                    raise NodeNotFoundError(f"no array or group at {location(store, root)} "
                                            "(no zarr.json, .zarray or .zgroup there)")
                continue
            nodes.append(node)
            if node.v3.node_type == "group":
                groups.append(node_path)
        level = []
        for group_path in groups:
            prefix = join_key(group_path, "") if group_path else ""
            level.extend(join_key(group_path, n) for n in store.list_dir(prefix) if n not in NOT_CHILDREN)
    if problems:
        shown = "; ".join(problems[:_MAX_LISTED])
        more = f" (and {len(problems) - _MAX_LISTED} more)" if len(problems) > _MAX_LISTED else ""
        raise MetadataError(f"nothing was migrated: {shown}{more}")
    return nodes


def _plan_node(path: str, docs: dict[str, bytes | None]) -> _Node | None:
    where = "/" + path
    v2_present = tuple(name for name in _V2_DOCUMENTS if docs[name] is not None)
    zarr_json = docs[METADATA_KEY]
    existing = None if zarr_json is None else parse_node_metadata(zarr_json, join_key(path, METADATA_KEY))
    if docs[".zarray"] is None and docs[".zgroup"] is None:
        # Not V2 (a V3 node, maybe with V2 leftovers from an interrupted remove_v2, or no node).
        return None if existing is None else _Node(path, existing, v2_present=v2_present)
    v2 = parse_node_metadata_v2(docs[".zarray"], docs[".zgroup"], docs[".zattrs"], path)
    if isinstance(v2, ArrayMetadataV2):
        try:
            new: ArrayMetadataV3 | GroupMetadataV3 = v2_to_v3(v2, document=True)
        except MetadataError as exc:
            raise MetadataError(f"array {where!r} has no V3 form: {exc}") from None
    else:
        new = GroupMetadataV3(attributes=dict(v2.attributes))
    node = _Node(path, new, migrated=True, v2_present=v2_present,
                 consolidate=isinstance(new, GroupMetadataV3) and docs[ZMETADATA_KEY] is not None)
    if existing is None:
        node.new_doc = b""  # filled in by _add_consolidated
    elif _same_migration(existing, new):
        node.v3 = existing
        node.consolidate = False
    else:
        raise MetadataError(
            f"{where!r} has both V2 metadata and a zarr.json that is not its migration "
            f"(zarr.json holds {_describe(existing)}, the V2 metadata migrates to {_describe(new)})"
        )
    return node


def _describe(meta: ArrayMetadataV3 | GroupMetadataV3) -> str:
    if isinstance(meta, GroupMetadataV3):
        return f"a group with attributes {meta.attributes!r}"
    return (f"an array of shape {list(meta.shape)}, {meta.data_type.to_json()}, chunks {list(meta.chunk_shape)}, "
            f"codecs {[c['name'] for c in meta.codecs]}")


def _same_migration(existing: ArrayMetadataV3 | GroupMetadataV3, new: ArrayMetadataV3 | GroupMetadataV3) -> bool:
    if isinstance(new, GroupMetadataV3):
        if not isinstance(existing, GroupMetadataV3):
            return False
        extra = {k: v for k, v in existing.extra.items() if k != CONSOLIDATED_MEMBER}
        return existing.attributes == new.attributes and not extra
    if not isinstance(existing, ArrayMetadataV3):
        return False
    return _normal_json(existing) == _normal_json(new)


def _normal_json(meta: ArrayMetadataV3) -> dict[str, Any] | None:
    doc = meta.to_json()
    try:
        doc["codecs"] = [codec_from_json(c).to_json() for c in meta.codecs]
    except CodecError:
        return None  # a zarr.json zarrpy cannot even build is never "the same migration"
    return doc


def _add_consolidated(nodes: list[_Node]) -> None:
    """Serialise the new zarr.json documents; a V2 group that had ``.zmetadata``
    gets V3 inline consolidated metadata of everything below it."""
    by_path = {n.path: n for n in nodes}
    for node in nodes:
        if node.new_doc is None:
            continue
        meta = node.v3
        if node.consolidate:
            prefix = node.path + "/" if node.path else ""
            below = {p[len(prefix):]: n.v3 for p, n in by_path.items() if p != node.path and p.startswith(prefix)}
            meta = meta.evolve(extra={**meta.extra, CONSOLIDATED_MEMBER: consolidated_member_v3(below)})
        node.new_doc = meta.to_bytes()


__all__ = ["MigrationResult", "migrate_v3"]
