"""The tools on rectilinear chunk grids: ``zarrpy cp --chunks/--shards`` with
edge lists, ``verify`` and ``tree``, ``zarrpy.dask`` (blocks on the real
boundaries, the alignment check and rechunking) and the xarray backend
(its chunk encoding, as xarray's own zarr backend gives it, and writes)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrpy
from zarrpy.errors import ChunkAlignmentError
from zarrpy.stores import LocalStore
from zarrpy.tools._nodes import parse_chunks
from zarrpy.tools.cli import main
from zarrpy.tools.cp import plan_unit_runs


def _source(tmp_path, name="src.zarr", **kwargs):
    kwargs = {"shape": (100, 40), "dtype": "float32", "chunks": (16, 16), **kwargs}
    a = zarrpy.create_array(str(tmp_path / name), **kwargs)
    data = np.arange(np.prod(kwargs["shape"]), dtype="float32").reshape(kwargs["shape"])
    a[...] = data
    return a, data


def test_parse_chunks_takes_edge_lists():
    assert parse_chunks("100,100", "--chunks") == (100, 100)
    assert parse_chunks("30*3+10,-1", "--chunks") == ((30, 30, 30, 10), -1)
    assert parse_chunks("5+5", "--shards") == ((5, 5),)
    for bad in ("30*0+10", "3+x", "0,4", "30**2"):
        with pytest.raises(ValueError, match="--chunks"):
            parse_chunks(bad, "--chunks")


def test_cp_writes_rectilinear_chunks_and_shards(tmp_path, capsys):
    _, data = _source(tmp_path)
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "r.zarr"), "--chunks", "30*3+10,40"]) == 0
    r = zarrpy.open_array(str(tmp_path / "r.zarr"))
    assert r.write_chunk_sizes == ((30, 30, 30, 10), (40,)) and np.array_equal(r[...], data)
    assert "chunks rectilinear [[[30, 3], 10], 40]" in capsys.readouterr().out
    # a rectilinear source copies with its grid; rectilinear shards stream when one does not fit
    assert main(["cp", str(tmp_path / "r.zarr"), str(tmp_path / "s.zarr"), "--chunks", "10,8",
                 "--shards", "20*2+60,40", "--max-memory", "20KB"]) == 0
    assert "streamed" in capsys.readouterr().out
    s = zarrpy.open_array(str(tmp_path / "s.zarr"))
    assert s.chunks == (10, 8) and s.write_chunk_sizes == ((20, 20, 60), (40,)) and np.array_equal(s[...], data)
    assert main(["cp", str(tmp_path / "s.zarr"), str(tmp_path / "t.zarr"), "--max-memory", "6KB"]) == 0
    t = zarrpy.open_array(str(tmp_path / "t.zarr"))
    assert t.chunk_grid == s.chunk_grid and np.array_equal(t[...], data)
    assert main(["cp", str(tmp_path / "r.zarr"), str(tmp_path / "u.zarr"), "--max-memory", "40KB"]) == 0
    u = zarrpy.open_array(str(tmp_path / "u.zarr"))
    assert u.chunk_grid == r.chunk_grid and np.array_equal(u[...], data)


def test_cp_refuses_edges_that_do_not_fit(tmp_path):
    _source(tmp_path)
    with pytest.raises(Exception, match="sum to 90, not to its length 100"):
        main(["cp", "--traceback", str(tmp_path / "src.zarr"), str(tmp_path / "x.zarr"), "--chunks", "30*3,40"])


def test_unit_runs_stay_whole_units_within_memory():
    starts = [[0, 30, 60, 90, 100], [0, 40]]
    cuts, region = plan_unit_runs(starts, (30, 40), (16, 16), 4, 40_000, workers=1)
    assert all(set(cut) <= set(s) for cut, s in zip(cuts, starts))  # every cut is a unit boundary
    assert region[0] in (30, 60, 90, 100) and region[1] == 40


def test_verify_and_tree_on_rectilinear_shards(tmp_path, capsys):
    a, _ = _source(tmp_path, chunks=(10, 8), shards=[[20, 20, 60], 40])
    assert main(["verify", str(tmp_path / "src.zarr")]) == 0
    assert "50 chunk(s) in 3 stored object(s)" in capsys.readouterr().out
    assert main(["tree", str(tmp_path / "src.zarr"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    entry = doc if "chunks" in doc else next(iter(doc.values()))
    assert entry["chunks"] == [10, 8] and entry["shards"] == [[20, 20, 60], 40]


def test_dask_blocks_follow_the_real_boundaries(tmp_path):
    da = pytest.importorskip("dask.array")
    import zarrpy.dask

    store = LocalStore(tmp_path / "src.zarr")
    store.locks_updates = False  # parts of one chunk from two processes would not be safe: alignment is checked
    a = zarrpy.create_array(store, shape=(100, 40), dtype="float32", chunks=[[30, 30, 30, 10], 40])
    data = np.arange(4000, dtype="float32").reshape(100, 40)
    a[...] = data
    x = zarrpy.dask.from_zarr(a)
    assert x.chunks == ((30, 30, 30, 10), (40,))
    assert np.array_equal(x.compute(scheduler="threads"), data)
    with pytest.raises(ChunkAlignmentError, match="rectilinear"):
        zarrpy.dask.to_zarr(da.zeros((100, 40), dtype="float32", chunks=(50, 40)), a)
    zarrpy.dask.to_zarr(da.ones((100, 40), dtype="float32", chunks=(50, 40)), a, rechunk=True)
    assert (a[...] == 1).all()
    new = tmp_path / "new.zarr"
    y = da.arange(10, chunks=((3, 3, 4),))
    zarrpy.dask.to_zarr(y, str(new), chunks=y.chunks)  # the dask boundaries as a rectilinear grid
    assert zarrpy.open_array(str(new)).write_chunk_sizes == ((3, 3, 4),)


def test_xarray_reads_and_writes_rectilinear_encodings(tmp_path):
    xr = pytest.importorskip("xarray")
    from zarrpy.tools.xarray_writer import to_zarrpy

    g = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="w")
    t = g.create_array("t", shape=(10, 6), dtype="float32", chunks=[[3, 3, 4], 2], dimension_names=["x", "y"])
    t[...] = np.arange(60).reshape(10, 6)
    ds = xr.open_dataset(str(tmp_path / "g.zarr"), engine="zarrpy", chunks={})
    assert ds.t.encoding["chunks"] == ((3, 3, 4), 2)  # as xarray's zarr backend gives it
    assert ds.t.encoding["preferred_chunks"] == {"x": (3, 3, 4), "y": 2}
    assert ds.t.chunks == ((3, 3, 4), (2, 2, 2))
    to_zarrpy(ds, str(tmp_path / "out.zarr"), mode="w")
    out = zarrpy.open_group(str(tmp_path / "out.zarr"))["t"]
    assert out.chunk_grid == t.chunk_grid and np.array_equal(out[...], t[...])
    with pytest.raises(ChunkAlignmentError, match=r"\(3, 3, 4\)"):
        to_zarrpy(ds.chunk({"x": 5}), str(tmp_path / "out.zarr"), mode="r+", region="auto")
