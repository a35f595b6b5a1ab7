"""zarrs ``vlen`` array-to-bytes codec: offsets and bytes, each with its own codecs.

Spec: https://codec.zarrs.dev/array_to_bytes/vlen (experimental; zarrs PR #40)
V3 name: ``zarrs.vlen`` (aliases ``vlen`` and
``https://codec.zarrs.dev/array_to_bytes/vlen``); no V2 id.

A chunk of n variable-length elements (``string`` or bytes data) is stored as
two parts. The *index* is the Arrow offsets array ``offsets[0..n]``, a 1-D
array of ``index_data_type`` (uint32 or uint64) encoded with
``index_codecs``; the *data* is every element's bytes concatenated, a 1-D
uint8 array of ``offsets[n]`` bytes encoded with ``data_codecs`` (not run at
all when it is empty). ``L`` is the encoded index's length, a u64 LE::

    index_location "start":  [L] [encoded index] [encoded data]
    index_location "end":    [encoded data] [encoded index] [L]

Reading, the draft v0.0 configuration without ``index_location`` means
``"start"``; ``to_config`` always writes all four keys, as zarrs does.
Decoding checks every field (see :meth:`VlenCodec.decode`). Unlike zarrs, it
also requires ``offsets[0] == 0``: writers must emit it, and accepting another
start would make element 0 begin inside the data.

:meth:`VlenCodec.partial_decoder` reads single elements through byte-range
reads: the header and index, then only the requested elements' bytes when
``data_codecs`` is just ``bytes`` (see :class:`VlenPartialDecoder`).

>>> VlenCodec.from_config({"index_data_type": "uint32"}).to_config()  # doctest: +NORMALIZE_WHITESPACE
{'data_codecs': [{'name': 'bytes'}],
 'index_codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}}],
 'index_data_type': 'uint32', 'index_location': 'start'}
"""

from __future__ import annotations

import struct
from typing import Any, Mapping, Sequence

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..core.byte_range import RangeRequest, ShortRead, SuffixRequest, read_coalesced
from ..core.dtypes import DataType
from ..core.selection import flat_positions
from ..errors import BoundsCheckError, ChunkDecodeError, CodecError
from ._config import check_choice, check_keys
from .abc import ArrayToBytesCodec, ByteReader, ChunkSpec
from .partial import DEFAULT_OPTIONS, PARTIAL, WHOLE_ONLY, ArrayPartialDecoder, CodecCapabilities, DecodeOptions
from .bytes import BytesCodec
from ._limits import max_chunk_nbytes, too_large
from ._parts import bind_part, decode_part
from .chain import BoundChain, CodecChain

NAME = "zarrs.vlen"
INDEX_DATA_TYPES = ("uint32", "uint64")
INDEX_LOCATIONS = ("start", "end")
DEFAULT_DATA_CODECS: list[dict[str, Any]] = [{"name": "bytes"}]
DEFAULT_INDEX_CODECS: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]

_U64 = struct.Struct("<Q")
_L_NBYTES = 8
_UINT8 = DataType.from_json("uint8")
# Offsets are read into int64; no chunk can hold more bytes than this.
_MAX_OFFSET = 2**62

"""Reads a byte range of one encoded chunk (``None``: all of it).

Returns None when the chunk does not exist; may return fewer bytes than
asked for when the chunk is shorter. ``functools.partial(store.get, key)``
is one."""


