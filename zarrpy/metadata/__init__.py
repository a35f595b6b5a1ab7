"""Metadata documents (V3 ``zarr.json``; V2 ``.zarray``/``.zgroup``/``.zattrs``) as frozen dataclasses."""

from .v2 import ArrayMetadataV2, GroupMetadataV2, parse_node_metadata_v2
from .v3 import ArrayMetadataV3, ChunkKeyEncodingSpec, GroupMetadataV3, parse_node_metadata

__all__ = [
    "ArrayMetadataV2",
    "ArrayMetadataV3",
    "ChunkKeyEncodingSpec",
    "GroupMetadataV2",
    "GroupMetadataV3",
    "parse_node_metadata",
    "parse_node_metadata_v2",
]
