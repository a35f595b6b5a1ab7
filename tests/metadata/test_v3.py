"""V3 ``zarr.json``: parse, validate, serialise (ZARR-FORMAT-NOTES.md §2, §3, §5-§7).

Every rejection is a MetadataError whose message names the member at fault.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from zarrpy.errors import MetadataError, ZarrpyError
from zarrpy.metadata.v3 import (
    ArrayMetadataV3,
    ChunkKeyEncodingSpec,
    GroupMetadataV3,
    parse_node_metadata,
)

FIXTURES = Path(__file__).resolve().parents[2] / "spec-fixtures"

# Notes §2, "Example as zarr-python writes it (float32, NaN fill, zstd)".
NOTES_EXAMPLE = """{"shape":[10,10],"data_type":"float32",
 "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[5,5]}},
 "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
 "fill_value":"NaN",
 "codecs":[{"name":"bytes","configuration":{"endian":"little"}},
           {"name":"zstd","configuration":{"level":0,"checksum":false}}],
 "attributes":{},"zarr_format":3,"node_type":"array","storage_transformers":[]}"""


def compact(doc) -> str:
    """Canonical text for comparing JSON including member order."""
    return json.dumps(doc, separators=(",", ":"), allow_nan=False)


def base_doc(**changes) -> dict:
    doc = json.loads(NOTES_EXAMPLE)
    doc.update(changes)
    return doc


def parse(doc) -> ArrayMetadataV3:
    return ArrayMetadataV3.from_json(doc)


def assert_rejected(doc, *fragments: str) -> MetadataError:
    """``doc`` fails to parse through every entry point, naming ``fragments``."""
    errors = []
    with pytest.raises(MetadataError) as info:
        ArrayMetadataV3.from_json(copy.deepcopy(doc))
    errors.append(info.value)
    raw = json.dumps(doc).encode()
    with pytest.raises(MetadataError) as info:
        ArrayMetadataV3.from_bytes(raw, "grp/arr/zarr.json")
    errors.append(info.value)
    assert "grp/arr/zarr.json" in str(info.value)
    if doc.get("node_type") == "array":
        with pytest.raises(MetadataError) as info:
            parse_node_metadata(raw, "grp/arr/zarr.json")
        assert "grp/arr/zarr.json" in str(info.value)
        errors.append(info.value)
    for err in errors:
        for frag in fragments:
            assert frag in str(err), (frag, str(err))
    return errors[0]


# -- round trips -----------------------------------------------------------------


def test_notes_example_round_trips_to_identical_json():
    original = json.loads(NOTES_EXAMPLE)
    meta = ArrayMetadataV3.from_bytes(NOTES_EXAMPLE.encode())
    assert meta.shape == (10, 10)
    assert meta.chunk_shape == (5, 5)
    assert meta.data_type.name == "float32"
    assert np.isnan(meta.fill_value)
    assert meta.chunk_key_encoding == ChunkKeyEncodingSpec("default", "/")
    assert meta.codecs == (
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
    )
    assert meta.attributes == {}
    assert meta.dimension_names is None
    # Same members, same values, same order.
    assert compact(meta.to_json()) == compact(original)
    written = meta.to_bytes()
    assert compact(json.loads(written)) == compact(original)
    # Strict JSON: no NaN/Infinity tokens.
    assert b"NaN" not in written.replace(b'"NaN"', b"")
    json.loads(written, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    # And parsing what was written gives the same metadata.
    again = ArrayMetadataV3.from_bytes(written)
    assert compact(again.to_json()) == compact(original)


def test_parse_node_metadata_detects_array_and_group():
    assert isinstance(parse_node_metadata(NOTES_EXAMPLE.encode(), "zarr.json"), ArrayMetadataV3)
    g = parse_node_metadata(b'{"zarr_format":3,"node_type":"group","attributes":{"a":1}}', "g/zarr.json")
    assert isinstance(g, GroupMetadataV3)
    assert g.attributes == {"a": 1}


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"shape": [], "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}}},
        {"shape": [0, 7], "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 100]}}},
        {"attributes": {"units": "m", "nested": {"a": [1, 2, None], "b": "ü"}}},
        {"dimension_names": ["y", None]},
        {"dimension_names": [None, None]},
        {"fill_value": "0x7fc00001"},
        {"fill_value": -0.0},
        {"fill_value": "-Infinity"},
        {"fill_value": 1.5},
        {"chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}}},
        {"chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}}},
        {"data_type": "uint8", "fill_value": 255, "codecs": [{"name": "bytes"}]},
        {"data_type": "bool", "fill_value": True, "codecs": [{"name": "bytes"}]},
        {"data_type": "complex128", "fill_value": ["NaN", "0xfff0000000000001"]},
        {"data_type": "int64", "fill_value": -(2**63)},
        {"data_type": "uint64", "fill_value": 2**64 - 1},
        {"data_type": "r24", "fill_value": [1, 2, 3], "codecs": [{"name": "bytes"}]},
        {"codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
                    {"name": "bytes", "configuration": {"endian": "big"}},
                    {"name": "crc32c"}]},
        {"codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "some.ext", "configuration": {"x": 1}, "must_understand": False}]},
        {"x_extension": {"must_understand": False, "anything": [1, 2]}},
    ],
    ids=lambda c: ",".join(c) or "notes-example",
)
def test_written_form_round_trips_exactly(changes):
    doc = base_doc(**changes)
    meta = parse(copy.deepcopy(doc))
    out = meta.to_json()
    assert json.loads(compact(out)) == doc
    # Known members keep zarr-python's order; extensions follow.
    known = [k for k in json.loads(NOTES_EXAMPLE) if k in doc]
    assert [k for k in out if k in known] == known
    assert compact(ArrayMetadataV3.from_bytes(meta.to_bytes()).to_json()) == compact(out)


def test_fill_value_payload_survives_file_round_trip_bit_for_bit():
    meta = parse(base_doc(fill_value="0x7fc00001"))
    assert np.array(meta.fill_value, dtype=np.float32).view(np.uint32) == 0x7FC00001
    again = ArrayMetadataV3.from_bytes(meta.to_bytes())
    assert np.array(again.fill_value, dtype=np.float32).view(np.uint32) == 0x7FC00001
    assert json.loads(again.to_bytes())["fill_value"] == "0x7fc00001"


def test_writer_adds_members_zarr_python_always_writes():
    doc = base_doc()
    del doc["attributes"], doc["storage_transformers"]
    out = parse(doc).to_json()
    assert out["attributes"] == {}
    assert out["storage_transformers"] == []
    assert "dimension_names" not in out


def test_evolve_keeps_everything_else():
    meta = parse(base_doc(dimension_names=["a", "b"], x={"must_understand": False}))
    grown = meta.evolve(shape=(20, 10))
    assert grown.shape == (20, 10)
    out = grown.to_json()
    assert out["dimension_names"] == ["a", "b"]
    assert out["x"] == {"must_understand": False}
    assert out["fill_value"] == "NaN"


# -- every stored fixture ----------------------------------------------------------


def _fixture_docs():
    for path in sorted(FIXTURES.rglob("zarr.json")):
        yield pytest.param(path, id=str(path.relative_to(FIXTURES)))


@pytest.mark.parametrize("path", list(_fixture_docs()))
def test_fixture_metadata_parses_and_is_stable(path):
    raw = path.read_bytes()
    key = str(path.relative_to(FIXTURES))
    meta = parse_node_metadata(raw, key)
    written = meta.to_bytes()
    again = parse_node_metadata(written, key)
    assert compact(again.to_json()) == compact(meta.to_json())
    original = json.loads(raw)
    out = meta.to_json()
    assert out["zarr_format"] == 3
    assert out["node_type"] == original["node_type"]
    assert out.get("attributes", {}) == original.get("attributes", {})
    if isinstance(meta, ArrayMetadataV3):
        assert out["shape"] == original["shape"]
        assert out["chunk_grid"]["configuration"] == original["chunk_grid"]["configuration"]
        assert out.get("dimension_names") == original.get("dimension_names")
        # zarr-python's own documents are written back with the same members and values
        # (write what it expects); member order is checked separately below.
        if key.startswith("zarr-python/"):
            assert json.loads(compact(out)) == original


def test_member_order_matches_zarr_python_with_dimension_names():
    # zarr-python 3.4.2 writes dimension_names between attributes and zarr_format
    # (spec-fixtures/zarr-python/dimension_names_attributes). Order carries no meaning,
    # but byte-identical documents make diffs against zarr-python's output clean.
    path = FIXTURES / "zarr-python" / "dimension_names_attributes" / "data.zarr" / "zarr.json"
    original = json.loads(path.read_bytes())
    out = ArrayMetadataV3.from_bytes(path.read_bytes()).to_json()
    assert list(out) == list(original)


def _fixture_fill_checks():
    for fx in sorted(FIXTURES.rglob("fixture.json")):
        info = json.loads(fx.read_text())
        # V3 stores only: the v2_* fixtures hold .zarray (read in tests/integration)
        if "fill_value_check" in info and (fx.parent / "data.zarr" / "zarr.json").is_file():
            yield pytest.param(fx.parent, info["fill_value_check"], id=str(fx.parent.relative_to(FIXTURES)))


def _fill_le_bytes(value, dtype):
    """A fill scalar's little-endian bytes (raw bytes as they are; ml_dtypes
    types, kind 'V'/'W' too, are native = little-endian here)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if dtype.kind in "VW" or type(dtype).__module__ != "numpy.dtypes":
        return np.asarray(value).tobytes()
    return np.asarray(value, dtype=dtype).astype(dtype.newbyteorder("<")).tobytes()


