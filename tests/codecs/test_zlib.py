"""The native ``numcodecs.zlib`` codec (V2 id ``zlib``): one module, one registry
line, and this file: the shared codec contract (:mod:`tests.codecs.contract`)
plus what is particular to zlib (levels, bombs, truncation, interop)."""

from __future__ import annotations

import doctest
import json
import warnings
import zlib

import numcodecs
import numpy as np
import pytest

import zarrpy
import zarrpy.codecs.zlib as zlib_module
from tests.codecs.contract import CodecContract, Golden
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.zlib import ZlibCodec
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChunkDecodeError, CodecError

RAW = bytes(range(256)) * 40 + b"zarrpy" * 100
SPEC = ChunkSpec((len(RAW),), DataType.from_json("uint8"), 0)
DATA = (np.arange(120, dtype="<i4") % 17) * 3


def test_module_doctests():
    assert doctest.testmod(zlib_module).failed == 0


TEXT = list(b"zarr " * 20)


class TestZlibContract(CodecContract):
    codec_class = ZlibCodec
    configs = [{"level": 1}, {"level": 9}, {"level": -1}, {"level": 0}, {"level": 12}, {}, None]
    golden = [
        # numcodecs.Zlib(level=...).encode(b"zarr " * 20); Zlib() is level 1
        Golden({"level": 1}, "uint8", (100,), TEXT, "7801ab4a2c2a52a8a22d01006f57256d", "numcodecs 0.17.1"),
        Golden({"level": 9}, "uint8", (100,), TEXT, "78daab4a2c2a52a8a22d01006f57256d", "numcodecs 0.17.1"),
        Golden({}, "uint8", (100,), TEXT, "7801ab4a2c2a52a8a22d01006f57256d", "numcodecs 0.17.1"),
    ]


@pytest.mark.parametrize("config", [{"level": "1"}, {"level": True}, {"levle": 1}])
def test_bad_config_names_the_codec(config):
    with pytest.raises(CodecError, match="numcodecs.zlib"):
        ZlibCodec.from_config(config)


def test_new_arrays_need_a_zlib_level():
    with pytest.raises(CodecError, match="level"):
        ZlibCodec(10).evolve(SPEC)
    assert ZlibCodec(12).encode(RAW, SPEC) == ZlibCodec(9).encode(RAW, SPEC)  # stored levels clamp


@pytest.mark.parametrize("level", [None, -1, 0, 1, 3, 6, 9])
def test_data_round_trip_byte_identical_to_numcodecs(level):
    codec = ZlibCodec(level)
    reference = numcodecs.Zlib() if level is None else numcodecs.Zlib(level=level)
    encoded = codec.encode(RAW, SPEC)
    assert encoded == bytes(reference.encode(RAW))
    assert codec.decode(encoded, SPEC) == RAW
    assert bytes(reference.decode(encoded)) == RAW


def test_decompression_bomb_is_refused():
    bomb = zlib.compress(bytes(64 << 20), 9)  # 64 MiB of zeros, ~64 KiB
    spec = ChunkSpec((1000,), DataType.from_json("uint8"), 0)
    with pytest.raises(ChunkDecodeError, match="more than the chunk can hold"):
        ZlibCodec().decode(bomb, spec)


def test_corrupt_and_truncated_data():
    data = ZlibCodec().encode(RAW, SPEC)
    with pytest.raises(ChunkDecodeError, match="truncated"):
        ZlibCodec().decode(data[:-10], SPEC)
    with pytest.raises(ChunkDecodeError, match="corrupt"):
        ZlibCodec().decode(b"not zlib at all", SPEC)
    assert ZlibCodec().decode(data + b"\0\0", SPEC) == RAW  # trailing bytes ignored, as numcodecs does


def _zarr_python_store(compressor, zarr_format):
    zarr = pytest.importorskip("zarr")
    store = zarr.storage.MemoryStore()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(store, shape=DATA.shape, chunks=(50,), dtype=DATA.dtype, fill_value=0,
                              zarr_format=zarr_format, compressors=compressor)
        a[...] = DATA
    return {k: v.to_bytes() for k, v in store._store_dict.items()}


def _zarr_python_reads(store: dict) -> np.ndarray:
    zarr = pytest.importorskip("zarr")
    cpu = pytest.importorskip("zarr.core.buffer").cpu
    buffers = {k: cpu.Buffer.from_bytes(v) for k, v in store.items()}
    return zarr.open_array(zarr.storage.MemoryStore(buffers), mode="r")[...]


@pytest.mark.integration
@pytest.mark.parametrize("level", [1, 5, 9])
def test_v2_written_by_zarr_python_read_by_zarrpy(level):
    store = _zarr_python_store(numcodecs.Zlib(level=level), 2)
    assert json.loads(store[".zarray"])["compressor"] == {"id": "zlib", "level": level}
    a = zarrpy.open_array(store, mode="r")
    np.testing.assert_array_equal(a[...], DATA)


@pytest.mark.integration
@pytest.mark.parametrize("level", [1, 5, 9])
def test_v2_written_by_zarrpy_read_by_zarr_python(level):
    store: dict = {}
    a = zarrpy.create_array(store, shape=DATA.shape, dtype="int32", chunks=(50,), fill_value=0, zarr_format=2,
                            compressors=numcodecs.Zlib(level=level))
    a[...] = DATA
    assert json.loads(store[".zarray"])["compressor"] == {"id": "zlib", "level": level}
    np.testing.assert_array_equal(_zarr_python_reads(store), DATA)
    # the chunks are what numcodecs writes
    reference = _zarr_python_store(numcodecs.Zlib(level=level), 2)
    assert store["0"] == reference["0"] and store["2"] == reference["2"]


@pytest.mark.integration
def test_v3_name_and_chunks_match_zarr_python():
    zn = pytest.importorskip("zarr.codecs.numcodecs")
    for compressor in (zn.Zlib(level=3), zn.Zlib()):
        theirs = _zarr_python_store(compressor, 3)
        codec_json = json.loads(theirs["zarr.json"])["codecs"][-1]
        a = zarrpy.open_array(theirs, mode="r")
        np.testing.assert_array_equal(a[...], DATA)
        ours: dict = {}
        b = zarrpy.create_array(ours, shape=DATA.shape, dtype="int32", chunks=(50,), fill_value=0,
                                compressors=[codec_json])
        b[...] = DATA
        assert json.loads(ours["zarr.json"])["codecs"][-1] == codec_json  # same stored metadata
        assert ours["c/0"] == theirs["c/0"]
        np.testing.assert_array_equal(_zarr_python_reads(ours), DATA)
