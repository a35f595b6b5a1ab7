"""bytes array-to-bytes codec (core): elements in C order, given endianness.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/
V3 name: ``bytes`` (legacy alias ``endian``); V2: implied by the dtype.

>>> BytesCodec.from_config({"endian": "little"}).to_config()
{'endian': 'little'}
>>> BytesCodec.from_config(None).to_json()
{'name': 'bytes'}
"""

from __future__ import annotations

import math
import sys
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from ..core._typing import BytesLike
from ..core.array_bytes import ArrayBytes
from ..core.dtypes.struct import unswappable_fields, v3_endian
from ..core.dtypes import DataType
from ..errors import ChunkDecodeError, CodecError
from ._config import check_choice, check_keys
from ..core.byte_range import RangeRequest, ShortRead, read_coalesced
from ..core.selection import dim_indices
from .abc import ArrayToBytesCodec, ByteReader, ChunkSpec, Codec
from .partial import (
    DEFAULT_OPTIONS,
    PARTIAL,
    ArrayPartialDecoder,
    ChunkSelection,
    CodecCapabilities,
    DecodeOptions,
    WholeChunkDecoder,
)


class BytesCodec(ArrayToBytesCodec):
    """Raw little- or big-endian element bytes; ``endian`` None for 1-byte types."""

    name = "bytes"
    __slots__ = ("endian",)
    decodes_buffers = True

    def __init__(self, endian: str | None = "little"):
        self.endian = check_choice(self.name, "endian", endian, ("little", "big", None))

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> BytesCodec:
        config = check_keys(cls.name, config, optional=("endian",))
        if "endian" in config and config["endian"] is None:
            raise CodecError("codec 'bytes': 'endian' must be 'little' or 'big' when present, got null")
        return cls(config.get("endian"))

    def to_config(self) -> dict[str, Any] | None:
        return None if self.endian is None else {"endian": self.endian}

    def evolve(self, spec: ChunkSpec) -> BytesCodec:
        """For a new array of a struct type with multi-byte fields, the
        ``endian`` its fields share (little for a V3 struct), when none was
        given: zarr-extensions' ``struct`` requires one there (a ``bytes``
        without it is legacy, read as little-endian), and tensorstore refuses
        a struct without it. A struct whose fields have different byte orders
        (a V2 struct) keeps none; other types are as given."""
        if self.endian is not None or spec.dtype.numpy.fields is None:
            return self
        endian = v3_endian(spec.dtype.numpy)
        return self if endian in (None, "mixed") else BytesCodec(endian)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if spec.dtype.is_variable:
            raise CodecError(
                f"codec 'bytes': data type {spec.dtype.name!r} is variable-length; use a vlen codec"
            )
        if self.endian is None and endian_required(spec.dtype):
            raise CodecError(f"codec 'bytes': 'endian' is required for data type {spec.dtype.name!r}")
        if spec.dtype.numpy.fields is not None and self.endian not in (None, sys.byteorder):
            fields = unswappable_fields(spec.dtype.numpy)
            if fields:
                raise CodecError(
                    f"codec 'bytes': struct field(s) {fields} cannot be stored {self.endian}-endian "
                    "(numpy cannot byte-swap their type inside a struct); use the native byte order"
                )
        return spec

    def same_stored_form(self, other: Codec) -> bool:
        """``bytes`` without an endian (1-byte elements) stores what any endian does."""
        return isinstance(other, BytesCodec) and (other.endian is None or other.endian == self.endian)

    def _stored_dtype(self, dtype: np.dtype) -> np.dtype:
        if dtype.fields is not None:
            # A struct: ``endian`` applies to every multi-byte field (zarr-python,
            # zarr-extensions ``struct``); without it the in-memory layout is
            # stored (V2 structs, whose fields carry their own byte order).
            return dtype if self.endian is None else dtype.newbyteorder("<" if self.endian == "little" else ">")
        if self.endian is None or dtype.itemsize == 1 or dtype.kind in "VS":
            return dtype
        return dtype.newbyteorder("<" if self.endian == "little" else ">")

    def compute_encoded_size(self, spec: ChunkSpec) -> int:
        return spec.size * spec.dtype.numpy.itemsize

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        arr = chunk.array
        lane = spec.dtype.family.endian_lane(spec.dtype)
        if lane is not None:  # ml_dtypes types: the family shapes the stored elements
            out = spec.dtype.family.encode_elements(spec.dtype, np.ascontiguousarray(arr, dtype=spec.dtype.numpy))
            if self._swaps(lane):
                return np.ascontiguousarray(out).reshape(-1).view(f"u{lane}").byteswap().tobytes()
            return np.ascontiguousarray(out).tobytes()
        stored = self._stored_dtype(spec.dtype.numpy)
        if arr.dtype != stored:
            arr = arr.astype(stored)
        return np.ascontiguousarray(arr).tobytes()

    def encode_buffer(self, chunk: ArrayBytes, spec: ChunkSpec) -> BytesLike:
        """The chunk's own memory as ``uint8`` when it is already laid out
        as stored (C order, stored byte order, no element conversion): a
        compressor then reads it without a ``tobytes`` copy."""
        arr = chunk.array
        if (
            arr.flags.c_contiguous
            and spec.dtype.family.endian_lane(spec.dtype) is None
            and arr.dtype == self._stored_dtype(spec.dtype.numpy)
        ):
            view: np.ndarray = arr.reshape(-1).view(np.uint8)
            return view
        return self.encode(chunk, spec)

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        native = spec.dtype.numpy
        expected = spec.size * native.itemsize
        if len(data) != expected:
            raise ChunkDecodeError(
                f"codec 'bytes': expected {expected} bytes for shape {spec.shape} "
                f"of {spec.dtype.name}, got {len(data)}"
            )
        return ArrayBytes.from_array(self._elements(data, spec, spec.shape))

    def native_bytes(self, spec: ChunkSpec) -> bool:
        """Plain numbers (booleans, integers, floats, complex, datetimes) in
        the machine's byte order are stored as they are in memory."""
        native = spec.dtype.numpy
        return (
            native.kind in "biufcmM"
            and spec.dtype.family.endian_lane(spec.dtype) is None
            and self._stored_dtype(native) == native
        )

    def _swaps(self, lane: int) -> bool:
        return lane > 1 and self.endian is not None and self.endian != sys.byteorder

    def _elements(self, data: bytes, spec: ChunkSpec, shape: Sequence[int]) -> np.ndarray:
        """The in-memory array of ``shape`` from stored element bytes ``data``."""
        native = spec.dtype.numpy
        lane = spec.dtype.family.endian_lane(spec.dtype)
        if lane is None:
            return _native(np.frombuffer(data, dtype=self._stored_dtype(native)).reshape(shape), native)
        if self._swaps(lane):
            arr = np.frombuffer(data, dtype=f"u{lane}").byteswap().view(native)
        else:
            arr = np.frombuffer(data, dtype=native)
        return spec.dtype.family.decode_elements(spec.dtype, arr.reshape(shape))

    @property
    def capabilities(self) -> CodecCapabilities:
        return PARTIAL

    def partial_decoder(
        self, input: ByteReader, spec: ChunkSpec, options: DecodeOptions = DEFAULT_OPTIONS
    ) -> ArrayPartialDecoder:
        """Reads only the byte ranges of the selected elements; see :class:`BytesPartialDecoder`."""
        return BytesPartialDecoder(self, input, spec, options)


