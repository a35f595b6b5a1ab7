"""zarrs ``optional`` array-to-bytes codec: a validity mask and the present values, each with its own codecs.

Spec: https://codec.zarrs.dev/array_to_bytes/optional (experimental, zarrs 0.23)
V3 name: ``zarrs.optional`` (aliases ``optional`` and
``https://codec.zarrs.dev/array_to_bytes/optional``); no V2 id. It encodes
chunks of zarrs' ``optional`` data type (:mod:`zarrpy.core.dtypes.optional`)
and only those.

A chunk of n elements is stored as::

    [M: u64 LE] [D: u64 LE] [mask, M bytes] [data, D bytes]

The *mask* is the chunk's validity as a ``bool`` array of the chunk's shape
(True = present), encoded with ``mask_codecs`` (zarrs' default:
``packbits``, one bit per element, LSB first). The *data* is the present
elements only, in C order, as a 1-D array of the inner type of length
"number present", encoded with ``data_codecs``; it is empty (``D`` = 0,
``data_codecs`` not run) when nothing is present. For a nested optional
type the ``data_codecs`` hold another ``zarrs.optional`` codec. Decoding
gives missing elements zero value bytes (fixed-size inner types) or no
bytes (variable-length ones), as zarrs does.

Configuration: both ``mask_codecs`` and ``data_codecs`` are required (zarrs
refuses a configuration without either)::

    {"mask_codecs": [{"name": "packbits"}],
     "data_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}

>>> OptionalCodec().to_json()["name"]
'zarrs.optional'
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core import vlen_kernels
from ..core._typing import BytesLike
from ..core.array_bytes import ArrayBytes
from ..core.dtypes import DataType
from ..core.dtypes.optional import VALID, VALUE, inner_type, is_optional, is_paired_box, reads_in_pairs
from ..errors import ChunkDecodeError, CodecError
from ._config import check_keys
from .abc import ArrayToBytesCodec, ChunkSpec
from ._parts import bind_part, decode_part
from .chain import CodecChain

NAME = "zarrs.optional"
DEFAULT_MASK_CODECS: list[dict[str, Any]] = [{"name": "packbits"}]
DEFAULT_DATA_CODECS: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]

_HEADER = struct.Struct("<QQ")
_BOOL = DataType.from_json("bool")
_U32_ZERO = bytes(4)  # an interleaved chunk of no elements


class OptionalCodec(ArrayToBytesCodec):
    """Mask and present values of an ``optional`` chunk, encoded separately."""

    name = NAME
    __slots__ = ("data_codecs", "mask_codecs")

    def __init__(
        self,
        mask_codecs: CodecChain | Sequence[Any] | None = None,
        data_codecs: CodecChain | Sequence[Any] | None = None,
    ):
        self.mask_codecs: CodecChain = CodecChain.from_field(
            NAME, "mask_codecs", DEFAULT_MASK_CODECS if mask_codecs is None else mask_codecs
        )
        self.data_codecs: CodecChain = CodecChain.from_field(
            NAME, "data_codecs", DEFAULT_DATA_CODECS if data_codecs is None else data_codecs
        )
        bind_part(NAME, "mask_codecs", self.mask_codecs, ChunkSpec((1,), _BOOL, False))

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> OptionalCodec:
        config = check_keys(NAME, config, required=("mask_codecs", "data_codecs"))
        return cls(config["mask_codecs"], config["data_codecs"])

    def to_config(self) -> dict[str, Any]:
        return {"mask_codecs": self.mask_codecs.to_json(), "data_codecs": self.data_codecs.to_json()}

    # -- binding --------------------------------------------------------
    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if not is_optional(spec.dtype):
            raise CodecError(
                f"codec {NAME!r}: data type {spec.dtype.name!r} is not optional "
                f"(this codec encodes only {NAME!r} data types)"
            )
        bind_part(NAME, "mask_codecs", self.mask_codecs, _mask_spec(spec))
        bind_part(NAME, "data_codecs", self.data_codecs, _data_spec(spec, 1))
        return spec

    def evolve(self, spec: ChunkSpec) -> OptionalCodec:
        """This codec with the inner chains' chunk-dependent settings filled in."""
        if not is_optional(spec.dtype):
            return self
        mask = self.mask_codecs.evolve(_mask_spec(spec))
        data = self.data_codecs.evolve(_data_spec(spec, spec.size))
        if mask == self.mask_codecs and data == self.data_codecs:
            return self
        return OptionalCodec(mask, data)

    # -- whole chunks -----------------------------------------------------
    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        """Encode a chunk of optional elements (see :mod:`zarrpy.core.dtypes.optional`)."""
        n = spec.size
        if chunk.size != n:
            raise CodecError(f"codec {NAME!r}: chunk has {chunk.size} elements, spec says {n}")
        if spec.dtype.is_variable:
            mask, values = _split_variable(chunk)
        else:
            if not chunk.is_fixed:
                raise CodecError(f"codec {NAME!r}: expected a fixed-size chunk for {spec.dtype.name!r}, got {chunk!r}")
            flat = chunk.array.reshape(-1)
            mask = flat[VALID].astype(bool)
            values = ArrayBytes.from_array(np.ascontiguousarray(flat[VALUE][mask]))
        present = int(np.count_nonzero(mask))
        try:
            encoded_mask = bind_part(NAME, "mask_codecs", self.mask_codecs, _mask_spec(spec)).encode(
                ArrayBytes.from_array(mask.reshape(spec.shape))
            )
            encoded_data = (
                bind_part(NAME, "data_codecs", self.data_codecs, _data_spec(spec, present)).encode(values) if present else b""
            )
        except CodecError as exc:
            raise CodecError(f"codec {NAME!r}: {exc}") from None
        return b"".join((_HEADER.pack(len(encoded_mask), len(encoded_data)), encoded_mask, encoded_data))

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        """Decode a chunk of ``spec.size`` optional elements.

        Raises ChunkDecodeError when the chunk is shorter than its 16-byte
        header, its two lengths do not add up to its size, the mask does not
        decode to the chunk's shape, or the data does not decode to as many
        elements as the mask marks present.
        """
        mask, data_part = self._mask_and_data(data, spec)
        present = int(np.count_nonzero(mask))
        values = None
        if present:
            values = decode_part(NAME, "data", bind_part(NAME, "data_codecs", self.data_codecs, _data_spec(spec, present)), data_part)
        if spec.dtype.is_variable:
            return _join_variable(mask, values, spec)
        out = np.zeros(spec.shape, dtype=spec.dtype.numpy)
        flat = out.reshape(-1)
        if values is not None:
            if not values.is_fixed:
                raise ChunkDecodeError(f"codec {NAME!r}: data decoded to variable-length elements for {spec.dtype.name!r}")
            flat[VALUE][mask] = values.array.reshape(-1)
        flat[VALID] = mask
        return ArrayBytes.from_array(out)

    def _mask_and_data(self, data: bytes, spec: ChunkSpec) -> tuple[np.ndarray, bytes]:
        """The decoded mask (flat bool) and the encoded data part of a chunk;
        ChunkDecodeError when its header does not fit it."""
        nbytes = len(data)
        if nbytes < _HEADER.size:
            raise ChunkDecodeError(f"codec {NAME!r}: {nbytes} bytes, too short for the 16-byte header")
        mask_nbytes, data_nbytes = _HEADER.unpack_from(data)
        if _HEADER.size + mask_nbytes + data_nbytes != nbytes:
            raise ChunkDecodeError(
                f"codec {NAME!r}: header says {mask_nbytes} mask bytes and {data_nbytes} data bytes, "
                f"the chunk has {nbytes - _HEADER.size} besides the header"
            )
        view = memoryview(data)
        mask_part = bytes(view[_HEADER.size : _HEADER.size + mask_nbytes])
        data_part = bytes(view[_HEADER.size + mask_nbytes :])
        mask_chunk = decode_part(NAME, "mask", bind_part(NAME, "mask_codecs", self.mask_codecs, _mask_spec(spec)), mask_part)
        return mask_chunk.array.reshape(-1).astype(bool), data_part

    def decodes_into_elements(self, spec: ChunkSpec) -> bool:
        """Optional strings: :meth:`decode_into` fills value/flag pairs."""
        return reads_in_pairs(spec.dtype)

    def decode_into(self, data: BytesLike, spec: ChunkSpec, dest: np.ndarray, options: Any = None) -> bool:
        """Optional strings into value/flag pairs (``dest``: StringDType of
        ``spec.shape + (2,)``, see :mod:`zarrpy.pipeline.paired`): the mask,
        then the present strings straight into the values, missing ones
        ``""``, in one compiled pass, when the data part is just an
        interleaved vlen codec (zarrs' and zarrpy's default). False (nothing
        done) otherwise. Errors are those of :meth:`decode`."""
        from .vlen_v2 import InterleavedVlenCodec

        chain = self.data_codecs
        if not (reads_in_pairs(spec.dtype) and is_paired_box(dest, spec.shape) and not chain.array_to_array and not chain.bytes_to_bytes
                and isinstance(chain.array_to_bytes, InterleavedVlenCodec)):
            return False
        mask, data_part = self._mask_and_data(bytes(data) if not isinstance(data, bytes) else data, spec)
        if not mask.any():
            data_part = _U32_ZERO  # nothing present: the data part is not decoded (as in decode)
        vlen_kernels.strings_from_interleaved(
            data_part, dest[..., 0], codec=chain.array_to_bytes.name, mask=mask, flags=dest[..., 1])
        return True


