"""LocalStore's temporary files, and its streamed writer.

A new value goes to a temporary file in the target's own directory (named
as :mod:`zarrpy.stores._tempfiles` says) and is renamed over the target,
so a reader sees the old file or the new one, never a mix. :class:`TempFile`
is one such file from its creation to its rename (or removal).
``LocalStore.set`` writes a whole value to one; :class:`LocalObjectWriter`
(``LocalStore.open_writer``) appends to one piece by piece and renames it
at commit, so an object larger than memory is written with the memory of
one piece. A writer killed before the rename leaves the old file in place
and its temporary file behind: never listed, stale once its process is
gone, removed by the next write into that directory or ``zarrpy verify
--clean``.

Durability is the same for both: the rename makes the new file appear
whole; nothing is ``fsync``-ed (as ever for LocalStore), so a power loss
may lose a recent write but a crash of the process never tears one.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .abc import store_error
from .writes import ObjectWriter

if TYPE_CHECKING:
    from .local import LocalStore


class TempFile:
    """A temporary file next to a target, open for writing.

    ``dir_fd`` is a descriptor of the target's directory, checked to lie in
    the store's root (then ``tmp`` and ``name`` are relative to it), or None
    on platforms without ``dir_fd`` support (then they are joined to
    ``parent``). The temporary file owns both descriptors: :meth:`commit`
    and :meth:`discard` close them.
    """

    __slots__ = ("_dir_fd", "_file", "_name", "_parent", "_tmp")

    def __init__(self, fd: int, tmp: str, name: str, dir_fd: int | None, parent: str) -> None:
        self._tmp, self._name, self._dir_fd, self._parent = tmp, name, dir_fd, parent
        try:
            self._file = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            self._remove()
            raise

    @property
    def parent(self) -> str:
        """The target's directory."""
        return self._parent

    def write(self, data: Any) -> None:
        """Append the bytes-like ``data``."""
        self._file.write(data)

    def commit(self) -> None:
        """Flush and rename over the target; the descriptors are closed. On
        an error the file is still there: :meth:`discard` removes it."""
        self._file.close()
        if self._dir_fd is not None:
            os.replace(self._tmp, self._name, src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd)
        else:
            os.replace(os.path.join(self._parent, self._tmp), os.path.join(self._parent, self._name))
        self._close_dir()

    def discard(self) -> None:
        """Close and remove the temporary file (best effort: this runs while
        another error is on its way up)."""
        with contextlib.suppress(OSError):
            self._file.close()
        self._remove()

    def _remove(self) -> None:
        with contextlib.suppress(OSError):
            if self._dir_fd is not None:
                os.unlink(self._tmp, dir_fd=self._dir_fd)
            else:
                os.unlink(os.path.join(self._parent, self._tmp))
        self._close_dir()

    def _close_dir(self) -> None:
        if self._dir_fd is not None:
            fd, self._dir_fd = self._dir_fd, None
            os.close(fd)


class LocalObjectWriter(ObjectWriter):
    """:meth:`~zarrpy.stores.abc.Store.open_writer` of a LocalStore: bytes
    appended to a :class:`TempFile` as they come, renamed over the key's
    file at commit. Abort removes the temporary file, and directories left
    empty as a delete does; so does dropping the writer unclosed."""

    def __init__(self, store: LocalStore, key: str, temp: TempFile) -> None:
        super().__init__(key)
        self._store = store
        self._temp = temp

    def _write(self, data: memoryview) -> None:
        try:
            self._temp.write(data)
        except OSError as exc:
            self.abort()
            raise store_error(self._store, "write", self.key, exc) from exc

    def _commit(self) -> None:
        try:
            self._temp.commit()
        except StoreError:
            raise
        except OSError as exc:
            raise store_error(self._store, "write", self.key, exc) from exc

    def _abort(self) -> None:
        self._temp.discard()
        self._store._prune(self._temp.parent)

    def __del__(self) -> None:
        # A writer dropped without commit or abort: its file and descriptors go.
        if not getattr(self, "closed", True):
            self.abort()


__all__ = ["LocalObjectWriter", "TempFile"]
