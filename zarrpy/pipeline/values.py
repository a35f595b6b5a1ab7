"""Values at the array edge: user input -> typed numpy, numpy <-> ArrayBytes.

Conversions between Python/numpy values and the pipeline's ArrayBytes happen
here and only here, once per chunk. Bad input is refused with a clear
TypeError before anything is written.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..core._typing import Shape
from ..core.array_bytes import ArrayBytes
from ..core.dtypes import DataType
from ..core.dtypes.optional import VALID, VALUE, EncodedOptional, element_bytes, inner_type, is_optional, split
from ..errors import BroadcastError, CodecError, DataTypeError
from ..core.ragged import RaggedArray


def coerce_value(value: Any, data_type: DataType, shape: Shape) -> np.ndarray:
    """``value`` as an array of ``data_type`` broadcast to ``shape``, or a clear error.

    Numbers follow numpy's assignment rules (``out[...] = value``): a Python
    (or numpy) scalar, or a list of them, out of the type's range raises
    OverflowError and NaN/inf into an integer type raises as numpy does,
    while a numpy array is cast as numpy casts it (``np.array([256])`` into
    uint8 gives 0; floats truncate). Strings or bytes into numbers are
    refused, and so is any element of a string (bytes) array that is not a
    ``str`` (``bytes``): TypeError naming its position. Every error comes
    before anything is written.
    """
    if hasattr(value, "__array__") and not isinstance(value, (np.ndarray, np.generic)):
        value = np.asarray(value)  # e.g. another zarrpy Array
    dtype = data_type.numpy
    if is_optional(data_type):
        arr = _coerce_optional(value, data_type)
    elif data_type.is_variable:
        arr = _coerce_variable(value, data_type)
    elif dtype.kind in "biufc" and (not isinstance(value, np.ndarray) or value.dtype == object):
        arr = _assign_numbers(value, dtype)  # Python objects: numpy's element-wise assignment
    elif dtype.kind in "mM":
        arr = _assign_times(value, dtype)
    elif dtype.fields is not None:
        arr = _assign_struct(value, dtype)
    else:
        arr = _cast(np.asarray(value), dtype)
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise BroadcastError(f"value of shape {arr.shape} cannot be broadcast to the selection shape {shape}") from None


def _coerce_optional(value: Any, data_type: DataType) -> np.ndarray:
    """Values of zarrs' optional type in the pipeline's element form (see
    :mod:`zarrpy.core.dtypes.optional`): a masked array (masked = missing),
    ``None`` elements or a ``None`` scalar (missing), plain values of the
    inner type (present), or elements already in that form."""
    inner = inner_type(data_type)
    if isinstance(value, np.ndarray) and not isinstance(value, np.ma.MaskedArray) and value.dtype == data_type.numpy:
        if not data_type.is_variable:
            out = value.copy()
            out[VALUE][~out[VALID]] = np.zeros((), dtype=out[VALUE].dtype)  # canonical missing: zero bytes
            return out
        # An object array is elements only when it says so (EncodedOptional);
        # else it holds the inner type's values (strings, bytes, None).
        if value.size and all(isinstance(e, EncodedOptional) for e in value.reshape(-1)):
            return value
    if isinstance(value, np.ma.MaskedArray):
        missing = _flat_mask(np.ma.getmaskarray(value))
        data = np.asarray(value.data)
    elif value is None or value is np.ma.masked:
        missing, data = np.ones((), dtype=bool), np.array(inner.default_fill(), dtype=object)
    else:
        data = value if isinstance(value, np.ndarray) else _object_array(value)
        missing = np.equal(data, None) if data.dtype == object else np.zeros(data.shape, dtype=bool)
    if missing.any():
        if data.dtype.kind == "T":  # stays StringDType: no Python object per element
            data = data.copy()
            data[missing] = _innermost(inner).default_fill()
        elif data.dtype == object or data.dtype.kind in "SU":
            data = data.astype(object)
            data[missing] = _innermost(inner).default_fill()  # a plain value: left out below anyway
    values = coerce_value(data, inner, data.shape)
    present = ~missing
    if data_type.is_variable:
        if not is_optional(inner):  # strings / bytes: one pass over offsets and data, no loop per element
            plain = ArrayBytes.from_strings(values) if inner.is_string else ArrayBytes.from_bytes_objects(values)
            return _with_validity(plain, present.reshape(-1)).to_bytes_objects()
        out = np.empty(data.shape, dtype=object)
        flat_out, flat_in, flat_ok = out.reshape(-1), values.reshape(-1), present.reshape(-1)
        for i in range(flat_out.size):
            flat_out[i] = element_bytes(inner, flat_in[i]) + b"\x01" if flat_ok[i] else b"\x00"
        return out
    out = np.zeros(data.shape, dtype=data_type.numpy)
    out[VALUE][present] = values[present]
    out[VALID] = present
    return out


def _with_validity(plain: ArrayBytes, present: np.ndarray) -> ArrayBytes:
    """Optional elements from plain ones: each element's bytes (none when
    missing) followed by its validity byte."""
    offsets, data = plain.offsets, np.frombuffer(plain.data, dtype=np.uint8)
    lengths = np.where(present, np.diff(offsets), 0)
    keep = np.repeat(present, np.diff(offsets))  # the bytes of present elements
    new_offsets = np.zeros(len(offsets), dtype=np.int64)
    np.cumsum(lengths + 1, out=new_offsets[1:])
    out = np.empty(int(new_offsets[-1]), dtype=np.uint8)
    is_flag = np.zeros(len(out), dtype=bool)
    is_flag[new_offsets[1:] - 1] = True
    out[is_flag] = present
    out[~is_flag] = data[keep]
    return ArrayBytes.variable(new_offsets, out.tobytes(), plain.shape)


def without_validity(chunk: ArrayBytes) -> tuple[ArrayBytes, np.ndarray]:
    """Plain elements and the validity of optional ones (the inverse of
    :func:`_with_validity`); ValueError if an element has no validity byte."""
    offsets, data = chunk.offsets, np.frombuffer(chunk.data, dtype=np.uint8)
    if (np.diff(offsets) < 1).any():
        raise ValueError("an optional element has no validity byte")
    flags = data[offsets[1:] - 1]
    if ((flags != 0) & (flags != 1)).any():
        raise ValueError("an optional element's validity byte is neither 0 nor 1")
    keep = np.ones(len(data), dtype=bool)
    keep[offsets[1:] - 1] = False
    plain = ArrayBytes.variable(offsets - np.arange(len(offsets)), data[keep].tobytes(), chunk.shape)
    return plain, flags == 1


def _flat_mask(mask: np.ndarray) -> np.ndarray:
    """A masked array's mask as one bool per element (a structured mask --
    a nested optional's -- is missing where any field is masked)."""
    if mask.dtype.names is None:
        return mask
    out = np.zeros(mask.shape, dtype=bool)
    for name in mask.dtype.names:
        out |= _flat_mask(mask[name])
    return out


