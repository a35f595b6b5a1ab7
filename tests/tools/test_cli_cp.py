"""``zarrpy cp``: rechunk, reshard, recompress and convert, whole hierarchies, in bounded memory."""

from __future__ import annotations

import json
import shutil
import sys
import time

import numpy as np
import pytest

import zarrpy
from zarrpy.core.dtypes.optional import optional_of
from zarrpy.tools.cli import main
from zarrpy.tools.cp import MemoryBudgetError, in_flight, plan_regions

from .helpers import snapshot
from .peak_rss import peak_rss

ZSTD1 = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]


def _source(tmp_path, **kwargs):
    kwargs = {"shape": (1000, 700), "dtype": "uint16", "chunks": (100, 70), "compressors": ZSTD1, **kwargs}
    a = zarrpy.create_array(str(tmp_path / "src.zarr"), **kwargs)
    data = (np.arange(np.prod(kwargs["shape"])) % 251).reshape(kwargs["shape"]).astype(kwargs["dtype"])
    a[...] = data
    return a, data


def _same(x, y) -> bool:
    if isinstance(x, zarrpy.RaggedArray):
        return [v.tolist() for v in x.to_list()] == [v.tolist() for v in y.to_list()]
    if isinstance(x, np.ma.MaskedArray):
        return np.array_equal(x.mask, y.mask) and np.array_equal(x.filled(0), y.filled(0))
    x, y = np.asarray(x), np.asarray(y)
    return x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind == "f")


def test_rechunk_reshard_recompress(tmp_path, capsys):
    _, data = _source(tmp_path)
    dst = str(tmp_path / "dst.zarr")
    assert main(["cp", str(tmp_path / "src.zarr"), dst, "--chunks", "64,64", "--shards", "256,256",
                 "--compressor", "blosc:lz4:5", "--max-memory", "1MB"]) == 0
    out = capsys.readouterr().out
    b = zarrpy.open_array(dst)
    assert b.chunks == (64, 64) and b.shards == (256, 256)
    assert [c.to_json()["name"] for c in b.compressors] == ["blosc"]
    assert b.compressors[0].to_json()["configuration"]["cname"] == "lz4"
    assert np.array_equal(b[...], data)
    assert "chunks (64, 64), shards (256, 256), bytes > blosc:lz4:5" in out
    assert "at most 1.0 MB in flight" in out


@pytest.mark.parametrize("spec, name, config", [
    ("zstd:5", "zstd", {"level": 5}),
    ("gzip:6", "gzip", {"level": 6}),
    ("zlib:3", "numcodecs.zlib", {"level": 3}),
    ("blosc:zstd:3:noshuffle", "blosc", {"cname": "zstd", "clevel": 3, "shuffle": "noshuffle"}),
    ("none", None, None),
])
def test_compressor_specs(tmp_path, spec, name, config):
    _, data = _source(tmp_path, shape=(50, 40), chunks=(20, 20))
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "d.zarr"), "--compressor", spec]) == 0
    b = zarrpy.open_array(str(tmp_path / "d.zarr"))
    assert np.array_equal(b[...], data)
    if name is None:
        assert b.compressors == ()
        return
    (codec,) = b.compressors
    assert codec.to_json()["name"] == name
    assert config.items() <= codec.to_json()["configuration"].items()


@pytest.mark.parametrize("spec", ["lz77", "zstd:99", "gzip:x", "blosc:lz4:high", "none:1"])
def test_bad_compressor_is_a_usage_error_and_writes_nothing(tmp_path, capsys, spec):
    _source(tmp_path, shape=(10,), chunks=(5,))
    with pytest.raises(SystemExit) as exit_info:
        main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "d.zarr"), "--compressor", spec])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --compressor" in err and spec in err and "Traceback" not in err
    assert not (tmp_path / "d.zarr").exists()


@pytest.mark.parametrize("args", [["--chunks", "a,b"], ["--chunks", "0,5"], ["--max-memory", "lots"],
                                  ["--shards", "10,10", "--no-shards"], ["--zarr-format", "4"]])
