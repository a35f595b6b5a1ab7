"""The progress bar of cp and verify: drawn on stderr when it is a terminal (a pty here), never into a pipe."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys

import numpy as np
import pytest

import zarrpy
from zarrpy.tools.progress import Progress, format_bytes, wanted

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")


def _run(args: list[str], *, stderr_tty: bool) -> tuple[int, str, str]:
    """``python -m zarrpy ARGS`` with stderr on a new pty (or a pipe): (exit status, stdout, stderr)."""
    if not stderr_tty:
        proc = subprocess.run([sys.executable, "-m", "zarrpy", *args], capture_output=True, text=True, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "zarrpy", *args], stdout=subprocess.PIPE, stderr=slave,
                                stdin=subprocess.DEVNULL)
    finally:
        os.close(slave)
    seen = []
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        seen.append(data)
    out = proc.stdout.read().decode()
    proc.stdout.close()
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, out, b"".join(seen).decode(errors="replace")


@pytest.fixture
def source(tmp_path):
    a = zarrpy.create_array(str(tmp_path / "src.zarr"), shape=(512, 1024), dtype="float64", chunks=(64, 128))
    a[...] = np.arange(512 * 1024).reshape(512, 1024) % 97
    return tmp_path / "src.zarr"


def test_cp_draws_a_bar_on_a_terminal_only(source, tmp_path):
    code, out, err = _run(["cp", str(source), str(tmp_path / "a.zarr"), "--max-memory", "1MB"], stderr_tty=True)
    assert code == 0 and "copied 1 array(s)" in out
    assert "\r" in err and "cp [" in err and "100%" in err and "4.0 MB/4.0 MB" in err
    assert "\r" not in out  # the bar never goes to stdout
    code, out, err = _run(["cp", str(source), str(tmp_path / "b.zarr"), "--max-memory", "1MB"], stderr_tty=False)
    assert code == 0 and "copied 1 array(s)" in out and err == ""


def test_quiet_turns_the_bar_off(source, tmp_path):
    code, out, err = _run(["cp", str(source), str(tmp_path / "a.zarr"), "--quiet"], stderr_tty=True)
    assert code == 0 and err == ""
    code, out, err = _run(["verify", str(source), "--quiet"], stderr_tty=True)
    assert code == 0 and err == ""


def test_verify_draws_a_bar_on_a_terminal_only(source):
    code, out, err = _run(["verify", str(source)], stderr_tty=True)
    assert code == 0 and "verify [" in err and "64/64" in err and "100%" in err
    code, out, err = _run(["verify", str(source), "--json"], stderr_tty=False)
    assert code == 0 and err == "" and out.lstrip().startswith("{")


def test_progress_is_off_unless_the_stream_is_a_terminal():
    stream = io.StringIO()
    assert not wanted(stream=stream) and not wanted(True, stream)
    with Progress(100, "x", stream=stream) as bar:
        bar.advance(50)
    assert stream.getvalue() == ""


def test_progress_draws_throttled_and_ends_the_line():
    stream = io.StringIO()
    with Progress(10 << 20, "copy", in_bytes=True, enabled=True, stream=stream) as bar:
        for _ in range(1000):
            bar.advance(10 << 10)
    text = stream.getvalue()
    assert text.endswith("\n") and text.count("\r") < 50  # at most every 0.1 s, plus the first and last
    last = text.rstrip("\n").split("\r")[-1]
    assert last.startswith("copy [") and " 98%" in last and "9.8 MB/10.0 MB" in last
    assert format_bytes(512) == "512 B" and format_bytes(3 << 30) == "3.0 GB"
