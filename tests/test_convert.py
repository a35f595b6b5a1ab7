"""V2 <-> V3 metadata conversion (ZARR-FORMAT-NOTES.md §11-§13): one pipeline for both formats.

The conversion table is checked entry by entry, then against zarr-python:
chunks it wrote as V2 decode through the converted V3 chain to the array it
reads, re-encode to the same bytes, and V2 arrays zarrpy describes (metadata
from v3_to_v2, chunks from the V3 chain) read back in zarr-python.
"""

from __future__ import annotations

import copy
import itertools
import json
import warnings

import numpy as np
import pytest

from zarrpy.pipeline.values import ElementForm
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.pipeline.convert import V2Codecs, v2_data_type, v2_to_v3, v3_codecs_to_v2, v3_to_v2
from zarrpy.core.dtypes import DataType
from zarrpy.errors import MetadataError, UnknownCodecError
from zarrpy.metadata.v2 import ArrayMetadataV2
from zarrpy.metadata.v3 import ArrayMetadataV3, ChunkKeyEncodingSpec

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
NO_ENDIAN = {"name": "bytes"}
ZSTD0 = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}


def v2(**changes) -> ArrayMetadataV2:
    doc = {"zarr_format": 2, "shape": [10, 6], "chunks": [4, 3], "dtype": "<i4", "fill_value": 0,
           "order": "C", "filters": None, "dimension_separator": ".", "compressor": None}
    doc.update(changes)
    return ArrayMetadataV2.from_json(doc)


def blosc(shuffle, typesize, cname="lz4"):
    return {"name": "blosc", "configuration": {"typesize": typesize, "cname": cname, "clevel": 5,
                                               "shuffle": shuffle, "blocksize": 0}}


