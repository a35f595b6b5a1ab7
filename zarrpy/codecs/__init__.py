"""Codecs: the ABCs, the registry and every built-in codec class.

Classes are exported under zarr-python's names where it has one
(``zarr.codecs.GzipCodec`` is ``zarrpy.codecs.GzipCodec``; ``VLenUTF8Codec``
and ``VLenBytesCodec`` are aliases of zarrpy's ``VlenUtf8Codec`` and
``VlenBytesCodec``), so code written for zarr-python needs only its import
changed. ``create_array`` also takes zarr-python's and numcodecs' codec
objects themselves (:func:`~zarrpy.codecs.registry.codec_from_any`).

The codec modules are imported on first attribute access, not with this
package: ``import zarrpy`` stays cheap and starts nothing (zstandard,
numcodecs and blosc load when a codec that needs them is first used).

>>> from zarrpy.codecs import GzipCodec, ZstdCodec
>>> ZstdCodec(level=3).to_json()
{'name': 'zstd', 'configuration': {'level': 3, 'checksum': False}}
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .abc import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, ChunkSpec, Codec
from .registry import codec_from_json, get_codec_class, register_codec
from .user_forms import codec_from_any

# exported name -> (module, attribute)
_LAZY: dict[str, tuple[str, str]] = {
    "BytesCodec": ("bytes", "BytesCodec"),
    "TransposeCodec": ("transpose", "TransposeCodec"),
    "GzipCodec": ("gzip", "GzipCodec"),
    "ZstdCodec": ("zstd", "ZstdCodec"),
    "BloscCodec": ("blosc", "BloscCodec"),
    "Crc32cCodec": ("crc32c", "Crc32cCodec"),
    "ShardingCodec": ("sharding", "ShardingCodec"),
    "VlenUtf8Codec": ("vlen_v2", "VlenUtf8Codec"),
    "VlenBytesCodec": ("vlen_v2", "VlenBytesCodec"),
    "VLenUTF8Codec": ("vlen_v2", "VlenUtf8Codec"),  # zarr-python's spelling
    "VLenBytesCodec": ("vlen_v2", "VlenBytesCodec"),  # zarr-python's spelling
    "VlenV2Codec": ("vlen_v2", "VlenV2Codec"),
    "VlenCodec": ("vlen", "VlenCodec"),
    "VlenArrayCodec": ("vlen_array", "VlenArrayCodec"),
    "from_numcodecs": ("numcodecs", "from_numcodecs"),
}

if TYPE_CHECKING:
    from .blosc import BloscCodec
    from .bytes import BytesCodec
    from .crc32c import Crc32cCodec
    from .gzip import GzipCodec
    from .numcodecs import from_numcodecs
    from .sharding import ShardingCodec
    from .transpose import TransposeCodec
    from .vlen import VlenCodec
    from .vlen_array import VlenArrayCodec
    from .vlen_v2 import VlenBytesCodec, VlenUtf8Codec, VlenV2Codec
    from .vlen_v2 import VlenBytesCodec as VLenBytesCodec
    from .vlen_v2 import VlenUtf8Codec as VLenUTF8Codec
    from .zstd import ZstdCodec


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ArrayToArrayCodec",
    "ArrayToBytesCodec",
    "BytesToBytesCodec",
    "ChunkSpec",
    "Codec",
    "codec_from_any",
    "codec_from_json",
    "get_codec_class",
    "register_codec",
    *_LAZY,
]