def user_fill(data_type: DataType, fill: Any) -> Any:
    """A fill value as users see it: as stored, but for zarrs' optional
    types ``numpy.ma.masked`` (missing) or the inner value."""
    if not is_optional(data_type):
        return fill
    inner, present = split(data_type, fill)
    return user_fill(inner_type(data_type), inner) if present else np.ma.masked


def optional_result(out: np.ndarray, data_type: DataType) -> np.ma.MaskedArray:
    """The masked array of optional elements ``out``: the innermost type's
    values, masked where an element is missing at any level (a nested
    ``optional(optional(T))`` reads as ``T`` values; :func:`optional_validity`
    tells the levels apart). Missing values read as zero / ``""`` / ``b""``."""
    values, valid = _optional_levels(out, data_type)
    return np.ma.MaskedArray(values, mask=~valid.all(axis=-1))


def optional_validity(out: np.ndarray, data_type: DataType) -> np.ndarray:
    """Per element of optional elements ``out``, whether it is present at
    each optional level: bool, ``out.shape + (depth,)``, outermost level
    first (``[True, False]``: the outer value is there and is a missing
    inner one). Once a level is missing, every level inside it is too."""
    return _optional_levels(out, data_type)[1]


def optional_depth(data_type: DataType) -> int:
    """How many optional levels ``data_type`` has (0 for a plain type)."""
    depth = 0
    while is_optional(data_type):
        depth += 1
        data_type = inner_type(data_type)
    return depth


