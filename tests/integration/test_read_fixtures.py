"""Read every golden store in ``spec-fixtures/`` with zarrpy.

The stores were written by zarr-python, tensorstore and by hand from the spec
(``spec-fixtures/generate.py``; layout in ``spec-fixtures/README.md``). Each
fixture's ``expected.npy`` is what its producer reads back; zarrpy must return
the same bits (NaN payloads and signed zeros included), the same dtype, and the
shape, chunks, attributes and fill value that ``zarr.json`` records.

These tests only read: a missing fixture or expected file is a failure, never a
reason to skip or to write one.
"""

from __future__ import annotations

import json
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
    found = [f for f in FIXTURE_FILES if _load(f).get("node_type", "array") == node_type]
    # An empty parameter list would make pytest skip; a sentinel makes it fail.
    return [pytest.param(f, id=_fixture_id(f)) for f in found] or [
        pytest.param(None, id=f"no-{node_type}-fixtures")
    ]


ARRAY_FIXTURES = _params("array")
GROUP_FIXTURES = _params("group")

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_CORE_DTYPES = {
    name: np.dtype(name)
    for name in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
}  # fmt: skip


# -- helpers ---------------------------------------------------------------


def _require(fixture_json: Path | None) -> tuple[dict[str, Any], Path]:
    assert fixture_json is not None, f"no fixtures of this kind under {FIXTURES_ROOT}"
    doc = _load(fixture_json)
    assert doc.get("path") == "data.zarr", f"{fixture_json}: unexpected path {doc.get('path')!r}"
    store = fixture_json.parent / doc["path"]
    assert (store / "zarr.json").is_file(), f"{store} has no zarr.json"
    return doc, store


def _load_expected(path: Path) -> np.ndarray:
    assert path.is_file(), f"fixture lacks {path.name}: {path}"
    return np.load(path, allow_pickle=False)


def _numpy_dtype(data_type: Any) -> np.dtype:
    name = data_type["name"] if isinstance(data_type, dict) else data_type
    assert name in _CORE_DTYPES, f"fixture uses a data type this test does not map: {name!r}"
    return _CORE_DTYPES[name]


