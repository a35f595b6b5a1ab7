"""RaggedArray: variable-length numeric elements ("a vector of vectors").

The in-memory form of numcodecs ``vlen-array`` data, where every element of
an array is itself a 1-D numeric vector of its own length. Instead of a
numpy object array holding one small array per element, a RaggedArray keeps

- ``values``: one flat numpy array of the element dtype, every vector's
  items one after the other (C order of the outer positions), and
- ``offsets``: int64, n+1 entries, in *items* (not bytes), starting at 0,
  non-decreasing, ending at ``len(values)``; element *i* is
  ``values[offsets[i]:offsets[i+1]]``.

This is the Arrow "list" layout, and the variable form of
:class:`~zarrpy.core.array_bytes.ArrayBytes` with offsets divided by the item
size, so converting between the two is vectorised (no per-element loop):
:meth:`RaggedArray.from_array_bytes` and :meth:`RaggedArray.to_array_bytes`.

**Shape.** A chunk is N-dimensional, so a RaggedArray has an *outer*
``shape`` (default ``(n,)``); its product is the number of elements n, held
in C order. Indexing follows numpy on that outer shape:

- an integer (or a tuple of integers, one per dimension) gives one element
  as a 1-D numpy array, a *view* of ``values``; negative integers count from
  the end;
- a slice gives a RaggedArray whose ``values`` is a view of this one's
  whenever the chosen elements are consecutive in C order (always for a
  1-D slice with step 1);
- an integer array, a list, a boolean mask or any mix numpy accepts gathers
  the chosen elements into a new RaggedArray (copied), shaped as numpy would
  shape the result.

``len()`` is ``shape[0]`` and iteration runs over the first axis (vectors
for a 1-D RaggedArray, RaggedArrays of one dimension less otherwise), as for
numpy arrays.

**dtype and byte order.** ``dtype`` is a numeric numpy dtype (bool, integer,
float, complex) in native byte order: a big-endian dtype given to a
constructor is converted. In ArrayBytes the element bytes are always
little-endian (DESIGN.md, "ArrayBytes"); big-endian storage (numcodecs
``VLenArray('>i2')``) is the codec's business (``zarrpy.codecs.vlen_v2``).

**Memory.** ``values`` built by :meth:`from_array_bytes` is a zero-copy view
of the chunk's bytes on little-endian machines, so it is read-only;
:meth:`copy` gives a writable RaggedArray.

**Equality.** ``==`` is not element-wise (it is identity, like for lists of
arrays it would be ambiguous); use :meth:`equals`.

>>> r = RaggedArray.from_list([[1, 2, 3], [], [4]], dtype="int16")
>>> r
RaggedArray([[1, 2, 3], [], [4]], dtype=int16)
>>> r.offsets.tolist(), r.values.tolist()
([0, 3, 3, 4], [1, 2, 3, 4])
>>> r[-1]
array([4], dtype=int16)
>>> r[::2].to_list()
[array([1, 2, 3], dtype=int16), array([4], dtype=int16)]
>>> r.reshape(3, 1).tolist()
[[[1, 2, 3]], [[]], [[4]]]
>>> ab = r.to_array_bytes(); ab.offsets.tolist()
[0, 6, 6, 8]
>>> RaggedArray.from_array_bytes(ab, "int16").equals(r)
True
"""

from __future__ import annotations

import operator
from typing import Any, Iterable, Iterator, Sequence, SupportsIndex

import numpy as np
import numpy.typing as npt

from ._typing import Selection, Shape
from .array_bytes import ArrayBytes
from ..errors import ChunkDecodeError, CodecError

_REPR_ITEMS = 6  # elements shown by repr before "..."
_REPR_VALUES = 8  # values shown per element


