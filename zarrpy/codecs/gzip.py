"""gzip bytes-to-bytes codec (core): DEFLATE in an RFC 1952 gzip member.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/gzip/
V3 name: ``gzip`` (alias ``numcodecs.gzip``); V2 id: ``gzip``.

Encoding writes one gzip member (header and CRC-32/ISIZE trailer) with zlib.
Decoding accepts several concatenated members (as ``gzip`` does) and trailing
zero padding; it checks every member's CRC-32 and size, and stops with
:class:`~zarrpy.errors.ChunkDecodeError` once the output outgrows what the
chunk can hold (see :mod:`zarrpy.codecs._limits`). A missing ``level`` reads
as 5, zarr-python's default; ``to_config`` always writes it.

**Levels.** The level only matters for writing, so stored metadata with any
integer level opens and reads (numcodecs accepts ``-1``, zlib's default, and
zarr-python reads such V2 arrays). A new array needs a level in [0, 9] (the
spec's range): :meth:`GzipCodec.evolve`, which array creation calls, refuses
anything else. Writing to an existing array whose stored level is outside
[0, 9] clamps: a negative level writes as zlib's default (``-1``, i.e. 6),
one above 9 as 9. The stored metadata is left as it is.

>>> GzipCodec.from_config({"level": 5}).to_config()
{'level': 5}
>>> GzipCodec(1).to_json()
{'name': 'gzip', 'configuration': {'level': 1}}
"""

from __future__ import annotations

import zlib
from typing import Any, Mapping

from ._config import check_any_int, check_int, check_keys, clamp
from ._limits import max_decoded_nbytes
from ._stream import MemberReader, read_capped
from .abc import BytesToBytesCodec, ChunkSpec

_GZIP_WBITS = 31  # 16 + 15: gzip header/trailer, 32 KiB window
_DEFAULT_LEVEL = 5
_V2_DEFAULT_LEVEL = 1  # numcodecs.GZip's, for a V2 config without a level
_ZLIB_DEFAULT_LEVEL = -1  # zlib.Z_DEFAULT_COMPRESSION


class GzipCodec(BytesToBytesCodec):
    """gzip at ``level`` 0 (stored) to 9 (smallest)."""

    name = "gzip"
    v2_id = "gzip"
    __slots__ = ("level",)

    def __init__(self, level: int = _DEFAULT_LEVEL):
        self.level: int = check_any_int(self.name, "level", level)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> GzipCodec:
        config = check_keys(cls.name, config, optional=("level",))
        return cls(config.get("level", _DEFAULT_LEVEL))

    def to_config(self) -> dict[str, Any]:
        return {"level": self.level}

    @classmethod
    def from_v2_config(cls, config: Mapping[str, Any], *, typesize: int = 1) -> GzipCodec:
        return cls.from_config({"level": _V2_DEFAULT_LEVEL, **{k: v for k, v in config.items() if k != "id"}})

    def evolve(self, spec: ChunkSpec) -> GzipCodec:
        """Refuse a level outside [0, 9] for a new array (CodecError naming it)."""
        check_int(self.name, "level", self.level, 0, 9)
        return self

    encodes_buffers = True  # the library reads any contiguous buffer

    def encode(self, data: bytes, spec: ChunkSpec) -> bytes:
        level = _ZLIB_DEFAULT_LEVEL if self.level < 0 else clamp(self.level, 0, 9)
        return zlib.compress(data, level, wbits=_GZIP_WBITS)

    def decode(self, data: bytes, spec: ChunkSpec) -> bytes:
        """Decompress every member of ``data``.

        Raises
        ------
        ChunkDecodeError
            If ``data`` is not gzip, is truncated, fails a CRC-32 or size
            check, has trailing garbage, or decodes to more bytes than the
            chunk can hold.
        """
        limit = max_decoded_nbytes(spec)
        read = MemberReader(self.name, data, lambda: zlib.decompressobj(_GZIP_WBITS),
                            after="members_or_zeros", errors=(zlib.error,))
        return read_capped(self.name, read, limit, spec)


__all__ = ["GzipCodec"]
