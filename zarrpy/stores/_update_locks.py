"""Update locks of local stores: read-modify-write across processes with no lost update.

A process that updates part of an object (inner chunks of a shard) reads it,
merges and writes it back; two processes doing that at once on one object
would each drop the other's part. Local files have no conditional write, so
:meth:`~zarrpy.stores.local.LocalStore.locked_for_update` holds an
exclusive advisory lock per key (``flock``; ``msvcrt.locking`` on Windows)
for the whole read-modify-write.

**Where the locks are.** Outside the store, so its listing never changes:
``<temp dir>/zarrpy-update-locks-<user>/<digest>/NNNN.lock``, where the
digest is of the store root's ``(st_dev, st_ino)``, so two processes that
name one directory by different paths (a symbolic link, a relative path)
share its locks. Keys are striped over :data:`STRIPES` lock files by a
stable hash (CRC-32 of the key), taken in sorted order so that updates of
several keys cannot deadlock; two keys on one stripe merely wait for each
other.

**Kept open.** A lock file is created on first use and its descriptor kept
for the next update (at most :data:`MAX_OPEN` idle ones per process; the
least recently used are closed beyond that). Threads of one process share a
descriptor, and ``flock`` does not exclude a descriptor from itself, so a
thread lock per stripe serialises them first. A forked child reopens every
lock file: an inherited descriptor shares its lock with the parent's.

**The limits.** The locks exclude processes of one machine that run as one
user and agree on the temporary directory (``TMPDIR``). Processes on several
machines writing one directory on a network file system are not excluded:
give them a :class:`~zarrpy.pipeline.synchronizer.ProcessSynchronizer` on
that file system (or a lock server's ``LockSynchronizer``).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
import tempfile
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from ..errors import StoreError

STRIPES = 1024
"""Lock files per store root."""

MAX_OPEN = 256
"""Idle lock-file descriptors a process keeps open (over every store)."""

_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def lock_file(fd: int) -> None:
        """Block until this process holds the exclusive lock of the file ``fd``
        (its first byte: ``LK_LOCK`` gives up after 10 s, so ask again)."""
        while True:
            os.lseek(fd, 0, os.SEEK_SET)
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
            except OSError as exc:
                if exc.errno != errno.EDEADLOCK:
                    raise

    def unlock_file(fd: int) -> None:
        """Let go of :func:`lock_file`'s lock."""
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def lock_file(fd: int) -> None:
        """Block until the open file ``fd`` holds an exclusive ``flock``."""
        fcntl.flock(fd, fcntl.LOCK_EX)

    def unlock_file(fd: int) -> None:
        """Let go of :func:`lock_file`'s lock."""
        fcntl.flock(fd, fcntl.LOCK_UN)


def stripe_of(key: str) -> int:
    """The lock stripe of ``key``: the same in every process and run."""
    return zlib.crc32(key.encode("utf-8")) % STRIPES


def _user() -> str:
    getuid = getattr(os, "getuid", None)
    if getuid is not None:
        return str(getuid())
    try:
        import getpass

        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name to be had: one directory for all
        return "user"


_BASES: set[str] = set()  # base directories checked in this process
_MADE: dict[tuple[int, int], str] = {}  # (st_dev, st_ino) of a root -> its lock directory, made


def _base() -> str:
    """This user's directory of update locks, made (mode 0700) and checked
    to be a real directory of this user's on first use."""
    base = os.path.join(tempfile.gettempdir(), f"zarrpy-update-locks-{_user()}")
    if base in _BASES:
        return base
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(base)
    getuid = getattr(os, "getuid", None)
    if not stat.S_ISDIR(st.st_mode) or (getuid is not None and st.st_uid != getuid()):
        raise OSError(errno.EPERM, f"{base!r} is not a directory of this user's: no update locks there")
    _BASES.add(base)
    return base


def lock_dir(root: str) -> str:
    """The directory of the update locks of the store whose root is ``root``
    (made if missing, as is ``root``: a store's first write makes it anyway)."""
    try:
        st = os.stat(root)
    except FileNotFoundError:
        os.makedirs(root, exist_ok=True)
        st = os.stat(root)
    directory = _MADE.get((st.st_dev, st.st_ino))
    if directory is None:
        digest = hashlib.sha256(f"{st.st_dev}:{st.st_ino}".encode()).hexdigest()[:32]
        directory = os.path.join(_base(), digest)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        _MADE[(st.st_dev, st.st_ino)] = directory
    return directory


class _Stripe:
    """One lock file of one store, as this process holds it."""

    __slots__ = ("path", "fd", "users", "threads")

    def __init__(self, path: str):
        self.path = path
        self.fd: int | None = None
        self.users = 0  # threads holding or waiting for it: never closed while > 0
        self.threads = threading.Lock()


class _Table:
    """The lock files this process has open (one table per process)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.stripes: OrderedDict[str, _Stripe] = OrderedDict()


_table = _Table()


def _current() -> _Table:
    """This process's table (a new, empty one in a forked child)."""
    global _table
    if _table.pid != os.getpid():
        _table = _Table()
    return _table


def _after_fork() -> None:
    """In a forked child: close the inherited descriptors (they share the
    parent's locks) before anything else runs, and start a new table."""
    global _table
    old, _table = _table, _Table()
    for s in old.stripes.values():
        if s.fd is not None:
            try:
                os.close(s.fd)
            except OSError:
                pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _acquire(path: str) -> tuple[_Table, _Stripe]:
    table = _current()
    with table.lock:
        s = table.stripes.get(path)
        if s is None:
            s = table.stripes[path] = _Stripe(path)
        table.stripes.move_to_end(path)
        s.users += 1
    try:
        s.threads.acquire()
        try:
            if s.fd is None:
                s.fd = os.open(path, _OPEN_FLAGS, 0o600)
            lock_file(s.fd)
        except BaseException:
            s.threads.release()
            raise
    except BaseException:
        with table.lock:
            s.users -= 1
        raise
    return table, s


def _release(table: _Table, s: _Stripe) -> None:
    try:
        assert s.fd is not None
        unlock_file(s.fd)
    finally:
        s.threads.release()
        with table.lock:
            s.users -= 1
            _close_idle(table)


def _close_idle(table: _Table) -> None:
    """Close the least recently used idle lock files beyond :data:`MAX_OPEN` (under ``table.lock``)."""
    excess = len(table.stripes) - MAX_OPEN
    if excess <= 0:
        return
    for path in [p for p, s in table.stripes.items() if s.users == 0][:excess]:
        s = table.stripes.pop(path)
        if s.fd is not None:
            try:
                os.close(s.fd)
            except OSError:
                pass


@contextmanager
def update_locks(root: str, keys: Iterable[str]) -> Iterator[None]:
    """Hold the update locks of ``keys`` of the store rooted at ``root``
    (its real path) for the block; raises :class:`~zarrpy.errors.StoreError`
    when the lock files cannot be made or locked."""
    stripes = sorted({stripe_of(key) for key in keys})
    if not stripes:
        yield
        return
    held: list[tuple[_Table, _Stripe]] = []
    try:
        try:
            directory = lock_dir(root)
            for n in stripes:
                held.append(_acquire(os.path.join(directory, f"{n:04d}.lock")))
        except OSError as exc:
            raise StoreError(f"cannot take the update locks of the store at {root!r}: {exc}") from exc
        yield
    finally:
        for table, s in reversed(held):
            _release(table, s)


__all__ = ["MAX_OPEN", "STRIPES", "lock_dir", "lock_file", "stripe_of", "unlock_file", "update_locks"]
