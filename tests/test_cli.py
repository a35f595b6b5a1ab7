"""The zarrpy command: demo and info."""

import subprocess
import sys

import numpy as np

import zarrpy
from zarrpy.cli import main


def test_demo_keeps_a_readable_array_in_a_given_directory(tmp_path, capsys):
    assert main(["demo", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "read back identical" in out
    assert "uint16" in out and "(1000, 1000)" in out and "zstd" in out
    a = zarrpy.open_array(str(tmp_path / "demo.zarr"))
    assert a.shape == (1000, 1000) and a.attrs["units"] == "counts"
    assert np.all(a[100:200, 300:400] == 7)


def test_info_describes_arrays_and_groups(tmp_path, capsys):
    g = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="w", attributes={"title": "t"})
    g.create_group("sub").create_array("y", shape=(3,), dtype="int8", chunks=(2,))
    assert main(["info", str(tmp_path / "g.zarr")]) == 0
    out = capsys.readouterr().out
    assert "title" in out and "sub" in out and "y (3,) int8" in out
    assert main(["info", str(tmp_path / "g.zarr"), "--path", "sub/y"]) == 0
    assert "int8" in capsys.readouterr().out


def test_info_on_a_missing_node_is_a_clear_error(tmp_path, capsys):
    assert main(["info", str(tmp_path / "nothing.zarr")]) == 2
    assert "zarr.json" in capsys.readouterr().err


def test_module_entry_point_runs(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "zarrpy", "demo", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "read back identical" in proc.stdout
