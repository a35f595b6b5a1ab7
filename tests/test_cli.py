"""The zarrpy command: demo, info (text and JSON), exit codes and error lines."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import zarrpy
from zarrpy.tools.cli import main


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
    assert main(["info", str(tmp_path / "nothing.zarr")]) == 1
    assert "zarr.json" in capsys.readouterr().err


def test_module_entry_point_runs(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "zarrpy", "demo", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "read back identical" in proc.stdout


def run_cli(*args, env=None):
    """``python -m zarrpy ARGS`` as a real process."""
    return subprocess.run([sys.executable, "-m", "zarrpy", *args], capture_output=True, text=True,
                          timeout=120, env=env)


def assert_one_error_line(proc, *fragments):
    """Exit 1 with exactly one ``zarrpy: error:`` line naming ``fragments``, no traceback."""
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("zarrpy: error: ")
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def test_version():
    proc = run_cli("--version")
    assert proc.returncode == 0
    from zarrpy.core import vlen_kernels

    assert proc.stdout.strip().splitlines() == [f"zarrpy {zarrpy.__version__}",
                                                f"strings: {vlen_kernels.IMPLEMENTATION}"]


def test_version_and_info_name_the_pure_python_fallback(tmp_path):
    from zarrpy.core import vlen_kernels

    env = {**os.environ, "ZARRPY_PURE_PYTHON": "1"}
    proc = subprocess.run([sys.executable, "-m", "zarrpy", "--version"], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.stdout.strip().splitlines()[1] == "strings: pure Python (ZARRPY_PURE_PYTHON is set)"
    path = str(tmp_path / "a.zarr")
    zarrpy.create_array(path, shape=(2,), dtype=str, chunks=(2,))
    info = subprocess.run([sys.executable, "-m", "zarrpy", "info", path], capture_output=True, text=True, env=env,
                          timeout=60)
    assert info.returncode == 0 and "pure Python" in info.stderr and "Traceback" not in info.stderr
    plain = subprocess.run([sys.executable, "-m", "zarrpy", "info", path], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "ZARRPY_PURE_PYTHON"}, timeout=60)
    assert plain.returncode == 0 and (plain.stderr == "") == vlen_kernels.COMPILED


def test_info_json_for_an_array(tmp_path, capsys):
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(6, 4), dtype="float32", chunks=(3, 2),
                            attributes={"u": 1}, fill_value=np.float32(1.5))
    a[:3, :] = 2
    assert main(["info", "--json", str(tmp_path / "a.zarr")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["node_type"] == "array"
    assert doc["shape"] == [6, 4] and doc["chunk_shape"] == [3, 2]
    assert doc["data_type"] == "float32" and doc["zarr_format"] == 3
    assert doc["fill_value"] == 1.5 and doc["read_only"] is True
    assert doc["name"] == "/"


def test_info_json_for_a_group_lists_every_member(tmp_path):
    g = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="w", attributes={"title": "t", "n": 3})
    g.create_group("sub").create_array("y", shape=(5,), dtype="int8", chunks=(2,))
    g.create_array("x", shape=(2, 3), dtype="uint16")
    proc = run_cli("info", str(tmp_path / "g.zarr"), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["node_type"] == "group" and doc["name"] == "/" and doc["zarr_format"] == 3
    assert doc["attributes"] == {"title": "t", "n": 3}
    members = {m["path"]: m for m in doc["members"]}
    assert set(members) == {"sub", "sub/y", "x"}
    assert members["sub"]["node_type"] == "group"
    assert members["sub/y"] == {"path": "sub/y", "node_type": "array", "shape": [5], "chunks": [2], "dtype": "int8"}
    assert members["x"]["shape"] == [2, 3] and members["x"]["dtype"] == "uint16"


def test_info_json_of_a_v2_group_path(tmp_path, capsys):
    g = zarrpy.open_group(str(tmp_path / "v2.zarr"), mode="w", zarr_format=2)
    g.create_group("inner", attributes={"k": [1, 2]})
    assert main(["info", str(tmp_path / "v2.zarr"), "--path", "inner", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"node_type": "group", "name": "/inner", "zarr_format": 2, "attributes": {"k": [1, 2]},
                   "members": []}


def test_missing_path_is_one_error_line(tmp_path):
    target = str(tmp_path / "nope.zarr")
    assert_one_error_line(run_cli("info", target), target, "node path '/'", "zarr.json")


@pytest.mark.parametrize("document", [b"{not json", b"[1, 2]", b'{"zarr_format": 3, "node_type": "array"}',
                                      b"\xff\xfe"])
def test_corrupt_zarr_json_is_one_error_line(tmp_path, document):
    (tmp_path / "bad.zarr").mkdir()
    (tmp_path / "bad.zarr" / "zarr.json").write_bytes(document)
    assert_one_error_line(run_cli("info", str(tmp_path / "bad.zarr")), "bad.zarr", "zarr.json")


def test_unwritable_path_is_one_error_line(tmp_path):
    # A directory where migrate must write zarr.json: the write fails, whoever runs the test.
    zarrpy.create_array(str(tmp_path / "v2.zarr"), shape=(3,), dtype="int8", zarr_format=2)
    (tmp_path / "v2.zarr" / "zarr.json").mkdir()
    assert_one_error_line(run_cli("migrate", str(tmp_path / "v2.zarr")), "zarr.json", "v2.zarr")


def test_read_only_store_is_one_error_line(tmp_path, capsys, monkeypatch):
    # The CLI opens its own stores writable; a read-only filesystem shows up as PermissionError.
    import zarrpy.tools.migrate

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "ro.zarr"))

    monkeypatch.setattr(zarrpy.tools.migrate, "migrate_v3", refuse)
    assert main(["migrate", str(tmp_path / "ro.zarr")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("zarrpy: error: PermissionError: ")
    assert "ro.zarr" in err


@pytest.mark.parametrize("exc", [ValueError("bad value"), TypeError("bad type"), KeyError("missing-key"),
                                 ImportError("No module named 's3fs'"), OSError("disk\nfull")])
def test_expected_failures_are_one_line(tmp_path, capsys, monkeypatch, exc):
    import zarrpy

    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr(zarrpy, "consolidate_metadata", fail)
    assert main(["consolidate", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"zarrpy: error: {type(exc).__name__}: ")
    assert " ".join(str(exc.args[0]).split()) in err


def test_traceback_switch_shows_the_traceback(tmp_path):
    target = str(tmp_path / "nope.zarr")
    for proc in (run_cli("--traceback", "info", target),
                 run_cli("info", target, env={**os.environ, "ZARRPY_DEBUG": "1"})):
        assert proc.returncode == 1
        assert "Traceback" in proc.stderr and "NodeNotFoundError" in proc.stderr


@pytest.mark.parametrize("args", [[], ["bogus"], ["info"], ["info", "x.zarr", "--no-such-option"]])
def test_bad_usage_exits_2(args):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: zarrpy")
    assert "Traceback" not in proc.stderr


def test_help_reads_as_plain_text():
    for args in (["--help"], ["info", "--help"], ["migrate", "--help"]):
        proc = run_cli(*args)
        assert proc.returncode == 0
        assert "``" not in proc.stdout and ":func:" not in proc.stdout
    top = run_cli("--help").stdout
    assert "Zarr" in top and "--version" in top and "--traceback" in top
    assert "info" in top and "consolidate" in top


def _plant_temp(directory, basename, pid):
    from zarrpy.stores._tempfiles import HOST_TAG, TMP_PREFIX

    path = directory / f"{TMP_PREFIX}{basename}-{HOST_TAG}-{pid}-00112233aabbccdd"
    path.write_bytes(b"half a chunk")
    return path


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_verify_lists_stale_temp_files_and_clean_removes_them(tmp_path, capsys):
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(4,), dtype="int8", chunks=(2,))
    a[...] = 1
    target = str(tmp_path / "a.zarr")
    assert main(["verify", target]) == 0
    assert "no stale temporary files" in capsys.readouterr().out
    stale = _plant_temp(tmp_path / "a.zarr" / "c", "0", _dead_pid())
    live = _plant_temp(tmp_path / "a.zarr", "zarr.json", os.getpid())
    assert main(["verify", target]) == 1
    out = capsys.readouterr().out
    assert f"stale temporary file: {os.path.join('c', stale.name)}" in out
    assert f"in progress (kept): {live.name}" in out
    assert "1 stale temporary file(s), 12 bytes" in out and "verify --clean" in out
    assert stale.exists()
    assert main(["verify", "--clean", target]) == 0
    assert "removed 1 stale temporary file(s)" in capsys.readouterr().out
    assert not stale.exists() and live.exists()
    assert main(["verify", target]) == 0
    assert np.array_equal(zarrpy.open_array(target)[...], [1, 1, 1, 1])


def test_verify_of_a_missing_or_unreadable_store_is_one_error_line(tmp_path):
    # verify now decodes chunks in any store (zip, fsspec URLs): a zip is no longer refused
    # for being one; only its broken zarr.json is an error (tests/tools/test_cli_verify.py
    # verifies a good zip store).
    assert_one_error_line(run_cli("verify", str(tmp_path / "nope.zarr")), "nope.zarr")
    import zipfile

    with zipfile.ZipFile(tmp_path / "s.zip", "w") as zf:
        zf.writestr("zarr.json", b"{}")
    assert_one_error_line(run_cli("verify", str(tmp_path / "s.zip")), "s.zip", "zarr.json")
