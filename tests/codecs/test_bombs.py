"""Decompression bombs: small chunks that decode to gigabytes are refused early.

Each bomb decodes to 1 GiB (blosc: 512 MiB), or claims to in its header. It is fed to each
codec directly and, written as a chunk, read through ``open_array`` (a V3
string array, V2 ``|u1`` and string arrays): every read must fail with a
zarrpy error naming the codec, while tracemalloc's peak stays far below the
bomb. Variable-length chunks are bounded by the ceiling of
:mod:`zarrpy.codecs._limits`; most tests lower it to 4 MiB through
``ZARRPY_MAX_CHUNK_NBYTES`` to stay light, one keeps the default 256 MiB.
"""

from __future__ import annotations

import bz2
import functools
import lzma
import struct
import tracemalloc
import zlib
from collections.abc import Callable

import numcodecs
import numpy as np
import pytest

import zarrpy
from tests.codecs._vlen_helpers import STRING, items_of, variable_chunk
from zarrpy.codecs._limits import (
    DEFAULT_MAX_CHUNK_NBYTES,
    ENV_VAR,
    max_chunk_nbytes,
    max_decoded_nbytes,
)
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChunkDecodeError, CodecError
from zarrpy.stores import MemoryStore

GIB = 1 << 30
MIB = 1 << 20
SMALL_CEILING = 4 * MIB
UINT8 = DataType.from_json("uint8")
FIXED = ChunkSpec((64, 64), UINT8, 0)  # the probe's V2 |u1 64x64 chunk
STRINGS = ChunkSpec((4,), STRING, "")  # the probe's 4-element string chunk


# -- bombs -----------------------------------------------------------------


