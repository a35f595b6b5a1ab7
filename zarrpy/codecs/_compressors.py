"""Bounded decoders for the compressors numcodecs writes (zlib, bz2, lzma, lz4).

numcodecs decodes a whole frame before anyone can look at its size, so a
small hostile chunk decodes to gigabytes first. For the formats whose size
can be checked in advance or whose decoder streams, zarrpy decodes itself
(or checks the header before numcodecs allocates) and stops at the chunk's
bound (:mod:`zarrpy.codecs._limits`):

=========  ===============================================================
``zlib``   streamed (one stream; bytes after it ignored, as numcodecs does)
``bz2``    streamed (concatenated streams, as :func:`bz2.decompress`)
``lzma``   streamed (concatenated streams); the decoder's own memory (an
           xz dictionary, which the header sizes) is limited to 128 MiB,
           or the variable-length ceiling if higher: ``xz -9e`` needs 65 MiB
``lz4``    numcodecs' block format starts with the decoded size (int32
           LE): checked before numcodecs allocates it
``blosc``  the frame header (checked in :mod:`zarrpy.codecs.blosc`)
=========  ===============================================================

Other numcodecs codecs (``shuffle``, checksums, ``base64`` …) produce no
more than they receive; third-party ones are checked after decoding.
"""

from __future__ import annotations

import bz2
import lzma
import struct
import zlib
from collections.abc import Callable
from typing import Any

from ..errors import ChunkDecodeError
from ._limits import max_chunk_nbytes, too_large
from ._stream import MemberReader, read_capped
from .abc import ChunkSpec

BoundedDecode = Callable[[str, Any, bytes, int, ChunkSpec], bytes]
"""``(codec name, numcodecs object, data, limit, spec) -> decoded bytes``."""


def decompress_zlib(codec: str, data: bytes, limit: int, spec: ChunkSpec) -> bytes:
    """One zlib stream of at most ``limit`` bytes; bytes after its end are ignored."""
    read = MemberReader(codec, data, zlib.decompressobj, after="ignore", errors=(zlib.error,))
    return read_capped(codec, read, limit, spec)


def _zlib(codec: str, impl: Any, data: bytes, limit: int, spec: ChunkSpec) -> bytes:
    return decompress_zlib(codec, data, limit, spec)


def _bz2(codec: str, impl: Any, data: bytes, limit: int, spec: ChunkSpec) -> bytes:
    read = MemberReader(codec, data, bz2.BZ2Decompressor, after="members", errors=(OSError, EOFError))
    return read_capped(codec, read, limit, spec)


_LZMA_MEMLIMIT = 128 << 20


def _lzma(codec: str, impl: Any, data: bytes, limit: int, spec: ChunkSpec) -> bytes:
    fmt, filters = getattr(impl, "format", lzma.FORMAT_XZ), getattr(impl, "filters", None)

    def new() -> lzma.LZMADecompressor:
        if fmt == lzma.FORMAT_RAW:  # the filters (dictionary size included) come from the metadata
            return lzma.LZMADecompressor(format=fmt, filters=filters)
        return lzma.LZMADecompressor(format=fmt, memlimit=max(_LZMA_MEMLIMIT, max_chunk_nbytes()), filters=filters)

    read = MemberReader(codec, data, new, after="members", errors=(lzma.LZMAError, EOFError, ValueError))
    return read_capped(codec, read, limit, spec)


_LZ4_SIZE = struct.Struct("<i")


def _lz4(codec: str, impl: Any, data: bytes, limit: int, spec: ChunkSpec) -> bytes:
    if len(data) < _LZ4_SIZE.size:
        raise ChunkDecodeError(f"codec {codec!r}: {len(data)} bytes is too short for the 4-byte size header")
    (nbytes,) = _LZ4_SIZE.unpack_from(data)
    if nbytes > limit:
        raise ChunkDecodeError(too_large(codec, limit, spec, claimed=nbytes))
    try:
        out = impl.decode(data)
    except Exception as exc:  # noqa: BLE001 - numcodecs raises RuntimeError/ValueError … for corrupt blocks
        raise ChunkDecodeError(f"codec {codec!r}: corrupt data: {type(exc).__name__}: {exc}") from None
    return out if isinstance(out, bytes) else bytes(memoryview(out))


BOUNDED: dict[str, BoundedDecode] = {"zlib": _zlib, "bz2": _bz2, "lzma": _lzma, "lz4": _lz4}
"""numcodecs id -> its bounded decoder."""


__all__ = ["BOUNDED", "BoundedDecode", "decompress_zlib"]
