"""Groups: named containers of arrays and groups, with attributes."""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, TypeVar, overload

import numpy as np
import numpy.typing as npt

from ._create import create_array_at, user_shape
from ._new_node import node_exists, prepare_node, put_new_node
from ._node import (
    FoundNode,
    Node,
    location,
    read_metadata,
    read_node,
    walk_metadata,
    write_metadata,
)
from ._array import Array
from ..core._typing import ShapeLike
from ..core.dtypes import DataType
from ..core.dtypes.data_type import DTypeLike
from ._info import GroupInfo, dtype_text
from ..core.paths import join_key, names_a_document, normalize_path
from ..errors import MetadataError, NodeExistsError, NodeNotFoundError, ReadOnlyError, StoreError
from ..metadata.consolidated import (
    CONSOLIDATED_MEMBER,
    ZMETADATA_KEY,
    ConsolidatedMetadata,
    consolidated_member_v3,
    dump_consolidated_v2,
    load_consolidated,
    parse_consolidated_v3,
)
from ..metadata.nodes import ARRAY_METADATA, NODE_DOCUMENTS, AnyMetadata, GroupMetadata
from ..metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from ..metadata.v3 import GroupMetadataV3
from ..pipeline.cache_hook import ChunkCache
from ..pipeline.synchronizer import Synchronizer
from ..stores import store_from_url
from ..stores.abc import READ_ONLY_HINT, Store
from ..stores._store_like import StoreLike

_T = TypeVar("_T")
_N = TypeVar("_N", Array, "Group")


