"""Helpers shared by the sharding tests: specs, hand-made shards, a counting reader,
hypothesis strategies for shards and selections.

Import as ``from tests.codecs.sharding._helpers import ...`` (no ``__init__.py``
in ``tests/codecs``: a package named ``codecs`` would shadow the stdlib).
"""

from __future__ import annotations

import itertools
import struct

import google_crc32c
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.strategies import core_dtypes
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.byte_range import RangeRequest, SuffixRequest, slice_bytes
from zarrpy.core.byte_reader import ByteReader
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.sharding import ShardingCodec
from zarrpy.core.dtypes import DataType

LE = {"name": "bytes", "configuration": {"endian": "little"}}
CRC = {"name": "crc32c"}
DEFAULT_INDEX_CODECS = [LE, CRC]
EMPTY = 2**64 - 1
STRING = DataType.from_json("string")


def spec(shape, dtype="uint16", fill=None) -> ChunkSpec:
    """A shard spec; ``dtype`` a V3 name or numpy dtype, ``fill`` default zero."""
    data_type = DataType.from_json(dtype) if isinstance(dtype, str) else DataType.from_numpy(dtype)
    return ChunkSpec(tuple(shape), data_type, data_type.coerce_fill(fill))


def sharding(chunk_shape, codecs=None, index_codecs=None, index_location="end") -> ShardingCodec:
    return ShardingCodec(chunk_shape, codecs, index_codecs, index_location)


def fixed(array) -> ArrayBytes:
    return ArrayBytes.from_array(np.asarray(array))


def strings(items, shape) -> ArrayBytes:
    """A UTF-8 variable chunk of ``items`` (a flat list) with ``shape``."""
    return ArrayBytes.from_bytes_list([s.encode("utf-8") for s in items], shape)


def as_strings(chunk: ArrayBytes) -> np.ndarray:
    """A variable chunk as an object array of str (for comparisons)."""
    out = np.empty(chunk.size, dtype=object)
    out[:] = [b.decode("utf-8") for b in chunk.to_bytes_list()]
    return out.reshape(chunk.shape)


def raw_index(entries, index_codecs_crc=True) -> bytes:
    """Encode ``entries`` (flat list of (offset, nbytes)) as ``bytes`` LE [+ crc32c]."""
    body = b"".join(struct.pack("<QQ", o, n) for o, n in entries)
    return body + struct.pack("<I", google_crc32c.value(bytes(body))) if index_codecs_crc else body


def read_entries(shard: bytes, nchunks: int, location="end") -> list[tuple[int, int]]:
    """The (offset, nbytes) pairs of a shard with the default index codecs."""
    k = 16 * nchunks + 4
    raw = shard[-k:] if location == "end" else shard[:k]
    return [struct.unpack_from("<QQ", raw, 16 * i) for i in range(nchunks)]


def inner_bytes(shard: bytes, nchunks: int, location="end") -> list[bytes | None]:
    """Each inner chunk's stored bytes (None when empty), C order."""
    return [None if o == EMPTY else shard[o : o + n] for o, n in read_entries(shard, nchunks, location)]


class CountingReader(ByteReader):
    """A ByteReader over bytes (or None: missing) that records every request."""

    def __init__(self, value: bytes | None):
        self.value = value
        self.calls: list = []  # single requests
        self.batches: list[list] = []  # read_many requests
        self.nbytes = 0

    def _get(self, request):
        if self.value is None:
            return None
        out = slice_bytes(self.value, request)
        self.nbytes += len(out)
        return out

    def __call__(self, request=None):
        self.calls.append(request)
        return self._get(request)

    def read_many(self, requests):
        self.batches.append(list(requests))
        return [self._get(r) for r in requests]


class PlainReader(ByteReader):
    """A ByteReader that implements only ``__call__`` (``read_many``: the
    default, one call per request)."""

    def __init__(self, value: bytes | None):
        self.value = value
        self.requests: list = []

    def __call__(self, request=None):
        self.requests.append(request)
        return None if self.value is None else slice_bytes(self.value, request)


def index_request(codec: ShardingCodec, nchunks: int):
    k = 16 * nchunks + 4
    return RangeRequest(0, k) if codec.index_location == "start" else SuffixRequest(k)


def to_ix(selection, shape) -> tuple:
    """Numpy ``np.ix_`` form of a per-dimension selection (slices / int arrays)."""
    parts = [np.arange(*s.indices(n)) if isinstance(s, slice) else np.asarray(s, dtype=np.int64)
             for s, n in zip(selection, shape)]
    return np.ix_(*parts)


def touched_chunks(selection, shape, chunk_shape) -> set[tuple[int, ...]]:
    """Inner chunk coords a per-dimension selection touches."""
    per_dim = []
    for s, n, c in zip(selection, shape, chunk_shape):
        idx = np.arange(*s.indices(n)) if isinstance(s, slice) else np.asarray(s, dtype=np.int64)
        per_dim.append(sorted(set((idx // c).tolist())))
    return set(itertools.product(*per_dim))


# -- hypothesis strategies -------------------------------------------------


@st.composite
def shard_layouts(draw, max_dims=3):
    """(shard shape, inner chunk shape)."""
    ndim = draw(st.integers(1, max_dims))
    inner = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    grid = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    return tuple(g * c for g, c in zip(grid, inner)), inner


@st.composite
def shard_arrays(draw, shape, inner, dtype, fill):
    """A shard-shaped array in which some inner chunks are all ``fill``."""
    arr = draw(hnp.arrays(dtype, shape))
    grid = tuple(s // c for s, c in zip(shape, inner))
    for coords in itertools.product(*(range(g) for g in grid)):
        if draw(st.booleans()):
            region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, inner))
            arr[region] = fill
    return arr


@st.composite
def dim_selections(draw, n):
    """A slice with positive step or a 1-D int array (possibly unsorted, repeats) over ``n``."""
    if draw(st.booleans()):
        start = draw(st.integers(0, n))
        stop = draw(st.integers(start, n))
        step = draw(st.integers(1, 3))
        return slice(start, stop, step)
    return np.array(draw(st.lists(st.integers(0, n - 1), min_size=0, max_size=6)), dtype=np.int64)


def selections(shape):
    return st.tuples(*(dim_selections(n) for n in shape))


fixed_dtypes = core_dtypes
