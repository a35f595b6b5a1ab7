"""Groups: named containers of arrays and groups, with attributes."""

from __future__ import annotations

from typing import Any, Iterator

from ._create import node_exists, prepare_node
from ._node import (
    ARRAY_METADATA,
    METADATA_KEY,
    V2_KEYS,
    Node,
    join_key,
    normalize_path,
    read_metadata,
    read_metadata_many,
    write_metadata,
)
from .array import Array
from .errors import NodeExistsError, NodeNotFoundError
from .metadata.v2 import GroupMetadataV2
from .metadata.v3 import GroupMetadataV3

_NOT_CHILDREN = {METADATA_KEY, *V2_KEYS, ".zmetadata"}
from .stores.abc import Store


class Group(Node):
    """A Zarr group. ``g["a/b"]`` opens a member; ``g.create_array(...)`` adds one."""

    _kind = "group"

    @classmethod
    def open(cls, store: Store, path: str = "", *, read_only: bool = False, zarr_format: int | None = None) -> Group:
        metadata = read_metadata(store, path, zarr_format)
        if isinstance(metadata, ARRAY_METADATA):
            raise NodeNotFoundError(f"path {path!r} holds an array, not a group")
        return cls(store, path, metadata, read_only=read_only)

    @classmethod
    def create(
        cls, store: Store, path: str = "", *, attributes: dict[str, Any] | None = None, overwrite: bool = False,
        zarr_format: int = 3,
    ) -> Group:
        if zarr_format not in (2, 3):
            raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
        group_cls = GroupMetadataV3 if zarr_format == 3 else GroupMetadataV2
        metadata = group_cls(attributes=dict(attributes or {}))
        documents = metadata.to_documents()  # fails on bad attributes before anything is touched
        prepare_node(store, path, overwrite=overwrite, zarr_format=zarr_format)
        write_metadata(store, path, documents)
        return cls(store, path, metadata)

    @property
    def metadata(self) -> GroupMetadataV3 | GroupMetadataV2:
        return self._metadata

    def __reduce__(self):
        return (_reopen, (self._store, self._path, self._read_only))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Group) and other._store == self._store and other._path == self._path

    __hash__ = object.__hash__

    # -- members -------------------------------------------------------
    def _child_path(self, name: str) -> str:
        path = normalize_path(name)
        if not path:
            raise KeyError(name)
        return join_key(self._path, path)

    def __getitem__(self, name: str) -> Array | Group:
        path = self._child_path(name)
        try:
            metadata = read_metadata(self._store, path)
        except NodeNotFoundError:
            raise KeyError(name) from None
        return self._node(path, metadata)

    def _node(self, path: str, metadata: Any) -> Array | Group:
        if isinstance(metadata, ARRAY_METADATA):
            return Array(self._store, path, metadata, read_only=self._read_only)
        return Group(self._store, path, metadata, read_only=self._read_only)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and node_exists(self._store, self._child_path(name))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def keys(self) -> list[str]:
        return [name for name, _ in self.members()]

    def members(self, max_depth: int | None = 0) -> tuple[tuple[str, Array | Group], ...]:
        """Child nodes as ``(name, node)`` pairs, sorted by name.

        ``max_depth=0`` lists direct children; ``None`` the whole hierarchy
        (names are then paths relative to this group).
        """
        found: list[tuple[str, Array | Group]] = []
        self._collect(self._path, "", 0, max_depth, found)
        return tuple(sorted(found, key=lambda item: item[0]))

    def _collect(self, path: str, rel: str, depth: int, max_depth: int | None, found: list) -> None:
        prefix = join_key(path, "") if path else ""
        names = [n for n in self._store.list_dir(prefix) if n not in _NOT_CHILDREN]
        metadata = read_metadata_many(self._store, [join_key(path, n) for n in names])
        for name, meta in zip(names, metadata):
            if meta is None:
                continue
            node = self._node(join_key(path, name), meta)
            rel_name = join_key(rel, name)
            found.append((rel_name, node))
            if isinstance(node, Group) and (max_depth is None or depth < max_depth):
                self._collect(node.path, rel_name, depth + 1, max_depth, found)

    def arrays(self) -> tuple[tuple[str, Array], ...]:
        return tuple((n, m) for n, m in self.members() if isinstance(m, Array))

    def groups(self) -> tuple[tuple[str, Group], ...]:
        return tuple((n, m) for n, m in self.members() if isinstance(m, Group))

    def array_keys(self) -> list[str]:
        return [n for n, _ in self.arrays()]

    def group_keys(self) -> list[str]:
        return [n for n, _ in self.groups()]

    def create_group(self, name: str, *, attributes: dict[str, Any] | None = None, overwrite: bool = False) -> Group:
        self._check_writable()
        return Group.create(self._store, self._child_path(name), attributes=attributes, overwrite=overwrite,
                            zarr_format=self.zarr_format)

    def require_group(self, name: str, **kwargs: Any) -> Group:
        """Open the child group ``name``, creating it if it does not exist."""
        try:
            node = self[name]
        except KeyError:
            return self.create_group(name, **kwargs)
        if not isinstance(node, Group):
            raise NodeExistsError(f"{name!r} in group {self.name!r} is an array, not a group")
        return node

    def create_array(self, name: str, *, overwrite: bool = False, write_empty_chunks: bool = False,
                     data: Any = None, **kwargs: Any) -> Array:
        """Create an array named ``name``; arguments as :func:`zarrpy.create_array`."""
        self._check_writable()
        from .api import _create_array_at

        kwargs.setdefault("zarr_format", self.zarr_format)
        return _create_array_at(self._store, self._child_path(name), overwrite=overwrite,
                                write_empty_chunks=write_empty_chunks, data=data, **kwargs)

    def tree(self) -> str:
        """The hierarchy below this group as indented text."""
        lines = [self.name]
        for name, node in self.members(max_depth=None):
            depth = name.count("/")
            label = name.rsplit("/", 1)[-1]
            if isinstance(node, Array):
                label += f" {node.shape} {node.dtype}"
            lines.append("  " * (depth + 1) + label)
        return "\n".join(lines)


def _reopen(store: Store, path: str, read_only: bool) -> Group:
    return Group.open(store, path, read_only=read_only)


__all__ = ["Group"]