class VlenCodec(ArrayToBytesCodec):
    """Offsets (index) and concatenated element bytes (data), encoded separately.

    ``data_codecs`` and ``index_codecs`` are codec chains (V3 JSON lists or
    :class:`CodecChain`); the index is an array of ``index_data_type``
    placed at the ``"start"`` or ``"end"`` of the chunk.
    """

    name = NAME
    __slots__ = ("data_codecs", "index_codecs", "index_data_type", "index_location", "_index_dtype")

    def __init__(
        self,
        data_codecs: CodecChain | Sequence[Any] | None = None,
        index_codecs: CodecChain | Sequence[Any] | None = None,
        index_data_type: str = "uint64",
        index_location: str = "start",
    ):
        self.index_data_type: str = check_choice(NAME, "index_data_type", index_data_type, INDEX_DATA_TYPES)
        self.index_location: str = check_choice(NAME, "index_location", index_location, INDEX_LOCATIONS)
        self._index_dtype = DataType.from_json(self.index_data_type)
        self.data_codecs: CodecChain = CodecChain.from_field(
            NAME, "data_codecs", DEFAULT_DATA_CODECS if data_codecs is None else data_codecs
        )
        self.index_codecs: CodecChain = CodecChain.from_field(
            NAME, "index_codecs", DEFAULT_INDEX_CODECS if index_codecs is None else index_codecs
        )
        # Both chains must accept their arrays; shapes stand in for any chunk.
        bind_part(NAME, "data_codecs", self.data_codecs, ChunkSpec((0,), _UINT8, 0))
        bind_part(NAME, "index_codecs", self.index_codecs, ChunkSpec((1,), self._index_dtype, 0))

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> VlenCodec:
        config = check_keys(
            NAME, config, optional=("data_codecs", "index_codecs", "index_data_type", "index_location")
        )
        for field in ("data_codecs", "index_codecs"):
            if field in config and config[field] is None:
                raise CodecError(f"codec {NAME!r}: {field!r} must be a list of codecs, got null")
        return cls(
            config.get("data_codecs", DEFAULT_DATA_CODECS),
            config.get("index_codecs", DEFAULT_INDEX_CODECS),
            config.get("index_data_type", "uint64"),
            config.get("index_location", "start"),
        )

    def to_config(self) -> dict[str, Any]:
        return {
            "data_codecs": self.data_codecs.to_json(),
            "index_codecs": self.index_codecs.to_json(),
            "index_data_type": self.index_data_type,
            "index_location": self.index_location,
        }

    def evolve(self, spec: ChunkSpec) -> VlenCodec:
        """This codec with the inner chains' chunk-dependent settings filled
        in (e.g. blosc ``typesize`` 8 for a uint64 index, 1 for the data)."""
        data = self.data_codecs.evolve(ChunkSpec((0,), _UINT8, 0))
        index = self.index_codecs.evolve(self._index_spec(spec.size))
        if data == self.data_codecs and index == self.index_codecs:
            return self
        return VlenCodec(data, index, self.index_data_type, self.index_location)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if not spec.dtype.is_variable:
            raise CodecError(
                f"codec {NAME!r}: data type {spec.dtype.name!r} is fixed-size; use the 'bytes' codec"
            )
        self._bind_index(spec.size)
        return spec

    # -- whole chunks --------------------------------------------------
    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        """Encode a variable-form chunk.

        Raises CodecError if the chunk is fixed-size or of the wrong size, or
        (``uint32`` index) holds more than 2**32-1 bytes of data.
        """
        if chunk.is_fixed:
            raise CodecError(f"codec {NAME!r}: expected a variable-length chunk, got {chunk!r}")
        offsets, data = chunk.offsets, chunk.data
        n = spec.size
        if len(offsets) != n + 1:
            raise CodecError(f"codec {NAME!r}: chunk has {len(offsets) - 1} elements, spec says {n}")
        base = int(offsets[0])
        total = int(offsets[-1]) - base
        index_max = np.iinfo(self._index_dtype.numpy).max
        if total > index_max:
            raise CodecError(
                f"codec {NAME!r}: {total} bytes of data do not fit index_data_type "
                f"{self.index_data_type!r} (at most {index_max}); use 'uint64'"
            )
        index = (offsets - base).astype(self._index_dtype.numpy)
        try:
            encoded_index = self._bind_index(n).encode(ArrayBytes.from_array(index))
            if total:
                payload = np.frombuffer(data, dtype=np.uint8, count=total, offset=base)
                encoded_data = _bind_data(self.data_codecs, total).encode(ArrayBytes.from_array(payload))
            else:
                encoded_data = b""
        except CodecError as exc:
            raise CodecError(f"codec {NAME!r}: {exc}") from None
        header = _U64.pack(len(encoded_index))
        if self.index_location == "start":
            return b"".join((header, encoded_index, encoded_data))
        return b"".join((encoded_data, encoded_index, header))

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        """Decode a chunk of ``spec.size`` elements.

        Raises
        ------
        ChunkDecodeError
            If ``data`` is shorter than 8 bytes; the index length ``L`` runs
            past the chunk; the index does not decode to n+1 offsets; the
            offsets do not start at 0, decrease, or end elsewhere than the
            decoded data's length; or an inner codec fails.
        """
        nbytes = len(data)
        if nbytes < _L_NBYTES:
            raise ChunkDecodeError(f"codec {NAME!r}: {nbytes} bytes, too short for the 8-byte index length")
        view = memoryview(data)
        if self.index_location == "start":
            index_nbytes = _read_l(view[:_L_NBYTES], nbytes)
            index_part = view[_L_NBYTES : _L_NBYTES + index_nbytes]
            data_part = view[_L_NBYTES + index_nbytes :]
        else:
            index_nbytes = _read_l(view[nbytes - _L_NBYTES :], nbytes)
            index_part = view[nbytes - _L_NBYTES - index_nbytes : nbytes - _L_NBYTES]
            data_part = view[: nbytes - _L_NBYTES - index_nbytes]
        offsets = self._decode_index(bytes(index_part), spec.size)
        payload = self._decode_data(bytes(data_part), int(offsets[-1]), spec)
        return ArrayBytes.variable(offsets, payload, spec.shape)

    # -- partial decoding ----------------------------------------------
    @property
    def capabilities(self) -> CodecCapabilities:
        """Elements are read by byte range when the data part is raw bytes."""
        return PARTIAL if self.data_is_raw else WHOLE_ONLY

    def partial_decoder(
        self,
        input: ByteReader,
        spec: ChunkSpec,
        options: DecodeOptions = DEFAULT_OPTIONS,
        *,
        total_nbytes: int | None = None,
        max_gap_nbytes: int | None = None,
    ) -> VlenPartialDecoder:
        """A reader of single elements of one encoded chunk; see :class:`VlenPartialDecoder`."""
        gap = max_gap_nbytes if max_gap_nbytes is not None else options.max_gap_nbytes
        return VlenPartialDecoder(self, input, spec, total_nbytes=total_nbytes, max_gap_nbytes=gap or 0)

    def decode_elements(
        self, read: ByteReader, spec: ChunkSpec, flat_indices: Any, *, total_nbytes: int | None = None
    ) -> ArrayBytes | None:
        """Shorthand: ``self.partial_decoder(read, spec, ...).decode_elements(flat_indices)``."""
        return self.partial_decoder(read, spec, total_nbytes=total_nbytes).decode_elements(flat_indices)

    @property
    def data_is_raw(self) -> bool:
        """True when the data part is the plain element bytes (``data_codecs``
        is just ``bytes``), so elements can be read by byte range."""
        chain = self.data_codecs
        return not chain.array_to_array and not chain.bytes_to_bytes and isinstance(chain.array_to_bytes, BytesCodec)

    # -- helpers -------------------------------------------------------
    def _index_spec(self, n: int) -> ChunkSpec:
        return ChunkSpec((n + 1,), self._index_dtype, 0)

    def _bind_index(self, n: int) -> BoundChain:
        return bind_part(NAME, "index_codecs", self.index_codecs, self._index_spec(n))

    def _decode_index(self, encoded: bytes, n: int) -> np.ndarray:
        """Decode and check the index; return int64 offsets (n+1, from 0)."""
        index = decode_part(NAME, "index", self._bind_index(n), encoded).array
        if index.shape != (n + 1,):  # pragma: no cover - BoundChain checks the shape
            raise ChunkDecodeError(f"codec {NAME!r}: index has {index.size} offsets, expected {n + 1}")
        if index.size and int(index.max()) > _MAX_OFFSET:
            raise ChunkDecodeError(f"codec {NAME!r}: index offset {int(index.max())} is implausibly large")
        offsets = index.astype(np.int64)
        if offsets[0] != 0:
            raise ChunkDecodeError(f"codec {NAME!r}: index must start at offset 0, got {int(offsets[0])}")
        if n:
            steps = np.diff(offsets)
            if np.any(steps < 0):
                i = int(np.flatnonzero(steps < 0)[0])
                raise ChunkDecodeError(
                    f"codec {NAME!r}: index offsets decrease at element {i} "
                    f"({int(offsets[i])} then {int(offsets[i + 1])})"
                )
        return offsets

    def _decode_data(self, encoded: bytes, nbytes: int, spec: ChunkSpec) -> bytes:
        """Decode the data part, which the index says holds ``nbytes``: at most
        the variable-length ceiling unless it is stored raw (:mod:`._limits`)."""
        if not encoded:
            if nbytes:
                raise ChunkDecodeError(
                    f"codec {NAME!r}: the index ends at offset {nbytes} but the data part is empty"
                )
            return b""
        if self.data_is_raw:
            if len(encoded) != nbytes:
                raise ChunkDecodeError(
                    f"codec {NAME!r}: the index ends at offset {nbytes} but the data part has {len(encoded)} bytes"
                )
            return encoded
        if nbytes > (ceiling := max_chunk_nbytes()):  # checked before the data codecs decode that much
            raise ChunkDecodeError(too_large(NAME, ceiling, spec, claimed=nbytes))
        # A data part that decodes to nothing is accepted when the index
        # says so (a writer that ran the data codecs on no data).
        decoded = decode_part(NAME, "data", _bind_data(self.data_codecs, nbytes), encoded).array
        if decoded.nbytes != nbytes:  # pragma: no cover - BoundChain checks the shape
            raise ChunkDecodeError(
                f"codec {NAME!r}: the index ends at offset {nbytes} but the data decodes to {decoded.nbytes} bytes"
            )
        return decoded.tobytes()


