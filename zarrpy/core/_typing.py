"""Type aliases shared by every layer."""

from __future__ import annotations

from typing import Any, TypeAlias

JSON: TypeAlias = None | bool | int | float | str | list[Any] | dict[str, Any]
Shape: TypeAlias = tuple[int, ...]
ChunkCoords: TypeAlias = tuple[int, ...]
Selection: TypeAlias = Any
