"""bench/remote.py on tiny arrays at 2 ms of latency, one round, over the
HTTP server and moto's S3 server: every workload runs for zarrpy and the
peers, every read is checked, the server's log gives plausible counts, and
a wrong result aborts the run. No time is asserted."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
remote = importlib.import_module("remote")

TINY = remote.Config(size=128, chunk=32, shard=64, region=((3, 100), (5, 90)), n_inner=6, n_small=4, small=16,
                     latency=0.002, rounds=1)
READS = [k for k in remote.WORKLOADS if k not in remote.WRITES]


def _chunks_touched(cfg) -> int:
    (r0, r1), (c0, c1) = cfg.region
    return len(range(r0 // cfg.chunk, -(-r1 // cfg.chunk))) * len(range(c0 // cfg.chunk, -(-c1 // cfg.chunk)))


def test_every_workload_on_http_and_s3_is_checked_and_counted(tmp_path):
    pytest.importorskip("tensorstore")
    pytest.importorskip("moto")
    pytest.importorskip("s3fs")
    engines = remote.make_engines(["tensorstore", "zarr-python"])
    assert [e.name for e in engines] == ["zarrpy", "tensorstore", "zarr-python"]
    assert not any(isinstance(e, remote.Missing) for e in engines)
    result = remote.run_benchmark(TINY, backends=("http", "s3"), engines=engines, tmpdir=str(tmp_path),
                                  log=lambda _: None)
    tables = {t["backend"]: t for t in result["tables"]}
    assert list(tables) == ["http", "s3"]
    assert [r["key"] for r in tables["http"]["workloads"]] == READS
    assert [r["key"] for r in tables["s3"]["workloads"]] == list(remote.WORKLOADS)
    for backend, t in tables.items():
        rows = {r["key"]: r for r in t["workloads"]}
        for key, r in rows.items():
            ran = set(r["median_s"])
            assert ran | set(r["na"]) == {"zarrpy", "tensorstore", "zarr-python"}, (backend, key)
            assert {"tensorstore", "zarr-python"} <= ran, (backend, key, r["na"])
            if "zarrpy" not in ran:  # only what the checkout's zarrpy lacks
                assert key == "small-open-batch" and "open_arrays" in r["na"]["zarrpy"]
            if key not in remote.WRITES:  # warm-up and every round checked, for each engine that ran
                assert r["checks"] == len(ran) * (1 + TINY.rounds), (backend, key)
            for name in ran:
                assert 1 <= r["depth"][name] <= r["requests"][name], (backend, key, name)
        # the counts come from the server: a read sends at least one request per chunk it touches
        for name in rows["region"]["median_s"]:
            assert rows["region"]["requests"][name] >= _chunks_touched(TINY) + 1, (backend, name)
            assert rows["small-one-by-one"]["requests"][name] >= 2 * TINY.n_small, (backend, name)
            assert rows["read"]["requests"][name] >= (TINY.size // TINY.chunk) ** 2 + 1, (backend, name)
        # and their times: tensorstore's batch is fewer round trips than one array after another
        ts_depth = {k: rows[k]["depth"]["tensorstore"] for k in ("small-batch", "small-one-by-one")}
        assert ts_depth["small-batch"] < ts_depth["small-one-by-one"], (backend, ts_depth)
    md = remote.report_markdown(result)
    for t in result["tables"]:
        table = remote.format_table(t, result["engines"])
        assert table.count("\n") == len(t["workloads"]) + 1  # header, separator, one row per workload
        for r in t["workloads"]:
            assert r["title"] in table
        assert "round trips (zarrpy / tensorstore / zarr-python)" in table
        assert table in md
    assert "ms/read" in md and "ms/array" in md


def test_a_wrong_result_aborts_the_run(tmp_path):
    class OneOff(remote.ZarrpyRemote):
        def read_region(self, url, sel):
            out = super().read_region(url, sel)
            out.flat[3] += 1
            return out

    with pytest.raises(AssertionError, match="values differ"):
        remote.run_benchmark(TINY, workloads=["region"], engines=[OneOff()], tmpdir=str(tmp_path),
                             log=lambda _: None)


def test_a_peer_that_cannot_run_a_workload_is_na(tmp_path):
    class NoBatch(remote.ZarrpyRemote):
        name = "no-batch"

        def batch(self, urls):
            raise NotImplementedError("no batches here")

    result = remote.run_benchmark(TINY, workloads=["small-batch", "small-one-by-one"],
                                  engines=[remote.ZarrpyRemote(), NoBatch(), remote.Missing("absent", "not here")],
                                  tmpdir=str(tmp_path), log=lambda _: None)
    batch, one_by_one = result["tables"][0]["workloads"]
    assert batch["na"] == {"no-batch": "NotImplementedError: no batches here", "absent": "not here"}
    assert set(one_by_one["median_s"]) == {"zarrpy", "no-batch"}
    assert "n/a" in remote.format_table(result["tables"][0], result["engines"])
