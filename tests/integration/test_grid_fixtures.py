"""``rectilinear`` and ``zarrs.regular_bounded`` chunk grids against their producers.

``spec-fixtures/grids/`` holds stores zarr-python 3.4.2 (with
``array.rectilinear_chunks``) and zarrs (through zarrista) wrote
(``spec-fixtures/generate_grids.py``). zarrpy must read each bit for bit,
report the chunk sizes the producer reports, read every read unit alone,
and, where the producer wrote plain bytes (``bytes_identical``), write the
very chunk files it wrote. The other way round, zarr-python (with its flag)
and zarrs read what zarrpy writes, equal: plain and sharded rectilinear
grids, run-length edges, resized arrays and ``zarrs.regular_bounded``
(which zarr-python 3.4.2 does not know: it refuses it).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import zarrpy

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2] / "spec-fixtures" / "grids"
FIXTURES = sorted(p.parent for p in ROOT.glob("*/*/fixture.json"))
EXPECTED = {
    "zarr-python/rectilinear_1d_varied", "zarr-python/rectilinear_2d", "zarr-python/rectilinear_mixed_partial",
    "zarr-python/rectilinear_sharded", "zarr-python/rectilinear_shrunk", "zarrs/rectilinear_2d",
    "zarrs/rectilinear_runs_1d", "zarrs/rectilinear_sharded_partial", "zarrs/regular_bounded_2d",
    "zarrs/regular_bounded_sharded",
}


def _id(fdir: Path) -> str:
    return f"{fdir.parent.name}/{fdir.name}"


def _doc(fdir: Path) -> dict:
    return json.loads((fdir / "fixture.json").read_text())


def _bounds(sizes) -> list[list[int]]:
    return [[0, *np.cumsum(s).tolist()] for s in sizes]


def test_every_fixture_is_there():
    assert {_id(p) for p in FIXTURES} == EXPECTED


@pytest.mark.parametrize("fdir", FIXTURES, ids=_id)
def test_zarrpy_reads_each_fixture_bit_for_bit(fdir: Path):
    doc = _doc(fdir)
    expected = np.load(fdir / "expected.npy", allow_pickle=False)
    a = zarrpy.open_array(str(fdir / "data.zarr"))
    got = a[...]
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()
    assert a.chunk_grid == doc["chunk_grid"]
    assert [list(s) for s in a.read_chunk_sizes] == doc["read_chunk_sizes"]
    assert [list(s) for s in a.write_chunk_sizes] == doc["write_chunk_sizes"]
    # every read unit alone, through the block API and by its region
    bounds = _bounds(a.read_chunk_sizes)
    units = list(np.ndindex(*a.cdata_shape))
    for coords, chunk in zip(units, a.read_chunks(units)):
        region = tuple(slice(b[c], b[c + 1]) for c, b in zip(coords, bounds))
        assert chunk.tobytes() == expected[region].tobytes()
        assert a[region].tobytes() == expected[region].tobytes()
    # regions across chunk boundaries, and points
    rng = np.random.default_rng(3)
    for _ in range(5):
        sel = tuple(slice(*sorted(rng.integers(0, n + 1, 2))) for n in expected.shape)
        assert a[sel].tobytes() == expected[sel].tobytes()
        pts = tuple(rng.integers(0, n, 7) for n in expected.shape)
        assert a.vindex[pts].tobytes() == expected[pts].tobytes()


@pytest.mark.parametrize("fdir", [p for p in FIXTURES if _doc(p).get("bytes_identical")], ids=_id)
def test_zarrpy_writes_the_chunk_files_the_producer_wrote(fdir: Path, tmp_path: Path):
    target = tmp_path / "data.zarr"
    target.mkdir()
    shutil.copy(fdir / "data.zarr" / "zarr.json", target / "zarr.json")
    a = zarrpy.open_array(str(target), mode="r+")
    a[...] = np.load(fdir / "expected.npy", allow_pickle=False)

    def stored(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
                if p.is_file() and p.name != "zarr.json"}

    assert stored(target) == stored(fdir / "data.zarr")


def test_zarrpy_writes_zarr_pythons_metadata(tmp_path: Path):
    """Same arguments, the same zarr.json: run-length encoded where zarr-python encodes."""
    fdir = ROOT / "zarr-python" / "rectilinear_2d"
    zarrpy.create_array(str(tmp_path / "x.zarr"), shape=(10, 6), dtype="int32", chunks=[[3, 3, 4], [2, 2, 2]],
                        fill_value=-1)
    mine = json.loads((tmp_path / "x.zarr" / "zarr.json").read_text())
    theirs = json.loads((fdir / "data.zarr" / "zarr.json").read_text())
    assert mine == theirs


# -- peers read what zarrpy writes -------------------------------------------------

LAYOUTS = {
    "rectilinear": dict(shape=(10, 7), chunks=[[3, 3, 4], [2, 5]]),
    "mixed_runs": dict(shape=(30, 7), chunks=[[[5, 3], 15], 3]),
    "sharded": dict(shape=(12, 9), chunks=(2, 3), shards=[[4, 6, 2], 9]),
    "bounded": dict(shape=(10, 7), chunks={"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": [4, 3]}}),
    "bounded_sharded": dict(shape=(12, 9), chunks=(4, 3),
                            shards={"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": [8, 6]}}),
}


def _written(tmp_path: Path, layout: str, resize: tuple[int, ...] | None = None) -> tuple[Path, np.ndarray]:
    spec = dict(LAYOUTS[layout])
    shape = spec.pop("shape")
    path = tmp_path / f"{layout}.zarr"
    a = zarrpy.create_array(str(path), shape=shape, dtype="int32", fill_value=-3, compressors=None, **spec)
    data = (np.arange(int(np.prod(shape))) * 7 % 1001).astype("int32").reshape(shape)
    data[1, :] = -3  # a row of fill
    a[...] = data
    if resize is not None:
        a.resize(resize)
        grown = np.full(resize, -3, dtype="int32")
        keep = tuple(slice(0, min(s, n)) for s, n in zip(shape, resize))
        grown[keep] = data[keep]
        data = grown
        a[tuple(slice(0, n) for n in resize)] = data  # the grown part written too
    return path, data


def _zarr_python():
    zarr = pytest.importorskip("zarr")
    if zarr.config.get("array.rectilinear_chunks", None) is None:
        pytest.skip(f"zarr-python {zarr.__version__} has no rectilinear chunk grids (3.2+)")
    return zarr


@pytest.mark.parametrize("layout, resize", [
    ("rectilinear", None), ("mixed_runs", None), ("sharded", None), ("rectilinear", (13, 9)),
    ("rectilinear", (6, 4)), ("sharded", (16, 9)),
], ids=lambda v: str(v))
def test_zarr_python_reads_what_zarrpy_writes(tmp_path: Path, layout: str, resize):
    zarr = _zarr_python()
    path, data = _written(tmp_path, layout, resize)
    with zarr.config.set({"array.rectilinear_chunks": True}):
        z = zarr.open_array(str(path), mode="r")
        got = np.asarray(z[...])
        assert z.write_chunk_sizes == zarrpy.open_array(str(path)).write_chunk_sizes
    assert got.dtype == data.dtype and got.tobytes() == data.tobytes()


def test_zarr_python_refuses_regular_bounded(tmp_path: Path):
    """zarr-python 3.4.2 does not know zarrs' grid: what the fixtures record."""
    zarr = _zarr_python()
    path, _ = _written(tmp_path, "bounded")
    with pytest.raises(ValueError, match="regular_bounded"):
        zarr.open_array(str(path), mode="r")


