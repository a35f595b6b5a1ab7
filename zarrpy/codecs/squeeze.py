"""zarrs.squeeze array-to-array codec: drops the dimensions of size 1.

Spec: https://codec.zarrs.dev/array_to_array/squeeze (zarrs' own codec)
V3 name: ``zarrs.squeeze``; no V2 form. No configuration: writes
``{"name": "zarrs.squeeze"}`` and also reads ``"configuration": {}``.

The encoded chunk holds the same elements in the same order without the
size-1 dimensions (a chunk of shape ``(4, 1, 3)`` is stored as ``(4, 3)``).

Partial reads pass through: a selection of the decoded chunk is the same
selection of the encoded one without the size-1 dimensions, so the decoder
below reads only what it needs.

>>> SqueezeCodec.from_config({}).to_json()
{'name': 'zarrs.squeeze'}
>>> SqueezeCodec().resolve_shape((4, 1, 3, 1))
(4, 3)
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..core._typing import Shape
from ..core.array_bytes import ArrayBytes
from ..core.selection import dim_indices
from ._config import check_keys
from .abc import ChunkSpec
from .partial import PARTIAL, ArrayPartialDecoder, ChunkSelection, CodecCapabilities
from .reshape import ShapeOnlyCodec


class SqueezeCodec(ShapeOnlyCodec):
    """Drop the size-1 dimensions of a chunk."""

    name = "zarrs.squeeze"
    __slots__ = ()

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> SqueezeCodec:
        check_keys(cls.name, config)
        return cls()

    def to_config(self) -> None:
        return None

    @staticmethod
    def resolve_shape(decoded: Shape) -> tuple[int, ...]:
        """``decoded`` without its dimensions of size 1."""
        return tuple(s for s in decoded if s != 1)

    @property
    def capabilities(self) -> CodecCapabilities:
        return PARTIAL

    def partial_decoder(self, input: ArrayPartialDecoder, spec: ChunkSpec) -> ArrayPartialDecoder:
        return _SqueezedDecoder(input, tuple(spec.shape))


class _SqueezedDecoder(ArrayPartialDecoder):
    """Asks the decoder below for the selection without the size-1
    dimensions, then puts them back (a size-1 dimension may be selected 0, 1
    or several times: ``[0, 0]``)."""

    __slots__ = ("input", "shape", "kept")

    def __init__(self, input: ArrayPartialDecoder, shape: tuple[int, ...]):
        self.input, self.shape = input, shape
        self.kept = tuple(i for i, s in enumerate(shape) if s != 1)

    def decode_selections(self, selections: Sequence[ChunkSelection]) -> list[ArrayBytes | None]:
        encoded = [tuple(sel[i] for i in self.kept) for sel in selections]
        parts = self.input.decode_selections(encoded)
        return [None if part is None else self._expand(part, sel) for part, sel in zip(parts, selections)]

    def _expand(self, part: ArrayBytes, selection: ChunkSelection) -> ArrayBytes:
        picked = dim_indices(selection, self.shape)
        out_shape = tuple(len(p) for p in picked)
        # Element i of the result comes from `part` at the position of its
        # kept coordinates; a squeezed dimension only ever contributes index 0.
        positions = np.arange(part.size, dtype=np.int64).reshape(
            tuple(s if i in self.kept else 1 for i, s in enumerate(out_shape))
        )
        ix = tuple(np.arange(n) if i in self.kept else np.zeros(n, dtype=np.int64) for i, n in enumerate(out_shape))
        flat = positions[np.ix_(*ix)] if ix else positions
        return part.take(np.asarray(flat).reshape(-1), out_shape)


__all__ = ["SqueezeCodec"]
