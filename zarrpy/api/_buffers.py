"""Growable in-memory buffers: C++ ``std::vector`` for numpy rows and ragged elements.

A :class:`GrowableArray` keeps its first-axis *size* apart from its
*capacity*, so reading window after window into one buffer allocates once:
``resize`` only reallocates when the capacity is short, and growth is
geometric (doubling) up to :attr:`GrowableArray.growth_threshold_nbytes`,
then by that many bytes at a time. :class:`GrowableRagged` does the same for
strings, bytes and ragged numeric vectors (offsets plus flat values, the
Arrow layout of :class:`~zarrpy.RaggedArray`).

The readers that fill them (``read_into``, ``iter_rows``, ``concat``) live in
:mod:`zarrpy.api._iterate`.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ..core._typing import Selection, Shape
from ..core.array_bytes import ArrayBytes
from ..core.ragged import RaggedArray
from ..errors import BoundsCheckError, SelectionError

_KINDS = ("str", "bytes", "ragged")


class GrowableArray:
    """Rows of ``shape_tail`` in a numpy buffer whose size grows and shrinks
    without reallocating each time (a ``std::vector`` of rows).

    ``size`` (``len()``) rows are in use; ``capacity`` rows are allocated.
    :attr:`nda` is the view ``storage[0:size]``. The object owns its size, so
    every holder of it sees a :meth:`resize`.

    **Stale views.** A view taken from :attr:`nda` (or by indexing) before a
    call that reallocates still points at the old storage: writes through it
    are lost and it no longer sees new data. Calls that may reallocate are
    :meth:`resize`, :meth:`reserve`, :meth:`append`, :meth:`extend` and
    :meth:`shrink_to_fit`; :attr:`reallocations` counts reallocations. The
    safe pattern is to read ``buf.nda`` again after any of them::

        buf.resize(n)
        view = buf.nda      # not a view kept from before the resize

    Rows exposed by growing the size are uninitialised (``numpy.empty``
    semantics: whatever the storage held), which is what a reader that
    overwrites them wants. Object and string dtypes are refused: use
    :class:`GrowableRagged`.

    >>> buf = GrowableArray("int32", shape_tail=(2,))
    >>> buf.extend([[1, 2], [3, 4]]); buf.append([5, 6])
    >>> buf.nda.tolist(), buf.capacity
    ([[1, 2], [3, 4], [5, 6]], 4)
    >>> buf.resize(1); buf.nda.tolist(), buf.capacity
    ([[1, 2]], 4)
    """

    growth_threshold_nbytes: ClassVar[int] = 64 << 20
    """Below this many bytes of storage the capacity doubles; past it, it
    grows by this many bytes (in whole rows) at a time."""

    __slots__ = ("_dtype", "_reallocations", "_shape_tail", "_size", "_storage")

    def __init__(self, dtype: npt.DTypeLike, capacity: int = 0, shape_tail: Iterable[int] = ()):
        self._dtype = _fixed_dtype(dtype)
        self._shape_tail: Shape = _check_tail(shape_tail)
        self._storage = np.empty((_count(capacity, "capacity"), *self._shape_tail), dtype=self._dtype)
        self._size = 0
        self._reallocations = 0

    # -- description -----------------------------------------------------
    @property
    def nda(self) -> np.ndarray:
        """The rows in use: a view ``storage[0:size]``, shape ``(size, *shape_tail)``.

        Read it again after any call that may reallocate (see the class docstring).
        """
        return self._storage[: self._size]

    @property
    def size(self) -> int:
        """Rows in use."""
        return self._size

    @property
    def capacity(self) -> int:
        """Rows allocated; the size can grow to this without reallocating."""
        return int(self._storage.shape[0])

    @property
    def dtype(self) -> np.dtype:
        """The rows' numpy dtype (fixed-size)."""
        return self._dtype

    @property
    def shape_tail(self) -> Shape:
        """The shape of one row."""
        return self._shape_tail

    @property
    def shape(self) -> Shape:
        """``(size, *shape_tail)``, the shape of :attr:`nda`."""
        return (self._size, *self._shape_tail)

    @property
    def reallocations(self) -> int:
        """How many times the storage was allocated anew after construction."""
        return self._reallocations

    @property
    def row_nbytes(self) -> int:
        """Bytes of one row."""
        return self._dtype.itemsize * math.prod(self._shape_tail)

    # -- size and capacity -------------------------------------------------
    def resize(self, n: int) -> None:
        """Set the size to ``n`` rows. Reallocates only when ``n`` exceeds the
        capacity (growing it geometrically, see :meth:`grown_capacity`);
        shrinking never reallocates. New rows are uninitialised."""
        n = _count(n, "size")
        if n > self.capacity:
            self._reallocate(self.grown_capacity(n))
        self._size = n

    def reserve(self, n: int) -> None:
        """Make the capacity at least ``n`` rows: exactly ``n`` when it must
        grow (as ``std::vector::reserve``). Never shrinks; the size is kept."""
        n = _count(n, "capacity")
        if n > self.capacity:
            self._reallocate(n)

    def clear(self) -> None:
        """Size 0; the capacity is kept."""
        self._size = 0

    def shrink_to_fit(self) -> None:
        """Reallocate to exactly :attr:`size` rows (if the capacity differs)."""
        if self.capacity != self._size:
            self._reallocate(self._size)

    def grown_capacity(self, n: int) -> int:
        """The capacity :meth:`resize` picks to hold ``n`` rows: the current
        one if it suffices; else double it (at least ``n``) while the storage
        stays within :attr:`growth_threshold_nbytes`; past that, grow by
        whole steps of that many bytes, enough to cover ``n``."""
        cap = self.capacity
        if n <= cap:
            return cap
        step = max(1, self.growth_threshold_nbytes // max(1, self.row_nbytes))  # rows
        if cap < step:
            return max(n, min(2 * cap, step))
        return cap + -(-(n - cap) // step) * step

    def _reallocate(self, capacity: int) -> None:
        storage = np.empty((capacity, *self._shape_tail), dtype=self._dtype)
        keep = min(self._size, capacity)
        storage[:keep] = self._storage[:keep]
        self._storage = storage
        self._reallocations += 1

    # -- adding rows -------------------------------------------------------
    def append(self, row: npt.ArrayLike) -> None:
        """Add one row (shape :attr:`shape_tail`; cast as numpy assignment casts).

        Raises SelectionError naming both shapes when the row's shape differs;
        numpy's error when the value does not convert (nothing is added then).
        """
        value = np.asarray(row)
        if value.shape != self._shape_tail:
            raise SelectionError(f"append: row of shape {value.shape} does not match the buffer's row shape "
                                 f"{self._shape_tail}")
        self._assign_at_end(value[np.newaxis])

    def extend(self, rows: npt.ArrayLike) -> None:
        """Add rows: an array-like of shape ``(k, *shape_tail)`` (a
        GrowableArray too), cast as numpy assignment casts. Grows once.

        Raises SelectionError naming both shapes when the trailing shape differs.
        """
        value = np.asarray(rows)
        if value.ndim == 1 and value.shape[0] == 0:
            return  # an empty list carries no row shape
        if value.ndim == 0 or value.shape[1:] != self._shape_tail:
            raise SelectionError(f"extend: rows of shape {value.shape} do not match the buffer's row shape "
                                 f"{self._shape_tail} (rows must be (k, *row shape))")
        self._assign_at_end(value)

    def _assign_at_end(self, value: np.ndarray) -> None:
        old = self._size
        self.resize(old + value.shape[0])
        try:
            self._storage[old : self._size] = value
        except Exception:
            self._size = old
            raise

    # -- numpy protocol ----------------------------------------------------
    def __len__(self) -> int:
        return self._size

    def __getitem__(self, key: Selection) -> Any:
        return self.nda[key]

    def __setitem__(self, key: Selection, value: npt.ArrayLike) -> None:
        self.nda[key] = value

    def __iter__(self) -> Iterator[Any]:
        return iter(self.nda)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """:attr:`nda` (a view; ``copy=True`` or another dtype gives a new array)."""
        out = self.nda
        if dtype is not None and np.dtype(dtype) != out.dtype:
            if copy is False:
                raise ValueError(f"a {out.dtype} GrowableArray cannot become {np.dtype(dtype)} without a copy")
            return out.astype(dtype)
        return out.copy() if copy else out

    def __repr__(self) -> str:
        return (f"GrowableArray(size={self._size}, capacity={self.capacity}, dtype={self._dtype}, "
                f"shape_tail={self._shape_tail})")


class GrowableRagged:
    """Variable-length elements in growable storage: strings, bytes or 1-D
    numeric vectors, as offsets (int64, size+1, in items) plus flat values.

    ``GrowableRagged("str")`` holds strings (values are their UTF-8 bytes),
    ``GrowableRagged("bytes")`` bytes, and ``GrowableRagged(dtype)`` for a
    numeric dtype 1-D vectors, like :class:`~zarrpy.RaggedArray` (kind
    ``"ragged"``). Both parts are :class:`GrowableArray` s, so they grow and
    reallocate as those do; ``capacity`` counts elements and
    ``values_capacity`` items (bytes for str and bytes).

    Views from :attr:`offsets`, :attr:`values`, :meth:`as_ragged` or element
    access go stale on reallocation, as for GrowableArray: read them again
    after any call that may grow.

    >>> r = GrowableRagged("str")
    >>> r.extend(["a", "bcd"]); r.append("é")
    >>> r.to_list(), r.offsets.tolist()
    (['a', 'bcd', 'é'], [0, 1, 4, 6])
    """

    __slots__ = ("_dtype", "_kind", "_offsets", "_values")

    def __init__(self, kind_or_dtype: npt.DTypeLike, capacity: int = 0, values_capacity: int = 0):
        self._kind, self._dtype = _ragged_kind(kind_or_dtype)
        item = np.dtype(np.uint8) if self._kind != "ragged" else self._dtype
        self._offsets = GrowableArray(np.int64, _count(capacity, "capacity") + 1)
        self._offsets.append(0)
        self._values = GrowableArray(item, values_capacity)

    # -- description -----------------------------------------------------
    @property
    def kind(self) -> str:
        """``"str"``, ``"bytes"`` or ``"ragged"`` (numeric vectors)."""
        return self._kind

    @property
    def dtype(self) -> np.dtype:
        """The dtype of :meth:`to_numpy`: StringDType for str, object for
        bytes, the item dtype for ragged vectors."""
        return self._dtype

    @property
    def size(self) -> int:
        """Elements in use."""
        return self._offsets.size - 1

    @property
    def capacity(self) -> int:
        """Elements the offsets have room for without reallocating."""
        return self._offsets.capacity - 1

    @property
    def values_capacity(self) -> int:
        """Items (bytes for str and bytes) the values have room for."""
        return self._values.capacity

    @property
    def reallocations(self) -> int:
        """Reallocations of the offsets plus those of the values."""
        return self._offsets.reallocations + self._values.reallocations

    @property
    def offsets(self) -> np.ndarray:
        """int64 view, size+1 entries: element i is ``values[offsets[i]:offsets[i+1]]``."""
        return self._offsets.nda

    @property
    def values(self) -> np.ndarray:
        """View of the items in use (uint8 for str and bytes)."""
        return self._values.nda

    # -- size and capacity -------------------------------------------------
    def resize(self, n: int) -> None:
        """Keep the first ``n`` elements, or add empty ones up to ``n``."""
        n = _count(n, "size")
        old = self.size
        if n <= old:
            self._offsets.resize(n + 1)
            self._values.resize(int(self._offsets.nda[n]))
            return
        end = self._offsets.nda[old]
        self._offsets.resize(n + 1)
        self._offsets.nda[old + 1 :] = end

    def reserve(self, n: int, values: int | None = None) -> None:
        """Room for ``n`` elements (and ``values`` items, when given); never shrinks."""
        self._offsets.reserve(_count(n, "capacity") + 1)
        if values is not None:
            self._values.reserve(values)

    def clear(self) -> None:
        """No elements; both capacities are kept."""
        self._offsets.resize(1)
        self._values.clear()

    def shrink_to_fit(self) -> None:
        """Reallocate offsets and values to exactly what is in use."""
        self._offsets.shrink_to_fit()
        self._values.shrink_to_fit()

    # -- adding elements ---------------------------------------------------
    def append(self, element: npt.ArrayLike | None) -> None:
        """Add one element: a ``str``, ``bytes``-like, or 1-D numeric array-like
        (None is an empty vector) by kind. TypeError for anything else."""
        items = self._encode_one(element)
        self._values.extend(items)
        self._offsets.append(self._values.size)

    def extend(self, elements: Iterable[npt.ArrayLike | None]) -> None:
        """Add many elements, each as :meth:`append` takes it.

        A :class:`~zarrpy.RaggedArray` (its elements in C order) or another
        GrowableRagged of the same kind is added in one vectorised step; a
        numpy string or bytes array, or any iterable, is encoded first
        (nothing is added when an element is refused).
        """
        if isinstance(elements, GrowableRagged):
            if elements.kind != self._kind:
                raise TypeError(f"cannot extend a {self._kind} GrowableRagged with a {elements.kind} one")
            lengths_from, values = elements.offsets, elements.values
        elif isinstance(elements, RaggedArray):
            if self._kind != "ragged":
                raise TypeError(f"a {self._kind} GrowableRagged cannot take a RaggedArray")
            lengths_from, values = elements.offsets, elements.values
        elif isinstance(elements, (str, bytes, bytearray, memoryview)):
            raise TypeError(f"extend takes an iterable of elements, not one {type(elements).__name__}; "
                            "use append for one element")
        else:
            lengths_from, values = self._encode_many(elements)
        self._append_run(np.asarray(lengths_from, dtype=np.int64), values)

    def _append_run(self, offsets: np.ndarray, values: np.ndarray) -> None:
        """Append elements given as offsets (starting anywhere) into ``values``."""
        k = offsets.size - 1
        if k <= 0:
            return
        base = self._values.size
        start = int(offsets[0])
        self._values.extend(values[start : int(offsets[-1])])
        old = self._offsets.size
        self._offsets.resize(old + k)
        np.add(offsets[1:], base - start, out=self._offsets.nda[old:])

    def _encode_one(self, element: Any) -> np.ndarray:
        if self._kind == "str":
            if not isinstance(element, str):
                raise TypeError(f"a str GrowableRagged takes str elements, not {type(element).__name__}")
            return np.frombuffer(element.encode("utf-8"), dtype=np.uint8)
        if self._kind == "bytes":
            if not isinstance(element, (bytes, bytearray, memoryview)):
                raise TypeError(f"a bytes GrowableRagged takes bytes elements, not {type(element).__name__}")
            return np.frombuffer(bytes(element), dtype=np.uint8)
        if element is None:
            return np.empty(0, self._dtype)
        arr = element if isinstance(element, np.ndarray) else np.asarray(element, dtype=self._dtype)
        if arr.ndim != 1 or arr.dtype.kind not in "biufc":
            raise TypeError(f"a ragged GrowableRagged takes 1-D numeric elements, not {arr.dtype} of shape {arr.shape}")
        return arr

    def _encode_many(self, elements: Any) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, values) of many elements, encoded before anything is added."""
        if self._kind == "ragged":
            ragged = RaggedArray.from_list(elements, self._dtype)
            return ragged.offsets, ragged.values
        arr = elements if isinstance(elements, np.ndarray) else _object_array(elements)
        arr = arr.reshape(-1)
        if self._kind == "str":
            chunk = ArrayBytes.from_strings(arr)  # ASCII fast path; TypeError names a non-str
        else:
            chunk = ArrayBytes.from_bytes_objects(arr)
        return chunk.offsets, np.frombuffer(chunk.data, dtype=np.uint8)

    # -- reading elements --------------------------------------------------
    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> str | bytes | np.ndarray:
        """Element ``i`` (negative from the end): str, bytes, or a 1-D view."""
        if not isinstance(i, (int, np.integer)) or isinstance(i, (bool, np.bool_)):
            raise SelectionError(f"GrowableRagged takes one integer index, got {i!r}; use to_numpy() to slice")
        n = self.size
        if not -n <= i < n:
            raise BoundsCheckError(f"index {int(i)} is out of bounds for a GrowableRagged of {n} elements")
        i = int(i) + n if i < 0 else int(i)
        o = self._offsets.nda
        items = self._values.nda[o[i] : o[i + 1]]
        if self._kind == "str":
            return items.tobytes().decode("utf-8")
        if self._kind == "bytes":
            return items.tobytes()
        return items

    def __iter__(self) -> Iterator[Any]:
        return iter(self.to_list())

    def to_list(self) -> list[Any]:
        """The elements: str, bytes, or 1-D numpy views of :attr:`values`."""
        if self._kind == "ragged":
            v = self._values.nda
            o = self._offsets.nda.tolist()
            return [v[a:b] for a, b in itertools.pairwise(o)]
        strings = self.to_numpy()
        assert isinstance(strings, np.ndarray)  # str and bytes kinds
        return strings.tolist()  # type: ignore[no-any-return]

    def as_ragged(self) -> RaggedArray:
        """A RaggedArray viewing offsets and values (kind ``"ragged"`` only)."""
        if self._kind != "ragged":
            raise TypeError(f"as_ragged() needs numeric vectors, this GrowableRagged holds {self._kind}")
        return RaggedArray(self._offsets.nda, self._values.nda)

    def to_numpy(self) -> np.ndarray | RaggedArray:
        """A new StringDType array (str), object array of bytes (bytes), or a
        RaggedArray view (ragged), as an Array read returns them."""
        if self._kind == "ragged":
            return self.as_ragged()
        chunk = ArrayBytes.variable(self._offsets.nda, self._values.nda.tobytes(), (self.size,))
        return chunk.to_strings() if self._kind == "str" else chunk.to_bytes_objects()

    def __repr__(self) -> str:
        what = self._kind if self._kind != "ragged" else f"ragged {self._dtype}"
        return (f"GrowableRagged({what}, size={self.size}, capacity={self.capacity}, "
                f"values={self._values.size}, values_capacity={self.values_capacity})")


# -- helpers -----------------------------------------------------------------


def _count(n: Any, what: str) -> int:
    """``n`` as a non-negative int (TypeError / ValueError naming ``what``)."""
    value = operator.index(n)
    if value < 0:
        raise ValueError(f"{what} must be non-negative, got {value}")
    return value


def _fixed_dtype(dtype: Any) -> np.dtype:
    try:
        dt: np.dtype = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{dtype!r} is not a numpy dtype: {exc}") from None
    if dt.kind in "OT":
        raise TypeError(f"GrowableArray holds fixed-size elements, not {dt}; use GrowableRagged for "
                        "strings, bytes and ragged vectors")
    if dt.itemsize == 0:
        raise TypeError(f"GrowableArray needs a dtype with a size, got {dt}")
    return dt


def _check_tail(shape_tail: Iterable[int]) -> Shape:
    tail = tuple(operator.index(s) for s in shape_tail)
    if any(s < 0 for s in tail):
        raise ValueError(f"shape_tail must be non-negative, got {tail}")
    return tail


def _ragged_kind(kind_or_dtype: Any) -> tuple[str, np.dtype]:
    if kind_or_dtype in ("str", "string", str) or isinstance(kind_or_dtype, np.dtypes.StringDType):
        return "str", np.dtype(np.dtypes.StringDType())
    if kind_or_dtype in ("bytes", bytes):
        return "bytes", np.dtype(object)
    bad = f"GrowableRagged kind must be 'str', 'bytes' or a numeric dtype, got {kind_or_dtype!r}"
    try:
        dt = np.dtype(kind_or_dtype)
    except TypeError:
        raise TypeError(bad) from None
    if dt.kind not in "biufc":
        raise TypeError(bad)
    return "ragged", np.dtype(dt.newbyteorder("="))


def _object_array(items: Any) -> np.ndarray:
    """A 1-D object array of ``items`` (never numpy's guess at a string dtype)."""
    items = list(items)
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


__all__ = ["GrowableArray", "GrowableRagged"]
