"""The partial decoder of array-to-array codecs that map each element alone.

``cast_value``, ``scale_offset`` and ``bitround`` decode every element from
that element only, so a selection of the decoded chunk is the same selection
of the encoded chunk, decoded: the decoder below reads only what it needs,
and this one maps the elements it hands back.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..core.array_bytes import ArrayBytes
from .partial import ArrayPartialDecoder, ChunkSelection


class ElementwiseDecoder(ArrayPartialDecoder):
    """Selections from ``input`` (the encoded chunk's decoder), each mapped by ``decode``."""

    __slots__ = ("input", "decode")

    def __init__(self, input: ArrayPartialDecoder, decode: Callable[[ArrayBytes], ArrayBytes]):
        self.input, self.decode = input, decode

    def decode_selections(self, selections: Sequence[ChunkSelection]) -> list[ArrayBytes | None]:
        return [None if part is None else self.decode(part) for part in self.input.decode_selections(selections)]


__all__ = ["ElementwiseDecoder"]
