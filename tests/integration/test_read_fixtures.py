"""Read every golden store in ``spec-fixtures/`` with zarrpy.

The stores were written by zarr-python, tensorstore, the zarrs pipeline
(zarrs-python) and by hand from the spec (``spec-fixtures/generate.py``; layout
in ``spec-fixtures/README.md``). Each fixture's ``expected.npy`` is what its
producer reads back; zarrpy must return the same bits (NaN payloads and signed
zeros included), the same dtype, and the shape, chunks, attributes and fill
value that ``zarr.json`` (V3) or ``.zarray``/``.zattrs`` (V2) records. For
variable-length fixtures (strings, bytes) the exact values are
``fixture.json["expected_values"]``; sharded fixtures are also read one inner
chunk at a time. datetime64 / timedelta64 data (zarr-python's
``numpy.datetime64`` / ``numpy.timedelta64`` V3 types, V2 ``<M8[ns]`` etc.) is
compared as int64, so NaT must read back as NaT, and the fill value as the
int64 count the JSON records.

No peer implementation is imported: the stored files are the whole reference.
These tests only read: a missing fixture or expected file is a failure, never a
reason to skip or to write one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrpy

pytestmark = pytest.mark.integration

FIXTURES_ROOT = Path(__file__).resolve().parents[2] / "spec-fixtures"
FIXTURE_FILES = sorted(FIXTURES_ROOT.glob("*/*/fixture.json"))


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _fixture_id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.parent.name}"


def _params(node_type: str) -> list[Any]:
    # a fixture.json with "own_test" (a module) is read by that module only (e.g. masked arrays of zarrs' optional type)
    found = [f for f in FIXTURE_FILES if _load(f).get("node_type", "array") == node_type and "own_test" not in _load(f)]
    # An empty parameter list would make pytest skip; a sentinel makes it fail.
    return [pytest.param(f, id=_fixture_id(f)) for f in found] or [
        pytest.param(None, id=f"no-{node_type}-fixtures")
    ]


ARRAY_FIXTURES = _params("array")
GROUP_FIXTURES = _params("group")
SHARDED_FIXTURES = [
    p for p in ARRAY_FIXTURES if p.values[0] is not None and _load(p.values[0]).get("shards")
] or [pytest.param(None, id="no-sharded-fixtures")]
CONSOLIDATED_FIXTURES = [
    p for p in GROUP_FIXTURES if p.values[0] is not None and _load(p.values[0]).get("consolidated")
] or [pytest.param(None, id="no-consolidated-fixtures")]
PRODUCERS = ("zarr-python", "tensorstore", "zarrs", "spec")

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_CORE_DTYPES = {
    name: np.dtype(name)
    for name in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
}  # fmt: skip
# zarr-python's V3 names for numpy's datetime types (configuration: unit, scale_factor)
_TIME_TYPES = {"numpy.datetime64": "M8", "numpy.timedelta64": "m8"}


# -- helpers ---------------------------------------------------------------


def _store_format(store: Path) -> int:
    """3 for ``zarr.json``, 2 for ``.zarray`` / ``.zgroup``."""
    if (store / "zarr.json").is_file():
        return 3
    assert (store / ".zarray").is_file() or (store / ".zgroup").is_file(), (
        f"{store} has neither zarr.json nor .zarray/.zgroup"
    )
    return 2


def _require(fixture_json: Path | None) -> tuple[dict[str, Any], Path]:
    assert fixture_json is not None, f"no fixtures of this kind under {FIXTURES_ROOT}"
    doc = _load(fixture_json)
    assert doc.get("path") == "data.zarr", f"{fixture_json}: unexpected path {doc.get('path')!r}"
    store = fixture_json.parent / doc["path"]
    fmt = _store_format(store)
    assert doc.get("zarr_format", 3) == fmt, f"fixture.json says V{doc.get('zarr_format')}, store is V{fmt}"
    return doc, store


def _node_meta(store: Path, path: str = "") -> dict[str, Any]:
    """The node's metadata document; V2 gets ``.zattrs`` as ``attributes``."""
    node = store.joinpath(*filter(None, path.split("/")))
    if _store_format(store) == 3:
        return _load(node / "zarr.json")
    name = ".zarray" if (node / ".zarray").is_file() else ".zgroup"
    meta = _load(node / name)
    zattrs = node / ".zattrs"
    meta["attributes"] = _load(zattrs) if zattrs.is_file() else {}
    return meta


