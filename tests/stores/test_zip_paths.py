"""A string path ending in ``.zip`` opened to write creates a zip archive
(not a directory named ``x.zip``): ``create_array``, ``create_group``,
``open_group(mode="w")`` and ``zarrpy cp SRC out.zip``; zarr-python reads
the result; an archive with members is never truncated by a path."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrpy
from zarrpy.stores import ZipStore

DATA = np.arange(24, dtype="i4").reshape(6, 4)


def _zarr_python_reads(path: Path, name: str | None = None) -> np.ndarray:
    store = zarr.storage.ZipStore(path, mode="r")
    try:
        node = zarr.open_array(store, mode="r") if name is None else zarr.open_group(store, mode="r")[name]
        return np.asarray(node[...])
    finally:
        store.close()


@pytest.mark.parametrize("overwrite", [False, True])
def test_create_array_on_a_new_zip_path_writes_a_zip(tmp_path, overwrite):
    path = tmp_path / "new.zip"
    a = zarrpy.create_array(str(path), shape=(6, 4), chunks=(3, 2), dtype="i4", overwrite=overwrite)
    assert isinstance(a.store, ZipStore)
    a[:] = DATA
    a.store.close()
    assert path.is_file() and zipfile.is_zipfile(path)
    np.testing.assert_array_equal(zarrpy.open_array(path)[:], DATA)
    np.testing.assert_array_equal(_zarr_python_reads(path), DATA)


@pytest.mark.parametrize("opener", ["create_group", "open_group_w", "open_group_a", "open"])
def test_groups_on_a_new_zip_path(tmp_path, opener):
    path = tmp_path / "g.zip"
    make = {
        "create_group": lambda: zarrpy.create_group(path),
        "open_group_w": lambda: zarrpy.open_group(path, mode="w"),
        "open_group_a": lambda: zarrpy.open_group(path, mode="a"),
        "open": lambda: zarrpy.open(path),
    }[opener]
    g = make()
    g.create_array("x", shape=(6, 4), chunks=(3, 2), dtype="i4")[:] = DATA
    g.store.close()
    np.testing.assert_array_equal(zarrpy.open_group(path, mode="r")["x"][:], DATA)
    np.testing.assert_array_equal(_zarr_python_reads(path, "x"), DATA)


def test_a_forgotten_close_still_leaves_a_readable_zip(tmp_path):
    path = tmp_path / "f.zip"
    code = ("import numpy as np, zarrpy, sys; "
            "a = zarrpy.create_array(sys.argv[1], shape=(4,), dtype='i2'); a[:] = np.arange(4)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)
    np.testing.assert_array_equal(zarrpy.open_array(path)[:], np.arange(4))


def test_a_failed_create_leaves_no_archive_in_the_way(tmp_path):
    path = tmp_path / "bad.zip"
    with pytest.raises(zarrpy.MetadataError):
        zarrpy.create_array(path, shape=(2,), dtype="no-such-type")
    a = zarrpy.create_array(path, shape=(2,), dtype="u1")  # the retry works
    a[:] = 3
    a.store.close()
    np.testing.assert_array_equal(zarrpy.open_array(path)[:], [3, 3])


@pytest.mark.parametrize("mode", ["w", "a", "r+"])
def test_an_archive_with_members_is_never_truncated_by_a_path(tmp_path, mode):
    path = tmp_path / "old.zip"
    a = zarrpy.create_array(path, shape=(6, 4), chunks=(3, 2), dtype="i4")
    a[:] = DATA
    a.store.close()
    before = path.read_bytes()
    with pytest.raises(zarrpy.ReadOnlyError, match=re.escape(f"mode={mode!r}") + r".*ZipStore\(path, mode='a'\)"):
        zarrpy.open_group(path, mode=mode)
    assert path.read_bytes() == before


def test_r_plus_on_a_missing_zip_path_creates_nothing(tmp_path):
    path = tmp_path / "missing.zip"
    with pytest.raises(zarrpy.NodeNotFoundError):
        zarrpy.open_array(path, mode="r+")
    assert not os.path.exists(path)


def _cp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zarrpy", "cp", *args, "--quiet"],
                          capture_output=True, text=True, timeout=120)


def test_cli_cp_to_a_zip_path_writes_a_zip(tmp_path):
    src = tmp_path / "src.zarr"
    s = zarrpy.create_array(src, shape=(6, 4), chunks=(3, 2), dtype="i4")
    s[:] = DATA
    out = tmp_path / "out.zip"
    result = _cp(str(src), str(out))
    assert result.returncode == 0, result.stderr
    assert out.is_file() and zipfile.is_zipfile(out)
    np.testing.assert_array_equal(_zarr_python_reads(out), DATA)
    before = out.read_bytes()
    again = _cp(str(src), str(out), "--overwrite")
    assert again.returncode == 1 and "zip archive already" in again.stderr
    assert out.read_bytes() == before


def test_an_unpickled_zip_store_names_itself_and_closes(tmp_path):
    import pickle

    path = tmp_path / "p.zip"
    a = zarrpy.create_array(path, shape=(4,), dtype="u1")
    a[:] = 5
    a.store.close()
    copy = pickle.loads(pickle.dumps(a.store))
    assert str(path) in copy.display_name
    np.testing.assert_array_equal(zarrpy.open_array(copy)[:], [5] * 4)
    copy.close()
    copy.close()
