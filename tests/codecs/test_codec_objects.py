"""Codecs given to ``create_array`` in every form users of zarr-python type.

zarrpy codec objects (``zarrpy.codecs``, under zarr-python's names),
zarr-python codec objects (``zarr.codecs``, recognised by ``to_dict()``),
numcodecs objects, V3 and numcodecs JSON dicts, names; alone or in lists.
Each case checks the stored metadata against what zarr-python writes for the
same arguments where zarr-python takes them, and reads the zarrpy-written
array back with zarrpy and with zarr-python.
"""

from __future__ import annotations

import enum
import json
import subprocess
import sys
import warnings

import numcodecs
import numpy as np
import pytest

import zarrpy
import zarrpy.codecs
from zarrpy.codecs.user_forms import codec_from_any
from zarrpy.errors import CodecError, UnknownCodecError

zarr = pytest.importorskip("zarr")  # zarr-python: the oracle (a test extra)
zc = pytest.importorskip("zarr.codecs")
znc = pytest.importorskip("zarr.codecs.numcodecs")

SHAPE, CHUNKS = (8, 8), (4, 4)


def _data(dtype: str) -> np.ndarray:
    n = np.arange(64).reshape(SHAPE)
    if dtype == "bool":
        return n % 3 == 0
    if dtype.startswith("float"):
        return (n * 0.25).astype(dtype)
    if dtype == "string":
        return np.array([f"s{i}" * (i % 4) for i in range(64)], dtype=object).reshape(SHAPE)
    if dtype == "bytes":
        return np.array([b"b" * (i % 5) for i in range(64)], dtype=object).reshape(SHAPE)
    return (n * 7 % 23).astype(dtype)


def _metadata(path, zarr_format: int) -> dict:
    with open(path / ("zarr.json" if zarr_format == 3 else ".zarray")) as f:
        return json.load(f)


def _codecs_part(doc: dict, zarr_format: int):
    return doc["codecs"] if zarr_format == 3 else (doc["dtype"], doc["filters"], doc["compressor"])


def _first_chunk(path, zarr_format: int) -> bytes:
    return (path / ("c/0/0" if zarr_format == 3 else "0.0")).read_bytes()


def _write(lib, path, zarr_format: int, dtype: str, kwargs: dict):
    create = zarr.create_array if lib is zarr else zarrpy.create_array
    store = zarr.storage.LocalStore(str(path)) if lib is zarr else str(path)
    data_type = dtype
    if dtype == "bytes":  # variable-length bytes; zarr-python needs its data type object for them
        data_type = zarr.dtype.VariableLengthBytes() if lib is zarr else bytes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr.codecs.numcodecs: "not in the Zarr V3 spec"
        a = create(store, shape=SHAPE, chunks=CHUNKS, dtype=data_type, zarr_format=zarr_format, **kwargs)
        a[...] = _data(dtype)


def _read_with_zarr_python(path) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(zarr.storage.LocalStore(str(path), read_only=True))[...]


def _check_both_read(path, dtype: str, expected=None) -> None:
    """zarrpy and zarr-python read ``expected`` (default: the data written) from ``path``."""
    expected = _data(dtype) if expected is None else expected
    got = zarrpy.open_array(str(path))[...]
    theirs = _read_with_zarr_python(path)
    if dtype in ("string", "bytes"):
        assert got.tolist() == expected.tolist() and theirs.tolist() == expected.tolist()
    else:
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(theirs, expected)