def _innermost(data_type: DataType) -> DataType:
    """The type inside every optional level of ``data_type``."""
    while is_optional(data_type):
        data_type = inner_type(data_type)
    return data_type


def _optional_levels(out: np.ndarray, data_type: DataType) -> tuple[np.ndarray, np.ndarray]:
    """(innermost values, validity ``out.shape + (depth,)``) of optional elements."""
    depth = optional_depth(data_type)
    valid = np.zeros((*out.shape, depth), dtype=bool)
    if not data_type.is_variable:  # packed (value, valid) records, nested as records
        level = out
        for d in range(depth):
            valid[..., d] = level[VALID]
            level = level[VALUE]
        return np.array(level, copy=True), valid
    innermost = data_type
    for _ in range(depth):
        innermost = inner_type(innermost)
    if depth == 1:  # strings / bytes: vectorised over offsets and data
        plain, present = without_validity(ArrayBytes.from_bytes_objects(out))
        values = plain.to_strings() if innermost.is_string else plain.to_bytes_objects()
        values.reshape(-1)[~present] = innermost.default_fill()
        valid[..., 0] = present.reshape(out.shape)
        return values, valid
    values = np.empty(out.size, dtype=innermost.numpy if innermost.is_string else object)
    flat_valid = valid.reshape(-1, depth)
    for i, element in enumerate(out.reshape(-1)):
        level_type, value = data_type, element
        for d in range(depth):
            value, ok = split(level_type, value)
            if not ok:
                value = innermost.default_fill()
                break
            flat_valid[i, d] = True
            level_type = inner_type(level_type)
        values[i] = value
    return values.reshape(out.shape), valid


