"""Variable-length layouts to and from numpy arrays, with no Python object per element.

Two layouts of n variable-length elements meet numpy here:

- *interleaved* (numcodecs' VLen, ``vlen-utf8``/``vlen-bytes``/``zarrs.vlen_v2``):
  ``[n: u32 LE]`` then per element ``[nbytes: u32 LE][bytes]``;
- *offsets* (:class:`~zarrpy.core.array_bytes.ArrayBytes`, ``zarrs.vlen``):
  int64 ``offsets[n + 1]`` and the elements' bytes joined.

and three numpy forms: ``StringDType`` arrays (UTF-8 strings; with an
``na_object``, missing ones too), object arrays of ``bytes``, and the
offsets themselves. The work is done by the compiled module
``zarrpy.core._cstrings`` (C against numpy's ``NpyString`` API, the GIL
released for the byte work) when it was built, else by its pure-Python twin
:mod:`zarrpy.core._vlen_python` (numcodecs' loops and numpy); both give the
same results and the same errors, which are raised here. Setting the
environment variable ``ZARRPY_PURE_PYTHON`` to anything but ``""``/``0``
before zarrpy is imported forces the pure-Python path.

:data:`IMPLEMENTATION` says which one is in use (``zarrpy --version`` and
``zarrpy info`` print it).

>>> import numpy as np
>>> s = np.array(["a", "βγ", ""], dtype=np.dtypes.StringDType())
>>> buf = strings_to_interleaved(s, codec="vlen-utf8")
>>> out = np.empty(3, dtype=s.dtype)
>>> strings_from_interleaved(buf, out, codec="vlen-utf8")
>>> out.tolist()
['a', 'βγ', '']
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import numpy as np

from . import _vlen_python
from ..errors import ChunkDecodeError, CodecError

ENV_PURE_PYTHON = "ZARRPY_PURE_PYTHON"
"""The environment variable that forces the pure-Python converters."""


def _load() -> tuple[ModuleType, str]:
    if os.environ.get(ENV_PURE_PYTHON, "") not in ("", "0"):
        return _vlen_python, f"pure Python ({ENV_PURE_PYTHON} is set)"
    try:
        from . import _cstrings  # type: ignore[attr-defined]
    except Exception as exc:  # not built, or built for another numpy/Python: never a failure
        return _vlen_python, f"pure Python (the compiled string converter is not available: {exc})"
    return _cstrings, "compiled (zarrpy.core._cstrings)"


_impl, _how = _load()
IMPLEMENTATION = _how
"""``"compiled (...)"`` or ``"pure Python (why)"``: how strings convert here."""
COMPILED = _impl is not _vlen_python
"""True when the compiled module is in use."""


def implementation() -> ModuleType:
    """The module doing the work (``_cstrings`` or ``_vlen_python``)."""
    return _impl


# -- decoding: interleaved ------------------------------------------------------


def strings_from_interleaved(
    buf: Any, out: np.ndarray, *, codec: str, mask: np.ndarray | None = None, allow_trailing: bool = True,
    flags: np.ndarray | None = None,
) -> None:
    """Fill the StringDType array ``out`` (any shape and strides, C order)
    from an interleaved buffer of ``out.size`` elements, or, with ``mask``
    (bool, one per element of ``out``), of the elements where it is True:
    the others become missing (``out``'s ``na_object``) or ``""``. With
    ``flags`` (a StringDType array of ``out``'s size, maybe a view of the
    same array), each element's flag is set too: ``""`` where it is
    present, ``"\\x00"`` where it is missing (see :func:`nonempty`).

    Raises ChunkDecodeError naming ``codec`` when the count differs, a
    length runs past the buffer, an element is not UTF-8 or (unless
    ``allow_trailing``, as numcodecs does) bytes trail the last element.
    ``out`` may then be partly filled.
    """
    flat_mask = None if mask is None else np.ascontiguousarray(mask, dtype=bool).reshape(-1)
    has_na = hasattr(out.dtype, "na_object")
    failure = _impl.interleaved_to_strings(buf, out, flat_mask, allow_trailing, has_na, flags)
    if failure is not None:
        raise ChunkDecodeError(_decode_message(codec, failure))


def bytes_from_interleaved(buf: Any, n: int, *, codec: str, allow_trailing: bool = True) -> np.ndarray:
    """The n elements of an interleaved buffer as a 1-D object array of
    ``bytes``. Errors as :func:`strings_from_interleaved`."""
    got = _impl.interleaved_to_bytes(buf, n, allow_trailing)
    if isinstance(got, tuple):
        raise ChunkDecodeError(_decode_message(codec, got))
    result: np.ndarray = got
    return result


def offsets_from_interleaved(buf: Any, n: int, *, codec: str, allow_trailing: bool = False) -> tuple[np.ndarray, bytes]:
    """``(offsets, data)`` of an interleaved buffer of n elements: offsets
    int64 (n+1, from 0), data the element bytes joined. Errors as
    :func:`strings_from_interleaved`; trailing bytes are refused by default."""
    got = _impl.interleaved_to_offsets(buf, n, allow_trailing)
    if isinstance(got[0], int):
        raise ChunkDecodeError(_decode_message(codec, got))
    offsets, data = got
    return offsets, data


# -- decoding: offsets ------------------------------------------------------------


def strings_from_offsets(offsets: np.ndarray, data: Any, out: np.ndarray) -> None:
    """Fill the StringDType array ``out`` with the elements
    ``data[offsets[i]:offsets[i+1]]`` (``out.size`` of them). Raises
    CodecError naming the element that is not UTF-8, or where the offsets
    decrease or leave the data."""
    failure = _impl.offsets_to_strings(offsets, data, out)
    if failure is not None:
        raise CodecError(_offsets_message(failure, "string element"))


def bytes_from_offsets(offsets: np.ndarray, data: Any) -> np.ndarray:
    """The elements ``data[offsets[i]:offsets[i+1]]`` as a 1-D object array of ``bytes``."""
    got = _impl.offsets_to_bytes(offsets, data, len(offsets) - 1)
    if isinstance(got, tuple):
        raise CodecError(_offsets_message(got, "element"))
    result: np.ndarray = got
    return result


# -- encoding ---------------------------------------------------------------------


def strings_to_interleaved(arr: np.ndarray, *, codec: str, mask: np.ndarray | None = None) -> bytes:
    """The interleaved bytes of a StringDType array's elements (C order;
    with ``mask``, only those where it is True). Raises CodecError naming
    ``codec`` for a missing (NA) element or more than 2**32-1 elements or
    bytes in one element."""
    got = _impl.strings_to_interleaved(arr, _flat_mask(mask))
    if isinstance(got, tuple):
        raise CodecError(_encode_message(codec, got, arr))
    result: bytes = got
    return result


def strings_to_offsets(arr: np.ndarray, *, mask: np.ndarray | None = None) -> tuple[np.ndarray, bytes]:
    """``(offsets, data)`` of a StringDType array's UTF-8 elements (C order;
    with ``mask``, only those where it is True). TypeError names a missing
    (NA) element."""
    got = _impl.strings_to_offsets(arr, _flat_mask(mask))
    if isinstance(got[0], int):
        raise TypeError(_encode_message("string", got, arr).split(": ", 1)[1])
    offsets, data = got
    return offsets, data


def bytes_to_interleaved(arr: np.ndarray, *, codec: str) -> bytes:
    """The interleaved bytes of an object array of ``bytes`` (C order).
    TypeError names the first element that is not ``bytes``; CodecError
    (naming ``codec``) too many elements or one too long."""
    got = _impl.bytes_to_interleaved(arr)
    if isinstance(got, tuple):
        if got[0] == _vlen_python.E_NOT_TYPE:
            raise TypeError(_type_message(arr, got[1], bytes))
        raise CodecError(_encode_message(codec, got, arr))
    result: bytes = got
    return result


def bytes_to_offsets(arr: np.ndarray) -> tuple[np.ndarray, bytes]:
    """``(offsets, data)`` of an object array of bytes-like elements
    (``bytes``, ``bytearray``, ``memoryview``); TypeError names the first
    element that is none of them."""
    got = _impl.bytes_to_offsets(arr)
    if isinstance(got[0], int):
        raise TypeError(_type_message(arr, got[1], (bytes, bytearray, memoryview)))
    offsets, data = got
    return offsets, data


def offsets_to_interleaved(offsets: np.ndarray, data: Any, *, codec: str) -> bytes:
    """The interleaved bytes of the elements ``data[offsets[i]:offsets[i+1]]``
    (offsets need not start at 0). CodecError naming ``codec`` for more than
    2**32-1 elements or bytes in one, or offsets that decrease."""
    offsets = np.asarray(offsets, dtype=np.int64)
    got = _impl.offsets_to_interleaved(offsets, data, len(offsets) - 1)
    if isinstance(got, tuple):
        if got[0] == _vlen_python.E_OFFSETS:
            raise CodecError(f"codec {codec!r}: " + _offsets_message(got, "element"))
        raise CodecError(_encode_message(codec, got, None))
    result: bytes = got
    return result


def nonempty(arr: np.ndarray) -> np.ndarray:
    """Bool of ``arr``'s shape: which elements of a StringDType array are not
    ``""`` (nor missing)."""
    result: np.ndarray = _impl.nonempty(arr)
    return result.reshape(arr.shape)


def split_missing(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(plain, present)`` of a StringDType array with an ``na_object``:
    ``plain`` a new plain StringDType array of its shape (``""`` where an
    element is missing), ``present`` bool of its shape."""
    plain = np.empty(values.shape, dtype=np.dtypes.StringDType())
    present: np.ndarray = _impl.split_missing(values, plain)
    return plain, present.reshape(values.shape)


