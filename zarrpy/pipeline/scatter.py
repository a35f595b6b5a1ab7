"""Putting decoded elements at their place in a read's output.

A projection (:class:`~zarrpy.core.indexing.ChunkProjection`, or a point
selection's :class:`~zarrpy.core.point_indexing.PointProjection`) says where
one chunk's part of a selection lands in the output; these put a block, or
the fill value, there. Shared by the reads of :mod:`.chunk_io` and the cached
reads of :mod:`.cached_reads`.
"""

from __future__ import annotations

import numpy as np

from ..core.indexing import ChunkProjection
from ..core.point_indexing import PointProjection
from .paired import PairedStrings
from .values import ElementForm

Projection = ChunkProjection | PointProjection
"""Where one chunk's part of a selection lands: an orthogonal or a point projection."""


def put(out: np.ndarray, proj: Projection, block: np.ndarray, trailing: int = 0) -> None:
    """Write ``block`` (the projection's elements; each with ``trailing``
    axes of its own, see :class:`~.paired.PairedStrings`) at its place in ``out``."""
    block = block.reshape((*proj.out_block_shape, *(block.shape[block.ndim - trailing:] if trailing else ())))
    out[proj.out_selection] = block[()] if block.ndim == 0 else block


def put_fill(out: np.ndarray, proj: Projection, form: ElementForm | PairedStrings) -> None:
    """Fill the projection's place in ``out`` (a missing chunk's part). The
    Ellipsis keeps a 0-d place a view, so an element is assigned, not stored
    as an object inside an object array."""
    out[(*proj.out_selection, Ellipsis)] = form.fill_block(proj.out_block_shape)


__all__ = ["Projection", "put", "put_fill"]
