"""Page-aligned memory, so that copies do not suffer 4K aliasing.

numpy's large allocations start 16 bytes into a page (malloc's header of an
mmap'ed block). A copy whose destination lies 8 to 31 bytes past its
source, modulo the page size, runs at a fraction of the usual speed on x86
(4K aliasing: each load waits on a store to an address with the same low 12
bits). Reading a file from the page cache (page-aligned) into such a buffer
took three times as long as into an aligned one, and a ``memcpy`` between
two buffers so placed over ten times as long.

So the scratch buffers that files are read and chunks decoded into start on
a page (:func:`aligned_empty`), and one copied into an array starts at the
same place in its page as that array (:func:`page_offset`). Results are
left as numpy allocates them: aligning them measured no difference, since
copies into a large result run at memory speed either way.
"""

from __future__ import annotations

import numpy as np

PAGE_NBYTES = 4096
"""Alignment of the buffers made here (the usual page size)."""


def aligned_empty(nbytes: int, alignment: int = PAGE_NBYTES) -> np.ndarray:
    """An uninitialised ``uint8`` array of ``nbytes`` whose data starts at a
    multiple of ``alignment`` bytes (a power of two)."""
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    start = -raw.ctypes.data & (alignment - 1)
    return raw[start : start + nbytes]


def page_offset(like: object) -> int:
    """Where ``like``'s data starts within its page (0 for anything but a
    numpy array): a buffer starting there too is copied into ``like`` at
    full speed."""
    if isinstance(like, np.ndarray):
        return like.ctypes.data & (PAGE_NBYTES - 1)
    return 0


__all__ = ["PAGE_NBYTES", "aligned_empty", "page_offset"]
