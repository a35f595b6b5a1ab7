"""Settings that only matter for writing never stop a read (issue #8).

numcodecs accepts gzip/zlib level -1 (zlib's default), any zstd level (libzstd
clamps) and stores whatever blosc clevel it was given; zarr-python reads such
arrays. zarrpy opens and reads them too, writes to them with the level clamped
(see the codec modules' docstrings), and still refuses such a level up front
when it creates an array.
"""

from __future__ import annotations

import json
import warnings
import zlib

import numcodecs
import numpy as np
import pytest
import zstandard

import zarrpy
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.blosc import BloscCodec
from zarrpy.codecs.gzip import GzipCodec
from zarrpy.codecs.zstd import ZstdCodec
from zarrpy.core.dtypes import DataType
from zarrpy.errors import CodecError

zarr = pytest.importorskip("zarr")  # zarr-python: the oracle (a test extra)
cpu = pytest.importorskip("zarr.core.buffer").cpu

DATA = (np.arange(120, dtype="<i4") % 17) * 3


def v2_by_zarr_python(compressor) -> dict:
    """A V2 array of DATA written by zarr-python with the numcodecs ``compressor``."""
    store = zarr.storage.MemoryStore()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(store, shape=DATA.shape, chunks=(50,), dtype=DATA.dtype, zarr_format=2,
                              compressors=compressor, fill_value=0)
        a[...] = DATA
    return {k: v.to_bytes() for k, v in store._store_dict.items()}


def v2_by_hand(config: dict, encoder) -> dict:
    """A V2 array of DATA whose ``.zarray`` says ``config``; chunks encoded by ``encoder``."""
    zarray = {"zarr_format": 2, "shape": [120], "chunks": [50], "dtype": "<i4", "fill_value": 0,
              "order": "C", "filters": None, "compressor": config}
    store = {".zarray": json.dumps(zarray).encode()}
    for i in range(3):
        chunk = np.zeros(50, "<i4")
        part = DATA[i * 50:(i + 1) * 50]
        chunk[:len(part)] = part
        store[str(i)] = bytes(encoder.encode(chunk))
    return store


def zarr_python_reads(store: dict) -> np.ndarray:
    buffers = {k: cpu.Buffer.from_bytes(v) for k, v in store.items()}
    return zarr.open_array(zarr.storage.MemoryStore(buffers), mode="r", zarr_format=2)[...]


@pytest.mark.parametrize(
    "compressor",
    [numcodecs.GZip(level=-1), numcodecs.Zlib(level=-1), numcodecs.Zstd(level=100), numcodecs.Zstd(level=23),
     numcodecs.Zstd(level=-5), numcodecs.Zstd(level=0), numcodecs.Zstd(level=-1_000_000)],
    ids=repr,
)
def test_v2_arrays_numcodecs_wrote_read(compressor):
    store = v2_by_zarr_python(compressor)
    stored = json.loads(store[".zarray"])["compressor"]
    assert stored["id"] == compressor.codec_id and stored["level"] == compressor.level
    a = zarrpy.open_array(store, mode="r")
    np.testing.assert_array_equal(a[...], DATA)


@pytest.mark.parametrize(
    "config, encoder",
    [
        ({"id": "blosc", "cname": "lz4", "clevel": 10, "shuffle": 1, "blocksize": 0}, numcodecs.Blosc("lz4", 9)),
        ({"id": "blosc", "cname": "zstd", "clevel": -1, "shuffle": 2, "blocksize": 0},
         numcodecs.Blosc("zstd", 0, shuffle=2)),
        ({"id": "blosc", "cname": "lz4", "clevel": 100, "shuffle": -1, "blocksize": 0}, numcodecs.Blosc("lz4", 5)),
        ({"id": "gzip", "level": 10}, numcodecs.GZip(9)),
        ({"id": "gzip", "level": -7}, numcodecs.GZip(1)),
        ({"id": "zlib", "level": 10}, numcodecs.Zlib(9)),
        ({"id": "zstd", "level": 10**6}, numcodecs.Zstd(22)),
    ],
    ids=lambda v: json.dumps(v) if isinstance(v, dict) else "",
)
def test_v2_documents_with_levels_no_encoder_takes_read(config, encoder):
    """Blosc refuses clevel 10 when encoding, but the metadata may still say it."""
    store = v2_by_hand(config, encoder)
    np.testing.assert_array_equal(zarr_python_reads(store), DATA)  # the peer reads it
    np.testing.assert_array_equal(zarrpy.open_array(store, mode="r")[...], DATA)


