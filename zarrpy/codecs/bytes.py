"""bytes array-to-bytes codec (core): elements in C order, given endianness.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/
V3 name: ``bytes`` (legacy alias ``endian``); V2: implied by the dtype.

>>> BytesCodec.from_config({"endian": "little"}).to_config()
{'endian': 'little'}
>>> BytesCodec.from_config(None).to_json()
{'name': 'bytes'}
"""

from __future__ import annotations

import sys
from typing import Any, Mapping, Sequence

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..errors import ChunkDecodeError, CodecError
from ._config import check_choice, check_keys
from ..core.byte_range import ShortRead, coalesce_ranges, read_coalesced
from ..core.selection import flat_positions
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

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if spec.dtype.is_variable:
            raise CodecError(
                f"codec 'bytes': data type {spec.dtype.name!r} is variable-length; use a vlen codec"
            )
        if self.endian is None and spec.dtype.numpy.itemsize > 1 and spec.dtype.numpy.kind not in "VS":
            raise CodecError(f"codec 'bytes': 'endian' is required for data type {spec.dtype.name!r}")
        return spec

    def same_stored_form(self, other: Codec) -> bool:
        """``bytes`` without an endian (1-byte elements) stores what any endian does."""
        return isinstance(other, BytesCodec) and (other.endian is None or other.endian == self.endian)

    def _stored_dtype(self, dtype: np.dtype) -> np.dtype:
        if self.endian is None or dtype.itemsize == 1 or dtype.kind in "VS":
            return dtype
        return dtype.newbyteorder("<" if self.endian == "little" else ">")

    def compute_encoded_size(self, spec: ChunkSpec) -> int:
        return spec.size * spec.dtype.numpy.itemsize

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        arr = chunk.array
        stored = self._stored_dtype(spec.dtype.numpy)
        if arr.dtype != stored:
            arr = arr.astype(stored)
        return np.ascontiguousarray(arr).tobytes()

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        native = spec.dtype.numpy
        expected = spec.size * native.itemsize
        if len(data) != expected:
            raise ChunkDecodeError(
                f"codec 'bytes': expected {expected} bytes for shape {spec.shape} "
                f"of {spec.dtype.name}, got {len(data)}"
            )
        stored = self._stored_dtype(native)
        arr = np.frombuffer(data, dtype=stored).reshape(spec.shape)
        if stored.byteorder not in ("=", "|") and stored.byteorder != _NATIVE:
            arr = arr.astype(native)
        return ArrayBytes.from_array(arr)


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

    The elements a set of selections needs are grouped into runs of
    neighbours, and the runs fetched in one batched read (runs at most
    ``max_gap_nbytes`` apart, default 0, are merged). When that would take
    more than :attr:`MAX_RUNS` requests, the span from the first to the last
    needed byte is read in one request instead; when the needed bytes are
    most of the chunk, the chunk is read and decoded whole.
    """

    MAX_RUNS = 64
    __slots__ = ("codec", "input", "spec", "max_gap_nbytes")

    def __init__(self, codec: BytesCodec, input: ByteReader, spec: ChunkSpec, options: DecodeOptions):
        self.codec, self.input, self.spec = codec, input, spec
        self.max_gap_nbytes = options.max_gap_nbytes or 0

    def decode_selections(self, selections: Sequence[ChunkSelection]) -> list[ArrayBytes | None]:
        spec = self.spec
        flats = [flat_positions(s, spec.shape) for s in selections]
        wanted = np.unique(np.concatenate([f.reshape(-1) for f in flats])) if flats else np.zeros(0, np.int64)
        itemsize = spec.dtype.numpy.itemsize
        if wanted.size * itemsize * 2 > spec.size * itemsize or not wanted.size:
            return WholeChunkDecoder(self._whole).decode_selections(selections)
        # Runs of neighbouring elements: [first, last] element of each.
        breaks = np.flatnonzero(np.diff(wanted) != 1)
        firsts = wanted[np.concatenate(([0], breaks + 1))]
        lasts = wanted[np.concatenate((breaks, [wanted.size - 1]))]
        gap = self.max_gap_nbytes
        if coalesce_ranges(firsts * itemsize, (lasts + 1) * itemsize, gap)[0].size > self.MAX_RUNS:
            gap = spec.size * itemsize  # one request for the span
        try:
            got = read_coalesced(
                self.input, firsts * itemsize, (lasts + 1) * itemsize, gap, short_read_error=self._short
            )
        except _Missing:
            return [None] * len(selections)
        buf, run_pos = got.joined()
        run = np.searchsorted(firsts, wanted, side="right") - 1
        where = run_pos[run] + (wanted - firsts[run]) * itemsize  # byte position of each wanted element
        raw = np.frombuffer(buf, dtype=np.uint8)
        stored = self.codec._stored_dtype(spec.dtype.numpy)
        out: list[ArrayBytes | None] = []
        for flat in flats:
            k = np.searchsorted(wanted, flat.reshape(-1))
            picked = raw[where[k][:, None] + np.arange(itemsize)].reshape(-1).view(stored).reshape(flat.shape)
            out.append(ArrayBytes.from_array(_native(picked, spec.dtype.numpy)))
        return out

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


class _Missing(Exception):
    """The chunk does not exist (raised inside a read, caught by the decoder)."""


def _native(arr: np.ndarray, native: np.dtype) -> np.ndarray:
    if arr.dtype.byteorder not in ("=", "|") and arr.dtype.byteorder != _NATIVE:
        return arr.astype(native)
    return arr


_NATIVE = "<" if sys.byteorder == "little" else ">"

__all__ = ["BytesCodec", "BytesPartialDecoder"]