class VlenPartialDecoder(ArrayPartialDecoder):
    """Reads chosen elements of one encoded ``zarrs.vlen`` chunk.

    ``read`` fetches byte ranges of the *encoded chunk* (see
    :data:`ByteReader`): the chunk as the vlen codec wrote it, so this works
    only when no bytes-to-bytes codec follows ``zarrs.vlen`` in the array's
    chain (or inside a shard, whose index gives the inner chunk's range).

    Reads, for ``index_location`` ``"start"``: ``[0, 8)`` then ``[8, 8+L)``;
    for ``"end"``: the suffix of 8 bytes, then the suffix of ``8+L``. When the
    encoded index has a fixed size (index_codecs without compression) the two
    are one read. The index is decoded once per decoder and kept. Then:

    - ``data_codecs`` just ``bytes``: one read per run of requested elements
      that lie next to each other in the data (runs separated by at most
      ``max_gap_nbytes`` unrequested bytes are merged);
    - otherwise the whole chunk is read and decoded once, and elements taken
      from it (the index reads are then skipped).

    ``total_nbytes``, the encoded chunk's length, is optional. Given (a shard
    index knows it), the decoder checks, as a full decode does, that the
    index's last offset is the data part's length. Without it, an index whose
    offsets run past the data is caught only when a read comes back short:
    always with the index at the start, but with the index at the end the
    data's neighbour is the index itself, so such a read returns index bytes.

    A decoder is meant for one read operation on one chunk; it is not
    thread-safe while its index is first loaded.
    """

    __slots__ = ("codec", "spec", "total_nbytes", "max_gap_nbytes", "_read", "_offsets", "_data_start", "_missing")

    def __init__(
        self,
        codec: VlenCodec,
        read: ByteReader,
        spec: ChunkSpec,
        *,
        total_nbytes: int | None = None,
        max_gap_nbytes: int = 0,
    ):
        self.codec = codec
        self.spec = spec
        self.total_nbytes = total_nbytes
        self.max_gap_nbytes = max_gap_nbytes
        self._read = read
        self._offsets: np.ndarray | None = None
        self._data_start = 0  # position of data byte 0 in the encoded chunk
        self._missing = False

    def offsets(self) -> np.ndarray | None:
        """The chunk's decoded index (int64, n+1), or None if the chunk is missing."""
        if self._offsets is None and not self._missing:
            self._load_index()
        return self._offsets

    def decode_selections(self, selections: Sequence[tuple[Any, ...]]) -> list[ArrayBytes | None]:
        return [self.decode_selection(s) for s in selections]

    def decode_selection(self, selection: tuple[Any, ...]) -> ArrayBytes | None:
        """The orthogonal ``selection`` (slices / 1-D int arrays per dimension)
        of the chunk; see :class:`~zarrpy.codecs.abc.ArrayPartialDecoder`."""
        flat = flat_positions(selection, self.spec.shape)
        return self.decode_elements(flat.reshape(-1), flat.shape)

    def decode_elements(self, flat_indices: Any, shape: tuple[int, ...] | None = None) -> ArrayBytes | None:
        """Elements at ``flat_indices`` (C-order positions in the chunk, any
        order, repeats allowed) as a variable chunk of ``shape`` (default: 1-D).

        Returns None if the chunk does not exist.

        Raises
        ------
        BoundsCheckError
            If an index is outside ``[0, n)``.
        ChunkDecodeError
            If the chunk is corrupt or shorter than its index says.
        """
        n = self.spec.size
        idx = np.asarray(flat_indices, dtype=np.int64).reshape(-1)
        shape = (idx.size,) if shape is None else tuple(shape)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            bad = int(idx[(idx < 0) | (idx >= n)][0])
            raise BoundsCheckError(f"codec {NAME!r}: element {bad} is outside a chunk of {n} elements")
        if not self.codec.data_is_raw:
            whole = self._read(None)
            if whole is None:
                return None
            return self.codec.decode(whole, self.spec).take(idx, shape)
        offsets = self.offsets()
        if offsets is None:
            return None
        starts = offsets[idx]
        lengths = offsets[idx + 1] - starts

        def short(s: ShortRead) -> ChunkDecodeError:
            return ChunkDecodeError(
                f"codec {NAME!r}: chunk ends inside its data (wanted bytes [{s.start}, {s.end}) of the data part)"
            )

        # One batched store call when the reader offers it.
        got = read_coalesced(self._read, starts, starts + lengths, self.max_gap_nbytes,
                             short_read_error=short, offset=self._data_start)
        return _gather(*got.joined(), lengths, shape)

    def _load_index(self) -> None:
        codec, n = self.codec, self.spec.size
        bound = codec._bind_index(n)
        known = bound.encoded_size  # fixed encoded index size, if any
        at_start = codec.index_location == "start"
        first = _L_NBYTES + (known or 0)
        raw = self._read(RangeRequest(0, first) if at_start else SuffixRequest(first))
        if raw is None:
            self._missing = True
            return
        if len(raw) < _L_NBYTES:
            raise ChunkDecodeError(f"codec {NAME!r}: {len(raw)} bytes, too short for the 8-byte index length")
        header = raw[:_L_NBYTES] if at_start else raw[len(raw) - _L_NBYTES :]
        (index_nbytes,) = _U64.unpack(header)
        if self.total_nbytes is not None:
            _read_l(header, self.total_nbytes)
        if known is not None and index_nbytes != known:
            raise ChunkDecodeError(
                f"codec {NAME!r}: index length field says {index_nbytes} bytes, "
                f"an index of {n + 1} {codec.index_data_type} offsets has {known}"
            )
        if known is None:
            raw = self._read(
                RangeRequest(_L_NBYTES, _L_NBYTES + index_nbytes) if at_start else SuffixRequest(_L_NBYTES + index_nbytes)
            )
            if raw is not None and not at_start:
                raw = raw[: len(raw) - _L_NBYTES]
        elif at_start:
            raw = raw[_L_NBYTES:]
        else:
            raw = raw[: len(raw) - _L_NBYTES]
        if raw is None or len(raw) != index_nbytes:
            raise ChunkDecodeError(
                f"codec {NAME!r}: index length field says {index_nbytes} bytes, more than the chunk holds"
            )
        offsets = codec._decode_index(raw, n)
        if self.total_nbytes is not None:
            data_nbytes = self.total_nbytes - _L_NBYTES - index_nbytes
            if data_nbytes != int(offsets[-1]):
                raise ChunkDecodeError(
                    f"codec {NAME!r}: the index ends at offset {int(offsets[-1])} but the data part "
                    f"has {data_nbytes} bytes"
                )
        self._offsets = offsets
        # "end": the data part starts the chunk.
        self._data_start = _L_NBYTES + index_nbytes if at_start else 0


