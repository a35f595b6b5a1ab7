"""A store of files under a root directory.

Key ``"a/b/c"`` is the file ``<root>/a/b/c``. Writes are atomic: the value
goes to a temporary file in the target's own directory, which is then renamed
over the target with :func:`os.replace`, so a reader sees the old value or the
new one, never a mix, and a failed write leaves the old value in place.
:meth:`LocalStore.open_writer` streams a value into such a temporary file
piece by piece and renames it at commit (:mod:`zarrpy.stores._stream_local`).
Deleting a key removes directories that became empty, up to (not including)
the root.

Byte-range reads seek and read only the requested bytes.

**Nothing outside the root.** Every key goes through
:func:`~zarrpy.stores.abc.validate_key` (no ``..``, absolute path, empty
segment, backslash or NUL). Symbolic links inside the root are followed only
while they stay inside it: a key that leads out of the root through a link
(to a file or a directory, through a chain of links) is refused by every
operation with :class:`~zarrpy.errors.InvalidKeyError` naming the key, and
listings leave such links out. ``InvalidKeyError`` because the key, not the
disk, is at fault: like a ``..`` key it names a place outside the store, and
retrying cannot help (it is a ``StoreError`` too). ``follow_symlinks=True``
restores following every link. The root itself may be a link: it is resolved
once, when the store is made. Reads check the opened file's real path (on
Linux and macOS), writes and deletes work through a checked descriptor of the
target's directory, so a link swapped in between a check and an open is caught
too. Listings descend into linked directories that stay inside the root, but
never into one that contains the directory being listed (no loops).

**Temporary files** are named ``.zarrpy-tmp-<basename>-<host>-<pid>-<hex>``
(see :mod:`zarrpy.stores._tempfiles`); listings skip them and no key may name
one, so they are never read as data. A failed write removes its own. One killed mid-write (SIGKILL)
leaves it behind: the next write into that directory removes the stale ones
(at most one look per directory per minute per store object, so writing
many chunks does not rescan a large directory), and ``zarrpy verify --clean``
removes them all. A live writer's temporary file is never removed.

**Update locks.** Local files have no conditional write, so a
read-modify-write of part of an object (inner chunks of a shard) runs under
:meth:`LocalStore.locked_for_update`: per-key advisory locks shared by the
processes of this machine, in lock files outside the root (the listing never
shows them). Writers on several machines sharing one network directory need
a synchronizer instead (:mod:`zarrpy.stores._update_locks`).

Failures of the filesystem (permission denied, disk full, a key that is a
FIFO …) raise :class:`~zarrpy.errors.StoreError` naming the key, with the
``OSError`` chained. A missing key, or a key that is a directory, reads as None.
"""

from __future__ import annotations

import errno
from contextlib import AbstractContextManager, nullcontext
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..core.scratch import ScratchLease, scratch
from ..core.byte_range import ByteRequest, ObjectRead, VersionedRequest
from ..errors import InvalidKeyError, KeyNotFoundError, StoreError
from . import _tempfiles
from ._files import HAS_PREAD, OpenFile, file_version
from ._stream_local import LocalObjectWriter, TempFile
from ._confine import DIR_FD, Confined, real_path
from ._update_locks import update_locks
from .abc import KeyReader, Store, store_error, validate_key, validate_prefix

T = TypeVar("T")

_MAKEDIRS_RETRIES = 5
_SWEEP_INTERVAL = 60.0  # seconds between looks for stale temporary files in one directory
_MISSING = (FileNotFoundError, NotADirectoryError)

# Never block on a FIFO, never take a terminal: a key is only ever a regular file.
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _resolvable(entry: os.DirEntry[str]) -> bool:
    """Whether a link entry leads to something (not broken, not a loop)."""
    try:
        entry.stat()
    except OSError:
        return False
    return True


