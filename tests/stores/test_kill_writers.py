"""Writers killed with SIGKILL at random moments lose nothing (issue 13).

A child process rewrites every chunk of an array with an ever larger value,
in a loop, until the test kills it with SIGKILL (at a random moment after it
starts writing). After each kill every chunk must decode to one constant that
some writer wrote (the old value or a newer one, never a mix or garbage), and
no chunk may go back to an older value. Killed writers leave temporary files;
those are never listed, and the next clean write (or ``zarrpy verify
--clean``) leaves none.

Children come from a ``forkserver`` with zarrpy preloaded, so one costs
milliseconds, not the 0.8 s of a fresh interpreter importing numpy and zarrpy.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from zarrpy.stores import LocalStore
from zarrpy.stores._tempfiles import TMP_PREFIX
from zarrpy.tools.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and forkserver are POSIX")

KILLS = 100
SHAPE, CHUNKS = (32, 32768), (1, 32768)  # 32 uncompressed 256 KiB chunks
STEP = 1_000_000  # writer i writes i * STEP + 1, i * STEP + 2, ...
WAIT_SECONDS = (0.0, 0.04)  # how long a writer runs once it has started writing

WRITER = """
import numpy as np
import zarrpy

a = zarrpy.open_array(path, mode="r+")
value = start
while True:
    a[...] = np.full(a.shape, value, dtype=a.dtype)
    value += 1
    ready.set()  # after a whole write: from now on it is always writing, however slow the machine
"""


def _temp_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob(f"{TMP_PREFIX}*")}


def _chunk_values(root: Path) -> list[float]:
    """The one value of each chunk, asserting it is one value."""
    data = zarrpy.open_array(str(root), mode="r")[...]
    values = []
    for row in data:
        assert np.all(row == row[0]), "a chunk holds a mix of two writes"
        values.append(float(row[0]))
    return values


def test_writers_killed_at_random_moments_lose_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "a.zarr"
    a = zarrpy.create_array(str(root), shape=SHAPE, chunks=CHUNKS, dtype="float64", compressors=None, fill_value=-1)
    a[...] = 0
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["numpy", "zarrpy"])
    rng = random.Random(13)
    seen: set[str] = set()
    before = [0.0] * SHAPE[0]
    mid_write = most = 0
    started = time.monotonic()
    for kill in range(1, KILLS + 1):
        ready = ctx.Event()
        child = ctx.Process(target=exec, args=(WRITER, {"path": str(root), "start": kill * STEP + 1, "ready": ready}))
        child.start()
        assert ready.wait(30), "the writer did not start"
        time.sleep(rng.uniform(*WAIT_SECONDS))
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(30)
        assert child.exitcode == -signal.SIGKILL

        left = _temp_files(root)
        mid_write += bool(left - seen)
        seen |= left
        most = max(most, len(left))
        assert not any(TMP_PREFIX in key for key in LocalStore(root).list())
        values = _chunk_values(root)
        for old, new in zip(before, values):
            assert new >= old, "a chunk went back to an older value"
            assert new == 0 or (new % STEP >= 1 and new // STEP <= kill), f"{new} was never written"
        before = values
    kill_seconds = time.monotonic() - started

    assert seen, "no kill landed mid-write: the test proves nothing"
    # Each writer's first write into a directory removed the dead ones' files.
    assert most <= 2 * SHAPE[0], f"{most} temporary files at once: stale ones were not removed"
    # Stale files of dead writers are reported (exit 1), then a clean write removes them.
    leftover = _temp_files(root)
    assert main(["verify", str(root)]) == (1 if leftover else 0)
    report = capsys.readouterr().out
    assert all(rel in report for rel in leftover)
    final = zarrpy.open_array(str(root), mode="r+")
    final[...] = 7
    assert _temp_files(root) == set()
    assert np.all(zarrpy.open_array(str(root))[...] == 7)
    with capsys.disabled():
        print(f"\n{KILLS} kills in {kill_seconds:.1f} s; {mid_write} left temporary files "
              f"({len(seen)} in all, at most {most} at once), {len(leftover)} at the end, 0 after the clean write")
