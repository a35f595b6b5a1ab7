"""bench/run.py on tiny sizes: every workload runs its checks, the table and
the bounds come out, and a wrong result aborts the run. No time is asserted."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
run = importlib.import_module("run")
bench_indexing = importlib.import_module("bench_indexing")

TINY = run.Config(
    rows=128, cols=64, chunk=32, region=((3, 67), (5, 45)), shard=64, inner=16, n_random=6,
    n_strings=2_000, string_chunk=500, n_oindex=10, n_small=4, small_len=100,
    indexing=bench_indexing.Sizes(table_rows=400, table_cols=8, table_chunk=100, n_rows=10, image=64,
                                  image_chunk=16, n_points=50, n_arrays=3, array_rows=60, array_chunk=25,
                                  block_rows=32),
    repeats=1, bound_repeats=1, sync=False, memcpy_nbytes=2**20)


ZARRPY_ONLY = {"strings-optional-read"}  # zarrs' optional string type: only zarrpy reads it


def engines(*names):
    """zarrpy, zarr-python and tensorstore where importable (zarrs is slow to start and optional)."""
    return run.make_engines(names)


def test_every_workload_runs_its_checks_and_reports(tmp_path):
    result = run.run_benchmark(TINY, engines=engines("zarr-python", "tensorstore"), tmpdir=str(tmp_path),
                               log=lambda _: None)
    by_key = {r["key"]: r for r in result["workloads"]}
    assert list(by_key) == list(run.GROUPS)
    for key, r in by_key.items():
        if key in ZARRPY_ONLY:  # no peer has the type: zarrpy's checks, no bound, the peers n/a with the reason
            assert r["checks"] >= 2 and set(r["median_s"]) == {"zarrpy"}, key
            assert "optional" in r["na"]["zarr-python"] and r["bound"] is None, key
            continue
        # warm-up checks for zarrpy and zarr-python at least, and every timed read checked
        assert r["checks"] >= 2 if r["write"] else r["checks"] >= 4, (key, r["checks"])
        assert set(r["median_s"]) >= {"zarrpy", "zarr-python"}, key
        assert r["bound"] is not None and r["bound"]["bound_s"] > 0, key
        assert r["pct_of_bound"] is not None and r["pct_of_bound"] > 0, key
        ts = r["median_s"].get("tensorstore")
        assert ts is not None or "tensorstore" in r["na"], key
    for key in ("strings-write", "strings-read"):
        if "tensorstore" in result["engines"]:
            assert "string" in by_key[key]["na"]["tensorstore"]
    md = run.report_markdown(result)
    table = run.format_table(result)
    assert table.count("\n") == len(run.GROUPS) + 1  # header, separator, one row per workload
    assert "% of bound" in table and "vs zarr-python" in table
    assert "Bound components" in md and "per chunk" in md and "minimal Python loop" in md


def test_a_wrong_result_aborts_the_run(tmp_path):
    class WrongCore:
        """zarrpy's core reads, one value off."""

        def __init__(self, impl):
            self.impl = impl

        def read(self, path):
            out = self.impl.read(path)
            out.flat[7] += 1
            return out

    class WrongPeer:
        def read(self, path):
            return np.zeros((TINY.rows, TINY.cols), np.uint16)

    zp = run.make_engines(["zarr-python"])
    zp[0].parts["core"] = WrongCore(zp[0].parts["core"])
    with pytest.raises(AssertionError, match="values differ"):
        run.run_benchmark(TINY, workloads=["read"], engines=zp, tmpdir=str(tmp_path), log=lambda _: None)

    # a peer's wrong answer aborts too (it is not turned into "n/a")
    peers = run.make_engines(["zarr-python"])
    peers.append(run.Engine("liar", core=WrongPeer()))
    with pytest.raises(AssertionError, match="values differ"):
        run.run_benchmark(TINY, workloads=["read"], engines=peers, tmpdir=str(tmp_path), log=lambda _: None)


def test_an_engine_that_cannot_run_a_workload_is_na(tmp_path):
    engines_ = run.make_engines(["zarr-python"]) + [run.Engine("absent", missing="not installed (test)"),
                                                    run.Engine("partial")]
    result = run.run_benchmark(TINY, workloads=["region"], engines=engines_, tmpdir=str(tmp_path),
                               log=lambda _: None)
    (r,) = result["workloads"]
    assert r["na"] == {"absent": "not installed (test)", "partial": "partial has no core implementation"}
    assert run.format_table(result).count("n/a") >= 2


def test_workload_selection_and_docs_markers(tmp_path):
    assert run.expand_only(["strings", "2"]) == ["read", "strings-write", "strings-read", "strings-optional-read"]
    assert run.expand_only(None) == list(run.GROUPS)
    with pytest.raises(SystemExit):
        run.expand_only(["nope"])
    doc = tmp_path / "p.md"
    doc.write_text(f"intro\n{run.BEGIN}\nold\n{run.END}\nafter\n")
    run.write_doc("NEW TABLE", doc)
    assert doc.read_text() == f"intro\n{run.BEGIN}\nNEW TABLE\n{run.END}\nafter\n"
    text = (BENCH.parent / "docs" / "performance.md").read_text()
    assert run.BEGIN in text and run.END in text
