"""Other names under which peers write the codecs zarrpy ships.

Only this module knows legacy and foreign names; everything else uses the
canonical V3 name the codec class writes.
"""

from __future__ import annotations

CODEC_ALIASES: dict[str, str] = {
    "endian": "bytes",  # zarr-python's legacy name for `bytes`
    "numcodecs.gzip": "gzip",
    "numcodecs.zstd": "zstd",
    "numcodecs.crc32c": "crc32c",
    # zarrs' vlen codecs: the 2024 draft's bare names and the codec URLs
    "vlen": "zarrs.vlen",
    "https://codec.zarrs.dev/array_to_bytes/vlen": "zarrs.vlen",
    "vlen_v2": "zarrs.vlen_v2",
    "https://codec.zarrs.dev/array_to_bytes/vlen_v2": "zarrs.vlen_v2",
    # numcodecs' VLenArray: zarr-python's V3 name is canonical, zarrs also writes its URL
    "https://codec.zarrs.dev/array_to_bytes/vlen_array": "numcodecs.vlen-array",
    # zarrs' optional (nullable) codec: its name before the `zarrs.` prefix, and its URL
    "optional": "zarrs.optional",
    "https://codec.zarrs.dev/array_to_bytes/optional": "zarrs.optional",
}
"""Alias -> canonical V3 name: legacy and foreign names that peers (zarr-python,
zarrs, numcodecs-in-V3) write for codecs zarrpy ships. Reading accepts both;
zarrpy writes only the canonical name."""