def test_bad_options_are_usage_errors(tmp_path, capsys, args):
    with pytest.raises(SystemExit) as exit_info:
        main(["cp", str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr"), *args])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("usage: zarrpy cp")


def test_v2_to_v3_and_back(tmp_path):
    v2 = zarrpy.create_array(str(tmp_path / "v2.zarr"), shape=(30, 20), dtype=">i4", chunks=(7, 6), zarr_format=2,
                             order="F", dimension_separator="/", fill_value=-1, attributes={"units": "m"})
    data = np.arange(600, dtype=">i4").reshape(30, 20)
    v2[:25] = data[:25]
    assert main(["cp", str(tmp_path / "v2.zarr"), str(tmp_path / "v3.zarr"), "--zarr-format", "3", "--shards",
                 "14,12"]) == 0
    v3 = zarrpy.open_array(str(tmp_path / "v3.zarr"))
    assert v3.zarr_format == 3 and v3.shards == (14, 12) and v3.chunks == (7, 6)
    assert v3.attrs["units"] == "m" and v3.fill_value == -1
    assert [c.to_json()["name"] for c in v3.filters] == ["transpose"]  # order F keeps its layout
    assert np.array_equal(v3[...], v2[...])
    # and back to V2: shards go (a note says so), order F comes back
    assert main(["cp", str(tmp_path / "v3.zarr"), str(tmp_path / "back.zarr"), "--zarr-format", "2"]) == 0
    back = json.loads((tmp_path / "back.zarr" / ".zarray").read_text())
    assert back["order"] == "F" and back["chunks"] == [7, 6] and back["dtype"] == ">i4" and back["fill_value"] == -1
    assert np.array_equal(zarrpy.open_array(str(tmp_path / "back.zarr"))[...], v2[...])
    # V2 to V2 keeps the dimension separator
    assert main(["cp", str(tmp_path / "v2.zarr"), str(tmp_path / "v2b.zarr"), "--chunks", "10,10"]) == 0
    assert json.loads((tmp_path / "v2b.zarr" / ".zarray").read_text())["dimension_separator"] == "/"
    assert np.array_equal(zarrpy.open_array(str(tmp_path / "v2b.zarr"))[...], v2[...])


def test_sharded_to_v2_drops_the_shards_and_says_so(tmp_path, capsys):
    _, data = _source(tmp_path, shards=(200, 140))
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "v2.zarr"), "--zarr-format", "2"]) == 0
    assert "note: / unsharded: Zarr V2 has no shards" in capsys.readouterr().out
    b = zarrpy.open_array(str(tmp_path / "v2.zarr"))
    assert b.zarr_format == 2 and b.chunks == (100, 70) and np.array_equal(b[...], data)
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "x.zarr"), "--zarr-format", "2",
                 "--shards", "200,140"]) == 1
    assert "Zarr V2 has no shards" in capsys.readouterr().err


def test_no_shards_and_new_chunks_that_do_not_divide_the_old_shards(tmp_path, capsys):
    _, data = _source(tmp_path, shards=(200, 140))
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "a.zarr"), "--no-shards"]) == 0
    a = zarrpy.open_array(str(tmp_path / "a.zarr"))
    assert a.shards is None and a.chunks == (100, 70) and np.array_equal(a[...], data)
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "b.zarr"), "--chunks", "64,64"]) == 1
    assert "give --shards too, or --no-shards" in capsys.readouterr().err
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "b.zarr"), "--chunks", "50,70"]) == 0
    b = zarrpy.open_array(str(tmp_path / "b.zarr"))
    assert b.chunks == (50, 70) and b.shards == (200, 140)  # the old shards hold the new chunks
    assert np.array_equal(b[...], data)
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "c.zarr"), "--chunks", "50,-1", "--no-shards"]) == 0
    c = zarrpy.open_array(str(tmp_path / "c.zarr"))
    assert c.chunks == (50, 700) and c.shards is None  # -1: the whole dimension
    assert np.array_equal(c[...], data)


