"""V2 ``.zarray`` / ``.zgroup`` / ``.zattrs`` / ``.zmetadata`` (ZARR-FORMAT-NOTES.md §1, §5, §11-§14).

Parse, validate and serialise; every rejection is a MetadataError naming the
field at fault. Documents zarr-python 3.4.2 writes are compared byte for byte.
"""

from __future__ import annotations

import copy
import json
import math
import warnings

import numpy as np
import pytest

from zarrpy.errors import MetadataError, UnknownCodecError
from zarrpy.metadata.consolidated import dump_consolidated_v2, parse_consolidated_v2
from zarrpy.metadata.v2 import (
    ArrayMetadataV2,
    GroupMetadataV2,
    dtype_to_json_v2,
    encode_fill_value_v2,
    parse_dtype_v2,
    parse_fill_value_v2,
    parse_node_metadata_v2,
)

# Notes §12, ".zarray as zarr-python 3 writes it".
STRINGS_DOC = {"shape": [4], "chunks": [2], "dtype": "|O", "fill_value": "", "order": "C",
               "filters": [{"id": "vlen-utf8"}], "dimension_separator": ".",
               "compressor": {"id": "zstd", "level": 0}, "zarr_format": 2}


def doc(**changes) -> dict:
    base = {"shape": [10, 10], "chunks": [5, 5], "dtype": "<f8", "fill_value": "NaN", "order": "C",
            "filters": None, "dimension_separator": ".", "compressor": {"id": "zstd", "level": 0},
            "zarr_format": 2}
    base.update(changes)
    return base


def assert_rejected(zarray: dict, *fragments: str) -> MetadataError:
    """``zarray`` fails through from_json and from_bytes, naming ``fragments`` (and the key)."""
    with pytest.raises(MetadataError) as info:
        ArrayMetadataV2.from_json(copy.deepcopy(zarray))
    err = info.value
    with pytest.raises(MetadataError) as info:
        ArrayMetadataV2.from_bytes(json.dumps(zarray).encode(), b"{}", "grp/arr/.zarray")
    assert "grp/arr/.zarray" in str(info.value)
    for e in (err, info.value):
        for frag in fragments:
            assert frag in str(e), (frag, str(e))
    return err


# -- round trips -------------------------------------------------------------------


def test_notes_string_example_round_trips_to_identical_json():
    meta = ArrayMetadataV2.from_json(STRINGS_DOC)
    assert meta.numpy_dtype == np.dtype(object)
    assert meta.object_codec == {"id": "vlen-utf8"}
    assert meta.fill_value == ""
    assert meta.to_json() == STRINGS_DOC
    assert list(meta.to_json()) == list(STRINGS_DOC)  # member order as zarr-python writes it


def test_serialised_like_zarr_python_indent_2():
    meta = ArrayMetadataV2.from_json(doc(), {"units": "m"})
    docs = meta.to_documents()
    assert set(docs) == {".zarray", ".zattrs"}
    assert docs[".zarray"] == json.dumps(doc(), indent=2).encode()
    assert docs[".zattrs"] == b'{\n  "units": "m"\n}'
    assert ArrayMetadataV2.from_json(doc()).to_documents()[".zattrs"] == b"{}"


def test_from_bytes_and_to_documents_round_trip():
    meta = ArrayMetadataV2.from_json(doc(order="F", dimension_separator="/"), {"a": [1, 2]})
    docs = meta.to_documents()
    again = ArrayMetadataV2.from_bytes(docs[".zarray"], docs[".zattrs"])
    assert again == meta
    assert again.to_documents() == docs
    assert again.attributes == {"a": [1, 2]}


def test_zattrs_is_optional():
    assert ArrayMetadataV2.from_bytes(json.dumps(doc()).encode()).attributes == {}


def test_lenient_defaults_for_optional_members():
    minimal = {"zarr_format": 2, "shape": [3], "chunks": [2], "dtype": "<i2"}
    meta = ArrayMetadataV2.from_json(minimal)
    assert (meta.order, meta.filters, meta.compressor, meta.fill_value, meta.dimension_separator) == (
        "C", None, None, None, ".")
    written = meta.to_json()
    assert written["dimension_separator"] == "." and written["filters"] is None and written["fill_value"] is None


