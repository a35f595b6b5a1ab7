"""The metadata of a node, in either format: the unions code above the
metadata layer passes around when it does not care which format it holds,
and :class:`NodeDocuments`, the raw documents a node is read from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, TypeAlias

from ..core.paths import METADATA_KEY, ZARRAY_KEY, ZATTRS_KEY, ZGROUP_KEY, join_key
from .v2 import ArrayMetadataV2, GroupMetadataV2, parse_node_metadata_v2
from .v3 import ArrayMetadataV3, GroupMetadataV3, parse_node_metadata

ArrayMetadata: TypeAlias = ArrayMetadataV3 | ArrayMetadataV2
"""An array's metadata in either format."""
GroupMetadata: TypeAlias = GroupMetadataV3 | GroupMetadataV2
"""A group's metadata in either format."""
AnyMetadata: TypeAlias = ArrayMetadataV3 | GroupMetadataV3 | ArrayMetadataV2 | GroupMetadataV2
"""Any node's metadata: array or group, V3 or V2."""

ARRAY_METADATA = (ArrayMetadataV3, ArrayMetadataV2)
"""For ``isinstance``: an array's metadata, either format."""
GROUP_METADATA = (GroupMetadataV3, GroupMetadataV2)
"""For ``isinstance``: a group's metadata, either format."""

NODE_DOCUMENTS = (METADATA_KEY, ZARRAY_KEY, ZGROUP_KEY, ZATTRS_KEY)
"""The documents below a node's path, in the order of :class:`NodeDocuments`."""


class NodeDocuments(NamedTuple):
    """The raw documents of one path as read from a store (None where absent)."""

    zarr_json: bytes | None
    zarray: bytes | None
    zgroup: bytes | None
    zattrs: bytes | None

    @classmethod
    def from_mapping(cls, documents: Mapping[str, bytes | None]) -> NodeDocuments:
        """From ``{document name: raw bytes or None}`` (names of :data:`NODE_DOCUMENTS`)."""
        return cls(*(documents.get(name) for name in NODE_DOCUMENTS))

    @classmethod
    def split(cls, values: list[bytes | None]) -> list[NodeDocuments]:
        """The documents of consecutive paths, from one flat list of values
        read for the keys ``join_key(path, name)`` of each path and each name
        of :data:`NODE_DOCUMENTS` in turn."""
        n = len(NODE_DOCUMENTS)
        if len(values) % n:
            raise ValueError(f"expected {n} documents per path, got {len(values)} values")
        return [cls(*values[i : i + n]) for i in range(0, len(values), n)]

    def parse(self, path: str, zarr_format: int | None = None) -> AnyMetadata | None:
        """The node at ``path`` (None if these documents make no node in
        ``zarr_format``, or in either format when it is None); V3 wins."""
        if self.zarr_json is not None and zarr_format in (None, 3):
            return parse_node_metadata(self.zarr_json, join_key(path, METADATA_KEY))
        if (self.zarray is not None or self.zgroup is not None) and zarr_format in (None, 2):
            return parse_node_metadata_v2(self.zarray, self.zgroup, self.zattrs, path)
        return None


__all__ = [
    "ARRAY_METADATA",
    "AnyMetadata",
    "ArrayMetadata",
    "GROUP_METADATA",
    "GroupMetadata",
    "NODE_DOCUMENTS",
    "NodeDocuments",
]