# -- messages ------------------------------------------------------------------------


def _flat_mask(mask: np.ndarray | None) -> np.ndarray | None:
    return None if mask is None else np.ascontiguousarray(mask, dtype=bool).reshape(-1)


def _decode_message(codec: str, failure: tuple[int, int, int]) -> str:
    code, index, value = failure
    p = _vlen_python
    what = {
        p.E_SHORT: f"{value} bytes is too short for the element count",
        p.E_COUNT: f"header says {index} elements, the chunk has {value}",
        p.E_TRUNCATED: f"corrupt buffer, data seem truncated: {value} bytes cannot hold {index} elements",
        p.E_PREFIX_PAST: f"corrupt buffer, data seem truncated at element {index} of {value}",
        p.E_DATA_PAST: f"element {index} runs past the end of the buffer ({value} bytes)",
        p.E_UTF8: f"element {index} is not valid UTF-8",
        p.E_TRAILING: f"{value} bytes trail the last element",
    }.get(code, f"malformed buffer (code {code} at element {index})")
    return f"codec {codec!r}: {what}"


def _offsets_message(failure: tuple[int, int, int], noun: str) -> str:
    code, index, value = failure
    if code == _vlen_python.E_UTF8:
        return f"{noun} {index} is not valid UTF-8"
    return f"variable chunk offset {index} ({value}) decreases or lies outside the data"


