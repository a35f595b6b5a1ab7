"""Reads of optional strings into value/flag pairs: no Python object per element.

Inside the pipeline an optional (``zarrs.optional``) string element is its
UTF-8 bytes plus a validity byte, held as a ``bytes`` object (see
:mod:`zarrpy.core.dtypes.optional`); a read's result is a masked
``StringDType`` array. Building that from one object per element costs
about as much as the rest of the read several times over, so reads of
optional strings (one optional level) use another buffer: a StringDType
array of the selection's shape plus a last axis of 2, holding per element
its value (``""`` when missing) and a flag (``""`` present, ``"\\x00"``
missing). The ``zarrs.optional`` codec decodes a whole chunk straight into
its box of that buffer (values and flags in one compiled pass, see
:meth:`OptionalCodec.decode_into`); other chunks (parts of shards, other
codec chains) convert through :meth:`PairedStrings.to_numpy`. The result
is a masked array whose data is the values column, a view: no copy of the
strings.

Writes, the block API and cached reads keep the element form of
:class:`~zarrpy.pipeline.values.ElementForm`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import vlen_kernels
from ..core._typing import Shape
from ..core.array_bytes import ArrayBytes
from ..core.dtypes.optional import split
from ..core.dtypes.text import STRING_DTYPE
from .values import ElementForm, without_validity

MISSING_FLAG = "\x00"
"""The flag of a missing element (present ones have ``""``)."""


class PairedStrings:
    """The read form of optional strings (see the module docstring): what
    :class:`~.chunk_io.ChunkIO` reads use in place of the element form."""

    __slots__ = ("form",)
    element_shape = (2,)
    """The buffer's extra last axis: value, flag."""
    reads_into_buffers = False
    decodes_into_boxes = True

    def __init__(self, form: ElementForm):
        self.form = form

    @property
    def data_type(self) -> Any:
        """The array's data type (the optional string type)."""
        return self.form.data_type

    @property
    def dtype(self) -> np.dtype:
        """The buffer's dtype: StringDType."""
        return STRING_DTYPE

    def empty(self, shape: Shape) -> np.ndarray:
        """A new buffer for a selection of ``shape``."""
        return np.empty((*tuple(shape), 2), dtype=STRING_DTYPE)

    def to_numpy(self, chunk: ArrayBytes) -> np.ndarray:
        """The value/flag pairs of a decoded chunk of optional elements."""
        plain, present = without_validity(chunk)
        out = self.empty(chunk.shape)
        vlen_kernels.strings_from_offsets(plain.offsets, plain.data, out[..., 0])
        flags = out[..., 1]
        flags[...] = ""
        flags[~present.reshape(chunk.shape)] = MISSING_FLAG  # a str: a numpy "U" array would drop the NUL
        return out

    def fill_block(self, shape: Shape) -> np.ndarray:
        """The pair of the fill value (broadcasts over any box)."""
        value, present = split(self.form.data_type, self.form.fill)
        return np.array([value if present else "", "" if present else MISSING_FLAG], dtype=STRING_DTYPE)

    def missing(self, out: np.ndarray) -> np.ndarray:
        """Bool of the selection's shape: where an element is missing."""
        return vlen_kernels.nonempty(out[..., 1])

    def result(self, out: np.ndarray) -> np.ma.MaskedArray:
        """The masked array of a read (its data a view of the values)."""
        return np.ma.MaskedArray(out[..., 0], mask=self.missing(out))

    def scalar(self, out: np.ndarray) -> Any:
        """One element's result: its value or ``numpy.ma.masked``."""
        return self.result(out)[()]

    def validity(self, out: np.ndarray) -> np.ndarray:
        """:func:`~.values.optional_validity` of a read: one level."""
        present: np.ndarray = ~self.missing(out)
        return present[..., np.newaxis]


__all__ = ["MISSING_FLAG", "PairedStrings"]
