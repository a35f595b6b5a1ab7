"""Byte-request edge cases shared by the stores over remote backends.

Every zarrpy store answers a request as a file read would: a range past the
end is clamped, a start at or past the end gives ``b""``, a suffix longer than
the value is the whole value. Backends differ (HTTP answers ``416`` for a
start past the end, object_store refuses empty ranges, a server may ignore the
``Range`` header). The fsspec, obstore and zarr-python adapters use these
helpers to send a backend only the requests it answers, and to repair an
answer that does not match the request.
"""

from __future__ import annotations

from ..core.byte_range import ByteRequest, OffsetRequest, RangeRequest, SuffixRequest


def is_empty(request: ByteRequest | None) -> bool:
    """Whether ``request`` asks for no bytes (an empty range, a zero suffix):
    the answer is ``b""`` when the value exists, and only existence needs asking."""
    return (isinstance(request, RangeRequest) and request.start == request.end) or (
        isinstance(request, SuffixRequest) and request.length == 0
    )


def trim(data: bytes, request: ByteRequest | None) -> bytes:
    """Cut ``request`` out of an answer longer than it asked for.

    A server that ignores the ``Range`` header answers with the whole value;
    when the answer is longer than what was asked for, it can only be the
    whole value.
    """
    if isinstance(request, RangeRequest) and len(data) > request.end - request.start:
        return data[request.start : request.end]
    if isinstance(request, SuffixRequest) and len(data) > request.length:
        return data[len(data) - request.length :]
    return data


def clamp(request: ByteRequest | None, nbytes: int) -> tuple[int, int]:
    """``[start, end)`` of ``request`` within a value of ``nbytes`` bytes
    (``start >= end``: nothing to read)."""
    if request is None:
        return 0, nbytes
    if isinstance(request, RangeRequest):
        return request.start, min(request.end, nbytes)
    if isinstance(request, OffsetRequest):
        return request.offset, nbytes
    if isinstance(request, SuffixRequest):
        return max(0, nbytes - request.length), nbytes
    raise TypeError(f"not a byte request: {request!r}")


__all__ = ["clamp", "is_empty", "trim"]