V3_LEVELS = [
    ({"name": "gzip", "configuration": {"level": -1}}, "gzip"),
    ({"name": "gzip", "configuration": {"level": 12}}, "gzip"),
    ({"name": "zstd", "configuration": {"level": 100, "checksum": False}}, "zstd"),
    ({"name": "zstd", "configuration": {"level": -(2**40), "checksum": True}}, "zstd"),
    ({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 10, "shuffle": "shuffle", "typesize": 4,
                                         "blocksize": 0}}, "blosc"),
    ({"name": "blosc", "configuration": {"cname": "zstd", "clevel": -3, "shuffle": "noshuffle", "typesize": 4,
                                         "blocksize": 0}}, "blosc"),
]
VALID = {"gzip": {"name": "gzip", "configuration": {"level": 5}},
         "zstd": {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
         "blosc": {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                      "typesize": 4, "blocksize": 0}}}


def v3_with(codec: dict, name: str, shards: bool) -> dict:
    """A V3 array of DATA written with a valid level, then its zarr.json edited to ``codec``."""
    store: dict = {}
    kwargs = {"chunks": (10,), "shards": (50,)} if shards else {"chunks": (50,)}
    a = zarrpy.create_array(store, shape=DATA.shape, dtype="int32", compressors=[VALID[name]], **kwargs)
    a[...] = DATA
    doc = json.loads(store["zarr.json"])
    if shards:
        doc["codecs"][0]["configuration"]["codecs"][-1] = codec
    else:
        doc["codecs"][-1] = codec
    store["zarr.json"] = json.dumps(doc).encode()
    return store


@pytest.mark.parametrize("shards", [False, True], ids=["plain", "sharded"])
@pytest.mark.parametrize("codec, name", V3_LEVELS, ids=lambda v: json.dumps(v) if isinstance(v, dict) else "")
def test_v3_documents_with_such_levels_read_and_write(codec, name, shards):
    store = v3_with(codec, name, shards)
    before = store["zarr.json"]
    a = zarrpy.open_array(store, mode="a")
    np.testing.assert_array_equal(a[...], DATA)
    a[5:70] = -DATA[5:70]  # written with the clamped level
    expected = DATA.copy()
    expected[5:70] *= -1
    np.testing.assert_array_equal(zarrpy.open_array(store, mode="r")[...], expected)
    assert store["zarr.json"] == before  # the stored setting is left as it is


def test_writes_clamp_the_level():
    """Each codec writes what its nearest valid level writes."""
    spec = ChunkSpec((1000,), DataType.from_numpy(np.dtype("i4")), 0)
    raw = (np.arange(1000, dtype="<i4") % 13).tobytes()
    assert zlib.decompress(GzipCodec(-1).encode(raw, spec), 31) == raw
    assert GzipCodec(-1).encode(raw, spec) == zlib.compress(raw, zlib.Z_DEFAULT_COMPRESSION, wbits=31)
    assert GzipCodec(-9).encode(raw, spec) == zlib.compress(raw, zlib.Z_DEFAULT_COMPRESSION, wbits=31)
    assert GzipCodec(42).encode(raw, spec) == GzipCodec(9).encode(raw, spec)
    assert ZstdCodec(100).encode(raw, spec) == ZstdCodec(22).encode(raw, spec)
    assert ZstdCodec(-(2**40)).encode(raw, spec) == ZstdCodec(-131072).encode(raw, spec)
    assert zstandard.ZstdDecompressor().decompress(ZstdCodec(100).encode(raw, spec)) == raw
    blosc = dict(cname="lz4", shuffle="shuffle", typesize=4)
    assert BloscCodec(clevel=10, **blosc).encode(raw, spec) == BloscCodec(clevel=9, **blosc).encode(raw, spec)
    assert BloscCodec(clevel=-1, **blosc).encode(raw, spec) == BloscCodec(clevel=0, **blosc).encode(raw, spec)


