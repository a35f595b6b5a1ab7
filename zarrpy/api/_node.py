"""What arrays and groups share: paths, metadata IO and attributes."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Callable, Generic, Iterator, NamedTuple, Protocol, Self, TypeVar

from ..core.paths import METADATA_KEY, V2_KEYS, ZARRAY_KEY, ZGROUP_KEY, join_key
from ..errors import MetadataError, NodeNotFoundError, ReadOnlyError
from ..metadata.consolidated import ZMETADATA_KEY
from ..metadata.nodes import ARRAY_METADATA, NODE_DOCUMENTS, AnyMetadata, ArrayMetadata, NodeDocuments
from ..metadata.v2 import GroupMetadataV2
from ..pipeline.io_pool import map_io
from ..stores.abc import READ_ONLY_HINT, Store
from ..stores.memory import MemoryStore

NODE_KEYS = (METADATA_KEY, ZARRAY_KEY, ZGROUP_KEY)
"""Keys whose presence makes a path a node (V3 or V2)."""


def location(store: Store, path: str) -> str:
    """``'data/x.zarr' (node path '/a')``: where a node is, for error messages."""
    return f"{store.display_name!r} (node path {'/' + path!r})"


def read_metadata(store: Store, path: str, zarr_format: int | None = None) -> AnyMetadata:
    """The node at ``path``: V3 ``zarr.json`` first, then V2 ``.zarray`` /
    ``.zgroup`` (+ ``.zattrs``); the requests as :func:`read_nodes` makes them.

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
    """What :func:`read_nodes` found at a path."""

    metadata: AnyMetadata
    zmetadata: bytes | None
    """The raw V2 ``.zmetadata`` beside a V2 group, when asked for (else None)."""


def read_node(
    store: Store, path: str, zarr_format: int | None = None, *, zmetadata: bool = False
) -> StoredNode:
    """The node at ``path`` (as :func:`read_metadata`) and, if ``zmetadata``,
    the raw V2 ``.zmetadata`` beside it, in the requests of :func:`read_nodes`:
    one (``zarr.json``) for a V3 node. NodeNotFoundError if there is none."""
    found = read_nodes(store, [path], zarr_format, zmetadata=zmetadata)[0]
    if found is None:
        raise node_not_found(store, path, zarr_format)
    return found


def node_not_found(store: Store, path: str, zarr_format: int | None = None) -> NodeNotFoundError:
    """The error for no node at ``path`` (in ``zarr_format``, if given)."""
    wanted = {None: "zarr.json, .zarray or .zgroup", 3: "zarr.json", 2: ".zarray or .zgroup"}[zarr_format]
    return NodeNotFoundError(f"no array or group at {location(store, path)}: no {wanted} there")


def array_metadata(store: Store, path: str, found: StoredNode | None, zarr_format: int | None = None) -> ArrayMetadata:
    """The array metadata :func:`read_nodes` found at ``path``; NodeNotFoundError
    when nothing is there, or a group."""
    if found is None:
        raise node_not_found(store, path, zarr_format)
    if not isinstance(found.metadata, ARRAY_METADATA):
        raise NodeNotFoundError(f"{location(store, path)} holds a group, not an array; use zarrpy.open_group")
    return found.metadata