def test_unknown_keys_are_ignored_and_not_written():
    meta = ArrayMetadataV2.from_json(doc(foo="bar", consolidated_metadata={"x": 1}))
    assert "foo" not in meta.to_json() and "consolidated_metadata" not in meta.to_json()


def test_empty_filter_list_reads_as_null_and_is_written_as_null():
    meta = ArrayMetadataV2.from_json(doc(filters=[]))
    assert meta.filters is None
    assert meta.to_json()["filters"] is None
    assert ArrayMetadataV2(shape=(2,), chunks=(2,), dtype="<i4", filters=()).filters is None


def test_constructor_computes_the_fill_json():
    meta = ArrayMetadataV2(shape=(4,), chunks=(2,), dtype=">f4", fill_value=np.float32("-inf"))
    assert meta.fill_value_json == "-Infinity"
    assert meta.evolve(fill_value=np.float32(1.5)).fill_value_json == 1.5
    assert meta.evolve(shape=(8,)).fill_value_json == "-Infinity"


def test_nan_fill_values_compare_equal():
    assert ArrayMetadataV2.from_json(doc()) == ArrayMetadataV2.from_json(doc())
    assert ArrayMetadataV2.from_json(doc()) != ArrayMetadataV2.from_json(doc(fill_value=0))


def test_evolve_keeps_the_stored_fill_json():
    meta = ArrayMetadataV2.from_json({**STRINGS_DOC, "fill_value": 0})  # legacy zarr-python 2 form
    assert meta.fill_value == ""
    resized = meta.evolve(shape=(8,))
    assert resized.fill_value_json == 0  # an existing document is rewritten as it was


# -- dtype strings -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("|b1", np.dtype(bool)),
        ("<b1", np.dtype(bool)),
        ("|i1", np.dtype("i1")),
        ("|u1", np.dtype("u1")),
        ("<u2", np.dtype("<u2")),
        (">u2", np.dtype(">u2")),
        ("<i4", np.dtype("<i4")),
        ("|i4", np.dtype("<i4")),  # '|' on a multi-byte type reads as little-endian
        ("<i8", np.dtype("<i8")),
        (">u8", np.dtype(">u8")),
        ("<f2", np.dtype("<f2")),
        (">f4", np.dtype(">f4")),
        ("<f8", np.dtype("<f8")),
        ("<c8", np.dtype("<c8")),
        ("<c16", np.dtype("<c16")),
        (">c16", np.dtype(">c16")),
        ("|S5", np.dtype("S5")),
        ("<U3", np.dtype("<U3")),
        (">U3", np.dtype(">U3")),
        ("|V4", np.dtype("V4")),
        ("<M8[ns]", np.dtype("<M8[ns]")),
        (">M8[s]", np.dtype(">M8[s]")),
        ("<M8", np.dtype("<M8")),
        ("<m8[10ms]", np.dtype("<m8[10ms]")),
        ("|O", np.dtype(object)),
    ],
)
def test_dtype_strings(text, expected):
    dt = parse_dtype_v2(text)
    assert dt == expected
    assert dt.str == expected.str
    canonical = "<i4" if text == "|i4" else "|b1" if text == "<b1" else text
    assert dtype_to_json_v2(dt) == canonical


def test_structured_dtypes():
    spec = [["x", "<f4"], ["z", ">i2", [2, 2]], ["inner", [["a", "|u1"], ["b", "<f8"]]]]
    dt = parse_dtype_v2(spec)
    assert dt.names == ("x", "z", "inner")
    assert dt["z"] == np.dtype((">i2", (2, 2)))
    assert dt["inner"].names == ("a", "b")
    assert dtype_to_json_v2(dt) == spec
    meta = ArrayMetadataV2(shape=(2,), chunks=(2,), dtype=spec)
    assert meta.numpy_dtype == dt and meta.to_json()["dtype"] == spec


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ("float32", "not a V2 dtype string"),
        ("f8", "not a V2 dtype string"),
        ("=f8", "not a V2 dtype string"),
        ("<x4", "not a V2 dtype string"),
        ("<i3", "'i' takes a size of 1, 2, 4, 8"),
        ("<f16", "extended-precision"),
        ("<c32", "extended-precision"),
        ("<f", "has no size"),
        ("|S0", "at least 1"),
        ("<i4[ns]", "take a unit"),
        ("<M8[fortnights]", "not a valid dtype"),
        ("|O8", "'|O'"),
        ("<O", "'|O'"),
        (5, "expected a numpy typestr"),
        (None, "expected a numpy typestr"),
        ([], "at least one field"),
        ([["a"]], "dtype[0]"),
        ([["a", "<i4"], ["a", "<f4"]], "unique"),
        ([["a", "|O"]], "object fields"),
        ([["a", "<i4", [0]]], "dtype[0].shape"),
        ([["a", "<q8"]], "dtype[0]"),
    ],
)
def test_bad_dtypes_name_the_field(bad, fragment):
    err = assert_rejected(doc(dtype=bad, fill_value=None), "dtype", fragment)
    assert isinstance(err, ValueError)