def _hierarchy(root):
    g = zarrpy.open_group(str(root), mode="w", attributes={"title": "t", "n": [1, 2]})
    s = g.create_array("strings", shape=(10,), dtype=str, chunks=(3,))
    s[...] = [f"s{i}" * i for i in range(10)]
    b = g.create_array("bytes", shape=(5,), dtype=bytes, chunks=(2,))
    b[...] = [b"\x00x" * i for i in range(5)]
    sub = g.create_group("sub", attributes={"k": "v"})
    r = sub.create_array("ragged", shape=(5,), dtype="int32", serializer="numcodecs.vlen-array", chunks=(2,))
    r[...] = [[1, 2], [], [3], [4, 5, 6], [7]]
    m = sub.create_array("m", shape=(20, 30), dtype="float64", chunks=(7, 11), dimension_names=["y", "x"],
                         fill_value=np.nan, attributes={"units": "K"})
    m[:10] = np.arange(300).reshape(10, 30)
    sub.create_group("deeper/still")
    z = g.create_array("zero_d", shape=(), dtype="float32")
    z[()] = 3.5
    g.create_array("empty", shape=(0, 4), dtype="int8")
    o = g.create_array("optional", shape=(6,), dtype=optional_of("int16"), chunks=(4,))
    o[...] = np.ma.masked_array([1, 2, 3, 4, 5, 6], mask=[0, 1, 0, 0, 1, 0])
    return g


def _assert_same_hierarchy(src, dst, *, skip=()):
    src_members = dict(src.members(max_depth=None))
    dst_members = dict(dst.members(max_depth=None))
    assert set(src_members) - set(skip) == set(dst_members)
    assert dict(dst.attrs) == dict(src.attrs)
    for rel, node in src_members.items():
        if rel in skip:
            continue
        copy = dst_members[rel]
        assert type(copy) is type(node), rel
        assert dict(copy.attrs) == dict(node.attrs), rel
        if isinstance(node, zarrpy.Array):
            assert copy.shape == node.shape, rel
            assert _same(node[...], copy[...]), rel


def test_group_hierarchy_with_strings_ragged_and_attributes(tmp_path, capsys):
    src = _hierarchy(tmp_path / "g.zarr")
    zarrpy.consolidate_metadata(str(tmp_path / "g.zarr"))
    assert main(["cp", str(tmp_path / "g.zarr"), str(tmp_path / "c.zarr"), "--chunks", "4",
                 "--compressor", "gzip:1"]) == 0
    out = capsys.readouterr().out
    dst = zarrpy.open_group(str(tmp_path / "c.zarr"), use_consolidated=False)
    _assert_same_hierarchy(src, dst)
    assert dst["strings"].chunks == (4,) and dst["sub/ragged"].chunks == (4,)
    assert dst["sub/m"].chunks == (7, 11)  # --chunks has one dimension: the 2-D array keeps its chunks
    assert dst["sub/m"].dimension_names == ("y", "x")
    assert "note: /sub/m keeps its chunks: --chunks has 1 dimensions, the array 2" in out
    assert "consolidated metadata rewritten" in out
    assert zarrpy.open_group(str(tmp_path / "c.zarr")).consolidated_metadata is not None


def test_group_hierarchy_to_v2_and_back(tmp_path):
    src = _hierarchy(tmp_path / "g.zarr")
    del src["optional"]  # zarrs' optional type has no V2 form (see the next test)
    assert main(["cp", str(tmp_path / "g.zarr"), str(tmp_path / "v2.zarr"), "--zarr-format", "2"]) == 0
    v2 = zarrpy.open_group(str(tmp_path / "v2.zarr"))
    assert v2.zarr_format == 2 and (tmp_path / "v2.zarr" / "sub" / "ragged" / ".zarray").exists()
    _assert_same_hierarchy(src, v2)
    assert main(["cp", str(tmp_path / "v2.zarr"), str(tmp_path / "v3.zarr"), "--zarr-format", "3"]) == 0
    _assert_same_hierarchy(src, zarrpy.open_group(str(tmp_path / "v3.zarr")))


def test_an_array_without_a_v2_form_stops_the_copy_before_anything_is_written(tmp_path, capsys):
    _hierarchy(tmp_path / "g.zarr")
    assert main(["cp", str(tmp_path / "g.zarr"), str(tmp_path / "v2.zarr"), "--zarr-format", "2"]) == 1
    err = capsys.readouterr().err
    assert "array '/optional'" in err and "no Zarr V2 form" in err
    assert not (tmp_path / "v2.zarr").exists()