@pytest.mark.parametrize("folder, check", list(_fixture_fill_checks()))
def test_fixture_fill_value_bit_for_bit(folder, check):
    meta = ArrayMetadataV3.from_bytes((folder / "data.zarr" / "zarr.json").read_bytes())
    dtype = meta.data_type.numpy
    if "value" in check:  # strings / bytes: the fill itself (bytes as hex), no raw bytes
        fill = meta.fill_value
        assert (fill if isinstance(fill, str) else bytes(fill).hex()) == check["value"]
        assert ArrayMetadataV3.from_bytes(meta.to_bytes()).fill_value == fill
        return
    if dtype.kind in "mM":  # datetime64 / timedelta64: a numpy scalar whose int64 count is the JSON
        assert isinstance(meta.fill_value, np.datetime64 if dtype.kind == "M" else np.timedelta64)
        assert np.asarray(meta.fill_value).astype(dtype).view(np.int64) == check["json"]
    if "raw_hex" in check:  # zarr-python type fixtures: the fill's bytes in the dtype zarr-python reads back
        producer_dtype = np.load(folder / "expected.npy", allow_pickle=False).dtype
        as_producer = np.asarray(meta.fill_value, dtype=dtype).astype(producer_dtype)
        assert as_producer.tobytes().hex() == check["raw_hex"]
        again = ArrayMetadataV3.from_bytes(meta.to_bytes())
        assert np.asarray(again.fill_value, dtype=dtype).tobytes() == np.asarray(meta.fill_value, dtype=dtype).tobytes()
        return
    raw = _fill_le_bytes(meta.fill_value, dtype)
    assert raw.hex() == check["raw_le_hex"]
    # Writing it back keeps the payload: the JSON decodes to the same bits.
    again = ArrayMetadataV3.from_bytes(meta.to_bytes())
    raw2 = _fill_le_bytes(again.fill_value, dtype)
    assert raw2 == raw


