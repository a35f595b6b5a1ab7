"""ArrayBytes: the one representation of a chunk inside the codec pipeline.

A chunk is either

- **fixed**: one C-contiguous numpy array of a fixed-size dtype (so "bytes"
  are ``array.data``, and a numeric numpy array converts without a copy), or
- **variable**: ``offsets`` (int64, n+1 entries, non-decreasing, starting at
  0) and ``data`` (bytes); element *i* is ``data[offsets[i]:offsets[i+1]]``.

Codecs never see Python object arrays. Conversion to and from user-facing
numpy arrays happens once, at the array layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from . import vlen_kernels
from ._typing import Shape
from .selection import Points, flat_positions, numpy_index
from ..errors import CodecError

BytesLike: TypeAlias = bytes | bytearray | memoryview


class ArrayBytes:
    """A chunk's elements, fixed-size or variable-length, with its shape."""

    __slots__ = ("shape", "_array", "_offsets", "_data", "_elements")

    def __init__(
        self,
        shape: Shape,
        array: np.ndarray | None = None,
        offsets: np.ndarray | None = None,
        data: bytes | None = None,
        elements: np.ndarray | None = None,
    ) -> None:
        """Internal: build chunks with the checked constructors (:meth:`fixed`,
        :meth:`from_array`, :meth:`variable`, :meth:`from_elements`, ...); this
        one trusts its arguments and is called only inside this module."""
        self.shape: Shape = tuple(int(s) for s in shape)
        self._array: np.ndarray | None = array
        self._offsets: np.ndarray | None = offsets
        self._data: bytes | None = data
        # Variable elements as numpy (StringDType / object of bytes), when a
        # chunk was made from or decoded to them: offsets and data are then
        # built on first use, so numpy in, numpy out costs no conversion.
        self._elements: np.ndarray | None = elements

    # -- constructors --------------------------------------------------
    @classmethod
    def fixed(cls, buffer: BytesLike | np.ndarray, shape: Shape, dtype: npt.DTypeLike) -> ArrayBytes:
        """Wrap a contiguous buffer of ``prod(shape)`` elements of ``dtype``."""
        dtype = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        expected = n * dtype.itemsize
        view = np.frombuffer(buffer, dtype=np.uint8) if not isinstance(buffer, np.ndarray) else buffer
        if view.nbytes != expected:
            raise CodecError(
                f"fixed chunk of shape {tuple(shape)} and dtype {dtype} needs {expected} bytes, "
                f"got {view.nbytes}"
            )
        arr = view.reshape(-1).view(np.uint8).view(dtype).reshape(shape)
        return cls(shape, array=arr)

    @classmethod
    def from_array(cls, array: np.ndarray) -> ArrayBytes:
        """Wrap a fixed-size numpy array; copies only if not C-contiguous."""
        if array.dtype.hasobject:
            raise CodecError("object arrays must be converted to variable form first")
        # np.ascontiguousarray would turn a 0-d array into shape (1,).
        return cls(array.shape, array=array if array.flags.c_contiguous else array.copy(order="C"))

    @classmethod
    def from_elements(cls, elements: np.ndarray, *, trusted: bool = False) -> ArrayBytes:
        """A variable chunk of numpy elements: StringDType (UTF-8 strings) or
        an object array of ``bytes``. Offsets and data are built on first use.

        Raises TypeError for any other dtype, or (object arrays) naming the
        first element that is not ``bytes`` -- unless ``trusted`` (a decoder
        that made every element a ``bytes`` itself).
        """
        if elements.dtype.kind == "O":
            if not trusted:
                _check_types(elements.reshape(-1).tolist(), bytes, elements.shape)
        elif elements.dtype.kind != "T":
            raise TypeError(f"variable elements must be StringDType or object bytes, not {elements.dtype}")
        return cls(elements.shape, elements=elements)

    @classmethod
    def variable(cls, offsets: npt.ArrayLike, data: BytesLike, shape: Shape) -> ArrayBytes:
        """Wrap Arrow-style ``offsets`` (n+1) and ``data``; checks the offsets."""
        offsets = np.asarray(offsets, dtype=np.int64)
        data = bytes(data) if not isinstance(data, bytes) else data
        n = int(np.prod(shape, dtype=np.int64))
        if offsets.ndim != 1 or offsets.shape[0] != n + 1:
            raise CodecError(f"variable chunk of {n} elements needs {n + 1} offsets, got {offsets.size}")
        if offsets[0] != 0:
            raise CodecError(f"variable chunk offsets must start at 0, got {int(offsets[0])}")
        if n and np.any(np.diff(offsets) < 0):
            raise CodecError("variable chunk offsets decrease")
        if offsets[-1] != len(data):
            raise CodecError(
                f"variable chunk offsets end at {int(offsets[-1])} but data has {len(data)} bytes"
            )
        return cls(shape, offsets=offsets, data=data)

    # -- accessors -----------------------------------------------------
    @property
    def is_fixed(self) -> bool:
        """True for a fixed-size chunk (:attr:`array`), False for a variable one (:attr:`offsets`, :attr:`data`)."""
        return self._array is not None

    @property
    def array(self) -> np.ndarray:
        """The elements of a fixed chunk as a C-contiguous numpy array."""
        if self._array is None:
            raise CodecError("a variable-length chunk has no fixed-size array view")
        return self._array

    @property
    def elements(self) -> np.ndarray | None:
        """The numpy elements a variable chunk was made from, if any."""
        return self._elements

    def _materialise(self) -> None:
        """Offsets and data of a chunk made from numpy elements."""
        if self._offsets is None and self._elements is not None:
            e = self._elements
            if e.dtype.kind == "T":
                self._offsets, self._data = vlen_kernels.strings_to_offsets(e)
            else:
                self._offsets, self._data = vlen_kernels.bytes_to_offsets(e)

    @property
    def offsets(self) -> np.ndarray:
        """A variable chunk's int64 offsets into :attr:`data` (n+1 of them); CodecError for a fixed chunk."""
        self._materialise()
        if self._offsets is None:
            raise CodecError("a fixed-size chunk has no offsets")
        return self._offsets

    @property
    def data(self) -> bytes:
        """A variable chunk's elements, concatenated; CodecError for a fixed chunk."""
        self._materialise()
        if self._data is None:
            raise CodecError("a fixed-size chunk has no variable data")
        return self._data

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        """Bytes of element payload (excluding offsets)."""
        return self._array.nbytes if self._array is not None else len(self.data)

    @classmethod
    def concatenate(cls, parts: list[ArrayBytes]) -> ArrayBytes:
        """The elements of ``parts`` one after another, as a 1-D chunk.

        All parts must have the same form (and dtype, when fixed).
        """
        if not parts:
            raise CodecError("cannot concatenate no chunks")
        if all(p.is_fixed for p in parts):
            return cls.from_array(np.concatenate([p.array.reshape(-1) for p in parts]))
        if any(p.is_fixed for p in parts):
            raise CodecError("cannot concatenate fixed-size and variable-length chunks")
        sizes = [p.size for p in parts]
        offsets = np.zeros(sum(sizes) + 1, dtype=np.int64)
        pos, base = 0, 0
        for p, n in zip(parts, sizes):
            offsets[pos + 1 : pos + n + 1] = p.offsets[1:] + base
            pos += n
            base += len(p.data)
        return cls((pos,), offsets=offsets, data=b"".join(p.data for p in parts))

    def reshape(self, shape: Shape) -> ArrayBytes:
        """The same elements (C order) under a new shape of equal size."""
        if self._array is not None:
            return ArrayBytes(shape, array=self._array.reshape(shape))
        if self._elements is not None:
            return ArrayBytes(shape, elements=self._elements.reshape(shape))
        return ArrayBytes(shape, offsets=self._offsets, data=self._data)

    def select(self, selection: tuple[slice | np.ndarray, ...] | Points) -> ArrayBytes:
        """The orthogonal ``selection`` of this chunk (per dimension a slice
        with a positive step or a 1-D integer array, like ``chunk[np.ix_(...)]``),
        or the 1-D run of elements at :class:`~zarrpy.core.selection.Points`."""
        if self._array is not None:
            return ArrayBytes.from_array(self._array[numpy_index(selection, self.shape)] if selection else self._array)
        if not selection:
            return self
        flat = flat_positions(selection, self.shape)
        return self.take(flat.reshape(-1), flat.shape)

    def take(self, flat_indices: np.ndarray, shape: Shape) -> ArrayBytes:
        """Gather elements by flat C-order index into a chunk of ``shape``."""
        if self._array is not None:
            return ArrayBytes(shape, array=self._array.reshape(-1)[flat_indices].reshape(shape))
        if self._elements is not None:
            return ArrayBytes(shape, elements=self._elements.reshape(-1)[flat_indices].reshape(shape))
        starts = self.offsets[:-1][flat_indices]
        lengths = self.offsets[1:][flat_indices] - starts
        new_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=new_offsets[1:])
        src = np.frombuffer(self.data, dtype=np.uint8)
        if len(lengths):
            # Vectorised gather of byte runs: index of every byte to copy.
            total = int(new_offsets[-1])
            run_starts = np.repeat(starts - new_offsets[:-1], lengths)
            idx = np.arange(total, dtype=np.int64) + run_starts
            data = src[idx].tobytes()
        else:
            data = b""
        return ArrayBytes(shape, offsets=new_offsets, data=data)

    # -- variable-length conversions (used once, at the array edge) ---------
    @classmethod
    def from_strings(cls, array: np.ndarray) -> ArrayBytes:
        """UTF-8 variable chunk from an array of ``str`` (StringDType or object).

        Raises TypeError naming the first element that is not a ``str``.
        """
        if array.dtype.kind == "T":
            offsets, data = vlen_kernels.strings_to_offsets(array)
            return cls(array.shape, offsets=offsets, data=data)
        items = array.reshape(-1).tolist()
        _check_types(items, str, array.shape)
        joined = "".join(items)
        if joined.isascii():
            lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
            return cls._from_lengths(lengths, joined.encode("ascii"), array.shape)
        try:
            encoded = [s.encode("utf-8") for s in items]
        except UnicodeEncodeError as exc:
            raise TypeError(f"string cannot be encoded as UTF-8: {exc}") from None
        return cls.from_bytes_list(encoded, array.shape)

    @classmethod
    def from_bytes_objects(cls, array: np.ndarray) -> ArrayBytes:
        """Variable chunk from an array of ``bytes``; TypeError names a non-bytes element."""
        offsets, data = vlen_kernels.bytes_to_offsets(array)
        return cls(array.shape, offsets=offsets, data=data)

    @classmethod
    def from_bytes_list(cls, items: Sequence[BytesLike], shape: Shape) -> ArrayBytes:
        """Variable chunk from a flat list of bytes-like elements (C order)."""
        lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
        return cls._from_lengths(lengths, b"".join(items), shape)

    @classmethod
    def _from_lengths(cls, lengths: np.ndarray, data: bytes, shape: Shape) -> ArrayBytes:
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls(shape, offsets=offsets, data=data)

    def to_bytes_list(self) -> list[bytes]:
        """The elements of a variable chunk as a flat list of ``bytes``."""
        o = self.offsets.tolist()
        data = self.data
        return [data[a:b] for a, b in zip(o[:-1], o[1:])]

    def to_strings(self) -> np.ndarray:
        """A StringDType array of the UTF-8 elements; CodecError if not UTF-8."""
        if self._elements is not None and self._elements.dtype.kind == "T":
            return self._elements
        out = np.empty(self.shape, dtype=np.dtypes.StringDType())
        vlen_kernels.strings_from_offsets(self.offsets, self.data, out)
        return out

    def to_bytes_objects(self) -> np.ndarray:
        """An object array of the ``bytes`` elements."""
        if self._elements is not None and self._elements.dtype.kind == "O":
            return self._elements
        return vlen_kernels.bytes_from_offsets(self.offsets, self.data).reshape(self.shape)

    def __repr__(self) -> str:
        form = f"fixed {self._array.dtype}" if self._array is not None else "variable"
        if self._elements is not None:
            return f"<ArrayBytes variable elements {self._elements.dtype} shape={self.shape}>"
        return f"<ArrayBytes {form} shape={self.shape} nbytes={self.nbytes}>"


def _check_types(items: list[Any], types: type | tuple[type, ...], shape: Shape) -> None:
    """TypeError naming the first element (by N-d position) not of ``types``."""
    for i, item in enumerate(items):
        if not isinstance(item, types):
            pos = tuple(int(p) for p in np.unravel_index(i, shape)) if shape else ()
            names = types.__name__ if isinstance(types, type) else "/".join(t.__name__ for t in types)
            raise TypeError(f"element at position {pos} is {type(item).__name__} {item!r}, expected {names}")


__all__ = ["ArrayBytes"]
