"""Writing blocks into a chunk: the default of ``ArrayToBytesCodec.update``.

A :class:`ChunkWrite` is one block and where it goes in a chunk; many writes
to one chunk (or shard) are merged in order, later ones winning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..core.selection import Points, numpy_index
from ..errors import CodecError
from .fill import fill_chunk
from .partial import ChunkSelection, is_full_selection, selection_shape

if TYPE_CHECKING:
    from .abc import ChunkSpec


@dataclass(frozen=True, slots=True)
class ChunkWrite:
    """``block`` written at ``selection`` of a chunk: orthogonal (per
    dimension a slice or a 1-D integer array) or :class:`~zarrpy.core.selection.Points`
    (later points win where they repeat); ``block`` has the selection's shape."""

    selection: ChunkSelection | Points
    block: ArrayBytes


def covers(writes: Sequence[ChunkWrite], shape: Sequence[int]) -> bool:
    """True when one of ``writes`` is the whole chunk, so the old one is not needed."""
    return any(is_full_selection(w.selection, shape) for w in writes)


def elements(chunk: ArrayBytes, spec: ChunkSpec) -> np.ndarray:
    """A chunk as a numpy array that assignment can merge into: the fixed
    array, or the variable elements (str for strings, else bytes)."""
    if chunk.is_fixed:
        return chunk.array
    return chunk.to_strings() if spec.dtype.is_string else chunk.to_bytes_objects()


def from_elements(merged: np.ndarray, spec: ChunkSpec) -> ArrayBytes:
    """The inverse of :func:`elements`."""
    if merged.dtype.kind in "TO":
        return ArrayBytes.from_elements(merged)
    return ArrayBytes.from_array(merged)


def merge_writes(
    decode: Callable[[bytes], ArrayBytes], old: bytes | None, writes: Sequence[ChunkWrite], spec: ChunkSpec,
    name: str,
) -> ArrayBytes:
    """The chunk after ``writes``: ``old`` decoded by ``decode`` (fill when
    None or when a write covers the chunk whole), each block assigned in
    order. Errors name the codec ``name``."""
    shape = spec.shape
    base: ArrayBytes | None = None
    target: np.ndarray | None = None
    for write in writes:
        want = selection_shape(write.selection, shape)
        if write.block.shape != want:
            raise CodecError(
                f"codec {name!r}: block of shape {write.block.shape} for a selection of shape {want}"
            )
        if is_full_selection(write.selection, shape):
            base, target = write.block.reshape(shape), None
            continue
        if target is None:
            if base is None:
                base = fill_chunk(spec) if old is None else decode(old)
            target = np.array(elements(base, spec), copy=True)
        target[numpy_index(write.selection, shape)] = elements(write.block, spec)
    if target is not None:
        return from_elements(target, spec)
    if base is None:
        base = fill_chunk(spec) if old is None else decode(old)
    return base


__all__ = ["ChunkWrite", "covers", "elements", "from_elements", "merge_writes"]