def _bits(a: np.ndarray) -> np.ndarray:
    """Floats and complex as unsigned ints of the lane width; others unchanged."""
    a = np.array(a, order="C").reshape(-1)
    if a.dtype.kind == "f":
        return a.view(_UINT_OF_SIZE[a.dtype.itemsize])
    if a.dtype.kind == "c":
        return a.view(_UINT_OF_SIZE[a.dtype.itemsize // 2])
    return a


def assert_same_data(got: Any, expected: np.ndarray, what: str) -> None:
    got = np.asarray(got)
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != expected {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != expected {expected.shape}"
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


def _fill_bytes(value: Any, dtype: np.dtype) -> str:
    return np.asarray(value, dtype=dtype).astype(dtype.newbyteorder("<")).tobytes().hex()


def check_array(arr: Any, meta: dict[str, Any], expected: np.ndarray, what: str) -> None:
    """Metadata properties against zarr.json, then the data against expected."""
    dtype = _numpy_dtype(meta["data_type"])
    assert tuple(arr.shape) == tuple(meta["shape"]), f"{what}: shape {arr.shape}"
    assert np.dtype(arr.dtype) == dtype, f"{what}: dtype {arr.dtype} != {dtype}"
    grid = meta["chunk_grid"]
    if isinstance(grid, dict) and grid.get("name") == "regular":
        chunk_shape = tuple(grid["configuration"]["chunk_shape"])
        assert tuple(arr.chunks) == chunk_shape, f"{what}: chunks {arr.chunks} != {chunk_shape}"
    assert dict(arr.attrs) == meta.get("attributes", {}), f"{what}: attrs {dict(arr.attrs)!r}"
    assert expected.dtype == dtype and expected.shape == tuple(meta["shape"]), (
        f"{what}: expected.npy ({expected.dtype}, {expected.shape}) disagrees with zarr.json"
    )
    assert_same_data(arr[...], expected, what)


# -- tests -----------------------------------------------------------------


def test_fixtures_present() -> None:
    assert FIXTURE_FILES, f"no fixture.json under {FIXTURES_ROOT}; run spec-fixtures/generate.py"
    for producer in ("zarr-python", "tensorstore", "spec"):
        assert (FIXTURES_ROOT / producer).is_dir(), f"no {producer} fixtures"
        for fdir in (FIXTURES_ROOT / producer).iterdir():
            assert (fdir / "fixture.json").is_file(), f"{fdir} has no fixture.json"
    for fixture_json in FIXTURE_FILES:
        doc = _load(fixture_json)
        if doc.get("node_type", "array") == "array":
            wanted = [fixture_json.parent / "expected.npy"]
        else:
            wanted = [fixture_json.parent / rel for rel in doc["arrays"].values()]
        for path in wanted:
            assert path.is_file(), f"fixture lacks {path.relative_to(FIXTURES_ROOT)}"


@pytest.mark.parametrize("fixture_json", ARRAY_FIXTURES)
def test_read_array_fixture(fixture_json: Path | None) -> None:
    doc, store = _require(fixture_json)
    expected = _load_expected(fixture_json.parent / "expected.npy")
    meta = _load(store / "zarr.json")
    arr = zarrpy.open_array(str(store), mode="r")
    check_array(arr, meta, expected, _fixture_id(fixture_json))


@pytest.mark.parametrize("fixture_json", ARRAY_FIXTURES)
def test_array_fixture_fill_value(fixture_json: Path | None) -> None:
    doc, store = _require(fixture_json)
    check = doc.get("fill_value_check")
    if check is None:
        return
    meta = _load(store / "zarr.json")
    assert check["json"] == meta["fill_value"], "fixture.json disagrees with zarr.json"
    arr = zarrpy.open_array(str(store), mode="r")
    dtype = _numpy_dtype(meta["data_type"])
    got = _fill_bytes(arr.fill_value, dtype)
    assert got == check["raw_le_hex"], (
        f"fill_value {arr.fill_value!r} has bytes {got}, zarr.json {check['json']!r} "
        f"means {check['raw_le_hex']}"
    )


@pytest.mark.parametrize("fixture_json", ARRAY_FIXTURES)
def test_array_fixture_region(fixture_json: Path | None) -> None:
    """A box that starts and ends inside chunks, crossing chunk (and edge) boundaries."""
    _, store = _require(fixture_json)
    expected = _load_expected(fixture_json.parent / "expected.npy")
    region = tuple(slice(n // 3, n - n // 4) for n in expected.shape)
    arr = zarrpy.open_array(str(store), mode="r")
    assert_same_data(arr[region], expected[region], f"{_fixture_id(fixture_json)}{region}")


@pytest.mark.parametrize("fixture_json", ARRAY_FIXTURES)
def test_array_fixture_dimension_names(fixture_json: Path | None) -> None:
    _, store = _require(fixture_json)
    meta = _load(store / "zarr.json")
    arr = zarrpy.open_array(str(store), mode="r")
    names = meta.get("dimension_names")
    want = None if names is None else tuple(names)
    got = arr.metadata.dimension_names
    assert (None if got is None else tuple(got)) == want


@pytest.mark.parametrize("fixture_json", ARRAY_FIXTURES)
def test_open_detects_array(fixture_json: Path | None) -> None:
    _, store = _require(fixture_json)
    expected = _load_expected(fixture_json.parent / "expected.npy")
    node = zarrpy.open(str(store), mode="r")
    assert isinstance(node, zarrpy.Array), f"zarrpy.open returned {type(node).__name__}"
    assert_same_data(node[...], expected, _fixture_id(fixture_json))


@pytest.mark.parametrize("fixture_json", GROUP_FIXTURES)
def test_read_group_fixture(fixture_json: Path | None) -> None:
    doc, store = _require(fixture_json)
    arrays: dict[str, str] = doc["arrays"]
    groups: list[str] = doc["groups"]
    expected = {p: _load_expected(fixture_json.parent / rel) for p, rel in arrays.items()}
    root = zarrpy.open_group(str(store), mode="r")
    assert isinstance(zarrpy.open(str(store), mode="r"), zarrpy.Group)

    for gpath in groups:
        group = root
        for part in filter(None, gpath.split("/")):
            group = group[part]
        assert isinstance(group, zarrpy.Group), f"{gpath!r} is {type(group).__name__}"
        gmeta = _load(store.joinpath(*filter(None, gpath.split("/")), "zarr.json"))
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

    for apath, exp in expected.items():
        node = root
        for part in apath.split("/"):
            node = node[part]
        assert isinstance(node, zarrpy.Array), f"{apath} is {type(node).__name__}"
        meta = _load(store.joinpath(*apath.split("/"), "zarr.json"))
        check_array(node, meta, exp, f"{_fixture_id(fixture_json)}:{apath}")
        standalone = zarrpy.open_array(str(store), mode="r", path=apath)
        assert_same_data(standalone[...], exp, f"open_array(path={apath!r})")