@functools.cache
def zstd_bomb(nbytes: int = GIB) -> bytes:
    """One zstd frame of RLE blocks (4 bytes per 128 KiB), no content size:
    32 KiB for 1 GiB."""
    block = 1 << 17
    header = b"\x28\xb5\x2f\xfd" + bytes([0x00, (17 - 10) << 3])  # no size stated; 128 KiB window
    rle = ((block << 3) | 2).to_bytes(3, "little") + b"\0"
    last = ((block << 3) | 3).to_bytes(3, "little") + b"\0"
    return header + rle * (nbytes // block - 1) + last


@functools.cache
def zlib_bomb() -> bytes:
    """One valid zlib stream of 1 GiB of zeros, about 1 MB: full-flushed
    segments need no history, so one 16 MiB segment is repeated."""
    zeros = bytes(16 * MIB)
    c = zlib.compressobj(9)
    segment = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    adler = 1
    for _ in range(64):
        adler = zlib.adler32(zeros, adler)
    return segment[:2] + segment[2:] * 64 + b"\x03\x00" + adler.to_bytes(4, "big")


@functools.cache
def gzip_bomb() -> bytes:
    """64 concatenated gzip members of 16 MiB of zeros each."""
    return zlib.compress(bytes(16 * MIB), 9, wbits=31) * 64


@functools.cache
def bz2_bomb() -> bytes:
    """128 concatenated bzip2 streams of 8 MiB of zeros each (6 KiB)."""
    return bz2.compress(bytes(8 * MIB)) * 128


@functools.cache
def xz_bomb() -> bytes:
    """64 concatenated xz streams of 16 MiB of zeros each."""
    return lzma.compress(bytes(16 * MIB)) * 64


@functools.cache
def lz4_bomb() -> bytes:
    """numcodecs' LZ4 block of 16 MiB of zeros, its size header set to 1 GiB."""
    frame = bytes(numcodecs.LZ4().encode(bytes(16 * MIB)))
    return struct.pack("<i", GIB) + frame[4:]


@functools.cache
def blosc_bomb() -> bytes:
    """A blosc frame of 512 MiB of zeros (blosc stores it as a few KiB)."""
    return bytes(numcodecs.Blosc(cname="zstd", clevel=9, shuffle=0).encode(np.zeros(GIB // 2, np.uint8)))


# (codec JSON, bomb) for every bounded decoder; numcodecs.* go through the adapter
BOMBS: dict[str, tuple[dict, Callable[[], bytes]]] = {
    "zstd": ({"name": "zstd", "configuration": {"level": 0, "checksum": False}}, zstd_bomb),
    "gzip": ({"name": "gzip", "configuration": {"level": 5}}, gzip_bomb),
    "numcodecs.zlib": ({"name": "numcodecs.zlib", "configuration": {"level": 1}}, zlib_bomb),
    "numcodecs.bz2": ({"name": "numcodecs.bz2", "configuration": {"level": 9}}, bz2_bomb),
    "numcodecs.lzma": ({"name": "numcodecs.lzma", "configuration": {}}, xz_bomb),
    "numcodecs.lz4": ({"name": "numcodecs.lz4", "configuration": {}}, lz4_bomb),
    "blosc": ({"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "noshuffle",
                                                  "typesize": 1, "blocksize": 0}}, blosc_bomb),
    "numcodecs.blosc": ({"name": "numcodecs.blosc", "configuration": {"cname": "zstd", "clevel": 5,
                                                                      "shuffle": 0}}, blosc_bomb),
}
V2_COMPRESSORS = {
    "zlib": numcodecs.Zlib(level=1), "gzip": numcodecs.GZip(level=1), "bz2": numcodecs.BZ2(),
    "lzma": numcodecs.LZMA(), "lz4": numcodecs.LZ4(), "blosc": numcodecs.Blosc(), "zstd": numcodecs.Zstd(),
}
V2_BOMBS = {"zlib": zlib_bomb, "gzip": gzip_bomb, "bz2": bz2_bomb, "lzma": xz_bomb, "lz4": lz4_bomb,
            "blosc": blosc_bomb, "zstd": zstd_bomb}


def peak_while_refused(fn: Callable[[], object]) -> tuple[int, ChunkDecodeError]:
    """tracemalloc's peak while ``fn`` runs; it must raise ChunkDecodeError."""
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError) as info:
            fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, info.value


@pytest.fixture
def small_ceiling(monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(SMALL_CEILING))


# -- the codecs directly ---------------------------------------------------


@pytest.mark.parametrize("name", list(BOMBS))
def test_bomb_refused_for_a_fixed_chunk(name):
    config, bomb = BOMBS[name]
    codec, data = codec_from_json(config), bomb()
    peak, exc = peak_while_refused(lambda: codec.decode(data, FIXED))
    assert repr(name) in str(exc)
    assert peak < 16 * MIB  # an xz decoder keeps its 8 MiB dictionary


@pytest.mark.parametrize("name", list(BOMBS))
def test_bomb_refused_for_a_string_chunk(name, small_ceiling):
    config, bomb = BOMBS[name]
    codec, data = codec_from_json(config), bomb()
    peak, exc = peak_while_refused(lambda: codec.decode(data, STRINGS))
    assert repr(name) in str(exc)
    assert ENV_VAR in str(exc)  # says how to raise the ceiling
    assert peak < SMALL_CEILING + 16 * MIB


def test_zstd_string_bomb_at_the_default_ceiling(monkeypatch):
    """The probe's case: 32 KiB decoding to 1 GiB as a 4-string chunk."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    data = zstd_bomb()
    assert len(data) < 33 * 1024
    peak, exc = peak_while_refused(lambda: codec_from_json(BOMBS["zstd"][0]).decode(data, STRINGS))
    assert str(max_decoded_nbytes(STRINGS)) in str(exc)
    assert peak < DEFAULT_MAX_CHUNK_NBYTES + 32 * MIB


def test_zstd_4_gib_bomb(small_ceiling):
    data = zstd_bomb(4 * GIB)
    assert len(data) <= 128 * 1024 + 6
    peak, _ = peak_while_refused(lambda: codec_from_json(BOMBS["zstd"][0]).decode(data, STRINGS))
    assert peak < SMALL_CEILING + 16 * MIB


def test_vlen_index_claiming_more_than_the_ceiling_is_refused_before_decoding(small_ceiling):
    """zarrs.vlen: the index says how much data to expect; more than the
    ceiling is refused before the data codecs run."""
    codec = codec_from_json({"name": "zarrs.vlen", "configuration": {
        "data_codecs": [{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_data_type": "uint64", "index_location": "start"}})
    index = np.array([0, 0, 0, 0, GIB], "<u8").tobytes()
    data = struct.pack("<Q", len(index)) + index + zstd_bomb()
    peak, exc = peak_while_refused(lambda: codec.decode(data, STRINGS))
    assert "'zarrs.vlen'" in str(exc) and str(GIB) in str(exc)
    assert peak < 16 * MIB  # an xz decoder keeps its 8 MiB dictionary


def xz_with_huge_dictionary() -> bytes:
    """A valid xz stream whose block header asks for a 1.5 GiB dictionary."""
    data = lzma.compress(b"hello" * 100, filters=[{"id": lzma.FILTER_LZMA2, "dict_size": MIB}])
    size = (data[12] + 1) * 4  # the block header follows the 12-byte stream header
    header = bytearray(data[12:12 + size])
    at = header.find(b"\x21\x01") + 2  # LZMA2 filter, 1 property byte: the dictionary size
    header[at] = 37  # 3 << 29 bytes
    header[-4:] = struct.pack("<I", zlib.crc32(bytes(header[:-4])))
    return data[:12] + bytes(header) + data[12 + size:]


def test_xz_dictionary_is_limited():
    """The decoder's own memory, which the header sizes, is capped too."""
    data = xz_with_huge_dictionary()
    assert lzma.decompress(data) == b"hello" * 100  # the stream is valid
    codec = codec_from_json(BOMBS["numcodecs.lzma"][0])
    peak, exc = peak_while_refused(lambda: codec.decode(data, FIXED))
    assert "'numcodecs.lzma'" in str(exc) and "limit" in str(exc)
    assert peak < 16 * MIB


# -- through open_array ----------------------------------------------------


@pytest.mark.parametrize("name", list(BOMBS))
def test_v3_string_array_bomb(name, small_ceiling):
    config, bomb = BOMBS[name]
    store = MemoryStore()
    zarrpy.create_array(store, shape=(4,), chunks=(4,), dtype=str, compressors=[config])
    store.set("c/0", bomb())
    array = zarrpy.open_array(store)
    peak, exc = peak_while_refused(lambda: array[...])
    assert "c/0" in str(exc) and repr(name) in str(exc)
    assert peak < SMALL_CEILING + 16 * MIB


@pytest.mark.parametrize("name", list(V2_COMPRESSORS))
def test_v2_uint8_array_bomb(name):
    store = MemoryStore()
    zarrpy.create_array(store, shape=(64, 64), chunks=(64, 64), dtype="|u1", zarr_format=2,
                        compressors=V2_COMPRESSORS[name])
    store.set("0.0", V2_BOMBS[name]())
    array = zarrpy.open_array(store)
    peak, exc = peak_while_refused(lambda: array[...])
    assert "0.0" in str(exc)
    assert peak < 16 * MIB  # an xz decoder keeps its 8 MiB dictionary


@pytest.mark.parametrize("name", ["zlib", "bz2", "lzma", "zstd"])
def test_v2_string_array_bomb(name, small_ceiling):
    store = MemoryStore()
    zarrpy.create_array(store, shape=(4,), chunks=(4,), dtype=str, zarr_format=2,
                        compressors=V2_COMPRESSORS[name])
    store.set("0", V2_BOMBS[name]())
    array = zarrpy.open_array(store)
    peak, _ = peak_while_refused(lambda: array[...])
    assert peak < SMALL_CEILING + 16 * MIB


# -- the ceiling -----------------------------------------------------------


def test_ceiling_default_and_environment(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert max_chunk_nbytes() == DEFAULT_MAX_CHUNK_NBYTES == 256 * MIB
    monkeypatch.setenv(ENV_VAR, str(GIB))
    assert max_chunk_nbytes() == GIB
    assert max_decoded_nbytes(STRINGS) == GIB + 16 * 4 + 65536


@pytest.mark.parametrize("value", ["0", "-5", "256MiB", "1e9"])
def test_bad_ceiling_is_an_error_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv(ENV_VAR, value)
    with pytest.raises(CodecError, match=ENV_VAR):
        codec_from_json(BOMBS["zstd"][0]).decode(zstd_bomb(), STRINGS)


@pytest.mark.parametrize("name", [n for n in BOMBS if n != "numcodecs.lz4"] + ["numcodecs.lz4"])
def test_long_strings_up_to_the_ceiling_decode(name, monkeypatch):
    """Legitimate chunks are not refused: 4 strings of 240 KiB under a 1 MiB ceiling."""
    monkeypatch.setenv(ENV_VAR, str(MIB))
    items = ["ab" * (120 * 1024), "c" * (240 * 1024), "", "d" * (240 * 1024 - 1)]
    chain = CodecChain.from_json([{"name": "vlen-utf8"}, BOMBS[name][0]]).bind(STRINGS)
    assert items_of(chain.decode(chain.encode(variable_chunk(items)))) == [s.encode() for s in items]


def test_many_empty_strings_are_not_refused_for_their_headers(monkeypatch):
    """The layouts' per-element headers do not count against the ceiling."""
    monkeypatch.setenv(ENV_VAR, "1024")
    spec = ChunkSpec((20000,), STRING, "")
    chain = CodecChain.from_json([{"name": "vlen-utf8"}, BOMBS["zstd"][0]]).bind(spec)
    assert items_of(chain.decode(chain.encode(variable_chunk([""] * 20000)))) == [b""] * 20000


def test_more_element_bytes_than_the_ceiling_need_it_raised(monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(MIB))
    chain = CodecChain.from_json([{"name": "vlen-utf8"}, BOMBS["zstd"][0]]).bind(STRINGS)
    encoded = chain.encode(variable_chunk(["x" * MIB] * 4))
    with pytest.raises(ChunkDecodeError, match=ENV_VAR):
        chain.decode(encoded)
    monkeypatch.setenv(ENV_VAR, str(8 * MIB))
    assert items_of(chain.decode(encoded)) == [b"x" * MIB] * 4
