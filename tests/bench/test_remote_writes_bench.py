"""bench/remote_writes.py on tiny arrays at 30 ms of latency, one round, on
moto's S3 server: every workload runs for zarrpy and zarr-python (the
peer that is always installed; tensorstore adds nothing here but time),
what they stored is checked, and zarrpy's requests are the ones issue 29
asks for. No time is asserted."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
writes = importlib.import_module("remote_writes")

TINY = writes.Config(size=128, chunk=32, shard=64, latency=0.03, rounds=1)  # overlaps show at this latency


def test_every_write_workload_is_checked_and_counted(tmp_path):
    pytest.importorskip("moto")
    pytest.importorskip("s3fs")
    engines = writes.make_engines(["zarr-python"])
    assert [e.name for e in engines] == ["zarrpy", "zarr-python"]
    result = writes.run_benchmark(TINY, engines=engines, tmpdir=str(tmp_path), log=lambda _: None)
    rows = {r["key"]: r for r in result["workloads"]}
    assert list(rows) == list(writes.WORKLOADS)
    for key, r in rows.items():
        assert set(r["median_s"]) == {"zarrpy", "zarr-python"}, (key, r["na"])
        for name in r["median_s"]:
            assert 1 <= r["depth"][name] <= r["requests"][name], (key, name)
            assert sum(n for k, n in r["kinds"][name].items() if " " not in k) == r["requests"][name]
    for key in ("fill-plain", "fill-sharded"):
        assert rows[key]["keys_left"] == {"zarrpy": 0, "zarr-python": 0}
    chunks, shards = (TINY.size // TINY.chunk) ** 2, (TINY.size // TINY.shard) ** 2
    z = {key: (r["requests"]["zarrpy"], r["depth"]["zarrpy"], r["kinds"]["zarrpy"]) for key, r in rows.items()}
    # a new array: the GETs of .zarray and .zgroup, zarr.json only if absent; then the chunks at once
    assert z["write"][:2] == (chunks + 3, 3) and z["write"][2]["PUT"] == chunks + 1
    assert z["sharded-write"][:2] == (shards + 3, 3) and z["sharded-write"][2]["PUT"] == shards + 1
    # fill everywhere: zarr.json, then one DeleteObjects
    assert z["fill-plain"][:2] == (2, 2) and z["fill-plain"][2]["DeleteObjects"] == 1
    assert "LIST" not in z["write"][2] and "HEAD" not in z["write"][2]
    md = writes.report_markdown(result)
    assert "| create + write 128², 32² chunks | zarrpy |" in md
