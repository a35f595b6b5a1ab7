"""Other names under which peers write the codecs zarrpy ships.

Only this module knows legacy and foreign names; everything else uses the
canonical V3 name the codec class writes.
"""

from __future__ import annotations

# alias -> canonical name
CODEC_ALIASES: dict[str, str] = {
    "endian": "bytes",  # zarr-python's legacy name for `bytes`
    "numcodecs.gzip": "gzip",
    "numcodecs.zstd": "zstd",
    "numcodecs.crc32c": "crc32c",
}
