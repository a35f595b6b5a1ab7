"""Synchronizers: per-key locks across processes, for read-modify-write of shared chunks.

Within one process, :func:`~zarrpy.pipeline.locks.locked` serialises the
threads that update one chunk or shard. Processes that write parts of the
same chunk or shard (inner chunks of one shard from dask workers, say) each
read the old value, merge and store, and without a shared lock the last store
drops the others' updates. A synchronizer is that shared lock:

- :class:`ProcessSynchronizer` keeps lock files in a directory all writers
  can reach (a local or shared file system with working ``flock``);
- :class:`LockSynchronizer` adapts any named lock (``distributed.Lock`` of a
  dask cluster: ``LockSynchronizer(distributed.Lock)``).

Keys are locked in sorted order, so writes that lock several keys cannot
deadlock. Give one to ``open_array``, ``create_array``, ``open_group`` or
``open`` (``synchronizer=``); arrays reached through a group share it, and
it travels with a pickled array.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Protocol

from ..stores._update_locks import lock_file as _lock_fd, unlock_file as _unlock_fd


class Synchronizer(Protocol):
    """What chunk I/O asks of a synchronizer."""

    def locked(self, token: Hashable, keys: Iterable[str]) -> AbstractContextManager[None]:
        """A context manager holding the locks of ``keys`` of the store named by ``token``."""
        ...


class NamedLock(Protocol):
    """What :class:`LockSynchronizer` needs of a lock: ``acquire()`` blocks
    until it holds the lock, ``release()`` lets go (``distributed.Lock``,
    ``multiprocessing`` locks)."""

    def acquire(self) -> object:
        """Block until the lock is held."""
        ...

    def release(self) -> object:
        """Let go of the lock."""
        ...


def _lock_names(token: Hashable, keys: Iterable[str], stripes: int) -> list[str]:
    """Sorted, de-duplicated lock names: a hash of (store, key) modulo ``stripes``,
    the same in every process (``hash()`` is salted per process; sha256 is not)."""
    names = set()
    for key in keys:
        digest = hashlib.sha256(repr((token, key)).encode()).digest()
        names.add(f"{int.from_bytes(digest[:8], 'little') % stripes:05d}")
    return sorted(names)


class ProcessSynchronizer:
    """Per-key file locks in the directory ``path``, shared by every process
    that writes the same arrays (zarr-python's name).

    Locks are striped over ``stripes`` lock files (created on first use), so
    the directory stays small however many keys there are; two keys on one
    stripe only wait for each other. ``path`` must be on a file system whose
    ``flock`` works across the writers' machines (local disks do; some
    network file systems do not).
    """

    def __init__(self, path: str | os.PathLike[str], *, stripes: int = 4096):
        if stripes < 1:
            raise ValueError(f"stripes must be positive, got {stripes}")
        self.path = os.fspath(path)
        self.stripes = stripes
        os.makedirs(self.path, exist_ok=True)

    @contextmanager
    def locked(self, token: Hashable, keys: Iterable[str]) -> Iterator[None]:
        """Hold the lock files of ``keys`` (exclusive ``flock``, taken in sorted order) for the block."""
        fds: list[int] = []
        try:
            for name in _lock_names(token, keys, self.stripes):
                fd = os.open(os.path.join(self.path, f"{name}.lock"), os.O_RDWR | os.O_CREAT, 0o666)
                try:
                    _lock_fd(fd)
                except BaseException:
                    os.close(fd)
                    raise
                fds.append(fd)
            yield
        finally:
            for fd in reversed(fds):
                try:
                    _unlock_fd(fd)
                finally:
                    os.close(fd)

    def __repr__(self) -> str:
        return f"ProcessSynchronizer({self.path!r})"


class LockSynchronizer:
    """Per-key locks from ``make_lock(name)``: any object with ``acquire()``
    and ``release()`` that every writer gets for the same name, such as
    dask's ``distributed.Lock`` (``LockSynchronizer(distributed.Lock)``).

    ``stripes`` bounds how many distinct names are used. The synchronizer
    pickles when ``make_lock`` does (a class or module-level function).
    """

    def __init__(self, make_lock: Callable[[str], NamedLock], *, prefix: str = "zarrpy-", stripes: int = 4096):
        self.make_lock, self.prefix, self.stripes = make_lock, prefix, stripes

    @contextmanager
    def locked(self, token: Hashable, keys: Iterable[str]) -> Iterator[None]:
        """Hold ``make_lock(name)`` of each of ``keys``' lock names (taken in sorted order) for the block."""
        with ExitStack() as stack:
            for name in _lock_names(token, keys, self.stripes):
                lock = self.make_lock(self.prefix + name)
                lock.acquire()
                stack.callback(lock.release)
            yield

    def __repr__(self) -> str:
        return f"LockSynchronizer({self.make_lock!r})"


__all__ = ["LockSynchronizer", "NamedLock", "ProcessSynchronizer", "Synchronizer"]
