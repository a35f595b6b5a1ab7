"""transpose array-to-array codec (core): permutes the chunk's dimensions.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/
V3 name: ``transpose``; V2: ``order: "F"`` maps to the reversed order.

Encoding is ``numpy.transpose(chunk, order)``; decoding applies the inverse
permutation. Variable-length chunks are permuted element-wise.

>>> TransposeCodec.from_config({"order": [1, 0]}).to_config()
{'order': [1, 0]}
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..errors import CodecError
from ._config import check_keys
from .abc import ArrayToArrayCodec, ChunkSpec
from .partial import PARTIAL, ArrayPartialDecoder, ChunkSelection, CodecCapabilities


class TransposeCodec(ArrayToArrayCodec):
    """Permute dimensions: encoded shape[i] = decoded shape[order[i]]."""

    name = "transpose"
    __slots__ = ("order",)

    def __init__(self, order: Sequence[int]):
        if not isinstance(order, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in order):
            raise CodecError(f"codec 'transpose': 'order' must be a list of integers, got {order!r}")
        order = tuple(order)
        if sorted(order) != list(range(len(order))):
            raise CodecError(f"codec 'transpose': 'order' {list(order)} is not a permutation")
        self.order: tuple[int, ...] = order

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> TransposeCodec:
        config = check_keys(cls.name, config, required=("order",))
        return cls(config["order"])

    def to_config(self) -> dict[str, Any]:
        return {"order": list(self.order)}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if len(self.order) != len(spec.shape):
            raise CodecError(
                f"codec 'transpose': 'order' has {len(self.order)} entries but the chunk has "
                f"{len(spec.shape)} dimensions"
            )
        return ChunkSpec(tuple(spec.shape[i] for i in self.order), spec.dtype, spec.fill_value)

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        return _permute(chunk, self.order)

    def decode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        return _permute(chunk, tuple(int(i) for i in np.argsort(self.order)))

    @property
    def capabilities(self) -> CodecCapabilities:
        return PARTIAL

    def partial_decoder(self, input: ArrayPartialDecoder, spec: ChunkSpec) -> ArrayPartialDecoder:
        """A selection of the decoded chunk is the same selection, permuted,
        of the encoded one: ask the decoder below for that, then permute back."""
        return _TransposedDecoder(input, self.order)


class _TransposedDecoder(ArrayPartialDecoder):
    __slots__ = ("input", "order", "inverse")

    def __init__(self, input: ArrayPartialDecoder, order: tuple[int, ...]):
        self.input, self.order = input, order
        self.inverse = tuple(int(i) for i in np.argsort(order))

    def decode_selections(self, selections: Sequence[ChunkSelection]) -> list[ArrayBytes | None]:
        encoded = [tuple(selection[i] for i in self.order) for selection in selections]
        return [None if part is None else _permute(part, self.inverse) for part in self.input.decode_selections(encoded)]


def _permute(chunk: ArrayBytes, order: tuple[int, ...]) -> ArrayBytes:
    shape = tuple(chunk.shape[i] for i in order)
    if chunk.is_fixed:
        return ArrayBytes.from_array(np.transpose(chunk.array, order))
    flat = np.arange(chunk.size, dtype=np.int64).reshape(chunk.shape).transpose(order).reshape(-1)
    return chunk.take(flat, shape)


__all__ = ["TransposeCodec"]
