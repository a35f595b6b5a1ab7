"""``zarrpy cp`` into shards larger than ``--max-memory``: each shard streams inner chunk by inner chunk."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import zarrpy
from zarrpy.pipeline.shard_stream import RUN_NBYTES
from zarrpy.tools.cli import main
from zarrpy.tools.cp import MemoryBudgetError, plan_stream_band, stream_in_flight

from .peak_rss import peak_rss

ZSTD1 = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]


def test_a_shard_larger_than_the_budget_streams(tmp_path, capsys):
    """The copy ``cp`` used to refuse (one shard of 1000 x 700 holds more than 2 MB in
    flight) streams its shards from bands of inner chunks, edge ones included."""
    a = zarrpy.create_array(str(tmp_path / "src.zarr"), shape=(1000, 700), dtype="uint16", chunks=(100, 70),
                            compressors=ZSTD1)
    data = (np.arange(700_000) % 251).reshape(1000, 700).astype("uint16")
    a[...] = data
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "d.zarr"), "--chunks", "64,64",
                 "--shards", "640,512", "--max-memory", "2MB"]) == 0
    out = capsys.readouterr().out
    assert "4 shard(s) streamed in bands of (" in out and "at most 2.0 MB in flight" in out
    b = zarrpy.open_array(str(tmp_path / "d.zarr"))
    assert b.chunks == (64, 64) and b.shards == (640, 512)
    assert np.array_equal(b[...], data)
    # the same bytes as a copy with room for whole shards
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "e.zarr"), "--chunks", "64,64",
                 "--shards", "640,512", "--max-memory", "64MB"]) == 0
    assert "region(s) of" in capsys.readouterr().out
    e = zarrpy.open_array(str(tmp_path / "e.zarr"))
    assert sorted(b.stored_chunk_keys()) == sorted(e.stored_chunk_keys()) == ["c/0/0", "c/0/1", "c/1/0", "c/1/1"]
    assert all(b.store.get(k) == e.store.get(k) for k in e.stored_chunk_keys())


def test_sparse_sources_stream_only_the_shards_they_touch(tmp_path, capsys):
    a = zarrpy.create_array(str(tmp_path / "src.zarr"), shape=(600, 600), dtype="int32", chunks=(50, 50),
                            fill_value=-1)
    a[10, 10] = 7
    a[599, 599] = 8
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "d.zarr"), "--chunks", "20,20",
                 "--shards", "400,400", "--max-memory", "1MB"]) == 0
    assert "2 shard(s) streamed" in capsys.readouterr().out
    b = zarrpy.open_array(str(tmp_path / "d.zarr"))
    assert sorted(b.stored_chunk_keys()) == ["c/0/0", "c/1/1"]
    assert np.array_equal(b[...], a[...])


def test_plan_stream_band_fits_and_aligns():
    shard, inner, source = (4096, 2048), (256, 256), (512, 512)
    band, run = plan_stream_band(shard, inner, source, 2, 16 << 20, workers=3)
    assert run == RUN_NBYTES and band[1] == 2048 and band[0] % 512 == 0  # whole source chunks
    assert stream_in_flight(band, inner, source, 2, 3) <= 16 << 20
    assert stream_in_flight((band[0] + 512, 2048), inner, source, 2, 3) > 16 << 20
    # too tight for whole rows of inner chunks: part of a row
    band, run = plan_stream_band(shard, inner, source, 2, 3 << 20, workers=1)
    assert band[0] == 256 and band[1] < 2048 and band[1] % 512 == 0
    # too tight for runs of several inner chunks: one inner chunk a task
    band, run = plan_stream_band((640, 512), (64, 64), (100, 70), 2, 700_000, workers=3)
    assert run == 0 and stream_in_flight(band, (64, 64), (100, 70), 2, 3, 0) <= 700_000
    with pytest.raises(MemoryBudgetError, match=r"one destination inner chunk of shape \(256, 256\)"):
        plan_stream_band(shard, inner, source, 2, 1 << 20, workers=3)


# -- memory ------------------------------------------------------------------
# A 64 MiB uint16 array (4096 x 8192, source chunks 512 x 512) copied into
# shards of 4096 x 4096 (32 MiB of elements each) with inner chunks of
# 256 x 256 and --max-memory 16MB: copying one whole shard would need about
# 160 MB in flight. The elements are a slow gradient with two bits of noise,
# so each shard encodes to ~5 MB (zstd level 1).
SHAPE, SOURCE_CHUNKS = (4096, 8192), (512, 512)


def _source(root) -> np.ndarray:
    a = zarrpy.create_array(str(root), shape=SHAPE, dtype="uint16", chunks=SOURCE_CHUNKS, compressors=ZSTD1)
    rows = np.arange(SHAPE[0], dtype=np.uint32)[:, None] // 3
    cols = np.arange(SHAPE[1], dtype=np.uint32)[None, :] // 5
    noise = np.random.default_rng(0).integers(0, 4, size=SHAPE, dtype=np.uint16)
    data = ((rows + cols) % 4000).astype(np.uint16) + noise
    a[...] = data
    return data


@pytest.mark.skipif(sys.platform == "win32", reason="peak RSS comes from the POSIX resource module")
def test_copy_into_32_mib_shards_with_16_mb_stays_small(tmp_path, capsys):
    data = _source(tmp_path / "src.zarr")
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    # The baseline: an interpreter that imported numpy and zarrpy and opened the source.
    baseline = peak_rss(sys.executable, "-c", f"import numpy, zarrpy; zarrpy.open_array({src!r})")
    peak = peak_rss(sys.executable, "-m", "zarrpy", "cp", src, dst, "--chunks", "256,256", "--shards", "4096,4096",
                     "--max-memory", "16MB", "--quiet")
    growth = peak - baseline
    b = zarrpy.open_array(dst)
    assert b.shards == (4096, 4096) and math.prod(b.shards) * 2 == 32 << 20
    assert len(b.stored_chunk_keys()) == 2
    assert np.array_equal(b[...], data)
    # 16 MB in flight at most, plus what --max-memory does not count: the modules the copy
    # imports, the pool threads' buffers, allocator slack, and (a store that does not stream
    # writes) the encoded shard kept until it is stored (here ~5 MB).
    assert growth <= 40 << 20, f"peak RSS grew {growth / 2**20:.0f} MB over the baseline"
    with capsys.disabled():
        print(f"\ncp of 64 MiB into 32 MiB shards with --max-memory 16MB: peak RSS {growth / 2**20:.0f} MB "
              f"over the baseline ({baseline / 2**20:.0f} MB)")
