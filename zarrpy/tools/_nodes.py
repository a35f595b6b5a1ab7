"""What the command-line tools share: an array's V3 description, its stored
chunks by grid coordinates, the inner chunks of one stored object, element
sizes, codec summaries and parsing of ``--max-memory``-style sizes."""

from __future__ import annotations

import itertools
import json
import math
import re
import sys
from typing import Any, NamedTuple

import numpy as np

from ..api._array import Array
from ..api._info import dtype_text
from ..core._typing import ChunkCoords, Shape
from ..core.dtypes.optional import is_optional
from ..core.ragged import RaggedArray
from ..metadata.chunk_key_encoding import decode_chunk_key
from ..metadata.v3 import ArrayMetadataV3
from ..pipeline.convert import v2_to_v3


def v3_metadata(array: Array) -> ArrayMetadataV3:
    """The array's metadata as V3 (a V2 array's converted form: the same bytes)."""
    meta = array.metadata
    return meta if isinstance(meta, ArrayMetadataV3) else v2_to_v3(meta)


class StoredObject(NamedTuple):
    """A chunk object present in the store (a shard, when sharded)."""

    key: str
    coords: ChunkCoords
    """Its coordinates in the stored-object grid (shards, or chunks)."""


def outer_shape(array: Array) -> Shape:
    """The shape of a stored object: the shard shape, or the chunk shape."""
    return array.shards if array.shards is not None else array.chunks


def stored_objects(array: Array) -> list[StoredObject]:
    """Every stored chunk object of ``array`` (one listing), sorted by coordinates."""
    meta = v3_metadata(array)
    prefix = f"{array.path}/" if array.path else ""
    out = []
    for key in array.stored_chunk_keys():
        coords = decode_chunk_key(meta.chunk_key_encoding, key[len(prefix):], array.ndim)
        if coords is not None:
            out.append(StoredObject(key, coords))
    return sorted(out, key=lambda o: o.coords)


def in_grid(array: Array, coords: ChunkCoords) -> bool:
    """Does the stored object at ``coords`` lie inside the array (not left over from a shrink)?"""
    return all(0 <= c and c * o < max(s, 1) for c, o, s in zip(coords, outer_shape(array), array.shape))


def inner_chunks(array: Array, coords: ChunkCoords) -> list[ChunkCoords]:
    """The (inner) chunk coordinates the stored object at ``coords`` holds,
    clipped to the array: one for an unsharded array."""
    if array.shards is None:
        return [tuple(coords)]
    per = [s // c for s, c in zip(array.shards, array.chunks)]
    grid = array.cdata_shape
    ranges = [range(c * p, min((c + 1) * p, g)) for c, p, g in zip(coords, per, grid)]
    return [tuple(c) for c in itertools.product(*ranges)]


def chunk_region(array: Array, coords: ChunkCoords, unit: Shape) -> tuple[slice, ...]:
    """The part of the array the grid cell ``coords`` of ``unit``-shaped cells covers."""
    return tuple(slice(c * u, min((c + 1) * u, s)) for c, u, s in zip(coords, unit, array.shape))


def element_nbytes(array: Array, sample: Any = None) -> int:
    """Bytes one element takes in memory once read: the item size for fixed-size
    types (one more for an optional's mask); for strings, bytes and ragged
    vectors an estimate from ``sample`` (a read part of the array), with each
    element's Python object counted."""
    data_type = v3_metadata(array).data_type
    if not data_type.is_variable and not isinstance(sample, RaggedArray):
        return max(array.dtype.itemsize, 1) + (1 if is_optional(data_type) else 0)
    if isinstance(sample, RaggedArray):
        return max(int(sample.nbytes / max(sample.size, 1)), 0) + 16
    if sample is None or np.size(sample) == 0:
        return 64  # a short string's object and its pointer
    flat = np.asarray(sample).reshape(-1)
    step = max(len(flat) // 1000, 1)  # at most ~1000 elements looked at
    picked = flat[::step]
    return int(sum(sys.getsizeof(x if isinstance(x, (str, bytes)) else str(x)) for x in picked) / len(picked)) + 8


def codec_summary(array: Array) -> str:
    """The codecs as ``"transpose > bytes > zstd:3 > crc32c"`` (inside the shards
    when sharded; the compressor parts in ``--compressor``'s syntax)."""
    return " > ".join(_codec_short(c.to_json()) for c in (*array.filters, array.serializer, *array.compressors))


def _codec_short(doc: dict[str, Any]) -> str:
    name = str(doc.get("name"))
    config = doc.get("configuration") or {}
    if name == "zstd":
        return f"zstd:{config.get('level', 0)}"
    if name in ("gzip", "zlib", "numcodecs.zlib"):
        return f"{name.removeprefix('numcodecs.')}:{config.get('level', '')}".rstrip(":")
    if name == "blosc":
        return f"blosc:{config.get('cname')}:{config.get('clevel')}" + (
            f":{config['shuffle']}" if config.get("shuffle") not in (None, "shuffle") else "")
    if name == "bytes":
        return "bytes:big" if config.get("endian") == "big" else "bytes"
    return name


_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_FACTORS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """``"64MB"``, ``"64M"``, ``"64MiB"``, ``"1.5GB"`` or ``"4096"`` as bytes
    (K, M, G, T are powers of 1024); ValueError otherwise."""
    m = _SIZE.match(text)
    if not m or (m.group(3).lower() == "i"):
        raise ValueError(f"expected a size such as 64MB, 1GB or 4096 (bytes), got {text!r}")
    value = float(m.group(1)) * _FACTORS[m.group(2).lower()]
    if value < 1:
        raise ValueError(f"a size must be at least 1 byte, got {text!r}")
    return int(value)


def parse_shape(text: str, what: str) -> tuple[int, ...]:
    """``"100,100"`` as ``(100, 100)`` (``-1``: the whole dimension); ValueError naming ``what``."""
    try:
        shape = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"{what}: expected integers separated by commas, such as 100,100; got {text!r}") from None
    if not shape or any(s == 0 or s < -1 for s in shape):
        raise ValueError(f"{what}: expected positive integers (or -1 for a whole dimension), got {text!r}")
    return shape


def nbytes_of(region: tuple[slice, ...], element: int) -> int:
    return int(math.prod(r.stop - r.start for r in region)) * element


def json_text(document: Any) -> str:
    """``document`` as the one JSON document ``--json`` prints (numpy values as plain JSON)."""
    return json.dumps(document, indent=2, default=_json_default)


def _json_default(value: Any) -> Any:
    """What ``json`` cannot serialise itself: numpy scalars and arrays, dtypes, bytes, sets."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return str(value)


__all__ = [
    "StoredObject",
    "chunk_region",
    "codec_summary", "dtype_text",
    "element_nbytes",
    "in_grid",
    "inner_chunks",
    "json_text",
    "nbytes_of",
    "outer_shape",
    "parse_shape",
    "parse_size",
    "stored_objects",
    "v3_metadata",
]
