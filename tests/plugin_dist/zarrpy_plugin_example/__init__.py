"""An example zarrpy codec plugin: ``example.xor`` XORs every byte with a key.

Registered only through the ``zarrpy.codecs`` entry-point group (see
``pyproject.toml``); zarrpy imports this module the first time it meets the
codec name ``example.xor`` (or, in Zarr V2 metadata, the id ``example-xor``). Configuration: ``{"key": <int 0..255>}``
(default 0x5A); the configuration is always written in full.

When the environment variable ``ZARRPY_PLUGIN_EXAMPLE_LOG`` names a file,
importing this module appends the line ``imported`` to it, so a test can see
whether (and how often) the module was imported.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from zarrpy.codecs.abc import BytesToBytesCodec, ChunkSpec
from zarrpy.errors import CodecError

_log = os.environ.get("ZARRPY_PLUGIN_EXAMPLE_LOG")
if _log:
    with open(_log, "a") as f:
        f.write("imported\n")


class XorCodec(BytesToBytesCodec):
    """Bytes to bytes: every byte XOR ``key``. Its own inverse."""

    name = "example.xor"
    v2_id = "example-xor"  # Zarr V2: {"id": "example-xor", "key": ...}
    __slots__ = ("key",)

    def __init__(self, key: int = 0x5A):
        if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key <= 255:
            raise CodecError(f"codec 'example.xor': 'key' must be an integer in [0, 255], got {key!r}")
        self.key = key

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> XorCodec:
        config = dict(config or {})
        key = config.pop("key", 0x5A)
        if config:
            raise CodecError(f"codec 'example.xor': unknown configuration field(s) {sorted(config)}")
        return cls(key)

    def to_config(self) -> dict[str, Any]:
        return {"key": self.key}

    def compute_encoded_size(self, input_nbytes: int) -> int:
        return input_nbytes

    def _xor(self, data: bytes) -> bytes:
        return bytes(data).translate(bytes(b ^ self.key for b in range(256)))

    def encode(self, data: bytes, spec: ChunkSpec) -> bytes:
        return self._xor(data)

    def decode(self, data: bytes, spec: ChunkSpec) -> bytes:
        return self._xor(data)


__all__ = ["XorCodec"]
