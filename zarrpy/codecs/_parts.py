"""Inner codec chains of array-to-bytes codecs that store a chunk in parts.

``zarrs.vlen`` (index + data) and ``zarrs.optional`` (mask + data) each run
their parts through a codec chain of their own; binding and decoding a part
report errors the same way: the outer codec, then the part.
"""

from __future__ import annotations

from ..core.array_bytes import ArrayBytes
from ..errors import ChunkDecodeError, CodecError
from .abc import ChunkSpec
from .chain import BoundChain, CodecChain


def bind_part(codec: str, field: str, chain: CodecChain, spec: ChunkSpec) -> BoundChain:
    """``chain`` bound to ``spec``; a CodecError names ``codec`` and its ``field``."""
    try:
        return chain.bind(spec)
    except CodecError as exc:
        raise CodecError(f"codec {codec!r}: {field!r}: {exc}") from None


def decode_part(codec: str, part: str, bound: BoundChain, encoded: bytes) -> ArrayBytes:
    """Decode one part; inner errors become ChunkDecodeErrors naming ``codec`` and ``part``."""
    try:
        return bound.decode(encoded)
    except ChunkDecodeError as exc:
        raise type(exc)(f"codec {codec!r}: {part}: {exc}") from None
    except CodecError as exc:
        raise ChunkDecodeError(f"codec {codec!r}: {part}: {exc}") from None


__all__ = ["bind_part", "decode_part"]
