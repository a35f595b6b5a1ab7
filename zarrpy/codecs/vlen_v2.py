"""Interleaved variable-length array-to-bytes codecs: numcodecs' VLen layout.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/vlen-utf8
(and ``vlen-bytes``); https://codec.zarrs.dev/array_to_bytes/vlen_v2
V3 names: ``vlen-utf8`` (``string`` data), ``vlen-bytes`` (bytes data),
``zarrs.vlen_v2`` (any variable-length type; aliases ``vlen_v2`` and
``https://codec.zarrs.dev/array_to_bytes/vlen_v2``).
V2 ids: ``vlen-utf8``, ``vlen-bytes``, and ``vlen-array`` (see
:func:`decode_vlen_array`).

Layout of a chunk of n elements (C order of the chunk as stored)::

    [n: u32 LE] then per element [nbytes: u32 LE][nbytes bytes]

The three codecs write the same bytes; they differ only in their name and the
data types they accept. So a V2 chunk written by numcodecs is read as it is,
without re-encoding. The configuration is always empty: ``to_config`` returns
``{}`` because zarr-python writes ``"configuration": {}``, and an absent
configuration is accepted too.

Decoding checks that the header count equals the chunk's element count
(before allocating anything), that no element's length runs past the end of
the buffer, that (strings) every element is UTF-8 and, where the elements
are split into offsets and bytes, that no bytes trail the last one; each
failure is a :class:`~zarrpy.errors.ChunkDecodeError` naming the codec. The
conversions are :mod:`zarrpy.core.vlen_kernels`' (compiled, with a
pure-Python fallback): strings go straight between this layout and numpy's
``StringDType``, bytes between it and object arrays of ``bytes``.

>>> VlenUtf8Codec.from_config({}).to_json()
{'name': 'vlen-utf8', 'configuration': {}}
>>> VlenV2Codec.from_config(None).to_config()
{}
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..core._typing import BytesLike, Shape
from ..core import vlen_kernels
from ..core.array_bytes import ArrayBytes
from ..core.dtypes import DataType
from ..errors import ChunkDecodeError, CodecError
from ._config import check_keys
from .abc import ArrayToBytesCodec, ChunkSpec, Codec

_U32_MAX = 2**32 - 1


class InterleavedVlenCodec(ArrayToBytesCodec):
    """Shared implementation of ``vlen-utf8``, ``vlen-bytes`` and ``zarrs.vlen_v2``.

    Subclasses set ``name`` and ``_accepts`` (which variable-length kinds
    they serialise: ``"string"``, ``"bytes"``).
    """

    __slots__ = ()
    _accepts: tuple[str, ...] = ("string", "bytes")

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> InterleavedVlenCodec:
        check_keys(cls.name, config)
        return cls()

    def to_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_v2_config(cls, config: Mapping[str, Any], *, typesize: int = 1) -> InterleavedVlenCodec:
        return cls()  # numcodecs' VLenUTF8/VLenBytes have no settings; others are ignored

    def to_v2_config(self, data_type: DataType | None = None) -> dict[str, Any]:
        """``vlen-utf8`` for strings, ``vlen-bytes`` for bytes (one layout).

        Raises CodecError if ``data_type`` is not one this codec can serialise.
        """
        if data_type is None:
            if self.v2_id is None:
                raise CodecError(f"codec {self.name!r}: its V2 id depends on the data type, which was not given")
            return {"id": self.v2_id}
        if not data_type.is_variable:
            raise CodecError(f"{self.name!r} needs a variable-length data type, got {data_type.name!r}")
        if data_type.is_string:
            if self.name == "vlen-bytes":
                raise CodecError("'vlen-bytes' cannot serialise strings")
            return {"id": "vlen-utf8"}
        if self.name == "vlen-utf8":
            raise CodecError("'vlen-utf8' cannot serialise bytes")
        return {"id": "vlen-bytes"}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if not spec.dtype.is_variable:
            raise CodecError(
                f"codec {self.name!r}: data type {spec.dtype.name!r} is fixed-size; "
                "use the 'bytes' codec"
            )
        kind = "string" if spec.dtype.is_string else "bytes"
        if kind not in self._accepts:
            raise CodecError(
                f"codec {self.name!r}: data type {spec.dtype.name!r} is not supported "
                f"(accepts {' and '.join(self._accepts)} data)"
            )
        if spec.size > _U32_MAX:
            raise CodecError(f"codec {self.name!r}: a chunk holds at most {_U32_MAX} elements, got {spec.size}")
        return spec

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        if chunk.is_fixed:
            raise CodecError(f"codec {self.name!r}: expected a variable-length chunk, got {chunk!r}")
        if chunk.size != spec.size:
            raise CodecError(f"codec {self.name!r}: chunk has {chunk.size} elements, spec says {spec.size}")
        elements = chunk.elements
        if elements is not None and elements.dtype.kind == "T":
            return vlen_kernels.strings_to_interleaved(elements, codec=self.name)
        if elements is not None:
            return vlen_kernels.bytes_to_interleaved(elements, codec=self.name)
        return vlen_kernels.offsets_to_interleaved(chunk.offsets, chunk.data, codec=self.name)

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        """Parse an interleaved chunk of ``spec.size`` elements into numpy
        elements (StringDType for strings, else ``bytes`` objects).

        The header count is checked before anything is allocated. Bytes after
        the last element are ignored, as numcodecs and zarr-python ignore them.

        Raises
        ------
        ChunkDecodeError
            If the header count differs from ``spec.size``, the buffer is
            truncated or an element runs past its end (or, for strings, is not
            UTF-8).
        """
        if spec.dtype.is_string:
            out = np.empty(spec.shape, dtype=spec.dtype.numpy)
            vlen_kernels.strings_from_interleaved(data, out, codec=self.name)
            return ArrayBytes.from_elements(out)
        items = vlen_kernels.bytes_from_interleaved(data, spec.size, codec=self.name)
        return ArrayBytes.from_elements(items.reshape(spec.shape), trusted=True)

    def decode_into(self, data: BytesLike, spec: ChunkSpec, dest: np.ndarray, options: Any = None) -> bool:
        """Strings: converted straight into ``dest`` (a StringDType array of
        ``spec.shape``, maybe a view into the read's result), so no
        chunk-sized array is made and copied over. False (nothing done) for
        bytes data or any other ``dest``. Errors are those of :meth:`decode`."""
        if not spec.dtype.is_string or dest.dtype != spec.dtype.numpy or dest.shape != tuple(spec.shape):
            return False
        vlen_kernels.strings_from_interleaved(data, dest, codec=self.name)
        return True

    def decodes_into_elements(self, spec: ChunkSpec) -> bool:
        """Strings: :meth:`decode_into` casts them into any StringDType ``dest``."""
        return bool(spec.dtype.is_string)


class VlenUtf8Codec(InterleavedVlenCodec):
    """zarr-python's ``vlen-utf8``: UTF-8 strings, interleaved. The layout is
    ``vlen-bytes``'s, so it also reads (and writes) bytes data, as zarrs
    writes it under either name."""

    name = "vlen-utf8"
    v2_id = "vlen-utf8"
    __slots__ = ()


class VlenBytesCodec(InterleavedVlenCodec):
    """zarr-python's ``vlen-bytes``: raw bytes, interleaved; like
    ``vlen-utf8``, it takes either variable-length type (one layout)."""

    name = "vlen-bytes"
    v2_id = "vlen-bytes"
    __slots__ = ()


class VlenV2Codec(InterleavedVlenCodec):
    """zarrs' ``zarrs.vlen_v2``: the same layout for any variable-length type."""

    name = "zarrs.vlen_v2"
    __slots__ = ()

    def same_stored_form(self, other: Codec) -> bool:
        """One layout: ``vlen-utf8`` and ``vlen-bytes`` store what this does."""
        return isinstance(other, InterleavedVlenCodec)


class UntypedVlenArrayCodec(InterleavedVlenCodec):
    """zarrs' ``numcodecs.vlen-array`` with an empty configuration on string or
    bytes data: zarrs implements all three numcodecs VLen names as one layout
    decoupled from the data type, so this reads as ``vlen-utf8``/``vlen-bytes``
    and keeps its name when rewritten. (With a ``dtype`` configuration the
    name is numcodecs' ragged-numbers codec, :mod:`zarrpy.codecs.vlen_array`.)
    It has no V2 form: numcodecs' VLenArray needs a dtype."""

    name = "numcodecs.vlen-array"
    __slots__ = ()

    def to_v2_config(self, data_type: DataType | None = None) -> dict[str, Any]:
        raise CodecError(
            f"codec {self.name!r} without a 'dtype' has no Zarr V2 form; use 'vlen-utf8' or 'vlen-bytes'"
        )

    def same_stored_form(self, other: Codec) -> bool:
        return isinstance(other, InterleavedVlenCodec)


# -- the layout ------------------------------------------------------------


def encode_interleaved(offsets: np.ndarray, data: bytes, *, codec: str = "zarrs.vlen_v2") -> bytes:
    """The interleaved bytes of the elements ``data[offsets[i]:offsets[i+1]]``.

    Raises CodecError (naming ``codec``) if there are more than 2**32-1
    elements or an element is longer than 2**32-1 bytes.
    """
    return vlen_kernels.offsets_to_interleaved(offsets, data, codec=codec)


def decode_interleaved(buf: bytes, n: int, *, codec: str = "zarrs.vlen_v2") -> tuple[np.ndarray, bytes]:
    """Split an interleaved buffer of ``n`` elements into ``(offsets, data)``.

    ``offsets`` is int64 of length n+1, starting at 0; ``data`` the element
    bytes concatenated. Raises ChunkDecodeError naming ``codec`` when the
    buffer does not hold exactly ``n`` elements.
    """
    return vlen_kernels.offsets_from_interleaved(buf, n, codec=codec)


# -- numcodecs VLenArray ---------------------------------------------------


def decode_vlen_array(buf: bytes, shape: Shape, dtype: Any) -> ArrayBytes:
    """Decode a numcodecs ``vlen-array`` chunk into variable-form ArrayBytes.

    ``dtype`` is the codec's element ``dtype`` (e.g. ``"<i2"``); each
    element's ``nbytes`` must be a multiple of its item size. Element bytes
    are returned little-endian (the pipeline's form for ragged numbers):
    big-endian data is byte-swapped. Building the ragged array is the array
    layer's job.
    """
    dtype = _vlen_array_dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    offsets, data = decode_interleaved(buf, n, codec="vlen-array")
    if dtype.itemsize > 1:
        bad = np.flatnonzero(np.diff(offsets) % dtype.itemsize)
        if bad.size:
            i = int(bad[0])
            raise ChunkDecodeError(
                f"codec 'vlen-array': element {i} has {int(offsets[i + 1] - offsets[i])} bytes, "
                f"not a multiple of the item size {dtype.itemsize} of {dtype.str}"
            )
        data = _to_little_endian(data, dtype)
    return ArrayBytes.variable(offsets, data, tuple(shape))


def encode_vlen_array(chunk: ArrayBytes, dtype: Any) -> bytes:
    """Encode variable-form ArrayBytes of little-endian elements as ``vlen-array``.

    The inverse of :func:`decode_vlen_array`: element bytes are written in
    ``dtype``'s byte order. Raises CodecError if an element's length is not a
    multiple of the item size.
    """
    dtype = _vlen_array_dtype(dtype)
    offsets, data = chunk.offsets, chunk.data
    if dtype.itemsize > 1:
        if np.any(offsets % dtype.itemsize):
            raise CodecError(
                f"codec 'vlen-array': element lengths must be multiples of the item size {dtype.itemsize}"
            )
        little = dtype.newbyteorder("<")
        if dtype != little:
            data = np.frombuffer(data, dtype=little).astype(dtype).tobytes()
    return encode_interleaved(offsets, data, codec="vlen-array")


def _vlen_array_dtype(value: Any) -> np.dtype:
    try:
        dtype: np.dtype = np.dtype(value)
    except TypeError as exc:
        raise CodecError(f"codec 'vlen-array': 'dtype' {value!r} is not a numpy dtype: {exc}") from None
    if dtype.kind not in "biufc" or dtype.itemsize == 0:
        raise CodecError(f"codec 'vlen-array': 'dtype' must be a numeric dtype, got {dtype.str!r}")
    return dtype


def _to_little_endian(data: bytes, dtype: np.dtype) -> bytes:
    little = dtype.newbyteorder("<")
    if dtype == little:
        return data
    return np.frombuffer(data, dtype=dtype).astype(little).tobytes()


__all__ = [
    "InterleavedVlenCodec",
    "VlenBytesCodec",
    "VlenUtf8Codec",
    "VlenV2Codec",
    "decode_interleaved",
    "decode_vlen_array",
    "encode_interleaved",
    "encode_vlen_array",
]
