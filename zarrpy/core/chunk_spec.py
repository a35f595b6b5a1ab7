"""What every codec is told about a chunk: its shape, data type and fill value.

A core type, since the layers above codecs (the pipeline, the API) build one
per array and the codecs only read it; :mod:`zarrpy.codecs.abc` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._typing import Shape
from .dtypes import DataType


@dataclass(frozen=True, slots=True)
class ChunkSpec:
    """What a codec needs to know about a chunk: shape, type, fill value.

    ``encoded_nbytes_bound`` is set by an array-to-bytes codec whose encoded
    form can be larger than the chunk's elements (zfp at a high fixed rate):
    the most bytes it writes for this spec, so that the bytes-to-bytes
    decoders after it accept frames of that size (:mod:`zarrpy.codecs._limits`).
    """

    shape: Shape
    dtype: DataType
    fill_value: Any
    encoded_nbytes_bound: int | None = field(default=None, compare=False)

    @property
    def size(self) -> int:
        """Number of elements in the chunk (the product of ``shape``)."""
        n = 1
        for s in self.shape:
            n *= s
        return n


__all__ = ["ChunkSpec"]
