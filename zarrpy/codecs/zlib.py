"""zlib bytes-to-bytes codec (numcodecs' ``Zlib``, native): an RFC 1950 zlib stream.

Spec: https://numcodecs.readthedocs.io/en/stable/compression/zlib.html
V3 name: ``numcodecs.zlib`` (what zarr-python's ``zarr.codecs.numcodecs.Zlib``
writes); V2 id: ``zlib``.

Encoding is ``zlib.compress(data, level)``, byte for byte what numcodecs
writes. Decoding reads one zlib stream and, like numcodecs, ignores bytes after
its end; it stops with :class:`~zarrpy.errors.ChunkDecodeError` once the output
outgrows what the chunk can hold (:mod:`zarrpy.codecs._limits`), where
numcodecs would decode a bomb whole first.

**Configuration.** ``{"level": int}``; an absent level means numcodecs'
default 1 and is kept absent (zarr-python writes ``"configuration": {}`` for
``Zlib()``), so stored metadata reads and writes back unchanged. As with
``gzip``, any integer level opens and reads; a new array needs one in
[-1, 9] (zlib's range, -1 its default); writing with a stored level outside
it clamps.

The class is a :class:`~zarrpy.codecs.numcodecs.NumcodecsBytesCodec`, as
every ``numcodecs.<id>`` codec is, but it needs neither numcodecs nor the
adapter's machinery.

>>> ZlibCodec.from_config({"level": 3}).to_json()
{'name': 'numcodecs.zlib', 'configuration': {'level': 3}}
>>> ZlibCodec(3).to_v2_config()
{'id': 'zlib', 'level': 3}
"""

from __future__ import annotations

import zlib
from typing import Any, Mapping

from ._compressors import decompress_zlib
from ._config import check_any_int, check_int, check_keys, clamp
from ._limits import max_decoded_nbytes
from .abc import ChunkSpec
from .numcodecs import NumcodecsBytesCodec

_DEFAULT_LEVEL = 1  # numcodecs.Zlib's


class ZlibCodec(NumcodecsBytesCodec):
    """zlib at ``level`` -1 (zlib's default) or 0 (stored) to 9; None: numcodecs' default 1."""

    name = "numcodecs.zlib"
    codec_id = v2_id = "zlib"
    __slots__ = ("level",)

    def __init__(self, level: int | None = None):
        self.level: int | None = None if level is None else check_any_int(self.name, "level", level)
        self._config, self._impl = self.to_config(), None

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> ZlibCodec:
        return cls(check_keys(cls.name, config, optional=("level",)).get("level"))

    def to_config(self) -> dict[str, Any]:
        return {} if self.level is None else {"level": self.level}

    def evolve(self, spec: ChunkSpec) -> ZlibCodec:
        """Refuse a level outside [-1, 9] for a new array (CodecError naming it)."""
        check_int(self.name, "level", _DEFAULT_LEVEL if self.level is None else self.level, -1, 9)
        return self

    def encode(self, data: bytes, spec: ChunkSpec) -> bytes:
        return zlib.compress(data, _DEFAULT_LEVEL if self.level is None else clamp(self.level, -1, 9))

    def decode(self, data: bytes, spec: ChunkSpec) -> bytes:
        """Raises ChunkDecodeError if ``data`` is not a whole zlib stream or
        decodes to more bytes than the chunk can hold."""
        return decompress_zlib(self.name, data, max_decoded_nbytes(spec), spec)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.level,))


__all__ = ["ZlibCodec"]
