"""What the command-line tools share: an array's V3 description, its stored
chunks by grid coordinates, the inner chunks of one stored object, element
sizes, codec summaries and parsing of ``--max-memory``-style sizes."""

from __future__ import annotations

import bisect
import itertools
import json
import math
import re
import sys
import weakref
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


class Layout(NamedTuple):
    """Where an array's stored objects (shards, else chunks) and its read
    units (inner chunks, else chunks) start along each dimension, from
    ``write_chunk_sizes`` and ``read_chunk_sizes``: any chunk grid."""

    outer: tuple[tuple[int, ...], ...]
    """Per dimension, each stored object's start, then the array's length."""
    inner: tuple[tuple[int, ...], ...]
    """Per dimension, each read unit's start, then the array's length."""

    @classmethod
    def of(cls, array: Array) -> Layout:
        """``array``'s layout (kept per array object while its shape stays)."""
        found = _layouts.get(array)
        if found is None or found[0] != array.shape:
            found = (array.shape, cls(_starts(array.write_chunk_sizes), _starts(array.read_chunk_sizes)))
            _layouts[array] = found
        return found[1]


def _starts(sizes: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
    return tuple((0, *itertools.accumulate(d)) for d in sizes)


_layouts: weakref.WeakKeyDictionary[Array, tuple[Shape, Layout]] = weakref.WeakKeyDictionary()


def outer_shape(array: Array) -> Shape:
    """The largest stored object: the shard shape, or the chunk shape (the
    largest of each dimension's, for a rectilinear grid), clipped to the array."""
    return _largest(Layout.of(array).outer)


def unit_shape(array: Array) -> Shape:
    """The largest read unit (inner chunk, else chunk), clipped to the array."""
    return _largest(Layout.of(array).inner)


def _largest(starts: tuple[tuple[int, ...], ...]) -> Shape:
    return tuple(max([b - a for a, b in zip(d, d[1:])], default=1) for d in starts)


def layout_lists(array: Array) -> tuple[list[Any], list[Any] | None]:
    """``(chunks, shards)`` as JSON lists: the chunk (inner chunk) and shard
    shapes; a rectilinear dimension as the list of its chunk (shard) sizes."""
    rectilinear = array.chunk_grid["name"] == "rectilinear"

    def compact(sizes: tuple[tuple[int, ...], ...]) -> list[Any]:
        return [d[0] if d and len(set(d[:-1])) <= 1 and d[-1] <= d[0] else list(d) for d in sizes]

    if not array.is_sharded:
        return (compact(array.read_chunk_sizes) if rectilinear else list(array.chunks)), None
    shards = compact(array.write_chunk_sizes) if rectilinear else list(array.shards or ())
    return list(array.chunks), shards


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
    layout = Layout.of(array)
    return len(coords) == len(layout.outer) and all(
        0 <= c < max(len(d) - 1, 1) for c, d in zip(coords, layout.outer))


def stored_region(array: Array, coords: ChunkCoords) -> tuple[slice, ...]:
    """The part of the array the stored object at ``coords`` (in the grid) covers."""
    layout = Layout.of(array)
    return tuple(slice(d[c], d[c + 1]) if c + 1 < len(d) else slice(d[-1], d[-1]) for c, d in zip(coords, layout.outer))


def inner_chunks(array: Array, coords: ChunkCoords) -> list[ChunkCoords]:
    """The (inner) chunk coordinates the stored object at ``coords`` holds,
    clipped to the array: one for an unsharded array."""
    if not array.is_sharded:
        return [tuple(coords)]
    layout = Layout.of(array)
    ranges = []
    for c, outer, inner in zip(coords, layout.outer, layout.inner):
        if c + 1 >= len(outer):
            return []
        ranges.append(range(bisect.bisect_right(inner, outer[c]) - 1, bisect.bisect_left(inner, outer[c + 1])))
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


ChunksOption = tuple[int | tuple[int, ...], ...]
"""``--chunks`` / ``--shards`` parsed: per dimension an edge length (-1: the
whole dimension) or the edge lengths of a rectilinear grid."""


def parse_chunks(text: str, what: str) -> ChunksOption:
    """``--chunks`` / ``--shards`` text: per dimension (comma-separated) one
    edge length (``-1``: the whole dimension) or, for a rectilinear grid,
    its edge lengths joined by ``+``, where ``E*K`` is ``K`` edges of ``E``:
    ``"100,100"`` is ``(100, 100)``; ``"30*3+10,40"`` is ``((30, 30, 30, 10), 40)``.
    ValueError naming ``what``."""
    dims: list[int | tuple[int, ...]] = []
    for part in text.split(","):
        part = part.strip()
        if "+" in part or "*" in part:
            edges: list[int] = []
            for term in part.split("+"):
                value, _, count = term.strip().partition("*")
                try:
                    edge, times = int(value), int(count) if count else 1
                except ValueError:
                    edge = times = 0
                if edge < 1 or times < 1:
                    raise ValueError(f"{what}: expected edge lengths such as 30*3+10 (three 30s, then 10), "
                                     f"got {part!r} in {text!r}")
                edges.extend([edge] * times)
            dims.append(tuple(edges))
            continue
        try:
            edge = int(part)
        except ValueError:
            raise ValueError(f"{what}: expected integers separated by commas, such as 100,100 (or edges "
                             f"such as 30*3+10,100 for a rectilinear grid); got {text!r}") from None
        if edge == 0 or edge < -1:
            raise ValueError(f"{what}: expected positive integers (or -1 for a whole dimension), got {text!r}")
        dims.append(edge)
    return tuple(dims)


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
    "Layout",
    "chunk_region",
    "codec_summary", "dtype_text",
    "element_nbytes",
    "in_grid",
    "layout_lists",
    "inner_chunks",
    "json_text",
    "nbytes_of",
    "outer_shape",
    "stored_region",
    "unit_shape",
    "parse_chunks",
    "parse_shape",
    "parse_size",
    "stored_objects",
    "v3_metadata",
]