def _vlen_kind(meta: dict[str, Any]) -> str | None:
    """"string", "bytes" or None for an array document (V3 or V2)."""
    if meta.get("zarr_format") == 3:
        name = meta["data_type"]["name"] if isinstance(meta["data_type"], dict) else meta["data_type"]
        return {"string": "string", "variable_length_bytes": "bytes", "bytes": "bytes", "binary": "bytes"}.get(name)
    if np.dtype(meta["dtype"]).kind != "O":
        return None
    ids = [f["id"] for f in meta.get("filters") or []]
    assert "vlen-utf8" in ids or "vlen-bytes" in ids, f"object dtype without a vlen filter: {ids}"
    return "string" if "vlen-utf8" in ids else "bytes"


def _vlen_array(values: Any, kind: str) -> np.ndarray:
    """fixture.json expected_values (strings; bytes as hex) -> StringDType / object array."""
    if kind == "string":
        return np.array(values, dtype=np.dtypes.StringDType())
    hexes = np.array(values, dtype=object)
    out = np.empty(hexes.shape, dtype=object)
    for idx in np.ndindex(hexes.shape):
        out[idx] = bytes.fromhex(hexes[idx])
    return out


def _load_expected(path: Path) -> np.ndarray:
    assert path.is_file(), f"fixture lacks {path.name}: {path}"
    return np.load(path, allow_pickle=False)


def _expected_for(fixture_json: Path, doc: dict[str, Any]) -> np.ndarray:
    """The expected array: expected.npy, or for variable-length data the exact
    values of fixture.json (checked against the fixed-width expected.npy)."""
    npy = _load_expected(fixture_json.parent / "expected.npy")
    ev = doc.get("expected_values")
    if ev is None:
        return npy
    exact = _vlen_array(ev["values"], ev["kind"])
    assert npy.dtype.kind == ("U" if ev["kind"] == "string" else "S"), f"expected.npy is {npy.dtype}"
    fixed = np.array(exact.tolist(), dtype=npy.dtype.kind).reshape(exact.shape)
    assert npy.shape == exact.shape and npy.tolist() == fixed.tolist(), (
        "expected.npy disagrees with fixture.json expected_values"
    )
    return exact


def _numpy_dtype(meta: dict[str, Any]) -> np.dtype:
    """The dtype a reader returns: native byte order; StringDType / object for vlen."""
    kind = _vlen_kind(meta)
    if kind is not None:
        return np.dtype(np.dtypes.StringDType()) if kind == "string" else np.dtype(object)
    if meta.get("zarr_format") == 2:
        return np.dtype(meta["dtype"]).newbyteorder("=")
    data_type = meta["data_type"]
    name = data_type["name"] if isinstance(data_type, dict) else data_type
    if name in _TIME_TYPES:
        config = data_type["configuration"]
        assert set(config) == {"unit", "scale_factor"}, f"{name} configuration {config!r}"
        scale = config["scale_factor"]
        assert isinstance(scale, int) and scale >= 1, f"{name} scale_factor {scale!r}"
        return np.dtype(f"{_TIME_TYPES[name]}[{'' if scale == 1 else scale}{config['unit']}]")
    assert name in _CORE_DTYPES, f"fixture uses a data type this test does not map: {name!r}"
    return _CORE_DTYPES[name]