# -- module helpers --------------------------------------------------------




def _bind_data(chain: CodecChain, nbytes: int) -> BoundChain:
    return bind_part(NAME, "data_codecs", chain, ChunkSpec((nbytes,), _UINT8, 0))




def _read_l(field: bytes | memoryview, nbytes: int) -> int:
    """The index length ``L``; it must fit the chunk beside its own 8 bytes."""
    index_nbytes: int = _U64.unpack(field)[0]
    if index_nbytes > nbytes - _L_NBYTES:
        raise ChunkDecodeError(
            f"codec {NAME!r}: index length field says {index_nbytes} bytes, "
            f"the chunk has only {nbytes - _L_NBYTES} besides it"
        )
    return index_nbytes


def _gather(src: bytes, starts: np.ndarray, lengths: np.ndarray, shape: tuple[int, ...]) -> ArrayBytes:
    """Variable chunk of the byte runs ``src[starts[i]:starts[i]+lengths[i]]``."""
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    if total:
        idx = np.arange(total, dtype=np.int64) + np.repeat(starts - offsets[:-1], lengths)
        data = np.frombuffer(src, dtype=np.uint8)[idx].tobytes()
    else:
        data = b""
    return ArrayBytes.variable(offsets, data, shape)


__all__ = ["ByteReader", "VlenCodec", "VlenPartialDecoder"]