# -- fill_value through the document ---------------------------------------------------


@pytest.mark.parametrize(
    "data_type, fill",
    [
        ("uint8", 256), ("uint8", -1), ("int8", -129), ("int64", 2**63), ("uint64", 2**64),
        ("int16", 1.5), ("uint32", 0.1),
        ("int32", True), ("uint8", False), ("float32", True), ("float64", False),
        ("bool", 0), ("bool", "false"),
        ("float32", "nan"), ("float32", "0x7fc0"), ("float64", "0x7fc00001"), ("float32", None),
        ("complex64", 1.0), ("complex64", [1.0]), ("complex128", ["NaN", "NaN", "NaN"]),
        ("r16", [1, 2, 3]), ("r16", [1]), ("r16", [300, 1]),
        ("int32", "5"), ("int32", [5]),
    ],
    ids=repr,
)
def test_bad_fill_value_is_metadata_error_naming_fill_value(data_type, fill):
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
    assert_rejected(base_doc(data_type=data_type, fill_value=fill, codecs=codecs), "fill_value")


def test_missing_fill_value():
    doc = base_doc()
    del doc["fill_value"]
    assert_rejected(doc, "fill_value")


def test_null_fill_value_rejected_in_v3():
    assert_rejected(base_doc(fill_value=None), "fill_value")