def _bits(a: np.ndarray) -> np.ndarray:
    """Floats and complex as unsigned ints of the lane width, datetime64 /
    timedelta64 as int64 (NaT is -2**63 and equals itself); others unchanged."""
    a = np.array(a, order="C").reshape(-1)
    if a.dtype.kind in "mM":
        return a.astype(a.dtype.newbyteorder("=")).view(np.int64)
    if a.dtype.kind == "f":
        return a.view(_UINT_OF_SIZE[a.dtype.itemsize])
    if a.dtype.kind == "c":
        return a.view(_UINT_OF_SIZE[a.dtype.itemsize // 2])
    return a


def _assert_same_vlen(got: np.ndarray, expected: np.ndarray, what: str) -> None:
    want = str if expected.dtype.kind == "T" else bytes
    gvals, evals = got.reshape(-1).tolist(), expected.reshape(-1).tolist()
    wrong_type = [i for i, v in enumerate(gvals) if type(v) is not want]
    assert not wrong_type, (
        f"{what}: element {wrong_type[0]} is {type(gvals[wrong_type[0]]).__name__}, not {want.__name__}"
    )
    bad = [i for i, (g, e) in enumerate(zip(gvals, evals)) if g != e]
    assert not bad, f"{what}: {len(bad)} of {len(evals)} elements differ: " + "; ".join(
        f"[{i}] got {gvals[i]!r} expected {evals[i]!r}" for i in bad[:5]
    )


def assert_same_data(got: Any, expected: np.ndarray, what: str) -> None:
    got = np.asarray(got)
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != expected {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != expected {expected.shape}"
    if expected.dtype.kind in "TO":
        _assert_same_vlen(got, expected, what)
        return
    gbits, ebits = _bits(got), _bits(expected)
    if not np.array_equal(gbits, ebits):
        bad = np.flatnonzero(gbits != ebits)
        lane = max(1, expected.dtype.itemsize // (2 if expected.dtype.kind == "c" else 1))
        first = [
            f"[{i}] got {gbits[i]:#0{2 * lane + 2}x} expected {ebits[i]:#0{2 * lane + 2}x}"
            if expected.dtype.kind in "fc"
            else f"[{i}] got {gbits[i]!r} expected {ebits[i]!r}"
            for i in bad[:5]
        ]
        raise AssertionError(
            f"{what}: {bad.size} of {ebits.size} elements differ (flat index, lanes for "
            f"complex): " + "; ".join(first)
        )


def _read(arr: Any, selection: Any, meta: dict[str, Any]) -> np.ndarray:
    """``arr[selection]``; a V2 array's data in native byte order (the ``<``/``>``
    of a V2 dtype is how chunks are stored, not part of the values)."""
    got = np.asarray(arr[selection])
    if meta.get("zarr_format") == 2 and got.dtype.kind not in "TO":
        got = got.astype(got.dtype.newbyteorder("="))
    return got


def _fill_bytes(value: Any, dtype: np.dtype) -> str:
    return np.asarray(value, dtype=dtype).astype(dtype.newbyteorder("<")).tobytes().hex()


def _grid_shape(meta: dict[str, Any]) -> tuple[int, ...] | None:
    if meta.get("zarr_format") == 2:
        return tuple(meta["chunks"])
    grid = meta["chunk_grid"]
    if isinstance(grid, dict) and grid.get("name") == "regular":
        return tuple(grid["configuration"]["chunk_shape"])
    return None


def check_array(
    arr: Any, meta: dict[str, Any], expected: np.ndarray, what: str, doc: dict[str, Any] | None = None
) -> None:
    """Metadata properties against the stored documents (and, where fixture.json
    records them, the chunks/shards the producer reports), then the data."""
    dtype = _numpy_dtype(meta)
    assert tuple(arr.shape) == tuple(meta["shape"]), f"{what}: shape {arr.shape}"
    got_dtype = np.dtype(arr.dtype)
    if meta.get("zarr_format") == 2 and got_dtype.kind not in "TO":
        got_dtype = got_dtype.newbyteorder("=")
    assert got_dtype == dtype, f"{what}: dtype {arr.dtype} != {dtype}"
    grid = _grid_shape(meta)
    codecs = meta.get("codecs") or []
    sharding = codecs[0] if len(codecs) == 1 and isinstance(codecs[0], dict) and (
        codecs[0].get("name") == "sharding_indexed"
    ) else None
    if sharding is not None:
        inner = tuple(sharding["configuration"]["chunk_shape"])
        assert tuple(arr.chunks) == inner, f"{what}: chunks {arr.chunks} != inner chunks {inner}"
        assert arr.shards is not None and tuple(arr.shards) == grid, f"{what}: shards {arr.shards}"
    elif grid is not None:
        assert tuple(arr.chunks) == grid, f"{what}: chunks {arr.chunks} != {grid}"
        if meta.get("zarr_format") == 2 or doc is not None:
            assert arr.shards is None, f"{what}: shards {arr.shards} for an unsharded array"
    if doc is not None and "chunks" in doc:
        assert list(arr.chunks) == doc["chunks"], f"{what}: chunks {arr.chunks} != producer's {doc['chunks']}"
        want_shards = doc["shards"]
        got_shards = None if arr.shards is None else list(arr.shards)
        assert got_shards == want_shards, f"{what}: shards {arr.shards} != producer's {want_shards}"
    assert dict(arr.attrs) == meta.get("attributes", {}), f"{what}: attrs {dict(arr.attrs)!r}"
    assert expected.dtype == dtype and expected.shape == tuple(meta["shape"]), (
        f"{what}: expected ({expected.dtype}, {expected.shape}) disagrees with the metadata"
    )
    assert_same_data(_read(arr, ..., meta), expected, what)


# -- tests -----------------------------------------------------------------


def test_fixtures_present() -> None:
    assert FIXTURE_FILES, f"no fixture.json under {FIXTURES_ROOT}; run spec-fixtures/generate.py"
    for producer in PRODUCERS:
        assert (FIXTURES_ROOT / producer).is_dir(), f"no {producer} fixtures"
        for fdir in (FIXTURES_ROOT / producer).iterdir():
            assert (fdir / "fixture.json").is_file(), f"{fdir} has no fixture.json"
    formats = set()
    for fixture_json in FIXTURE_FILES:
        doc = _load(fixture_json)
        formats.add(_store_format(fixture_json.parent / doc["path"]))
        if doc.get("node_type", "array") == "array":
            wanted = [fixture_json.parent / "expected.npy"]
        else:
            wanted = [fixture_json.parent / rel for rel in doc["arrays"].values()]
        for path in wanted:
            assert path.is_file(), f"fixture lacks {path.relative_to(FIXTURES_ROOT)}"
    assert formats == {2, 3}, f"fixture stores cover zarr formats {sorted(formats)}, want V2 and V3"


@pytest.mark.parametrize("fixture_json", ARRAY_FIXTURES)
def test_read_array_fixture(fixture_json: Path | None) -> None:
    doc, store = _require(fixture_json)
    expected = _expected_for(fixture_json, doc)
    meta = _node_meta(store)
    arr = zarrpy.open_array(str(store), mode="r")
    check_array(arr, meta, expected, _fixture_id(fixture_json), doc)


@pytest.mark.parametrize("fixture_json", ARRAY_FIXTURES)
def test_array_fixture_fill_value(fixture_json: Path | None) -> None:
    doc, store = _require(fixture_json)
    check = doc.get("fill_value_check")
    if check is None:
        return
    meta = _node_meta(store)
    assert check["json"] == meta["fill_value"], "fixture.json disagrees with the stored metadata"
    arr = zarrpy.open_array(str(store), mode="r")
    kind = _vlen_kind(meta)
    if kind is not None:
        want = str if kind == "string" else bytes
        assert type(arr.fill_value) is want, f"fill_value {arr.fill_value!r} is not {want.__name__}"
        got = arr.fill_value if kind == "string" else arr.fill_value.hex()
        assert got == check["value"], f"fill_value {arr.fill_value!r}, producer reads {check['value']!r}"
        return
    if check["json"] is None:  # V2 "no fill value"
        assert check["raw_le_hex"] is None
        assert arr.metadata.fill_value is None, f"V2 fill_value null read as {arr.metadata.fill_value!r}"
        return
    dtype = _numpy_dtype(meta)
    if dtype.kind in "mM":
        # a numpy datetime64 / timedelta64 scalar of the array's unit, whose int64
        # count is the JSON fill (NaT: -2**63)
        want = np.datetime64 if dtype.kind == "M" else np.timedelta64
        fill = arr.fill_value
        assert isinstance(fill, want), f"fill_value {fill!r} is {type(fill).__name__}, not {want.__name__}"
        assert np.dtype(fill.dtype).newbyteorder("=") == dtype, f"fill_value {fill!r} has dtype {fill.dtype}"
        count = int(np.asarray(fill).astype(dtype).view(np.int64))
        assert count == check["json"], f"fill_value {fill!r} is {count} units, the JSON says {check['json']}"
    got = _fill_bytes(arr.fill_value, dtype)
    assert got == check["raw_le_hex"], (
        f"fill_value {arr.fill_value!r} has bytes {got}, {check['json']!r} "
        f"means {check['raw_le_hex']}"
    )


@pytest.mark.parametrize("fixture_json", ARRAY_FIXTURES)
def test_array_fixture_region(fixture_json: Path | None) -> None:
    """A box that starts and ends inside chunks, crossing chunk (and edge) boundaries."""
    doc, store = _require(fixture_json)
    expected = _expected_for(fixture_json, doc)
    region = tuple(slice(n // 3, n - n // 4) for n in expected.shape)
    arr = zarrpy.open_array(str(store), mode="r")
    got = _read(arr, region, _node_meta(store))
    assert_same_data(got, expected[region], f"{_fixture_id(fixture_json)}{region}")


@pytest.mark.parametrize("fixture_json", SHARDED_FIXTURES)
def test_sharded_fixture_inner_chunks(fixture_json: Path | None) -> None:
    """Every inner chunk read on its own (a partial shard read: written, empty
    and fill-only inner chunks, and inner chunks that cross the array edge)."""
    doc, store = _require(fixture_json)
    expected = _expected_for(fixture_json, doc)
    arr = zarrpy.open_array(str(store), mode="r")
    inner = tuple(doc["chunks"])
    assert tuple(arr.chunks) == inner and list(arr.shards) == doc["shards"]
    grid = [-(-s // c) for s, c in zip(expected.shape, inner)]
    for coords in np.ndindex(*grid):
        box = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(coords, inner, expected.shape))
        assert_same_data(arr[box], expected[box], f"{_fixture_id(fixture_json)} inner chunk {coords}")
    # one element in the middle of the last inner chunk and a box across shards
    last = tuple(min(s - 1, (g - 1) * c + c // 2) for s, g, c in zip(expected.shape, grid, inner))
    point = tuple(slice(i, i + 1) for i in last)
    assert_same_data(arr[point], expected[point], f"{_fixture_id(fixture_json)}[{last}]")
    across = tuple(slice(max(0, sh - 1), min(s, sh + 1)) for sh, s in zip(doc["shards"], expected.shape))
    assert_same_data(arr[across], expected[across], f"{_fixture_id(fixture_json)}{across}")


@pytest.mark.parametrize("fixture_json", ARRAY_FIXTURES)
def test_array_fixture_dimension_names(fixture_json: Path | None) -> None:
    _, store = _require(fixture_json)
    meta = _node_meta(store)
    arr = zarrpy.open_array(str(store), mode="r")
    names = meta.get("dimension_names")  # V2 has none
    want = None if names is None else tuple(names)
    got = arr.metadata.dimension_names if meta["zarr_format"] == 3 else arr.dimension_names
    assert (None if got is None else tuple(got)) == want


@pytest.mark.parametrize("fixture_json", ARRAY_FIXTURES)
def test_open_detects_array(fixture_json: Path | None) -> None:
    doc, store = _require(fixture_json)
    expected = _expected_for(fixture_json, doc)
    node = zarrpy.open(str(store), mode="r")
    assert isinstance(node, zarrpy.Array), f"zarrpy.open returned {type(node).__name__}"
    assert_same_data(_read(node, ..., _node_meta(store)), expected, _fixture_id(fixture_json))


def _check_tree(root: Any, store: Path, doc: dict[str, Any], what: str) -> None:
    """Walk ``root`` (an open zarrpy Group) and compare it with fixture.json's
    groups and arrays and with the stored node documents."""
    arrays: dict[str, str] = doc["arrays"]
    groups: list[str] = doc["groups"]
    for gpath in groups:
        group = root
        for part in filter(None, gpath.split("/")):
            group = group[part]
        assert isinstance(group, zarrpy.Group), f"{gpath!r} is {type(group).__name__}"
        gmeta = _node_meta(store, gpath)
        assert dict(group.attrs) == gmeta.get("attributes", {}), f"group {gpath!r} attrs"

        prefix = f"{gpath}/" if gpath else ""
        direct = {
            p[len(prefix):]: kind
            for kind, paths in (("array", arrays), ("group", groups))
            for p in paths
            if p.startswith(prefix) and p != gpath and "/" not in p[len(prefix):]
        }
        members = dict(group.members())
        assert set(members) == set(direct), f"group {gpath!r} members {sorted(members)}"
        for name, kind in direct.items():
            cls = zarrpy.Array if kind == "array" else zarrpy.Group
            assert isinstance(members[name], cls), f"{prefix}{name} is {type(members[name])}"

    for apath, rel in arrays.items():
        exp = _load_expected(Path(doc["_dir"]) / rel)
        node = root
        for part in apath.split("/"):
            node = node[part]
        assert isinstance(node, zarrpy.Array), f"{apath} is {type(node).__name__}"
        check_array(node, _node_meta(store, apath), exp, f"{what}:{apath}")


@pytest.mark.parametrize("fixture_json", GROUP_FIXTURES)
def test_read_group_fixture(fixture_json: Path | None) -> None:
    doc, store = _require(fixture_json)
    doc["_dir"] = str(fixture_json.parent)
    root = zarrpy.open_group(str(store), mode="r")
    assert isinstance(zarrpy.open(str(store), mode="r"), zarrpy.Group)
    _check_tree(root, store, doc, _fixture_id(fixture_json))
    for apath, rel in doc["arrays"].items():
        exp = _load_expected(fixture_json.parent / rel)
        standalone = zarrpy.open_array(str(store), mode="r", path=apath)
        assert_same_data(_read(standalone, ..., _node_meta(store, apath)), exp, f"open_array(path={apath!r})")


@pytest.mark.parametrize("fixture_json", CONSOLIDATED_FIXTURES)
def test_read_consolidated_group_fixture(fixture_json: Path | None, tmp_path: Path) -> None:
    """open_consolidated on the store, then on a copy that keeps only the root's
    documents and the chunks: every node must come from .zmetadata alone."""
    doc, store = _require(fixture_json)
    doc["_dir"] = str(fixture_json.parent)
    root = zarrpy.open_consolidated(str(store), mode="r")
    _check_tree(root, store, doc, _fixture_id(fixture_json))

    copy = tmp_path / "data.zarr"
    shutil.copytree(store, copy)
    removed = [
        p for p in copy.rglob(".z*")
        if p.parent != copy and p.name in (".zarray", ".zgroup", ".zattrs")
    ]  # fmt: skip
    assert removed, "the consolidated fixture has no nested node documents"
    for p in removed:
        p.unlink()
    stripped = zarrpy.open_consolidated(str(copy), mode="r")
    # the stored documents (read from the untouched fixture) are the reference
    _check_tree(stripped, store, doc, f"{_fixture_id(fixture_json)} (only .zmetadata)")