def test_path_copies_one_node(tmp_path):
    src = _hierarchy(tmp_path / "g.zarr")
    assert main(["cp", str(tmp_path / "g.zarr"), str(tmp_path / "m.zarr"), "--path", "sub/m"]) == 0
    m = zarrpy.open_array(str(tmp_path / "m.zarr"))
    assert _same(m[...], src["sub/m"][...]) and m.attrs["units"] == "K"
    assert main(["cp", str(tmp_path / "g.zarr"), str(tmp_path / "sub.zarr"), "--path", "sub"]) == 0
    sub = zarrpy.open_group(str(tmp_path / "sub.zarr"))
    assert sorted(rel for rel, _ in sub.members(max_depth=None)) == ["deeper", "deeper/still", "m", "ragged"]
    assert dict(sub.attrs) == {"k": "v"}


def test_existing_destination_needs_overwrite(tmp_path, capsys):
    _, data = _source(tmp_path, shape=(10,), chunks=(5,))
    other = zarrpy.create_array(str(tmp_path / "d.zarr"), shape=(3,), dtype="int8")
    other[...] = 1
    before = snapshot(tmp_path / "d.zarr")
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "d.zarr")]) == 1
    assert "--overwrite" in capsys.readouterr().err
    assert snapshot(tmp_path / "d.zarr") == before
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "d.zarr"), "--overwrite"]) == 0
    assert np.array_equal(zarrpy.open_array(str(tmp_path / "d.zarr"))[...], data)


def test_copying_into_itself_is_refused(tmp_path, capsys):
    _source(tmp_path, shape=(10,), chunks=(5,))
    before = snapshot(tmp_path / "src.zarr")
    for dest in ("src.zarr", "src.zarr/inside"):
        assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / dest), "--overwrite"]) == 1
        assert "overlap" in capsys.readouterr().err
    assert snapshot(tmp_path / "src.zarr") == before


def test_a_write_unit_over_the_budget_is_refused_before_writing(tmp_path, capsys):
    _source(tmp_path)
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "d.zarr"), "--chunks", "1000,700",
                 "--no-shards", "--max-memory", "2MB"]) == 1
    err = capsys.readouterr().err
    assert "one destination write unit of shape (1000, 700)" in err and "--max-memory 2.0 MB" in err
    assert not (tmp_path / "d.zarr").exists()
    # Sharded, a shard streams inner chunk by inner chunk: only an inner chunk too large is refused.
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "d.zarr"), "--chunks", "1000,700",
                 "--shards", "1000,700", "--max-memory", "2MB"]) == 1
    err = capsys.readouterr().err
    assert "one destination inner chunk of shape (1000, 700) (in shards of (1000, 700))" in err
    assert "--max-memory 2.0 MB" in err
    assert not (tmp_path / "d.zarr").exists()


def test_only_regions_with_stored_chunks_are_read(tmp_path, capsys):
    a = zarrpy.create_array(str(tmp_path / "src.zarr"), shape=(1000, 1000), dtype="int32", chunks=(100, 100),
                            fill_value=-5)
    a[0:100, 0:100] = 1
    a[950, 999] = 2
    assert main(["cp", str(tmp_path / "src.zarr"), str(tmp_path / "d.zarr"), "--max-memory", "1MB"]) == 0
    out = capsys.readouterr().out
    b = zarrpy.open_array(str(tmp_path / "d.zarr"))
    assert sorted(b.stored_chunk_keys()) == ["c/0/0", "c/9/9"]
    assert np.array_equal(b[...], a[...])
    assert "2 region(s) of " in out  # of the 10 x 10 chunks, 2 are stored


def test_plan_regions_aligns_and_bounds():
    # Units of 64, source chunks of 100: regions are multiples of lcm(64, 100) = 1600 where that fits.
    region = plan_regions((10_000, 10_000), (64, 64), (100, 100), 1, 64 << 20, workers=2)
    assert all(r % 64 == 0 or r == 10_000 for r in region)
    assert region[1] == 10_000 and region[0] % 1600 == 0
    assert in_flight(region, (64, 64), (100, 100), 1, 2) <= 64 << 20
    # the largest region that fits: one more step would not
    bigger = (region[0] + 1600, region[1])
    assert in_flight(bigger, (64, 64), (100, 100), 1, 2) > 64 << 20
    # a unit that alone does not fit
    with pytest.raises(MemoryBudgetError, match="one destination write unit of shape"):
        plan_regions((10_000, 10_000), (4000, 4000), (100, 100), 8, 64 << 20, workers=2)
    assert plan_regions((), (), (), 8, 1 << 20) == ()
    # shards larger than the array: the whole array is one unit
    assert plan_regions((50, 30), (64, 64), (10, 10), 4, 1 << 20, workers=4) == (50, 30)