def _encode_message(codec: str, failure: tuple[int, int, int], arr: np.ndarray | None) -> str:
    code, index, value = failure
    p = _vlen_python
    if code == p.E_MISSING:
        pos = _position(arr, index) if arr is not None else index
        return f"codec {codec!r}: element at position {pos} is missing (no string to store)"
    if code == p.E_TOO_MANY:
        return f"codec {codec!r}: cannot encode {index} elements; at most {2**32 - 1} fit the header"
    if code == p.E_TOO_LONG:
        return f"codec {codec!r}: an element of {value} bytes is longer than {2**32 - 1}"
    return f"codec {codec!r}: cannot encode (code {code} at element {index})"


def _position(arr: np.ndarray, flat_index: int) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat_index, arr.shape)) if arr.shape else ()


def _type_message(arr: np.ndarray, flat_index: int, types: type | tuple[type, ...]) -> str:
    """As :func:`zarrpy.core.array_bytes` words a wrong element type."""
    item = arr[np.unravel_index(flat_index, arr.shape)] if arr.shape else arr[()]
    names = types.__name__ if isinstance(types, type) else "/".join(t.__name__ for t in types)
    return f"element at position {_position(arr, flat_index)} is {type(item).__name__} {item!r}, expected {names}"


__all__ = [
    "COMPILED",
    "ENV_PURE_PYTHON",
    "IMPLEMENTATION",
    "bytes_from_interleaved",
    "bytes_from_offsets",
    "bytes_to_interleaved",
    "bytes_to_offsets",
    "nonempty",
    "offsets_from_interleaved",
    "offsets_to_interleaved",
    "split_missing",
    "strings_from_interleaved",
    "strings_from_offsets",
    "strings_to_interleaved",
    "strings_to_offsets",
]