# (id, zarr_format, dtype, kwargs, same chunk bytes as zarr-python)
# gzip headers and shard layouts differ in bytes that do not change the data.
SAME_AS_ZARR_PYTHON = [
    ("zstd-single", 3, "int32", lambda: dict(compressors=zc.ZstdCodec(level=1)), True),
    ("blosc-tunable-int32", 3, "int32", lambda: dict(compressors=[zc.BloscCodec()]), True),
    ("blosc-tunable-uint8", 3, "uint8", lambda: dict(compressors=(zc.BloscCodec(cname="lz4"),)), True),
    ("blosc-explicit", 3, "int16", lambda: dict(compressors=zc.BloscCodec(
        cname="zlib", clevel=3, shuffle="noshuffle", typesize=2, blocksize=0)), True),
    ("gzip-crc32c", 3, "int32", lambda: dict(compressors=[zc.GzipCodec(level=5), zc.Crc32cCodec()]), False),
    ("transpose-big-endian", 3, "int32", lambda: dict(
        filters=[zc.TransposeCodec(order=(1, 0))], serializer=zc.BytesCodec(endian="big"), compressors=None), True),
    ("sharding-serializer", 3, "int32", lambda: dict(
        serializer=zc.ShardingCodec(chunk_shape=(2, 2), codecs=[zc.BytesCodec(), zc.BloscCodec()]),
        compressors=None), False),
    ("vlen-utf8", 3, "string", lambda: dict(serializer=zc.VLenUTF8Codec(), compressors=zc.ZstdCodec()), True),
    ("vlen-bytes", 3, "bytes", lambda: dict(serializer=zc.VLenBytesCodec(), compressors=None), True),
    ("zarr-numcodecs-wrappers", 3, "int32", lambda: dict(
        filters=[znc.Delta(dtype="<i4")], compressors=[znc.Shuffle(), znc.Zlib(level=2)]), True),
    ("v2-zstd-single", 2, "int32", lambda: dict(compressors=numcodecs.Zstd(level=1)), True),
    ("v2-zstd-checksum", 2, "int32", lambda: dict(compressors=[numcodecs.Zstd(level=1, checksum=True)]), True),
    ("v2-blosc", 2, "int32", lambda: dict(compressors=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=2)), True),
    ("v2-blosc-autoshuffle", 2, "int16", lambda: dict(compressors=numcodecs.Blosc(shuffle=-1)), True),
    ("v2-gzip", 2, "int32", lambda: dict(compressors=numcodecs.GZip(level=5)), False),
    ("v2-zlib", 2, "int32", lambda: dict(compressors=numcodecs.Zlib(3)), True),
    ("v2-lz4", 2, "int32", lambda: dict(compressors=numcodecs.LZ4()), True),
    ("v2-crc32c", 2, "int32", lambda: dict(compressors=numcodecs.CRC32C()), True),
    ("v2-delta-bz2", 2, "int32", lambda: dict(filters=[numcodecs.Delta("<i4")], compressors=numcodecs.BZ2()), True),
    ("v2-shuffle-filter", 2, "int32", lambda: dict(filters=(numcodecs.Shuffle(4),)), True),
    ("v2-astype", 2, "int32", lambda: dict(filters=[numcodecs.AsType(encode_dtype="<i2", decode_dtype="<i4")]), True),
    ("v2-fixedscaleoffset", 2, "float64", lambda: dict(
        filters=[numcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f8", astype="<i4")]), True),
    ("v2-quantize", 2, "float64", lambda: dict(filters=[numcodecs.Quantize(digits=2, dtype="<f8")]), True),
    ("v2-bitround", 2, "float32", lambda: dict(filters=[numcodecs.BitRound(keepbits=5)]), True),
    ("v2-packbits", 2, "bool", lambda: dict(filters=[numcodecs.PackBits()]), True),
    ("v2-vlen-utf8-as-filter", 2, "string", lambda: dict(filters=[numcodecs.VLenUTF8()]), True),
    ("v2-vlen-bytes-as-filter", 2, "bytes", lambda: dict(filters=numcodecs.VLenBytes(), compressors=None), True),
    ("v2-vlen-utf8-auto", 2, "string", lambda: dict(compressors=numcodecs.Zlib(1)), True),
    ("v2-numcodecs-dict", 2, "int32", lambda: dict(compressors={"id": "zstd", "level": 2}), True),
    ("v2-no-compressor", 2, "int32", lambda: dict(compressors=None), True),
]


@pytest.mark.parametrize(
    "zarr_format, dtype, make_kwargs, same_bytes",
    [case[1:] for case in SAME_AS_ZARR_PYTHON],
    ids=[case[0] for case in SAME_AS_ZARR_PYTHON],
)
def test_stores_what_zarr_python_stores(tmp_path, zarr_format, dtype, make_kwargs, same_bytes):
    _write(zarr, tmp_path / "theirs", zarr_format, dtype, make_kwargs())
    _write(zarrpy, tmp_path / "ours", zarr_format, dtype, make_kwargs())
    theirs = _codecs_part(_metadata(tmp_path / "theirs", zarr_format), zarr_format)
    ours = _codecs_part(_metadata(tmp_path / "ours", zarr_format), zarr_format)
    assert ours == theirs
    if same_bytes:
        assert _first_chunk(tmp_path / "ours", zarr_format) == _first_chunk(tmp_path / "theirs", zarr_format)
    # lossy filters (quantize, bitround ...): both read what zarr-python reads from its own array
    _check_both_read(tmp_path / "ours", dtype, expected=_read_with_zarr_python(tmp_path / "theirs"))


# Forms zarr-python refuses (numcodecs objects for V3, zarr-python objects for
# V2, lists of V2 compressors, ...): what zarrpy stores, and both read it.
ZARRPY_ONLY = [
    ("v3-numcodecs-zstd-is-native", 3, "int32", lambda: dict(compressors=numcodecs.Zstd(level=1)),
     [{"name": "bytes", "configuration": {"endian": "little"}},
      {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]),
    ("v3-numcodecs-gzip-crc32c-are-native", 3, "int32", lambda: dict(
        compressors=[numcodecs.GZip(level=2), numcodecs.CRC32C()]),
     [{"name": "bytes", "configuration": {"endian": "little"}},
      {"name": "gzip", "configuration": {"level": 2}}, {"name": "crc32c"}]),
    ("v3-numcodecs-zlib-delta", 3, "int32", lambda: dict(
        filters=numcodecs.Delta(dtype="<i4"), compressors=numcodecs.Zlib(level=2)),
     [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i4"}},
      {"name": "bytes", "configuration": {"endian": "little"}},
      {"name": "numcodecs.zlib", "configuration": {"level": 2}}]),
    ("v3-numcodecs-blosc", 3, "int32", lambda: dict(compressors=numcodecs.Blosc(cname="zstd", clevel=1)),
     [{"name": "bytes", "configuration": {"endian": "little"}},
      {"name": "numcodecs.blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": 1, "blocksize": 0}}]),
    ("v3-numcodecs-shuffle-filter", 3, "int32", lambda: dict(filters=[numcodecs.Shuffle(4)], compressors=None),
     [{"name": "bytes", "configuration": {"endian": "little"}},
      {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}]),
    ("v3-numcodecs-dict", 3, "int32", lambda: dict(compressors={"id": "gzip", "level": 4}),
     [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 4}}]),
    ("v3-zarrpy-objects", 3, "int32", lambda: dict(
        filters=zarrpy.codecs.TransposeCodec((1, 0)), serializer=zarrpy.codecs.BytesCodec("big"),
        compressors=[zarrpy.codecs.BloscCodec(cname="lz4", shuffle="bitshuffle"), zarrpy.codecs.Crc32cCodec()]),
     [{"name": "transpose", "configuration": {"order": [1, 0]}},
      {"name": "bytes", "configuration": {"endian": "big"}},
      {"name": "blosc", "configuration": {"typesize": 4, "cname": "lz4", "clevel": 5, "shuffle": "bitshuffle",
                                          "blocksize": 0}},
      {"name": "crc32c"}]),
    ("v3-mixed-forms", 3, "int32", lambda: dict(
        filters=[{"name": "transpose", "configuration": {"order": (1, 0)}}],
        compressors=[zc.GzipCodec(level=1), "crc32c", numcodecs.Zlib(1)]),
     [{"name": "transpose", "configuration": {"order": [1, 0]}},
      {"name": "bytes", "configuration": {"endian": "little"}},
      {"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"},
      {"name": "numcodecs.zlib", "configuration": {"level": 1}}]),
    ("v3-numcodecs-vlen-utf8", 3, "string", lambda: dict(serializer=numcodecs.VLenUTF8(), compressors=None),
     [{"name": "vlen-utf8", "configuration": {}}]),
    ("v3-bytes-filters-after-a-serializer-in-filters", 3, "int32", lambda: dict(
        filters=[zc.BytesCodec(endian="big"), numcodecs.Shuffle(4)], compressors=[zc.Crc32cCodec()]),
     [{"name": "bytes", "configuration": {"endian": "big"}},
      {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}, {"name": "crc32c"}]),
    ("v2-numcodecs-vlen-utf8-serializer", 2, "string", lambda: dict(serializer={"id": "vlen-utf8"}),
     ("|O", [{"id": "vlen-utf8"}], {"id": "zstd", "level": 0})),
    ("v2-zarr-python-objects", 2, "int32", lambda: dict(
        filters=[zc.TransposeCodec(order=(1, 0))], compressors=zc.BloscCodec(cname="zstd")),
     ("<i4", None, {"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 1, "blocksize": 0})),
    ("v2-zarrpy-objects", 2, "int32", lambda: dict(compressors=zarrpy.codecs.ZstdCodec(level=3, checksum=True)),
     ("<i4", None, {"id": "zstd", "level": 3, "checksum": True})),
    ("v2-two-compressors", 2, "int32", lambda: dict(compressors=[numcodecs.GZip(level=2), numcodecs.CRC32C()]),
     ("<i4", [{"id": "gzip", "level": 2}], {"id": "crc32c"})),
    ("v2-v3-dict", 2, "int32", lambda: dict(compressors={"name": "zstd", "configuration": {"level": 4}}),
     ("<i4", None, {"id": "zstd", "level": 4})),
]


@pytest.mark.parametrize(
    "zarr_format, dtype, make_kwargs, expected",
    [case[1:] for case in ZARRPY_ONLY],
    ids=[case[0] for case in ZARRPY_ONLY],
)
def test_forms_only_zarrpy_takes(tmp_path, zarr_format, dtype, make_kwargs, expected):
    _write(zarrpy, tmp_path, zarr_format, dtype, make_kwargs())
    assert _codecs_part(_metadata(tmp_path, zarr_format), zarr_format) == expected
    _check_both_read(tmp_path, dtype)


def test_v2_order_f_from_a_transpose_object(tmp_path):
    _write(zarrpy, tmp_path, 2, "int32", dict(filters=[zc.TransposeCodec(order=(1, 0))]))
    assert _metadata(tmp_path, 2)["order"] == "F"


def test_group_create_array_takes_the_same_forms(tmp_path):
    for zarr_format in (3, 2):
        g = zarrpy.open_group(str(tmp_path / f"g{zarr_format}"), mode="w", zarr_format=zarr_format)
        a = g.create_array("a", shape=SHAPE, chunks=CHUNKS, dtype="int32",
                           filters=[numcodecs.Delta("<i4")], compressors=zc.ZstdCodec(level=2))
        a[...] = _data("int32")
        doc = _metadata(tmp_path / f"g{zarr_format}" / "a", zarr_format)
        if zarr_format == 3:
            assert doc["codecs"][0]["name"] == "numcodecs.delta"
            assert doc["codecs"][-1] == {"name": "zstd", "configuration": {"level": 2, "checksum": False}}
        else:
            assert doc["filters"] == [{"id": "delta", "dtype": "<i4", "astype": "<i4"}]
            assert doc["compressor"] == {"id": "zstd", "level": 2}
        _check_both_read(tmp_path / f"g{zarr_format}" / "a", "int32")


# -- compressor= (zarr-python 2's singular keyword) --------------------------------------


def test_compressor_keyword_is_compressors(tmp_path):
    g = zarrpy.open_group(str(tmp_path), mode="w", zarr_format=2)
    g.create_array("a", shape=SHAPE, chunks=CHUNKS, dtype="int32", compressor=numcodecs.Zlib(4))
    g.create_array("b", shape=SHAPE, chunks=CHUNKS, dtype="int32", compressor=None)
    assert _metadata(tmp_path / "a", 2)["compressor"] == {"id": "zlib", "level": 4}
    assert _metadata(tmp_path / "b", 2)["compressor"] is None
    a = zarrpy.open_array(str(tmp_path / "c"), mode="w", shape=SHAPE, dtype="int32",
                          compressor=zc.GzipCodec(level=3))
    assert a.metadata.codecs[-1] == {"name": "gzip", "configuration": {"level": 3}}


def test_compressor_and_compressors_together_is_an_error():
    g = zarrpy.open_group({}, mode="w")
    with pytest.raises(TypeError, match=r"compressor=.*compressors=.*both given"):
        g.create_array("a", shape=SHAPE, dtype="int32", compressor=numcodecs.Zlib(), compressors=None)
    assert "a" not in g


# -- exports -----------------------------------------------------------------------------


ZARR_PYTHON_NAMES = {
    "BloscCodec": lambda: zc.BloscCodec(),
    "BytesCodec": lambda: zc.BytesCodec(),
    "Crc32cCodec": lambda: zc.Crc32cCodec(),
    "GzipCodec": lambda: zc.GzipCodec(),
    "ShardingCodec": lambda: zc.ShardingCodec(chunk_shape=(2,)),
    "TransposeCodec": lambda: zc.TransposeCodec(order=(0,)),
    "VLenBytesCodec": lambda: zc.VLenBytesCodec(),
    "VLenUTF8Codec": lambda: zc.VLenUTF8Codec(),
    "ZstdCodec": lambda: zc.ZstdCodec(),
}


@pytest.mark.parametrize("name", sorted(ZARR_PYTHON_NAMES))
def test_zarr_python_names_are_exported(name):
    ours = getattr(zarrpy.codecs, name)
    assert isinstance(ours, type) and issubclass(ours, zarrpy.codecs.Codec)
    assert ours.name == ZARR_PYTHON_NAMES[name]().to_dict()["name"]
    assert codec_from_any(ZARR_PYTHON_NAMES[name]()).__class__ is ours
    assert name in zarrpy.codecs.__all__ and name in dir(zarrpy.codecs)


def test_zarrpy_names_and_abcs_are_exported():
    from zarrpy.codecs import (  # noqa: F401
        ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, Codec, VlenArrayCodec, VlenBytesCodec,
        VlenCodec, VlenUtf8Codec, VlenV2Codec,
    )
    from zarrpy.codecs.vlen_v2 import VlenUtf8Codec as Real

    assert VlenUtf8Codec is Real is zarrpy.codecs.VLenUTF8Codec
    assert issubclass(zarrpy.codecs.GzipCodec, BytesToBytesCodec)
    assert issubclass(zarrpy.codecs.ShardingCodec, ArrayToBytesCodec)
    assert issubclass(zarrpy.codecs.TransposeCodec, ArrayToArrayCodec)
    for name in zarrpy.codecs.__all__:
        assert getattr(zarrpy.codecs, name) is not None
    with pytest.raises(AttributeError, match="NoSuchCodec"):
        zarrpy.codecs.NoSuchCodec  # noqa: B018


def test_doctests():
    import doctest

    import zarrpy.codecs.user_forms

    for module in (zarrpy.codecs, zarrpy.codecs.user_forms):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_importing_zarrpy_codecs_loads_no_codec_module():
    code = (
        "import sys, zarrpy.codecs\n"
        "loaded = [m for m in ('zarrpy.codecs.zstd', 'zarrpy.codecs.blosc', 'zarrpy.codecs.sharding',\n"
        "          'zarrpy.codecs.numcodecs', 'numcodecs', 'zarr') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "from zarrpy.codecs import ZstdCodec\n"
        "assert 'zarrpy.codecs.zstd' in sys.modules and 'zarr' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_duck_typing_never_imports_zarr():
    code = (
        "import sys, numcodecs, zarrpy\n"
        "from zarrpy.codecs.user_forms import codec_from_any\n"
        "class Foreign:\n"
        "    def to_dict(self):\n"
        "        return {'name': 'gzip', 'configuration': {'level': 2}}\n"
        "assert codec_from_any(Foreign()).to_json() == {'name': 'gzip', 'configuration': {'level': 2}}\n"
        "assert codec_from_any(numcodecs.Zlib(2)).name == 'numcodecs.zlib'\n"
        "zarrpy.create_array({}, shape=(4,), dtype='i4', compressors=numcodecs.Zstd(level=1))\n"
        "assert 'zarr' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- values zarr-python objects may hold ---------------------------------------------------


class _Shuffle(enum.Enum):
    bitshuffle = "bitshuffle"


class _Cname(str, enum.Enum):
    zstd = "zstd"


class _OldStyleBlosc:
    """A codec object as older zarr-python versions and plugins hand them:
    enums, numpy integers and tuples in its ``to_dict()``."""

    def to_dict(self):
        return {"name": "blosc", "configuration": {
            "cname": _Cname.zstd, "clevel": np.int64(3), "shuffle": _Shuffle.bitshuffle,
            "typesize": np.int32(4), "blocksize": 0}}


def test_enums_and_numpy_scalars_in_to_dict():
    codec = codec_from_any(_OldStyleBlosc())
    assert codec.to_json() == {"name": "blosc", "configuration": {
        "typesize": 4, "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "blocksize": 0}}
    assert type(codec.to_json()["configuration"]["clevel"]) is int


def test_zarr_python_bytes_codec_without_endian():
    assert codec_from_any(zc.BytesCodec(endian=None)).to_json() == {"name": "bytes"}
    a = zarrpy.create_array({}, shape=(4,), dtype="uint8", serializer=zc.BytesCodec(endian=None))
    assert a.metadata.codecs[0] == {"name": "bytes"}


def test_sharding_with_nested_zarr_python_objects():
    codec = codec_from_any(
        zc.ShardingCodec(chunk_shape=(2, 2), codecs=[zc.BytesCodec(), zc.BloscCodec(cname="lz4")],
                         index_location="start"),
        itemsize=8,
    )
    config = codec.to_json()["configuration"]
    # the nested BloscCodec() left shuffle tunable: zarr-python picks "shuffle" for 8-byte items
    assert config["codecs"][1]["configuration"]["shuffle"] == "shuffle"
    assert "typesize" not in config["codecs"][1]["configuration"]  # filled in at array creation
    assert config["index_location"] == "start" and config["chunk_shape"] == [2, 2]


def test_numcodecs_objects_and_dicts_in_a_v3_sharding_dict():
    codec = codec_from_any({"name": "sharding_indexed", "configuration": {
        "chunk_shape": (2,), "codecs": [zc.BytesCodec(), numcodecs.Zstd(level=2)]}})
    assert codec.to_json()["configuration"]["codecs"] == [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 2, "checksum": False}},
    ]


# -- errors --------------------------------------------------------------------------------


class _BrokenToDict:
    def to_dict(self):
        raise ValueError("`typesize` needs to be set for serialization.")

    def __repr__(self):
        return "BrokenToDict()"


@pytest.mark.parametrize(
    "kwargs, error, pattern",
    [
        (dict(compressors=42), CodecError, r"^compressors: cannot use 42: expected a codec.*got int 42"),
        (dict(compressors=[numcodecs.Zlib(), object()]), CodecError, r"^compressors\[1\]: cannot use <object"),
        (dict(filters=["delta-nonsense"]), UnknownCodecError, r"^filters\[0\]: cannot use 'delta-nonsense'"),
        (dict(compressors={"id": "no-such-numcodec"}), UnknownCodecError,
         r"^compressors: cannot use \{'id': 'no-such-numcodec'\}: unknown codec 'numcodecs.no-such-numcodec'"),
        (dict(compressors={"id": 3}), CodecError, r"^compressors: .*needs a string 'id'"),
        (dict(filters=({"name": "transpose", "configuration": {"order": [0, 0]}},)), CodecError,
         r"^filters\[0\]: cannot use \{'name': 'transpose'.*\}: codec 'transpose': 'order' \[0, 0\] "
         r"is not a permutation"),
        (dict(compressors=[zc.BytesCodec()]), CodecError,
         r"^compressors\[0\]: codec 'bytes' is an array-to-bytes codec \(a serializer\), "
         r"not a bytes-to-bytes codec \(a compressor\)"),
        (dict(serializer=numcodecs.Zstd()), CodecError, r"^serializer: codec 'zstd' is a bytes-to-bytes codec"),
        (dict(filters=zc.ShardingCodec), CodecError, r"^filters: cannot use <class .*ShardingCodec'>: "),
        (dict(filters=[numcodecs.Shuffle(4), numcodecs.Delta("<i4")]), CodecError,
         r"^filters\[1\]: codec 'numcodecs.delta' works on arrays but comes after 'numcodecs.shuffle', "
         r"which outputs bytes"),
        (dict(filters=[zc.BytesCodec()], serializer=zc.BytesCodec()), CodecError,
         r"^filters\[0\]: codec 'bytes' is a serializer and serializer= was given too"),
        (dict(filters=[numcodecs.Delta("<i4"), zc.BytesCodec(), zc.TransposeCodec(order=(1, 0))]), CodecError,
         r"^filters\[2\]: codec 'transpose' works on arrays but comes after 'bytes'"),
        (dict(compressors=_BrokenToDict()), CodecError,
         r"^compressors: cannot use BrokenToDict\(\): _BrokenToDict.to_dict\(\) failed: ValueError: `typesize`"),
        (dict(compressors=numcodecs.CRC32C(location="start")), CodecError,
         r"^compressors: cannot use CRC32C.*'location'"),
        (dict(compressors=numcodecs.Pickle()), CodecError, r"^compressors: .*'numcodecs.pickle' is not supported"),
    ],
)
def test_bad_values_name_the_argument(tmp_path, kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        zarrpy.create_array(str(tmp_path), shape=SHAPE, dtype="int32", **kwargs)
    assert not list(tmp_path.iterdir())  # nothing written
