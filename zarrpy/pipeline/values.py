"""Values at the array edge: user input -> typed numpy, numpy <-> ArrayBytes.

Conversions between Python/numpy values and the pipeline's ArrayBytes happen
here and only here, once per chunk. Bad input is refused with a clear
TypeError before anything is written.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core._typing import Shape
from ..core.array_bytes import ArrayBytes
from ..core.dtypes import DataType
from ..errors import CodecError, SelectionError
from ..metadata.v3 import ArrayMetadataV3
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
    if data_type.is_variable:
        arr = _coerce_variable(value, data_type)
    elif dtype.kind in "biufc" and (not isinstance(value, np.ndarray) or value.dtype == object):
        arr = _assign_numbers(value, dtype)  # Python objects: numpy's element-wise assignment
    else:
        arr = _cast(np.asarray(value), dtype)
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise SelectionError(f"value of shape {arr.shape} cannot be broadcast to the selection shape {shape}") from None


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
        value = want(value)
        out = np.empty((), dtype=data_type.numpy)
        out[()] = value
        return out
    if isinstance(value, np.ndarray) and value.dtype.kind in "TU" and data_type.is_string:
        return value.astype(data_type.numpy, copy=False)
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


def from_numpy(chunk: np.ndarray, data_type: DataType, ragged: np.dtype | None = None) -> ArrayBytes:
    """The ArrayBytes of a whole chunk (variable form for strings/bytes, and
    for the 1-D ``ragged`` element arrays of a ragged array's object chunk)."""
    if ragged is not None:
        return RaggedArray.from_list(list(chunk.reshape(-1)), ragged, shape=chunk.shape).to_array_bytes()
    if not data_type.is_variable:
        return ArrayBytes.from_array(chunk)
    if data_type.is_string:
        return ArrayBytes.from_strings(chunk)
    return ArrayBytes.from_bytes_objects(chunk)


def to_numpy(chunk: ArrayBytes, data_type: DataType) -> np.ndarray:
    """The numpy form of a decoded chunk (StringDType / object for vlen)."""
    if chunk.is_fixed:
        if data_type.is_variable:
            raise CodecError(f"a fixed-size chunk was decoded for variable-length type {data_type.name!r}")
        return chunk.array
    if not data_type.is_variable:
        raise CodecError(f"a variable-length chunk was decoded for fixed-size type {data_type.name!r}")
    return chunk.to_strings() if data_type.is_string else chunk.to_bytes_objects()


def fill_scalar(metadata: ArrayMetadataV3) -> Any:
    fill = metadata.fill_value
    dtype = metadata.data_type.numpy
    if metadata.data_type.is_variable:
        return fill
    if dtype.kind == "V":
        return np.frombuffer(bytes(fill), dtype=dtype)[0]
    return np.asarray(fill, dtype=dtype)[()]


def all_equal(chunk: np.ndarray, fill: Any) -> bool:
    """True if every element equals ``fill`` bit for bit (NaN payloads, -0.0 too)."""
    if chunk.dtype.kind in "TO":
        return bool(np.all(chunk == fill))
    fill_bytes = np.asarray(fill, dtype=chunk.dtype).reshape(1)
    itemsize = chunk.dtype.itemsize
    if itemsize in (1, 2, 4, 8) and chunk.dtype.kind != "V":
        view = np.dtype(f"u{itemsize}")
        return bool(np.all(chunk.reshape(-1).view(view) == fill_bytes.view(view)[0]))
    return bool(np.all(chunk.reshape(-1).view(np.uint8).reshape(-1, itemsize) == fill_bytes.view(np.uint8)))


def empty_elements(shape: Shape, dtype: np.dtype) -> np.ndarray:
    """An object array of empty 1-D arrays: the fill of a ragged array."""
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = np.empty(0, dtype=dtype)
    return out


def coerce_ragged(value: Any, dtype: np.dtype, shape: Shape) -> np.ndarray:
    """An object array of 1-D ``dtype`` arrays broadcast to ``shape``.

    Each element is cast as :func:`coerce_value` casts: a numpy array as
    numpy casts it, a list of Python numbers under numpy's range checks
    (``[1, 256]`` into uint8 is an OverflowError).
    """
    if isinstance(value, RaggedArray):
        arr = value.astype(dtype).to_object_array()
    elif isinstance(value, np.ndarray) and value.dtype != object:
        arr = np.empty((), dtype=object)  # a single element
        arr[()] = value.astype(dtype).reshape(-1)
    else:
        items = list(value) if not isinstance(value, np.ndarray) else list(value.reshape(-1))
        arr = np.empty(len(items), dtype=object)
        for i, item in enumerate(items):
            arr[i] = _ragged_element(item, dtype, i)
        if isinstance(value, np.ndarray):
            arr = arr.reshape(value.shape)
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise SelectionError(f"value of shape {arr.shape} cannot be broadcast to the selection shape {shape}") from None


def _ragged_element(item: Any, dtype: np.dtype, i: int) -> np.ndarray:
    """Element ``i`` of a ragged value as a 1-D ``dtype`` array, or TypeError."""
    bad = TypeError(f"element at position {i} of a ragged array must be a 1-D numeric array")
    try:
        if isinstance(item, np.ndarray) and item.dtype.kind not in "biufc":
            raise bad
        element = _cast(item, dtype) if isinstance(item, np.ndarray) else _assign_numbers(item, dtype)
    except TypeError:
        raise bad from None
    if element.ndim != 1:
        raise bad
    return element