# (V2 changes, expected data type, expected V3 codecs)
TABLE = {
    "int32 little, no compressor": ({}, "int32", [LE]),
    "'|' on a multi-byte type is little": ({"dtype": "|i4"}, "int32", [LE]),
    "float64 big": ({"dtype": ">f8", "fill_value": "NaN"}, "float64", [BE]),
    "uint8 has no endian": ({"dtype": "|u1"}, "uint8", [NO_ENDIAN]),
    "bool": ({"dtype": "|b1", "fill_value": False}, "bool", [NO_ENDIAN]),
    "complex64 big": ({"dtype": ">c8", "fill_value": [0, 0]}, "complex64", [BE]),
    "float16": ({"dtype": "<f2"}, "float16", [LE]),
    "V3 -> raw_bytes": ({"dtype": "|V3", "fill_value": "AAAA"}, "raw_bytes", [NO_ENDIAN]),
    "zstd": ({"compressor": {"id": "zstd", "level": 3}}, "int32",
             [LE, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}]),
    "zstd with checksum": ({"compressor": {"id": "zstd", "level": 1, "checksum": True}}, "int32",
                           [LE, {"name": "zstd", "configuration": {"level": 1, "checksum": True}}]),
    "zstd defaults": ({"compressor": {"id": "zstd"}}, "int32", [LE, ZSTD0]),
    "gzip": ({"compressor": {"id": "gzip", "level": 1}}, "int32", [LE, {"name": "gzip", "configuration": {"level": 1}}]),
    "gzip numcodecs default level": ({"compressor": {"id": "gzip"}}, "int32",
                                     [LE, {"name": "gzip", "configuration": {"level": 1}}]),
    "crc32c": ({"compressor": {"id": "crc32c"}}, "int32", [LE, {"name": "crc32c"}]),
    "zlib -> numcodecs.zlib": ({"compressor": {"id": "zlib", "level": 1}}, "int32",
                               [LE, {"name": "numcodecs.zlib", "configuration": {"level": 1}}]),
    "bz2 -> numcodecs.bz2": ({"compressor": {"id": "bz2", "level": 9}}, "int32",
                             [LE, {"name": "numcodecs.bz2", "configuration": {"level": 9}}]),
    "blosc shuffle 0": ({"compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 0, "blocksize": 0}},
                        "int32", [LE, blosc("noshuffle", 4)]),
    "blosc shuffle 1": ({"compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}},
                        "int32", [LE, blosc("shuffle", 4)]),
    "blosc shuffle 2": ({"compressor": {"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 2, "blocksize": 0}},
                        "int32", [LE, blosc("bitshuffle", 4, "zstd")]),
    "blosc shuffle -1, typesize 4 -> shuffle": (
        {"compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}},
        "int32", [LE, blosc("shuffle", 4)]),
    "blosc shuffle -1, typesize 1 -> bitshuffle": (
        {"dtype": "|u1", "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}},
        "uint8", [NO_ENDIAN, blosc("bitshuffle", 1)]),
    "blosc defaults (numcodecs')": ({"dtype": "<f8", "compressor": {"id": "blosc"}}, "float64", [LE, blosc("shuffle", 8)]),
    "blosc typesize follows a delta astype": (
        {"filters": [{"id": "delta", "dtype": "<i4", "astype": "<i2"}],
         "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}},
        "int32", [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i2"}}, LE,
                  blosc("shuffle", 2)]),
    "order F -> transpose first": ({"order": "F", "compressor": {"id": "zstd", "level": 0}}, "int32",
                                   [{"name": "transpose", "configuration": {"order": [1, 0]}}, LE, ZSTD0]),
    "delta filter": ({"filters": [{"id": "delta", "dtype": "<i4", "astype": "<i4"}], "compressor": {"id": "zlib", "level": 1}},
                     "int32", [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i4"}}, LE,
                               {"name": "numcodecs.zlib", "configuration": {"level": 1}}]),
    "bytes endian from the last filter's astype": (
        {"dtype": "<f8", "filters": [{"id": "fixedscaleoffset", "offset": 0, "scale": 10, "dtype": "<f8", "astype": ">i2"}]},
        "float64", [{"name": "numcodecs.fixedscaleoffset",
                     "configuration": {"offset": 0, "scale": 10, "dtype": "<f8", "astype": ">i2"}}, BE]),
    "F order then a filter": (
        {"dtype": ">i4", "order": "F", "filters": [{"id": "delta", "dtype": ">i4"}]}, "int32",
        [{"name": "transpose", "configuration": {"order": [1, 0]}},
         {"name": "numcodecs.delta", "configuration": {"dtype": ">i4"}}, BE]),
    "a bytes filter goes after the serializer": (
        {"dtype": "<f4", "filters": [{"id": "shuffle", "elementsize": 4}], "compressor": {"id": "zlib", "level": 1}},
        "float32", [LE, {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                    {"name": "numcodecs.zlib", "configuration": {"level": 1}}]),
    "blosc after a bytes filter sees bytes (typesize 1)": (
        {"dtype": "<f4", "filters": [{"id": "shuffle", "elementsize": 4}],
         "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}},
        "float32", [LE, {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}}, blosc("bitshuffle", 1)]),
    "vlen-utf8 -> string": ({"dtype": "|O", "fill_value": "", "filters": [{"id": "vlen-utf8"}],
                             "compressor": {"id": "zstd", "level": 0}},
                            "string", [{"name": "vlen-utf8", "configuration": {}}, ZSTD0]),
    "vlen-utf8 with blosc auto -> bitshuffle": (
        {"dtype": "|O", "fill_value": "", "filters": [{"id": "vlen-utf8"}],
         "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}},
        "string", [{"name": "vlen-utf8", "configuration": {}}, blosc("bitshuffle", 1)]),
    "vlen-utf8 in F order": ({"dtype": "|O", "order": "F", "fill_value": "", "filters": [{"id": "vlen-utf8"}]},
                             "string", [{"name": "transpose", "configuration": {"order": [1, 0]}},
                                        {"name": "vlen-utf8", "configuration": {}}]),
    "vlen-utf8 as the compressor": ({"dtype": "|O", "fill_value": None, "compressor": {"id": "vlen-utf8"}},
                                    "string", [{"name": "vlen-utf8", "configuration": {}}]),
    "vlen-bytes -> variable_length_bytes": (
        {"dtype": "|O", "fill_value": None, "filters": [{"id": "vlen-bytes"}], "compressor": {"id": "gzip", "level": 1}},
        "variable_length_bytes", [{"name": "vlen-bytes", "configuration": {}}, {"name": "gzip", "configuration": {"level": 1}}]),
    "vlen-array -> numcodecs.vlen-array": (
        {"dtype": "|O", "fill_value": 0, "filters": [{"id": "vlen-array", "dtype": ">i2"}]},
        "variable_length_bytes", [{"name": "numcodecs.vlen-array", "configuration": {"dtype": ">i2"}}]),
}


@pytest.mark.parametrize("case", sorted(TABLE))
def test_conversion_table(case):
    changes, data_type, codecs = TABLE[case]
    meta = v2(**changes)
    v3 = v2_to_v3(meta)
    assert v3.data_type.name == data_type
    assert list(v3.codecs) == codecs
    assert v3.shape == meta.shape and v3.chunk_shape == meta.chunks
    assert v3.chunk_key_encoding == ChunkKeyEncodingSpec("v2", ".")
    assert v2_data_type(meta) == v3.data_type
    # the result is valid V3 metadata and binds
    again = ArrayMetadataV3.from_json(json.loads(v3.to_bytes()))
    assert again == v3
    CodecChain.from_json(again.codecs).bind(ChunkSpec(again.chunk_shape, again.data_type, again.fill_value))


@pytest.mark.parametrize("case", sorted(TABLE))
def test_round_trip_v2_v3_v2(case):
    changes, _, _ = TABLE[case]
    meta = v2(**changes)
    back = v3_to_v2(v2_to_v3(meta))
    expected = _normalised(meta.to_json())
    assert _normalised(back.to_json()) == expected, case
    assert v2_to_v3(back) == v2_to_v3(meta)  # and the V3 reading is exactly the same


def _normalised(doc: dict) -> dict:
    """What a V2 document turns into after a trip through V3 (module docstring of convert.py)."""
    doc = copy.deepcopy(doc)
    codecs = list(doc["filters"] or []) + ([doc["compressor"]] if doc["compressor"] else [])
    for c in codecs:
        if c["id"] == "blosc":
            c.setdefault("cname", "lz4"), c.setdefault("clevel", 5), c.setdefault("blocksize", 0)
            c.pop("shuffle", None), c.setdefault("shuffle", "?")
        if c["id"] == "zstd":
            c.setdefault("level", 0)
            if not c.get("checksum"):
                c.pop("checksum", None)
        if c["id"] == "gzip":
            c.setdefault("level", 1)
    for c in codecs:
        if c["id"] == "blosc":
            c["shuffle"] = "?"  # -1 comes back resolved
        if c["id"] == "delta" and "astype" not in c:
            c["astype"] = c["dtype"]
    if doc["dtype"] == "|i4":
        doc["dtype"] = "<i4"
    if doc["fill_value"] is None or doc["dtype"] == "|O" and doc["fill_value"] in (0, ""):
        doc["fill_value"] = "<default>"
    if doc["compressor"] and doc["compressor"]["id"].startswith("vlen-"):
        doc["filters"], doc["compressor"] = [*(doc["filters"] or []), doc["compressor"]], None
    return doc | {"filters": [dict(sorted(c.items())) for c in doc["filters"] or []] or None,
                  "compressor": dict(sorted(doc["compressor"].items())) if doc["compressor"] else None}


def test_round_trip_normalisation_is_not_hiding_differences():
    assert _normalised(v2().to_json()) != _normalised(v2(dtype=">i4").to_json())


# -- fill values --------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"fill_value": None}, np.int32(0)),  # null: the type's default (zarr-python reads zeros)
        ({"fill_value": 7}, np.int32(7)),
        ({"dtype": ">f4", "fill_value": None}, np.float32(0)),
        ({"dtype": ">f4", "fill_value": "-Infinity"}, np.float32("-inf")),
        ({"dtype": "|b1", "fill_value": None}, np.False_),
        ({"dtype": "|V2", "fill_value": "AQI="}, b"\x01\x02"),
        ({"dtype": "|V2", "fill_value": None}, b"\x00\x00"),
        ({"dtype": "|O", "filters": [{"id": "vlen-utf8"}], "fill_value": 0}, ""),
        ({"dtype": "|O", "filters": [{"id": "vlen-utf8"}], "fill_value": None}, ""),
        ({"dtype": "|O", "filters": [{"id": "vlen-utf8"}], "fill_value": "abc"}, "abc"),
        ({"dtype": "|O", "filters": [{"id": "vlen-bytes"}], "fill_value": "YWI="}, b"ab"),
        ({"dtype": "|O", "filters": [{"id": "vlen-array", "dtype": "<i2"}], "fill_value": None}, b""),
    ],
)
def test_fill_values(changes, expected):
    fill = v2_to_v3(v2(**changes)).fill_value
    assert fill == expected and type(fill) is type(expected)


def test_nan_fill():
    fill = v2_to_v3(v2(dtype="<f8", fill_value="NaN")).fill_value
    assert isinstance(fill, np.float64) and np.isnan(fill)


def test_string_fill_is_never_written_as_legacy_zero():
    meta = v3_to_v2(v2_to_v3(v2(dtype="|O", filters=[{"id": "vlen-utf8"}], fill_value=0)))
    assert meta.fill_value_json == ""
    meta = v3_to_v2(v2_to_v3(v2(dtype="|O", filters=[{"id": "vlen-bytes"}], fill_value=0)))
    assert meta.fill_value_json == ""


# -- no V3 form -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, fragments",
    [
        ({"dtype": [["a", "<i2"], ["b", "<i4"]], "fill_value": None, "filters": [{"id": "delta", "dtype": "<i4"}]},
         ("filters", "'<i4'")),
        ({"dtype": "|O", "fill_value": None, "filters": [{"id": "zlib"}, {"id": "vlen-utf8"}]},
         ("filters[0]", "'zlib'", "before the object codec")),
        ({"dtype": "|O", "fill_value": None, "filters": [{"id": "vlen-utf8"}, {"id": "delta", "dtype": "<i4"}]},
         ("filters[1]", "'delta'", "after 'vlen-utf8'")),
        ({"filters": [{"id": "shuffle"}, {"id": "delta", "dtype": "<i4"}]}, ("filters[1]", "'delta'", "after 'bytes'")),
        ({"filters": [{"id": "vlen-utf8"}]}, ("filters[0]", "object codec 'vlen-utf8'", "'<i4'")),
        ({"filters": [{"id": "delta", "dtype": "<i8"}]}, ("filters", "'<i8'", "int32")),
        ({"filters": [{"id": "delta"}]}, ("filters[0]", "numcodecs.delta", "configuration")),
        ({"filters": [{"id": "categorize", "labels": ["a"], "dtype": "<U1"}]}, ("filters[0]", "not supported")),
        ({"compressor": {"id": "no-such-codec"}}, ("compressor", "no-such-codec")),
        ({"compressor": {"id": "blosc", "shuffle": 7}}, ("compressor", "'shuffle'")),
        ({"compressor": {"id": "gzip", "level": "9"}}, ("compressor", "'gzip'", "'level'")),
        ({"compressor": {"id": "zstd", "level": 1, "frobnicate": True}}, ("compressor", "'zstd'", "frobnicate")),
        ({"dtype": "|O", "fill_value": None, "filters": [{"id": "vlen-array"}]}, ("filters[0]", "'dtype'")),
    ],
)
def test_no_v3_form_names_the_v2_field(changes, fragments):
    with pytest.raises(MetadataError) as info:
        v2_to_v3(v2(**changes))
    for frag in fragments:
        assert frag in str(info.value), (frag, str(info.value))


def test_unknown_codec_error_is_the_cause():
    with pytest.raises(MetadataError) as info:
        v2_to_v3(v2(compressor={"id": "no-such-codec"}))
    assert isinstance(info.value.__cause__, UnknownCodecError)
    assert "'numcodecs.no-such-codec'" in str(info.value.__cause__)


# -- V3 -> V2 -------------------------------------------------------------------------


def v3(codecs, data_type="int32", *, shape=(10, 6), chunks=(4, 3), fill=0, encoding=("v2", "."), **kw):
    dt = DataType.from_json(data_type)
    return ArrayMetadataV3(shape=shape, data_type=dt, chunk_shape=chunks, fill_value=dt.coerce_fill(fill),
                           codecs=tuple(codecs), chunk_key_encoding=ChunkKeyEncodingSpec(*encoding), **kw)


@pytest.mark.parametrize(
    "codecs, data_type, expected",
    [
        ([LE, ZSTD0], "int32", V2Codecs("<i4", "C", None, {"id": "zstd", "level": 0})),
        ([BE], "float64", V2Codecs(">f8", "C", None, None)),
        ([NO_ENDIAN, {"name": "gzip", "configuration": {"level": 5}}], "uint8",
         V2Codecs("|u1", "C", None, {"id": "gzip", "level": 5})),
        ([LE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}], "int16",
         V2Codecs("<i2", "C", None, {"id": "zstd", "level": 3, "checksum": True})),
        ([{"name": "transpose", "configuration": {"order": [1, 0]}}, LE, blosc("bitshuffle", 4)], "float32",
         V2Codecs("<f4", "F", None, {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 2, "blocksize": 0})),
        ([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, LE, {"name": "crc32c"},
          {"name": "numcodecs.zlib", "configuration": {"level": 1}}], "int32",
         V2Codecs("<i4", "C", ({"id": "delta", "dtype": "<i4"}, {"id": "crc32c"}), {"id": "zlib", "level": 1})),
        ([{"name": "vlen-utf8", "configuration": {}}, ZSTD0], "string",
         V2Codecs("|O", "C", ({"id": "vlen-utf8"},), {"id": "zstd", "level": 0})),
        ([{"name": "vlen-utf8"}], "string", V2Codecs("|O", "C", ({"id": "vlen-utf8"},), None)),
        ([{"name": "zarrs.vlen_v2"}], "string", V2Codecs("|O", "C", ({"id": "vlen-utf8"},), None)),
        ([{"name": "zarrs.vlen_v2"}], "variable_length_bytes", V2Codecs("|O", "C", ({"id": "vlen-bytes"},), None)),
        ([{"name": "vlen-bytes", "configuration": {}}], "bytes", V2Codecs("|O", "C", ({"id": "vlen-bytes"},), None)),
        ([{"name": "numcodecs.vlen-array", "configuration": {"dtype": "<f4"}}], "variable_length_bytes",
         V2Codecs("|O", "C", ({"id": "vlen-array", "dtype": "<f4"},), None)),
        ([{"name": "endian", "configuration": {"endian": "little"}}, {"name": "numcodecs.gzip", "configuration": {"level": 2}}],
         "int32", V2Codecs("<i4", "C", None, {"id": "gzip", "level": 2})),
        ([LE, {"name": "numcodecs.blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}}],
         "int32", V2Codecs("<i4", "C", None, {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0})),
    ],
)
def test_v3_codecs_to_v2(codecs, data_type, expected):
    dt = DataType.from_json(data_type)
    assert v3_codecs_to_v2(codecs, dt, ndim=2) == expected
    assert v3_codecs_to_v2(CodecChain.from_json(codecs).codecs, dt, ndim=2) == expected  # codec objects too


def test_order_argument():
    dt = DataType.from_json("int32")
    assert v3_codecs_to_v2([LE], dt, ndim=2, order="F").order == "F"
    assert v3_codecs_to_v2([LE], dt, ndim=2, order="C").order == "C"
    transpose = {"name": "transpose", "configuration": {"order": [1, 0]}}
    assert v3_codecs_to_v2([transpose, LE], dt, ndim=2, order="F").order == "F"
    with pytest.raises(MetadataError, match="order"):
        v3_codecs_to_v2([transpose, LE], dt, ndim=2, order="C")
    with pytest.raises(MetadataError, match="order"):
        v3_codecs_to_v2([LE], dt, ndim=2, order="K")


def test_v3_to_v2_with_order_f_reads_back_with_a_transpose():
    meta = v3_to_v2(v3([LE, ZSTD0]), order="F")
    assert meta.order == "F"
    assert v2_to_v3(meta).codecs[0] == {"name": "transpose", "configuration": {"order": [1, 0]}}


@pytest.mark.parametrize(
    "codecs, data_type, fragment",
    [
        ([{"name": "transpose", "configuration": {"order": [0, 1]}}, LE], "int32", "only the full reversal"),
        ([LE, {"name": "transpose", "configuration": {"order": [1, 0]}}], "int32", "codecs[1]"),
        ([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}},
          {"name": "transpose", "configuration": {"order": [1, 0]}}, LE], "int32", "transpose after"),
        ([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3], "codecs": [LE],
                                                         "index_codecs": [LE, {"name": "crc32c"}]}}],
         "int32", "'sharding_indexed' has no V2 form"),
        ([{"name": "zarrs.vlen", "configuration": {}}], "string", "'zarrs.vlen' has no V2 form"),
        ([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i2"}}, BE], "int32",
         "big-endian"),
        ([{"name": "vlen-bytes"}], "string", "cannot serialise strings"),
        ([{"name": "nope"}], "int32", "codecs[0]"),
    ],
)
def test_v3_chains_without_a_v2_form(codecs, data_type, fragment):
    with pytest.raises(MetadataError) as info:
        v3_codecs_to_v2(codecs, DataType.from_json(data_type), ndim=2)
    assert fragment in str(info.value)


def test_v3_to_v2_refuses_what_v2_cannot_hold():
    with pytest.raises(MetadataError, match="dimension_names.*_ARRAY_DIMENSIONS"):
        v3_to_v2(v3([LE], dimension_names=("y", "x")))
    with pytest.raises(MetadataError, match="chunk_key_encoding.*'v2'"):
        v3_to_v2(v3([LE], encoding=("default", "/")))
    with pytest.raises(MetadataError, match="vlen-array.*empty element"):
        v3_to_v2(v3([{"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i2"}}],
                    "variable_length_bytes", fill=b"\x01\x00"))


def test_v3_to_v2_members():
    meta = v3_to_v2(v3([LE, ZSTD0], "float32", fill=np.float32("nan"), encoding=("v2", "/"),
                       attributes={"units": "m"}))
    doc = meta.to_json()
    assert doc == {"shape": [10, 6], "chunks": [4, 3], "dtype": "<f4", "fill_value": "NaN", "order": "C",
                   "filters": None, "dimension_separator": "/", "compressor": {"id": "zstd", "level": 0},
                   "zarr_format": 2}
    assert meta.attributes == {"units": "m"}


V3_CHAINS = [
    ([LE, ZSTD0], "int32", 0),
    ([{"name": "transpose", "configuration": {"order": [1, 0]}}, BE, blosc("shuffle", 8)], "float64", 1.5),
    ([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, LE, {"name": "numcodecs.bz2", "configuration": {"level": 1}}], "int32", 0),
    ([{"name": "vlen-utf8", "configuration": {}}, ZSTD0], "string", ""),
    ([{"name": "vlen-utf8", "configuration": {}}, blosc("bitshuffle", 1)], "string", "x"),
    ([{"name": "vlen-bytes", "configuration": {}}, {"name": "gzip", "configuration": {"level": 5}}], "variable_length_bytes", b"ab"),
    ([NO_ENDIAN, {"name": "crc32c"}], {"name": "raw_bytes", "configuration": {"length_bytes": 2}}, b"\x01\x02"),
    ([NO_ENDIAN], "bool", True),
]


@pytest.mark.parametrize("codecs, data_type, fill", V3_CHAINS)
def test_round_trip_v3_v2_v3(codecs, data_type, fill):
    meta = v3(codecs, data_type, fill=fill)
    assert v2_to_v3(v3_to_v2(meta)) == meta


# -- against zarr-python ------------------------------------------------------------------------


zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")

SHAPE, CHUNKS = (7, 5), (3, 2)


def _data(dtype) -> np.ndarray:
    if dtype is str:
        return np.array([[f"s{r}{c}é" * (r % 3) for c in range(SHAPE[1])] for r in range(SHAPE[0])], dtype=object)
    if dtype == "|b1":
        return np.arange(35).reshape(SHAPE) % 3 == 0
    return (np.arange(35).reshape(SHAPE) * 3 % 17 + 1).astype(dtype)


ZARR_PYTHON_V2 = {
    "zlib": dict(dtype="<i4", compressors=numcodecs.Zlib(1)),
    "blosc-auto-big-F": dict(dtype=">f8", compressors=numcodecs.Blosc(shuffle=-1), order="F"),
    "blosc-bitshuffle-zstd": dict(dtype="<u2", compressors=numcodecs.Blosc(cname="zstd", shuffle=2)),
    "blosc-auto-u1": dict(dtype="|u1", compressors=numcodecs.Blosc(shuffle=-1)),
    "delta-astype-bz2": dict(dtype="<i4", filters=[numcodecs.Delta(dtype="<i4", astype="<i2")], compressors=numcodecs.BZ2()),
    "delta-big-F-gzip": dict(dtype=">i4", filters=[numcodecs.Delta(dtype=">i4")], compressors=numcodecs.GZip(1), order="F"),
    "fixedscaleoffset": dict(dtype="<f8", filters=[numcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f8", astype="u1")],
                             compressors=None),
    "strings-F-zstd": dict(dtype=str, compressors=numcodecs.Zstd(level=0), order="F"),
    "strings-blosc-auto": dict(dtype=str, compressors=numcodecs.Blosc(shuffle=-1)),
    "packbits-lzma": dict(dtype="|b1", filters=[numcodecs.PackBits()], compressors=numcodecs.LZMA()),
    "shuffle-filter-blosc-auto": dict(dtype="<f4", filters=[numcodecs.Shuffle(elementsize=4)],
                                      compressors=numcodecs.Blosc(shuffle=-1)),
    "crc32c": dict(dtype="<i8", compressors=numcodecs.CRC32C()),
    "lz4-complex": dict(dtype="<c16", compressors=numcodecs.LZ4()),
}


def _zarr_python_array(tmp_path, name):
    kwargs = dict(ZARR_PYTHON_V2[name])
    data = _data(kwargs["dtype"])
    path = tmp_path / name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(str(path), shape=SHAPE, chunks=CHUNKS, zarr_format=2, **kwargs)
        a[:] = data
    return path, data


def _bound(meta3: ArrayMetadataV3):
    return CodecChain.from_json(meta3.codecs).bind(ChunkSpec(meta3.chunk_shape, meta3.data_type, meta3.fill_value))


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(ZARR_PYTHON_V2))
def test_zarr_python_v2_chunks_decode_through_the_v3_chain(tmp_path, name):
    path, data = _zarr_python_array(tmp_path, name)
    meta = ArrayMetadataV2.from_bytes((path / ".zarray").read_bytes(), (path / ".zattrs").read_bytes())
    meta3 = v2_to_v3(meta)
    bound = _bound(meta3)
    seen = 0
    for i, j in itertools.product(range(3), range(3)):
        key = path / f"{i}.{j}"
        if not key.exists():
            continue
        seen += 1
        raw = key.read_bytes()
        chunk = ElementForm(meta3.data_type, None).to_numpy(bound.decode(raw))
        region = data[i * 3:i * 3 + 3, j * 2:j * 2 + 2]
        got = chunk[:region.shape[0], :region.shape[1]]
        if meta3.data_type.is_string:
            got = got.astype(object)
        np.testing.assert_array_equal(got, region)
        if "gzip" not in name:  # gzip headers carry numcodecs' mtime
            assert bound.encode(ElementForm(meta3.data_type, None).to_array_bytes(chunk)) == raw, (i, j)
    assert seen >= 5


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(ZARR_PYTHON_V2))
def test_zarr_python_reads_v2_arrays_zarrpy_describes(tmp_path, name):
    """Metadata from v3_to_v2 and chunks encoded by the V3 chain read back in zarr-python."""
    path, data = _zarr_python_array(tmp_path, name)
    meta3 = v2_to_v3(ArrayMetadataV2.from_bytes((path / ".zarray").read_bytes()))
    meta2 = v3_to_v2(meta3)
    out = tmp_path / f"{name}-zarrpy"
    out.mkdir()
    for key, raw in meta2.to_documents().items():
        (out / key).write_bytes(raw)
    bound = _bound(meta3)
    for i, j in itertools.product(range(3), range(3)):
        block = np.full(CHUNKS, meta3.fill_value, dtype=object if meta3.data_type.is_string else data.dtype)
        region = data[i * 3:i * 3 + 3, j * 2:j * 2 + 2]
        block[:region.shape[0], :region.shape[1]] = region
        if meta3.data_type.is_string:
            block = block.astype(meta3.data_type.numpy)
        (out / f"{i}.{j}").write_bytes(bound.encode(ElementForm(meta3.data_type, None).to_array_bytes(np.ascontiguousarray(block))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = zarr.open_array(str(out), mode="r", zarr_format=2)[:]
    np.testing.assert_array_equal(np.asarray(got, dtype=data.dtype), data)


@pytest.mark.integration
def test_zarr_python_reads_a_vlen_bytes_array(tmp_path):
    meta3 = v3([{"name": "vlen-bytes", "configuration": {}}, ZSTD0], "variable_length_bytes",
               shape=(5,), chunks=(3,), fill=b"")
    meta2 = v3_to_v2(meta3)
    assert meta2.to_json()["fill_value"] == ""
    out = tmp_path / "b"
    out.mkdir()
    for key, raw in meta2.to_documents().items():
        (out / key).write_bytes(raw)
    items = np.array([b"a", b"", b"xyz", b"\x00\xff", b""], dtype=object)
    bound = _bound(meta3)
    (out / "0").write_bytes(bound.encode(ArrayBytes.from_bytes_list(list(items[:3]), (3,))))
    (out / "1").write_bytes(bound.encode(ArrayBytes.from_bytes_list([*items[3:], b""], (3,))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arr = zarr.open_array(str(out), mode="r", zarr_format=2)
        assert isinstance(arr.dtype, np.dtypes.ObjectDType) or arr.dtype == object
        assert list(arr[:]) == list(items)


@pytest.mark.integration
def test_vlen_array_chunks_numcodecs_wrote(tmp_path):
    """zarr-python cannot open vlen-array arrays (notes §12); numcodecs writes the chunks."""
    meta = v2(shape=[3], chunks=[3], dtype="|O", fill_value=0, filters=[{"id": "vlen-array", "dtype": ">i2"}],
              compressor={"id": "zlib", "level": 1})
    meta3 = v2_to_v3(meta)
    items = np.empty(3, dtype=object)
    items[:] = [np.array([1, 2], ">i2"), np.array([], ">i2"), np.array([-3], ">i2")]
    raw = numcodecs.Zlib(1).encode(numcodecs.VLenArray(">i2").encode(items))
    chunk = _bound(meta3).decode(raw)
    assert chunk.to_bytes_list() == [np.array(x, "<i2").tobytes() for x in items]
    assert _bound(meta3).encode(chunk) == raw


@pytest.mark.integration
@pytest.mark.parametrize(
    "kwargs, order",
    [
        (dict(shape=(4, 5), chunks=(2, 3), dtype="<i4", fill_value=7, attributes={"a": 1}), "C"),
        (dict(shape=(4, 5), chunks=(2, 3), dtype=str), "F"),
        (dict(shape=(4,), chunks=(2,), dtype="float32", fill_value=np.nan, compressors=None), "C"),
        (dict(shape=(6,), chunks=(4,), dtype="uint8", compressors=[{"name": "gzip", "configuration": {"level": 1}}]), "C"),
    ],
)
def test_create_array_zarr_format_2_path_writes_what_zarr_python_writes(tmp_path, kwargs, order):
    """The intended create_array(zarr_format=2) path: V3 metadata from the user's
    arguments (with the v2 key encoding), then v3_to_v2."""
    from zarrpy.api._create import build_array_metadata

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr_kwargs = dict(kwargs)
        if "compressors" in zarr_kwargs and zarr_kwargs["compressors"]:
            zarr_kwargs["compressors"] = numcodecs.GZip(level=1)
        zarr.create_array(str(tmp_path / "z"), zarr_format=2, order=order, **zarr_kwargs)
    meta3 = build_array_metadata(**kwargs, chunk_key_encoding={"name": "v2", "separator": "."})
    docs = v3_to_v2(meta3, order=order).to_documents()
    assert docs == {".zarray": (tmp_path / "z" / ".zarray").read_bytes(), ".zattrs": (tmp_path / "z" / ".zattrs").read_bytes()}


# -- property: the V3 chain writes and reads what a V2 writer (numcodecs) writes ----------------


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_V2_DTYPES = ["|b1", "|u1", "<i2", ">i4", "<u8", "<f4", ">f8", "<c8", ">c16"]
_COMPRESSORS = [None, {"id": "zlib", "level": 1}, {"id": "zstd", "level": 1}, {"id": "bz2", "level": 1},
                {"id": "lz4", "acceleration": 1}, {"id": "crc32c"},
                *({"id": "blosc", "cname": c, "clevel": 5, "shuffle": s, "blocksize": 0}
                  for c in ("lz4", "zstd") for s in (-1, 0, 1, 2))]


@st.composite
def v2_arrays(draw):
    dtype = np.dtype(draw(st.sampled_from(_V2_DTYPES)))
    ndim = draw(st.integers(0, 3))
    chunks = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    filters = []
    if dtype.kind in "iu" and draw(st.booleans()):
        filters.append({"id": "delta", "dtype": dtype.str, "astype": dtype.str})
    if draw(st.booleans()):
        filters.append({"id": "shuffle", "elementsize": dtype.itemsize})
    meta = ArrayMetadataV2(shape=chunks, chunks=chunks, dtype=dtype_str(dtype), order=draw(st.sampled_from("CF")),
                           filters=tuple(filters) or None, compressor=draw(st.sampled_from(_COMPRESSORS)),
                           fill_value=None)
    n = int(np.prod(chunks))
    raw = draw(st.binary(min_size=n * dtype.itemsize, max_size=n * dtype.itemsize))
    data = np.frombuffer(raw, dtype=dtype.newbyteorder("=")).reshape(chunks)
    if dtype.kind == "b":
        data = data.view("u1") % 2 == 1
    elif dtype.kind in "fc":
        data = np.where(np.isnan(data), 0, data)  # NaN payloads are not the point here
    return meta, data.copy()  # np.ascontiguousarray would make a 0-d array 1-d


def dtype_str(dtype: np.dtype) -> str:
    return "|b1" if dtype.kind == "b" else dtype.str


def _v2_reference_encode(meta: ArrayMetadataV2, data: np.ndarray) -> bytes:
    """What zarr-python's V2 codec does (zarr/codecs/_v2.py), with numcodecs."""
    from numcodecs.compat import ensure_bytes

    chunk = data.astype(meta.numpy_dtype, order=meta.order)
    for f in meta.filters or ():
        chunk = numcodecs.get_codec(f).encode(chunk)
    if meta.compressor is not None:
        chunk = numcodecs.get_codec(meta.compressor).encode(chunk)
    return ensure_bytes(chunk)


@settings(max_examples=150, deadline=None)
@given(v2_arrays())
def test_v3_chain_matches_a_numcodecs_v2_writer(case):
    meta, data = case
    meta3 = v2_to_v3(meta)
    bound = _bound(meta3)
    reference = _v2_reference_encode(meta, data)
    assert bound.encode(ArrayBytes.from_array(data)) == reference
    np.testing.assert_array_equal(bound.decode(reference).array, data)
    assert v2_to_v3(v3_to_v2(meta3)) == meta3
