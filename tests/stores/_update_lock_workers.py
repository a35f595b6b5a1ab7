"""What the processes of tests/stores/test_conditional_writes.py run (a
module of its own: a spawned process imports it, and nothing heavier)."""

from __future__ import annotations

import os
import time
from typing import Any

from zarrpy.stores import LocalStore


def append_under_lock(root: str, key: str, shared: str, tag: str, rounds: int, ready: Any, go: Any) -> None:
    """``rounds`` times: take ``key``'s update lock of the store at ``root``
    and append a start line, wait a little, append an end line to ``shared``."""
    store = LocalStore(root)
    ready.set()
    if not go.wait(60):
        raise TimeoutError("never told to go")
    for i in range(rounds):
        with store.locked_for_update([key]):
            _append(shared, f"{tag} start {i}\n")
            time.sleep(0.005)
            _append(shared, f"{tag} end {i}\n")


def _append(path: str, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


FORK_SCRIPT = """
import os, sys, time
from zarrpy.stores import LocalStore
from tests.stores._update_lock_workers import _append

root, shared = sys.argv[1], sys.argv[2]
store = LocalStore(root)
with store.locked_for_update(["c/0"]):
    pid = os.fork()
    if pid == 0:
        try:
            with store.locked_for_update(["c/0"]):
                _append(shared, "child locked\\n")
        finally:
            os._exit(0)
    time.sleep(0.3)
    _append(shared, "parent releases\\n")
os.waitpid(pid, 0)
"""
"""A parent holds a key's lock, forks, and lets go 0.3 s later; the child
takes the same lock: it must wait for the parent (an inherited descriptor
would share the parent's lock and take it at once)."""
