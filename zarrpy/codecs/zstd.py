"""zstd bytes-to-bytes codec (registered extension): Zstandard frames.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/zstd
V3 name: ``zstd`` (alias ``numcodecs.zstd``); V2 id: ``zstd``.

Encoding writes one RFC 8878 frame with the content size in its header, and a
content checksum when ``checksum`` is true. ``level`` 0 means the library
default. Reading, ``checksum`` may be absent (false) and ``level`` too (0, as
zarr-python); ``to_config`` always writes both keys, as zarr-python and
tensorstore do.

**Levels.** The level only matters for writing, so stored metadata with any
integer level opens and reads (numcodecs accepts any level and libzstd clamps
it, e.g. ``100``). A new array needs a level in [-131072, 22], what libzstd
supports: :meth:`ZstdCodec.evolve`, which array creation calls, refuses
anything else. Writing to an existing array whose stored level lies outside
clamps to that range, as libzstd does for numcodecs; the stored metadata is
left as it is.

Decoding accepts frames with and without the content-size field, several
concatenated frames, and skippable frames. It never allocates on a header's
word more than the chunk can hold (:mod:`zarrpy.codecs._limits`): a single
frame whose stated size fits is decoded in one call; anything else (size not
stated, several frames) is streamed with the output checked as it grows.

>>> ZstdCodec.from_config({"level": 3}).to_config()
{'level': 3, 'checksum': False}
>>> ZstdCodec.from_config({"level": 0, "checksum": True}).to_json()
{'name': 'zstd', 'configuration': {'level': 0, 'checksum': True}}
"""

from __future__ import annotations

import threading
from typing import Any, Mapping

import numpy as np
import zstandard

from ..core._typing import BytesLike
from ..core.dtypes import DataType
from ..errors import ChunkDecodeError, CodecError
from ._config import check_any_int, check_int, check_keys, clamp
from ._limits import max_decoded_nbytes, too_large
from ._stream import read_capped
from .abc import BytesToBytesCodec, ChunkSpec

_MIN_LEVEL = -131072
_MAX_LEVEL = 22

# A zstd block regenerates at most 128 KiB, from as little as 4 bytes (an RLE
# block): at most 2**15 decoded bytes per compressed byte. Streaming decode
# feeds pieces of at most (output still allowed) / 2**15 bytes, and at least
# 64, so one call overshoots the limit by at most 2 MiB.
_MAX_RATIO_LOG2 = 15
_MIN_FEED_NBYTES = 64
_MAX_FEED_NBYTES = 1 << 16


class ZstdCodec(BytesToBytesCodec):
    """Zstandard at ``level`` (negative: faster; 0: default 3), optional checksum."""

    name = "zstd"
    v2_id = "zstd"
    __slots__ = ("level", "checksum")

    def __init__(self, level: int = 0, checksum: bool = False):
        self.level: int = check_any_int(self.name, "level", level)
        if not isinstance(checksum, bool):
            raise CodecError(f"codec 'zstd': 'checksum' must be true or false, got {checksum!r}")
        self.checksum: bool = checksum

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> ZstdCodec:
        config = check_keys(cls.name, config, optional=("level", "checksum"))
        return cls(config.get("level", 0), config.get("checksum", False))

    def to_config(self) -> dict[str, Any]:
        return {"level": self.level, "checksum": self.checksum}

    @classmethod
    def from_v2_config(cls, config: Mapping[str, Any], *, typesize: int = 1) -> ZstdCodec:
        """numcodecs' defaults: level 0, no checksum."""
        return cls.from_config({"level": 0, "checksum": False, **{k: v for k, v in config.items() if k != "id"}})

    def to_v2_config(self, data_type: DataType | None = None) -> dict[str, Any]:
        """``checksum`` only when true, as numcodecs writes it."""
        return {"id": "zstd", "level": self.level, **({"checksum": True} if self.checksum else {})}

    def evolve(self, spec: ChunkSpec) -> ZstdCodec:
        """Refuse a level libzstd does not have for a new array (CodecError naming it)."""
        check_int(self.name, "level", self.level, _MIN_LEVEL, _MAX_LEVEL)
        return self

    encodes_buffers = True  # the library reads any contiguous buffer

    def encode(self, data: bytes, spec: ChunkSpec) -> bytes:
        return _compressor(clamp(self.level, _MIN_LEVEL, _MAX_LEVEL), self.checksum).compress(data)

    def decode(self, data: bytes, spec: ChunkSpec) -> bytes:
        """Decompress all frames in ``data``.

        Raises
        ------
        ChunkDecodeError
            If ``data`` is not zstd, is truncated, fails its checksum, has
            trailing garbage, or decodes to more bytes than the chunk can hold.
        """
        try:
            return _decompress(data, max_decoded_nbytes(spec), spec)
        except zstandard.ZstdError as exc:
            raise ChunkDecodeError(f"codec 'zstd': corrupt data: {exc}") from None


    decodes_into_buffers = True

    def decode_into(self, data: BytesLike, dest: np.ndarray, spec: ChunkSpec) -> bool:
        """Exactly one whole frame stating ``dest.size`` bytes, decoded into
        ``dest`` (a contiguous ``uint8`` array) by this thread's reused
        decompression context: zstd decodes a whole frame that fits the
        output in one pass, straight into it, with the GIL released, and
        checks the stated size and the checksum. Anything else (no stated
        size, more frames or other bytes after it, a cut or corrupt frame)
        is left to :meth:`decode`, which raises the error. (numcodecs'
        ``decompress(data, out)`` does the same with a fresh context per
        call: about 9 µs more per chunk.)"""
        if len(data) == 0 or dest.size == 0:
            return False
        try:
            view = memoryview(data).cast("B")
            if zstandard.frame_content_size(view) != dest.size or _frame_nbytes(view, dest.size) != len(view):
                return False
            # A stream reader decodes a whole frame that fits in one pass (no
            # window buffer), and stops at the frame's end; the frame is known
            # whole, so it also reads and checks the checksum.
            reader = _decompressor().stream_reader(view, read_across_frames=False)
            if reader.readinto(dest) != dest.size:
                return False
        except (zstandard.ZstdError, ValueError, TypeError):
            return False
        return True