# -- chunk_key_encoding -------------------------------------------------------


@pytest.mark.parametrize(
    "value, name, sep",
    [
        ({"name": "default", "configuration": {"separator": "/"}}, "default", "/"),
        ({"name": "default", "configuration": {"separator": "."}}, "default", "."),
        ({"name": "default"}, "default", "/"),                   # tensorstore 0.1.86
        ({"name": "default", "configuration": {}}, "default", "/"),
        ("default", "default", "/"),                              # V3.1 short-hand
        ({"name": "v2"}, "v2", "."),
        ({"name": "v2", "configuration": {"separator": "."}}, "v2", "."),
        ({"name": "v2", "configuration": {"separator": "/"}}, "v2", "/"),
        ("v2", "v2", "."),
    ],
    ids=repr,
)
def test_chunk_key_encoding_forms(value, name, sep):
    meta = parse(base_doc(chunk_key_encoding=value))
    assert meta.chunk_key_encoding == ChunkKeyEncodingSpec(name, sep)
    # Always written in full, as zarr-python writes it.
    assert meta.to_json()["chunk_key_encoding"] == {"name": name, "configuration": {"separator": sep}}
    assert ChunkKeyEncodingSpec.from_json(meta.chunk_key_encoding.to_json()) == meta.chunk_key_encoding


@pytest.mark.parametrize(
    "value",
    [
        {"name": "default", "configuration": {"separator": "-"}},
        {"name": "default", "configuration": {"separator": ""}},
        {"name": "v2", "configuration": {"separator": 1}},
        {"name": "default", "configuration": {"separator": "/", "extra": 1}},
        {"name": "fancy"},
        {"name": "default", "must_understand": False},
        {"name": "default", "configuration": "/"},
        {"configuration": {"separator": "/"}},
        None,
        3,
    ],
    ids=repr,
)
def test_bad_chunk_key_encoding(value):
    assert_rejected(base_doc(chunk_key_encoding=value), "chunk_key_encoding")


# -- unknown members and extensions ----------------------------------------------


def test_unknown_top_level_member_is_error_naming_it():
    err = assert_rejected(base_doc(my_extension={"name": "x"}), "my_extension")
    assert "must_understand" in str(err)


@pytest.mark.parametrize("value", [1, "x", None, [1], {"must_understand": True}, {"must_understand": "false"}])
def test_unknown_member_without_must_understand_false(value):
    assert_rejected(base_doc(surprise=value), "surprise")


def test_unknown_member_must_understand_false_is_preserved():
    ext = {"must_understand": False, "name": "x.meta", "configuration": {"k": [1, "v"]}}
    meta = parse(base_doc(x_meta=ext))
    assert meta.to_json()["x_meta"] == ext
    written = json.loads(meta.to_bytes())
    assert written["x_meta"] == ext
    # survives an evolve (e.g. an attribute update) too
    written = json.loads(meta.evolve(attributes={"a": 1}).to_bytes())
    assert written["x_meta"] == ext
    assert written["attributes"] == {"a": 1}


def test_group_unknown_members():
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {}, "weird": 1}
    with pytest.raises(MetadataError, match="weird"):
        GroupMetadataV3.from_json(doc)
    with pytest.raises(MetadataError, match="weird"):
        parse_node_metadata(json.dumps(doc).encode(), "g/zarr.json")
    ok = dict(doc, weird={"must_understand": False, "v": 2})
    g = GroupMetadataV3.from_json(ok)
    assert g.to_json()["weird"] == {"must_understand": False, "v": 2}
    assert json.loads(g.to_bytes())["weird"] == {"must_understand": False, "v": 2}


def test_group_consolidated_metadata_is_kept():
    cm = {"kind": "inline", "must_understand": False, "metadata": {}}
    g = GroupMetadataV3.from_json({"zarr_format": 3, "node_type": "group", "consolidated_metadata": cm})
    assert json.loads(g.to_bytes())["consolidated_metadata"] == cm


def test_group_round_trip():
    doc = {"attributes": {"a": [1, 2], "b": {"c": None}}, "zarr_format": 3, "node_type": "group"}
    g = GroupMetadataV3.from_json(copy.deepcopy(doc))
    assert compact(g.to_json()) == compact(doc)
    assert compact(json.loads(g.to_bytes())) == compact(doc)
    minimal = GroupMetadataV3.from_json({"zarr_format": 3, "node_type": "group"})
    assert minimal.to_json() == {"attributes": {}, "zarr_format": 3, "node_type": "group"}