class RaggedArray:
    """Variable-length 1-D numeric elements: flat ``values`` plus ``offsets``.

    ``RaggedArray(offsets, values, shape=None)`` checks its arguments:
    ``offsets`` (integers, n+1) must start at 0, never decrease and end at
    ``len(values)``; ``values`` must be 1-D and numeric; ``shape`` (default
    ``(n,)``) must hold n elements. Most code builds one with
    :meth:`from_list` or :meth:`from_array_bytes` instead.
    """

    __slots__ = ("_offsets", "_values", "_shape")
    _offsets: np.ndarray
    _values: np.ndarray
    _shape: Shape

    def __init__(self, offsets: npt.ArrayLike, values: npt.ArrayLike, shape: Shape | None = None):
        values = np.asarray(values)
        if values.ndim != 1:
            raise ValueError(f"values must be 1-D, got shape {values.shape}")
        dtype = _numeric_dtype(values.dtype)
        if values.dtype != dtype:
            values = values.astype(dtype)
        offsets = np.asarray(offsets)
        if offsets.ndim != 1 or offsets.size < 1:
            raise ValueError(f"offsets must be 1-D with n+1 >= 1 entries, got shape {offsets.shape}")
        if offsets.dtype.kind not in "iu":
            raise TypeError(f"offsets must be integers, got dtype {offsets.dtype}")
        if offsets.dtype.kind == "u" and offsets.size and int(offsets.max()) > np.iinfo(np.int64).max:
            raise ValueError("offsets do not fit int64")
        offsets = offsets.astype(np.int64, copy=False)
        if offsets[0] != 0:
            raise ValueError(f"offsets must start at 0, got {int(offsets[0])}")
        steps = np.diff(offsets)
        if np.any(steps < 0):
            i = int(np.flatnonzero(steps < 0)[0])
            raise ValueError(f"offsets decrease at element {i} ({int(offsets[i])} then {int(offsets[i + 1])})")
        if offsets[-1] != values.size:
            raise ValueError(f"offsets end at {int(offsets[-1])} but there are {values.size} values")
        n = offsets.size - 1
        self._offsets = offsets
        self._values = values
        self._shape = _check_shape(shape, n)

    @classmethod
    def _wrap(cls, offsets: np.ndarray, values: np.ndarray, shape: Shape) -> RaggedArray:
        """Build without checks; callers guarantee the invariants."""
        self = object.__new__(cls)
        self._offsets = offsets
        self._values = values
        self._shape = tuple(shape)
        return self

    # -- constructors --------------------------------------------------
    @classmethod
    def from_list(cls, items: Iterable[npt.ArrayLike | None], dtype: npt.DTypeLike | None = None, *,
                  shape: Shape | None = None) -> RaggedArray:
        """A RaggedArray of the 1-D array-likes in ``items``.

        ``items`` is a sequence (flat, C order) or a numpy object array, whose
        shape becomes the outer shape unless ``shape`` is given. ``None``
        stands for an empty vector (as numcodecs ``VLenArray`` reads it).
        ``dtype`` None takes numpy's common type of the elements (float64 when
        there are none). Elements are cast as ``numpy.asarray(x, dtype)``
        casts them.

        Raises
        ------
        ValueError
            If an element is not 1-D, or ``shape`` does not hold them all.
        TypeError
            If ``dtype`` (or the elements' common type) is not numeric.
        """
        if isinstance(items, RaggedArray):
            out = items.astype(dtype) if dtype is not None else items
            return out if shape is None else out.reshape(shape)
        if isinstance(items, np.ndarray) and items.dtype == object:
            if shape is None:
                shape = items.shape
            items = items.reshape(-1).tolist()
        elif isinstance(items, np.ndarray) and items.ndim >= 2:
            # A regular 2-D numeric array: every row is an element.
            if shape is None:
                shape = items.shape[:-1]
            items = list(items.reshape(-1, items.shape[-1]))
        else:
            items = list(items)
        want = None if dtype is None else _numeric_dtype(dtype)
        arrays = []
        for i, item in enumerate(items):
            if item is None:
                arr = np.empty(0, dtype=np.float64 if want is None else want)
            else:
                arr = np.asarray(item) if want is None else np.asarray(item, dtype=want)
            if arr.ndim != 1:
                raise ValueError(f"element {i} must be 1-D, got shape {arr.shape}")
            arrays.append(arr)
        if want is None:
            # An untyped empty element ([] or None) does not vote: [[1], []]
            # stays integer. Typed empty numpy arrays do.
            typed = [a for a, item in zip(arrays, items) if a.size or isinstance(item, np.ndarray)]
            want = _numeric_dtype(np.result_type(*typed) if typed else np.float64)
        lengths = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
        offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if arrays:
            values = np.concatenate(arrays).astype(want, copy=False) if offsets[-1] else np.empty(0, want)
        else:
            values = np.empty(0, dtype=want)
        if values.dtype != want:  # np.concatenate of mixed inputs
            values = values.astype(want)
        return cls._wrap(offsets, values, _check_shape(shape, len(arrays)))

    @classmethod
    def from_array_bytes(cls, chunk: ArrayBytes, dtype: npt.DTypeLike) -> RaggedArray:
        """The RaggedArray of a variable-form chunk whose element bytes are
        raw little-endian items of ``dtype``.

        Vectorised: the item offsets are the byte offsets divided by the item
        size, and ``values`` views the chunk's data without a copy on
        little-endian machines (so it is read-only there).

        Raises
        ------
        CodecError
            If ``chunk`` is a fixed-size chunk.
        ChunkDecodeError
            If an element's byte length is not a multiple of the item size
            (the message gives its position and length).
        TypeError
            If ``dtype`` is not numeric.
        """
        dtype = _numeric_dtype(dtype)
        if chunk.is_fixed:
            raise CodecError(f"a ragged {dtype} array needs a variable-length chunk, got {chunk!r}")
        byte_offsets = chunk.offsets
        itemsize = dtype.itemsize
        if itemsize > 1:
            # offsets[0] == 0, so every length is a multiple iff every offset is.
            bad = np.flatnonzero(byte_offsets % itemsize)
            if bad.size:
                i = int(bad[0]) - 1  # the first element that ends off the grid
                nbytes = int(byte_offsets[i + 1] - byte_offsets[i])
                raise ChunkDecodeError(
                    f"ragged {dtype} element at position {_position(i, chunk.shape)} has {nbytes} bytes, "
                    f"not a multiple of the item size {itemsize}"
                )
            offsets = byte_offsets // itemsize
        else:
            offsets = np.array(byte_offsets, dtype=np.int64)
        values = np.frombuffer(chunk.data, dtype=dtype.newbyteorder("<"))
        if values.dtype != dtype:  # big-endian host
            values = values.astype(dtype)
        return cls._wrap(offsets, values, chunk.shape)

    # -- conversions ---------------------------------------------------
    def to_array_bytes(self) -> ArrayBytes:
        """The variable-form chunk: byte offsets and little-endian item bytes."""
        little = self._values.dtype.newbyteorder("<")
        data = self._values.astype(little, copy=False).tobytes()
        return ArrayBytes.variable(self._offsets * self._values.dtype.itemsize, data, self._shape)

    def to_list(self) -> list[Any] | np.ndarray:
        """The elements as numpy arrays (views of ``values``): a flat list
        for a 1-D RaggedArray, nested lists following ``shape`` otherwise
        (like ``numpy.ndarray.tolist``). A 0-d RaggedArray gives its one
        element, not a list."""
        v = self._values
        o = self._offsets.tolist()
        flat: list[np.ndarray] = [v[a:b] for a, b in zip(o[:-1], o[1:])]
        if len(self._shape) == 1:
            return flat
        if not self._shape:
            return flat[0]
        return _nest(flat, self._shape)

    def tolist(self) -> list[Any]:
        """The elements as Python lists of Python numbers: a list of them for
        a 1-D RaggedArray, nested following ``shape`` otherwise (what
        ``numpy.ndarray.tolist`` gives, with every vector a list too). A 0-d
        RaggedArray gives its one element's list."""
        items = self._values.tolist()
        o = self._offsets.tolist()
        flat: list[list[Any]] = [items[a:b] for a, b in zip(o[:-1], o[1:])]
        if not self._shape:
            return flat[0]
        return _nest(flat, self._shape)

    def to_object_array(self) -> np.ndarray:
        """A numpy object array of ``shape`` holding each element as a 1-D
        numpy array (the form numcodecs ``VLenArray`` encodes and decodes)."""
        out = np.empty(self.size, dtype=object)
        v = self._values
        o = self._offsets.tolist()
        for i, (a, b) in enumerate(zip(o[:-1], o[1:])):
            out[i] = v[a:b]
        return out.reshape(self._shape)

    def astype(self, dtype: npt.DTypeLike) -> RaggedArray:
        """The same vectors with values cast to ``dtype`` (numpy casting)."""
        dtype = _numeric_dtype(dtype)
        if dtype == self._values.dtype:
            return self
        return RaggedArray._wrap(self._offsets, self._values.astype(dtype), self._shape)

    def reshape(self, *shape: SupportsIndex | Sequence[SupportsIndex]) -> RaggedArray:
        """The same elements (C order) under another outer shape; shares memory."""
        first = shape[0] if len(shape) == 1 else None
        items = first if first is not None and not isinstance(first, SupportsIndex) else shape
        dims = tuple(operator.index(s) for s in items)  # type: ignore[arg-type]  # ints, checked here
        if dims.count(-1) == 1:
            known = int(np.prod([s for s in dims if s != -1], dtype=np.int64))
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape {self.size} elements into {dims}")
            dims = tuple(self.size // known if s == -1 else s for s in dims)
        return RaggedArray._wrap(self._offsets, self._values, _check_shape(dims, self.size))

    def copy(self) -> RaggedArray:
        """A RaggedArray with its own (writable) offsets and values."""
        return RaggedArray._wrap(self._offsets.copy(), self._values.copy(), self._shape)

    # -- properties ----------------------------------------------------
    @property
    def offsets(self) -> np.ndarray:
        """int64, n+1 entries, in items: element i is ``values[offsets[i]:offsets[i+1]]``."""
        return self._offsets

    @property
    def values(self) -> np.ndarray:
        """Every element's items concatenated, 1-D, of :attr:`dtype`."""
        return self._values

    @property
    def dtype(self) -> np.dtype:
        """The items' numeric dtype (native byte order)."""
        return self._values.dtype

    @property
    def shape(self) -> Shape:
        """The outer shape: how the elements are arranged."""
        return self._shape

    @property
    def ndim(self) -> int:
        """Number of dimensions of the outer shape (the vectors' own axis not counted)."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """Number of elements (vectors), the product of :attr:`shape`."""
        return self._offsets.size - 1

    @property
    def lengths(self) -> np.ndarray:
        """Each element's number of items (int64, shaped like :attr:`shape`)."""
        return np.diff(self._offsets).reshape(self._shape)

    @property
    def nbytes(self) -> int:
        """Bytes of item data (``values.nbytes``; the offsets not counted),
        as ``ArrayBytes.nbytes`` counts the payload only."""
        return self._values.nbytes

    # -- sequence protocol ---------------------------------------------
    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d RaggedArray")
        return self._shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self._shape:
            raise TypeError("iteration over a 0-d RaggedArray")
        if len(self._shape) == 1:
            v = self._values
            o = self._offsets.tolist()
            return (v[a:b] for a, b in zip(o[:-1], o[1:]))
        return (self[i] for i in range(self._shape[0]))

    def __getitem__(self, key: Selection) -> np.ndarray | RaggedArray:
        """One element (a 1-D array of its items) for a key naming one
        position; else a RaggedArray of the selected elements, as numpy
        indexes an array of the outer shape (a 1-D slice is a view)."""
        shape = self._shape
        # Fast paths: one element, and a 1-D slice (a view).
        if len(shape) == 1:
            if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
                return self._element(_normalize_index(int(key), shape[0], 0))
            if isinstance(key, slice):
                start, stop, step = key.indices(shape[0])
                if step == 1:
                    return self._run(start, max(start, stop), (max(stop - start, 0),))
        if (
            isinstance(key, tuple)
            and len(key) == len(shape)
            and all(isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) for k in key)
        ):
            idx = tuple(_normalize_index(int(k), s, ax) for ax, (k, s) in enumerate(zip(key, shape)))
            return self._element(int(np.ravel_multi_index(idx, shape)) if shape else 0)
        # General case: let numpy apply the key to the element positions.
        flat = np.arange(self.size, dtype=np.int64).reshape(shape)[key]
        if np.ndim(flat) == 0:
            return self._element(int(flat))
        return self.take(flat.reshape(-1), flat.shape)

    def take(self, indices: npt.ArrayLike, shape: Shape | None = None) -> RaggedArray:
        """The elements at flat C-order ``indices`` (any order, repeats
        allowed, negative counting from the end) as a RaggedArray of ``shape``
        (default 1-D). Shares memory when the indices are one ascending run
        of consecutive positions; copies otherwise, vectorised."""
        idx = np.asarray(indices)
        if idx.dtype.kind not in "iu" and idx.size:
            raise IndexError(f"indices must be integers, got dtype {idx.dtype}")
        idx = idx.astype(np.int64, copy=False).reshape(-1)
        n = self.size
        shape = (idx.size,) if shape is None else tuple(shape)
        if idx.size and (np.min(idx) < -n or np.max(idx) >= n):
            bad = int(idx[(idx < -n) | (idx >= n)][0])
            raise IndexError(f"index {bad} is out of bounds for a RaggedArray of {n} elements")
        idx = np.where(idx < 0, idx + n, idx)
        if idx.size == 0:
            return RaggedArray._wrap(np.zeros(1, dtype=np.int64), self._values[:0], _check_shape(shape, 0))
        first = int(idx[0])
        if int(idx[-1]) - first == idx.size - 1 and (idx.size == 1 or bool(np.all(np.diff(idx) == 1))):
            return self._run(first, first + idx.size, shape)
        starts = self._offsets[idx]
        lengths = self._offsets[idx + 1] - starts
        offsets = np.zeros(idx.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        total = int(offsets[-1])
        if total:
            # Index of every item to copy: each run's start, shifted per item.
            src = np.arange(total, dtype=np.int64) + np.repeat(starts - offsets[:-1], lengths)
            values = self._values[src]
        else:
            values = self._values[:0].copy()
        return RaggedArray._wrap(offsets, values, _check_shape(shape, idx.size))

    def _element(self, i: int) -> np.ndarray:
        o = self._offsets
        return self._values[o[i] : o[i + 1]]

    def _run(self, start: int, stop: int, shape: Shape) -> RaggedArray:
        """Elements ``start:stop`` (consecutive), ``values`` a view."""
        o = self._offsets[start : stop + 1]
        base = int(o[0])
        return RaggedArray._wrap(o - base, self._values[base : int(o[-1])], shape)

    # -- comparison and display ----------------------------------------
    def equals(self, other: object) -> bool:
        """True if ``other`` has the same outer shape, dtype and elements.

        ``other`` may be a RaggedArray or anything :meth:`from_list` accepts
        (converted with this array's dtype, so then the dtypes match by
        construction). Items compare as numpy ``==`` does, except that NaN
        equals NaN (so -0.0 equals 0.0).
        """
        if not isinstance(other, RaggedArray):
            try:
                other = RaggedArray.from_list(other, self.dtype)  # type: ignore[arg-type]  # checked by it
            except (TypeError, ValueError):
                return False
        if other.shape != self.shape or other.dtype != self.dtype:
            return False
        if not np.array_equal(self._offsets, other._offsets):
            return False
        equal_nan = self.dtype.kind in "fc"
        return bool(np.array_equal(self._values, other._values, equal_nan=equal_nan))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``numpy.asarray(r)``: :meth:`to_object_array` (shape :attr:`shape`).

        The vectors differ in length, so only an object array holds them;
        another ``dtype`` is refused (TypeError; the flat numbers are
        :attr:`values`). The object array is always new, so ``copy=False``
        is refused too (ValueError, as numpy 2 asks).
        """
        if dtype is not None and np.dtype(dtype) != np.dtype(object):
            raise TypeError(
                f"a RaggedArray converts only to an object array of 1-D arrays (dtype=object), not {np.dtype(dtype)}; "
                "its flat numbers are .values (with .offsets)"
            )
        if copy is False:
            raise ValueError("a RaggedArray cannot become a numpy array without a copy (copy=False)")
        return self.to_object_array()

    def __repr__(self) -> str:
        shown = []
        o = self._offsets
        for i in range(min(self.size, _REPR_ITEMS)):
            items = self._values[o[i] : min(o[i + 1], o[i] + _REPR_VALUES)].tolist()
            text = ", ".join(repr(x) for x in items)
            if o[i + 1] - o[i] > _REPR_VALUES:
                text += ", ..."
            shown.append(f"[{text}]")
        if self.size > _REPR_ITEMS:
            shown.append("...")
        shape = "" if len(self._shape) == 1 else f", shape={self._shape}"
        return f"RaggedArray([{', '.join(shown)}]{shape}, dtype={self.dtype})"


# -- helpers -----------------------------------------------------------------


def _numeric_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as a numeric numpy dtype in native byte order, or TypeError."""
    try:
        dt: np.dtype = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{dtype!r} is not a numpy dtype: {exc}") from None
    if dt.kind not in "biufc" or dt.itemsize == 0 or dt.fields is not None or dt.subdtype is not None:
        raise TypeError(f"a RaggedArray holds numbers (bool, int, uint, float, complex), not {dt}")
    return dt.newbyteorder("=")


def _check_shape(shape: Any, n: int) -> Shape:
    if shape is None:
        return (n,)
    checked = tuple(operator.index(s) for s in shape)
    if any(s < 0 for s in checked) or int(np.prod(checked, dtype=np.int64)) != n:
        raise ValueError(f"shape {checked} does not hold {n} elements")
    return checked


def _normalize_index(i: int, size: int, axis: int) -> int:
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size}")
    return i + size if i < 0 else i


def _position(i: int, shape: Shape) -> tuple[int, ...]:
    """The N-d position of flat element ``i`` (C order)."""
    if not shape:
        return ()
    return tuple(int(p) for p in np.unravel_index(i, shape))


def _nest(flat: Sequence[Any], shape: Shape) -> list[Any]:
    if len(shape) == 1:
        return list(flat)
    step = int(np.prod(shape[1:], dtype=np.int64))
    return [_nest(flat[k * step : (k + 1) * step], shape[1:]) for k in range(shape[0])]


__all__ = ["RaggedArray"]
