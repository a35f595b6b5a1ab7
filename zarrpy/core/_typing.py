"""Type aliases shared by every layer."""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np

JSON: TypeAlias = None | bool | int | float | str | list[Any] | dict[str, Any]
Shape: TypeAlias = tuple[int, ...]
ChunkCoords: TypeAlias = tuple[int, ...]
Selection: TypeAlias = Any
BytesLike: TypeAlias = "bytes | bytearray | memoryview | np.ndarray"
"""Stored bytes as readers hand them over: ``bytes``, or a memoryview or
numpy ``uint8`` array over a scratch buffer or a merged read (see
:mod:`zarrpy.core.scratch`)."""
