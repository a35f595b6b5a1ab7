"""packbits array-to-bytes codec (zarr-extensions; zarrs and tensorstore write it).

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/packbits
V3 name: ``packbits``; no V2 form here (numcodecs' ``packbits`` is a
bool-only *filter*, read through the numcodecs adapter).

Every element is split into components (two for complex types), each an
``N``-bit little-endian value: ``N`` is 1 for bool, 2/4/6 for the sub-byte
``ml_dtypes`` types (:func:`zarrpy.core.dtypes.bit_size`; numpy holds them
one per byte), ``8 * itemsize`` otherwise. Bits ``first_bit..last_bit``
(default ``0..N-1``) of each component are written one after another, least
significant bit first, into a bit stream that is zero-padded to whole bytes.
``padding_encoding`` ``"first_byte"`` / ``"last_byte"`` adds one byte holding
the number of padding bits before / after the stream (``"none"``, the
default, adds nothing); decoding checks it. zarrs writes no padding byte
when whole components are kept (``N`` a multiple of 8, all bits: the
``bytes`` codec's layout) whatever ``padding_encoding`` says, and reads only
that; zarrpy writes the same, and reads both forms. Decoding puts the bits back at
``first_bit`` and sign-extends signed integers up to ``N`` bits (zarrs
sign-extends only to the end of the byte holding the top bit, which differs
for e.g. int16 with ``last_bit`` below 8); the other bits are zero.

Configuration: ``padding_encoding`` is written only when not ``"none"``,
``first_bit`` / ``last_bit`` only when set (``null`` reads as unset), as
zarrs writes them.

>>> PackBitsCodec.from_config({"padding_encoding": "first_byte"}).to_config()
{'padding_encoding': 'first_byte'}
>>> pack(np.array([True, False, True]), 0, 0).hex()
'05'
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..core.dtypes import bit_size
from ..errors import ChunkDecodeError, CodecError
from ._config import check_choice, check_keys
from .abc import ArrayToBytesCodec, ChunkSpec

_NAME = "packbits"
_PADDINGS = ("none", "first_byte", "last_byte")
_SIGNED_SUB_BYTE = frozenset({"int1", "int2", "int4"})


class PackBitsCodec(ArrayToBytesCodec):
    """Pack each element's components to ``last_bit - first_bit + 1`` bits."""

    name = _NAME
    __slots__ = ("padding_encoding", "first_bit", "last_bit")

    def __init__(self, padding_encoding: str = "none", first_bit: int | None = None, last_bit: int | None = None):
        self.padding_encoding: str = check_choice(_NAME, "padding_encoding", padding_encoding, _PADDINGS)
        self.first_bit = _bit_index("first_bit", first_bit)
        self.last_bit = _bit_index("last_bit", last_bit)
        if first_bit is not None and last_bit is not None and last_bit < first_bit:
            raise CodecError(f"codec 'packbits': 'last_bit' ({last_bit}) is less than 'first_bit' ({first_bit})")

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> PackBitsCodec:
        config = check_keys(_NAME, config, optional=("padding_encoding", "first_bit", "last_bit"))
        padding = config.get("padding_encoding")
        return cls("none" if padding is None else padding, config.get("first_bit"), config.get("last_bit"))

    def to_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {}
        if self.padding_encoding != "none":
            config["padding_encoding"] = self.padding_encoding
        if self.first_bit is not None:
            config["first_bit"] = self.first_bit
        if self.last_bit is not None:
            config["last_bit"] = self.last_bit
        return config

    def bits(self, dtype: np.dtype, name: str) -> tuple[int, int]:
        """``(first_bit, last_bit)`` for elements of ``dtype``; CodecError
        naming the field when ``last_bit`` lies outside a component."""
        layout = component_layout(dtype, name)
        first = self.first_bit or 0
        last = layout.bits - 1 if self.last_bit is None else self.last_bit
        if last >= layout.bits or first > last:
            field, value = ("last_bit", last) if last >= layout.bits else ("first_bit", first)
            raise CodecError(
                f"codec 'packbits': {field!r} {value} is outside the {layout.bits}-bit components of data type "
                f"{name!r} (bits {first}..{last})"
            )
        return first, last

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if spec.dtype.is_variable:
            raise CodecError(f"codec 'packbits': data type {spec.dtype.name!r} is variable-length")
        self.bits(spec.dtype.numpy, spec.dtype.name)
        return spec

    def _plan(self, spec: ChunkSpec) -> tuple[int, int, int, bool]:
        """``(first_bit, last_bit, packed nbytes, padding byte written?)`` for ``spec``."""
        first, last = self.bits(spec.dtype.numpy, spec.dtype.name)
        layout = component_layout(spec.dtype.numpy, spec.dtype.name)
        nbytes = math.ceil(spec.size * layout.count * (last - first + 1) / 8)
        whole_bytes = first == 0 and last == layout.bits - 1 and layout.bits % 8 == 0
        return first, last, nbytes, self.padding_encoding != "none" and not whole_bytes

    def compute_encoded_size(self, spec: ChunkSpec) -> int:
        _, _, nbytes, padded = self._plan(spec)
        return nbytes + padded

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        first, last, nbytes, padded = self._plan(spec)
        packed = pack(np.asarray(chunk.array, dtype=spec.dtype.numpy), first, last)
        if not padded:
            return packed
        pad = bytes([8 * nbytes - _packed_bits(spec, first, last)])
        return pad + packed if self.padding_encoding == "first_byte" else packed + pad

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        """Unpack ``data``.

        Raises
        ------
        ChunkDecodeError
            If ``data`` has the wrong length or a wrong padding byte.
        """
        first, last, nbytes, padded = self._plan(spec)
        # whole components: zarrs' form (no padding byte) or the spec's (one)
        padded = padded or (self.padding_encoding != "none" and len(data) == nbytes + 1)
        if len(data) != nbytes + padded:
            raise ChunkDecodeError(
                f"codec 'packbits': expected {nbytes + padded} bytes for shape {spec.shape} of "
                f"{spec.dtype.name}, got {len(data)}"
            )
        if padded:
            want = 8 * nbytes - _packed_bits(spec, first, last)
            at = 0 if self.padding_encoding == "first_byte" else len(data) - 1
            if data[at] != want:
                raise ChunkDecodeError(
                    f"codec 'packbits': padding byte says {data[at]} padding bits, expected {want}"
                )
            data = data[1:] if at == 0 else data[:-1]
        return ArrayBytes.from_array(unpack(data, spec.dtype.numpy, spec.shape, first, last))