def _mask_spec(spec: ChunkSpec) -> ChunkSpec:
    return ChunkSpec(spec.shape, _BOOL, False)


def _data_spec(spec: ChunkSpec, present: int) -> ChunkSpec:
    """The spec of the present values: 1-D, the inner type, its default fill
    (zero / empty / missing, as zarrs uses)."""
    inner = inner_type(spec.dtype)
    return ChunkSpec((present,), inner, inner.default_fill())


def _split_variable(chunk: ArrayBytes) -> tuple[np.ndarray, ArrayBytes]:
    """Mask and present values of variable optional elements (inner bytes + validity byte)."""
    if chunk.is_fixed:
        raise CodecError(f"codec {NAME!r}: expected a variable-length chunk, got {chunk!r}")
    offsets, data = chunk.offsets, chunk.data
    src = np.frombuffer(data, dtype=np.uint8)
    lengths = np.diff(offsets)
    if lengths.size and int(lengths.min()) < 1:
        raise CodecError(f"codec {NAME!r}: an optional element has no validity byte")
    ends = offsets[1:] - 1
    flags = src[ends] if ends.size else np.zeros(0, dtype=np.uint8)
    mask = flags != 0
    keep = np.zeros(len(data), dtype=bool)
    # payload bytes of present elements: every byte of theirs but the last
    starts = offsets[:-1][mask]
    body = lengths[mask] - 1
    if body.size and int(body.sum()):
        idx = np.repeat(starts - np.concatenate(([0], np.cumsum(body)[:-1])), body) + np.arange(int(body.sum()))
        keep[idx] = True
    new_offsets = np.zeros(body.size + 1, dtype=np.int64)
    np.cumsum(body, out=new_offsets[1:])
    return mask, ArrayBytes.variable(new_offsets, src[keep].tobytes(), (body.size,))


def _join_variable(mask: np.ndarray, values: ArrayBytes | None, spec: ChunkSpec) -> ArrayBytes:
    """Variable optional elements from the mask and the present values."""
    n = mask.size
    body = np.zeros(n, dtype=np.int64)
    payload = b""
    if values is not None:
        if values.is_fixed:
            raise ChunkDecodeError(f"codec {NAME!r}: data decoded to fixed-size elements for {spec.dtype.name!r}")
        body[mask] = np.diff(values.offsets)
        payload = values.data
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(body + 1, out=offsets[1:])
    out = np.zeros(int(offsets[-1]), dtype=np.uint8)
    flag_at = offsets[1:] - 1
    is_payload = np.ones(out.size, dtype=bool)
    is_payload[flag_at] = False
    out[is_payload] = np.frombuffer(payload, dtype=np.uint8)
    out[flag_at] = mask
    return ArrayBytes.variable(offsets, out.tobytes(), spec.shape)


__all__ = ["OptionalCodec"]