def _an(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


class Group(Node[GroupMetadata]):
    """A Zarr group. ``g["a/b"]`` opens a member; ``g.create_array(...)`` adds one.

    A group opened from consolidated metadata (see :mod:`zarrpy.metadata.consolidated`)
    answers ``g[name]``, ``name in g``, :meth:`members` and :meth:`tree` for
    its whole hierarchy from that snapshot, without store requests; child
    groups get the part of the snapshot below them. Creating a member through
    the group drops its snapshot (it reads live from then on).
    """

    _kind = "group"

    def __init__(self, store: Store, path: str, metadata: GroupMetadata, *, read_only: bool = False,
                 consolidated: ConsolidatedMetadata | None = None, cache: ChunkCache | None = None,
                 synchronizer: Synchronizer | None = None):
        super().__init__(store, path, metadata, read_only=read_only)
        self._consolidated = consolidated
        self._cache = cache
        self._synchronizer = synchronizer

    @classmethod
    def open(cls, store: Store, path: str = "", *, read_only: bool = False, zarr_format: int | None = None,
             use_consolidated: bool | None = None) -> Group:
        """Open the group at ``path`` (one batched store request).

        ``use_consolidated``: None uses consolidated metadata when the group
        has some; False ignores it (reads the live hierarchy); True requires
        it (MetadataError if there is none).
        """
        metadata, zmetadata = read_node(store, path, zarr_format, zmetadata=use_consolidated is not False)
        return cls._from_metadata(store, path, metadata, zmetadata, read_only=read_only,
                                  use_consolidated=use_consolidated)

    @classmethod
    def _from_metadata(cls, store: Store, path: str, metadata: AnyMetadata, zmetadata: bytes | None, *,
                       read_only: bool, use_consolidated: bool | None, cache: ChunkCache | None = None,
                       synchronizer: Synchronizer | None = None) -> Group:
        """The group for documents :func:`~zarrpy.api._node.read_node` returned."""
        if use_consolidated not in (None, True, False):
            raise ValueError(f"use_consolidated must be None, True or False, got {use_consolidated!r}")
        if isinstance(metadata, ARRAY_METADATA):
            raise NodeNotFoundError(f"{location(store, path)} holds an array, not a group; use zarrpy.open_array")
        snapshot = None if use_consolidated is False else load_consolidated(metadata, zmetadata, path)
        if use_consolidated and snapshot is None:
            where = "consolidated_metadata member in zarr.json" if metadata.zarr_format == 3 else ".zmetadata"
            raise MetadataError(f"group {location(store, path)} has no consolidated metadata (no {where}); "
                                "call zarrpy.consolidate_metadata first or open with use_consolidated=False")
        return cls(store, path, metadata, read_only=read_only, consolidated=snapshot, cache=cache,
                   synchronizer=synchronizer)

    @classmethod
    def create(
        cls, store: Store, path: str = "", *, attributes: dict[str, Any] | None = None, overwrite: bool = False,
        zarr_format: int = 3, cache: ChunkCache | None = None, synchronizer: Synchronizer | None = None,
        within: str | None = None, absent: bool = False,
    ) -> Group:
        """Create a group at ``path`` of ``store`` and return it (``overwrite=True``
        replaces a node that is there; else NodeExistsError). Users call
        :func:`zarrpy.create_group` or :meth:`create_group`, which take URLs too.
        ``within`` and ``absent``: what the caller knows, as
        :func:`~zarrpy.api._new_node.put_new_node` takes them."""
        if zarr_format not in (2, 3):
            raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
        group_cls = GroupMetadataV3 if zarr_format == 3 else GroupMetadataV2
        metadata = group_cls(attributes=dict(attributes or {}))
        documents = metadata.to_documents()  # fails on bad attributes before anything is touched
        put_new_node(store, path, documents, overwrite=overwrite, zarr_format=zarr_format, within=within,
                     absent=absent)
        return cls(store, path, metadata, cache=cache, synchronizer=synchronizer)

    @property
    def metadata(self) -> GroupMetadata:
        """The group's stored metadata document (V3, or V2 for a V2 group)."""
        return self._metadata

    @property
    def info(self) -> GroupInfo:
        """A printable summary (``print(g.info)``); costs no store request."""
        return GroupInfo.of(self)

    def info_complete(self) -> GroupInfo:
        """:attr:`info` plus the counts of direct members (arrays, groups)."""
        return GroupInfo.of(self, complete=True)

    @property
    def consolidated_metadata(self) -> ConsolidatedMetadata | None:
        """The snapshot this group answers from (relative path -> metadata), or None (live)."""
        return self._consolidated

    def __reduce__(self) -> tuple[Callable[[Store, str, bool, bool | None], Group], tuple[Store, str, bool, bool | None]]:
        # A group that used a snapshot reopens with one if there is one; a live group stays live.
        return (_reopen, (self._store, self._path, self._read_only, None if self._consolidated is not None else False))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Group) and other._store == self._store and other._path == self._path

    __hash__ = object.__hash__

    # -- members -------------------------------------------------------
    def _child_path(self, name: str) -> str:
        path = normalize_path(name)
        if not path:
            raise KeyError(f"{name!r}: a member name must not be empty")
        return join_key(self._path, path)

    def __getitem__(self, name: str) -> Array | Group:
        path = self._child_path(name)
        rel = normalize_path(name)
        if self._consolidated is not None:
            try:
                metadata = self._consolidated[rel]
            except KeyError:
                raise KeyError(name) from None
        else:
            try:
                metadata = read_metadata(self._store, path)
            except NodeNotFoundError:
                raise KeyError(name) from None
        return self._node(rel, metadata)

    def _node(self, rel: str, metadata: AnyMetadata) -> Array | Group:
        """The member at ``rel`` (relative to this group) with ``metadata``."""
        path = join_key(self._path, rel)
        if isinstance(metadata, ARRAY_METADATA):
            return Array(self._store, path, metadata, read_only=self._read_only, cache=self._cache,
                         synchronizer=self._synchronizer)
        snapshot = None if self._consolidated is None else self._consolidated.below(rel)
        return Group(self._store, path, metadata, read_only=self._read_only, consolidated=snapshot, cache=self._cache,
                     synchronizer=self._synchronizer)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str) or names_a_document(name) or not normalize_path(name):
            return False
        path = self._child_path(name)
        if self._consolidated is not None:
            return normalize_path(name) in self._consolidated
        return node_exists(self._store, path)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    @overload
    def get(self, name: str) -> Array | Group | None: ...

    @overload
    def get(self, name: str, default: _T) -> Array | Group | _T: ...

    def get(self, name: str, default: object = None) -> object:
        """The member at ``name`` (a relative path), or ``default`` if there is none."""
        if names_a_document(name):
            return default
        try:
            return self[name]
        except KeyError:
            return default

    def __setitem__(self, name: str, value: npt.ArrayLike) -> None:
        """``g["x"] = data`` stores ``data`` as a new array ``x`` with default
        settings, replacing any node there (as zarr-python does)."""
        if isinstance(value, (Group, Mapping)):
            raise TypeError(f"g[{name!r}] = ... stores array data, not a {type(value).__name__}; "
                            "use create_group for groups")
        data = value[...] if isinstance(value, Array) else value
        self.create_array(name, data=data, overwrite=True)

    def __delitem__(self, name: str) -> None:
        """Delete the member ``name`` (an array, or a group with everything in
        it). KeyError if there is no such member."""
        self._check_writable()
        path = self._child_path(name)
        # Checked live, not in a snapshot: it may lack the member or list one that is gone.
        if not node_exists(self._store, path):
            raise KeyError(name)
        self._consolidated = None  # the snapshot no longer describes the hierarchy
        self._store.delete_prefix(join_key(path, ""))
        if self._holds_consolidated_metadata():
            # As zarr-python: the stored snapshot forgets the deleted member
            # (rewritten from the live hierarchy) rather than list a phantom.
            consolidate_metadata(self)

    def move(self, source: str, dest: str) -> None:
        """Move the member ``source`` (an array, or a group with everything
        below it) to ``dest``, both paths relative to this group, within its
        store. Missing parents of ``dest`` become groups.

        Refused before anything changes: NodeNotFoundError if there is no
        ``source``; NodeExistsError if ``dest`` is a node (or holds keys), lies
        inside ``source`` or inside an array; StoreError on a store that cannot
        delete (a zip archive). The keys are copied (the node's own documents
        last, so ``dest`` is a node only once complete), then removed from
        ``source``. Consolidated metadata this group holds is rewritten from the
        live hierarchy, as after a delete.
        """
        self._check_writable()
        src, dst = self._child_path(source), self._child_path(dest)
        self._check_move(src, dst)
        prepare_node(self._store, dst, overwrite=False, zarr_format=self.zarr_format)
        self._consolidated = None  # the snapshot no longer describes the hierarchy
        _move_keys(self._store, src, dst)
        if self._holds_consolidated_metadata():
            consolidate_metadata(self)

    def _check_move(self, src: str, dst: str) -> None:
        """Refuse a move of ``src`` to ``dst`` that cannot be done whole."""
        store = self._store
        if not node_exists(store, src):
            raise NodeNotFoundError(f"cannot move: no array or group at {location(store, src)}")
        if dst == src or dst.startswith(src + "/"):
            raise NodeExistsError(f"cannot move {location(store, src)} to {'/' + dst!r}: "
                                  "the destination lies inside the source")
        if node_exists(store, dst) or next(iter(store.list_prefix(join_key(dst, ""))), None) is not None:
            raise NodeExistsError(f"cannot move {'/' + src!r} to {location(store, dst)}: something is there already; "
                                  "delete it first (del group[name])")
        if not store.supports_deletes:
            raise StoreError(f"cannot move {'/' + src!r} in {store.display_name!r}: the store cannot delete keys, "
                             "so the source would stay; copy the node instead (zarrpy cp)")

    def _holds_consolidated_metadata(self) -> bool:
        """Does this group's own stored metadata carry consolidated metadata?"""
        if isinstance(self._metadata, GroupMetadataV3):
            return CONSOLIDATED_MEMBER in self._metadata.extra
        return self._store.exists(join_key(self._path, ZMETADATA_KEY))

    def __len__(self) -> int:
        return len(self.keys())

    def keys(self) -> list[str]:
        """Names of the direct members (arrays and groups), sorted."""
        return [name for name, _ in self.members()]

    def members(self, max_depth: int | None = 0) -> tuple[tuple[str, Array | Group], ...]:
        """Child nodes as ``(name, node)`` pairs, sorted by name.

        ``max_depth=0`` lists direct children; ``None`` the whole hierarchy
        (names are then paths relative to this group).
        """
        if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0):
            raise ValueError(f"max_depth must be None or an integer >= 0, got {max_depth!r}")
        if self._consolidated is not None:
            snapshot = self._consolidated
            found = [FoundNode(rel, snapshot[rel]) for rel in snapshot
                     if max_depth is None or rel.count("/") <= max_depth]
        else:
            found = walk_metadata(self._store, self._path, max_depth=max_depth)
        return tuple((rel, self._node(rel, meta)) for rel, meta in sorted(found, key=lambda item: item.rel))

    def nmembers(self, max_depth: int | None = 0) -> int:
        """The number of members: direct children (``max_depth=0``), every
        node below (None), or those at most ``max_depth`` levels below them."""
        return len(self.members(max_depth=max_depth))

    def get_array(self, path: str) -> Array:
        """The array at ``path`` (relative; may name a subgroup's member).
        NodeNotFoundError if there is no node there, or a group."""
        return self._get_member(path, Array)

    def get_group(self, path: str) -> Group:
        """The group at ``path`` (relative; may name a subgroup's member).
        NodeNotFoundError if there is no node there, or an array."""
        return self._get_member(path, Group)

    def _get_member(self, path: str, kind: type[_N]) -> _N:
        """The member at ``path`` if it is a ``kind``, else NodeNotFoundError naming what is there."""
        wanted = kind.__name__.lower()
        try:
            node = self[path]
        except KeyError:
            raise NodeNotFoundError(f"no {wanted} at {location(self._store, self._child_path(path))}") from None
        if not isinstance(node, kind):
            other = "group" if isinstance(node, Group) else "array"
            raise NodeNotFoundError(f"{location(self._store, node.path)} holds {_an(other)}, not {_an(wanted)}; "
                                    f"use get_{other}")
        return node

    def arrays(self) -> tuple[tuple[str, Array], ...]:
        """The direct member arrays as ``(name, array)`` pairs, sorted by name."""
        return tuple((n, m) for n, m in self.members() if isinstance(m, Array))

    def groups(self) -> tuple[tuple[str, Group], ...]:
        """The direct member groups as ``(name, group)`` pairs, sorted by name."""
        return tuple((n, m) for n, m in self.members() if isinstance(m, Group))

    def array_values(self) -> tuple[Array, ...]:
        """The direct member arrays, sorted by name."""
        return tuple(m for _, m in self.arrays())

    def group_values(self) -> tuple[Group, ...]:
        """The direct member groups, sorted by name."""
        return tuple(m for _, m in self.groups())

    def array_keys(self) -> list[str]:
        """Names of the direct member arrays, sorted."""
        return [n for n, _ in self.arrays()]

    def group_keys(self) -> list[str]:
        """Names of the direct member groups, sorted."""
        return [n for n, _ in self.groups()]

    def create_group(self, name: str, *, attributes: dict[str, Any] | None = None, overwrite: bool = False) -> Group:
        """Create the child group ``name`` (a relative path) in this group's
        format; NodeExistsError if a node is there, unless ``overwrite``."""
        self._check_writable()
        self._consolidated = None  # the snapshot no longer describes the hierarchy
        # This group is open: it and its parents are not read again.
        return Group.create(self._store, self._child_path(name), attributes=attributes, overwrite=overwrite,
                            zarr_format=self.zarr_format, within=self._path)

    def require_group(self, name: str, *, attributes: dict[str, Any] | None = None,
                      overwrite: bool = False) -> Group:
        """Open the child group ``name``, creating it (with ``attributes``) if
        it does not exist; NodeExistsError if an array is there."""
        try:
            node = self[name]
        except KeyError:
            return self.create_group(name, attributes=attributes, overwrite=overwrite)
        if not isinstance(node, Group):
            raise NodeExistsError(f"{location(self._store, node.path)} is an array, not a group")
        return node

    def require_groups(self, *names: str) -> tuple[Group, ...]:
        """:meth:`require_group` for each of ``names``, in order."""
        return tuple(self.require_group(name) for name in names)

    def require_array(self, name: str, *, shape: ShapeLike, dtype: DTypeLike | None = None, exact: bool = False,
                      **kwargs: Any) -> Array:
        """The array ``name`` if it exists with this shape and a compatible dtype
        (the same one if ``exact``), else a new one made from these arguments.

        TypeError if a node exists there that does not match (as zarr-python).
        """
        node = self.get(name)
        if node is None:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        if not isinstance(node, Array):
            raise TypeError(f"{name!r} in group {self.name!r} is a group, not an array")
        shape = user_shape(shape)
        if node.shape != shape:
            raise TypeError(f"{name!r} in group {self.name!r}: incompatible shape ({node.shape} vs {shape})")
        if dtype is not None and not _dtype_matches(node, dtype, exact):
            raise TypeError(f"{name!r} in group {self.name!r}: incompatible dtype ({node.dtype} vs {dtype})")
        return node

    def create_array(self, name: str, *, overwrite: bool = False, write_empty_chunks: bool = False,
                     data: npt.ArrayLike | None = None, **kwargs: Any) -> Array:
        """Create an array named ``name``; arguments as :func:`zarrpy.create_array`."""
        self._check_writable()
        self._consolidated = None  # the snapshot no longer describes the hierarchy
        kwargs.setdefault("zarr_format", self.zarr_format)
        kwargs.setdefault("cache", self._cache)
        kwargs.setdefault("synchronizer", self._synchronizer)
        # This group is open: it and its parents are not read again.
        return create_array_at(self._store, self._child_path(name), overwrite=overwrite,
                               write_empty_chunks=write_empty_chunks, data=data, within=self._path, **kwargs)

    def tree(self) -> str:
        """The hierarchy below this group as indented text."""
        lines = [self.name]
        for name, node in self.members(max_depth=None):
            depth = name.count("/")
            label = name.rsplit("/", 1)[-1]
            if isinstance(node, Array):
                label += f" {node.shape} {dtype_text(node)}"
            lines.append("  " * (depth + 1) + label)
        return "\n".join(lines)


