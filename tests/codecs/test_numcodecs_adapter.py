"""numcodecs adapter (``numcodecs.<id>``) and the ``numcodecs.vlen-array`` codec.

Config round trips, encode/decode through a CodecChain, byte equality with
numcodecs itself, errors, lazy loading, and arrays zarr-python 3 wrote with
``zarr.codecs.numcodecs`` codecs decoded from their chunk files byte for byte.
"""

from __future__ import annotations

import doctest
import json
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import zarrpy.codecs.numcodecs as adapter_module
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs import registry
from zarrpy.codecs.abc import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.gzip import GzipCodec
from zarrpy.codecs.numcodecs import (
    NumcodecsArrayCodec,
    NumcodecsArrayToBytesCodec,
    NumcodecsBytesCodec,
    codec_class,
    codec_kind,
    from_numcodecs,
)
from zarrpy.codecs.registry import codec_from_json, get_codec_class
from zarrpy.codecs.vlen_array import VlenArrayCodec
from zarrpy.codecs.zstd import ZstdCodec
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChunkDecodeError, CodecError, UnknownCodecError
from zarrpy.metadata.v3 import ArrayMetadataV3

numcodecs = pytest.importorskip("numcodecs")

LE = {"name": "bytes", "configuration": {"endian": "little"}}


def spec(shape, dtype, fill=0) -> ChunkSpec:
    dt = DataType.from_json(dtype)
    return ChunkSpec(tuple(shape), dt, dt.coerce_fill(fill))


def round_trip(codecs, data: np.ndarray, dtype: str) -> bytes:
    bound = CodecChain.from_json(codecs).bind(spec(data.shape, dtype))
    encoded = bound.encode(ArrayBytes.from_array(data))
    decoded = bound.decode(encoded)
    assert decoded.shape == data.shape
    np.testing.assert_array_equal(decoded.array, data)
    return encoded


def test_module_doctests():
    assert doctest.testmod(adapter_module).failed == 0
    import zarrpy.codecs.vlen_array as vlen_array_module

    assert doctest.testmod(vlen_array_module).failed == 0


# -- kinds, lookup, configuration -------------------------------------------------


@pytest.mark.parametrize(
    "codec_id, kind",
    [("delta", ArrayToArrayCodec), ("fixedscaleoffset", ArrayToArrayCodec), ("quantize", ArrayToArrayCodec),
     ("astype", ArrayToArrayCodec), ("bitround", ArrayToArrayCodec), ("packbits", ArrayToArrayCodec),
     ("zlib", BytesToBytesCodec), ("bz2", BytesToBytesCodec), ("lzma", BytesToBytesCodec),
     ("lz4", BytesToBytesCodec), ("shuffle", BytesToBytesCodec), ("blosc", BytesToBytesCodec),
     ("crc32", BytesToBytesCodec), ("adler32", BytesToBytesCodec), ("fletcher32", BytesToBytesCodec),
     ("jenkins_lookup3", BytesToBytesCodec), ("base64", BytesToBytesCodec)],
)
def test_kinds(codec_id, kind):
    cls = get_codec_class(f"numcodecs.{codec_id}")
    assert issubclass(cls, kind)
    assert issubclass(cls, NumcodecsArrayCodec if kind is ArrayToArrayCodec else NumcodecsBytesCodec)
    assert cls.name == f"numcodecs.{codec_id}" and cls.codec_id == codec_id
    assert get_codec_class(f"numcodecs.{codec_id}") is cls  # made once
    assert codec_kind("pcodec") == "array_to_bytes"


@pytest.mark.parametrize("alias, cls", [("numcodecs.gzip", GzipCodec), ("numcodecs.zstd", ZstdCodec),
                                        ("numcodecs.vlen-array", VlenArrayCodec),
                                        ("https://codec.zarrs.dev/array_to_bytes/vlen_array", VlenArrayCodec)])
def test_native_codecs_stay_native(alias, cls):
    assert get_codec_class(alias) is cls


