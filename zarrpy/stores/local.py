"""A store of files under a root directory.

Key ``"a/b/c"`` is the file ``<root>/a/b/c``. Writes are atomic: the value
goes to a temporary file in the target's own directory, which is then renamed
over the target with :func:`os.replace`, so a reader sees the old value or the
new one, never a mix, and a failed write leaves the old value in place.
Deleting a key removes directories that became empty, up to (not including)
the root.

Byte-range reads seek and read only the requested bytes.

Safety: every key goes through :func:`~zarrpy.stores.abc.validate_key`, so
no key can name a path outside the root (no ``..``, absolute path, empty
segment, backslash or NUL). Symbolic links *inside* the root are followed
when reading and writing (like zarr-python's LocalStore); whoever can plant a
symlink in the store directory can already write there. Listing does not
descend into symlinked directories.

Temporary files are named ``.zarrpy-tmp-<hex>``; listing skips them, so a key
whose last segment starts with that prefix is not listed.
"""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path
from typing import BinaryIO, Iterator, Sequence

from ..core.byte_range import ByteRequest, OffsetRequest, RangeRequest, SuffixRequest
from ..errors import KeyNotFoundError, StoreError
from .abc import Store, validate_key, validate_prefix

_TMP_PREFIX = ".zarrpy-tmp-"
_MAKEDIRS_RETRIES = 5


def _read(path: str, request: ByteRequest | None) -> bytes:
    with open(path, "rb") as f:
        return _read_open(f, request)


def _read_open(f: BinaryIO, request: ByteRequest | None) -> bytes:
    """``request`` of an open file (positions from its start)."""
    if request is None:
        f.seek(0)
        return f.read()
    if isinstance(request, RangeRequest):
        if request.end == request.start:
            return b""
        f.seek(request.start)
        return f.read(request.end - request.start)
    if isinstance(request, OffsetRequest):
        f.seek(request.offset)
        return f.read()
    if isinstance(request, SuffixRequest):
        if request.length == 0:
            return b""
        nbytes = os.fstat(f.fileno()).st_size
        f.seek(max(0, nbytes - request.length))
        return f.read()
    raise TypeError(f"not a byte request: {request!r}")