def _frame_nbytes(view: memoryview, content_nbytes: int) -> int | None:
    """The length of the zstd frame ``view`` starts with (its header, its
    blocks by their headers, its checksum), or None if it runs past the end
    or has more blocks than a frame of ``content_nbytes`` bytes needs.

    Each block header is read; zstd writes blocks of up to 128 KiB, so a
    chunk's frame has a few. Frames of many tiny blocks (at most one per KiB
    of content is walked here) are left to the checked :meth:`ZstdCodec.decode`,
    so the walk stays short whatever the data.
    """
    pos = zstandard.frame_header_size(view)
    end = len(view)
    for _ in range(content_nbytes // 1024 + 16):
        if pos + 3 > end:
            return None
        header = view[pos] | view[pos + 1] << 8 | view[pos + 2] << 16
        pos += 3 + (1 if (header >> 1) & 3 == 1 else header >> 3)  # an RLE block stores one byte
        if header & 1:  # the last block
            break
    else:
        return None
    if view[4] & 4:  # the frame header's descriptor: a content checksum follows
        pos += 4
    return pos if pos <= end else None


# zstandard's (de)compressor objects are not thread-safe but are costly to
# build for small chunks, so each thread keeps its own.
_local = threading.local()


def _compressor(level: int, checksum: bool) -> zstandard.ZstdCompressor:
    cache: dict[tuple[int, bool], zstandard.ZstdCompressor] | None = getattr(_local, "cctx", None)
    if cache is None:
        cache = _local.cctx = {}
    cctx = cache.get((level, checksum))
    if cctx is None:
        if len(cache) >= 8:
            cache.clear()
        cctx = cache[(level, checksum)] = zstandard.ZstdCompressor(
            level=level, write_checksum=checksum, write_content_size=True
        )
    return cctx


def _decompressor() -> zstandard.ZstdDecompressor:
    dctx = getattr(_local, "dctx", None)
    if dctx is None:
        dctx = _local.dctx = zstandard.ZstdDecompressor()
    return dctx


def _decompress(data: bytes, limit: int, spec: ChunkSpec) -> bytes:
    if len(data) == 0:
        raise ChunkDecodeError("codec 'zstd': empty input is not a zstd frame")
    content_size = zstandard.frame_content_size(data)
    if content_size > limit:
        raise ChunkDecodeError(too_large("zstd", limit, spec, claimed=content_size))
    if content_size > 0:
        # The common case: one frame of stated size, decoded in one call into
        # a buffer of exactly that size. Extra input means more frames (or
        # garbage): the streaming path sorts that out. (Size 0 goes there
        # too: zstandard returns b"" for it without reading the frame.)
        try:
            return _decompressor().decompress(data, allow_extra_data=False)
        except zstandard.ZstdError:
            pass
    return read_capped("zstd", _FrameReader(data), limit, spec)


class _FrameReader:
    """``read(budget)`` over the frames of ``data`` for :func:`read_capped`.

    zstandard's decompressor takes no output limit, so input is fed in
    pieces of at most ``budget / 2**15`` bytes: one piece then decodes to
    at most ``max(budget, 2 MiB)`` bytes.
    """

    __slots__ = ("_dobj", "_pos", "_view")

    def __init__(self, data: bytes):
        self._view = memoryview(data)
        self._pos = 0
        self._dobj: Any = None

    def __call__(self, budget: int) -> bytes:
        view = self._view
        while True:
            if self._dobj is not None and self._dobj.eof:
                self._pos -= len(self._dobj.unused_data)  # the next frame starts inside the last piece
                self._dobj = None
            if self._dobj is None:
                if self._pos >= len(view):
                    return b""
                self._dobj = _decompressor().decompressobj()
            if self._pos >= len(view):
                raise ChunkDecodeError(
                    f"codec 'zstd': truncated data ({len(view)} bytes; the frame does not end)"
                )
            feed = min(max(budget >> _MAX_RATIO_LOG2, _MIN_FEED_NBYTES), _MAX_FEED_NBYTES)
            piece = view[self._pos:self._pos + feed]
            self._pos += len(piece)
            out: bytes = self._dobj.decompress(piece)
            if out:
                return out


__all__ = ["ZstdCodec"]
