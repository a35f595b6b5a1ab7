"""Selections of one chunk, as index arrays.

A chunk selection is either *orthogonal*, per dimension a slice (positive
step) or a 1-D integer array, picking ``chunk[np.ix_(...)]``; or
:class:`Points`, one coordinate array per dimension, picking element ``i`` at
``(coords[0][i], coords[1][i], ...)`` (``chunk[coords]`` in numpy). Partial
decoders, merges and ``ArrayBytes.select`` all turn them into the same two
forms, here. Partial decoders take orthogonal selections only; points reach
the codecs through writes (:class:`~zarrpy.codecs.merge.ChunkWrite`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import SelectionError


@dataclass(frozen=True, slots=True, eq=False)
class Points:
    """A pointwise selection of a chunk: one 1-D int64 array of positions
    per dimension (at least one), all of one length (repeats allowed, any order)."""

    coords: tuple[np.ndarray, ...]

    def __len__(self) -> int:
        return int(self.coords[0].size)

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the elements picked: ``(n,)``."""
        return (len(self),)


def check_slice(sel: slice) -> None:
    """SelectionError unless ``sel``'s bounds are integers or None and its step is not 0."""
    for part in (sel.start, sel.stop, sel.step):
        if part is not None and type(part) is not int and not isinstance(part, (int, np.integer)):
            raise SelectionError(f"slice bounds must be integers or None, got {sel!r}")
    if sel.step is not None and int(sel.step) == 0:
        raise SelectionError("slice step cannot be zero")


def dim_indices(selection: Sequence[Any] | Points, shape: Sequence[int]) -> list[np.ndarray]:
    """Per dimension, the int64 positions an orthogonal ``selection`` picks (in its order)."""
    if isinstance(selection, Points):
        raise TypeError("a point selection has no per-dimension positions; use flat_positions")
    return [
        np.arange(*s.indices(n), dtype=np.int64) if isinstance(s, slice) else np.asarray(s, dtype=np.int64).reshape(-1)
        for s, n in zip(selection, shape)
    ]


def flat_positions(selection: Sequence[Any] | Points, shape: Sequence[int]) -> np.ndarray:
    """C-order positions in a chunk of ``shape`` of the elements ``selection``
    picks, shaped like the selection."""
    if isinstance(selection, Points):
        return np.asarray(np.ravel_multi_index(selection.coords, tuple(shape)), dtype=np.int64)
    parts = dim_indices(selection, shape)
    if not parts:
        return np.zeros((), dtype=np.int64)
    return np.asarray(np.ravel_multi_index(np.ix_(*parts), tuple(shape)), dtype=np.int64)


def numpy_index(selection: Sequence[Any] | Points, shape: Sequence[int]) -> Any:
    """``selection`` as a numpy index of a ``shape`` array: points as their
    coordinate arrays, slices as they are, else ``np.ix_`` of every
    dimension's positions."""
    if isinstance(selection, Points):
        return selection.coords
    if all(isinstance(s, slice) for s in selection):
        return tuple(selection)
    return np.ix_(*dim_indices(selection, shape))


__all__ = ["Points", "check_slice", "dim_indices", "flat_positions", "numpy_index"]
