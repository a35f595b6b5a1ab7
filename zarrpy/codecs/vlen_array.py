"""numcodecs ``vlen-array`` array-to-bytes codec: variable-length numeric vectors.

Spec: https://numcodecs.readthedocs.io/en/stable/other/vlen.html (VLenArray);
zarrs: https://codec.zarrs.dev/array_to_bytes/vlen_array
V3 name: ``numcodecs.vlen-array`` (also zarrs'
``https://codec.zarrs.dev/array_to_bytes/vlen_array``); V2 id: ``vlen-array``.

The interleaved layout of :mod:`zarrpy.codecs.vlen_v2` (``[n: u32]`` then per
element ``[nbytes: u32][bytes]``), where each element is a vector of the
configured numeric ``dtype`` in that dtype's byte order. Decoded chunks are
variable-form :class:`~zarrpy.core.array_bytes.ArrayBytes` whose element bytes are
*little-endian* (the pipeline's form for ragged numbers); turning them into a
:class:`~zarrpy.core.ragged.RaggedArray` is the array layer's job.

**Configuration.** ``{"dtype": "<i2"}`` (the numcodecs V2 ``dtype``, kept
verbatim). zarrs writes an empty configuration and takes the element type from
the data type; on ``string``/``bytes`` data that is the ``vlen-utf8`` layout,
so ``from_config`` without a ``dtype`` returns
:class:`~zarrpy.codecs.vlen_v2.UntypedVlenArrayCodec`. For ragged numbers
zarrpy has no data type to take the element type from, so ``dtype`` is needed
there. Until it has one, arrays of this codec use the ``variable_length_bytes``
data type as a stand-in (see :mod:`zarrpy.pipeline.convert`).

>>> VlenArrayCodec.from_config({"dtype": "<i2"}).to_json()
{'name': 'numcodecs.vlen-array', 'configuration': {'dtype': '<i2'}}
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..core.dtypes import DataType
from ..errors import CodecError
from ._config import check_keys
from .abc import ArrayToBytesCodec, ChunkSpec
from .vlen_v2 import UntypedVlenArrayCodec, _vlen_array_dtype, decode_vlen_array, encode_vlen_array


class VlenArrayCodec(ArrayToBytesCodec):
    """numcodecs ``VLenArray(dtype)``: one numeric vector per element, interleaved."""

    name = "numcodecs.vlen-array"
    v2_id = "vlen-array"
    __slots__ = ("dtype", "_text")

    def __init__(self, dtype: str):
        if not isinstance(dtype, str):
            raise CodecError(f"codec {self.name!r}: 'dtype' must be a dtype string such as '<i2', got {dtype!r}")
        try:
            self.dtype: np.dtype = _vlen_array_dtype(dtype)
        except CodecError as exc:
            raise CodecError(f"codec {self.name!r}: {exc}") from None
        self._text: str = dtype

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> ArrayToBytesCodec:
        """With a ``dtype``: numcodecs' VLenArray; without one, zarrs' untyped form."""
        config = check_keys(cls.name, config, optional=("dtype",))
        if "dtype" not in config:
            return UntypedVlenArrayCodec()
        return cls(config["dtype"])

    def to_config(self) -> dict[str, Any]:
        return {"dtype": self._text}

    @classmethod
    def from_v2_config(cls, config: Mapping[str, Any], *, typesize: int = 1) -> VlenArrayCodec:
        """numcodecs' ``{"id": "vlen-array", "dtype": ...}``; other keys are ignored."""
        if "dtype" not in config:
            raise CodecError("codec 'vlen-array' is missing its 'dtype'")
        return cls(config["dtype"])

    def to_v2_config(self, data_type: DataType | None = None) -> dict[str, Any]:
        if data_type is not None and not data_type.is_variable:
            raise CodecError(f"{self.name!r} needs a variable-length data type, got {data_type.name!r}")
        return {"id": "vlen-array", "dtype": self._text}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if not spec.dtype.is_variable or spec.dtype.is_string:
            raise CodecError(
                f"codec {self.name!r}: needs a variable-length (non-string) data type, got {spec.dtype.name!r}"
            )
        return spec

    def ragged_dtype(self) -> np.dtype:
        return np.dtype(self.dtype).newbyteorder("=")

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        if chunk.is_fixed:
            raise CodecError(f"codec {self.name!r}: expected a variable-length chunk, got {chunk!r}")
        return encode_vlen_array(chunk, self.dtype)

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        """Raises ChunkDecodeError (naming ``vlen-array``) on a corrupt chunk."""
        return decode_vlen_array(data, spec.shape, self.dtype)


__all__ = ["VlenArrayCodec"]