@pytest.mark.parametrize("layout, resize", [
    ("rectilinear", None), ("mixed_runs", None), ("sharded", None), ("bounded", None), ("bounded_sharded", None),
    ("rectilinear", (6, 4)), ("bounded", (13, 8)), ("bounded", (7, 5)),
], ids=lambda v: str(v))
def test_zarrs_reads_what_zarrpy_writes(tmp_path: Path, layout: str, resize):
    zt = pytest.importorskip("zarrista")
    from zarrista.store import FilesystemStore

    path, data = _written(tmp_path, layout, resize)
    got = zt.Array.open(FilesystemStore(str(path)), "/")[...].to_numpy()
    assert got.dtype == data.dtype and got.tobytes() == data.tobytes()


def test_zarrs_reads_a_rectilinear_array_grown_past_its_edges(tmp_path: Path):
    """zarrs refuses a shape its edges do not cover and grows none itself; zarrpy's
    resize (as zarr-python's) appends an edge, so zarrs reads the grown array."""
    zt = pytest.importorskip("zarrista")
    from zarrista.store import FilesystemStore

    path, data = _written(tmp_path, "rectilinear", (13, 9))
    meta = json.loads((path / "zarr.json").read_text())
    assert meta["chunk_grid"]["configuration"]["chunk_shapes"] == [[[3, 2], 4, 3], [2, 5, 2]]
    got = zt.Array.open(FilesystemStore(str(path)), "/")[...].to_numpy()
    assert got.tobytes() == data.tobytes()
