"""``zarrpy migrate --dry-run``: prints what a migration would write and remove, writes nothing."""

from __future__ import annotations

import numpy as np
import pytest

import zarrpy
from zarrpy.tools.cli import main
from zarrpy.tools.migrate import migrate_v3

from .helpers import snapshot


@pytest.fixture
def v2_store(tmp_path):
    root = tmp_path / "v2.zarr"
    g = zarrpy.open_group(str(root), mode="w", zarr_format=2, attributes={"title": "t"})
    g.create_array("a", shape=(10,), dtype="int16", chunks=(4,), attributes={"u": 1})[...] = np.arange(10)
    sub = g.create_group("sub")
    sub.create_array("s", shape=(3,), dtype=str, chunks=(2,))[...] = ["x", "yy", "z"]
    zarrpy.consolidate_metadata(str(root))
    return root


@pytest.mark.parametrize("remove_v2", [False, True])
def test_dry_run_writes_nothing_and_lists_what_a_run_would_do(v2_store, capsys, remove_v2):
    before = snapshot(v2_store)
    flags = ["--remove-v2"] if remove_v2 else []
    assert main(["migrate", str(v2_store), "--dry-run", *flags]) == 0
    out = capsys.readouterr().out.splitlines()
    assert snapshot(v2_store) == before  # byte for byte, and no file or directory added
    assert out[0].startswith("dry run, nothing written: would write zarr.json for 4 node(s)")
    assert [line.split()[-1] for line in out if line.startswith("  write ")] == [
        "zarr.json", "a/zarr.json", "sub/zarr.json", "sub/s/zarr.json"]
    removed = [line.split()[-1] for line in out if line.startswith("  remove ")]
    if remove_v2:
        assert "would remove 9 V2 metadata document(s)" in out[0]
        assert removed == [".zattrs", ".zgroup", ".zmetadata", "a/.zarray", "a/.zattrs", "sub/.zattrs",
                           "sub/.zgroup", "sub/s/.zarray", "sub/s/.zattrs"]
    else:
        assert removed == []
    # the real run does what the dry run said
    result = migrate_v3(str(v2_store), remove_v2=remove_v2)
    assert [f"{p}/zarr.json" if p else "zarr.json" for p in result.written] == [
        line.split()[-1] for line in out if line.startswith("  write ")]
    assert list(result.removed) == removed


def test_dry_run_after_a_migration_has_nothing_to_write(v2_store, capsys):
    migrate_v3(str(v2_store))
    before = snapshot(v2_store)
    assert main(["migrate", str(v2_store), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would write zarr.json for 0 node(s), 4 already migrated" in out
    assert snapshot(v2_store) == before


def test_dry_run_result_matches_the_real_run(v2_store):
    planned = migrate_v3(str(v2_store), remove_v2=True, dry_run=True)
    assert not (v2_store / "zarr.json").exists()
    done = migrate_v3(str(v2_store), remove_v2=True)
    assert planned == done
