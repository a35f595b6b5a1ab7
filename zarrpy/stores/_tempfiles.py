"""Temporary files of in-progress writes: their names, and when one is stale.

A writer puts a value in ``.zarrpy-tmp-<basename>-<host>-<pid>-<hex>`` next
to its target and renames it over the target. A writer that dies before the
rename (SIGKILL, power loss) leaves the file behind; the name says whose it
was, so a later writer or ``zarrpy verify --clean`` can tell a dead writer's
file from a live one's:

- written on this host by a process that no longer exists: stale;
- older than :data:`STALE_AFTER_SECONDS` (any host; a pid reused by another
  process; names from older zarrpy versions without a pid): stale;
- anything else belongs to a writer that may still be running and is kept.

Stores list no name starting with :data:`TMP_PREFIX`, so a temporary file is
never read as data.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
import uuid
from collections.abc import Iterator
from typing import NamedTuple

TMP_PREFIX = ".zarrpy-tmp-"

STALE_AFTER_SECONDS = 15 * 60
"""A temporary file untouched this long is stale whoever wrote it: no write
holds one that long without writing to it."""

_BASENAME_MAX = 120  # keeps names well under the usual 255-byte limit


def _host_tag() -> str:
    return hashlib.sha1(socket.gethostname().encode("utf-8", "surrogateescape")).hexdigest()[:8]


HOST_TAG = _host_tag()


def temp_name(basename: str) -> str:
    """A fresh temporary file name for a write of ``basename`` by this process."""
    return f"{TMP_PREFIX}{basename[:_BASENAME_MAX]}-{HOST_TAG}-{os.getpid()}-{uuid.uuid4().hex[:16]}"


def is_temp_name(name: str) -> bool:
    return name.startswith(TMP_PREFIX)


class TempOwner(NamedTuple):
    host: str
    pid: int


def owner_of(name: str) -> TempOwner | None:
    """The host tag and pid a temporary file name records, or None if it
    records none (another naming scheme)."""
    if not is_temp_name(name):
        return None
    parts = name[len(TMP_PREFIX) :].rsplit("-", 3)
    if len(parts) != 4 or not parts[2].isdigit():
        return None
    return TempOwner(parts[1], int(parts[2]))


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (a zombie counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    except OSError:
        return True  # cannot tell (e.g. Windows): keep the file, age decides
    return True


def is_stale(name: str, mtime: float, now: float | None = None) -> bool:
    """Whether the temporary file ``name`` (last modified at ``mtime``) was
    left by a writer that is gone; see the module docstring."""
    now = time.time() if now is None else now
    if now - mtime > STALE_AFTER_SECONDS:
        return True
    owner = owner_of(name)
    return owner is not None and owner.host == HOST_TAG and not pid_alive(owner.pid)


def stale_in(directory: str, now: float | None = None) -> Iterator[str]:
    """Paths of the stale temporary files directly in ``directory``."""
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if not is_temp_name(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if is_stale(entry.name, st.st_mtime, now):
            yield entry.path


def remove_stale_in(directory: str) -> int:
    """Remove the stale temporary files directly in ``directory``; return how
    many were removed. Files that vanish meanwhile are not an error."""
    removed = 0
    for path in list(stale_in(directory)):
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue
        removed += 1
    return removed


__all__ = [
    "STALE_AFTER_SECONDS",
    "TMP_PREFIX",
    "is_stale",
    "is_temp_name",
    "owner_of",
    "pid_alive",
    "remove_stale_in",
    "stale_in",
    "temp_name",
]
