"""Type aliases of zarrpy's public signatures, for code that type-checks its calls.

As ``numpy.typing`` does for numpy: each alias names what one kind of
argument takes, so a function that forwards to zarrpy can say so::

    from zarrpy.typing import DTypeLike, ShapeLike, StoreLike

    def make(store: StoreLike, shape: ShapeLike, dtype: DTypeLike) -> zarrpy.Array:
        return zarrpy.create_array(store, shape=shape, dtype=dtype)

The names follow zarr-python's where it has one (``StoreLike``,
``ShapeLike``, ``Selection``, ``FiltersLike``...). Each is defined in the
layer it belongs to and only re-exported here.
"""

from __future__ import annotations

from .codecs.user_forms import (
    CodecLike,
    CompressorsLike,
    FiltersLike,
    NumcodecsCodecLike,
    SerializerLike,
    ZarrPythonCodecLike,
)
from .core._typing import (
    JSON,
    ArrayValueLike,
    BasicSelection,
    BasicSelector,
    ChunkCoords,
    ChunksLike,
    IntArrayLike,
    MaskLike,
    Selection,
    Selector,
    Shape,
    ShapeLike,
    ShardsLike,
)
from .core.dtypes.data_type import DTypeLike
from .metadata.v3 import ChunkKeyEncodingLike
from .pipeline.synchronizer import NamedLock, Synchronizer
from .stores._store_like import FSMapLike, ObstoreStoreLike, StoreLike, ZarrPythonStoreLike

__all__ = [
    "JSON",
    "ArrayValueLike",
    "BasicSelection",
    "BasicSelector",
    "ChunkCoords",
    "ChunkKeyEncodingLike",
    "ChunksLike",
    "CodecLike",
    "CompressorsLike",
    "DTypeLike",
    "FSMapLike",
    "FiltersLike",
    "IntArrayLike",
    "MaskLike",
    "NamedLock",
    "NumcodecsCodecLike",
    "ObstoreStoreLike",
    "SerializerLike",
    "Selection",
    "Selector",
    "Shape",
    "ShapeLike",
    "ShardsLike",
    "StoreLike",
    "Synchronizer",
    "ZarrPythonCodecLike",
    "ZarrPythonStoreLike",
]