# -- fill values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, stored, parsed, written",
    [
        ("|b1", True, np.True_, True),
        ("|b1", 0, np.False_, False),
        ("|i1", -128, np.int8(-128), -128),
        (">u8", 2**64 - 1, np.uint64(2**64 - 1), 2**64 - 1),
        ("<i4", 3.0, np.int32(3), 3),
        ("<f8", 1.5, np.float64(1.5), 1.5),
        (">f4", "Infinity", np.float32("inf"), "Infinity"),
        ("<f2", "-Infinity", np.float16("-inf"), "-Infinity"),
        ("<f8", 0, np.float64(0.0), 0.0),
        ("<c16", [1.0, -2.0], np.complex128(1 - 2j), [1.0, -2.0]),
        ("<c8", ["NaN", "Infinity"], np.complex64(complex(math.nan, math.inf)), ["NaN", "Infinity"]),
        ("<M8[ns]", -9223372036854775808, np.datetime64("NaT", "ns"), -9223372036854775808),
        ("<M8[s]", 86400, np.datetime64("1970-01-02", "s"), 86400),
        ("<M8[s]", "NaT", np.datetime64("NaT", "s"), -9223372036854775808),
        ("<m8[s]", 5, np.timedelta64(5, "s"), 5),
        ("|S3", "YWJj", np.bytes_(b"abc"), "YWJj"),
        ("|S3", "YQ==", np.bytes_(b"a"), "YQ=="),
        ("|S3", "", np.bytes_(b""), ""),  # zarr-python's default for |S
        ("<U3", "ab", np.str_("ab"), "ab"),  # plain string, as zarr-python writes it
        ("|V4", "AAAAAA==", b"\x00\x00\x00\x00", "AAAAAA=="),
        ("|V2", "AQI=", b"\x01\x02", "AQI="),
        ("<i2", None, None, None),
    ],
)
def test_fill_values(dtype, stored, parsed, written):
    dt = parse_dtype_v2(dtype)
    value = parse_fill_value_v2(stored, dt)
    if parsed is None:
        assert value is None
    elif isinstance(parsed, (bytes, np.generic)) and np.asarray(parsed).dtype.kind in "cf":
        assert np.asarray(value).tobytes() == np.asarray(parsed).tobytes()
    else:
        assert value == parsed or (value != value and parsed != parsed)
        assert type(value) is type(parsed)
    assert encode_fill_value_v2(value, dt) == written
    meta = ArrayMetadataV2.from_json(doc(dtype=dtype, fill_value=stored))
    assert meta.to_json()["fill_value"] == stored  # the stored JSON is written back as it was


def test_nan_fill():
    value = parse_fill_value_v2("NaN", np.dtype("<f4"))
    assert isinstance(value, np.float32) and np.isnan(value)
    assert encode_fill_value_v2(value, np.dtype("<f4")) == "NaN"
    payload = np.array(0x7FC00001, dtype="u4").view("f4")[()]
    assert encode_fill_value_v2(payload, np.dtype("<f4")) == "NaN"  # V2 has no hex form


def test_structured_fill_is_base64_of_the_raw_bytes():
    spec = [["a", "<i2"], ["b", "<f4"]]
    dt = parse_dtype_v2(spec)
    value = np.array((1, 2.0), dtype=dt)[()]
    stored = encode_fill_value_v2(value, dt)
    assert stored == "AQAAAABA"  # what zarr-python 3.4.2 writes for (1, 2.0)
    assert parse_fill_value_v2(stored, dt) == value.tobytes()


