"""Helpers shared by the vlen codec tests: Python lists <-> variable ArrayBytes.

Written independently of :mod:`zarrpy.core.array_bytes`' own conversions so that the
tests check the codecs against a second, obvious implementation.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.core.dtypes import DataType

STRING = DataType.from_json("string")
BYTES = DataType.from_json("variable_length_bytes")


def as_bytes(item: str | bytes) -> bytes:
    return item.encode("utf-8") if isinstance(item, str) else bytes(item)


def variable_chunk(items, shape=None) -> ArrayBytes:
    """A variable chunk of ``items`` (str as UTF-8, or bytes); offsets = cumsum of lengths."""
    raw = [as_bytes(item) for item in items]
    offsets = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in raw], out=offsets[1:])
    return ArrayBytes.variable(offsets, b"".join(raw), (len(raw),) if shape is None else shape)


def items_of(chunk: ArrayBytes) -> list[bytes]:
    """Every element's bytes, in C order."""
    o = chunk.offsets
    return [chunk.data[o[i] : o[i + 1]] for i in range(len(o) - 1)]


def spec_of(items, dtype: DataType | None = None, shape=None) -> ChunkSpec:
    """The chunk spec for ``items``: string data when they are str, else bytes."""
    if dtype is None:
        dtype = STRING if items and isinstance(items[0], str) else BYTES
    return ChunkSpec((len(items),) if shape is None else shape, dtype, dtype.default_fill())


def assert_valid(chunk: ArrayBytes) -> None:
    """Offsets are int64, start at 0, never decrease and end at len(data)."""
    o = chunk.offsets
    assert o.dtype == np.int64
    assert len(o) == chunk.size + 1
    assert o[0] == 0
    assert np.all(np.diff(o) >= 0)
    assert o[-1] == len(chunk.data)


# Non-ASCII, empty strings, NUL and astral characters all come up.
strings = st.lists(st.text(max_size=12), max_size=40)
binaries = st.lists(st.binary(max_size=12), max_size=40)
items = st.one_of(strings, binaries)
