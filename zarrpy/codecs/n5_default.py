"""n5_default array-to-bytes codec (zarr-extensions): N5 blocks in "default" mode.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/n5_default
V3 name: ``n5_default``; no V2 form.

A stored chunk is an N5 block: a big-endian header, then the chunk's
elements through a nested codec chain::

    mode: uint16 BE (0 = default)  ndim: uint16 BE  dims: ndim x uint32 BE  data...

``configuration.codecs`` is that chain, and must be N5's: a ``transpose`` that
reverses every dimension (N5 blocks are in F order), ``bytes`` (``endian``
``"big"``, or absent for 1-byte types), and at most one bytes-to-bytes codec
(the N5 compression: none for ``raw``, ``gzip``, ``blosc``, ``zstd``). The
header's dimensions are the block's shape in the array's dimension order
(the F-order layout makes N5's first dimension the array's first).

Decoding takes the block's shape from its header: a block smaller than the
chunk (Java's N5 writes boundary blocks truncated) is padded with the fill
value, a larger one cut. Blocks in another mode (``varlength`` 1, ``object``
2) are refused, and so is a header whose rank is not the array's. A block
larger than the chunk is decoded only up to the ceiling zarrpy keeps for
chunks whose size a header states (:func:`zarrpy.codecs._limits.max_chunk_nbytes`).

Encoding writes whole chunks (boundary blocks padded, as zarr-python 2 and
tensorstore do). Creating an array checks what N5 can store: data types
``(u)int8``..``(u)int64``, ``float32``, ``float64``; at most 65535 dimensions
of up to 2**32 - 1; a compression from the registry's table (gzip, blosc,
zstd, or none); reading takes any bytes-to-bytes codec in the chain.

>>> N5DefaultCodec.from_config({"codecs": [
...     {"name": "transpose", "configuration": {"order": [1, 0]}},
...     {"name": "bytes", "configuration": {"endian": "big"}}]}).to_json()["name"]
'n5_default'
"""

from __future__ import annotations

import struct
from typing import Any, Mapping, Sequence

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..errors import ChunkDecodeError, CodecError
from ._config import check_keys
from ._limits import max_chunk_nbytes
from ._parts import bind_part, decode_part
from .abc import ArrayToBytesCodec, ChunkSpec
from .bytes import BytesCodec
from .chain import CodecChain
from .fill import fill_chunk
from .transpose import TransposeCodec

NAME = "n5_default"
_MODES = {0: "default", 1: "varlength", 2: "object"}
N5_DATA_TYPES = ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float32", "float64")
"""The data types an N5 block holds (N5's ``dataType`` values)."""
N5_COMPRESSIONS = ("gzip", "blosc", "zstd")
"""The bytes-to-bytes codecs of the registry's N5-compression table (``raw`` is none)."""
_U32_MAX = 2**32 - 1