_MOVE_BATCH = 256
"""Keys copied per batched read while moving a node."""


def _move_keys(store: Store, src: str, dst: str) -> None:
    """Copy every key below ``src`` to the same place below ``dst``, the node's
    own documents last, then delete them below ``src`` (its documents first,
    so it stops being a node at once). A failed copy removes what it wrote."""
    prefix = join_key(src, "")
    documents = {join_key(src, name) for name in NODE_DOCUMENTS}
    keys = sorted(store.list_prefix(prefix), key=lambda k: k in documents)  # documents last
    written: list[str] = []
    try:
        for start in range(0, len(keys), _MOVE_BATCH):
            batch = keys[start:start + _MOVE_BATCH]
            for key, value in zip(batch, store.get_partial_values([(k, None) for k in batch])):
                if value is not None:  # gone since the listing: nothing to move
                    new = join_key(dst, key[len(prefix):])
                    store.set(new, value)
                    written.append(new)
    except BaseException:
        for key in reversed(written):
            store.delete(key)
        raise
    for key in sorted(documents & set(keys)):
        store.delete(key)
    store.delete_prefix(prefix)


def _dtype_matches(array: Array, dtype: DTypeLike, exact: bool) -> bool:
    """May ``array`` serve where ``dtype`` is asked for? Variable-length types
    must be the same type; numbers must be equal (``exact``) or castable."""
    if array.dtype.kind in "TO":
        return DataType.from_numpy(dtype).name == array._v3.data_type.name
    wanted = DataType.from_numpy(dtype).numpy if isinstance(dtype, (DataType, dict)) else np.dtype(dtype)
    return array.dtype == wanted if exact else bool(np.can_cast(array.dtype, wanted))


