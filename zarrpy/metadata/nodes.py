"""The metadata of a node, in either format: the unions code above the
metadata layer passes around when it does not care which format it holds."""

from __future__ import annotations

from typing import TypeAlias

from .v2 import ArrayMetadataV2, GroupMetadataV2
from .v3 import ArrayMetadataV3, GroupMetadataV3

ArrayMetadata: TypeAlias = ArrayMetadataV3 | ArrayMetadataV2
GroupMetadata: TypeAlias = GroupMetadataV3 | GroupMetadataV2
AnyMetadata: TypeAlias = ArrayMetadataV3 | GroupMetadataV3 | ArrayMetadataV2 | GroupMetadataV2

ARRAY_METADATA = (ArrayMetadataV3, ArrayMetadataV2)
"""For ``isinstance``: an array's metadata, either format."""
GROUP_METADATA = (GroupMetadataV3, GroupMetadataV2)
"""For ``isinstance``: a group's metadata, either format."""

__all__ = ["ARRAY_METADATA", "AnyMetadata", "ArrayMetadata", "GROUP_METADATA", "GroupMetadata"]