def _cast(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A numpy array cast to ``dtype`` as numpy's assignment casts it (unsafe)."""
    if arr.dtype == dtype:
        return arr
    if arr.dtype.kind in "OSUVT" and dtype.kind not in "OSUVT" or arr.dtype.kind in "mM":
        raise TypeError(f"cannot write values of dtype {arr.dtype} into an array of dtype {dtype}")
    try:
        return arr.astype(dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot write values of dtype {arr.dtype} into an array of dtype {dtype}: {exc}") from None


def _assign_times(value: Any, dtype: np.dtype) -> np.ndarray:
    """Datetimes / timedeltas as numpy assigns them (units converted, ISO
    strings and "NaT" parsed, integers taken as counts of the unit); a
    datetime into a timedelta array (or back), or a float, is refused."""
    try:
        natural = np.asarray(value)
    except ValueError as exc:
        raise TypeError(f"cannot interpret the value as an array: {exc}") from None
    other = "m" if dtype.kind == "M" else "M"
    if natural.dtype.kind in ("f", "c", "b", other) or (dtype.kind == "m" and natural.dtype.kind in "SUT"):
        raise TypeError(f"cannot write values of dtype {natural.dtype} into an array of dtype {dtype}")
    out = np.empty(natural.shape, dtype=dtype)
    try:
        out[...] = natural
    except (OverflowError, ValueError, TypeError) as exc:
        raise TypeError(f"cannot write values of dtype {natural.dtype} into an array of dtype {dtype}: {exc}") from None
    return out


def _assign_struct(value: Any, dtype: np.dtype) -> np.ndarray:
    """Records as a struct array: a structured array or ``numpy.void`` is cast
    field by field (by position, as numpy assigns structured values); tuples
    (or lists of them) are read one value per field."""
    if isinstance(value, (np.ndarray, np.void)) and value.dtype.fields is not None:
        if len(value.dtype.names or ()) != len(dtype.names or ()):
            raise TypeError(f"cannot write values of dtype {value.dtype} into an array of dtype {dtype}: "
                            "the number of fields differs")
        try:
            return np.asarray(value).astype(dtype)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"cannot write values of dtype {value.dtype} into an array of dtype {dtype}: {exc}") from None
    if isinstance(value, np.ndarray) and value.dtype != object:
        raise TypeError(f"cannot write values of dtype {value.dtype} into an array of dtype {dtype}; "
                        "give a structured array or tuples of field values")
    try:
        return np.array(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise TypeError(f"cannot write the value into an array of dtype {dtype}: {exc}") from None


def _assign_numbers(value: Any, dtype: np.dtype) -> np.ndarray:
    """Python/numpy scalars (or nested lists of them) as a ``dtype`` array.

    numpy itself assigns them into a fresh array, so its NEP 50 range checks
    apply: 256 into uint8 is an OverflowError, not a silent 0.
    """
    try:
        natural = np.asarray(value)
    except ValueError as exc:
        raise TypeError(f"cannot interpret the value as an array: {exc}") from None
    if natural.dtype.kind in "SUVTmM" or (
        natural.dtype.kind == "O" and any(isinstance(v, (str, bytes)) for v in natural.flat)
    ):
        raise TypeError(f"cannot write values of dtype {natural.dtype} into an array of dtype {dtype}")
    out = np.empty(natural.shape, dtype=dtype)
    try:
        out[...] = value
    except (OverflowError, ValueError, TypeError) as exc:
        raise type(exc)(f"cannot write the value into an array of dtype {dtype}: {exc}") from None
    return out


def _coerce_variable(value: Any, data_type: DataType) -> np.ndarray:
    """A StringDType (object-of-bytes) array with every element checked."""
    want = str if data_type.is_string else bytes
    if isinstance(value, (str, bytes, np.str_, np.bytes_)):
        if not isinstance(value, want):
            raise TypeError(f"cannot write {type(value).__name__} {value!r} into a {data_type.name} array")
        out = np.empty((), dtype=data_type.numpy)
        out[()] = str(value) if isinstance(value, str) else bytes(value)
        return out
    if isinstance(value, np.ndarray) and value.dtype.kind in "TU" and data_type.is_string:
        if value.dtype == data_type.numpy:  # astype(copy=False) still copies between StringDType instances
            return value
        return value.astype(data_type.numpy)
    if isinstance(value, np.ndarray) and value.dtype.kind == "S" and not data_type.is_string:
        return value.astype(object)
    if isinstance(value, np.ndarray) and value.dtype.kind != "O":
        raise TypeError(f"cannot write values of dtype {value.dtype} into a {data_type.name} array")
    arr = value if isinstance(value, np.ndarray) else _object_array(value)
    # Raises TypeError naming the first bad element's position.
    (ArrayBytes.from_strings if data_type.is_string else ArrayBytes.from_bytes_objects)(arr)
    return arr.astype(data_type.numpy) if data_type.is_string else arr


def _object_array(value: Any) -> np.ndarray:
    try:
        arr = np.array(value, dtype=object)
    except ValueError as exc:
        raise TypeError(f"cannot interpret the value as an array: {exc}") from None
    return arr


class ElementForm:
    """How one array's elements look at the user edge, and the conversions
    between that numpy form and the pipeline's ArrayBytes.

    Fixed-size types are numpy arrays of the type; strings StringDType;
    bytes object arrays of ``bytes``; ragged numbers (numcodecs
    ``vlen-array``, ``ragged`` is the element dtype) object arrays of 1-D
    arrays at the chunk level and :class:`RaggedArray` in results.
    """

    __slots__ = ("data_type", "ragged", "fill")

    def __init__(self, data_type: DataType, fill: Any, ragged: np.dtype | None = None):
        self.data_type = data_type
        self.ragged = ragged
        self.fill = fill
        """The fill value as one element (a numpy scalar for fixed types)."""

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the elements users read and write."""
        return self.data_type.numpy

    def coerce(self, value: Any, shape: Shape) -> np.ndarray:
        """``value`` as elements broadcast to ``shape``, or a clear error
        before anything is written (numpy's assignment rules)."""
        if self.ragged is not None:
            return coerce_ragged(value, self.ragged, shape)
        return coerce_value(value, self.data_type, shape)

    def to_array_bytes(self, chunk: np.ndarray) -> ArrayBytes:
        """The ArrayBytes of a block of elements."""
        if self.ragged is not None:
            return RaggedArray.from_list(list(chunk.reshape(-1)), self.ragged, shape=chunk.shape).to_array_bytes()
        if not self.data_type.is_variable:
            return ArrayBytes.from_array(chunk)
        if chunk.dtype.kind == "T" or (chunk.dtype.kind == "O" and not self.data_type.is_string):
            return ArrayBytes.from_elements(chunk)
        return ArrayBytes.from_strings(chunk)

    def to_numpy(self, chunk: ArrayBytes) -> np.ndarray:
        """The numpy form of a decoded chunk (or part of one)."""
        if self.ragged is not None:
            return RaggedArray.from_array_bytes(chunk, self.ragged).to_object_array()
        data_type = self.data_type
        if chunk.is_fixed:
            if data_type.is_variable:
                raise CodecError(f"a fixed-size chunk was decoded for variable-length type {data_type.name!r}")
            return chunk.array
        if not data_type.is_variable:
            raise CodecError(f"a variable-length chunk was decoded for fixed-size type {data_type.name!r}")
        return chunk.to_strings() if data_type.is_string else chunk.to_bytes_objects()

    element_shape: tuple[int, ...] = ()
    """Extra last axes of a read's buffer beyond the selection's shape (none;
    see :class:`~.paired.PairedStrings`)."""

    def empty(self, shape: Shape) -> np.ndarray:
        """A new read buffer for a selection of ``shape`` (MemoryError or
        ValueError when it cannot be allocated)."""
        return np.empty(shape, dtype=self.dtype)

    @property
    def decodes_into_boxes(self) -> bool:
        """True when whole chunks may be decoded straight into their box of
        a read's buffer (:meth:`BoundChain.decode_into`)."""
        return self.reads_into_buffers

    @property
    def reads_into_buffers(self) -> bool:
        """True when a read's result is the numpy buffer it filled (so a
        caller's buffer can be filled directly): not for ragged or optional
        elements, whose results are built from the buffer."""
        return self.ragged is None and not is_optional(self.data_type)

    def fill_block(self, shape: Shape) -> Any:
        """What to assign where a missing chunk is read."""
        return self.fill if self.ragged is None else empty_elements(shape, self.ragged)

    def scalar(self, out: np.ndarray) -> Any:
        """A read's result for one element (``out`` is 0-d): the element, or
        (optional types) its inner value or ``numpy.ma.masked``."""
        return self.result(out)[()] if is_optional(self.data_type) else out[()]

    def validity(self, out: np.ndarray) -> np.ndarray:
        """(zarrs' optional types) :func:`optional_validity` of a read's elements."""
        if not is_optional(self.data_type):
            raise DataTypeError(f"data type {self.data_type.name!r} is not optional: its elements have no validity")
        return optional_validity(out, self.data_type)

    def result(self, out: np.ndarray) -> Any:
        """A read's result: ``out`` itself, a RaggedArray of its elements, or
        (zarrs' optional types) a masked array, masked where missing."""
        if is_optional(self.data_type):
            return optional_result(out, self.data_type)
        if self.ragged is None:
            return out
        return RaggedArray.from_list(list(out.reshape(-1)), self.ragged, shape=out.shape)


def empty_elements(shape: Shape, dtype: np.dtype) -> np.ndarray:
    """An object array of empty 1-D arrays: the fill of a ragged array."""
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = np.empty(0, dtype=dtype)
    return out


def coerce_ragged(value: Any, dtype: np.dtype, shape: Shape) -> np.ndarray:
    """An object array of 1-D ``dtype`` arrays broadcast to ``shape``.

    ``value`` is read as elements by :func:`ragged_elements` and then
    broadcast as numpy broadcasts an object array of vectors: a 2-D numeric
    array written to two positions gives one row to each. Each element is
    cast as :func:`coerce_value` casts: a numpy array as numpy casts it, a
    list of Python numbers under numpy's range checks (``[1, 256]`` into
    uint8 is an OverflowError).
    """
    arr = ragged_elements(value, dtype)
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise BroadcastError(
            f"a ragged value of {arr.size} element(s) in outer shape {arr.shape} cannot be broadcast to the "
            f"selection shape {shape} (a numeric array gives one element per row along its last axis)"
        ) from None


def ragged_rows(value: Any, dtype: np.dtype) -> np.ndarray:
    """A ragged value in its own outer shape (what ``append`` adds), read as
    :func:`ragged_elements` reads it; one bare vector is refused, since
    ``append`` adds positions and a vector fills one."""
    rows = ragged_elements(value, dtype)
    if rows.ndim == 0:
        raise DataTypeError("append adds elements along an axis, got one vector; "
                            "wrap it in a list ([[1, 2, 3]]) to append one element")
    return rows


def ragged_elements(value: Any, dtype: np.dtype, position: tuple[int, ...] = ()) -> np.ndarray:
    """A ragged value as an object array of 1-D ``dtype`` arrays, in the
    value's own outer shape.

    - a :class:`RaggedArray` or an object array: its elements, in its shape
      (``None`` is an empty vector, as numcodecs reads it);
    - a numeric numpy array: one element per row along its last axis, so a
      1-D array is one element and an ``(n, k)`` array n elements;
    - a list (tuple, range) of numbers: one element; ``None``: one empty
      element; any other list: its items read the same way, each giving the
      same outer shape, stacked (``[[1, 2], [3]]`` is two elements);
    - a number, a string or anything else: DataTypeError naming where it is,
      since an element must be a 1-D sequence of numbers.
    """
    if isinstance(value, RaggedArray):
        return value.astype(dtype).to_object_array()
    if hasattr(value, "__array__") and not isinstance(value, (np.ndarray, np.generic)):
        value = np.asarray(value)  # e.g. another zarrpy Array
    if isinstance(value, np.ndarray):
        return _ragged_from_numpy(value, dtype, position)
    if value is None or _is_vector(value):
        return _one(_ragged_element(value, dtype, position))
    if not isinstance(value, (list, tuple)):
        raise _not_an_element(value, dtype, position)
    vectors = [_as_vector(item, dtype) for item in value]
    if all([v is not None for v in vectors]):  # the usual list of vectors
        out = np.empty(len(vectors), dtype=object)
        for i, v in enumerate(vectors):
            out[i] = v
        return out
    return _stack([_one(v) if v is not None else ragged_elements(item, dtype, (*position, i))
                   for i, (item, v) in enumerate(zip(value, vectors))], position)


def _stack(parts: list[np.ndarray], position: tuple[int, ...]) -> np.ndarray:
    """The items' elements (object arrays of one outer shape) stacked along a new first axis."""
    for i, part in enumerate(parts[1:], 1):
        if part.shape != parts[0].shape:
            raise DataTypeError(
                f"a ragged value's items must give one outer shape: item {(*position, 0)} holds elements of shape "
                f"{parts[0].shape}, item {(*position, i)} of shape {part.shape}"
            )
    out = np.empty((len(parts), *parts[0].shape), dtype=object)
    for i, part in enumerate(parts):
        out[i, ...] = part
    return out


def _ragged_from_numpy(value: np.ndarray, dtype: np.dtype, position: tuple[int, ...]) -> np.ndarray:
    """Elements of a numpy value: an object array's items, or a numeric array's rows."""
    if value.dtype == object:
        out = np.empty(value.shape, dtype=object)
        flat_out, flat_in = out.reshape(-1), value.reshape(-1)
        for i in range(flat_in.size):
            flat_out[i] = _ragged_element(flat_in[i], dtype, (*position, *_position(i, value.shape)))
        return out
    if value.dtype.kind not in "biufc":
        raise DataTypeError(f"cannot write values of dtype {value.dtype} into a ragged {dtype} array "
                            "(its elements are vectors of numbers)")
    if value.ndim == 0:
        raise _not_an_element(value[()], dtype, position)
    if value.ndim == 1:
        return _one(_cast(value, dtype))
    outer = value.shape[:-1]
    offsets = np.arange(math.prod(outer) + 1, dtype=np.int64) * value.shape[-1]
    return RaggedArray(offsets, _cast(value, dtype).reshape(-1), shape=outer).to_object_array()


def _is_vector(value: Any) -> bool:
    """True for a list, tuple or range of numbers only (empty included): one element."""
    return isinstance(value, (list, tuple, range)) and all(_is_number(v) for v in value)


def _is_number(value: Any) -> bool:
    if isinstance(value, (int, float, complex)):  # the usual case first: bool, int, float
        return True
    if isinstance(value, (np.ndarray, np.generic)):
        return value.ndim == 0 and value.dtype.kind in "biufc"
    return isinstance(value, numbers.Number)


def _one(element: np.ndarray) -> np.ndarray:
    """A 0-d object array holding ``element``."""
    out = np.empty((), dtype=object)
    out[()] = element
    return out


def _as_vector(item: Any, dtype: np.dtype) -> np.ndarray | None:
    """``item`` as one 1-D ``dtype`` vector when it is one (``None``: empty;
    a 1-D numeric array; a list of numbers), else None."""
    if item is None:
        return np.empty(0, dtype=dtype)
    if isinstance(item, np.ndarray):
        return _cast(item, dtype) if item.ndim == 1 and item.dtype.kind in "biufc" else None
    return _assign_numbers(item, dtype) if _is_vector(item) else None


def _ragged_element(item: Any, dtype: np.dtype, position: tuple[int, ...]) -> np.ndarray:
    """One element as a 1-D ``dtype`` vector, or DataTypeError naming ``position``."""
    vector = _as_vector(item, dtype)
    if vector is None:
        raise _not_an_element(item, dtype, position)
    return vector


def _not_an_element(item: Any, dtype: np.dtype, position: tuple[int, ...]) -> DataTypeError:
    """The error for a ragged element that is not a 1-D sequence of numbers."""
    if isinstance(item, np.ndarray):
        got = f"an array of dtype {item.dtype} and shape {item.shape}"
    else:
        got = f"{type(item).__name__} {_short(item)}"
    where = f" (at position {position} of the value)" if position else ""
    hint = f" (write [{_short(item)}] for a vector of one number)" if _is_number(item) else ""
    return DataTypeError(f"cannot write {got}{where} as an element of a ragged {dtype} array: an element "
                         f"is a 1-D sequence of numbers{hint}")


def _short(item: Any) -> str:
    text = repr(item)
    return text if len(text) <= 40 else text[:37] + "..."


def _position(i: int, shape: Shape) -> tuple[int, ...]:
    """The N-d position of flat item ``i`` (C order)."""
    return tuple(int(p) for p in np.unravel_index(i, shape)) if shape else ()
