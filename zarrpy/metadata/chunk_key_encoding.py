"""Chunk keys: grid coordinates <-> store keys (``default`` and ``v2``).

=========  ==============  =====================  ==============
encoding   separator       key of (1, 23, 45)     key of a 0-d
=========  ==============  =====================  ==============
default    ``/`` or ``.``  ``c/1/23/45``          ``c``
v2         ``.`` or ``/``  ``1.23.45``            ``0``
=========  ==============  =====================  ==============

Keys are relative to the node; the array layer joins them to its path.
"""

from __future__ import annotations

from ..core._typing import ChunkCoords
from .v3 import ChunkKeyEncodingSpec


def encode_chunk_key(spec: ChunkKeyEncodingSpec, coords: ChunkCoords) -> str:
    """The node-relative store key of the chunk at ``coords``."""
    sep = spec.separator
    if spec.name == "default":
        return "c" + "".join([sep + str(c) for c in coords])
    return sep.join([str(c) for c in coords]) if coords else "0"


def decode_chunk_key(spec: ChunkKeyEncodingSpec, key: str, ndim: int) -> ChunkCoords | None:
    """The coordinates a node-relative key names, or None if it names no chunk."""
    sep = spec.separator
    if spec.name == "default":
        if key == "c":
            parts: list[str] = []
        elif key.startswith("c" + sep):
            parts = key[2:].split(sep)
        else:
            return None
    else:
        parts = [] if (key == "0" and ndim == 0) else key.split(sep)
    if len(parts) != ndim or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


__all__ = ["decode_chunk_key", "encode_chunk_key"]