class BytesPartialDecoder(ArrayPartialDecoder):
    """Selections of one ``bytes``-encoded chunk, read by byte range.

    A selection picks runs of neighbouring elements (rows of a region, or
    whole blocks when trailing dimensions are taken whole); the runs of all
    selections are fetched in one batched read (runs at most
    ``max_gap_nbytes`` apart, default 0, are merged). With more than
    :attr:`MAX_RUNS` runs, the span from the first to the last needed byte is
    read in one request instead; when the selections want half the chunk or
    more, it is read and decoded whole.
    """

    MAX_RUNS = 16
    __slots__ = ("codec", "input", "spec", "max_gap_nbytes")

    def __init__(self, codec: BytesCodec, input: ByteReader, spec: ChunkSpec, options: DecodeOptions):
        self.codec, self.input, self.spec = codec, input, spec
        self.max_gap_nbytes = options.max_gap_nbytes or 0

    def decode_selections(self, selections: Sequence[ChunkSelection]) -> list[ArrayBytes | None]:
        spec = self.spec
        itemsize = spec.dtype.numpy.itemsize
        plans = [_runs(s, spec.shape) for s in selections]
        wanted = sum(p.starts.size * p.length for p in plans)
        if not wanted or wanted * 2 > spec.size:
            return WholeChunkDecoder(self._whole).decode_selections(selections)
        starts = np.concatenate([p.starts for p in plans]) * itemsize
        ends = starts + np.concatenate([np.full(p.starts.size, p.length) for p in plans]) * itemsize
        try:
            buf, positions = self._read_runs(starts, ends)
        except _Missing:
            return [None] * len(selections)
        view = memoryview(buf)
        out: list[ArrayBytes | None] = []
        first = 0
        for plan in plans:
            nbytes = plan.length * itemsize
            mine = positions[first : first + plan.starts.size].tolist()
            first += plan.starts.size
            raw = b"".join([view[q : q + nbytes] for q in mine])
            out.append(ArrayBytes.from_array(self.codec._elements(raw, spec, plan.shape)))
        return out

    def _read_runs(self, starts: np.ndarray, ends: np.ndarray) -> tuple[bytes, np.ndarray]:
        """The bytes of the byte ranges ``[starts, ends)`` and where each starts in them."""
        if 1 < starts.size <= self.MAX_RUNS:
            got = read_coalesced(self.input, starts, ends, self.max_gap_nbytes, short_read_error=self._short)
            return got.joined()
        # One run, or too many for a request each: one request for the span.
        lo, hi = int(starts.min()), int(ends.max())
        (data,) = self.input.read_many([RangeRequest(lo, hi)])
        if data is None or len(data) != hi - lo:
            raise self._short(ShortRead(lo, hi, lo + len(data or b""), data is None, 0))
        return data, starts - lo

    def _whole(self) -> ArrayBytes | None:
        data = self.input(None)
        return None if data is None else self.codec.decode(data, self.spec)

    def _short(self, s: ShortRead) -> Exception:
        if s.missing:
            return _Missing()
        return ChunkDecodeError(
            f"codec 'bytes': the chunk ends at byte {s.got_end}, before the elements in bytes "
            f"[{s.start}, {s.end}) of a chunk of shape {self.spec.shape} of {self.spec.dtype.name}"
        )