@pytest.mark.parametrize(
    "codec, stored, parsed",
    [
        ("vlen-utf8", "", ""),
        ("vlen-utf8", "xy", "xy"),
        ("vlen-utf8", 0, ""),  # zarr-python 2's legacy fill for strings
        ("vlen-utf8", None, ""),
        ("vlen-bytes", None, b""),  # zarr-python 3 writes null for b""
        ("vlen-bytes", 0, b""),
        ("vlen-bytes", "YWI=", b"ab"),
        ("vlen-bytes", "", b""),
        ("vlen-array", None, None),
        ("vlen-array", 0, None),
    ],
)
def test_object_fill_values(codec, stored, parsed):
    config = {"id": codec, **({"dtype": "<i2"} if codec == "vlen-array" else {})}
    meta = ArrayMetadataV2.from_json(doc(dtype="|O", filters=[config], fill_value=stored))
    assert meta.fill_value == parsed and type(meta.fill_value) is type(parsed)
    assert meta.to_json()["fill_value"] == stored


@pytest.mark.parametrize("codec, value, written", [("vlen-utf8", "", ""), ("vlen-utf8", "x", "x"),
                                                     ("vlen-bytes", b"", ""), ("vlen-bytes", b"ab", "YWI="),
                                                     ("vlen-array", None, None)])
def test_object_fill_values_zarrpy_writes(codec, value, written):
    config = {"id": codec, **({"dtype": "<i2"} if codec == "vlen-array" else {})}
    meta = ArrayMetadataV2(shape=(2,), chunks=(2,), dtype="|O", filters=(config,), fill_value=value)
    assert meta.fill_value_json == written  # never the legacy 0


@pytest.mark.parametrize(
    "dtype, bad, fragment",
    [
        ("<i2", 1.5, "expected an integer"),
        ("<i2", 40000, "out of range"),
        ("<i2", True, "boolean"),
        ("<i2", "1", "expected an integer"),
        ("|u1", -1, "out of range"),
        ("<f4", "nan", "NaN"),
        ("<f4", "0x7fc00000", "NaN"),  # hex floats are V3-only
        ("<c8", 1.0, "[real, imag]"),
        ("|b1", 2, "true or false"),
        ("|S2", "YWJj", "at most 2 bytes"),
        ("|S2", "!!", "base64"),
        ("|V2", "AAAA", "2 bytes"),
        ("<U2", "abc", "at most 2 characters"),
        ("<U2", 5, "expected a string"),
        ("<M8[s]", 1.5, "expected an integer"),
    ],
)
def test_bad_fill_values_name_the_field(dtype, bad, fragment):
    assert_rejected(doc(dtype=dtype, fill_value=bad), "fill_value", fragment)


@pytest.mark.parametrize("codec, bad", [("vlen-utf8", 5), ("vlen-utf8", [1]), ("vlen-bytes", "not base64!"),
                                        ("vlen-array", [1, 2])])
def test_bad_object_fill_values(codec, bad):
    config = {"id": codec, **({"dtype": "<i2"} if codec == "vlen-array" else {})}
    assert_rejected(doc(dtype="|O", filters=[config], fill_value=bad), "fill_value")


# -- object arrays -----------------------------------------------------------------------


@pytest.mark.parametrize("filters, compressor", [(None, None), (None, {"id": "zstd"}), ([{"id": "delta", "dtype": "<i4"}], None)])
def test_object_dtype_without_object_codec_names_filters(filters, compressor):
    err = assert_rejected(doc(dtype="|O", filters=filters, compressor=compressor, fill_value=0), "filters", "object codec")
    assert "vlen-utf8" in str(err)


def test_object_codec_as_compressor():
    meta = ArrayMetadataV2.from_json(doc(dtype="|O", filters=None, compressor={"id": "vlen-bytes"}, fill_value=None))
    assert meta.object_codec == {"id": "vlen-bytes"} and meta.fill_value == b""


def test_first_object_codec_wins_like_zarr_python():
    meta = ArrayMetadataV2.from_json(doc(dtype="|O", filters=[{"id": "vlen-bytes"}, {"id": "vlen-utf8"}], fill_value=None))
    assert meta.object_codec == {"id": "vlen-bytes"}


@pytest.mark.parametrize("codec_id, reason", [("pickle", "arbitrary code"), ("json2", "JSON"), ("msgpack2", "msgpack")])
def test_refused_object_codecs(codec_id, reason):
    err = assert_rejected(doc(dtype="|O", filters=[{"id": codec_id}], fill_value=0), "filters[0]", codec_id, reason)
    assert "not supported" in str(err)
    assert_rejected(doc(dtype="|O", filters=None, compressor={"id": codec_id}, fill_value=None), "compressor", codec_id)


