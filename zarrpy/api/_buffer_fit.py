"""Which growable buffer holds an array's rows, and reading one selection into one.

Shared by :meth:`Array.read_into` and :mod:`zarrpy.api._iterate`
(``iter_rows``, ``concat``). It sees an array only through its public
attributes and ``read``, so it does not import the Array class.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core._typing import Shape
from ..errors import SelectionError
from ._buffers import GrowableArray, GrowableRagged

Buffer = GrowableArray | GrowableRagged


def buffer_kind(array: Any) -> str:
    """How an array's elements are buffered: "fixed", "str", "bytes" or "ragged"."""
    if array.serializer.ragged_dtype() is not None:
        return "ragged"
    if array.dtype.kind == "T":
        return "str"
    if array.dtype.kind == "O":
        return "bytes"
    return "fixed"


def element_dtype(array: Any) -> np.dtype:
    """The dtype a buffer of this array's elements has."""
    ragged = array.serializer.ragged_dtype()
    dtype: np.dtype = np.dtype(ragged if ragged is not None else array.dtype)
    return dtype


def describe(array: Any) -> str:
    """The element type in words, for messages: ``dtype int32``, ``strings`` ..."""
    kind = buffer_kind(array)
    if kind == "fixed":
        return f"dtype {array.dtype}"
    return f"ragged {element_dtype(array)} vectors" if kind == "ragged" else {"str": "strings", "bytes": "bytes"}[kind]


def check_buffer(buf: Any, array: Any, label: str, row_shape: Shape) -> None:
    """SelectionError naming both sides when ``buf`` cannot hold rows of
    ``row_shape`` read from ``array`` (``label`` names it)."""
    kind = buffer_kind(array)
    if isinstance(buf, GrowableArray):
        if kind != "fixed":
            raise SelectionError(f"{label} has {describe(array)}: read it into a GrowableRagged, not {buf!r}")
        if buf.dtype != array.dtype:
            raise SelectionError(f"buffer dtype {buf.dtype} does not match the dtype {array.dtype} of {label}")
        if buf.shape_tail != row_shape:
            raise SelectionError(
                f"buffer row shape {buf.shape_tail} does not match the row shape {row_shape} read from {label}"
            )
    elif isinstance(buf, GrowableRagged):
        if kind == "fixed":
            raise SelectionError(f"{label} has {describe(array)}: read it into a GrowableArray, not {buf!r}")
        if buf.kind != kind or (kind == "ragged" and buf.dtype != element_dtype(array)):
            raise SelectionError(f"{buf!r} cannot hold the {describe(array)} of {label}")
        if row_shape:
            raise SelectionError(
                f"a GrowableRagged holds one element per row, but rows read from {label} have shape {row_shape}"
            )
    else:
        raise TypeError(f"buffer must be a GrowableArray or GrowableRagged, got {type(buf).__name__}")


def new_buffer(array: Any, label: str, row_shape: Shape) -> Buffer:
    """An empty buffer for rows of ``row_shape`` of ``array``."""
    kind = buffer_kind(array)
    if kind == "fixed":
        return GrowableArray(array.dtype, shape_tail=row_shape)
    if row_shape:
        raise SelectionError(
            f"{label} has {describe(array)} with row shape {row_shape}; a GrowableRagged holds one element "
            "per row (select one position on the trailing axes)"
        )
    return GrowableRagged(element_dtype(array) if kind == "ragged" else kind)


def read_into(array: Any, buf: Buffer, selection: Any, shape: Shape, label: str) -> Buffer:
    """Read ``array[selection]`` (of result ``shape``) into ``buf``; see
    :meth:`zarrpy.Array.read_into`."""
    if not shape:
        raise SelectionError(
            f"read_into: selection {selection!r} of {label} picks one element, not rows; "
            "keep at least one axis (e.g. a slice)"
        )
    check_buffer(buf, array, label, shape[1:])
    if isinstance(buf, GrowableArray):
        old = buf.size
        buf.resize(shape[0])
        try:
            array.read(selection, out=buf.nda)
        except BaseException:
            buf.resize(old)
            raise
    else:
        rows = array[selection]  # read before clearing: a failed read leaves buf as it was
        buf.clear()
        buf.extend(rows)
    return buf


__all__ = ["Buffer", "buffer_kind", "check_buffer", "describe", "element_dtype", "new_buffer", "read_into"]
