"""The order inner chunks are written in inside a shard (``subchunk_write_order``).

The sharding spec leaves the physical order of inner chunks to the writer
(the index says where each one is), so the order is a write setting, not
part of the codec's JSON: zarr-python 3.4 keeps it on its ``ShardingCodec``
object only (``subchunk_write_order``, default ``"morton"``) and never
stores it; readers take any order. zarrpy takes the same four names:

- ``"lexicographic"`` (zarrpy's default): C order of the inner-chunk
  coordinates, the last dimension varying fastest;
- ``"colexicographic"``: Fortran order, the first dimension varying fastest;
- ``"morton"``: Z order by zarr-python's *compressed* Morton code: the bits
  of the coordinates interleaved level by level, dimension 0 lowest, a
  dimension dropping out once its extent needs no more bits (so a 4 x 2
  grid goes (0,0) (1,0) (0,1) (1,1) (2,0) (3,0) (2,1) (3,1));
- ``"unordered"``: no promised order. zarrpy writes it lexicographic, which
  is what zarr-python 3.4.2 writes too (its ``np.ndindex``), so the bytes
  agree today; a reader must not rely on it.

:func:`write_order` gives the order as flat (C-order) positions,
:func:`write_rank` its inverse. Both are computed once per grid (cached,
read-only arrays).

>>> write_order((2, 2), "morton").tolist()
[0, 2, 1, 3]
>>> write_order((2, 3), "colexicographic").tolist()
[0, 3, 1, 4, 2, 5]
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...core._typing import Shape

WRITE_ORDERS = ("lexicographic", "colexicographic", "morton", "unordered")
"""The ``subchunk_write_order`` names (zarr-python's)."""

DEFAULT_WRITE_ORDER = "lexicographic"
"""zarrpy's order (zarr-python's is ``"morton"``): C order, as zarrs and
tensorstore write, which the streaming encoder follows band by band."""

_C_ORDERS = ("lexicographic", "unordered")
"""Orders written as C order of the positions."""


def is_c_order(order: str) -> bool:
    """Is ``order`` written in the flat C order of positions (nothing to sort)?"""
    return order in _C_ORDERS


def write_order(grid_shape: Shape, order: str) -> np.ndarray:
    """Flat C-order positions of a ``grid_shape`` grid of inner chunks, in the
    order ``order`` writes them (int64, read-only). ValueError for an unknown order."""
    return _write_order(tuple(int(n) for n in grid_shape), order)


def write_rank(grid_shape: Shape, order: str) -> np.ndarray:
    """The inverse of :func:`write_order`: for each flat position, its place
    in the written order (int64, read-only)."""
    return _write_rank(tuple(int(n) for n in grid_shape), order)


@functools.lru_cache(maxsize=32)
def _write_order(grid_shape: Shape, order: str) -> np.ndarray:
    n = math.prod(grid_shape)
    if order in _C_ORDERS:
        out = np.arange(n, dtype=np.int64)
    elif order == "colexicographic":
        out = np.arange(n, dtype=np.int64).reshape(grid_shape).ravel(order="F")
    elif order == "morton":
        out = np.argsort(morton_codes(grid_shape), kind="stable").astype(np.int64)
    else:
        raise ValueError(f"unknown subchunk write order {order!r}; known: {', '.join(WRITE_ORDERS)}")
    out = np.ascontiguousarray(out)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=32)
def _write_rank(grid_shape: Shape, order: str) -> np.ndarray:
    positions = _write_order(grid_shape, order)
    rank = np.empty_like(positions)
    rank[positions] = np.arange(len(positions), dtype=np.int64)
    rank.setflags(write=False)
    return rank


def morton_codes(grid_shape: Shape) -> np.ndarray:
    """The compressed Morton code of every position of a ``grid_shape`` grid,
    by flat C-order position (uint64): at each bit level, from the lowest,
    one bit of each dimension that still has bits at that level (dimension
    ``d`` has ``(n_d - 1).bit_length()`` of them), dimension 0 first: the
    code zarr-python (after Neuroglancer) orders inner chunks by."""
    n = math.prod(grid_shape)
    bits = [(g - 1).bit_length() for g in grid_shape]
    if sum(bits) > 64:
        raise ValueError(f"a grid of {tuple(grid_shape)} inner chunks has Morton codes wider than 64 bits")
    codes = np.zeros(n, dtype=np.uint64)
    if not grid_shape:
        return codes
    coords = np.unravel_index(np.arange(n, dtype=np.int64), grid_shape)
    out_bit = 0
    for level in range(max(bits, default=0)):
        for d, c in enumerate(coords):
            if level < bits[d]:
                codes |= ((c.astype(np.uint64) >> np.uint64(level)) & np.uint64(1)) << np.uint64(out_bit)
                out_bit += 1
    return codes


__all__ = ["DEFAULT_WRITE_ORDER", "WRITE_ORDERS", "is_c_order", "morton_codes", "write_order", "write_rank"]
