"""What arrays and groups share: paths, metadata IO and attributes."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any, Callable, Generic, Iterator, NamedTuple, Protocol, Self, TypeVar

from ..core.paths import METADATA_KEY, V2_KEYS, ZARRAY_KEY, ZGROUP_KEY, join_key
from ..errors import MetadataError, NodeNotFoundError, ReadOnlyError
from ..metadata.consolidated import ZMETADATA_KEY
from ..metadata.nodes import ARRAY_METADATA as ARRAY_METADATA  # re-exported for _array
from ..metadata.nodes import NODE_DOCUMENTS, AnyMetadata, NodeDocuments
from ..metadata.v2 import GroupMetadataV2
from ..stores.abc import READ_ONLY_HINT, Store
from ..stores.memory import MemoryStore

NODE_KEYS = (METADATA_KEY, ZARRAY_KEY, ZGROUP_KEY)
"""Keys whose presence makes a path a node (V3 or V2)."""


def location(store: Store, path: str) -> str:
    """``'data/x.zarr' (node path '/a')``: where a node is, for error messages."""
    return f"{store.display_name!r} (node path {'/' + path!r})"


def read_metadata(store: Store, path: str, zarr_format: int | None = None) -> AnyMetadata:
    """The node at ``path``: V3 ``zarr.json`` first, then V2 ``.zarray`` /
    ``.zgroup`` (+ ``.zattrs``); the requests as :func:`read_node` makes them.

    NodeNotFoundError if neither is there (in the format asked for).
    """
    return read_node(store, path, zarr_format).metadata


def node_url(store: Store, path: str) -> str:
    """The store's URL with the node path appended, for reprs. A store with
    no URL (a ``MemoryStore``) is ``memory://<id of its dict>``, as in
    zarr-python; any other is named as messages name it."""
    base = store.url
    if base is None:
        identity = store.identity  # ("memory", id of the dict) for a MemoryStore
        if isinstance(store, MemoryStore) and isinstance(identity, tuple):
            base = f"memory://{identity[1]}"
        else:
            base = store.display_name
    return f"{base.rstrip('/')}/{path}" if path else base


class StoredNode(NamedTuple):
    """What :func:`read_node` found at a path."""

    metadata: AnyMetadata
    zmetadata: bytes | None
    """The raw V2 ``.zmetadata`` beside a V2 group, when asked for (else None)."""


def read_node(
    store: Store, path: str, zarr_format: int | None = None, *, zmetadata: bool = False
) -> StoredNode:
    """The node at ``path`` (as :func:`read_metadata`) and, if ``zmetadata``,
    the raw V2 ``.zmetadata`` beside it -- in ONE batched store request, so
    that opening a consolidated hierarchy costs one request. Without
    ``zmetadata`` (an array's open), where requests are cheap
    (``store.whole_read_nbytes`` > 0: local files, memory, zip),
    ``zarr.json`` is read alone first and the V2 documents are asked for only
    when it is missing: a V3 node costs one lookup, not four. With
    ``zarr_format=2`` only the V2 documents are asked for. V3 wins when
    both formats are present.

    The ``.zmetadata`` bytes are returned only for a V2 group (None otherwise);
    a V3 group carries its consolidated metadata inside its ``zarr.json``.
    """
    raw: dict[str, bytes | None]
    if zarr_format == 2:
        raw = _read_documents(store, path, V2_NODE_DOCUMENTS, zmetadata)
    elif store.whole_read_nbytes and not zmetadata:
        # Requests are cheap here (local files, memory, a zip): ask for
        # zarr.json alone, which wins whenever it is there, and for the V2
        # documents only when it is not (one request for a V3 node, no
        # lookups of files that are never there).
        zarr_json = store.get(join_key(path, METADATA_KEY))
        if zarr_json is not None or zarr_format == 3:
            raw = {METADATA_KEY: zarr_json}
        else:
            raw = _read_documents(store, path, V2_NODE_DOCUMENTS, zmetadata)
    else:  # one batched request: a round trip costs more than the documents
        raw = _read_documents(store, path, NODE_DOCUMENTS, zmetadata)
    try:
        found = NodeDocuments.from_mapping(raw).parse(path, zarr_format)
    except MetadataError as exc:  # name the store: the key alone does not say which one
        raise type(exc)(f"invalid metadata at {location(store, path)}: {exc}") from exc
    if found is None:
        wanted = {None: "zarr.json, .zarray or .zgroup", 3: "zarr.json", 2: ".zarray or .zgroup"}[zarr_format]
        raise NodeNotFoundError(f"no array or group at {location(store, path)}: no {wanted} there")
    consolidated = raw.get(ZMETADATA_KEY) if isinstance(found, GroupMetadataV2) else None
    return StoredNode(found, consolidated)


V2_NODE_DOCUMENTS = tuple(name for name in NODE_DOCUMENTS if name != METADATA_KEY)
"""The V2 documents of a node (``.zarray``, ``.zgroup``, ``.zattrs``)."""


def _read_documents(store: Store, path: str, names: tuple[str, ...], zmetadata: bool) -> dict[str, bytes | None]:
    """``names`` below ``path`` (and ``.zmetadata`` if asked) in one batched request."""
    names = (*names, *((ZMETADATA_KEY,) if zmetadata else ()))
    return dict(zip(names, store.get_partial_values([(join_key(path, k), None) for k in names])))


def read_metadata_many(store: Store, paths: list[str], zarr_format: int | None = None) -> list[AnyMetadata | None]:
    """The nodes at ``paths`` (None where there is none), in one batched request."""
    raw = store.get_partial_values([(join_key(p, k), None) for p in paths for k in NODE_DOCUMENTS])
    return [docs.parse(path, zarr_format) for docs, path in zip(NodeDocuments.split(raw), paths)]


class FoundNode(NamedTuple):
    """A node :func:`walk_metadata` found below a group."""

    rel: str
    """Its path relative to the group."""
    metadata: AnyMetadata


def walk_metadata(
    store: Store, path: str, zarr_format: int | None = None, max_depth: int | None = None
) -> list[FoundNode]:
    """Every node below the group at ``path`` as ``(relative path, metadata)``.

    Live reads: one listing per group and one batched metadata request per
    level of the hierarchy. ``max_depth=0`` stops at the direct children,
    None walks everything. Unsorted.
    """
    found: list[FoundNode] = []
    level = [(path, "")]  # groups whose children are listed next: (store path, relative path)
    depth = 0
    while level:
        children: list[tuple[str, str]] = []
        for group_path, rel in level:
            prefix = join_key(group_path, "") if group_path else ""
            for name in store.list_dir(prefix):
                if name not in NOT_CHILDREN:
                    children.append((join_key(group_path, name), join_key(rel, name)))
        metadata = read_metadata_many(store, [p for p, _ in children], zarr_format) if children else []
        level = []
        for (child_path, rel), meta in zip(children, metadata):
            if meta is None:
                continue
            found.append(FoundNode(rel, meta))
            if meta.node_type == "group" and (max_depth is None or depth < max_depth):
                level.append((child_path, rel))
        depth += 1
    return found


NOT_CHILDREN = frozenset({METADATA_KEY, *V2_KEYS, ZMETADATA_KEY})
"""Names in a group's directory that are its own documents, not members."""


def write_metadata(store: Store, path: str, metadata: NodeMetadata | dict[str, bytes]) -> None:
    """Write a node's documents (a metadata object, or its ``to_documents()``)."""
    documents = metadata if isinstance(metadata, dict) else metadata.to_documents()
    for name, raw in documents.items():
        store.set(join_key(path, name), raw)


class NodeMetadata(Protocol):
    """What :class:`Node` uses of its metadata (any of the four metadata classes)."""

    @property
    def zarr_format(self) -> int: ...

    @property
    def attributes(self) -> dict[str, Any]: ...

    def evolve(self, **changes: Any) -> Self: ...

    def to_documents(self) -> dict[str, bytes]: ...


M = TypeVar("M", bound=NodeMetadata)
"""A node's metadata type: either format of an array's, or of a group's."""


class Node(Generic[M]):
    """What arrays and groups have in common: a store, a path, metadata with
    attributes, and a read-only flag. Subclasses set ``_kind`` and implement
    ``_apply_metadata`` (install new metadata after it was written)."""

    _kind = "node"
    _metadata: M

    def __init__(self, store: Store, path: str, metadata: M, *, read_only: bool = False):
        self._store = store
        self._path = path
        self._read_only = read_only or store.read_only
        self._apply_metadata(metadata)

    def _apply_metadata(self, metadata: M) -> None:
        self._metadata = metadata

    @property
    def store(self) -> Store:
        """The store the node lives in."""
        return self._store

    @property
    def path(self) -> str:
        """The node's path in the store, without a leading ``/`` (``""`` for the root)."""
        return self._path

    @property
    def name(self) -> str:
        """The node's name as h5py and zarr-python give it: ``"/" + path``."""
        return "/" + self._path

    @property
    def basename(self) -> str:
        """The last component of :attr:`path` (``""`` for the root)."""
        return self._path.rsplit("/", 1)[-1]

    @property
    def metadata(self) -> M:
        """The node's stored metadata document (V3, or V2 for a V2 node)."""
        return self._metadata

    @property
    def read_only(self) -> bool:
        """True when writes raise ReadOnlyError (opened with ``mode="r"``, or on a read-only store)."""
        return self._read_only

    @property
    def zarr_format(self) -> int:
        """The Zarr format of the node's metadata: 2 or 3."""
        return self._metadata.zarr_format

    @property
    def attrs(self) -> Attributes:
        """User attributes; every change is written to ``zarr.json`` at once."""
        return Attributes(lambda: self._metadata.attributes, self._put_attributes)

    def update_attributes(self, new_attributes: Mapping[str, Any]) -> Self:
        """Merge ``new_attributes`` into the attributes (one metadata write)
        and return this node, as zarr-python's ``update_attributes`` does."""
        self.attrs.update(new_attributes)
        return self

    def _put_attributes(self, attrs: dict[str, Any]) -> None:
        self._write_metadata(self._metadata.evolve(attributes=attrs))

    def _write_metadata(self, metadata: M) -> None:
        self._check_writable()
        write_metadata(self._store, self._path, metadata)
        self._apply_metadata(metadata)

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"{self._kind} {self.name!r} in {self._store.display_name!r} is read-only: "
                                + self._read_only_hint())

    def _read_only_hint(self) -> str:
        """How to get write access to this node: a read-only store's own
        remedy when it has one (a zip opened with mode='r'), else the
        opener of this kind of node with a writing mode."""
        if self._store.read_only and self._store.read_only_hint != READ_ONLY_HINT:
            return self._store.read_only_hint
        default = " (zarrpy.open_array's default)" if self._kind == "array" else ""
        return (f"it was opened with mode='r'{default} or on a read-only store; "
                f"open it with zarrpy.open_{self._kind}(..., mode='r+') (or 'a') on a writable store to write")

    @property
    def _where(self) -> str:
        """Where the node lives, as zarr-python's repr shows it: the store's
        URL and the node path (``file:///data/x.zarr/a``, ``memory://…/a``)."""
        return node_url(self._store, self._path)

    def __repr__(self) -> str:
        return f"<zarrpy.{type(self).__name__} {self._where}>"

    __hash__ = object.__hash__


class Attributes(MutableMapping[str, Any]):
    """A node's user attributes; every change is written to the store at once."""

    def __init__(self, get: Callable[[], dict[str, Any]], put: Callable[[dict[str, Any]], None]):
        self._get, self._put = get, put

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.update({key: value})

    def __delitem__(self, key: str) -> None:
        attrs = dict(self._get())
        del attrs[key]
        self._put(attrs)

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Apply many changes with a single metadata write."""
        attrs = dict(self._get())
        attrs.update(other, **kwargs)
        self._put(attrs)

    def put(self, attrs: dict[str, Any]) -> None:
        """Replace all attributes."""
        self._put(dict(attrs))

    def asdict(self) -> dict[str, Any]:
        """A copy of the attributes as a plain dict (zarr-python's name)."""
        return dict(self._get())

    def __repr__(self) -> str:
        return repr(self._get())
