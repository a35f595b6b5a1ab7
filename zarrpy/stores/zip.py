"""A store in one zip archive, like zarr-python's ``zarr.storage.ZipStore``.

Key ``"a/b"`` is the archive member ``a/b``. Modes: ``"r"`` reads an existing
archive (the store is read-only), ``"w"`` creates or truncates one, ``"x"``
creates one that must not exist, ``"a"`` adds to an existing archive (or
creates it). Members are stored uncompressed by default (``compression``),
so byte-range reads seek straight to the requested bytes.

Call :meth:`ZipStore.close` (or use the store as a context manager) when
done writing: the archive's central directory is written then, and a zip
without one cannot be read. A writing store that is never closed is closed
when it is garbage collected or the interpreter exits (a safety net, not a
substitute: until then other readers see no central directory). A closed store reopens on its next use, in mode
``"a"`` after ``"w"``/``"x"``/``"a"`` (entries already written are kept) and
``"r"`` after ``"r"``, as zarr-python's does.

Zip limits, documented rather than hidden:

- **Overwrites append.** Setting a key that is already in the archive adds a
  second member of the same name (Python's :mod:`zipfile` warns ``Duplicate
  name``); reads, sizes and listings see the latest one only, but the old
  bytes stay in the file. Rewrite the store to compact it.
- **No deletes.** Deleting a missing key is a no-op; deleting a present one
  raises :class:`~zarrpy.errors.StoreError` (zarr-python raises
  ``NotImplementedError``). ``supports_deletes`` is False, so an array
  whose stored chunk becomes all fill value writes the encoded fill chunk
  over it instead of deleting it (resizes too).
- **Member names are keys.** Nothing is ever extracted; a member whose name
  is not a valid key (``../x``, ``/abs``, a directory entry) is not listed,
  and no key can name it.
- **One writer.** Every archive operation holds the store's lock (arrays
  encode on a thread pool); no other process may write the file meanwhile.

Pickling reopens the archive by path in mode ``"r"`` on first use, so a
pickled copy can read what the original wrote once it was closed, and can
never write concurrently with it. ``url`` is ``zip::file:///…``, which
:func:`~zarrpy.stores.store_from_url` reopens read-only through fsspec.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
import zipfile
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

from ..core.byte_range import ByteRequest, ObjectRead, OffsetRequest, RangeRequest, SuffixRequest, VersionedRequest
from ..errors import InvalidKeyError, KeyNotFoundError, ReadOnlyError, StoreError
from .abc import Store, store_error, validate_key, validate_prefix

ZipMode = Literal["r", "w", "a", "x"]


def _finish(zf: zipfile.ZipFile) -> None:
    """Close an archive a writing store left open when it was garbage
    collected or the interpreter exited, so the file stays a readable zip."""
    try:
        zf.close()
    except (OSError, ValueError):
        pass  # nothing to report to at exit; the file is as far as it got


class ZipStore(Store):
    """Keys as members of the zip archive at ``path``; see the module docstring.

    Parameters
    ----------
    path
        The archive's file path.
    mode
        ``"r"`` (read-only), ``"w"``, ``"x"`` or ``"a"``, as for
        :class:`zipfile.ZipFile`.
    read_only
        zarr-python's flag: None follows ``mode`` (read-only for ``"r"``);
        True or False must agree with it (a ``ValueError`` otherwise).
    compression
        :mod:`zipfile` method for new members (``zipfile.ZIP_STORED`` by
        default: chunks are compressed by their codecs already).
    allowZip64
        Allow archives over 2 GiB (ZIP64 extensions), as in :mod:`zipfile`.
    """

    whole_read_nbytes = 1 << 20  # a page-cached or in-memory MiB costs less than a second request

    supports_deletes = False  # arrays store an encoded fill chunk instead

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: ZipMode = "r",
        *,
        read_only: bool | None = None,
        compression: int = zipfile.ZIP_STORED,
        allowZip64: bool = True,
    ) -> None:
        if mode not in ("r", "w", "a", "x"):
            raise ValueError(f"ZipStore mode must be 'r', 'w', 'a' or 'x', got {mode!r}")
        if read_only is not None and read_only != (mode == "r"):
            raise ValueError(
                f"ZipStore({os.fspath(path)!r}, mode={mode!r}, read_only={read_only}): mode {mode!r} "
                f"{'writes' if mode != 'r' else 'only reads'}; pass mode='r' to read or 'w'/'a'/'x' to write"
            )
        self._display_name = os.fspath(path)  # as given, for messages only
        self.path = Path(os.path.abspath(self._display_name))
        self.mode: ZipMode = mode
        self.read_only = mode == "r"
        self.compression = compression
        self.allowZip64 = allowZip64
        self._lock = threading.RLock()
        self._zf: zipfile.ZipFile | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._reopened_read_only = False
        self._archive: tuple[int, ...] | None = None
        self._open()

    # -- the archive -------------------------------------------------------
    def _open(self) -> zipfile.ZipFile:
        """The open archive; (re)opens it under the lock when needed."""
        with self._lock:
            if self._zf is None:
                try:
                    self._zf = zipfile.ZipFile(
                        self.path, self.mode, compression=self.compression, allowZip64=self.allowZip64
                    )
                except (OSError, zipfile.BadZipFile) as exc:
                    raise StoreError(f"cannot open zip archive {os.fspath(self.path)!r} (mode {self.mode!r}): {exc}") from exc
                # "w" truncates and "x" refuses an existing file: first open only.
                if self.mode in ("w", "x"):
                    self.mode = "a"
                self._archive = _archive_identity(self._zf)
                if not self.read_only:  # a forgotten close() still writes the central directory
                    self._finalizer = weakref.finalize(self, _finish, self._zf)
            return self._zf

    def close(self) -> None:
        """Write the central directory and close the file. The store reopens
        on its next use (see the module docstring); closing twice is fine."""
        with self._lock:
            zf, self._zf = self._zf, None
            if self._finalizer is not None:
                self._finalizer.detach()
                self._finalizer = None
            if zf is not None:
                try:
                    zf.close()
                except OSError as exc:
                    raise StoreError(f"cannot finish zip archive {os.fspath(self.path)!r}: {exc}") from exc

    def __enter__(self) -> ZipStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _info(self, key: str) -> zipfile.ZipInfo | None:
        """The latest member named ``key`` (zipfile keeps the last duplicate)."""
        try:
            return self._open().getinfo(key)
        except KeyError:
            return None
        except OSError as exc:
            raise store_error(self, "find", key, exc) from exc

    # -- reads -------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        validate_key(key)
        with self._lock:
            info = self._info(key)
            if info is None or info.is_dir():
                return None
            try:
                return _read_member(self._open(), info, byte_range)
            except (OSError, zipfile.BadZipFile, EOFError) as exc:
                raise store_error(self, "read", key, exc) from exc

    def get_versioned(self, requests: Sequence[VersionedRequest]) -> list[ObjectRead | None]:
        """Each member's bytes with its size and a version from its entry
        (CRC, where it starts, its sizes) and the archive's identity: a key
        set again is a new member elsewhere in the file, so a new version."""
        out: list[ObjectRead | None] = []
        for key, request, if_match in requests:
            validate_key(key)
            with self._lock:
                info = self._info(key)
                if info is None or info.is_dir():
                    out.append(None)
                    continue
                version = (self._archive, info.CRC, info.header_offset, info.compress_size, info.file_size)
                if if_match is not None and if_match != version:
                    out.append(ObjectRead(None, info.file_size, version))
                    continue
                try:
                    data = _read_member(self._open(), info, request)
                except (OSError, zipfile.BadZipFile, EOFError) as exc:
                    raise store_error(self, "read", key, exc) from exc
            out.append(ObjectRead(data, info.file_size, version))
        return out

    def exists(self, key: str) -> bool:
        validate_key(key)
        with self._lock:
            info = self._info(key)
        return info is not None and not info.is_dir()

    def getsize(self, key: str) -> int:
        """The member's uncompressed size from the central directory."""
        validate_key(key)
        with self._lock:
            info = self._info(key)
        if info is None or info.is_dir():
            raise KeyNotFoundError(f"no value under key {key!r} in zip archive {os.fspath(self.path)!r}")
        return info.file_size

    # -- writes ------------------------------------------------------------
    @property
    def read_only_hint(self) -> str:
        why = (
            "this copy was unpickled from a ZipStore and reads only"
            if self._reopened_read_only
            else "the ZipStore was opened with mode 'r'"
        )
        return f"{why}; open ZipStore(path, mode='a') to add to it"

    def _check_writable(self, key: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"cannot write {key!r} to zip archive {os.fspath(self.path)!r}: {self.read_only_hint}")

    def _set(self, key: str, value: bytes) -> None:
        info = zipfile.ZipInfo(key, date_time=time.localtime()[:6])
        info.compress_type = self.compression
        info.external_attr = 0o644 << 16  # -rw-r--r--, as zarr-python writes
        with self._lock:
            try:
                self._open().writestr(info, value)
            except (OSError, ValueError) as exc:
                raise store_error(self, "write", key, exc) from exc

    def _delete(self, key: str) -> None:
        if self.exists(key):
            raise StoreError(
                f"cannot delete {key!r} from zip archive {os.fspath(self.path)!r}: "
                "zip archives cannot remove members"
            )

    # -- listing -----------------------------------------------------------
    def _members(self, prefix: str) -> list[zipfile.ZipInfo]:
        """The latest member of each file name starting with ``prefix``."""
        prefix = validate_prefix(prefix)
        with self._lock:
            zf = self._open()
            try:
                names = dict.fromkeys(zf.namelist())  # duplicates once, in order
                return [zf.getinfo(n) for n in names if n.startswith(prefix) and _is_key(n)]
            except OSError as exc:
                raise store_error(self, "list", prefix, exc) from exc

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return iter([info.filename for info in self._members(prefix)])

    def list_prefix_with_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        return iter([(info.filename, info.file_size) for info in self._members(prefix)])

    # -- identity and pickling -----------------------------------------------
    @property
    def url(self) -> str:
        return "zip::" + self.path.as_uri()

    @property
    def display_name(self) -> str:
        return self._display_name

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen_read_only, (os.fspath(self.path), not self.read_only))

    def __repr__(self) -> str:
        return f"ZipStore({os.fspath(self.path)!r}, mode={self.mode!r})"


