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
from typing import Any, Mapping

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..errors import ChunkDecodeError, CodecError
from ._config import check_choice, check_keys
from .abc import ArrayToBytesCodec, ChunkSpec


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


_NATIVE = "<" if sys.byteorder == "little" else ">"

__all__ = ["BytesCodec"]
