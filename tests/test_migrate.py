"""migrate_v3 / ``zarrpy migrate``: V2 -> V3 metadata, chunks untouched.

The V2 hierarchy is written by zarr-python 3.4.2 (``zarr_format=2``), except
the ragged array: zarr-python cannot create a ``vlen-array`` array (it has no
data type for it), so its ``.zarray`` and chunk files are written by hand with
numcodecs' ``VLenArray``. After the migration every chunk file must be byte for
byte what it was, and zarrpy and zarr-python (``zarr_format=3``) must read the
V3 hierarchy as the V2 data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from zarrpy.tools.cli import main
from zarrpy.errors import MetadataError, NodeNotFoundError, ReadOnlyError
from zarrpy.tools.migrate import MigrationResult, migrate_v3
from zarrpy.stores import LocalStore

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")

METADATA_NAMES = {"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"}

RAGGED = [[1, 2, 3], [], [-4], [5, 6], [7, 8, 9, 10], [11]]


def _write_ragged(root: Path, name: str, dtype: str, *, compressor=None) -> None:
    """A V2 vlen-array array written the way numcodecs / zarr-python 2 did."""
    d = root / name
    d.mkdir(parents=True)
    zarray = {"shape": [len(RAGGED)], "chunks": [4], "dtype": "|O", "fill_value": None, "order": "C",
              "filters": [{"id": "vlen-array", "dtype": dtype}], "dimension_separator": ".",
              "compressor": None if compressor is None else compressor.get_config(), "zarr_format": 2}
    (d / ".zarray").write_text(json.dumps(zarray))
    (d / ".zattrs").write_text(json.dumps({"kind": "ragged"}))
    codec = numcodecs.VLenArray(dtype)
    for i in range(0, len(RAGGED), 4):
        items = np.empty(4, dtype=object)  # edge chunk padded, as V2 writes it
        for j in range(4):
            items[j] = np.array(RAGGED[i + j] if i + j < len(RAGGED) else [], dtype=dtype)
        encoded = codec.encode(items)
        if compressor is not None:
            encoded = compressor.encode(encoded)
        (d / str(i // 4)).write_bytes(bytes(encoded))


def _build_v2(root: Path) -> dict[str, np.ndarray]:
    """The V2 hierarchy; returns the expected data of every array by path."""
    g = zarr.open_group(str(root), mode="w", zarr_format=2, attributes={"title": "v2 store", "n": [1, 2]})
    expected: dict[str, np.ndarray] = {}
    num = g.create_group("num", attributes={"what": "numbers"})

    data = np.arange(70, dtype=">i4").reshape(10, 7) * 3 - 50
    a = num.create_array("f_be_delta_blosc_auto", shape=data.shape, chunks=(3, 4), dtype=">i4", order="F",
                         filters=[numcodecs.Delta(dtype=">i4")],
                         compressors=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=-1),
                         fill_value=-1, attributes={"units": "m"})
    a[:] = data
    expected["num/f_be_delta_blosc_auto"] = data

    data = np.full((9, 5), np.nan)
    data[:4, :3] = np.linspace(0, 1, 12).reshape(4, 3)  # other chunks never written: fill value
    a = num.create_array("f8_nan_zlib_slash", shape=(9, 5), chunks=(4, 3), dtype="<f8", fill_value=np.nan,
                         compressors=numcodecs.Zlib(level=1), chunk_key_encoding={"name": "v2", "separator": "/"})
    a[:4, :3] = data[:4, :3]
    expected["num/f8_nan_zlib_slash"] = data

    data = (np.arange(300) % 7).astype("u1")
    a = num.create_array("u1_bitshuffle_auto", shape=(300,), chunks=(64,), dtype="u1",
                         compressors=numcodecs.Blosc(cname="lz4", shuffle=-1))
    a[:] = data
    expected["num/u1_bitshuffle_auto"] = data

    data = np.array([[1.5, -2.25], [3.0, 4.5], [5.0, 6.0]], dtype=">f4")
    a = num.create_array("f4_be_gzip", shape=data.shape, chunks=(2, 2), dtype=">f4",
                         compressors=numcodecs.GZip(level=5))
    a[:] = data
    expected["num/f4_be_gzip"] = data

    a = g.create_array("scalar", shape=(), dtype="<i8", fill_value=0, compressors=None)
    a[...] = 42
    expected["scalar"] = np.array(42, dtype="<i8")

    text = g.create_group("text")
    words = np.array(["alpha", "", "γάμμα", "delta", "e" * 300, "ζ", "x"], dtype=object)
    a = text.create_array("strings", shape=words.shape, chunks=(3,), dtype=str)
    a[:] = words
    expected["text/strings"] = words
    grid = np.array([["a", "b", "c"], ["d", "", "f"]], dtype=object)
    a = text.create_array("strings_f", shape=grid.shape, chunks=(2, 2), dtype=str, order="F",
                          compressors=numcodecs.Zstd(level=1))
    a[:] = grid
    expected["text/strings_f"] = grid
    blobs = np.array([b"\x00\x01", b"", b"xyz", b"\xff" * 50], dtype=object)
    a = text.create_array("bytes", shape=blobs.shape, chunks=(3,), dtype=zarr.dtype.VariableLengthBytes())
    a[:] = blobs
    expected["text/bytes"] = blobs

    g.create_group("empty/inner", attributes={"deep": True})
    _write_ragged(root, "ragged_i2", "<i2", compressor=numcodecs.Zlib(level=1))
    _write_ragged(root, "ragged_be_i4", ">i4")
    return expected


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _chunks(files: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in files.items() if k.rsplit("/", 1)[-1] not in METADATA_NAMES}


def _ragged_lists(values) -> list[list[int]]:
    """A ragged read as lists, whether it came back as a RaggedArray or as bytes."""
    if isinstance(values, zarrpy.RaggedArray):
        return [np.asarray(v).tolist() for v in values.to_list()]
    raise AssertionError(f"unexpected ragged result {values!r}")


def _check_ragged(values, dtype: str) -> None:
    if isinstance(values, np.ndarray) and values.dtype == object:
        # variable_length_bytes stand-in (convert.py): element bytes in little-endian
        got = [np.frombuffer(b, dtype=np.dtype(dtype).newbyteorder("<")).tolist() for b in values]
    else:
        got = _ragged_lists(values)
    assert got == RAGGED


@pytest.fixture
def v2_store(tmp_path):
    root = tmp_path / "h.zarr"
    expected = _build_v2(root)
    return root, expected


def _assert_zarrpy_reads(root: Path, expected: dict[str, np.ndarray], zarr_format: int | None) -> None:
    for path, data in expected.items():
        a = zarrpy.open_array(str(root), path=path, zarr_format=zarr_format)
        assert a.metadata.zarr_format == (zarr_format or 3)
        got = a[...]
        if data.dtype == object:
            assert got.tolist() == data.tolist(), path
        else:
            np.testing.assert_array_equal(got, data, err_msg=path)
            assert got.dtype == data.dtype.newbyteorder("=") or got.dtype == data.dtype, path
    for name, dtype in (("ragged_i2", "<i2"), ("ragged_be_i4", ">i4")):
        _check_ragged(zarrpy.open_array(str(root), path=name, zarr_format=zarr_format)[...], dtype)


def _assert_zarr_python_reads_v3(root: Path, expected: dict[str, np.ndarray]) -> None:
    g = zarr.open_group(str(root), mode="r", zarr_format=3)
    assert g.attrs["title"] == "v2 store"
    for path, data in expected.items():
        got = g[path][...]
        if data.dtype == object:
            assert list(np.asarray(got).tolist()) == data.tolist(), path
        else:
            np.testing.assert_array_equal(got, data, err_msg=path)
    # ragged_i2 / ragged_be_i4: zarr-python has no data type for numcodecs.vlen-array
    # (it cannot open V2 vlen-array arrays either), so only zarrpy reads them.


def test_migration_keeps_every_chunk_and_both_libraries_read_v3(v2_store):
    root, expected = v2_store
    before = _snapshot(root)
    _assert_zarrpy_reads(root, expected, 2)

    result = migrate_v3(str(root))

    after = _snapshot(root)
    assert _chunks(after) == _chunks(before)  # no chunk read-modified, added or removed
    assert {k: v for k, v in after.items() if k in before} == before  # V2 documents untouched
    new = sorted(set(after) - set(before))
    assert new == sorted(f"{p}/zarr.json" if p else "zarr.json" for p in result.written)
    assert set(result.written) == {"", "num", "text", "empty", "empty/inner", "scalar", "ragged_i2",
                                   "ragged_be_i4", *expected}
    assert result.unchanged == () and result.removed == ()

    _assert_zarrpy_reads(root, expected, 3)
    _assert_zarrpy_reads(root, expected, None)  # V3 is preferred when both exist
    _assert_zarr_python_reads_v3(root, expected)


def test_migrated_metadata_is_v2_to_v3_serialised(v2_store):
    root, _ = v2_store
    migrate_v3(str(root))
    doc = json.loads((root / "num/f_be_delta_blosc_auto/zarr.json").read_bytes())
    assert doc["chunk_key_encoding"] == {"name": "v2", "configuration": {"separator": "."}}
    assert doc["attributes"] == {"units": "m"}
    assert [c["name"] for c in doc["codecs"]] == ["transpose", "numcodecs.delta", "bytes", "blosc"]
    assert doc["codecs"][0]["configuration"] == {"order": [1, 0]}
    assert doc["codecs"][2]["configuration"] == {"endian": "big"}
    assert doc["codecs"][3]["configuration"]["shuffle"] == "shuffle"  # -1 resolved for a 4-byte type
    doc = json.loads((root / "num/u1_bitshuffle_auto/zarr.json").read_bytes())
    assert doc["codecs"][-1]["configuration"]["shuffle"] == "bitshuffle"  # -1 resolved for 1-byte items
    doc = json.loads((root / "num/f8_nan_zlib_slash/zarr.json").read_bytes())
    assert doc["chunk_key_encoding"]["configuration"]["separator"] == "/"
    assert doc["fill_value"] == "NaN" and doc["codecs"][-1]["name"] == "numcodecs.zlib"
    doc = json.loads((root / "text/strings/zarr.json").read_bytes())
    assert doc["data_type"] == "string" and doc["codecs"][0]["name"] == "vlen-utf8"
    doc = json.loads((root / "text/bytes/zarr.json").read_bytes())
    assert doc["codecs"][0]["name"] == "vlen-bytes"
    doc = json.loads((root / "ragged_be_i4/zarr.json").read_bytes())
    assert doc["codecs"] == [{"name": "numcodecs.vlen-array", "configuration": {"dtype": ">i4"}}]
    doc = json.loads((root / "zarr.json").read_bytes())
    assert doc == {"attributes": {"title": "v2 store", "n": [1, 2]}, "zarr_format": 3, "node_type": "group"}
    for path in ("num/f_be_delta_blosc_auto", "text/strings_f", "ragged_i2", "scalar"):
        v2 = zarrpy.open_array(str(root), path=path, zarr_format=2)
        v3 = zarrpy.open_array(str(root), path=path, zarr_format=3)
        assert v3.metadata == v2._v3


def test_remove_v2_leaves_only_v3_metadata(v2_store):
    root, expected = v2_store
    before = _snapshot(root)
    result = migrate_v3(str(root), remove_v2=True)
    after = _snapshot(root)
    assert _chunks(after) == _chunks(before)
    names = {k.rsplit("/", 1)[-1] for k in after if k.rsplit("/", 1)[-1] in METADATA_NAMES}
    assert names == {"zarr.json"}
    assert len(result.removed) == sum(1 for k in before if k.rsplit("/", 1)[-1] in METADATA_NAMES)
    with pytest.raises(NodeNotFoundError):
        zarrpy.open_array(str(root), path="scalar", zarr_format=2)
    _assert_zarrpy_reads(root, expected, None)
    _assert_zarr_python_reads_v3(root, expected)


def test_rerun_is_idempotent_and_remove_v2_can_follow(v2_store):
    root, expected = v2_store
    first = migrate_v3(str(root))
    state = _snapshot(root)
    second = migrate_v3(str(root))
    assert second.written == () and second.unchanged == first.written
    assert _snapshot(root) == state
    third = migrate_v3(str(root), remove_v2=True)
    assert third.written == () and len(third.removed) > 0
    assert migrate_v3(str(root)) == MigrationResult((), (), ())  # nothing V2 left
    _assert_zarrpy_reads(root, expected, None)


def test_remove_v2_cleans_up_after_an_interrupted_removal(v2_store):
    root, expected = v2_store
    migrate_v3(str(root))
    (root / "num/f4_be_gzip/.zarray").unlink()  # as if a removal stopped half-way
    (root / "text/.zgroup").unlink()
    result = migrate_v3(str(root), remove_v2=True)
    assert "num/f4_be_gzip/.zattrs" in result.removed and "text/.zattrs" in result.removed
    assert not any(k.rsplit("/", 1)[-1] in METADATA_NAMES - {"zarr.json"} for k in _snapshot(root))
    _assert_zarrpy_reads(root, expected, None)


def test_a_different_zarr_json_is_refused_and_nothing_is_written(v2_store):
    root, _ = v2_store
    migrate_v3(str(root))
    attrs = root / "num/f_be_delta_blosc_auto/.zattrs"
    attrs.write_text(json.dumps({"units": "km"}))  # V2 changed after the migration
    (root / "text/strings/zarr.json").unlink()  # would be written by a successful run
    state = _snapshot(root)
    with pytest.raises(MetadataError, match="f_be_delta_blosc_auto.*not its migration"):
        migrate_v3(str(root), remove_v2=True)
    assert _snapshot(root) == state


def test_a_v2_array_without_a_v3_form_is_refused_and_nothing_is_written(v2_store):
    root, _ = v2_store
    fixed = root / "num/records"  # a struct with fields in two byte orders: no V3 form without rewriting chunks
    fixed.mkdir()
    (fixed / ".zarray").write_text(json.dumps({"shape": [2], "chunks": [2], "dtype": [["a", "<i4"], ["b", ">i2"]],
                                               "fill_value": None,
                                               "order": "C", "filters": None, "compressor": None,
                                               "zarr_format": 2}))
    state = _snapshot(root)
    with pytest.raises(MetadataError, match=r"nothing was migrated.*num/records.*dtype"):
        migrate_v3(str(root))
    assert _snapshot(root) == state


def test_a_node_an_array_and_a_store_path_can_be_given(v2_store, tmp_path):
    root, expected = v2_store
    a = zarrpy.open_array(str(root), path="text/strings", mode="r+")
    assert migrate_v3(a).written == ("text/strings",)
    g = zarrpy.open_group(str(root), path="num", mode="r+")
    assert set(migrate_v3(g).written) == {"num", *(p for p in expected if p.startswith("num/"))}
    assert migrate_v3(LocalStore(str(root)), path="text").written == ("text", "text/bytes", "text/strings_f")
    with pytest.raises(ReadOnlyError):
        migrate_v3(zarrpy.open_group(str(root), mode="r"))
    with pytest.raises(NodeNotFoundError):
        migrate_v3(str(tmp_path / "missing.zarr"))


def test_consolidated_v2_becomes_consolidated_v3(tmp_path):
    root = tmp_path / "c.zarr"
    g = zarr.open_group(str(root), mode="w", zarr_format=2, attributes={"a": 1})
    g.create_group("sub").create_array("y", shape=(4,), chunks=(2,), dtype="i2")[:] = [1, 2, 3, 4]
    g.create_array("s", shape=(2,), chunks=(2,), dtype=str)[:] = ["p", "q"]
    zarr.consolidate_metadata(str(root))
    result = migrate_v3(str(root), remove_v2=True)
    assert "zmetadata" not in " ".join(_snapshot(root)) and ".zmetadata" in result.removed
    z = zarrpy.open_group(str(root), mode="r", use_consolidated=True)
    assert z.zarr_format == 3 and sorted(z.consolidated_metadata) == ["s", "sub", "sub/y"]
    assert z["sub/y"][...].tolist() == [1, 2, 3, 4]
    zc = zarr.open_consolidated(str(root), zarr_format=3)
    assert zc["sub/y"][:].tolist() == [1, 2, 3, 4] and list(zc["s"][:]) == ["p", "q"]
    assert migrate_v3(str(root)).written == ()


def test_cli_migrate(v2_store):
    root, expected = v2_store
    before = _chunks(_snapshot(root))
    proc = subprocess.run([sys.executable, "-m", "zarrpy", "migrate", str(root), "--remove-v2"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "wrote zarr.json for" in proc.stdout and "removed" in proc.stdout
    assert _chunks(_snapshot(root)) == before
    assert not any(k.endswith((".zarray", ".zgroup", ".zattrs")) for k in _snapshot(root))
    _assert_zarrpy_reads(root, expected, None)


def test_cli_migrate_reports_errors(tmp_path, capsys):
    assert main(["migrate", str(tmp_path / "missing.zarr")]) == 1
    assert "no array or group" in capsys.readouterr().err
