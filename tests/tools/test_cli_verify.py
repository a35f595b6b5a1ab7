"""``zarrpy verify``: every stored chunk decoded, bad ones named by key, exit 1; temporary files as before."""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

import zarrpy
from zarrpy.tools.cli import main
from zarrpy.tools.verify import check_chunks

from .helpers import flip_bytes, snapshot


@pytest.fixture
def store(tmp_path):
    """A group with a plain (zstd), a sharded, a crc32c-protected and a V2 array, all written."""
    root = tmp_path / "s.zarr"
    g = zarrpy.open_group(str(root), mode="w")
    data = np.arange(100, dtype="int32")
    g.create_array("plain", shape=(100,), dtype="int32", chunks=(10,))[...] = data
    g.create_array("sharded", shape=(100,), dtype="int32", chunks=(10,), shards=(50,))[...] = data
    g.create_array("crc", shape=(100,), dtype="int32", chunks=(10,), compressors=[{"name": "crc32c"}])[...] = data
    g.create_array("strings", shape=(6,), dtype=str, chunks=(4,))[...] = ["a", "bb", "", "ccc", "d", "e"]
    v2 = zarrpy.open_group(str(root / "v2grp"), mode="w", zarr_format=2)
    v2.create_array("a", shape=(20, 20), dtype="float64", chunks=(10, 10))[...] = 1.5
    return root


def test_a_clean_store_passes(store, capsys):
    assert main(["verify", str(store)]) == 0
    out = capsys.readouterr().out
    # plain 10 + sharded 10 inner in 2 shards + crc 10 + strings 2 = 32 in 24 objects (v2grp/a: 4 more)
    assert "36 chunk(s) in 28 stored object(s) of 5 array(s) decoded: all good" in out
    assert "no stale temporary files" in out


@pytest.mark.parametrize("array, key, offset, inner, error", [
    # a zstd frame whose header is damaged does not decompress (damage inside an unchecked
    # zstd payload may decode to wrong values unnoticed: that is what crc32c is for)
    ("plain", "plain/c/3", 0, None, "ChunkDecodeError"),
    ("crc", "crc/c/5", 10, None, "ChecksumError"),  # the data itself, caught by the checksum
    ("sharded", "sharded/c/1", 0, (5,), "ChunkDecodeError"),  # the first inner chunk of the second shard
    ("sharded", "sharded/c/0", -10, None, "ChecksumError"),  # the shard index (crc32c-protected)
    ("v2grp/a", "v2grp/a/1.0", 1, None, "ChunkDecodeError"),
    ("strings", "strings/c/1", 0, None, "ChunkDecodeError"),
])
def test_a_corrupt_chunk_is_named_and_exits_1(store, capsys, array, key, offset, inner, error):
    flip_bytes(store / key, offset)
    before = snapshot(store)
    assert main(["verify", str(store)]) == 1
    out = capsys.readouterr().out.splitlines()
    bad = [line for line in out if line.startswith("bad chunk ")]
    where = key if inner is None else f"{key} [inner chunk {inner}]"
    assert len(bad) == 1 and bad[0].startswith(f"bad chunk {where}: {error}: "), out
    assert any(line.endswith("decoded: 1 bad") for line in out)
    assert snapshot(store) == before  # verify never changes chunks
    report = check_chunks(zarrpy.open_group(str(store)))
    assert [b.key for b in report.bad] == [key]


