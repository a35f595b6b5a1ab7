"""Orthogonal selections of one chunk, as index arrays.

A chunk selection has, per dimension, a slice (positive step) or a 1-D
integer array; it picks ``chunk[np.ix_(...)]``. Partial decoders, merges and
``ArrayBytes.select`` all turn it into the same two forms, here.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def dim_indices(selection: Sequence[Any], shape: Sequence[int]) -> list[np.ndarray]:
    """Per dimension, the int64 positions ``selection`` picks (in its order)."""
    return [
        np.arange(*s.indices(n), dtype=np.int64) if isinstance(s, slice) else np.asarray(s, dtype=np.int64).reshape(-1)
        for s, n in zip(selection, shape)
    ]


def flat_positions(selection: Sequence[Any], shape: Sequence[int]) -> np.ndarray:
    """C-order positions in a chunk of ``shape`` of the elements ``selection``
    picks, shaped like the selection."""
    parts = dim_indices(selection, shape)
    if not parts:
        return np.zeros((), dtype=np.int64)
    return np.asarray(np.ravel_multi_index(np.ix_(*parts), tuple(shape)), dtype=np.int64)


def numpy_index(selection: Sequence[Any], shape: Sequence[int]) -> Any:
    """``selection`` as a numpy index of a ``shape`` array: slices as they are,
    else ``np.ix_`` of every dimension's positions."""
    if all(isinstance(s, slice) for s in selection):
        return tuple(selection)
    return np.ix_(*dim_indices(selection, shape))


__all__ = ["dim_indices", "flat_positions", "numpy_index"]
