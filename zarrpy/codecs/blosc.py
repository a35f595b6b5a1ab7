"""blosc bytes-to-bytes codec (core): c-blosc1 frames.

Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/blosc/
V3 name: ``blosc``; V2 id: ``blosc`` (shuffle codes 0/1/2; -1 "auto" has no V3
form and is resolved from the item size when V2 metadata is converted).

Output is a c-blosc1 frame (16-byte header), byte-identical to V2 blosc, made
by :mod:`numcodecs.blosc`. That module is imported on first encode or decode,
not with zarrpy: importing numcodecs initialises blosc and its thread pool.

**typesize.** The spec requires ``typesize`` unless ``shuffle`` is
``noshuffle``; zarr-python nevertheless accepts it absent and fills it in from
the data type, so zarrpy reads it leniently too. Codecs are immutable, so
filling it in makes a new codec: :meth:`BloscCodec.evolve` returns the codec
with ``typesize`` set from a chunk spec's item size. The array layer calls it
before writing metadata, so that the stored ``typesize`` is always recorded;
``resolve`` only validates. Encoding with ``typesize`` absent uses the item
size directly, so the bytes are the same either way.

**clevel.** It only matters for writing, so stored metadata with any integer
``clevel`` opens and reads (the frame header says how to decode). A new array
needs a ``clevel`` in [0, 9], what c-blosc accepts: :meth:`BloscCodec.evolve`,
which array creation calls, refuses anything else. Writing to an existing
array whose stored ``clevel`` lies outside clamps to [0, 9]; the stored
metadata is left as it is.

Decoding reads the frame header first and checks that the stated sizes are
consistent with the input and with what the chunk can hold
(:mod:`zarrpy.codecs._limits`) before blosc allocates anything.

>>> BloscCodec.from_config(
...     {"typesize": 4, "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}
... ).to_config()
{'typesize': 4, 'cname': 'lz4', 'clevel': 5, 'shuffle': 'shuffle', 'blocksize': 0}
>>> BloscCodec(cname="zstd", shuffle="bitshuffle").to_config()
{'cname': 'zstd', 'clevel': 5, 'shuffle': 'bitshuffle', 'blocksize': 0}
"""

from __future__ import annotations

import struct
from typing import Any, Mapping

import numpy as np

from ..core._typing import BytesLike
from ..core.dtypes import DataType
from ..errors import ChunkDecodeError, CodecError
from ._config import check_any_int, check_choice, check_int, check_keys, clamp
from ._limits import max_decoded_nbytes, too_large
from .abc import BytesToBytesCodec, ChunkSpec, Codec

CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")
_SHUFFLE_CODE = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
_SHUFFLE_NAME = {v: k for k, v in _SHUFFLE_CODE.items()}
# numcodecs' defaults for keys a V2 config may leave out (they differ from zarrpy's).
_V2_DEFAULTS = {"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}

_INT32_MAX = 2**31 - 1
_HEADER_NBYTES = 16
_MAX_BUFFER_NBYTES = _INT32_MAX - _HEADER_NBYTES  # c-blosc1 BLOSC_MAX_BUFFERSIZE
_FLAG_MEMCPYED = 0x02


class BloscCodec(BytesToBytesCodec):
    """Blosc1 with compressor ``cname`` at ``clevel``, after a byte or bit shuffle.

    ``typesize`` None means "the item size of the data type"; see
    :meth:`evolve`. ``blocksize`` 0 lets blosc choose.
    """

    name = "blosc"
    v2_id = "blosc"
    __slots__ = ("typesize", "cname", "clevel", "shuffle", "blocksize")

    def __init__(
        self,
        *,
        cname: str = "zstd",
        clevel: int = 5,
        shuffle: str = "shuffle",
        typesize: int | None = None,
        blocksize: int = 0,
    ):
        self.cname: str = check_choice(self.name, "cname", cname, CNAMES)
        self.clevel: int = check_any_int(self.name, "clevel", clevel)
        self.shuffle: str = check_choice(self.name, "shuffle", shuffle, SHUFFLES)
        self.typesize: int | None = (
            None if typesize is None else check_int(self.name, "typesize", typesize, 1, _INT32_MAX)
        )
        self.blocksize: int = check_int(self.name, "blocksize", blocksize, 0, _INT32_MAX)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> BloscCodec:
        config = check_keys(
            cls.name,
            config,
            required=("cname", "clevel", "shuffle"),
            optional=("typesize", "blocksize"),
        )
        if "typesize" in config and config["typesize"] is None:
            raise CodecError("codec 'blosc': 'typesize' must be an integer >= 1, got None")
        return cls(**config)

    def to_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {} if self.typesize is None else {"typesize": self.typesize}
        config.update(cname=self.cname, clevel=self.clevel, shuffle=self.shuffle, blocksize=self.blocksize)
        return config

    @classmethod
    def from_v2_config(cls, config: Mapping[str, Any], *, typesize: int = 1) -> BloscCodec:
        """numcodecs' form: integer ``shuffle`` (-1, "auto": bitshuffle for a
        ``typesize`` of 1, else shuffle), numcodecs' defaults for absent keys;
        ``typesize`` is the item size blosc receives unless the config says."""
        conf = {**_V2_DEFAULTS, **{k: v for k, v in config.items() if k != "id"}}
        shuffle = conf.pop("shuffle")
        conf_typesize = conf.pop("typesize", None)
        if conf_typesize is not None:
            typesize = conf_typesize
        if shuffle == -1:
            shuffle = 2 if typesize == 1 else 1
        if shuffle not in _SHUFFLE_NAME:
            raise CodecError(f"codec 'blosc': 'shuffle' must be -1, 0, 1 or 2, got {shuffle!r}")
        return cls.from_config({
            "typesize": typesize, "cname": conf.pop("cname"), "clevel": conf.pop("clevel"),
            "shuffle": _SHUFFLE_NAME[shuffle], "blocksize": conf.pop("blocksize"), **conf,
        })

    def same_stored_form(self, other: Codec) -> bool:
        """``typesize`` aside (a frame records it, and V2 derives it)."""
        return isinstance(other, BloscCodec) and all(
            getattr(self, k) == getattr(other, k) for k in ("cname", "clevel", "shuffle", "blocksize")
        )

    def matches_v2_config(self, config: Mapping[str, Any]) -> bool:
        """numcodecs' shuffle -1 ("auto") is whichever shuffle V2 resolves it to."""
        if config.get("shuffle") == -1:
            config = {**config, "shuffle": _SHUFFLE_CODE[self.shuffle]}
        return super().matches_v2_config(config)

    def to_v2_config(self, data_type: DataType | None = None) -> dict[str, Any]:
        """numcodecs' form (integer shuffle, no typesize: V2 derives it)."""
        return {"id": "blosc", "cname": self.cname, "clevel": self.clevel,
                "shuffle": _SHUFFLE_CODE[self.shuffle], "blocksize": self.blocksize}

    def evolve(self, spec: ChunkSpec) -> BloscCodec:
        """This codec with ``typesize`` filled in from ``spec`` if it was absent.

        ``spec`` is the chunk spec the codec receives (the array-to-bytes
        codec's). Variable-length types have no item size: they get 1.
        A ``clevel`` outside [0, 9] is refused (CodecError naming it).
        """
        check_int(self.name, "clevel", self.clevel, 0, 9)
        if self.typesize is not None:
            return self
        return BloscCodec(
            cname=self.cname,
            clevel=self.clevel,
            shuffle=self.shuffle,
            typesize=_itemsize(spec),
            blocksize=self.blocksize,
        )

    encodes_buffers = True  # the library reads any contiguous buffer

    def encode(self, data: bytes, spec: ChunkSpec) -> bytes:
        from numcodecs import blosc

        typesize = self.typesize if self.typesize is not None else _itemsize(spec)
        try:
            compressed: bytes = blosc.compress(
                data,
                self.cname.encode("ascii"),
                clamp(self.clevel, 0, 9),
                _SHUFFLE_CODE[self.shuffle],
                self.blocksize,
                typesize,
            )
        except (ValueError, RuntimeError, OverflowError) as exc:
            raise CodecError(f"codec 'blosc': cannot compress with cname {self.cname!r}: {exc}") from None
        return compressed

    def decode(self, data: bytes, spec: ChunkSpec) -> bytes:
        """Decompress one blosc1 frame.

        Raises
        ------
        ChunkDecodeError
            If the header is truncated or inconsistent with the input, states
            a decoded size larger than the chunk can hold, or blosc fails.
        """
        nbytes = check_header(data, max_decoded_nbytes(spec), spec)
        if nbytes == 0:
            return b""  # blosc_decompress reports an error for empty frames
        from numcodecs import blosc

        try:
            out: bytes = blosc.decompress(data)
        except (RuntimeError, ValueError, TypeError, OverflowError) as exc:
            raise ChunkDecodeError(f"codec 'blosc': corrupt data: {exc}") from None
        if len(out) != nbytes:
            raise ChunkDecodeError(f"codec 'blosc': decoded {len(out)} bytes, header says {nbytes}")
        return out


    decodes_into_buffers = True

    def decode_into(self, data: BytesLike, dest: np.ndarray, spec: ChunkSpec) -> bool:
        """A frame whose checked header states exactly ``dest.size`` bytes,
        decoded into ``dest`` (blosc takes an output buffer); anything else
        is left to :meth:`decode`."""
        try:
            nbytes = check_header(data, max_decoded_nbytes(spec), spec)
        except ChunkDecodeError:
            return False
        if nbytes == 0 or nbytes != dest.size:
            return False
        from numcodecs import blosc

        try:
            blosc.decompress(data, dest)
        except (RuntimeError, ValueError, TypeError, OverflowError):
            return False
        return True


def _itemsize(spec: ChunkSpec) -> int:
    return max(spec.dtype.itemsize, 1)


def check_header(data: BytesLike, limit: int, spec: ChunkSpec, codec: str = "blosc") -> int:
    """Validate a frame header against ``data`` and ``limit``; return nbytes.

    ``codec`` is the name errors give (``numcodecs.blosc`` reads the same frames).

    c-blosc1 reads as many bytes as the header's ``cbytes`` says and allocates
    what ``nbytes`` says, so both are checked here first, as are the block
    start offsets of a compressed frame.
    """
    if len(data) < _HEADER_NBYTES:
        raise ChunkDecodeError(
            f"codec {codec!r}: {len(data)} bytes is too short for a blosc header ({_HEADER_NBYTES})"
        )
    fields: tuple[int, ...] = struct.unpack_from(
        "<BBBBIII", data
    )
    _version, _versionlz, flags, _typesize, nbytes, blocksize, cbytes = fields
    if cbytes != len(data):
        raise ChunkDecodeError(
            f"codec {codec!r}: header says the frame has {cbytes} bytes, got {len(data)}"
        )
    if nbytes > min(limit, _MAX_BUFFER_NBYTES):
        raise ChunkDecodeError(too_large(codec, min(limit, _MAX_BUFFER_NBYTES), spec, claimed=nbytes))
    if nbytes == 0:
        if cbytes != _HEADER_NBYTES:
            raise ChunkDecodeError(f"codec {codec!r}: an empty frame must be {_HEADER_NBYTES} bytes, got {cbytes}")
        return 0
    if flags & _FLAG_MEMCPYED:
        if cbytes != nbytes + _HEADER_NBYTES:
            raise ChunkDecodeError(
                f"codec {codec!r}: uncompressed frame of {nbytes} bytes must be "
                f"{nbytes + _HEADER_NBYTES} bytes long, got {cbytes}"
            )
        return nbytes
    if blocksize == 0:
        raise ChunkDecodeError(f"codec {codec!r}: header has a block size of 0")
    nblocks = -(-nbytes // blocksize)
    first = _HEADER_NBYTES + 4 * nblocks
    if first > cbytes:
        raise ChunkDecodeError(
            f"codec {codec!r}: {nblocks} blocks do not fit in a frame of {cbytes} bytes"
        )
    starts = np.frombuffer(data, dtype="<u4", count=nblocks, offset=_HEADER_NBYTES)
    if nblocks and (int(starts.min()) < first or int(starts.max()) >= cbytes):
        raise ChunkDecodeError(f"codec {codec!r}: a block starts outside the frame")
    return nbytes


__all__ = ["BloscCodec"]