# -- memory ------------------------------------------------------------------
# A 512 MiB uint8 array (8192 x 65536) in 1 MiB chunks (512 x 2048): 32 of them
# (one row of chunks, 32 MiB) are written with zarrpy from a low-entropy pattern
# (values 0-10, zstd level 1: ~16 KB a chunk), then that row of chunk files is
# copied to the other 15 rows: half a second instead of encoding 512 MiB.
ROWS, COLS, CHUNK_ROWS, CHUNK_COLS = 8192, 65536, 512, 2048


def _big_source(root):
    a = zarrpy.create_array(str(root), shape=(ROWS, COLS), dtype="uint8", chunks=(CHUNK_ROWS, CHUNK_COLS),
                            compressors=ZSTD1)
    rows = (np.arange(CHUNK_ROWS) // 3 % 11).astype(np.uint8)
    cols = (np.arange(COLS) // 5 % 11).astype(np.uint8)
    a[:CHUNK_ROWS] = np.add.outer(rows, cols) % 11
    for i in range(1, ROWS // CHUNK_ROWS):
        shutil.copytree(root / "c" / "0", root / "c" / str(i))
    return a


@pytest.mark.skipif(sys.platform == "win32", reason="peak RSS comes from the POSIX resource module")
def test_copy_of_512_mb_stays_under_max_memory(tmp_path, capsys):
    start = time.monotonic()
    src = _big_source(tmp_path / "big.zarr")
    assert src.nbytes == 512 << 20 and len(src.stored_chunk_keys()) == 512
    # The baseline: an interpreter that imported numpy and zarrpy, in the same conditions.
    baseline = peak_rss(sys.executable, "-c", "import numpy, zarrpy")
    small = peak_rss(sys.executable, "-m", "zarrpy", "cp", str(tmp_path / "big.zarr"), str(tmp_path / "a.zarr"),
                      "--max-memory", "64MB", "--quiet")
    # Slack over the 64 MB bound, for what --max-memory does not count (measured here:
    # growth 42-48 MB with ZARRPY_THREADS=2, against 64 MB + 16 MB):
    # - ~4 MB of modules the copy imports after the baseline's (argparse, zarrpy.tools,
    #   zstandard/numcodecs on first use);
    # - the two pool threads: their stacks, malloc arenas and kept scratch buffers
    #   (zarrpy.core.scratch keeps up to 4 per thread, here of 1 MiB chunks);
    # - allocator slack: freed chunk buffers that glibc keeps mapped for reuse.
    slack = 16 << 20
    growth = small - baseline
    assert growth < (64 << 20) + slack, f"peak RSS grew {growth / 2**20:.0f} MB over the baseline"
    copied = zarrpy.open_array(str(tmp_path / "a.zarr"))
    assert copied.nbytes_stored() == src.nbytes_stored()  # same chunks, same codecs: the same bytes
    assert np.array_equal(copied[ROWS - CHUNK_ROWS:, :4096], src[ROWS - CHUNK_ROWS:, :4096])
    # The bound is what keeps it small: with room for 512 MB the regions grow and so does the peak.
    shutil.rmtree(tmp_path / "a.zarr")
    large = peak_rss(sys.executable, "-m", "zarrpy", "cp", str(tmp_path / "big.zarr"), str(tmp_path / "a.zarr"),
                      "--max-memory", "512MB", "--quiet")
    assert large - baseline > 3 * growth, (large - baseline, growth)
    with capsys.disabled():
        print(f"\ncp of 512 MiB: peak RSS {growth / 2**20:.0f} MB over the baseline ({baseline / 2**20:.0f} MB) "
              f"with --max-memory 64MB, {(large - baseline) / 2**20:.0f} MB with 512MB; "
              f"{time.monotonic() - start:.1f} s in all")
