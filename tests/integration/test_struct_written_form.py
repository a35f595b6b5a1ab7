"""New arrays of structured types are written as zarr-extensions' ``struct`` asks, whatever they came from.

zarrpy reads the legacy forms (the ``structured`` name, tuple fields, a
base64 fill value, a ``bytes`` codec without ``endian`` on multi-byte
fields, which means little-endian), but a new array -- from
``create_array(dtype=<legacy JSON>)``, ``from_array`` or ``zarrpy cp`` of a
legacy array -- is ``struct`` with object fields, a field-object fill value
and ``bytes`` with ``endian``. tensorstore (which refuses the legacy forms:
"Zarr v3 "struct" data types with multi-byte fields require the innermost
`bytes` codec to specify an endian") and zarr-python open and read what
zarrpy writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from zarrpy.tools.cli import main as cli

from tests.integration.oracles import zarr_python_has_struct

pytestmark = pytest.mark.integration

LEGACY = {"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}}
NESTED_LEGACY = {"name": "structured", "configuration": {"fields": [
    ["p", {"name": "structured", "configuration": {"fields": [["x", "int16"], ["y", "uint8"]]}}], ["v", "float32"]]}}
RECORDS = np.array([(1, 1.5), (-2, 2.5), (3, np.nan), (4, -4.5), (0, 0.0)], dtype=[("a", "<i4"), ("b", "<f8")])


def _legacy_store(path: Path, codecs: list | None = None, chunks=(2,)) -> zarrpy.Array:
    """A V3 array as zarr-python 3.0 wrote structured data: the ``structured``
    name, tuple fields, base64 fill, ``bytes`` without ``endian``."""
    path.mkdir()
    meta = {"zarr_format": 3, "node_type": "array", "shape": [5], "data_type": LEGACY,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": "AAAAAAAAAAAAAAAA",
            "codecs": codecs or [{"name": "bytes"}]}
    (path / "zarr.json").write_text(json.dumps(meta))
    a = zarrpy.open_array(str(path), mode="r+")
    a[...] = RECORDS
    return a


def _meta(path: Path) -> dict:
    return json.loads((path / "zarr.json").read_text())


def _written_as_struct(path: Path, fields=(("a", "int32"), ("b", "float64"))) -> None:
    meta = _meta(path)
    assert meta["data_type"] == {"name": "struct", "configuration": {
        "fields": [{"name": n, "data_type": t} for n, t in fields]}}
    assert isinstance(meta["fill_value"], dict)
    codecs = meta["codecs"]
    inner = codecs[0]["configuration"]["codecs"] if codecs[0]["name"] == "sharding_indexed" else codecs
    assert inner[0] == {"name": "bytes", "configuration": {"endian": "little"}}


def _tensorstore_reads(path: Path, expected: np.ndarray) -> None:
    ts = pytest.importorskip("tensorstore")
    for field in expected.dtype.names:
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}, "field": field}).result()
        assert np.array_equal(t.read().result(), expected[field], equal_nan=True), field


def _zarr_python_reads(path: Path, expected: np.ndarray) -> None:
    zarr = pytest.importorskip("zarr")
    if not zarr_python_has_struct():
        pytest.skip("this zarr-python has no 'struct' data type (zarr-python 3.1, the newest for Python 3.11)")
    got = zarr.open_array(str(path), mode="r")[...]
    for field in expected.dtype.names:
        assert np.array_equal(got[field], expected[field], equal_nan=expected[field].dtype.kind in "fc"), field


def test_from_array_of_a_legacy_array_writes_struct_with_an_endian(tmp_path):
    source = _legacy_store(tmp_path / "legacy.zarr")
    assert _meta(tmp_path / "legacy.zarr")["data_type"]["name"] == "structured"  # the source as it was
    zarrpy.from_array(str(tmp_path / "copy.zarr"), data=source)
    _written_as_struct(tmp_path / "copy.zarr")
    _tensorstore_reads(tmp_path / "copy.zarr", RECORDS)
    _zarr_python_reads(tmp_path / "copy.zarr", RECORDS)


def test_struct_with_bytes_without_endian_is_what_tensorstore_refuses(tmp_path):
    """So the test above could fail: what zarrpy wrote before, ``struct`` with
    the source's ``bytes`` without ``endian`` (tensorstore reads the legacy
    ``structured`` source itself)."""
    ts = pytest.importorskip("tensorstore")
    _legacy_store(tmp_path / "legacy.zarr")
    meta = _meta(tmp_path / "legacy.zarr")
    meta["data_type"] = {"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": "int32"}, {"name": "b", "data_type": "float64"}]}}
    meta["fill_value"] = {"a": 0, "b": 0.0}
    (tmp_path / "legacy.zarr" / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="require the innermost `bytes` codec to specify an explicit `endian`"):
        ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "legacy.zarr")},
                 "field": "a"}).result()


def test_from_array_of_a_sharded_legacy_array(tmp_path):
    sharded = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1], "codecs": [{"name": "bytes"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]
    source = _legacy_store(tmp_path / "legacy.zarr", sharded, chunks=(4,))
    copy = zarrpy.from_array(str(tmp_path / "copy.zarr"), data=source)
    assert copy.shards == (4,)
    _written_as_struct(tmp_path / "copy.zarr")
    _tensorstore_reads(tmp_path / "copy.zarr", RECORDS)


def test_cp_of_a_legacy_array_writes_struct(tmp_path):
    _legacy_store(tmp_path / "legacy.zarr")
    assert cli(["cp", str(tmp_path / "legacy.zarr"), str(tmp_path / "out.zarr"), "--quiet"]) == 0
    _written_as_struct(tmp_path / "out.zarr")
    _tensorstore_reads(tmp_path / "out.zarr", RECORDS)


@pytest.mark.parametrize("serializer", ["auto", {"name": "bytes"}])
def test_create_array_with_the_legacy_json_writes_struct(tmp_path, serializer):
    path = tmp_path / "new.zarr"
    a = zarrpy.create_array(str(path), shape=(5,), chunks=(2,), dtype=LEGACY, fill_value=(7, 0.5),
                            serializer=serializer)
    a[...] = RECORDS
    _written_as_struct(path)
    assert _meta(path)["fill_value"] == {"a": 7, "b": 0.5}
    assert a.metadata.data_type.name == "struct"
    _tensorstore_reads(path, RECORDS)
    _zarr_python_reads(path, RECORDS)


def test_nested_legacy_json_writes_nested_struct(tmp_path):
    path = tmp_path / "nested.zarr"
    dtype = np.dtype([("p", [("x", "<i2"), ("y", "u1")]), ("v", "<f4")])
    data = np.array([((1, 2), 0.5), ((-3, 4), 1.5)], dtype=dtype)
    a = zarrpy.create_array(str(path), shape=(2,), dtype=NESTED_LEGACY)
    a[...] = data
    inner = {"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "int16"},
                                                             {"name": "y", "data_type": "uint8"}]}}
    _written_as_struct(path, (("p", inner), ("v", "float32")))
    assert np.array_equal(zarrpy.open_array(str(path))[...], data)
    _zarr_python_reads(path, data)


def test_a_stored_legacy_array_keeps_its_form_when_its_metadata_is_rewritten(tmp_path):
    """Rewriting an existing array's metadata (attributes, resize) is not a new array."""
    source = _legacy_store(tmp_path / "legacy.zarr")
    source.attrs["units"] = "m"
    source.resize((6,))
    meta = _meta(tmp_path / "legacy.zarr")
    assert meta["data_type"] == LEGACY and meta["codecs"] == [{"name": "bytes"}]


def test_single_byte_and_mixed_order_structs_keep_bytes_without_endian(tmp_path):
    """No ``endian`` where the spec allows none (1-byte fields), and none for
    a V2 struct whose fields have their own byte orders."""
    one = zarrpy.create_array({}, shape=(3,), dtype=[("a", "u1"), ("b", "i1")], serializer={"name": "bytes"})
    assert one.serializer.to_json() == {"name": "bytes"}
    mixed = zarrpy.create_array(str(tmp_path / "v2.zarr"), shape=(3,), dtype=[("a", ">i4"), ("b", "<f8")],
                                zarr_format=2)
    mixed[...] = np.array([(1, 0.5), (2, 1.5), (3, 2.5)], dtype=[("a", ">i4"), ("b", "<f8")])
    zarray = json.loads((tmp_path / "v2.zarr" / ".zarray").read_text())
    assert zarray["dtype"] == [["a", ">i4"], ["b", "<f8"]]
    assert zarrpy.open_array(str(tmp_path / "v2.zarr"))[...]["a"].tolist() == [1, 2, 3]