class _Runs(NamedTuple):
    """A selection as runs of neighbouring elements: each starts at an
    element position (in output order) and has ``length`` elements."""

    starts: np.ndarray
    length: int
    shape: tuple[int, ...]


def _runs(selection: ChunkSelection, shape: Sequence[int]) -> _Runs:
    """The runs of ``chunk[np.ix_(selection)]`` in a C-order chunk of ``shape``:
    the trailing dimensions taken whole, and the one before them taken as a
    contiguous range, make one run per combination of the others."""
    parts = dim_indices(selection, shape)
    out_shape = tuple(p.size for p in parts)
    ndim = len(parts)
    if not ndim:
        return _Runs(np.zeros(1, dtype=np.int64), 1, ())
    if any(p.size == 0 for p in parts):
        return _Runs(np.zeros(0, dtype=np.int64), 0, out_shape)
    k = ndim  # parts[k:] form one run
    if _contiguous(parts[-1]):
        k = ndim - 1
        while k > 0 and parts[k].size == shape[k] and _contiguous(parts[k]) and _contiguous(parts[k - 1]):
            k -= 1
    length = math.prod(p.size for p in parts[k:])
    heads = list(parts[:k]) + [p[:1] for p in parts[k:]]
    starts = np.ravel_multi_index(np.ix_(*heads), tuple(shape)).reshape(-1).astype(np.int64, copy=False)
    return _Runs(starts, length, out_shape)


def _contiguous(index: np.ndarray) -> bool:
    """True when ``index`` is ``a, a+1, ..., b``."""
    return bool(index.size and int(index[-1]) - int(index[0]) == index.size - 1 and np.all(np.diff(index) == 1))


class _Missing(Exception):
    """The chunk does not exist (raised inside a read, caught by the decoder)."""


def _native(arr: np.ndarray, native: np.dtype) -> np.ndarray:
    if native.fields is not None:  # a struct reports byte order '|' whatever its fields have
        return arr if arr.dtype == native else arr.astype(native)
    if arr.dtype.byteorder not in ("=", "|") and arr.dtype.byteorder != _NATIVE:
        return arr.astype(native)
    return arr


_NATIVE = "<" if sys.byteorder == "little" else ">"


def endian_required(data_type: DataType) -> bool:
    """True when ``bytes`` needs ``endian`` for ``data_type`` (elements of more
    than one byte that have a byte order; raw bytes and text do not)."""
    lane = data_type.family.endian_lane(data_type)
    if lane is not None:
        return lane > 1
    dtype = data_type.numpy
    if dtype.fields is not None:
        return False
    return dtype.itemsize > 1 and dtype.kind not in "VS"

__all__ = ["BytesCodec", "BytesPartialDecoder", "endian_required"]
