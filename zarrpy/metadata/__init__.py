"""Metadata documents (V3 ``zarr.json``; V2 comes later) as frozen dataclasses."""

from .v3 import ArrayMetadataV3, ChunkKeyEncodingSpec, GroupMetadataV3, parse_node_metadata

__all__ = ["ArrayMetadataV3", "ChunkKeyEncodingSpec", "GroupMetadataV3", "parse_node_metadata"]