def test_object_codec_on_a_numeric_array_is_left_to_the_conversion():
    # A V2 document may list anything; whether it has a V3 form is convert.py's question.
    meta = ArrayMetadataV2.from_json(doc(dtype="<i4", filters=[{"id": "vlen-utf8"}], fill_value=0))
    assert meta.object_codec is None


# -- other bad documents -------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, fragments",
    [
        ({"zarr_format": 3}, ("zarr_format", "expected 2")),
        ({"zarr_format": "2"}, ("zarr_format",)),
        ({"shape": [10, -1]}, ("shape",)),
        ({"shape": "10"}, ("shape",)),
        ({"chunks": [5, 0]}, ("chunks", "positive")),
        ({"chunks": [5]}, ("chunks", "1 dimensions", "shape has 2")),
        ({"order": "A"}, ("order",)),
        ({"dimension_separator": "-"}, ("dimension_separator",)),
        ({"compressor": "zstd"}, ("compressor", "'id'")),
        ({"compressor": {"level": 1}}, ("compressor", "'id'")),
        ({"filters": {"id": "delta"}}, ("filters", "list")),
        ({"filters": [{"id": 3}]}, ("filters[0]", "'id'")),
    ],
)
def test_bad_documents_name_the_field(changes, fragments):
    assert_rejected(doc(**changes), *fragments)


@pytest.mark.parametrize("missing", ["shape", "chunks", "dtype"])
def test_required_members(missing):
    bad = doc()
    del bad[missing]
    assert_rejected(bad, repr(missing), "missing")


def test_bad_json_and_bad_zattrs_name_the_key():
    with pytest.raises(MetadataError, match=r"'a/\.zarray'.*not valid JSON"):
        ArrayMetadataV2.from_bytes(b"{nope", None, "a/.zarray")
    with pytest.raises(MetadataError, match=r"'a/\.zattrs'.*not valid JSON"):
        ArrayMetadataV2.from_bytes(json.dumps(doc()).encode(), b"[1,", "a/.zarray")
    with pytest.raises(MetadataError, match=r"attributes \(\.zattrs\)"):
        ArrayMetadataV2.from_json(doc(), [1, 2])  # type: ignore[arg-type]
    with pytest.raises(MetadataError, match="expected a JSON object"):
        ArrayMetadataV2.from_bytes(b"[1]", None)


def test_attributes_that_are_not_json_are_refused_on_write():
    meta = ArrayMetadataV2.from_json(doc(), {"x": 1})
    with pytest.raises(MetadataError, match="attributes"):
        meta.evolve(attributes={"x": object()}).to_documents()


def test_non_finite_attributes_are_written_as_zarr_python_writes_them():
    meta = ArrayMetadataV2.from_json(doc(), {"x": 1})
    zattrs = meta.evolve(attributes={"nan": float("nan"), "inf": float("inf"), "ninf": -float("inf")}).to_documents()
    assert json.loads(zattrs[".zattrs"]) == {"nan": pytest.approx(float("nan"), nan_ok=True),
                                             "inf": float("inf"), "ninf": -float("inf")}
    assert b"NaN" in zattrs[".zattrs"] and b"-Infinity" in zattrs[".zattrs"]


def test_unknown_numcodecs_id_parses_here_and_fails_in_the_conversion():
    # Metadata does not know the codec registry (layer L1); the conversion,
    # which builds the codecs, names the field.
    from zarrpy.pipeline.convert import v2_to_v3

    meta = ArrayMetadataV2.from_json(doc(compressor={"id": "no-such-codec", "level": 1}))
    assert meta.compressor == {"id": "no-such-codec", "level": 1}
    with pytest.raises(MetadataError, match=r"compressor.*'numcodecs\.no-such-codec'") as info:
        v2_to_v3(meta)
    assert isinstance(info.value.__cause__, UnknownCodecError)
    meta = ArrayMetadataV2.from_json(doc(dtype="<i4", fill_value=0, filters=[{"id": "zlib"}, {"id": "nope2"}]))
    with pytest.raises(MetadataError, match=r"filters\[1\].*nope2"):
        v2_to_v3(meta)


# -- groups and nodes ---------------------------------------------------------------------


