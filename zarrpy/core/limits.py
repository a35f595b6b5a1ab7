"""Limits that keep hostile metadata from costing unbounded time or memory.

Metadata states shapes and chunk shapes; a reader that believes any number
allocates terabytes, overflows int64 or hits numpy's own limits with a
foreign exception. These limits are checked when an array is opened (and
created), with :class:`~zarrpy.errors.MetadataError` naming the field:

- at most :data:`MAX_NDIM` dimensions (numpy's own maximum);
- every length, and the number of elements, below 2**63 (int64);
- one chunk's decoded size (the read unit: an inner chunk of a shard) at
  most :func:`max_chunk_nbytes` for its kind.

``ZARRPY_MAX_CHUNK_NBYTES`` (a positive integer of bytes, read at each use)
is the most one chunk may decode to. Unset, it is 4 GiB for fixed-size
types, whose chunk size the metadata states exactly, and 256 MiB of element
bytes for variable-length types (strings, bytes, ragged), where nothing
states it and a small compressed frame could claim gigabytes.
"""

from __future__ import annotations

import math
import os
from typing import Sequence

from ..errors import MetadataError

MAX_NDIM = 64
"""numpy's maximum number of dimensions."""

MAX_LENGTH = 2**63 - 1
"""The largest length or element count an int64 index can address."""

ENV_VAR = "ZARRPY_MAX_CHUNK_NBYTES"
"""The environment variable that sets the most bytes one chunk may decode to."""
DEFAULT_MAX_FIXED_CHUNK_NBYTES = 4 << 30
"""Without :data:`ENV_VAR`: the most a chunk of a fixed-size type may decode to (4 GiB)."""
DEFAULT_MAX_VARIABLE_CHUNK_NBYTES = 256 << 20
"""Without :data:`ENV_VAR`: the most element bytes a chunk of a variable-length
type may decode to (256 MiB): nothing in its metadata states its size."""


def max_chunk_nbytes(*, variable: bool) -> int:
    """The most bytes one chunk may decode to: ``ZARRPY_MAX_CHUNK_NBYTES``
    when set, else 4 GiB (fixed-size types) or 256 MiB (variable-length).

    Raises MetadataError if the variable is set to anything but a positive
    integer: a limit meant to be raised must not silently fall back.
    """
    env = os.environ.get(ENV_VAR, "").strip()
    if not env:
        return DEFAULT_MAX_VARIABLE_CHUNK_NBYTES if variable else DEFAULT_MAX_FIXED_CHUNK_NBYTES
    try:
        value = int(env)
    except ValueError:
        value = 0
    if value <= 0:
        raise MetadataError(f"environment variable {ENV_VAR}={env!r}: expected a positive number of bytes")
    return value


def check_shape(shape: Sequence[int], field: str) -> None:
    """MetadataError unless ``shape`` has at most :data:`MAX_NDIM` dimensions
    and its lengths and element count fit int64."""
    if len(shape) > MAX_NDIM:
        raise MetadataError(f"{field}: {len(shape)} dimensions; at most {MAX_NDIM} are supported (numpy's limit)")
    for n in shape:
        if n > MAX_LENGTH:
            raise MetadataError(f"{field}: length {n} does not fit a 64-bit index (at most 2**63 - 1)")
    if math.prod(shape) > MAX_LENGTH:
        raise MetadataError(f"{field}: {list(shape)} holds {math.prod(shape)} elements, more than 2**63 - 1")


def check_chunk_nbytes(chunk_shape: Sequence[int], itemsize: int | None, field: str) -> None:
    """MetadataError when one chunk of ``chunk_shape`` decodes to more than
    the ceiling (``itemsize`` None: a variable-length type, 8 bytes an
    element for its offsets)."""
    variable = itemsize is None
    nbytes = math.prod(chunk_shape) * (8 if itemsize is None else max(itemsize, 1))
    ceiling = max_chunk_nbytes(variable=variable)
    if nbytes > ceiling:
        raise MetadataError(
            f"{field}: a chunk of {list(chunk_shape)} decodes to {nbytes} bytes, more than the "
            f"{ceiling}-byte ceiling; set {ENV_VAR} to allow larger chunks"
        )


__all__ = [
    "DEFAULT_MAX_FIXED_CHUNK_NBYTES", "DEFAULT_MAX_VARIABLE_CHUNK_NBYTES", "ENV_VAR", "MAX_LENGTH", "MAX_NDIM",
    "check_chunk_nbytes", "check_shape", "max_chunk_nbytes",
]
