"""Node paths and store keys of a hierarchy.

A node's path is ``/``-separated and relative to the store root (``""`` is
the root); its documents are stored under ``<path>/<name>``. The names of
those documents are reserved: no node may be called one of them.
"""

from __future__ import annotations

from ..errors import MetadataError

METADATA_KEY = "zarr.json"
"""A V3 node's document."""
ZARRAY_KEY = ".zarray"
"""A V2 array's metadata document."""
ZGROUP_KEY = ".zgroup"
"""A V2 group's metadata document."""
ZATTRS_KEY = ".zattrs"
"""A V2 node's attributes document."""
V2_KEYS = (ZARRAY_KEY, ZGROUP_KEY, ZATTRS_KEY)
"""A V2 node's documents."""


RESERVED_PREFIX = "__"
"""Node names starting with this are reserved (Zarr V3 spec): zarrpy creates
none, but opens those another implementation wrote."""


def normalize_path(path: str | None) -> str:
    """``None``/``""``/``"/a/b/"`` -> ``""``/``""``/``"a/b"``; refuses ``.``,
    ``..`` and document names (``zarr.json``, ``.zarray``, ...)."""
    if not path:
        return ""
    if not isinstance(path, str):
        raise TypeError(f"path must be a string, got {path!r}")
    parts = [p for p in path.strip("/").split("/") if p]
    for p in parts:
        if p in (".", "..") or p in (METADATA_KEY, *V2_KEYS):
            raise MetadataError(f"invalid node name {p!r} in path {path!r}")
    return "/".join(parts)


def check_new_node_path(path: str) -> None:
    """Refuse to create a node whose (normalised) path has a reserved name."""
    for p in path.split("/"):
        if p.startswith(RESERVED_PREFIX):
            raise MetadataError(
                f"invalid node name {p!r} in path {path!r}: names starting with "
                f"{RESERVED_PREFIX!r} are reserved"
            )


def names_a_document(name: str) -> bool:
    """True if a part of ``name`` is a node document's name: no member can be called so."""
    return any(p in (METADATA_KEY, *V2_KEYS) for p in name.split("/"))


def join_key(path: str, key: str) -> str:
    """``key`` below the node at ``path`` (``"a", "zarr.json"`` -> ``"a/zarr.json"``)."""
    return f"{path}/{key}" if path else key


__all__ = [
    "METADATA_KEY", "RESERVED_PREFIX", "V2_KEYS", "ZARRAY_KEY", "ZATTRS_KEY", "ZGROUP_KEY",
    "check_new_node_path", "join_key", "names_a_document", "normalize_path",
]
