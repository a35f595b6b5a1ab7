"""What arrays and groups share: paths, metadata IO and attributes."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

from .errors import MetadataError, NodeNotFoundError
from .metadata.v3 import ArrayMetadataV3, GroupMetadataV3, parse_node_metadata
from .stores.abc import Store

METADATA_KEY = "zarr.json"


def normalize_path(path: str | None) -> str:
    """``None``/``""``/``"/a/b/"`` -> ``""``/``""``/``"a/b"``; refuses ``..``."""
    if not path:
        return ""
    if not isinstance(path, str):
        raise TypeError(f"path must be a string, got {path!r}")
    parts = [p for p in path.strip("/").split("/") if p]
    for p in parts:
        if p in (".", "..") or p.startswith("__") or p == METADATA_KEY:
            raise MetadataError(f"invalid node name {p!r} in path {path!r}")
    return "/".join(parts)


def join_key(path: str, key: str) -> str:
    return f"{path}/{key}" if path else key


def read_metadata(store: Store, path: str) -> ArrayMetadataV3 | GroupMetadataV3:
    """Read and parse the node's ``zarr.json``; NodeNotFoundError if absent."""
    key = join_key(path, METADATA_KEY)
    raw = store.get(key)
    if raw is None:
        raise NodeNotFoundError(f"no array or group at path {path!r} (key {key!r} is missing)")
    return parse_node_metadata(raw, key)


def write_metadata(store: Store, path: str, metadata: ArrayMetadataV3 | GroupMetadataV3 | bytes) -> None:
    """Write a node's ``zarr.json`` (a metadata object or its serialised bytes)."""
    raw = metadata if isinstance(metadata, bytes) else metadata.to_bytes()
    store.set(join_key(path, METADATA_KEY), raw)


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