def read_nodes(
    store: Store, paths: Sequence[str], zarr_format: int | None = None, *, zmetadata: bool = False
) -> list[StoredNode | None]:
    """The nodes at ``paths`` (None where there is none), in order, in at
    most two batched store requests, whatever the store:

    1. every ``zarr.json`` (skipped for ``zarr_format=2``); a V3 node costs
       this one request, and V3 wins when both formats are present;
    2. only for the paths that lacked it (none for ``zarr_format=3``), their
       V2 documents ``.zarray``, ``.zgroup``, ``.zattrs`` and, if
       ``zmetadata``, ``.zmetadata``.

    A returned ``zmetadata`` is the raw ``.zmetadata`` of a V2 group (None
    otherwise); a V3 group carries its consolidated metadata in its
    ``zarr.json``. MetadataError naming the store and path for a bad document.
    """
    paths = list(paths)
    v3 = _fetch(store, [join_key(p, METADATA_KEY) for p in paths]) if zarr_format != 2 else [None] * len(paths)
    lacking = [i for i, raw in enumerate(v3) if raw is None] if zarr_format != 3 else []
    names = (*V2_NODE_DOCUMENTS, *((ZMETADATA_KEY,) if zmetadata else ()))
    v2 = _fetch(store, [join_key(paths[i], name) for i in lacking for name in names])
    documents: list[dict[str, bytes | None]] = [{METADATA_KEY: raw} for raw in v3]
    for n, i in enumerate(lacking):
        documents[i].update(zip(names, v2[n * len(names) : (n + 1) * len(names)]))
    return [_parse(store, path, raw, zarr_format) for path, raw in zip(paths, documents)]


def _fetch(store: Store, keys: list[str]) -> list[bytes | None]:
    """``keys``' values in one request: a ``get`` for one key, else a batch."""
    if len(keys) == 1:
        return [store.get(keys[0])]
    return store.get_partial_values([(key, None) for key in keys]) if keys else []


def _parse(store: Store, path: str, raw: dict[str, bytes | None], zarr_format: int | None) -> StoredNode | None:
    """The node ``raw`` (document name -> bytes or None) makes at ``path``, or None."""
    try:
        found = NodeDocuments.from_mapping(raw).parse(path, zarr_format)
    except MetadataError as exc:  # name the store: the key alone does not say which one
        raise type(exc)(f"invalid metadata at {location(store, path)}: {exc}") from exc
    if found is None:
        return None
    return StoredNode(found, raw.get(ZMETADATA_KEY) if isinstance(found, GroupMetadataV2) else None)


V2_NODE_DOCUMENTS = tuple(name for name in NODE_DOCUMENTS if name != METADATA_KEY)
"""The V2 documents of a node (``.zarray``, ``.zgroup``, ``.zattrs``)."""


def read_metadata_many(store: Store, paths: Sequence[str], zarr_format: int | None = None) -> list[AnyMetadata | None]:
    """The nodes at ``paths`` (None where there is none), as :func:`read_nodes` reads them."""
    return [None if found is None else found.metadata for found in read_nodes(store, paths, zarr_format)]


class FoundNode(NamedTuple):
    """A node :func:`walk_metadata` found below a group."""

    rel: str
    """Its path relative to the group."""
    metadata: AnyMetadata


def walk_metadata(
    store: Store, path: str, zarr_format: int | None = None, max_depth: int | None = None
) -> list[FoundNode]:
    """Every node below the group at ``path`` as ``(relative path, metadata)``.

    Live reads, per level of the hierarchy: the listings of its groups side
    by side (:func:`~zarrpy.pipeline.io_pool.map_io`), then the members'
    metadata as :func:`read_nodes` reads it (one batched request when they are
    all V3). ``max_depth=0`` stops at the direct children, None walks
    everything. Unsorted.
    """
    found: list[FoundNode] = []
    level = [(path, "")]  # groups whose children are listed next: (store path, relative path)
    depth = 0
    while level:
        listings = map_io(lambda group: _member_names(store, group[0]), level)
        children = [(join_key(group_path, name), join_key(rel, name))
                    for (group_path, rel), names in zip(level, listings) for name in names]
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


def _member_names(store: Store, group_path: str) -> list[str]:
    """The names in the group's directory that may be members (one listing)."""
    prefix = join_key(group_path, "") if group_path else ""
    return [name for name in store.list_dir(prefix) if name not in NOT_CHILDREN]


def write_metadata(store: Store, path: str, metadata: NodeMetadata | dict[str, bytes]) -> None:
    """Write a node's documents (a metadata object, or its ``to_documents()``)
    in one batch: a V2 node's ``.zarray`` and ``.zattrs`` side by side."""
    documents = metadata if isinstance(metadata, dict) else metadata.to_documents()
    store.set_many([(join_key(path, name), raw) for name, raw in documents.items()])


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