def test_group_round_trip():
    group = GroupMetadataV2.from_json({"zarr_format": 2}, {"title": "t"})
    docs = group.to_documents()
    assert docs == {".zgroup": b'{\n  "zarr_format": 2\n}', ".zattrs": b'{\n  "title": "t"\n}'}
    assert GroupMetadataV2.from_bytes(docs[".zgroup"], docs[".zattrs"]) == group
    assert GroupMetadataV2.from_bytes(b'{"zarr_format": 2}').attributes == {}


def test_group_ignores_unknown_members_zarr_python_injects():
    zgroup = {"zarr_format": 2, "consolidated_metadata": {"metadata": {}, "must_understand": False, "kind": "inline"}}
    assert GroupMetadataV2.from_json(zgroup).to_json() == {"zarr_format": 2}


@pytest.mark.parametrize("bad", [{"zarr_format": 3}, {}, [2]])
def test_bad_groups(bad):
    with pytest.raises(MetadataError, match="zarr_format|object"):
        GroupMetadataV2.from_json(bad)  # type: ignore[arg-type]
    with pytest.raises(MetadataError, match=r"'g/\.zgroup'"):
        GroupMetadataV2.from_bytes(json.dumps(bad).encode(), None, "g/.zgroup")


def test_parse_node_metadata_v2():
    zarray = json.dumps(doc()).encode()
    assert isinstance(parse_node_metadata_v2(zarray, None, b"{}", "x"), ArrayMetadataV2)
    assert isinstance(parse_node_metadata_v2(None, b'{"zarr_format": 2}', None, "x"), GroupMetadataV2)
    with pytest.raises(MetadataError, match=r"x/\.zarray and x/\.zgroup both exist"):
        parse_node_metadata_v2(zarray, b'{"zarr_format": 2}', None, "x")
    with pytest.raises(MetadataError, match="not a V2 node"):
        parse_node_metadata_v2(None, None, None, "x")
    with pytest.raises(MetadataError, match=r"'x/\.zarray'.*dtype"):
        parse_node_metadata_v2(json.dumps(doc(dtype="nope")).encode(), None, None, "x")


# -- consolidated metadata -------------------------------------------------------------------


def test_consolidated_round_trip():
    nodes = {
        "": GroupMetadataV2({"root": True}),
        "sub": GroupMetadataV2(),
        "sub/y": ArrayMetadataV2.from_json(doc(), {"units": "m"}),
        "s": ArrayMetadataV2.from_json(STRINGS_DOC),
    }
    raw = dump_consolidated_v2(nodes)
    parsed = json.loads(raw)
    assert parsed["zarr_consolidated_format"] == 1
    assert parsed["metadata"]["sub/y/.zattrs"] == {"units": "m"}
    assert parsed["metadata"][".zgroup"] == {"zarr_format": 2}
    again = parse_consolidated_v2(parsed)
    assert again == nodes


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ({"zarr_consolidated_format": 2, "metadata": {}}, "zarr_consolidated_format"),
        ({"metadata": {}}, "zarr_consolidated_format"),
        ({"zarr_consolidated_format": 1, "metadata": []}, "'metadata'"),
        ({"zarr_consolidated_format": 1, "metadata": {"a/.zarray": {"zarr_format": 2}}}, "entry 'a/.zarray'"),
        ({"zarr_consolidated_format": 1, "metadata": {"a/.zarray": doc(), "a/.zgroup": {"zarr_format": 2}}},
         "both an array and a group"),
    ],
)
def test_bad_consolidated(bad, fragment):
    with pytest.raises(MetadataError, match=r"\.zmetadata") as info:
        parse_consolidated_v2(bad)
    assert fragment in str(info.value)


# -- zarr-python writes exactly this ---------------------------------------------------------


zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")


