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
from typing import Any, Mapping, Sequence

import google_crc32c

from ..errors import ChecksumError, ChunkDecodeError
from ._config import check_keys
from ..core.byte_range import ByteRequest, RangeRequest, SuffixRequest
from .abc import ByteReader, BytesToBytesCodec, ChunkSpec
from .partial import PARTIAL_UNCHECKED, CodecCapabilities

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

    @property
    def capabilities(self) -> CodecCapabilities:
        return PARTIAL_UNCHECKED

    def partial_decoder(self, input: ByteReader, spec: ChunkSpec) -> ByteReader:
        """Ranges pass through to ``input`` unchecked (a checksum covers the
        whole value); a whole read (``None``) is checked as :meth:`decode` checks."""
        return _Crc32cReader(self, input, spec)


class _Crc32cReader(ByteReader):
    """The payload of a crc32c-encoded value: ranges read straight through
    (``size`` and ``cheap_requests`` keep the defaults: unknown, not cheap)."""

    __slots__ = ("codec", "input", "spec")

    def __init__(self, codec: Crc32cCodec, input: ByteReader, spec: ChunkSpec):
        self.codec, self.input, self.spec = codec, input, spec

    def _request(self, request: ByteRequest | None) -> ByteRequest | None:
        # Suffixes and open ends are relative to the payload's end, 4 bytes
        # before the value's: ask for the checksum too and cut it off after.
        if isinstance(request, SuffixRequest):
            return SuffixRequest(request.length + _CHECKSUM.size)
        return request

    def _answer(self, request: ByteRequest | None, raw: bytes | None) -> bytes | None:
        if raw is None:
            return None
        if request is None:
            return self.codec.decode(raw, self.spec)
        if isinstance(request, RangeRequest):
            return raw
        # Offset or suffix requests read to the end of the value: drop the checksum.
        if len(raw) < _CHECKSUM.size:
            if isinstance(request, SuffixRequest):
                raise ChunkDecodeError(
                    f"codec 'crc32c': {len(raw)} bytes is too short to hold a 4-byte checksum"
                )
            return b""
        return raw[: len(raw) - _CHECKSUM.size]

    def __call__(self, request: ByteRequest | None = None) -> bytes | None:
        return self._answer(request, self.input(self._request(request)))

    def read_many(self, requests: Sequence[ByteRequest | None]) -> list[bytes | None]:
        raws = self.input.read_many([self._request(r) for r in requests])
        return [self._answer(r, raw) for r, raw in zip(requests, raws)]


__all__ = ["Crc32cCodec"]