def _is_key(name: str) -> bool:
    """Whether a member name is a valid store key. Directory entries are not;
    nor are names no key can reach (``../x``, ``/abs``, ``a\\b``): an archive
    made elsewhere may hold them ("zip slip"), and listing them would hand
    callers keys that every store refuses."""
    try:
        validate_key(name)
    except InvalidKeyError:
        return False
    return True


def _reopen_read_only(path: str, was_writable: bool) -> ZipStore:
    """An unpickled ZipStore: read-only, opened on first use (the original
    may still be writing when it is pickled)."""
    store = ZipStore.__new__(ZipStore)
    store._display_name = path
    store.path = Path(path)
    store.mode = "r"
    store.read_only = True
    store.compression = zipfile.ZIP_STORED
    store.allowZip64 = True
    store._lock = threading.RLock()
    store._zf = None
    store._finalizer = None
    store._reopened_read_only = was_writable
    store._archive = None
    return store


def _archive_identity(zf: zipfile.ZipFile) -> tuple[int, ...] | None:
    """The open archive file's device and inode (None when it is not a file
    of its own): part of every member's version, so a member of another
    archive put in its place is never taken for it."""
    fp = zf.fp
    try:
        st = os.fstat(fp.fileno()) if fp is not None else None
    except (OSError, AttributeError, ValueError):
        return None
    return None if st is None else (st.st_dev, st.st_ino)


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, request: ByteRequest | None) -> bytes:
    """Read ``request`` of a member; stored members seek without reading."""
    size = info.file_size
    if request is None:
        start, end = 0, size
    elif isinstance(request, RangeRequest):
        start, end = min(request.start, size), min(request.end, size)
    elif isinstance(request, OffsetRequest):
        start, end = min(request.offset, size), size
    elif isinstance(request, SuffixRequest):
        start, end = max(0, size - request.length), size
    else:
        raise TypeError(f"not a byte request: {request!r}")
    if start >= end:
        return b""
    with zf.open(info) as f:
        if start:
            f.seek(start)
        return f.read(end - start)


__all__ = ["ZipStore"]
