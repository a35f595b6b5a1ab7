"""Type aliases shared by every layer.

The ones users meet in zarrpy's signatures (``ShapeLike``, ``Selection``,
``JSON``...) are public as :mod:`zarrpy.typing`; the names follow
zarr-python's where it has one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import EllipsisType
from typing import Any, Literal, SupportsIndex, TypeAlias

import numpy as np
import numpy.typing as npt

JSON: TypeAlias = None | bool | int | float | str | list[Any] | dict[str, Any]
"""A JSON value as :func:`json.loads` returns it (metadata documents, codec
configurations, attributes). The containers' items are ``Any``: a recursive
alias would make every reader of a parsed document narrow each level."""

Shape: TypeAlias = tuple[int, ...]
"""A shape in elements, one non-negative int per dimension."""

ChunkCoords: TypeAlias = tuple[int, ...]
"""A chunk's position in the chunk grid, one int per dimension."""

ShapeLike: TypeAlias = SupportsIndex | Sequence[SupportsIndex]
"""A shape as users give it: an int (1-D) or a sequence of ints, numpy
integers included (zarr-python's ``ShapeLike``)."""

ChunksLike: TypeAlias = SupportsIndex | Sequence[SupportsIndex | None] | Literal["auto"] | None
"""``chunks=``: a chunk shape (an int for every dimension; ``-1`` or None in a
dimension: the whole length), or ``"auto"``/None for about 1 MiB chunks."""

ShardsLike: TypeAlias = SupportsIndex | Sequence[SupportsIndex] | Mapping[str, object] | None
"""``shards=``: a shard shape (multiples of the chunk shape; an int for every
dimension), zarr-python's ``{"shape": ..., "index_location": ...}``, or None (not sharded)."""

ArrayValueLike: TypeAlias = npt.ArrayLike | Sequence[object] | None
"""Values to write: a numpy array, anything ``numpy.asarray`` takes (a scalar,
nested lists, a zarrpy Array), a :class:`~zarrpy.RaggedArray`; for optional
(nullable) types None, alone or in a list, is a missing element."""

IntArrayLike: TypeAlias = Sequence[int] | Sequence[Sequence[int]] | npt.NDArray[np.integer[Any]]
"""Integer positions along one dimension (a list or an integer array)."""

MaskLike: TypeAlias = npt.NDArray[np.bool_] | Sequence[bool]
"""A boolean mask: True where an element is picked."""

BasicSelector: TypeAlias = SupportsIndex | slice | EllipsisType
"""One dimension of a basic selection: an integer, a slice or ``...``."""

BasicSelection: TypeAlias = BasicSelector | tuple[BasicSelector, ...]
"""Integers and slices, numpy's basic indexing (zarr-python's ``BasicSelection``)."""

Selector: TypeAlias = BasicSelector | IntArrayLike | MaskLike
"""One dimension of any selection."""

Selection: TypeAlias = Selector | tuple[Selector, ...]
"""Any selection ``Array.__getitem__`` and its ``get_*_selection`` methods
take: basic, orthogonal (``oindex``), coordinate, mask and vectorized
(``vindex``) selections (zarr-python's ``Selection``)."""

BytesLike: TypeAlias = "bytes | bytearray | memoryview | np.ndarray"
"""Stored bytes as readers hand them over: ``bytes``, or a memoryview or
numpy ``uint8`` array over a scratch buffer or a merged read (see
:mod:`zarrpy.core.scratch`)."""