@pytest.mark.parametrize(
    "doc, field",
    [
        ({"zarr_format": 2, "node_type": "group"}, "zarr_format"),
        ({"node_type": "group"}, "zarr_format"),
        ({"zarr_format": 3}, "node_type"),
        ({"zarr_format": 3, "node_type": "folder"}, "node_type"),
        ({"zarr_format": 3, "node_type": "group", "attributes": [1]}, "attributes"),
    ],
    ids=repr,
)
def test_bad_group_documents(doc, field):
    with pytest.raises(MetadataError, match=field):
        parse_node_metadata(json.dumps(doc).encode(), "g/zarr.json")


# -- data_type ------------------------------------------------------------------


@pytest.mark.parametrize("value", ["float128", "string_thing", {"name": "mystery"}, "r7", 5, None])
def test_unknown_data_type(value):
    err = assert_rejected(base_doc(data_type=value), "data_type")
    if isinstance(value, str):
        assert value in str(err)


def test_data_type_object_form():
    meta = parse(base_doc(data_type={"name": "float32"}))
    assert meta.data_type.name == "float32"
    assert meta.to_json()["data_type"] == "float32"


def test_data_type_must_understand_false_is_not_allowed():
    assert_rejected(base_doc(data_type={"name": "float32", "must_understand": False}), "data_type")


# -- chunk_grid ------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[5, 4], [5, 5]]}},
        {"name": "rectilinear", "configuration": {"kind": "file", "chunk_shapes": [[5, 5], [5, 5]]}},
        {"name": "rectilinear", "configuration": {"chunk_shapes": [[5, 5], [5, 5]]}},
        {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[5, 5]]}},
        {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[5, 5], []]}},
        {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[5, 5], [[5, 0], 10]]}},
        {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[5, 5], [[5, 2, 1]]]}},
        {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[5, 5], 0]}},
        {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[5, 5], [True, 9]]}},
        {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[5, 5], [[1, 2**40]]]}},
        {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[5, 5], 5], "x": 1}},
        {"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": [5]}},
        {"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": [0, 5]}},
        {"name": "irregular", "configuration": {"chunk_shape": [5, 5]}},
        {"name": "regular", "configuration": {"chunk_shape": [5]}},
        {"name": "regular", "configuration": {"chunk_shape": [5, 5, 5]}},
        {"name": "regular", "configuration": {"chunk_shape": [0, 5]}},
        {"name": "regular", "configuration": {"chunk_shape": [-1, 5]}},
        {"name": "regular", "configuration": {"chunk_shape": [5.0, 5]}},
        {"name": "regular", "configuration": {"chunk_shape": [True, 5]}},
        {"name": "regular", "configuration": {"chunk_shape": "5,5"}},
        {"name": "regular", "configuration": {}},
        {"name": "regular"},
        {"name": "regular", "configuration": {"chunk_shape": [5, 5], "extra": 1}},
        {"name": "regular", "configuration": {"chunk_shape": [5, 5]}, "must_understand": False},
        {"configuration": {"chunk_shape": [5, 5]}},
        [5, 5],
        None,
    ],
    ids=repr,
)
def test_bad_chunk_grid(value):
    assert_rejected(base_doc(chunk_grid=value), "chunk_grid")


def test_unknown_chunk_grid_names_it():
    err = assert_rejected(base_doc(chunk_grid={"name": "rectangular", "configuration": {}}), "chunk_grid")
    assert "rectangular" in str(err) and "rectilinear" in str(err)  # the unknown one, and those known


# -- storage_transformers ---------------------------------------------------------


@pytest.mark.parametrize("value", [[], None])
def test_no_storage_transformers(value):
    doc = base_doc(storage_transformers=value)
    assert parse(doc).to_json()["storage_transformers"] == []


@pytest.mark.parametrize(
    "value",
    [
        [{"name": "sharding_transformer"}],
        [{"name": "x", "configuration": {}}],
        ["x"],
        [{"name": "x", "must_understand": True}],
        {"name": "x"},
        "x",
        [1],
    ],
    ids=repr,
)
def test_storage_transformers_rejected(value):
    assert_rejected(base_doc(storage_transformers=value), "storage_transformers")


