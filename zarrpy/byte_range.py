"""Byte-range requests shared by stores and partial decoders.

Frozen, slotted value types (after zarr-python's ``ByteRequest``):
``RangeRequest(start, end)`` is ``[start, end)``, ``OffsetRequest(offset)`` is
``[offset, EOF)`` and ``SuffixRequest(length)`` the last ``length`` bytes.
``None`` everywhere means "the whole value".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True, slots=True)
class RangeRequest:
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid byte range [{self.start}, {self.end})")


@dataclass(frozen=True, slots=True)
class OffsetRequest:
    offset: int

    def __post_init__(self) -> None:
        if self.offset < 0:
            raise ValueError(f"invalid byte offset {self.offset}")


@dataclass(frozen=True, slots=True)
class SuffixRequest:
    length: int

    def __post_init__(self) -> None:
        if self.length < 0:
            raise ValueError(f"invalid suffix length {self.length}")


ByteRequest: TypeAlias = RangeRequest | OffsetRequest | SuffixRequest


def slice_bytes(value: bytes, request: ByteRequest | None) -> bytes:
    """Apply a request to a whole in-memory value (clamped like a file read)."""
    if request is None:
        return value
    if isinstance(request, RangeRequest):
        return value[request.start : request.end]
    if isinstance(request, OffsetRequest):
        return value[request.offset :]
    if isinstance(request, SuffixRequest):
        return value[max(0, len(value) - request.length) :] if request.length else b""
    raise TypeError(f"not a byte request: {request!r}")


__all__ = ["ByteRequest", "OffsetRequest", "RangeRequest", "SuffixRequest", "slice_bytes"]