def _zarr_python_v2(tmp_path, name, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(str(tmp_path / name), zarr_format=2, **kwargs)
    return (tmp_path / name / ".zarray").read_bytes(), (tmp_path / name / ".zattrs").read_bytes()


ZARR_PYTHON_ARRAYS = {
    "int": dict(shape=(4, 5), chunks=(2, 3), dtype="<i4", fill_value=7, attributes={"x": 1, "é": "ü"}),
    "big-float-nan": dict(shape=(4,), chunks=(2,), dtype=">f8", fill_value=np.nan),
    "float-inf-F": dict(shape=(3, 3), chunks=(2, 2), dtype="<f4", fill_value=-np.inf, order="F"),
    "complex": dict(shape=(3,), chunks=(3,), dtype="<c16", fill_value=1 + 2j),
    "bool": dict(shape=(3,), chunks=(3,), dtype="bool", fill_value=True),
    "strings": dict(shape=(4,), chunks=(2,), dtype=str, fill_value="xy"),
    "S3": dict(shape=(3,), chunks=(3,), dtype="S3", fill_value=b"abc"),
    "U3": dict(shape=(3,), chunks=(3,), dtype="<U3", fill_value="ab"),
    "V4": dict(shape=(3,), chunks=(3,), dtype="V4"),
    "datetime": dict(shape=(3,), chunks=(3,), dtype="<M8[ns]"),
    "null-fill": dict(shape=(3,), chunks=(3,), dtype="<u2", fill_value=None),
    "blosc-auto": dict(shape=(3,), chunks=(3,), dtype="<u2", compressors=numcodecs.Blosc(shuffle=-1)),
    "delta-zlib": dict(shape=(6,), chunks=(3,), dtype="<i4", filters=[numcodecs.Delta(dtype="<i4")],
                       compressors=numcodecs.Zlib(level=1)),
    "slash": dict(shape=(2, 2), chunks=(1, 1), dtype="|u1", chunk_key_encoding={"name": "v2", "separator": "/"}),
    "no-compressor": dict(shape=(2,), chunks=(2,), dtype="<i8", compressors=None),
}


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(ZARR_PYTHON_ARRAYS))
def test_zarr_python_documents_round_trip_byte_for_byte(tmp_path, name):
    zarray, zattrs = _zarr_python_v2(tmp_path, name, **ZARR_PYTHON_ARRAYS[name])
    meta = ArrayMetadataV2.from_bytes(zarray, zattrs)
    assert meta.to_documents() == {".zarray": zarray, ".zattrs": zattrs}


@pytest.mark.integration
@pytest.mark.parametrize("name", ["int", "big-float-nan", "float-inf-F", "complex", "bool", "strings",
                                  "null-fill", "delta-zlib", "S3", "V4", "datetime", "U3"])
def test_documents_built_from_values_match_zarr_python(tmp_path, name):
    """A new ArrayMetadataV2 (fill from its value, not stored JSON) writes what zarr-python writes."""
    zarray, zattrs = _zarr_python_v2(tmp_path, name, **ZARR_PYTHON_ARRAYS[name])
    stored = ArrayMetadataV2.from_bytes(zarray, zattrs)
    fresh = ArrayMetadataV2(
        shape=stored.shape, chunks=stored.chunks, dtype=stored.dtype, compressor=stored.compressor,
        fill_value=stored.fill_value, order=stored.order, filters=stored.filters,
        dimension_separator=stored.dimension_separator, attributes=stored.attributes,
    )
    assert fresh.to_documents() == {".zarray": zarray, ".zattrs": zattrs}


@pytest.mark.integration
def test_zarr_python_group_and_consolidated_metadata(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_group(str(tmp_path / "g"), mode="w", zarr_format=2, attributes={"a": 1})
        sub = root.create_group("sub", attributes={"b": 2})
        sub.create_array("y", shape=(3,), chunks=(2,), dtype="<f4", fill_value=np.nan)
        root.create_array("s", shape=(2,), chunks=(2,), dtype=str)
        zarr.consolidate_metadata(str(tmp_path / "g"))
    g = tmp_path / "g"
    group = GroupMetadataV2.from_bytes((g / ".zgroup").read_bytes(), (g / ".zattrs").read_bytes())
    assert group.to_documents() == {".zgroup": (g / ".zgroup").read_bytes(), ".zattrs": (g / ".zattrs").read_bytes()}
    nodes = parse_consolidated_v2(json.loads((g / ".zmetadata").read_bytes()))
    assert set(nodes) == {"", "sub", "sub/y", "s"}
    assert nodes[""].attributes == {"a": 1} and nodes["sub"].attributes == {"b": 2}
    y = ArrayMetadataV2.from_bytes((g / "sub/y/.zarray").read_bytes(), (g / "sub/y/.zattrs").read_bytes())
    assert nodes["sub/y"] == y
    assert parse_consolidated_v2(json.loads(dump_consolidated_v2(nodes))) == nodes
