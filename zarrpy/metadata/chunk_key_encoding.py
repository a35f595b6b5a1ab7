"""Chunk keys: grid coordinates <-> store keys (``default``, ``v2``, ``zarrs.default_suffix``).

====================  ==============  =====================  ==============
encoding              separator       key of (1, 23, 45)     key of a 0-d
====================  ==============  =====================  ==============
default               ``/`` or ``.``  ``c/1/23/45``          ``c``
v2                    ``.`` or ``/``  ``1.23.45``            ``0``
zarrs.default_suffix  ``/`` or ``.``  ``c/1/23/45.tiff``     ``c.tiff``
====================  ==============  =====================  ==============

``zarrs.default_suffix`` (zarrs, experimental there) is ``default`` with the
configuration's ``suffix`` (here ``".tiff"``) after every key, the 0-d key
included; its separator defaults to ``/``. Keys are relative to the node;
the array layer joins them to its path.

>>> from zarrpy.metadata.v3 import ChunkKeyEncodingSpec
>>> spec = ChunkKeyEncodingSpec.from_json(
...     {"name": "zarrs.default_suffix", "configuration": {"suffix": ".bin"}})
>>> encode_chunk_key(spec, (1, 23, 45)), decode_chunk_key(spec, "c/1/23/45.bin", 3)
('c/1/23/45.bin', (1, 23, 45))
"""

from __future__ import annotations

from ..core._typing import ChunkCoords
from .v3 import ChunkKeyEncodingSpec


def encode_chunk_key(spec: ChunkKeyEncodingSpec, coords: ChunkCoords) -> str:
    """The node-relative store key of the chunk at ``coords``."""
    sep = spec.separator
    if spec.name == "v2":
        return sep.join([str(c) for c in coords]) if coords else "0"
    return "c" + "".join([sep + str(c) for c in coords]) + spec.suffix


def decode_chunk_key(spec: ChunkKeyEncodingSpec, key: str, ndim: int) -> ChunkCoords | None:
    """The coordinates a node-relative key names, or None if it names no chunk."""
    sep = spec.separator
    if spec.name != "v2":
        suffix = spec.suffix
        if suffix:
            if not key.endswith(suffix):
                return None
            key = key[: -len(suffix)]
        if key == "c":
            parts: list[str] = []
        elif key.startswith("c" + sep):
            parts = key[2:].split(sep)
        else:
            return None
    else:
        parts = [] if (key == "0" and ndim == 0) else key.split(sep)
    if len(parts) != ndim or not all(p.isascii() and p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


__all__ = ["decode_chunk_key", "encode_chunk_key"]