@pytest.mark.parametrize(
    "json_codec",
    [
        {"name": "numcodecs.zlib", "configuration": {"level": 1}},
        {"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i4"}},
        {"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 0, "scale": 10, "dtype": "<f8", "astype": "u1"}},
        {"name": "numcodecs.lzma", "configuration": {"format": 1, "check": -1, "preset": None, "filters": None}},
        {"name": "numcodecs.blosc", "configuration": {"shuffle": -1}},
        {"name": "numcodecs.packbits", "configuration": {}},
        {"name": "numcodecs.vlen-array", "configuration": {"dtype": ">i2"}},
    ],
)
def test_configuration_round_trips_exactly(json_codec):
    codec = codec_from_json(json_codec)
    assert codec.to_json() == json_codec
    assert codec_from_json(codec.to_json()) == codec
    assert hash(codec) == hash(codec_from_json(json_codec))


def test_missing_configuration_reads_as_empty():
    assert codec_from_json({"name": "numcodecs.bz2"}).to_json() == {"name": "numcodecs.bz2", "configuration": {}}


def test_configuration_is_copied():
    config = {"level": 1}
    codec = codec_from_json({"name": "numcodecs.zlib", "configuration": config})
    config["level"] = 9
    assert codec.to_config() == {"level": 1}
    codec.to_config()["level"] = 5
    assert codec.to_config() == {"level": 1}


