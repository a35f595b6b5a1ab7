"""Per-thread scratch buffers that readers and decoders reuse instead of allocating.

A chunk read or decoded only to be decoded or copied on does not need a
buffer of its own: using a buffer the thread already has saves an
allocation per chunk and, above all, the page faults of touching fresh
memory (a 512 KiB chunk is 128 pages; worker threads' malloc arenas give
such blocks back to the kernel and fault them in again on every chunk).

:func:`scratch` lends the calling thread a buffer for the duration of a
``with`` block. Nested blocks (a shard decoding its inner chunks) get
distinct buffers. Buffers up to :data:`KEEP_NBYTES` are kept for reuse,
at most :data:`KEEP_COUNT` per thread; larger ones are plain allocations.

Every buffer starts on a page boundary, or at the place in a page that the
array it is copied into starts at (:mod:`zarrpy.core.aligned` says why).
"""

from __future__ import annotations

import threading

import numpy as np

from .aligned import PAGE_NBYTES, aligned_empty

KEEP_NBYTES = 64 << 20
"""Largest buffer a thread keeps for reuse (64 MiB)."""
KEEP_COUNT = 4
"""Most buffers a thread keeps."""

_local = threading.local()


def _free_list() -> list[np.ndarray]:
    free: list[np.ndarray] | None = getattr(_local, "free", None)
    if free is None:
        free = _local.free = []
    return free


class ScratchLease:
    """A scratch buffer lent for one ``with`` block (see :func:`scratch`);
    a plain class, since a generator-based context manager costs several
    microseconds more per chunk."""

    __slots__ = ("nbytes", "offset", "_buf")

    def __init__(self, nbytes: int, offset: int = 0):
        self.nbytes, self.offset = nbytes, offset
        self._buf: np.ndarray | None = None

    def __enter__(self) -> np.ndarray:
        need = self.nbytes + self.offset
        free = _free_list()
        # The most recently returned buffer that fits: nested leases (a file
        # read, then its decoding) get back the same buffers, still in the
        # cache, in the same roles chunk after chunk.
        for i in range(len(free) - 1, -1, -1):
            if free[i].size >= need:
                buf = free.pop(i)
                break
        else:
            buf = aligned_empty(_capacity(self.nbytes))
        self._buf = buf
        return buf[self.offset : need]

    def __exit__(self, *exc: object) -> None:
        buf, self._buf = self._buf, None
        if buf is not None and buf.size <= KEEP_NBYTES + PAGE_NBYTES:
            free = _free_list()
            free.append(buf)
            if len(free) > KEEP_COUNT:  # forget the smallest (by position: arrays do not compare)
                free.pop(min(range(len(free)), key=lambda i: free[i].size))


def _capacity(nbytes: int) -> int:
    """Size of a new buffer for ``nbytes``: room for any offset in a page,
    rounded up to a power of two when it may be kept, so that a buffer
    serves the next chunks of about that size (compressed chunks differ a
    little in size) instead of each needing a new one."""
    need = max(nbytes, 1) + PAGE_NBYTES
    rounded = 1 << (need - 1).bit_length()
    return rounded if rounded <= KEEP_NBYTES + PAGE_NBYTES else need


def scratch(nbytes: int, offset: int = 0) -> ScratchLease:
    """A writable, C-contiguous ``uint8`` array of ``nbytes``, the calling
    thread's to use inside the ``with`` block only (its contents are
    undefined at the start and reused afterwards). Its data starts
    ``offset`` bytes (below :data:`PAGE_NBYTES`) into a page."""
    return ScratchLease(nbytes, offset)


__all__ = ["KEEP_COUNT", "KEEP_NBYTES", "ScratchLease", "scratch"]