@pytest.mark.parametrize(
    "compressor",
    [numcodecs.GZip(level=-1), numcodecs.Zstd(level=100)],
    ids=repr,
)
def test_zarrpy_writes_to_such_v2_arrays_and_zarr_python_reads_them(compressor):
    store = v2_by_zarr_python(compressor)
    before = store[".zarray"]
    a = zarrpy.open_array(store, mode="a")
    a[:60] = DATA[:60] + 1
    expected = DATA.copy()
    expected[:60] += 1
    assert store[".zarray"] == before
    np.testing.assert_array_equal(zarr_python_reads(store), expected)
    np.testing.assert_array_equal(zarrpy.open_array(store, mode="r")[...], expected)


BAD_FOR_NEW = [
    ({"name": "gzip", "configuration": {"level": -1}}, "gzip", "level"),
    ({"name": "gzip", "configuration": {"level": 10}}, "gzip", "level"),
    ({"name": "zstd", "configuration": {"level": 23}}, "zstd", "level"),
    ({"name": "zstd", "configuration": {"level": -131073}}, "zstd", "level"),
    ({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 10, "shuffle": "shuffle"}}, "blosc", "clevel"),
    ({"name": "blosc", "configuration": {"cname": "lz4", "clevel": -1, "shuffle": "shuffle", "typesize": 4}},
     "blosc", "clevel"),
    (numcodecs.GZip(level=-1), "gzip", "level"),
    (numcodecs.Zstd(level=100), "zstd", "level"),
]


@pytest.mark.parametrize("layout", [{}, {"shards": (20,)}, {"zarr_format": 2}], ids=["plain", "sharded", "v2"])
@pytest.mark.parametrize("codec, name, field", BAD_FOR_NEW, ids=lambda v: str(v) if not isinstance(v, dict) else "")
def test_create_refuses_such_levels_up_front(codec, name, field, layout):
    store: dict = {}
    with pytest.raises(CodecError, match=f"'{name}'.*'{field}'"):
        zarrpy.create_array(store, shape=(40,), dtype="int32", chunks=(10,), compressors=[codec], **layout)
    assert store == {}
    group = zarrpy.create_group(store)
    snapshot = dict(store)
    with pytest.raises(CodecError, match=f"'{name}'.*'{field}'"):
        group.create_array("x", shape=(40,), dtype="int32", chunks=(10,), compressors=[codec], **layout)
    assert store == snapshot


@pytest.mark.parametrize("codec", [{"name": "gzip", "configuration": {"level": "5"}},
                                   {"name": "zstd", "configuration": {"level": 3.0}},
                                   {"name": "blosc", "configuration": {"cname": "lz4", "clevel": True,
                                                                       "shuffle": "shuffle"}}])
def test_a_level_that_is_not_an_integer_is_still_refused_on_open(codec):
    store: dict = {}
    zarrpy.create_array(store, shape=(4,), dtype="int32", chunks=(2,), compressors=[VALID[codec["name"]]])
    doc = json.loads(store["zarr.json"])
    doc["codecs"][-1] = codec
    store["zarr.json"] = json.dumps(doc).encode()
    with pytest.raises(CodecError, match=f"'{codec['name']}'.*level"):
        zarrpy.open_array(store, mode="r")