def test_codecs_pickle():
    codec = codec_from_json({"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}})
    assert pickle.loads(pickle.dumps(codec)) == codec


def test_from_numcodecs():
    assert from_numcodecs(numcodecs.Zlib(level=3)).to_json() == {"name": "numcodecs.zlib", "configuration": {"level": 3}}
    assert isinstance(from_numcodecs(numcodecs.Zstd(level=3)), ZstdCodec)
    assert from_numcodecs(numcodecs.Delta(dtype="<i2")).to_config() == {"dtype": "<i2", "astype": "<i2"}


def test_evolve_fills_in_what_zarr_python_fills_in():
    s = spec((4,), "float64")
    fso = codec_from_json({"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 1, "scale": 2}})
    assert fso.evolve(s).to_config() == {"offset": 1, "scale": 2, "dtype": "<f8"}
    shuffle = codec_from_json({"name": "numcodecs.shuffle", "configuration": {}})
    assert shuffle.evolve(s).to_config() == {"elementsize": 8}
    zlib = codec_from_json({"name": "numcodecs.zlib", "configuration": {"level": 1}})
    assert zlib.evolve(s) is zlib


def test_register_codec_can_claim_a_numcodecs_name(monkeypatch):
    saved = dict(registry._registry)
    try:
        class MyZlib(GzipCodec):
            name = "numcodecs.zlib"
            __slots__ = ()

        get_codec_class("numcodecs.zlib")  # the factory's class is not stored in the registry
        registry.register_codec(MyZlib)
        assert get_codec_class("numcodecs.zlib") is MyZlib
    finally:
        registry._registry.clear()
        registry._registry.update(saved)


def test_importing_zarrpy_does_not_import_numcodecs():
    code = (
        "import sys, zarrpy, zarrpy.pipeline.convert, zarrpy.metadata.v2, zarrpy.codecs.numcodecs;"
        "from zarrpy.codecs.registry import get_codec_class; get_codec_class('gzip');"
        "assert 'numcodecs' not in sys.modules, 'early';"
        "get_codec_class('numcodecs.zlib'); assert 'numcodecs' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- errors ------------------------------------------------------------------------


def test_unknown_numcodecs_id():
    with pytest.raises(UnknownCodecError, match=r"'numcodecs\.no-such'.*'no-such'") as info:
        get_codec_class("numcodecs.no-such")
    assert isinstance(info.value, CodecError)
    with pytest.raises(UnknownCodecError, match="numcodecs.no-such"):
        codec_from_json({"name": "numcodecs.no-such", "configuration": {}})
    with pytest.raises(UnknownCodecError):
        codec_class("numcodecs.")


@pytest.mark.parametrize("codec_id, fragment", [("pickle", "arbitrary code"), ("json2", "object"), ("msgpack2", "object"),
                                                ("categorize", "object"), ("vlen-utf8", "native codec 'vlen-utf8'")])
def test_refused_ids(codec_id, fragment):
    with pytest.raises(CodecError, match=fragment) as info:
        get_codec_class(f"numcodecs.{codec_id}")
    assert f"numcodecs.{codec_id}" in str(info.value)


@pytest.mark.parametrize(
    "json_codec, fragment",
    [
        ({"name": "numcodecs.zlib", "configuration": {"level": 1, "bogus": 2}}, "bogus"),
        ({"name": "numcodecs.delta", "configuration": {}}, "dtype"),
        ({"name": "numcodecs.delta", "configuration": {"dtype": "nonsense"}}, "invalid configuration"),
        ({"name": "numcodecs.zlib", "configuration": {"id": "bz2"}}, "'id'"),
        ({"name": "numcodecs.zlib", "configuration": [1]}, "must be an object"),
        ({"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i4", "extra": 1}}, "'extra'"),
        ({"name": "numcodecs.vlen-array", "configuration": {"dtype": "|O"}}, "numeric"),
        ({"name": "numcodecs.vlen-array", "configuration": {"dtype": 4}}, "dtype string"),
    ],
)
def test_bad_configuration_names_the_codec(json_codec, fragment):
    with pytest.raises(CodecError) as info:
        codec_from_json(json_codec)
    assert json_codec["name"] in str(info.value) and fragment in str(info.value)


@pytest.mark.parametrize(
    "codecs, dtype, fragment",
    [
        ([{"name": "numcodecs.delta", "configuration": {"dtype": "<i8"}}, LE], "int32", "'<i8' does not match"),
        ([{"name": "numcodecs.packbits", "configuration": {}}, LE], "int32", "needs bool"),
        ([{"name": "numcodecs.bitround", "configuration": {"keepbits": 3}}, LE], "int32", "needs float"),
        ([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, {"name": "vlen-utf8"}], "string", "variable-length"),
        ([{"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i2"}}], "string", "non-string"),
        ([{"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i2"}}], "int16", "variable-length"),
    ],
)
def test_unsupported_chunks_fail_at_bind(codecs, dtype, fragment):
    with pytest.raises(CodecError, match=fragment):
        CodecChain.from_json(codecs).bind(spec((4,), dtype, "" if dtype == "string" else 0))


@pytest.mark.parametrize("name", ["numcodecs.zlib", "numcodecs.bz2", "numcodecs.lzma", "numcodecs.lz4", "numcodecs.blosc"])
def test_corrupt_input_is_a_chunk_decode_error_naming_the_codec(name):
    bound = CodecChain.from_json([LE, {"name": name, "configuration": {}}]).bind(spec((8,), "int32"))
    good = bound.encode(ArrayBytes.from_array(np.arange(8, dtype="i4")))
    for bad in (b"garbage!" * 3, good[: len(good) // 2]):
        with pytest.raises(ChunkDecodeError, match=name.replace(".", r"\.")):
            bound.decode(bad)


def test_checksum_mismatch_is_a_chunk_decode_error():
    bound = CodecChain.from_json([LE, {"name": "numcodecs.crc32", "configuration": {}}]).bind(spec((4,), "int32"))
    good = bytearray(bound.encode(ArrayBytes.from_array(np.arange(4, dtype="i4"))))
    good[0] ^= 1
    with pytest.raises(ChunkDecodeError, match=r"numcodecs\.crc32"):
        bound.decode(bytes(good))


def test_decoded_size_is_checked_against_the_chunk():
    bound = CodecChain.from_json([LE, {"name": "numcodecs.zlib", "configuration": {"level": 9}}]).bind(spec((4,), "int32"))
    bomb = numcodecs.Zlib(9).encode(bytes(1 << 20))
    with pytest.raises(ChunkDecodeError, match="more than the chunk can hold"):
        bound.decode(bomb)


def test_filter_decode_of_the_wrong_size_is_a_chunk_decode_error():
    delta = codec_from_json({"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}})
    with pytest.raises(ChunkDecodeError, match=r"numcodecs\.delta.*expected 4"):
        delta.decode(ArrayBytes.from_array(np.arange(3, dtype="i4")), spec((4,), "int32"))


# -- round trips through a chain ----------------------------------------------------------


@pytest.mark.parametrize(
    "codecs, dtype",
    [
        ([LE, {"name": "numcodecs.zlib", "configuration": {"level": 1}}], "int32"),
        ([LE, {"name": "numcodecs.bz2", "configuration": {"level": 9}}], "uint16"),
        ([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, LE,
          {"name": "numcodecs.zlib", "configuration": {"level": 1}}], "int32"),
        ([{"name": "numcodecs.delta", "configuration": {"dtype": "<i8", "astype": "<i2"}}, LE,
          {"name": "numcodecs.bz2", "configuration": {"level": 1}}], "int64"),
        ([{"name": "numcodecs.delta", "configuration": {"dtype": ">i4", "astype": ">i2"}},
          {"name": "bytes", "configuration": {"endian": "big"}}], "int32"),
        ([{"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 1000, "scale": 100, "dtype": "<f8",
                                                                    "astype": "<i4"}}, LE], "float64"),
        ([{"name": "numcodecs.astype", "configuration": {"encode_dtype": "<i2", "decode_dtype": "<i4"}}, LE], "int32"),
        ([{"name": "numcodecs.quantize", "configuration": {"digits": 3, "dtype": "<f8"}}, LE], "float64"),
        ([{"name": "transpose", "configuration": {"order": [1, 0]}},
          {"name": "numcodecs.delta", "configuration": {"dtype": "<u2"}}, LE,
          {"name": "numcodecs.lzma", "configuration": {}}], "uint16"),
        ([LE, {"name": "numcodecs.shuffle", "configuration": {"elementsize": 8}},
          {"name": "numcodecs.lz4", "configuration": {}}], "float64"),
        ([LE, {"name": "numcodecs.blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": 2}}], "int16"),
        ([LE, {"name": "numcodecs.adler32", "configuration": {}}, {"name": "numcodecs.fletcher32", "configuration": {}},
          {"name": "numcodecs.jenkins_lookup3", "configuration": {}}, {"name": "numcodecs.base64", "configuration": {}}],
         "complex64"),
        ([{"name": "numcodecs.packbits", "configuration": {}}, {"name": "bytes"}], "bool"),
    ],
)
def test_round_trips(codecs, dtype):
    shape = (6, 5)
    if dtype == "bool":
        data = np.arange(30).reshape(shape) % 3 == 0
    elif dtype == "float64":
        data = (np.arange(30).reshape(shape) * 0.25).astype(dtype)
    else:
        data = (np.arange(30).reshape(shape) * 7 % 23).astype(dtype)
    round_trip(codecs, data, dtype)


def test_bytes_codecs_write_what_numcodecs_writes():
    data = np.arange(100, dtype="<i4")
    for numcodec in (numcodecs.Zlib(1), numcodecs.BZ2(5), numcodecs.LZMA(), numcodecs.LZ4(), numcodecs.Shuffle(4),
                     numcodecs.CRC32(), numcodecs.Blosc(cname="zstd", shuffle=1)):
        ours = round_trip([LE, from_numcodecs(numcodec)], data, "int32")
        assert ours == bytes(numcodec.encode(data.tobytes())), numcodec


def test_filters_write_what_numcodecs_writes_with_its_byte_order():
    # A V2 >i4 array: numcodecs sees the big-endian array, delta views it as >i4.
    data = np.arange(0, 60, 3, dtype="int32")
    numcodec = numcodecs.Delta(dtype=">i4", astype=">i2")
    expected = numcodec.encode(data.astype(">i4")).tobytes()
    ours = round_trip([from_numcodecs(numcodec), {"name": "bytes", "configuration": {"endian": "big"}}], data, "int32")
    assert ours == expected
    numcodec = numcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f8", astype="|u1")
    values = np.arange(10) / 10
    ours = round_trip([from_numcodecs(numcodec), {"name": "bytes"}], values, "float64")
    assert ours == numcodec.encode(values).tobytes()


def test_packbits_changes_the_shape():
    codec = codec_from_json({"name": "numcodecs.packbits", "configuration": {}})
    encoded = codec.resolve(spec((3, 5), "bool"))
    assert encoded.shape == (3,) and encoded.dtype.name == "uint8"  # 1 + ceil(15 / 8)


# -- numcodecs.vlen-array ------------------------------------------------------------------


def test_vlen_array_matches_numcodecs():
    items = np.empty(3, dtype=object)
    items[:] = [np.array([1, 2], ">i2"), np.array([], ">i2"), np.array([3], ">i2")]
    raw = numcodecs.VLenArray(">i2").encode(items)
    bound = CodecChain.from_json([{"name": "numcodecs.vlen-array", "configuration": {"dtype": ">i2"}}]).bind(
        spec((3,), "variable_length_bytes", b""))
    chunk = bound.decode(raw)
    assert chunk.to_bytes_list() == [b"\x01\x00\x02\x00", b"", b"\x03\x00"]  # little-endian elements
    assert bound.encode(chunk) == raw
    with pytest.raises(ChunkDecodeError, match="vlen-array"):
        bound.decode(raw[:-1])


# -- arrays zarr-python 3 wrote with zarr.codecs.numcodecs ---------------------------------------


zarr = pytest.importorskip("zarr")


def _zarr_python_numcodecs_cases():
    import zarr.codecs.numcodecs as znc

    return {
        "delta-zlib": dict(dtype="<i4", filters=[znc.Delta(dtype="<i4")], compressors=[znc.Zlib(level=1)]),
        "delta-astype-bz2": dict(dtype="<i8", filters=[znc.Delta(dtype="<i8", astype="<i2")], compressors=[znc.BZ2(level=9)]),
        "fixedscaleoffset-lzma": dict(dtype="<f8", filters=[znc.FixedScaleOffset(offset=0, scale=10, dtype="<f8", astype="u1")],
                                      compressors=[znc.LZMA()]),
        "quantize-lz4": dict(dtype="<f8", filters=[znc.Quantize(digits=2, dtype="<f8")], compressors=[znc.LZ4()]),
        "astype": dict(dtype="<f8", filters=[znc.AsType(encode_dtype="<f4", decode_dtype="<f8")], compressors=None),
        "bitround-shuffle-blosc": dict(dtype="<f4", filters=[znc.BitRound(keepbits=5)],
                                       compressors=[znc.Shuffle(), znc.Blosc(shuffle=-1)]),
        "packbits-checksums": dict(dtype="bool", filters=[znc.PackBits()],
                                   compressors=[znc.CRC32(), znc.Adler32(), znc.Fletcher32(), znc.JenkinsLookup3()]),
        "zstd-crc32c-numcodecs-names": dict(dtype="<u2", compressors=[znc.CRC32C(), znc.Zstd(level=3)]),
        "gzip-numcodecs-name": dict(dtype="<i2", compressors=[znc.GZip(level=1)]),
        "2d-delta": dict(dtype="<u4", shape=(9, 7), chunks=(4, 3), filters=[znc.Delta(dtype="<u4")],
                         compressors=[znc.Zlib(level=6)]),
    }


def _values(dtype, shape):
    n = int(np.prod(shape))
    if dtype == "bool":
        return (np.arange(n) % 3 == 0).reshape(shape)
    if dtype[1] == "f":
        return (np.arange(n) / 7).astype(dtype).reshape(shape)
    return (np.arange(n) * 5 % 31).astype(dtype).reshape(shape)


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(_zarr_python_numcodecs_cases()))
def test_zarr_python_numcodecs_arrays_decode_byte_exactly(tmp_path, name):
    kwargs = dict(_zarr_python_numcodecs_cases()[name])
    shape, chunks = kwargs.pop("shape", (10,)), kwargs.pop("chunks", (4,))
    path = tmp_path / name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arr = zarr.create_array(str(path), shape=shape, chunks=chunks, **kwargs)
        arr[:] = _values(kwargs["dtype"], shape)
        expected = arr[:]  # lossy filters: compare with what zarr-python reads
    meta = ArrayMetadataV3.from_bytes((path / "zarr.json").read_bytes())
    assert any(c["name"].startswith("numcodecs.") for c in meta.codecs)
    chain = CodecChain.from_json(meta.codecs)
    for ours, theirs in zip(chain.codecs, meta.codecs):
        if theirs["name"] not in ("numcodecs.gzip", "numcodecs.zstd", "numcodecs.crc32c"):  # native aliases
            assert ours.to_json() == theirs  # configurations kept verbatim
    bound = chain.bind(ChunkSpec(meta.chunk_shape, meta.data_type, meta.fill_value))
    keys = sorted(p for p in (path / "c").rglob("*") if p.is_file())
    assert keys
    for key in keys:
        coords = tuple(int(p) for p in key.relative_to(path / "c").parts)
        raw = key.read_bytes()
        chunk = bound.decode(raw).array
        region = tuple(slice(c * s, min((c + 1) * s, n)) for c, s, n in zip(coords, meta.chunk_shape, meta.shape))
        np.testing.assert_array_equal(chunk[tuple(slice(0, r.stop - r.start) for r in region)], expected[region])
        if "gzip" not in name:  # gzip headers carry numcodecs' mtime
            assert bound.encode(ArrayBytes.from_array(chunk)) == raw, key


@pytest.mark.integration
def test_zarr_python_reads_chunks_zarrpy_encoded_with_numcodecs_codecs(tmp_path):
    codecs = [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, LE,
              {"name": "numcodecs.zlib", "configuration": {"level": 1}}]
    doc = {"shape": [10], "data_type": "int32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": 0, "codecs": codecs, "attributes": {}, "zarr_format": 3, "node_type": "array"}
    meta = ArrayMetadataV3.from_json(doc)
    (tmp_path / "c").mkdir()
    (tmp_path / "zarr.json").write_bytes(meta.to_bytes())
    bound = CodecChain.from_json(meta.codecs).bind(ChunkSpec((4,), meta.data_type, meta.fill_value))
    data = np.arange(12, dtype="i4") * 3
    for i in range(3):
        (tmp_path / "c" / str(i)).write_bytes(bound.encode(ArrayBytes.from_array(data[i * 4:(i + 1) * 4].copy())))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = zarr.open_array(str(tmp_path), mode="r")[:]
    np.testing.assert_array_equal(got, data[:10])
    assert json.loads((tmp_path / "zarr.json").read_bytes())["codecs"] == codecs


# -- array-to-bytes numcodecs codecs (pcodec, zfpy) ------------------------------------------


@pytest.fixture
def fake_zfpy(monkeypatch):
    """A stand-in numcodecs codec registered as 'zfpy' (the real one needs the zfpy library)."""
    from numcodecs.abc import Codec as NumcodecsCodec

    class FakeZfpy(NumcodecsCodec):
        codec_id = "zfpy"

        def __init__(self, tolerance=-1):
            self.tolerance = tolerance

        def encode(self, buf):
            arr = np.ascontiguousarray(buf, dtype="<f8")
            return b"FZ" + arr.tobytes()

        def decode(self, buf, out=None):
            buf = bytes(buf)
            if buf[:2] != b"FZ":
                raise RuntimeError("not a fake zfpy stream")
            return np.frombuffer(buf[2:], dtype="<f8")

    monkeypatch.setitem(numcodecs.registry.codec_registry, "zfpy", FakeZfpy)
    monkeypatch.delitem(adapter_module._classes, "zfpy", raising=False)
    yield FakeZfpy
    adapter_module._classes.pop("zfpy", None)


def test_array_to_bytes_adapter(fake_zfpy):
    cls = get_codec_class("numcodecs.zfpy")
    assert issubclass(cls, NumcodecsArrayToBytesCodec) and issubclass(cls, ArrayToBytesCodec)
    data = np.arange(12, dtype="f8").reshape(3, 4) / 3
    encoded = round_trip([{"name": "numcodecs.zfpy", "configuration": {"tolerance": -1}},
                          {"name": "numcodecs.zlib", "configuration": {"level": 1}}], data, "float64")
    bound = CodecChain.from_json([{"name": "numcodecs.zfpy", "configuration": {}}]).bind(spec((3, 4), "float64"))
    with pytest.raises(ChunkDecodeError, match=r"numcodecs\.zfpy.*not a fake"):
        bound.decode(b"XX" + bytes(96))
    with pytest.raises(ChunkDecodeError, match=r"numcodecs\.zfpy.*expected 12"):
        bound.decode(b"FZ" + bytes(88))
    assert encoded


def test_array_to_bytes_adapter_in_a_v2_array(fake_zfpy):
    from zarrpy.pipeline.convert import v2_to_v3, v3_to_v2
    from zarrpy.metadata.v2 import ArrayMetadataV2

    meta = ArrayMetadataV2.from_json({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<f8", "fill_value": 0,
                                      "order": "C", "filters": None, "compressor": {"id": "zfpy", "tolerance": -1}})
    meta3 = v2_to_v3(meta)
    assert list(meta3.codecs) == [{"name": "numcodecs.zfpy", "configuration": {"tolerance": -1}}]
    back = v3_to_v2(meta3).to_json()
    assert (back["filters"], back["compressor"], back["dtype"]) == (None, {"id": "zfpy", "tolerance": -1}, "<f8")