class _OpenFileReader(KeyReader):
    """A :class:`KeyReader` over one open file of a LocalStore (see
    :meth:`LocalStore.open_reader`); the file is opened on first use. Reads
    are positioned (``pread``), so threads may share the reader."""

    __slots__ = ("_file", "_opened", "_lock")
    cheap_requests = True
    """Positioned reads of one open file, safe from any thread (see
    :attr:`~zarrpy.core.byte_reader.ByteReader.cheap_requests`)."""

    def __init__(self, store: LocalStore, key: str):
        super().__init__(store, key)
        self._file: OpenFile | None = None
        self._opened = False
        self._lock = threading.Lock()

    def _open(self) -> OpenFile | None:
        if not self._opened:
            with self._lock:
                if not self._opened:
                    self._file = self.store._open_read(self.key)  # type: ignore[attr-defined]
                    self._opened = True
        return self._file

    def __call__(self, request: ByteRequest | None = None) -> bytes | None:
        return self.read_many([request])[0]

    def read_many(self, requests: Sequence[ByteRequest | None]) -> list[bytes | None]:
        f = self._open()
        if f is None:
            return [None] * len(requests)
        try:
            return [f.read(r) for r in requests]
        except OSError as exc:
            raise store_error(self.store, "read", self.key, exc) from exc

    def size(self) -> int | None:
        f = self._open()
        return None if f is None else f.size

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> _OpenFileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ScratchRead(AbstractContextManager[Any]):
    """:meth:`LocalStore.get_scratch`'s context manager."""

    __slots__ = ("store", "key", "_file", "_lease")

    def __init__(self, store: LocalStore, key: str):
        self.store, self.key = store, key
        self._file: OpenFile | None = None
        self._lease: ScratchLease | None = None

    def __enter__(self) -> Any:
        f = self._file = self.store._open_read(self.key)
        if f is None:
            return None
        try:
            self._lease = scratch(f.size)
            buf = self._lease.__enter__()
            got = f.read_into(buf)
        except BaseException as exc:
            self.__exit__(None, None, None)
            if isinstance(exc, OSError):
                raise store_error(self.store, "read", self.key, exc) from exc
            raise
        return buf[:got]

    def __exit__(self, *exc: object) -> None:
        lease, f, self._lease, self._file = self._lease, self._file, None, None
        try:
            if lease is not None:
                lease.__exit__(None, None, None)
        finally:
            if f is not None:
                f.close()


