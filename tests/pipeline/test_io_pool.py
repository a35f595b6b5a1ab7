"""The IO thread pool (:mod:`zarrpy.pipeline.io_pool`): order, errors, inline
runs, its size setting, fork, and no deadlock when its tasks use the chunk
pool or itself. Every wait here is bounded: a hang fails the test."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from zarrpy.pipeline import io_pool
from zarrpy.pipeline.concurrency import map_chunks
from zarrpy.pipeline.io_pool import map_io


@pytest.fixture
def small_pool():
    """An IO pool of two threads for the test, the default one after it."""
    io_pool.set_io_threads(2)
    yield
    io_pool.set_io_threads(None)


def _bounded(fn, timeout: float = 20.0):
    """``fn()`` on a thread of its own; fails the test if it has not ended in ``timeout`` s."""
    out: dict[str, object] = {}

    def target():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "map_io did not finish: deadlock"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out["value"]


def test_results_keep_the_order_and_the_items_run_side_by_side():
    barrier = threading.Barrier(8, timeout=10)

    def item(i):
        barrier.wait()  # all 8 at once, or BrokenBarrierError
        return i * i

    assert map_io(item, range(8)) == [i * i for i in range(8)]


def test_zero_and_one_item_run_inline():
    caller = threading.get_ident()
    assert map_io(lambda x: x, []) == []
    assert map_io(lambda _: threading.get_ident(), ["only"]) == [caller]


def test_the_first_error_in_input_order_after_every_item_ended():
    ended = []

    def item(i):
        if i == 3:
            time.sleep(0.05)  # fails after item 5 has failed
            raise KeyError("three")
        if i == 5:
            raise ValueError("five")
        time.sleep(0.01)
        ended.append(i)
        return i

    with pytest.raises(KeyError, match="three"):
        map_io(item, range(8))
    assert sorted(ended) == [0, 1, 2, 4, 6, 7]  # nothing left running


def test_tasks_using_the_chunk_pool_do_not_deadlock(small_pool):
    def item(i):
        return sum(map_chunks(lambda j: i * j, range(50)))

    assert _bounded(lambda: map_io(item, range(40))) == [i * sum(range(50)) for i in range(40)]


def test_chunk_pool_tasks_may_call_map_io():
    def chunk(i):
        return map_io(lambda j: i + j, range(5))

    assert _bounded(lambda: map_chunks(chunk, range(30))) == [[i + j for j in range(5)] for i in range(30)]


def test_nested_map_io_with_every_thread_busy_does_not_deadlock(small_pool):
    """Each of 6 tasks waits on 4 more on a pool of 2: the callers run them."""
    def inner(i):
        time.sleep(0.002)
        return i

    def outer(i):
        return sum(map_io(inner, range(i, i + 4)))

    assert _bounded(lambda: map_io(outer, range(6))) == [4 * i + 6 for i in range(6)]


def test_nested_map_io_still_runs_side_by_side():
    """A task of the pool that calls map_io gets its items in flight at once
    (a sharded read inside a many-array read)."""
    barrier = threading.Barrier(6, timeout=10)

    def outer(i):
        return map_io(lambda j: barrier.wait() >= 0, range(3))

    assert map_io(outer, range(2)) == [[True] * 3] * 2


def test_size_setting(monkeypatch):
    monkeypatch.setenv(io_pool.ENV_VAR, "3")
    assert io_pool.io_threads() == 3
    monkeypatch.delenv(io_pool.ENV_VAR)
    assert io_pool.io_threads() == io_pool.DEFAULT_IO_THREADS == 64
    monkeypatch.setenv(io_pool.ENV_VAR, "many")
    with pytest.raises(ValueError, match="ZARRPY_IO_THREADS='many'"):
        io_pool.io_threads()
    monkeypatch.delenv(io_pool.ENV_VAR)
    try:
        io_pool.set_io_threads(5)
        assert io_pool.io_threads() == 5 and io_pool.get_io_pool()._max_workers == 5
    finally:
        io_pool.set_io_threads(None)
    with pytest.raises(ValueError, match="positive number of threads"):
        io_pool.set_io_threads(0)


FORK_SCRIPT = """
import os, warnings
warnings.simplefilter("ignore", DeprecationWarning)  # forking with threads is the point
from zarrpy.pipeline import io_pool
io_pool.map_io(lambda x: x, range(3))
assert io_pool._pool is not None
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    fresh = io_pool._pool is None
    os.write(write, repr((fresh, io_pool.map_io(lambda x: x + 1, range(4)))).encode())
    os._exit(0)
os.close(write)
print(os.read(read, 1000).decode())
assert os.waitpid(pid, 0)[1] == 0
"""


def test_a_forked_child_makes_its_own_pool():
    done = subprocess.run([sys.executable, "-c", FORK_SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(True, [1, 2, 3, 4])"