def _reopen(store: Store, path: str, read_only: bool, use_consolidated: bool | None = False) -> Group:
    return Group.open(store, path, read_only=read_only, use_consolidated=use_consolidated)


def consolidate_metadata(
    group_or_store_or_path: Group | StoreLike, *, path: str | None = None, storage_options: dict[str, Any] | None = None
) -> Group:
    """Write the metadata of every node below a group into the group, and
    return the group opened from that snapshot.

    A V3 group gets the inline ``consolidated_metadata`` member in its
    ``zarr.json`` (its attributes and other members unchanged); a V2 group a
    ``.zmetadata`` document. The hierarchy is read live (a group's old
    snapshot is not used) in the group's own format; nodes only stored in the
    other format are not part of the snapshot. Chunks are not touched.

    Parameters
    ----------
    group_or_store_or_path
        A :class:`~zarrpy.Group`, a Store, a path or an fsspec URL.
    path
        The group's path inside the store (relative to the Group if one is given).
    storage_options
        For fsspec URLs.

    Raises
    ------
    NodeNotFoundError
        If there is no group there.
    ReadOnlyError
        If the store or the group is read-only.
    """
    if isinstance(group_or_store_or_path, Group):
        group = group_or_store_or_path
        store, base, read_only = group.store, group.path, group.read_only
        if path:
            base = join_key(base, normalize_path(path))
    else:
        store = store_from_url(group_or_store_or_path, storage_options=storage_options)
        base, read_only = normalize_path(path), False
    if read_only or store.read_only:
        hint = store.read_only_hint if store.read_only else READ_ONLY_HINT
        raise ReadOnlyError(f"cannot consolidate metadata of group {location(store, base)}: it is read-only: {hint}")
    group = Group.open(store, base, use_consolidated=False)
    nodes = dict(walk_metadata(store, base, group.zarr_format))
    metadata: GroupMetadata
    snapshot: Mapping[str, AnyMetadata]
    if isinstance(group.metadata, GroupMetadataV3):
        member = consolidated_member_v3(nodes)
        metadata = group.metadata.evolve(extra={**group.metadata.extra, CONSOLIDATED_MEMBER: member})
        write_metadata(store, base, metadata)
        snapshot = parse_consolidated_v3(member, join_key(base, "zarr.json"))
    else:
        v2_nodes: dict[str, ArrayMetadataV2 | GroupMetadataV2] = {"": group.metadata}
        for rel, meta in nodes.items():
            if not isinstance(meta, (ArrayMetadataV2, GroupMetadataV2)):  # pragma: no cover - walk is V2-only
                raise MetadataError(f"node {rel!r} is not Zarr V2")
            v2_nodes[rel] = meta
        store.set(join_key(base, ZMETADATA_KEY), dump_consolidated_v2(v2_nodes))
        metadata, snapshot = group.metadata, nodes
    return Group(store, base, metadata, read_only=read_only, consolidated=ConsolidatedMetadata(snapshot))


__all__ = ["Group", "consolidate_metadata"]
