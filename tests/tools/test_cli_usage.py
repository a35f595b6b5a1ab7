"""Usage errors exit 2 before any work (every option value that does not
parse), ``--traceback`` before or after the command, ``migrate`` on a Zarr V3
store, and data types printed one way in every command."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import zarrpy
from zarrpy.core.dtypes.optional import optional_of
from zarrpy.tools.cli import _parser, main

from .helpers import snapshot

URL_COMMANDS = ["info", "tree", "migrate", "consolidate", "verify"]
"""The commands that take one PATH_OR_URL (``cp`` takes two)."""


def usage_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``zarrpy ARGS``, expecting argparse's exit 2; its stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: zarrpy") and "Traceback" not in err
    return err


@pytest.fixture
def array_dir(tmp_path):
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(4, 4), dtype="int16", chunks=(2, 2))
    a[...] = np.arange(16).reshape(4, 4)
    return tmp_path / "a.zarr"


# -- exit 2 for every option value that does not parse -------------------------------------------

@pytest.mark.parametrize("spec", ["lz4", "blosc:foo:5", "blosc:lz4:5:weird", "zstd:99", "gzip:x", "none:1", ""])
def test_a_bad_compressor_is_a_usage_error_before_anything_is_written(spec, array_dir, tmp_path, capsys):
    err = usage_error(["cp", str(array_dir), str(tmp_path / "out.zarr"), "--compressor", spec], capsys)
    assert "argument --compressor:" in err
    assert not (tmp_path / "out.zarr").exists()


@pytest.mark.parametrize("spec", ["zstd:3", "blosc:zstd:5:bitshuffle", "gzip:6", "zlib:1", "none", "blosc"])
def test_good_compressors_still_parse(spec, array_dir, tmp_path, capsys):
    assert main(["cp", str(array_dir), str(tmp_path / "out.zarr"), "--compressor", spec, "--quiet"]) == 0
    np.testing.assert_array_equal(zarrpy.open_array(str(tmp_path / "out.zarr"))[...], np.arange(16).reshape(4, 4))


@pytest.mark.parametrize("option, value", [
    ("--chunks", "0,2"), ("--chunks", "a,b"), ("--shards", "-2"), ("--max-memory", "lots"),
    ("--max-memory", "0"), ("--zarr-format", "4"),
    ("--storage-options", "{bad"), ("--src-storage-options", "[1, 2]"), ("--dst-storage-options", '"s"'),
])
def test_every_bad_cp_option_is_a_usage_error(option, value, array_dir, tmp_path, capsys):
    err = usage_error(["cp", str(array_dir), str(tmp_path / "out.zarr"), option, value], capsys)
    assert f"argument {option}" in err
    assert not (tmp_path / "out.zarr").exists()


@pytest.mark.parametrize("command", URL_COMMANDS)
@pytest.mark.parametrize("value, says", [
    ("{not json", "not valid JSON"), ("[1]", "got a JSON array"), ("3", "got a JSON number"),
    ("null", "got a JSON null"), ("@/nonexistent/options.json", "cannot read"),
])
def test_bad_storage_options_are_a_usage_error_naming_the_option(command, value, says, array_dir, capsys):
    before = snapshot(array_dir)
    err = usage_error([command, f"s3://bucket/{array_dir.name}", "--storage-options", value], capsys)
    assert "argument --storage-options:" in err and says in err
    assert snapshot(array_dir) == before


@pytest.mark.parametrize("command", URL_COMMANDS)
def test_storage_options_for_a_local_path_are_a_usage_error(command, array_dir, capsys):
    before = snapshot(array_dir)
    err = usage_error([command, str(array_dir), "--storage-options", '{"anon": true}'], capsys)
    assert "argument --storage-options:" in err and "local path" in err
    assert snapshot(array_dir) == before


def test_empty_storage_options_go_with_a_local_path(array_dir, capsys):
    assert main(["info", str(array_dir), "--storage-options", "{}"]) == 0
    assert "int16" in capsys.readouterr().out


def test_storage_options_from_a_file(array_dir, tmp_path, capsys, monkeypatch):
    """``@FILE`` is read as the JSON object; what the command receives is that object."""
    import zarrpy.api

    seen = {}
    real_open = zarrpy.api.open

    def spy(*args, **kwargs):
        seen.update(kwargs.get("storage_options") or {})
        return real_open(str(array_dir), mode="r")

    monkeypatch.setattr(zarrpy.api, "open", spy)
    options = {"key": "k", "client_kwargs": {"endpoint_url": "http://127.0.0.1:9"}}
    (tmp_path / "o.json").write_text(json.dumps(options))
    assert main(["info", "memory://x.zarr", "--storage-options", f"@{tmp_path / 'o.json'}"]) == 0
    assert seen == options


def _cp_options(argv: list[str], monkeypatch) -> tuple[object, object]:
    """The (source, destination) storage options ``zarrpy cp ARGV`` hands to the copy."""
    import zarrpy.tools.cp

    got = {}

    def fake_copy(source, dest, **kwargs):
        got.update(src=kwargs["src_storage_options"], dst=kwargs["dst_storage_options"])
        raise ValueError("stop here")

    monkeypatch.setattr(zarrpy.tools.cp, "copy", fake_copy)
    assert main(["cp", *argv]) == 1
    return got["src"], got["dst"]


def test_cp_shared_options_go_to_each_url_side_and_a_side_option_wins(monkeypatch, capsys):
    a, b = '{"anon": true}', '{"key": "k"}'
    assert _cp_options(["s3://b/in.zarr", "out.zarr", "--storage-options", a], monkeypatch) == ({"anon": True}, None)
    assert _cp_options(["in.zarr", "s3://b/o.zarr", "--storage-options", a], monkeypatch) == (None, {"anon": True})
    assert _cp_options(["s3://b/i", "s3://b/o", "--storage-options", a], monkeypatch) == ({"anon": True},) * 2
    assert _cp_options(["s3://b/i", "s3://b/o", "--storage-options", a, "--dst-storage-options", b],
                       monkeypatch) == ({"anon": True}, {"key": "k"})
    assert _cp_options(["s3://b/i", "o.zarr", "--src-storage-options", b], monkeypatch) == ({"key": "k"}, None)


@pytest.mark.parametrize("argv, option", [
    (["in.zarr", "out.zarr", "--storage-options", '{"anon": true}'], "--storage-options"),
    (["in.zarr", "s3://b/o.zarr", "--src-storage-options", '{"anon": true}'], "--src-storage-options"),
    (["s3://b/i.zarr", "out.zarr", "--dst-storage-options", '{"anon": true}'], "--dst-storage-options"),
])
def test_cp_options_for_a_local_side_are_a_usage_error(argv, option, capsys):
    err = usage_error(["cp", *argv], capsys)
    assert f"argument {option}:" in err


def test_work_that_fails_stays_exit_1(array_dir, tmp_path, capsys):
    """An option that parses but does not fit the data is the work failing, not usage."""
    assert main(["cp", str(array_dir), str(tmp_path / "o.zarr"), "--chunks", "2,2,2"]) == 1
    assert capsys.readouterr().err.startswith("zarrpy: error: ")


# -- --traceback after the command ---------------------------------------------------------------

def test_every_command_takes_traceback_after_it():
    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                assert any("--traceback" in a.option_strings for a in sub._actions), name


@pytest.mark.parametrize("where", ["before", "after", "both"])
def test_traceback_before_or_after_the_command(where, tmp_path):
    target = str(tmp_path / "nope.zarr")
    args = {"before": ["--traceback", "info", target], "after": ["info", target, "--traceback"],
            "both": ["--traceback", "info", "--traceback", target]}[where]
    proc = subprocess.run([sys.executable, "-m", "zarrpy", *args], capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "ZARRPY_DEBUG"})
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "NodeNotFoundError" in proc.stderr


def test_without_traceback_the_error_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ZARRPY_DEBUG", raising=False)
    assert main(["info", str(tmp_path / "nope.zarr")]) == 1
    assert capsys.readouterr().err.count("\n") == 1


# -- migrate on a store that is already V3 --------------------------------------------------------

@pytest.mark.parametrize("extra", [[], ["--dry-run"], ["--remove-v2"]])
def test_migrate_of_a_v3_store_says_so_and_changes_nothing(extra, tmp_path, capsys):
    g = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="w")
    g.create_array("x", shape=(3,), dtype="int8")[...] = 1
    before = snapshot(tmp_path / "g.zarr")
    assert main(["migrate", str(tmp_path / "g.zarr"), *extra]) == 0
    out = capsys.readouterr().out
    assert "already Zarr V3" in out and "nothing to do" in out
    assert snapshot(tmp_path / "g.zarr") == before


def test_migrate_of_a_v2_store_is_not_already_v3(tmp_path, capsys):
    zarrpy.create_array(str(tmp_path / "v2.zarr"), shape=(3,), dtype="int8", zarr_format=2)
    assert main(["migrate", str(tmp_path / "v2.zarr")]) == 0
    out = capsys.readouterr().out
    assert "wrote zarr.json for 1 node(s)" in out and "already" not in out
    assert main(["migrate", str(tmp_path / "v2.zarr")]) == 0  # migrated, V2 documents still there
    assert "1 already migrated" in capsys.readouterr().out
    assert main(["migrate", str(tmp_path / "v2.zarr"), "--remove-v2"]) == 0
    assert "removed 2 V2 metadata document(s)" in capsys.readouterr().out
    assert main(["migrate", str(tmp_path / "v2.zarr")]) == 0
    assert "already Zarr V3" in capsys.readouterr().out


# -- the format and the data type, printed one way --------------------------------------------------

KINDS = {
    "s": dict(dtype="string"),
    "b": dict(dtype="bytes"),
    "i": dict(dtype=">i4", zarr_format=2),
    "f": dict(dtype="float64"),
    "t": dict(dtype="M8[ns]"),
    "o": dict(dtype=optional_of("int16")),
    "r": dict(dtype="int32", serializer="numcodecs.vlen-array"),
}
SHOWN = {"s": "string", "b": "bytes", "i": "int32", "f": "float64",
         "t": "numpy.datetime64(unit='ns', scale_factor=1)", "o": "optional int16", "r": "ragged int32"}


@pytest.fixture
def kinds(tmp_path):
    out = {}
    for name, kwargs in KINDS.items():
        path = tmp_path / f"{name}.zarr"
        zarrpy.create_array(str(path), shape=(3,), chunks=(2,), **kwargs)
        out[name] = path
    return out


@pytest.mark.parametrize("name", sorted(KINDS))
def test_one_dtype_name_in_info_tree_and_cp(name, kinds, tmp_path, capsys):
    shown = SHOWN[name]
    assert f"Data type          : {shown}\n" in str(zarrpy.open_array(str(kinds[name])).info) + "\n"
    assert main(["info", str(kinds[name])]) == 0
    assert f": {shown}\n" in capsys.readouterr().out
    assert main(["info", str(kinds[name]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["data_type"] == shown
    assert main(["tree", str(kinds[name])]) == 0
    assert f" {shown} chunks=" in capsys.readouterr().out
    assert main(["cp", str(kinds[name]), str(tmp_path / "copy.zarr"), "--quiet"]) == 0
    assert f" {shown}: V" in capsys.readouterr().out


def test_group_listings_use_the_same_names(kinds, tmp_path, capsys):
    g = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="w")
    for name, kwargs in KINDS.items():
        if kwargs.get("zarr_format") != 2:
            g.create_array(name, shape=(3,), chunks=(2,), **kwargs)
    expected = {name: SHOWN[name] for name in g.array_keys()}
    tree_lines = g.tree().splitlines()[1:]
    assert {line.split()[0]: line.strip().split(" ", 2)[2] for line in tree_lines} == expected
    assert main(["info", str(tmp_path / "g.zarr"), "--json"]) == 0
    members = json.loads(capsys.readouterr().out)["members"]
    assert {m["path"]: m["dtype"] for m in members} == expected
    assert main(["info", str(tmp_path / "g.zarr")]) == 0
    out = capsys.readouterr().out
    assert "StringDType" not in out and "object" not in out and "(Zarr V3)" in out
    assert main(["tree", str(tmp_path / "g.zarr"), "--json"]) == 0
    tree_doc = json.loads(capsys.readouterr().out)
    assert {m["name"]: m["dtype"] for m in tree_doc["members"]} == expected


def test_tree_shows_each_nodes_format(tmp_path, capsys):
    v2 = zarrpy.open_group(str(tmp_path / "v2.zarr"), mode="w", zarr_format=2)
    v2.create_group("sub").create_array("x", shape=(2,), dtype="int8")
    assert main(["tree", str(tmp_path / "v2.zarr")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "/ V2" and lines[1].endswith("sub V2") and " x V2 (2,) int8 " in lines[2]
