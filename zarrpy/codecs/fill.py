"""The fill value of a chunk spec, in the forms codecs compare and build with.

One home for "is this chunk all fill?" (bit for bit: NaN payloads and -0.0
count) and "a chunk of fill values", for fixed-size and variable-length
chunks alike; the sharding codec, the default ``update`` and the chunk-I/O
layer all use these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core._typing import Shape
from ..core.array_bytes import ArrayBytes
from ..errors import CodecError

if TYPE_CHECKING:
    from .abc import ChunkSpec


def fixed_fill(spec: ChunkSpec) -> np.ndarray:
    """The fill value as a 0-d array of the chunk's numpy dtype (bit-exact)."""
    dtype = spec.dtype.numpy
    fill = spec.fill_value
    if fill is None:
        fill = spec.dtype.default_fill()
    if dtype.kind == "V":
        raw = bytes(fill) if isinstance(fill, (bytes, bytearray, memoryview)) else np.asarray(fill).tobytes()
        if len(raw) != dtype.itemsize:
            raise CodecError(f"fill value of {len(raw)} bytes for data type {spec.dtype.name!r}")
        return np.frombuffer(raw, dtype=dtype).reshape(())
    return np.asarray(fill, dtype=dtype).reshape(())


def variable_fill(spec: ChunkSpec) -> bytes:
    """The fill value of a variable-length type as its element bytes."""
    fill = spec.fill_value
    if fill is None:
        fill = spec.dtype.default_fill()
    if isinstance(fill, str):
        return fill.encode("utf-8")
    if isinstance(fill, (bytes, bytearray, memoryview)):
        return bytes(fill)
    raise CodecError(f"fill value {fill!r} is not valid for data type {spec.dtype.name!r}")


def fill_variable(fill: bytes, shape: Shape) -> ArrayBytes:
    """A variable chunk of ``shape`` whose every element is ``fill``."""
    n = int(np.prod(shape, dtype=np.int64))
    return ArrayBytes.variable(np.arange(n + 1, dtype=np.int64) * len(fill), fill * n, shape)


def fill_chunk(spec: ChunkSpec, shape: Shape | None = None) -> ArrayBytes:
    """A chunk of ``shape`` (default: the spec's) holding only the fill value."""
    shape = spec.shape if shape is None else shape
    if spec.dtype.is_variable:
        return fill_variable(variable_fill(spec), shape)
    return ArrayBytes.from_array(np.broadcast_to(fixed_fill(spec), shape).copy())


def rows_equal_fill(rows: np.ndarray, fill: np.ndarray) -> np.ndarray:
    """Per row of a 2-D array: every element equals ``fill`` bit for bit.

    Most chunks written are not fill, and a row's first, middle or last
    element usually says so: only rows passing that probe are compared whole.
    """
    nrows, ncols = rows.shape
    if ncols <= 3:
        return _rows_equal(rows, fill)
    probe = _rows_equal(rows[:, [0, ncols // 2, ncols - 1]], fill)
    maybe = np.flatnonzero(probe)
    if maybe.size == nrows:
        return _rows_equal(rows, fill)
    out = np.zeros(nrows, dtype=bool)
    if maybe.size:
        out[maybe] = _rows_equal(rows[maybe], fill)
    return out


def _rows_equal(rows: np.ndarray, fill: np.ndarray) -> np.ndarray:
    """:func:`rows_equal_fill`, comparing every element."""
    itemsize = rows.dtype.itemsize
    if rows.shape[1] == 0:
        return np.ones(rows.shape[0], dtype=bool)
    rows = np.ascontiguousarray(rows)
    if fill.dtype != rows.dtype:
        fill = np.asarray(fill, dtype=rows.dtype)
    if itemsize in (1, 2, 4, 8) and rows.dtype.kind != "V":
        view = np.dtype(f"u{itemsize}")
        equal: np.ndarray = (rows.view(view) == fill.reshape(1).view(view)[0]).all(axis=1)
        return equal
    raw = rows.view(np.uint8).reshape(rows.shape[0], -1, itemsize)
    equal_bytes: np.ndarray = (raw == fill.reshape(1).view(np.uint8)).all(axis=(1, 2))
    return equal_bytes


def variable_is_fill(chunk: ArrayBytes, fill: bytes) -> bool:
    """True if every element of a variable chunk is the bytes ``fill``."""
    lengths = np.diff(chunk.offsets)
    if not bool((lengths == len(fill)).all()):
        return False
    return len(fill) == 0 or chunk.data == fill * chunk.size


def is_fill(chunk: ArrayBytes, spec: ChunkSpec) -> bool:
    """True if every element of ``chunk`` equals the spec's fill value."""
    if chunk.size == 0:
        return True
    if spec.dtype.is_variable:
        elements = chunk.elements
        if elements is not None:
            fill = variable_fill(spec)
            flat = elements.reshape(-1)
            value: str | bytes = fill.decode("utf-8") if elements.dtype.kind == "T" else fill
            # Most chunks written are not fill: their first or last element says so
            # without comparing (and, for StringDType, reading) every element.
            if flat[0] != value or flat[-1] != value:
                return False
            if elements.dtype.kind == "T":
                # A 0-d StringDType operand: a str scalar would become numpy's
                # fixed-width str, which drops trailing NULs ("\x00" == "" there).
                return bool(np.all(flat == np.array(value, dtype=elements.dtype)))
            # element by element: numpy compares an object array with a bytes scalar as numbers
            return all(e == fill for e in flat.tolist())
        return variable_is_fill(chunk, variable_fill(spec))
    return bool(rows_equal_fill(chunk.array.reshape(1, -1), fixed_fill(spec))[0])


__all__ = [
    "fill_chunk", "fill_variable", "fixed_fill", "is_fill", "rows_equal_fill", "variable_fill", "variable_is_fill",
]
