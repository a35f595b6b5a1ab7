"""Keep a directory store's file operations inside its root.

Keys are checked by :func:`~zarrpy.stores.abc.validate_key` (no ``..``), but
a symbolic link inside the root can still point anywhere. :class:`Confined`
answers "where does this key really lead?" and checks that the answer stays
under the root:

- :meth:`Confined.resolve` follows the key's path component by component
  (one ``lstat`` each; ``realpath`` only once a link is met), so the common
  link-free case costs no more than the components of the key;
- :meth:`Confined.fd_inside` asks the kernel where an *open* descriptor
  points (``/proc/self/fd`` on Linux, ``F_GETPATH`` on macOS). Checking the
  descriptor after opening closes the window in which a directory could be
  swapped for a link between a check and an open (TOCTOU). Where the platform
  cannot say, the check before opening is all there is.
"""

from __future__ import annotations

import os
import stat
import sys

_PROC_FD = "/proc/self/fd"
_HAS_PROC_FD = sys.platform.startswith("linux") and os.path.isdir(_PROC_FD)
try:
    import fcntl

    _F_GETPATH: int | None = getattr(fcntl, "F_GETPATH", None)  # macOS
except ImportError:  # Windows
    _F_GETPATH = None

# os.replace takes dir_fd arguments wherever os.rename does (it is listed under rename).
DIR_FD = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd and os.unlink in os.supports_dir_fd
"""Whether writes can go through a checked directory descriptor."""


def fd_path(fd: int) -> str | None:
    """The path the kernel records for an open descriptor, or None if this
    platform cannot tell."""
    if _HAS_PROC_FD:
        try:
            path = os.readlink(f"{_PROC_FD}/{fd}")
        except OSError:
            return None
        return path.removesuffix(" (deleted)")  # replaced since it was opened: same place
    if _F_GETPATH is not None:
        try:
            raw = fcntl.fcntl(fd, _F_GETPATH, bytes(1024))
        except OSError:
            return None
        return os.fsdecode(raw.split(b"\x00", 1)[0])
    return None


_DIR_FLAGS = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


def real_dir(path: str) -> str | None:
    """The real path of ``path`` when it is a directory this process can
    open, asked of the kernel: the directory is opened and its descriptor's
    path read (three system calls, where ``os.path.realpath`` makes one
    ``lstat`` per component). None otherwise -- a missing path, a file, a
    directory that cannot be opened, a platform that cannot tell."""
    if not (_HAS_PROC_FD or _F_GETPATH is not None):
        return None
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        return None
    try:
        found = fd_path(fd)
    finally:
        os.close(fd)
    return found if found is not None and os.path.isabs(found) else None


def real_path(path: str) -> str:
    """``os.path.realpath(path)`` for an absolute ``path``, through
    :func:`real_dir` when it is a directory."""
    found = real_dir(path)
    return found if found is not None else os.path.realpath(path)


class Confined:
    """Containment checks for paths under ``root`` (already resolved)."""

    __slots__ = ("_root_sep", "root")

    def __init__(self, root: str) -> None:
        self.root = root
        self._root_sep = root if root.endswith(os.sep) else root + os.sep

    def inside(self, real: str) -> bool:
        """Whether the resolved path ``real`` is the root or below it."""
        return real == self.root or real.startswith(self._root_sep)

    def resolve(self, parts: list[str]) -> str:
        """The real path of ``root/parts…``, following links like ``realpath``
        (a missing tail is kept as given)."""
        current = self.root
        for i, part in enumerate(parts):
            nxt = os.path.join(current, part)
            try:
                mode = os.lstat(nxt).st_mode
            except (FileNotFoundError, NotADirectoryError):
                return os.path.join(nxt, *parts[i + 1 :])  # nothing below can be a link
            if stat.S_ISLNK(mode):
                return os.path.realpath(os.path.join(nxt, *parts[i + 1 :]))
            current = nxt
        return current

    def resolves_inside(self, parts: list[str]) -> bool:
        return self.inside(self.resolve(parts))

    def fd_inside(self, fd: int) -> bool | None:
        """Whether the open descriptor ``fd`` lies under the root (None: the
        platform cannot tell)."""
        path = fd_path(fd)
        return None if path is None else self.inside(path)

    @property
    def can_check_fds(self) -> bool:
        return _HAS_PROC_FD or _F_GETPATH is not None


__all__ = ["DIR_FD", "Confined", "fd_path", "real_dir", "real_path"]
