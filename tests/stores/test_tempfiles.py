"""Temporary files: named after key and writer, stale when the writer is gone,
removed by the next write into their directory, never read as data."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from zarrpy.errors import InvalidKeyError
from zarrpy.stores import LocalStore
from zarrpy.stores import _tempfiles as tf


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert not tf.pid_alive(proc.pid)
    return proc.pid


def plant(directory: Path, basename: str, pid: int, host: str = tf.HOST_TAG, age: float = 0) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{tf.TMP_PREFIX}{basename}-{host}-{pid}-00112233aabbccdd"
    path.write_bytes(b"half a chunk")
    if age:
        then = time.time() - age
        os.utime(path, (then, then))
    return path


def test_names_record_key_host_and_pid() -> None:
    name = tf.temp_name("0.1-2")
    assert name.startswith(tf.TMP_PREFIX + "0.1-2-")
    assert tf.owner_of(name) == (tf.HOST_TAG, os.getpid())
    assert len(tf.temp_name("x" * 300)) < 200  # long basenames are cut
    assert tf.owner_of(".zarrpy-tmp-0123abcd") is None  # older zarrpy: no owner
    assert tf.owner_of("zarr.json") is None


def test_staleness(tmp_path: Path) -> None:
    now = time.time()
    assert tf.is_stale(plant(tmp_path, "k", dead_pid()).name, now)
    assert not tf.is_stale(plant(tmp_path, "k", os.getpid()).name, now)  # a live writer: ours
    assert not tf.is_stale(plant(tmp_path, "k", dead_pid(), host="0badbeef").name, now)  # another host
    old = now - tf.STALE_AFTER_SECONDS - 1
    assert tf.is_stale(plant(tmp_path, "k", os.getpid()).name, now=now, mtime=old)
    assert tf.is_stale(".zarrpy-tmp-0123abcd", mtime=old, now=now)
    assert not tf.is_stale(".zarrpy-tmp-0123abcd", mtime=now, now=now)


def test_next_write_into_the_directory_removes_stale_files(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.set("a/c/0", b"old")
    chunks = tmp_path / "a" / "c"
    stale = [plant(chunks, "0", dead_pid()), plant(chunks, "1", dead_pid(), age=3600),
             plant(chunks, "9", os.getpid(), host="0badbeef", age=3600)]
    live = [plant(chunks, "0", os.getpid()), plant(chunks, "0", dead_pid(), host="0badbeef")]
    assert sorted(store.list()) == ["a/c/0"]  # never listed, never read
    assert store.get("a/c/0") == b"old"
    LocalStore(tmp_path).set("a/c/0", b"new")
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in live)
    assert sorted(p.name for p in chunks.iterdir() if not tf.is_temp_name(p.name)) == ["0"]
    # One look per directory per minute per store object: writing many chunks
    # does not rescan a large directory each time.
    again = plant(chunks, "0", dead_pid())
    store.set("a/c/1", b"x")
    store.set("a/c/1", b"y")
    assert again.exists()
    LocalStore(tmp_path).set("a/c/2", b"z")
    assert not again.exists()


def test_a_failed_write_removes_its_own_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore(tmp_path)
    store.set("k", b"old")
    monkeypatch.setattr(os, "replace", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        store.set("k", b"new")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"]
    assert store.get("k") == b"old"


def test_store_reports_and_removes_stale_files(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.set("g/a/c/0/0", b"1")
    stale = plant(tmp_path / "g" / "a" / "c" / "0", "0", dead_pid())
    live = plant(tmp_path / "g", "zarr.json", os.getpid())
    found = dict(store.temp_files())
    assert found == {str(stale): True, str(live): False}
    assert store.remove_stale_temp_files() == [str(stale)]
    assert not stale.exists() and live.exists()


def test_no_key_names_a_temporary_file(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    planted = plant(tmp_path / "a", "k", os.getpid())
    for key in (f"a/{planted.name}", f"{tf.TMP_PREFIX}x/k"):
        for call in (store.get, lambda k: store.set(k, b"v"), store.delete):
            with pytest.raises(InvalidKeyError, match="temporary files"):
                call(key)
    assert planted.read_bytes() == b"half a chunk"