class LocalStore(Store):
    """Files under ``root``; see the module docstring for the guarantees.

    Parameters
    ----------
    root
        The store's directory. It need not exist yet: the first write creates
        it. It is made absolute and resolved (links followed) at construction.
    read_only
        Refuse ``set`` and ``delete`` with :class:`~zarrpy.errors.ReadOnlyError`.
    follow_symlinks
        Follow symbolic links even where they lead out of the root (off by
        default: such keys raise :class:`~zarrpy.errors.InvalidKeyError`).
    """

    whole_read_nbytes = 1 << 20  # a page-cached or in-memory MiB costs less than a second request

    def __init__(
        self, root: str | os.PathLike[str], read_only: bool = False, *, follow_symlinks: bool = False
    ) -> None:
        given = os.fspath(root)
        self._setup(given, real_path(os.path.abspath(given)), read_only, follow_symlinks)

    @classmethod
    def _at_real(cls, given: str, real: str, read_only: bool = False) -> LocalStore:
        """The store of ``given``, whose real path the caller has just found
        (``_confine.real_dir``): saves resolving it twice."""
        store = cls.__new__(cls)
        store._setup(given, real, read_only, False)
        return store

    def _setup(self, given: str, real: str, read_only: bool, follow_symlinks: bool) -> None:
        self._root_path: Path | None = None  # made on first use of ``root``
        self._display_name = given  # as given (maybe relative), for messages only
        self.read_only = read_only
        self.follow_symlinks = follow_symlinks
        self._confined = Confined(real)
        self._swept: dict[str, float] = {}  # directory -> when its stale temp files were last removed

    @property
    def root(self) -> Path:
        """The store's directory: absolute, links resolved (at construction)."""
        path = getattr(self, "_root_path", None)
        if path is None:
            path = self._root_path = Path(self._confined.root)
        return path

    # -- confinement -------------------------------------------------------
    def _parts(self, key: str) -> list[str]:
        parts = validate_key(key).split("/")
        for part in parts:
            if _tempfiles.is_temp_name(part):
                raise InvalidKeyError(
                    f"invalid store key {key!r}: names starting with {_tempfiles.TMP_PREFIX!r} "
                    "are zarrpy's temporary files, never values"
                )
        return parts

    def _path(self, parts: list[str]) -> str:
        if os.sep == "/":  # a checked key's parts: no separators, no empty, "." or ".." parts
            root = self._confined.root
            if not parts:
                return root
            return (root if root.endswith("/") else root + "/") + "/".join(parts)
        return os.path.join(self._confined.root, *parts)

    def _escape(self, key: str) -> InvalidKeyError:
        err = InvalidKeyError(
            f"key {key!r} leads outside the store root {os.fspath(self.root)!r} through a symbolic link; "
            "refused (LocalStore(..., follow_symlinks=True) follows links out of the root)"
        )
        err.key = key
        return err

    def _check_inside(self, key: str, parts: list[str], verb: str) -> None:
        """Refuse ``key`` if its path leads out of the root (before an open)."""
        if self.follow_symlinks:
            return
        try:
            inside = self._confined.resolves_inside(parts)
        except OSError as exc:  # cannot tell where it leads: cannot serve it
            raise store_error(self, verb, key, exc) from exc
        if not inside:
            raise self._escape(key)

    def _check_fd(self, key: str, fd: int) -> None:
        """Refuse ``key`` if the descriptor opened for it lies outside the root."""
        if not self.follow_symlinks and self._confined.fd_inside(fd) is False:
            raise self._escape(key)

    # -- reads -------------------------------------------------------------
    def _open_read(self, key: str) -> OpenFile | None:
        """The key's file open for reading, or None if there is none."""
        parts = self._parts(key)
        if not self._confined.can_check_fds:
            self._check_inside(key, parts, "read")
        path = self._path(parts)
        try:
            fd = os.open(path, _READ_FLAGS)
        except _MISSING:
            self._check_inside(key, parts, "read")  # "missing" must not answer for a place outside
            return None
        except OSError as exc:
            self._check_inside(key, parts, "read")
            if os.path.isdir(path):
                return None  # Windows cannot open a directory: not a key either way
            raise store_error(self, "read", key, exc) from exc
        try:
            self._check_fd(key, fd)
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                os.close(fd)
                return None  # a "directory" is not a key
            if not stat.S_ISREG(st.st_mode):
                raise store_error(self, "read", key, OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)"))
            return OpenFile(fd, st.st_size, file_version(st))
        except BaseException:
            os.close(fd)
            raise

    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        f = self._open_read(key)
        if f is None:
            return None
        try:
            with f:
                return f.read(byte_range)
        except OSError as exc:
            raise store_error(self, "read", key, exc) from exc

    reads_in_place = HAS_PREAD

    def get_scratch(self, key: str) -> _ScratchRead:
        """The file of ``key`` (same checks as :meth:`get`) read with
        positioned reads into a scratch buffer of this thread, which is
        valid inside the ``with`` block only; None when there is no file.
        (A plain context manager class: a generator-based one costs several
        microseconds more per chunk.)"""
        return _ScratchRead(self, key)

    def open_reader(self, key: str) -> AbstractContextManager[KeyReader]:
        """A reader that opens ``key``'s file once (with the same checks as
        :meth:`get`) and answers its size and every range from that one
        descriptor: one open for a partial decode instead of one per request,
        and a shard's index and inner chunks come from the same file even
        if it is replaced meanwhile; leaving the ``with`` block closes it.
        (Without ``os.pread``, on Windows: a reader that opens the file per
        request.)"""
        if not HAS_PREAD:
            return nullcontext(self.reader(key))
        return _OpenFileReader(self, key)

    def get_partial_values(self, requests: Sequence[tuple[str, ByteRequest | None]]) -> list[bytes | None]:
        """Many ranges, each file opened once however many ranges it answers."""
        return self._read_files([key for key, _ in requests], lambda f, i: f.read(requests[i][1]))

    def get_versioned(self, requests: Sequence[VersionedRequest]) -> list[ObjectRead | None]:
        """Each request read from its file with the size and version the
        ``fstat`` of the same open descriptor gives, so the bytes are of the
        version reported (each file opened once however many requests it answers)."""

        def answer(f: OpenFile, i: int) -> ObjectRead:
            if_match = requests[i].if_match
            if if_match is not None and if_match != f.version:
                return ObjectRead(None, f.size, f.version)
            return ObjectRead(f.read(requests[i].range), f.size, f.version)

        return self._read_files([r.key for r in requests], answer)

    def _read_files(self, keys: Sequence[str], read: Callable[[OpenFile, int], T]) -> list[T | None]:
        """``read(file, i)`` for each position ``i`` of ``keys``, each key's
        file opened once (None where there is no file); an OSError is a
        StoreError naming the key."""
        by_key: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            by_key.setdefault(validate_key(key), []).append(i)
        out: list[T | None] = [None] * len(keys)
        for key, positions in by_key.items():
            f = self._open_read(key)
            if f is None:
                continue
            try:
                with f:
                    for i in positions:
                        out[i] = read(f, i)
            except OSError as exc:
                raise store_error(self, "read", key, exc) from exc
        return out

    def _stat(self, key: str) -> os.stat_result | None:
        """The key's file status, or None if it holds no value."""
        parts = self._parts(key)
        self._check_inside(key, parts, "stat")
        try:
            st = os.stat(self._path(parts))
        except _MISSING:
            return None
        except OSError as exc:
            raise store_error(self, "stat", key, exc) from exc
        return st if stat.S_ISREG(st.st_mode) else None

    def exists(self, key: str) -> bool:
        return self._stat(key) is not None

    def getsize(self, key: str) -> int:
        """The file's size from ``os.stat`` (nothing is read)."""
        st = self._stat(key)
        if st is None:
            raise KeyNotFoundError(f"no value under key {key!r} in {self.display_name}")
        return st.st_size

    # -- writes ------------------------------------------------------------
    def _set(self, key: str, value: bytes) -> None:
        try:
            temp = self._open_temp(key)
            try:
                temp.write(value)
                temp.commit()
            except BaseException:
                temp.discard()
                raise
        except StoreError:
            raise
        except OSError as exc:
            raise store_error(self, "write", key, exc) from exc

    streams_writes = True

    def open_writer(self, key: str) -> LocalObjectWriter:
        """A writer appending to a temporary file next to ``key``'s file (made
        and checked as :meth:`set` makes it), renamed over it at commit."""
        self._check_writable(key)
        try:
            return LocalObjectWriter(self, key, self._open_temp(key))
        except StoreError:
            raise
        except OSError as exc:
            raise store_error(self, "write", key, exc) from exc

    def _open_temp(self, key: str) -> TempFile:
        """A fresh temporary file for a new value of ``key``, in the
        directory of its file (made if missing), through a descriptor of that
        directory checked to lie in the root where the platform has ``dir_fd``
        (else the check before writing is all)."""
        parts = self._parts(key)
        self._check_inside(key, parts, "write")
        parent = self._path(parts[:-1])
        if DIR_FD:
            dir_fd, tmp, fd = self._create_temp(key, parent, parts[-1])
            return TempFile(fd, tmp, parts[-1], dir_fd, parent)
        tmp, fd = self._create_temp_by_path(parent, parts[-1])
        return TempFile(fd, tmp, parts[-1], None, parent)

    def _create_temp(self, key: str, parent: str, name: str) -> tuple[int, str, int]:
        """``(parent's descriptor, temporary name, its descriptor)``.

        A concurrent delete may prune ``parent`` between makedirs and the
        opens, hence the retry. Mode 0o666 so the umask applies, as for any
        ordinary file; O_EXCL on a fresh name.
        """
        for attempt in range(_MAKEDIRS_RETRIES):
            os.makedirs(parent, exist_ok=True)
            try:
                dir_fd = os.open(parent, _DIR_FLAGS)
            except FileNotFoundError:
                if attempt == _MAKEDIRS_RETRIES - 1:
                    raise
                continue
            try:
                self._check_fd(key, dir_fd)
                self._sweep(parent)
                tmp = _tempfiles.temp_name(name)
                return dir_fd, tmp, os.open(tmp, _TEMP_FLAGS, 0o666, dir_fd=dir_fd)
            except FileNotFoundError:
                os.close(dir_fd)
                if attempt == _MAKEDIRS_RETRIES - 1:
                    raise
            except BaseException:
                os.close(dir_fd)
                raise
        raise AssertionError("unreachable")

    def _create_temp_by_path(self, parent: str, name: str) -> tuple[str, int]:
        """``(temporary name in parent, its descriptor)`` on platforms without
        ``dir_fd`` (Windows), with the same retry as :meth:`_create_temp`."""
        for attempt in range(_MAKEDIRS_RETRIES):
            os.makedirs(parent, exist_ok=True)
            self._sweep(parent)
            tmp = _tempfiles.temp_name(name)
            try:
                return tmp, os.open(os.path.join(parent, tmp), _TEMP_FLAGS, 0o666)
            except FileNotFoundError:
                if attempt == _MAKEDIRS_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def _sweep(self, directory: str) -> None:
        """Remove stale temporary files of killed writers from ``directory``
        (best effort, at most once a minute per directory)."""
        now = time.monotonic()
        if now - self._swept.get(directory, -_SWEEP_INTERVAL) < _SWEEP_INTERVAL:
            return
        self._swept[directory] = now
        try:
            _tempfiles.remove_stale_in(directory)
        except OSError:
            pass  # cleaning up is a courtesy; the write itself must not fail for it

    def remove_stale_temp_files(self) -> list[str]:
        """Remove every stale temporary file under the root (see
        :mod:`zarrpy.stores._tempfiles`); return the removed paths."""
        removed: list[str] = []
        for directory in self._directories():
            for path in list(_tempfiles.stale_in(directory)):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise store_error(self, "delete", os.path.relpath(path, self.root), exc) from exc
                removed.append(path)
        return removed

    def temp_files(self) -> list[tuple[str, bool]]:
        """``(path, stale)`` of every temporary file under the root."""
        now = time.time()
        found: list[tuple[str, bool]] = []
        for directory in self._directories():
            try:
                entries = list(os.scandir(directory))
            except _MISSING:
                continue
            for entry in entries:
                if _tempfiles.is_temp_name(entry.name):
                    try:
                        mtime = entry.stat(follow_symlinks=False).st_mtime
                    except FileNotFoundError:
                        continue
                    found.append((entry.path, _tempfiles.is_stale(entry.name, mtime, now)))
        return found

    def _directories(self) -> Iterator[str]:
        """The root and every real directory below it (links not followed)."""
        stack = [os.fspath(self.root)]
        while stack:
            directory = stack.pop()
            yield directory
            try:
                entries = list(os.scandir(directory))
            except _MISSING:
                continue
            except OSError as exc:
                raise store_error(self, "list", os.path.relpath(directory, self.root), exc) from exc
            stack.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))

    def _delete(self, key: str) -> None:
        parts = self._parts(key)
        self._check_inside(key, parts, "delete")
        parent = self._path(parts[:-1])
        try:
            if DIR_FD:
                try:
                    dir_fd = os.open(parent, _DIR_FLAGS)
                except _MISSING:
                    return
                try:
                    self._check_fd(key, dir_fd)
                    os.unlink(parts[-1], dir_fd=dir_fd)
                finally:
                    os.close(dir_fd)
            else:
                os.remove(os.path.join(parent, parts[-1]))
        except _MISSING:
            return
        except IsADirectoryError:
            return  # a "directory" is not a key
        except StoreError:
            raise
        except OSError as exc:
            if os.path.isdir(self._path(parts)):
                return  # Windows/macOS report removing a directory differently
            raise store_error(self, "delete", key, exc) from exc
        self._prune(parent)

    def _prune(self, directory: str) -> None:
        root = os.fspath(self.root)
        while directory != root and directory.startswith(root + os.sep):
            try:
                os.rmdir(directory)
            except OSError:
                return  # not empty (or gone, or busy, or a link): stop climbing
            directory = os.path.dirname(directory)

    # -- update locks (zarrpy.stores._update_locks) ------------------------------
    locks_updates = True

    def locked_for_update(self, keys: Sequence[str]) -> AbstractContextManager[None]:
        """Hold, across the processes of this machine, the update locks of
        ``keys`` for the block (advisory lock files outside the store, shared
        by every path to the root; see :mod:`zarrpy.stores._update_locks`
        for where they are and their limits). A read-only store writes
        nothing and takes none."""
        if self.read_only:
            return nullcontext()
        names = list(keys)
        for key in names:
            self._parts(key)  # a key no write would accept locks nothing
        return update_locks(self._confined.root, names)

    # -- listing -----------------------------------------------------------
    def list_prefix(self, prefix: str) -> Iterator[str]:
        return (key for key, _ in self._entries(prefix))

    def list_prefix_with_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        """Sizes from the directory walk's own ``stat`` (no file is opened)."""
        for key, entry in self._entries(prefix):
            try:
                yield key, entry.stat().st_size
            except FileNotFoundError:
                continue  # deleted while we were listing
            except OSError as exc:
                raise store_error(self, "stat", key, exc) from exc

    def _listed_dir(self, prefix: str, head: str) -> tuple[str, str]:
        """``(path, real path)`` of the directory ``head`` of a list ``prefix``."""
        parts = head.split("/") if head else []
        try:
            real = self._confined.resolve(parts)
        except OSError as exc:
            raise store_error(self, "list", prefix or "/", exc) from exc
        if not self.follow_symlinks and not self._confined.inside(real):
            raise self._escape(prefix)
        return self._path(parts), real

    def _entries(self, prefix: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
        """``(key, directory entry)`` of every file whose key starts with ``prefix``."""
        prefix = validate_prefix(prefix)
        head, _, base = prefix.rpartition("/")
        directory, real = self._listed_dir(prefix, head)
        return self._walk(directory, real, head + "/" if head else "", base)

    def _scan(self, directory: str, key_prefix: str) -> list[os.DirEntry[str]]:
        try:
            return list(os.scandir(directory))
        except _MISSING:
            return []  # not there (or removed while we were listing)
        except OSError as exc:
            raise store_error(self, "list", key_prefix or "/", exc) from exc

    def _link_target(self, entry: os.DirEntry[str]) -> str | None:
        """The real path of a link entry, None if it is not to be listed."""
        target = os.path.realpath(entry.path)
        return target if self.follow_symlinks or self._confined.inside(target) else None

    def _walk(
        self, directory: str, real: str, key_prefix: str, name_prefix: str = ""
    ) -> Iterator[tuple[str, os.DirEntry[str]]]:
        """Files below ``directory`` (whose real path is ``real``)."""
        for entry in self._scan(directory, key_prefix):
            if not entry.name.startswith(name_prefix) or _tempfiles.is_temp_name(entry.name):
                continue
            key = key_prefix + entry.name
            try:
                if entry.is_symlink():
                    target = self._link_target(entry)
                    if target is None or not _resolvable(entry):
                        continue  # leads out of the root, or nowhere (broken, a loop)
                    if entry.is_dir():
                        if real == target or real.startswith(target.rstrip(os.sep) + os.sep):
                            continue  # a link to this directory or above it: a loop
                        yield from self._walk(entry.path, target, key + "/")
                    elif entry.is_file():
                        yield key, entry
                elif entry.is_dir(follow_symlinks=False):
                    yield from self._walk(entry.path, os.path.join(real, entry.name), key + "/")
                elif entry.is_file(follow_symlinks=False):
                    yield key, entry
            except FileNotFoundError:
                continue  # removed while we were listing

    def list_dir(self, prefix: str) -> Iterator[str]:
        prefix = validate_prefix(prefix).rstrip("/")
        directory, _ = self._listed_dir(prefix, prefix)
        for entry in self._scan(directory, prefix):
            if _tempfiles.is_temp_name(entry.name):
                continue
            if entry.is_symlink() and self._link_target(entry) is None:
                continue
            yield entry.name

    # -- identity and pickling ------------------------------------------------
    @property
    def url(self) -> str:
        return self.root.as_uri()

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state["_swept"] = {}  # a copy looks for stale temporary files afresh
        return state

    @property
    def display_name(self) -> str:
        return self._display_name

    def __repr__(self) -> str:
        flags = (", read_only=True" if self.read_only else "") + (
            ", follow_symlinks=True" if self.follow_symlinks else ""
        )
        return f"LocalStore({os.fspath(self.root)!r}{flags})"


__all__ = ["LocalStore"]