@dataclass(frozen=True)
class ComponentLayout:
    """How packbits sees an element: ``count`` components of ``bits`` bits,
    each held in ``nbytes`` little-endian bytes; ``signed`` ones are
    sign-extended when decoded."""

    bits: int
    count: int
    nbytes: int
    signed: bool


def component_layout(dtype: np.dtype, name: str | None = None) -> ComponentLayout:
    """The :class:`ComponentLayout` of ``dtype``; CodecError for types the
    codec does not take (raw bytes, structs, strings, datetimes)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        half = dtype.itemsize // 2
        return ComponentLayout(8 * half, 2, half, False)
    if dtype.kind in "biuf":
        return ComponentLayout(bit_size(dtype), 1, dtype.itemsize, dtype.kind == "i")
    if dtype.kind == "V" and dtype.type is not np.void and dtype.fields is None:  # ml_dtypes numbers
        return ComponentLayout(bit_size(dtype), 1, dtype.itemsize, dtype.name in _SIGNED_SUB_BYTE)
    if str(dtype.kind) == "W" and dtype.type is not np.void:  # ml_dtypes complex32 / bcomplex32 (kind numpy's stubs omit)
        return ComponentLayout(8 * (dtype.itemsize // 2), 2, dtype.itemsize // 2, False)
    if dtype.names == ("real", "imag") and dtype.fields is not None:  # zarrs' complex_float8_* ... (core.dtypes.ml)
        part = dtype.fields["real"][0]
        if part == dtype.fields["imag"][0] and part.kind == "V" and part.type is not np.void:
            return ComponentLayout(bit_size(part), 2, part.itemsize, False)
    raise CodecError(f"codec 'packbits': data type {name or str(dtype)!r} is not supported")


def pack(array: np.ndarray, first_bit: int, last_bit: int) -> bytes:
    """The packed bit stream of ``array``'s components (no padding byte)."""
    layout = component_layout(array.dtype)
    if array.dtype.kind == "b" and first_bit == 0:
        return np.packbits(array.reshape(-1), bitorder="little").tobytes()
    raw = _le_bytes(array, layout)
    if first_bit == 0 and last_bit == 8 * layout.nbytes - 1:
        return raw.tobytes()  # whole bytes: what the `bytes` codec writes (little endian)
    bits = np.unpackbits(raw, axis=1, bitorder="little")[:, first_bit : last_bit + 1]
    return np.packbits(bits.reshape(-1), bitorder="little").tobytes()


def unpack(data: bytes, dtype: np.dtype, shape: tuple[int, ...], first_bit: int, last_bit: int) -> np.ndarray:
    """Invert :func:`pack`: an array of ``dtype`` and ``shape`` from the bit stream ``data``."""
    dtype = np.dtype(dtype)
    layout = component_layout(dtype)
    rows = math.prod(shape) * layout.count
    width = last_bit - first_bit + 1
    stream = np.frombuffer(data, dtype=np.uint8)
    if dtype.kind == "b" and first_bit == 0:
        return np.unpackbits(stream, count=rows, bitorder="little").view(np.bool_).reshape(shape)
    if first_bit == 0 and last_bit == 8 * layout.nbytes - 1:
        raw = stream.reshape(rows, layout.nbytes)
    else:
        bits = np.unpackbits(stream, count=rows * width, bitorder="little").reshape(rows, width)
        full = np.zeros((rows, 8 * layout.nbytes), dtype=np.uint8)
        full[:, first_bit : last_bit + 1] = bits
        if layout.signed and width:
            full[:, last_bit + 1 : layout.bits] = bits[:, -1:]
        raw = np.packbits(full, axis=1, bitorder="little")
    if sys.byteorder == "big" and layout.nbytes > 1:
        raw = raw[:, ::-1]
    return np.ascontiguousarray(raw).reshape(-1).view(dtype).reshape(shape)


def _le_bytes(array: np.ndarray, layout: ComponentLayout) -> np.ndarray:
    """The components of ``array`` as rows of little-endian bytes."""
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8).reshape(-1, layout.nbytes)
    if sys.byteorder == "big" and layout.nbytes > 1:
        raw = raw[:, ::-1]
    return raw


def _packed_bits(spec: ChunkSpec, first_bit: int, last_bit: int) -> int:
    """The length of the bit stream of a chunk of ``spec``, before padding."""
    return spec.size * component_layout(spec.dtype.numpy).count * (last_bit - first_bit + 1)


def _bit_index(field: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CodecError(f"codec 'packbits': {field!r} must be a non-negative integer or null, got {value!r}")
    return value


__all__ = ["ComponentLayout", "PackBitsCodec", "component_layout", "pack", "unpack"]