def test_every_bad_chunk_gets_its_line_and_json_lists_them(store, capsys):
    flip_bytes(store / "crc" / "c" / "0", 3)
    flip_bytes(store / "crc" / "c" / "9", 3)
    (store / "plain" / "c" / "2").write_bytes(b"garbage")
    os.truncate(store / "sharded" / "c" / "0", 30)
    assert main(["verify", str(store), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["arrays"] == 5
    assert [(b["array"], b["key"]) for b in doc["bad"]] == [
        ("/crc", "crc/c/0"), ("/crc", "crc/c/9"), ("/plain", "plain/c/2"), ("/sharded", "sharded/c/0")]
    assert all(b["error"] for b in doc["bad"])
    assert "shorter than its" in doc["bad"][3]["error"]
    assert doc["temp_files"] == {"stale": [], "live": [], "removed": [], "stale_nbytes": 0}


def test_json_of_a_clean_store(store, capsys):
    assert main(["verify", str(store), "--json", "--path", "v2grp"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True and doc["path"] == "/v2grp" and doc["bad"] == []
    assert doc["arrays"] == 1 and doc["chunks_checked"] == 4


@pytest.mark.parametrize("batch_nbytes", [32 << 20, 4, 20])  # all at once; one chunk; a shard in 4 parts
def test_sharded_inner_chunks_are_each_checked(tmp_path, capsys, monkeypatch, batch_nbytes):
    monkeypatch.setattr("zarrpy.tools.verify.BATCH_NBYTES", batch_nbytes)
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(8, 8), dtype="uint8", chunks=(2, 2), shards=(8, 8),
                            compressors=[{"name": "crc32c"}])
    a[...] = np.arange(64).reshape(8, 8)
    shard = tmp_path / "a.zarr" / "c" / "0" / "0"
    data = bytearray(shard.read_bytes())
    # inner chunks are 4 data bytes + 4 checksum bytes, in C order: damage the 6th (inner chunk (1, 1))
    data[5 * 8] ^= 0xFF
    shard.write_bytes(bytes(data))
    assert main(["verify", str(tmp_path / "a.zarr")]) == 1
    out = capsys.readouterr().out
    assert "bad chunk c/0/0 [inner chunk (1, 1)]: ChecksumError" in out
    assert "16 chunk(s) in 1 stored object(s)" in out and "decoded: 1 bad" in out
    # a damaged index fails every inner chunk: the shard is listed once
    flip_bytes(shard, -6)
    assert main(["verify", str(tmp_path / "a.zarr")]) == 1
    bad = [line for line in capsys.readouterr().out.splitlines() if line.startswith("bad chunk")]
    assert len(bad) == 1 and bad[0].startswith("bad chunk c/0/0: ChecksumError: ") and "index" in bad[0]


def test_chunks_left_outside_the_grid_are_listed_not_failed(tmp_path, capsys):
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(20,), dtype="int8", chunks=(10,))
    a[...] = 1
    (tmp_path / "a.zarr" / "c" / "5").write_bytes(b"left over")
    assert main(["verify", str(tmp_path / "a.zarr")]) == 0
    assert "not read (outside the array's chunk grid): c/5" in capsys.readouterr().out


def test_temporary_files_are_still_reported_next_to_bad_chunks(store, capsys):
    from zarrpy.stores._tempfiles import HOST_TAG, TMP_PREFIX

    stale = store / "plain" / "c" / f"{TMP_PREFIX}3-{HOST_TAG}-999999999-00112233aabbccdd"
    stale.write_bytes(b"half")
    assert main(["verify", str(store)]) == 1
    out = capsys.readouterr().out
    assert "stale temporary file: " + os.path.join("plain", "c", stale.name) in out and "decoded: all good" in out
    assert main(["verify", str(store), "--clean"]) == 0
    assert "removed 1 stale temporary file(s)" in capsys.readouterr().out and not stale.exists()


def test_a_zip_store_is_verified(tmp_path, capsys):
    g = zarrpy.open_group(str(tmp_path / "d.zarr"), mode="w")
    g.create_array("x", shape=(10,), dtype="int16", chunks=(5,))[...] = 3
    with zipfile.ZipFile(tmp_path / "d.zip", "w") as zf:
        for path in sorted((tmp_path / "d.zarr").rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(tmp_path / "d.zarr").as_posix())
    assert main(["verify", str(tmp_path / "d.zip")]) == 0
    out = capsys.readouterr().out
    assert "2 chunk(s) in 2 stored object(s) of 1 array(s) decoded: all good" in out
    assert "temporary files not looked for (ZipStore writes none)" in out
    assert main(["verify", str(tmp_path / "d.zip"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["temp_files"] is None
