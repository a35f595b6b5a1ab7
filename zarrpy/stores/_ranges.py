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

from typing import Hashable

from ..core.byte_range import ByteRequest, ObjectRead, OffsetRequest, RangeRequest, SuffixRequest


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


def cut(data: bytes, first: int, size: int, request: ByteRequest | None) -> bytes:
    """``request``'s bytes (clamped to ``size``) from ``data``, which holds
    the object's bytes from ``first`` on (the whole object when a server
    ignored ``Range``); a ``ValueError`` when they are not all there."""
    if is_empty(request):
        return b""
    start, end = clamp(request, size)
    if start >= end:
        return b""
    lo, hi = start - first, end - first
    if lo < 0 or hi > len(data):
        raise ValueError(f"the answer holds bytes [{first}, {first + len(data)}) of {size}, "
                         f"not the requested [{start}, {end})")
    return data if lo == 0 and hi == len(data) else data[lo:hi]


def strong_etag(etag: str | None) -> str | None:
    """An ETag usable as a version: strong ones only (``If-Match`` compares
    strongly, so a weak tag would never match)."""
    return etag if etag and not etag.startswith("W/") else None


def versioned_answer(data: bytes, first: int, size: int, version: Hashable | None,
                     request: ByteRequest | None, if_match: Hashable | None) -> ObjectRead:
    """The :class:`~zarrpy.core.byte_range.ObjectRead` of an answer (bytes
    from ``first`` on, see :func:`cut`), or a changed one when the answer is
    of another version than ``if_match`` (a backend that did not check it,
    or told no version: then the match cannot be confirmed)."""
    if if_match is not None and version != if_match:
        return ObjectRead(None, size, version)
    return ObjectRead(cut(data, first, size, request), size, version)


__all__ = ["clamp", "cut", "is_empty", "strong_etag", "trim", "versioned_answer"]
