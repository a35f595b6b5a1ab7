"""What arrays and groups share: paths, metadata IO and attributes."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

from .errors import MetadataError, NodeNotFoundError, ReadOnlyError
from .metadata.v2 import ArrayMetadataV2, GroupMetadataV2, parse_node_metadata_v2
from .metadata.v3 import ArrayMetadataV3, GroupMetadataV3, parse_node_metadata
from .stores.abc import Store

METADATA_KEY = "zarr.json"
V2_KEYS = (".zarray", ".zgroup", ".zattrs")
NODE_KEYS = (METADATA_KEY, ".zarray", ".zgroup")
"""Keys whose presence makes a path a node (V3 or V2)."""

AnyMetadata = ArrayMetadataV3 | GroupMetadataV3 | ArrayMetadataV2 | GroupMetadataV2
ARRAY_METADATA = (ArrayMetadataV3, ArrayMetadataV2)


def normalize_path(path: str | None) -> str:
    """``None``/``""``/``"/a/b/"`` -> ``""``/``""``/``"a/b"``; refuses ``..``."""
    if not path:
        return ""
    if not isinstance(path, str):
        raise TypeError(f"path must be a string, got {path!r}")
    parts = [p for p in path.strip("/").split("/") if p]
    for p in parts:
        if p in (".", "..") or p.startswith("__") or p in (METADATA_KEY, *V2_KEYS):
            raise MetadataError(f"invalid node name {p!r} in path {path!r}")
    return "/".join(parts)


def join_key(path: str, key: str) -> str:
    return f"{path}/{key}" if path else key


def read_metadata(store: Store, path: str, zarr_format: int | None = None) -> AnyMetadata:
    """The node at ``path``: V3 ``zarr.json`` first, then V2 ``.zarray`` /
    ``.zgroup`` (+ ``.zattrs``), in one batched store request.

    NodeNotFoundError if neither is there (in the format asked for).
    """
    found = read_metadata_many(store, [path], zarr_format)[0]
    if found is None:
        wanted = {None: "zarr.json, .zarray or .zgroup", 3: "zarr.json", 2: ".zarray or .zgroup"}[zarr_format]
        raise NodeNotFoundError(f"no array or group at path {path!r} (no {wanted} there)")
    return found


def read_metadata_many(store: Store, paths: list[str], zarr_format: int | None = None) -> list[AnyMetadata | None]:
    """The nodes at ``paths`` (None where there is none), in one batched request."""
    names = (METADATA_KEY, *V2_KEYS)
    raw = store.get_partial_values([(join_key(p, k), None) for p in paths for k in names])
    out: list[AnyMetadata | None] = []
    for i, path in enumerate(paths):
        v3, zarray, zgroup, zattrs = raw[4 * i : 4 * i + 4]
        if v3 is not None and zarr_format in (None, 3):
            out.append(parse_node_metadata(v3, join_key(path, METADATA_KEY)))
        elif (zarray is not None or zgroup is not None) and zarr_format in (None, 2):
            out.append(parse_node_metadata_v2(zarray, zgroup, zattrs, path))
        else:
            out.append(None)
    return out


def write_metadata(store: Store, path: str, metadata: AnyMetadata | dict[str, bytes]) -> None:
    """Write a node's documents (a metadata object, or its ``to_documents()``)."""
    documents = metadata if isinstance(metadata, dict) else metadata.to_documents()
    for name, raw in documents.items():
        store.set(join_key(path, name), raw)


class Node:
    """What arrays and groups have in common: a store, a path, metadata with
    attributes, and a read-only flag. Subclasses set ``_kind`` and implement
    ``_apply_metadata`` (install new metadata after it was written)."""

    _kind = "node"

    def __init__(self, store: Store, path: str, metadata: Any, *, read_only: bool = False):
        self._store = store
        self._path = path
        self._read_only = read_only or store.read_only
        self._apply_metadata(metadata)

    def _apply_metadata(self, metadata: Any) -> None:
        self._metadata = metadata

    @property
    def store(self) -> Store:
        return self._store

    @property
    def path(self) -> str:
        return self._path

    @property
    def name(self) -> str:
        return "/" + self._path

    @property
    def basename(self) -> str:
        return self._path.rsplit("/", 1)[-1]

    @property
    def metadata(self) -> Any:
        return self._metadata

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def zarr_format(self) -> int:
        return self._metadata.zarr_format

    @property
    def attrs(self) -> Attributes:
        """User attributes; every change is written to ``zarr.json`` at once."""
        return Attributes(lambda: self._metadata.attributes, self._put_attributes)

    def _put_attributes(self, attrs: dict[str, Any]) -> None:
        self._write_metadata(self._metadata.evolve(attributes=attrs))

    def _write_metadata(self, metadata: Any) -> None:
        self._check_writable()
        write_metadata(self._store, self._path, metadata)
        self._apply_metadata(metadata)

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"{self._kind} {self.name!r} is read-only")

    def __repr__(self) -> str:
        return f"<zarrpy.{type(self).__name__} {self.name}>"

    __hash__ = object.__hash__


class Attributes(MutableMapping):
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

    def update(self, other: Any = (), /, **kwargs: Any) -> None:  # type: ignore[override]
        """Apply many changes with a single metadata write."""
        attrs = dict(self._get())
        attrs.update(other, **kwargs)
        self._put(attrs)

    def put(self, attrs: dict[str, Any]) -> None:
        """Replace all attributes."""
        self._put(dict(attrs))

    def asdict(self) -> dict[str, Any]:
        return dict(self._get())

    def __repr__(self) -> str:
        return repr(self._get())