def test_optional_storage_transformer_is_accepted():
    meta = parse(base_doc(storage_transformers=[{"name": "x", "must_understand": False}]))
    assert meta.shape == (10, 10)


# -- dimension_names --------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [["x"], ["x", "y", "z"], [], [1, 2], ["x", 1], "xy", {"x": 0}],
    ids=repr,
)
def test_bad_dimension_names(value):
    assert_rejected(base_doc(dimension_names=value), "dimension_names")


def test_dimension_names_null_means_unset():
    assert parse(base_doc(dimension_names=None)).dimension_names is None


def test_dimension_names_constructor_checks_length():
    meta = parse(base_doc())
    with pytest.raises(MetadataError, match="dimension_names"):
        meta.evolve(dimension_names=("a",))


# -- required members, shape, codecs -------------------------------------------------


@pytest.mark.parametrize(
    "member", ["zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
               "fill_value", "codecs"],
)
def test_missing_required_member(member):
    doc = base_doc()
    del doc[member]
    with pytest.raises(MetadataError) as info:
        ArrayMetadataV3.from_json(doc)
    assert member in str(info.value)
    with pytest.raises(MetadataError) as info:
        ArrayMetadataV3.from_bytes(json.dumps(doc).encode(), "a/zarr.json")
    assert member in str(info.value) and "a/zarr.json" in str(info.value)


@pytest.mark.parametrize("value", [2, "3", None, 3.5])
def test_wrong_zarr_format(value):
    assert_rejected(base_doc(zarr_format=value), "zarr_format")


def test_group_document_is_not_an_array():
    with pytest.raises(MetadataError, match="node_type"):
        ArrayMetadataV3.from_json({"zarr_format": 3, "node_type": "group"})


@pytest.mark.parametrize("value", [[-1, 10], [10.0, 10], [True, 10], "10,10", 10, None, [10, None]], ids=repr)
def test_bad_shape(value):
    assert_rejected(base_doc(shape=value), "shape")


@pytest.mark.parametrize(
    "value",
    [[], None, {"name": "bytes"}, "bytes", [{"configuration": {}}], [{"name": 1}],
     [{"name": "bytes", "configuration": "little"}], [{"name": "bytes", "extra": 1}],
     [{"name": "bytes", "must_understand": "no"}]],
    ids=repr,
)
def test_bad_codecs_list(value):
    assert_rejected(base_doc(codecs=value), "codecs")


def test_short_hand_codec_names_are_read_and_written_as_objects():
    meta = parse(base_doc(codecs=["bytes", "crc32c"], data_type="uint8", fill_value=0))
    assert meta.to_json()["codecs"] == [{"name": "bytes"}, {"name": "crc32c"}]


def test_unknown_codec_names_are_kept_as_json_at_this_layer():
    # The metadata layer does not know codecs; the codec layer rejects unknown ones.
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "no.such.codec"}]
    assert parse(base_doc(codecs=codecs)).to_json()["codecs"] == codecs


@pytest.mark.parametrize("value", [[1], "x", 5])
def test_bad_attributes(value):
    assert_rejected(base_doc(attributes=value), "attributes")


# -- malformed bytes --------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"{not json}", b'{"zarr_format": 3,}', b"\xff\xfe\x00garbage", b"[1, 2, 3]", b'"array"',
     b"null", b"42", NOTES_EXAMPLE.encode()[:-5]],
    ids=repr,
)
def test_malformed_json_names_the_key(raw):
    key = "some/node/zarr.json"
    for call in (lambda: ArrayMetadataV3.from_bytes(raw, key), lambda: parse_node_metadata(raw, key)):
        with pytest.raises(MetadataError) as info:
            call()
        assert key in str(info.value)
        assert isinstance(info.value, ZarrpyError)


def test_node_type_missing_or_wrong_through_parse_node_metadata():
    for doc in ({"zarr_format": 3}, {"zarr_format": 3, "node_type": "thing"}, {"zarr_format": 3, "node_type": None}):
        with pytest.raises(MetadataError) as info:
            parse_node_metadata(json.dumps(doc).encode(), "k/zarr.json")
        assert "node_type" in str(info.value) and "k/zarr.json" in str(info.value)
