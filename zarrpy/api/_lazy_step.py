"""One single-level selection of a lazy array (issue 12).

A :class:`Step` is what a getitem that does not materialise records: a
slice, a field name, a new axis, or a 1-D boolean mask or integer array on
the first axis. It knows the shape and dtype it produces from its parent's
alone (a slice's length, a mask's count of True, an index array's length),
so a chain of steps reads nothing until the end, and it applies to data in
memory (numpy arrays and :class:`~zarrpy.RaggedArray`) when materialised.
The stored-array reader pushes a first step down to the store read instead
(``zarrpy.api._lazy_stored``).

>>> import numpy as np
>>> step = Step.parse(np.array([True, False, True]), (3, 2), np.dtype("f4"))
>>> step.kind, step.result((3, 2), np.dtype("f4"))
('mask', ((2, 2), dtype('float32')))
>>> Step.parse(0, (3,), np.dtype("f4")) is None  # an integer materialises
True
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..core._typing import Shape
from ..errors import BoundsCheckError, SelectionError

Kind = Literal["slice", "field", "newaxis", "mask", "index"]

#: The kinds that select rows on the first axis: the ones a table shares among its fields.
ROW_KINDS = ("slice", "mask", "index")


def is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class Step:
    """One single-level selection: ``kind`` and the Python ``key`` that makes it.

    ``key`` is what :attr:`VirtualArray.slices` shows: the ``slice`` as given,
    the field name, None for a new axis, or the index array (a read-only copy
    taken when the step was made, so changing the caller's mask later changes
    nothing). ``length`` is the first-axis length a row step produces and
    ``n`` the first-axis length it was checked against.
    """

    __slots__ = ("key", "kind", "length", "n")

    def __init__(self, kind: Kind, key: Any, n: int | None = None, length: int | None = None):
        self.kind = kind
        self.key = key
        self.n = n
        self.length = length

    @classmethod
    def parse(cls, key: Any, shape: Shape, dtype: np.dtype | None) -> Step | None:
        """The step ``key`` makes on an array of ``shape`` and ``dtype``, or
        None when ``key`` is not single-level (an integer, ``...``, a tuple of
        several items, an N-D index array …): the caller then materialises.

        Raises SelectionError for a single-level key that does not fit (a
        slice of a 0-d array, a mask of the wrong length, an unknown field)
        and BoundsCheckError for an index out of range.
        """
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if key is None:
            return cls("newaxis", None)
        if isinstance(key, str):
            names = dtype.names if dtype is not None else None
            if not names or key not in names:
                have = f"its fields are {list(names)}" if names else "it has no fields"
                raise SelectionError(f"field {key!r} of an array of dtype {dtype}: {have}")
            return cls("field", key)
        if isinstance(key, slice):
            for part in (key.start, key.stop, key.step):
                if part is not None and not is_int(part):
                    raise SelectionError(f"slice {key!r}: start, stop and step must be integers or None")
            if key.step is not None and int(key.step) == 0:
                raise SelectionError(f"slice {key!r}: step must not be 0")
            n = _first_axis(shape, key)
            return cls("slice", key, n, len(range(*key.indices(n))))
        if isinstance(key, list):
            key = np.asarray(key) if key else np.zeros(0, dtype=np.int64)
        if not isinstance(key, np.ndarray) or key.ndim != 1 or key.dtype.kind not in "biu":
            return None
        n = _first_axis(shape, "an index array")
        index = np.array(key, copy=True)
        index.setflags(write=False)
        if index.dtype == bool:
            if index.size != n:
                raise SelectionError(f"boolean mask of length {index.size} for a first axis of length {n}")
            return cls("mask", index, n, int(np.count_nonzero(index)))
        if index.size and (int(index.min()) < -n or int(index.max()) >= n):
            bad = int(index[(index < -n) | (index >= n)][0])
            raise BoundsCheckError(f"index {bad} is out of bounds for a first axis of length {n}")
        return cls("index", index, n, int(index.size))

    def result(self, shape: Shape, dtype: np.dtype) -> tuple[Shape, np.dtype]:
        """The shape and dtype this step gives an array of ``shape`` and ``dtype``."""
        if self.kind == "newaxis":
            return (1, *shape), dtype
        if self.kind == "field":
            field = dtype.fields[self.key][0]  # type: ignore[index]
            if field.subdtype is not None:
                base, sub = field.subdtype
                return (*shape, *sub), base
            return shape, field
        if not shape or shape[0] != self.n:
            raise SelectionError(f"{self} was made for a first axis of length {self.n}, not shape {shape}")
        assert self.length is not None
        return (self.length, *shape[1:]), dtype

    def apply(self, data: Any) -> Any:
        """This step applied in memory to ``data`` (a numpy array or RaggedArray)."""
        if self.kind == "newaxis":
            return data[None]
        return data[self.key]

    def __repr__(self) -> str:
        if self.kind in ("mask", "index"):
            return f"Step({self.kind}, {self.key.size} entries)"
        return f"Step({self.kind}, {self.key!r})"


def _first_axis(shape: Shape, what: Any) -> int:
    if not shape:
        raise SelectionError(f"{what} selects rows of the first axis, but the array is 0-d")
    return int(shape[0])


__all__ = ["ROW_KINDS", "Step", "is_int"]