class LocalStore(Store):
    """Files under ``root``; see the module docstring for the guarantees.

    Parameters
    ----------
    root
        The store's directory. It need not exist yet: the first write creates
        it. Relative paths are made absolute at construction.
    read_only
        Refuse ``set`` and ``delete`` with :class:`~zarrpy.errors.ReadOnlyError`.
    """

    whole_read_nbytes = 1 << 20  # a page-cached or in-memory MiB costs less than a second request

    def __init__(self, root: str | os.PathLike[str], read_only: bool = False) -> None:
        self.root = Path(os.path.abspath(os.fspath(root)))
        self._display_name = os.fspath(root)  # as given (maybe relative), for messages only
        self.read_only = read_only

    # -- helpers ---------------------------------------------------------
    def _path(self, key: str) -> str:
        return os.path.join(self.root, *validate_key(key).split("/"))

    # -- reads -------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        path = self._path(key)
        try:
            return _read(path, byte_range)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        except OSError as exc:
            raise StoreError(f"cannot read {key!r} from {self.root}: {exc}") from exc

    def get_partial_values(self, requests: Sequence[tuple[str, ByteRequest | None]]) -> list[bytes | None]:
        """Many ranges, each file opened once however many ranges it answers."""
        by_key: dict[str, list[int]] = {}
        for i, (key, _) in enumerate(requests):
            by_key.setdefault(key, []).append(i)
        out: list[bytes | None] = [None] * len(requests)
        for key, positions in by_key.items():
            path = self._path(key)
            try:
                with open(path, "rb") as f:
                    for i in positions:
                        out[i] = _read_open(f, requests[i][1])
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                continue
            except OSError as exc:
                raise StoreError(f"cannot read {key!r} from {self.root}: {exc}") from exc
        return out

    def exists(self, key: str) -> bool:
        return os.path.isfile(self._path(key))

    def getsize(self, key: str) -> int:
        """The file's size from ``os.stat`` (nothing is read)."""
        path = self._path(key)
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            st = None
        except OSError as exc:
            raise StoreError(f"cannot stat {key!r} in {self.root}: {exc}") from exc
        if st is None or not stat.S_ISREG(st.st_mode):
            raise KeyNotFoundError(f"no value under key {key!r} in {self.root}")
        return st.st_size

    # -- writes ------------------------------------------------------------
    def _set(self, key: str, value: bytes) -> None:
        path = self._path(key)
        parent = os.path.dirname(path)
        tmp = os.path.join(parent, _TMP_PREFIX + uuid.uuid4().hex)
        try:
            fd = self._create_temp(parent, tmp)
        except OSError as exc:
            raise StoreError(f"cannot write {key!r} under {self.root}: {exc}") from exc
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(value)
            os.replace(tmp, path)
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise StoreError(f"cannot write {key!r} under {self.root}: {exc}") from exc
            raise

    @staticmethod
    def _create_temp(parent: str, tmp: str) -> int:
        # O_EXCL on a fresh random name; mode 0o666 so the umask applies, as for
        # any ordinary file. A concurrent delete may prune ``parent`` between
        # makedirs and open, hence the retry.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        for attempt in range(_MAKEDIRS_RETRIES):
            os.makedirs(parent, exist_ok=True)
            try:
                return os.open(tmp, flags, 0o666)
            except FileNotFoundError:
                if attempt == _MAKEDIRS_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def _delete(self, key: str) -> None:
        path = self._path(key)
        try:
            os.remove(path)
        except (FileNotFoundError, NotADirectoryError):
            return
        except IsADirectoryError:
            return  # a "directory" is not a key
        except OSError as exc:
            if os.path.isdir(path):
                return  # Windows/macOS report removing a directory differently
            raise StoreError(f"cannot delete {key!r} under {self.root}: {exc}") from exc
        self._prune(os.path.dirname(path))

    def _prune(self, directory: str) -> None:
        root = os.fspath(self.root)
        while directory != root and directory.startswith(root + os.sep):
            try:
                os.rmdir(directory)
            except OSError:
                return  # not empty (or gone, or busy): stop climbing
            directory = os.path.dirname(directory)

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

    def _entries(self, prefix: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
        """``(key, directory entry)`` of every file whose key starts with ``prefix``."""
        prefix = validate_prefix(prefix)
        head, _, base = prefix.rpartition("/")
        directory = os.path.join(self.root, *head.split("/")) if head else os.fspath(self.root)
        key_head = head + "/" if head else ""
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            if not entry.name.startswith(base) or entry.name.startswith(_TMP_PREFIX):
                continue
            if entry.is_dir(follow_symlinks=False):
                yield from self._walk(entry.path, key_head + entry.name + "/")
            elif entry.is_file():
                yield key_head + entry.name, entry

    def _walk(self, directory: str, key_prefix: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return  # removed while we were listing
        for entry in entries:
            if entry.name.startswith(_TMP_PREFIX):
                continue
            if entry.is_dir(follow_symlinks=False):
                yield from self._walk(entry.path, key_prefix + entry.name + "/")
            elif entry.is_file():
                yield key_prefix + entry.name, entry

    def list_dir(self, prefix: str) -> Iterator[str]:
        prefix = validate_prefix(prefix).rstrip("/")
        directory = os.path.join(self.root, *prefix.split("/")) if prefix else os.fspath(self.root)
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            if not entry.name.startswith(_TMP_PREFIX):
                yield entry.name

    # -- identity ----------------------------------------------------------
    @property
    def url(self) -> str:
        return self.root.as_uri()

    @property
    def display_name(self) -> str:
        return self._display_name

    def __repr__(self) -> str:
        return f"LocalStore({os.fspath(self.root)!r}{', read_only=True' if self.read_only else ''})"


__all__ = ["LocalStore"]
