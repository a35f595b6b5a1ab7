"""Capped streaming decompression: the one loop every streaming decoder runs.

A decoder hands :func:`read_capped` a ``read(budget)`` function that returns
the next piece of decoded output (b"" at the end). The loop keeps a running
total and stops with :class:`~zarrpy.errors.ChunkDecodeError` as soon as it
passes the limit (:mod:`zarrpy.codecs._limits`), so memory follows the bound,
never what a frame claims or what a bomb expands to.

:class:`MemberReader` is such a ``read`` for the standard library's
decompressor objects (``zlib``, ``bz2``, ``lzma``): they take a
``max_length`` and report ``eof`` and ``unused_data``, one object per member
(gzip and bz2 files and xz streams may be concatenated). ``zstd`` has its own
reader (:mod:`zarrpy.codecs.zstd`), since its decompressor takes no
``max_length``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

from ..errors import ChunkDecodeError
from ._limits import too_large
from .abc import ChunkSpec

_PIECE_NBYTES = 1 << 22
"""Most output one ``decompress`` call may make (4 MiB): small enough that a
refused chunk costs at most the limit, large enough to keep calls few."""

After = Literal["ignore", "members", "members_or_zeros"]
"""What may follow the first member: anything (numcodecs' zlib ignores it),
more members only (bz2, xz), or more members then zero padding (gzip)."""


class Decompressor(Protocol):
    """What :class:`MemberReader` needs of a ``zlib``/``bz2``/``lzma`` decompressor."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: bytes, max_length: int, /) -> bytes: ...


def read_capped(codec: str, read: Callable[[int], bytes], limit: int, spec: ChunkSpec) -> bytes:
    """All of ``read``'s output, or ChunkDecodeError once it passes ``limit``.

    ``read(budget)`` returns the next piece, ideally at most ``budget``
    bytes (``limit`` + 1 minus what came before: one byte more than allowed
    tells "too large" apart from "exactly at the limit"); a reader that can
    overshoot must keep the overshoot small.
    """
    parts: list[bytes] = []
    total = 0
    while True:
        part = read(limit + 1 - total)
        if not part:
            break
        total += len(part)
        if total > limit:
            raise ChunkDecodeError(too_large(codec, limit, spec))
        parts.append(part)
    if len(parts) == 1:
        return parts[0]
    return b"".join(parts)


class MemberReader:
    """``read(budget)`` over the members of ``data`` (see :func:`read_capped`).

    ``new`` makes a decompressor for one member; ``errors`` are the
    exceptions it raises on corrupt input, which become ChunkDecodeErrors
    naming ``codec``. A member that does not end is a truncated chunk.
    """

    __slots__ = ("_after", "_codec", "_d", "_errors", "_nbytes", "_new", "_pending")

    def __init__(
        self,
        codec: str,
        data: bytes,
        new: Callable[[], Decompressor],
        *,
        after: After,
        errors: tuple[type[Exception], ...],
    ):
        self._codec, self._nbytes, self._new, self._after, self._errors = codec, len(data), new, after, errors
        self._d: Decompressor | None = self._make()
        self._pending = data

    def __call__(self, budget: int) -> bytes:
        while self._d is not None:
            d = self._d
            if d.eof:
                self._next_member(d.unused_data)
                continue
            try:
                out = d.decompress(self._pending, max(1, min(budget, _PIECE_NBYTES)))
            except self._errors as exc:
                raise ChunkDecodeError(f"codec {self._codec!r}: corrupt data: {exc}") from None
            # zlib hands back what it did not read; bz2 and lzma keep it.
            self._pending = getattr(d, "unconsumed_tail", b"")
            if out:
                return out
            if not d.eof:
                raise ChunkDecodeError(
                    f"codec {self._codec!r}: truncated data ({self._nbytes} bytes; the stream does not end)"
                )
        return b""

    def _make(self) -> Decompressor:
        try:
            return self._new()
        except self._errors as exc:  # e.g. lzma: a filter chain it cannot decode
            raise ChunkDecodeError(f"codec {self._codec!r}: cannot decode: {exc}") from None

    def _next_member(self, rest: bytes) -> None:
        self._d = None
        if not rest or self._after == "ignore":
            return
        if rest[0] == 0 and self._after == "members_or_zeros":  # gzip(1) accepts zero padding
            if rest.count(0) != len(rest):
                raise ChunkDecodeError(f"codec {self._codec!r}: garbage after the zero padding")
            return
        self._d, self._pending = self._make(), rest


__all__ = ["MemberReader", "read_capped"]
