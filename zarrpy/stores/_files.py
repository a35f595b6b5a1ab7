"""Reading a LocalStore's files: one descriptor, its size, positioned reads.

An :class:`OpenFile` is a checked, opened regular file (see
``LocalStore._open_read``): its raw descriptor and the size one ``fstat``
gave. Reads go straight to the descriptor (no Python file object, which
would cost an ``fstat``, an ``ioctl`` and an ``lseek`` more per file):
``pread`` where the platform has it, so threads may share one open file,
else ``lseek`` and ``read``. A whole value is one read of its size, into a
new ``bytes`` or into a caller's buffer.

Sizes come from the ``fstat`` at open time: a value is replaced by renaming
a new file over it, never changed in place, so the open file keeps its size.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..core.byte_range import ByteRequest, span

HAS_PREAD = hasattr(os, "pread") and hasattr(os, "preadv")
"""Positioned reads (not on Windows): needed to share one descriptor between threads."""


RACY_NS = 2_000_000_000
"""A file modified less than this long ago (2 s) has no version yet."""


def file_version(st: os.stat_result) -> tuple[int, int, int, int] | None:
    """What identifies a file's content, from its ``fstat``: size, mtime (ns),
    inode and device; None while the file is younger than :data:`RACY_NS`.

    A write replaces the file by rename, but filesystems reuse inodes (ext4
    does, at once) and take mtimes from a coarse clock (a few ms), so two
    same-sized writes in quick succession can leave all four equal. As git
    does with its "racily clean" entries, a file that recent is not given a
    version: nothing read from it is kept, and a condition on an older
    version fails, since any later mtime differs from one over 2 s old."""
    if time.time_ns() - st.st_mtime_ns < RACY_NS:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


class OpenFile:
    """An open regular file of a store: ``fd`` and ``size``; a context manager that closes it."""

    __slots__ = ("fd", "size", "version")

    def __init__(self, fd: int, size: int, version: tuple[int, ...] | None = None):
        self.fd, self.size = fd, size
        self.version = version
        """What identifies the file's content (:func:`file_version` of the
        open descriptor's ``fstat``)."""

    def __enter__(self) -> OpenFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def read(self, request: ByteRequest | None) -> bytes:
        """``request`` of the file (ranges past the end are clamped, as a file read does)."""
        start, stop = self.span(request)
        return self.read_at(start, stop - start)

    def span(self, request: ByteRequest | None) -> tuple[int, int]:
        """``request`` as ``[start, stop)`` within the file."""
        return span(request, self.size)

    def read_at(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes at ``offset`` (fewer only where the file ends)."""
        if length <= 0:
            return b""
        parts: list[bytes] = []
        got = 0
        while got < length:
            piece = self._read(offset + got, length - got)
            if not piece:
                break
            if not parts and len(piece) == length:
                return piece  # the usual case: one read, no join
            parts.append(piece)
            got += len(piece)
        return b"".join(parts)

    def read_into(self, buf: Any) -> int:
        """Fill ``buf`` (a writable buffer) from the start of the file; the
        bytes read (fewer only when the file is shorter)."""
        view = memoryview(buf).cast("B")
        got = 0
        while got < len(view):
            if HAS_PREAD:
                n = os.preadv(self.fd, [view[got:]], got)
            else:
                piece = self._read(got, len(view) - got)
                n = len(piece)
                view[got : got + n] = piece
            if n == 0:
                break
            got += n
        return got

    def _read(self, offset: int, length: int) -> bytes:
        if HAS_PREAD:
            return os.pread(self.fd, length, offset)
        os.lseek(self.fd, offset, os.SEEK_SET)
        return os.read(self.fd, length)


__all__ = ["HAS_PREAD", "OpenFile", "file_version"]