class N5DefaultCodec(ArrayToBytesCodec):
    """N5 default-mode blocks: a shape header, then the nested chain's bytes."""

    name = NAME
    __slots__ = ("codecs",)

    def __init__(self, codecs: CodecChain | Sequence[Any]):
        chain = CodecChain.from_field(NAME, "codecs", codecs)
        if len(chain.array_to_array) != 1 or not isinstance(chain.array_to_array[0], TransposeCodec):
            raise CodecError(f"codec {NAME!r}: 'codecs' must start with one 'transpose' codec (N5 blocks are in F order)")
        if not isinstance(chain.array_to_bytes, BytesCodec):
            raise CodecError(f"codec {NAME!r}: 'codecs' must have 'bytes' after 'transpose', got {chain.array_to_bytes.name!r}")
        if chain.array_to_bytes.endian == "little":
            raise CodecError(f"codec {NAME!r}: 'codecs': the 'bytes' codec's 'endian' must be \"big\" (N5 is big-endian)")
        if len(chain.bytes_to_bytes) > 1:
            raise CodecError(
                f"codec {NAME!r}: 'codecs' may end with at most one bytes-to-bytes codec (N5's compression), "
                f"got {[c.name for c in chain.bytes_to_bytes]}"
            )
        self.codecs: CodecChain = chain

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> N5DefaultCodec:
        config = check_keys(NAME, config, required=("codecs",))
        return cls(config["codecs"])

    def to_config(self) -> dict[str, Any]:
        return {"codecs": self.codecs.to_json()}

    # -- binding ---------------------------------------------------------
    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if spec.dtype.is_variable:
            raise CodecError(f"codec {NAME!r}: data type {spec.dtype.name!r} is variable-length (default-mode blocks hold fixed-size elements)")
        ndim = len(spec.shape)
        order = self.codecs.array_to_array[0].order  # type: ignore[attr-defined]
        if tuple(order) != tuple(range(ndim - 1, -1, -1)):
            raise CodecError(
                f"codec {NAME!r}: 'codecs': the 'transpose' order must be {list(range(ndim - 1, -1, -1))} "
                f"for {ndim} dimensions, got {list(order)}"
            )
        if ndim > 0xFFFF:
            raise CodecError(f"codec {NAME!r}: {ndim} dimensions do not fit the block header (uint16)")
        bind_part(NAME, "codecs", self.codecs, spec)
        return spec

    def evolve(self, spec: ChunkSpec) -> N5DefaultCodec:
        """Check that N5 can hold arrays of ``spec`` (called when one is created),
        and fill in the nested chain's chunk-dependent settings."""
        if spec.dtype.name not in N5_DATA_TYPES:
            raise CodecError(
                f"codec {NAME!r}: N5 has no data type {spec.dtype.name!r} (it stores {', '.join(N5_DATA_TYPES)})"
            )
        if any(n > _U32_MAX for n in spec.shape):
            raise CodecError(f"codec {NAME!r}: chunk shape {list(spec.shape)} does not fit the block header (uint32)")
        for b2b in self.codecs.bytes_to_bytes:
            if b2b.name not in N5_COMPRESSIONS:
                raise CodecError(
                    f"codec {NAME!r}: 'codecs': {b2b.name!r} is no N5 compression "
                    f"(the registry maps N5's raw, gzip, blosc and zstd: use none or one of {list(N5_COMPRESSIONS)})"
                )
        chain = self.codecs.evolve(spec)
        return self if chain == self.codecs else N5DefaultCodec(chain)

    # -- whole chunks -------------------------------------------------------
    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        if spec.dtype.name not in N5_DATA_TYPES:
            raise CodecError(f"codec {NAME!r}: N5 has no data type {spec.dtype.name!r}")
        if any(n > _U32_MAX for n in spec.shape):
            raise CodecError(f"codec {NAME!r}: chunk shape {list(spec.shape)} does not fit the block header (uint32)")
        header = struct.pack(f">HH{len(spec.shape)}I", 0, len(spec.shape), *spec.shape)
        return header + bind_part(NAME, "codecs", self.codecs, spec).encode(chunk)

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        """Decode one block; pad or cut it to the chunk's shape.

        Raises ChunkDecodeError for a short header, a mode other than
        default, a rank other than the array's, a block past the size
        ceiling, or data the nested chain cannot decode to the block's shape.
        """
        ndim = len(spec.shape)
        if len(data) < 4:
            raise ChunkDecodeError(f"codec {NAME!r}: {len(data)} bytes, too short for the block header")
        mode, rank = struct.unpack_from(">HH", data)
        if mode != 0:
            raise ChunkDecodeError(
                f"codec {NAME!r}: block mode {mode} ({_MODES.get(mode, 'unknown')}) is not supported (only default, 0)"
            )
        if rank != ndim:
            raise ChunkDecodeError(f"codec {NAME!r}: the block header has {rank} dimensions, the array {ndim}")
        start = 4 + 4 * ndim
        if len(data) < start:
            raise ChunkDecodeError(f"codec {NAME!r}: {len(data)} bytes, too short for a {ndim}-dimensional block header")
        shape = tuple(struct.unpack_from(f">{ndim}I", data, 4))
        if shape == tuple(spec.shape):
            return decode_part(NAME, "block", bind_part(NAME, "codecs", self.codecs, spec), data[start:])
        nbytes = int(np.prod(shape, dtype=object)) * spec.dtype.itemsize
        limit = max(spec.size * spec.dtype.itemsize, max_chunk_nbytes())
        if nbytes > limit:
            raise ChunkDecodeError(
                f"codec {NAME!r}: the block header says shape {list(shape)} ({nbytes} bytes), more than the chunk "
                f"{list(spec.shape)} can justify ({limit})"
            )
        block_spec = ChunkSpec(shape, spec.dtype, spec.fill_value)
        block = decode_part(NAME, "block", bind_part(NAME, "codecs", self.codecs, block_spec), data[start:])
        out = np.array(fill_chunk(spec).array, copy=True)
        common = tuple(slice(0, min(a, b)) for a, b in zip(shape, spec.shape))
        out[common] = block.array[common]
        return ArrayBytes.from_array(out)


__all__ = ["N5DefaultCodec", "N5_COMPRESSIONS", "N5_DATA_TYPES"]
