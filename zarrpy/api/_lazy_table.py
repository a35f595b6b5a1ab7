"""VirtualTable: equal-length lazy arrays viewed as the fields of a table (issue 12).

An event table is a group of arrays with one row per event. Selecting rows
(``table[mask]``, ``table[a:b]``, ``table[indices]``) records ONE
:class:`~zarrpy.api._lazy_step.Step` that every field shares: the mask is
kept once, not once per field, and applied to a field only when that field
is materialised. ``table["pt"]`` is that field's VirtualArray, whose chain
ends in the shared steps.

>>> import numpy as np
>>> from zarrpy.api._lazy import VirtualArray
>>> x = np.arange(5)
>>> t = VirtualTable({"x": VirtualArray(lambda: x, (5,), x.dtype), "y": VirtualArray(lambda: x * 10, (5,), x.dtype)})
>>> sel = t[t["x"] % 2 == 0]
>>> len(sel), sel.fields, sel.to_dict()["y"].tolist()
(3, ['x', 'y'], [0, 20, 40])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, overload

import numpy as np

from ..core._typing import IntArrayLike, MaskLike
from ..errors import SelectionError
from ..pipeline.io_pool import map_io
from ._lazy import VirtualArray
from ._lazy_step import ROW_KINDS, Step


class VirtualTable:
    """Fields (VirtualArrays of equal first-axis length) and the row
    selections they share.

    Build one with :func:`zarrpy.virtual` over a group, or from a mapping of
    name -> VirtualArray. Iterating gives the field names. Pickles when its
    fields do (fields over stored arrays always do).

    Raises SelectionError, naming the fields and their lengths, when the
    fields are 0-d or differ in first-axis length.
    """

    def __init__(self, fields: Mapping[str, VirtualArray], *, steps: tuple[Step, ...] = ()):
        roots = dict(fields)
        for name, va in roots.items():
            if not isinstance(va, VirtualArray):
                raise TypeError(f"field {name!r} is a {type(va).__name__}, not a VirtualArray")
        zero_d = [name for name, va in roots.items() if not va.ndim]
        if zero_d:
            raise SelectionError(f"a table's fields need a first axis; 0-d: {zero_d}")
        lengths = {name: va.shape[0] for name, va in roots.items()}
        if len(set(lengths.values())) > 1:
            raise SelectionError(f"a table's fields must have one length (first axis), got {lengths}")
        self._roots = roots
        self._steps = tuple(steps)
        length = next(iter(lengths.values()), 0)
        for step in self._steps:
            if step.kind not in ROW_KINDS or step.n != length:
                raise SelectionError(f"{step!r} does not select rows of a table of {length} rows")
            assert step.length is not None
            length = step.length
        self._length = length

    @property
    def fields(self) -> list[str]:
        """The field names, in order."""
        return list(self._roots)

    @property
    def steps(self) -> tuple[Step, ...]:
        """The row selections every field shares, first first."""
        return self._steps

    @property
    def slices(self) -> tuple[Any, ...]:
        """The row selections as Python values (slices and index arrays)."""
        return tuple(step.key for step in self._steps)

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[str]:
        return iter(self._roots)

    def __contains__(self, name: object) -> bool:
        return name in self._roots

    def __repr__(self) -> str:
        return f"<zarrpy.VirtualTable {self._length} rows, fields {self.fields}>"

    @overload
    def __getitem__(self, key: str) -> VirtualArray: ...

    @overload
    def __getitem__(self, key: list[str] | slice | MaskLike | IntArrayLike | VirtualArray) -> VirtualTable: ...

    def __getitem__(
        self, key: str | list[str] | slice | MaskLike | IntArrayLike | VirtualArray
    ) -> VirtualArray | VirtualTable:
        """A field (``table["pt"]``: a VirtualArray), a table of some fields
        (``table[["pt", "eta"]]``, same rows), or a new table with one more
        shared row selection (a slice, a 1-D boolean mask, a 1-D integer
        array; a VirtualArray mask is materialised first).

        Raises KeyError for an unknown field, SelectionError for any other key.
        """
        if isinstance(key, list) and key and all(isinstance(name, str) for name in key):
            missing = [name for name in key if name not in self._roots]
            if missing:
                raise KeyError(f"no fields {missing} in a table of fields {self.fields}")
            return VirtualTable({name: self._roots[name] for name in key}, steps=self._steps)
        if isinstance(key, str):
            try:
                va = self._roots[key]
            except KeyError:
                raise KeyError(f"no field {key!r} in a table of fields {self.fields}") from None
            for step in self._steps:
                va = va._derive(step)
            return va
        if isinstance(key, VirtualArray):
            key = key.materialize()
        rows = Step.parse(key, (self._length,), None)
        if rows is None or rows.kind not in ROW_KINDS:
            raise SelectionError(f"a table takes a field name, a slice, or a 1-D mask or index array of rows; "
                                 f"got {key!r}")
        return VirtualTable(self._roots, steps=(*self._steps, rows))

    # -- materialising --------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Each field materialised: name -> numpy array (or RaggedArray).

        The fields are materialised side by side, on zarrpy's IO thread pool
        (:func:`~zarrpy.pipeline.io_pool.map_io`): over stored arrays, every
        array's requests are in flight at once.
        """
        names = list(self._roots)
        return dict(zip(names, map_io(lambda name: self[name].materialize(), names)))

    def to_numpy(self) -> np.ndarray:
        """The table as one structured numpy array, a field per field.

        Fixed-size fields keep their dtype (extra axes become sub-array
        fields); variable-width strings become fixed-width unicode as wide as
        the longest. Ragged and object fields have no fixed-size form: they
        are refused (TypeError naming them; use :meth:`to_dict`).
        """
        variable = [name for name, va in self._roots.items() if va.dtype.kind == "O"]
        if variable:
            raise TypeError(f"fields {variable} hold variable-length elements, which a structured array "
                            "cannot; use to_dict()")
        columns = {name: _fixed_width(value) for name, value in self.to_dict().items()}
        dtype = np.dtype([(name, col.dtype, col.shape[1:]) for name, col in columns.items()])
        out = np.empty(self._length, dtype=dtype)
        for name, col in columns.items():
            out[name] = col
        return out


def _fixed_width(column: np.ndarray) -> np.ndarray:
    if column.dtype.kind == "T":
        width = max((len(s) for s in column.reshape(-1).tolist()), default=0)
        return column.astype(f"U{max(width, 1)}")
    return column


__all__ = ["VirtualTable"]
