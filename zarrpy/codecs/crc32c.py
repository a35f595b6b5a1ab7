"""crc32c bytes-to-bytes codec (core): appends a CRC-32C checksum.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/crc32c/
V3 name: ``crc32c`` (alias ``numcodecs.crc32c``); V2 id: ``crc32c``.

Encoding appends the 4-byte little-endian CRC-32C (Castagnoli, RFC 3720) of
the input; decoding checks and strips it. The codec has no configuration:
it writes ``{"name": "crc32c"}`` (as zarr-python does) and also reads
``"configuration": {}``.

>>> Crc32cCodec.from_config({}).to_json()
{'name': 'crc32c'}
>>> Crc32cCodec().encode(b"123456789", None)[-4:].hex()
'839206e3'
"""

from __future__ import annotations

import struct
from typing import Any, Mapping

import google_crc32c

from ..errors import ChecksumError, ChunkDecodeError
from ._config import check_keys
from .abc import BytesToBytesCodec, ChunkSpec

_CHECKSUM = struct.Struct("<I")


class Crc32cCodec(BytesToBytesCodec):
    """Input followed by its CRC-32C, little-endian; 4 bytes longer."""

    name = "crc32c"
    v2_id = "crc32c"
    __slots__ = ()

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> Crc32cCodec:
        check_keys(cls.name, config)
        return cls()

    def compute_encoded_size(self, input_nbytes: int) -> int:
        return input_nbytes + _CHECKSUM.size

    def encode(self, data: bytes, spec: ChunkSpec) -> bytes:
        data = bytes(data)  # google_crc32c takes bytes, not views
        return data + _CHECKSUM.pack(google_crc32c.value(data))

    def decode(self, data: bytes, spec: ChunkSpec) -> bytes:
        """Check and strip the trailing checksum.

        Raises
        ------
        ChunkDecodeError
            If ``data`` is shorter than the 4-byte checksum.
        ChecksumError
            If the checksum does not match.
        """
        if len(data) < _CHECKSUM.size:
            raise ChunkDecodeError(
                f"codec 'crc32c': {len(data)} bytes is too short to hold a 4-byte checksum"
            )
        view = memoryview(data)
        payload = view[: len(view) - _CHECKSUM.size].tobytes()
        (stored,) = _CHECKSUM.unpack(view[len(view) - _CHECKSUM.size :])
        actual = google_crc32c.value(payload)
        if stored != actual:
            raise ChecksumError(
                f"codec 'crc32c': checksum mismatch: stored {stored:#010x}, "
                f"computed {actual:#010x} over {len(payload)} bytes"
            )
        return payload


__all__ = ["Crc32cCodec"]
