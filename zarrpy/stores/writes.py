"""What stores write besides plain values: conditional writes and streams.

**Conditional writes** make read-modify-write safe without locks. A writer
reads an object with its version (:meth:`~zarrpy.stores.abc.Store.get_versioned`),
merges its own part in, and writes the result only if the object still has
the version it read (:class:`ConditionalWrite`); a new object is created only
if it is still absent (:data:`ABSENT`). When another writer got there first,
the write is refused and the caller re-reads and merges again. Backends do
the check themselves, atomically: S3's ``If-Match`` / ``If-None-Match`` on
PUT, obstore's ``PutMode``, a version table under a lock in memory.

**Object writers** (:class:`ObjectWriter`) take an object's bytes piece by
piece and make the object appear whole at :meth:`~ObjectWriter.commit`, so a
shard can be encoded and sent inner chunk by inner chunk without ever being
whole in memory. A writer that is aborted, or whose process dies, leaves the
old object (or none) and no torn one: local files are written to a
temporary file renamed at commit, S3 uploads are multipart uploads completed
at commit; a store that cannot stream buffers the encoded bytes
(:class:`BufferedObjectWriter`).
"""

from __future__ import annotations

import io
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Callable, Final, Hashable, NamedTuple

if TYPE_CHECKING:
    from .abc import Store


class _Absent:
    """The version of an object that does not exist."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
"""The ``expected`` version of a :class:`ConditionalWrite` that creates an
object: written only if nothing is stored under the key yet."""


class ConditionalWrite(NamedTuple):
    """One write of :meth:`~zarrpy.stores.abc.Store.set_conditional`: store
    ``value`` under ``key`` (``None``: delete it) only if the object still
    has version ``expected`` (what :attr:`~zarrpy.core.byte_range.ObjectRead.version`
    said when it was read), or :data:`ABSENT` if there was none."""

    key: str
    value: bytes | None
    expected: Hashable


class ObjectWriter(ABC):
    """The bytes of one object, written in order, visible whole at
    :meth:`commit` and never before.

    Use as a context manager: leaving the block without :meth:`commit`
    (an exception, or no commit call) aborts, and nothing is left visible.
    """

    def __init__(self, key: str):
        self.key = key
        self.nbytes = 0
        self.closed = False

    @abstractmethod
    def _write(self, data: memoryview) -> None: ...

    @abstractmethod
    def _commit(self) -> None: ...

    @abstractmethod
    def _abort(self) -> None: ...

    def write(self, data: Any) -> None:
        """Append ``data`` (any bytes-like object) to the object."""
        if self.closed:
            raise ValueError(f"the writer of {self.key!r} is closed")
        view = memoryview(data).cast("B")
        if view.nbytes:
            self._write(view)
            self.nbytes += view.nbytes

    def commit(self) -> None:
        """Make the object appear, whole, with every byte written."""
        if self.closed:
            raise ValueError(f"the writer of {self.key!r} is closed")
        self.closed = True
        try:
            self._commit()
        except BaseException:
            self._abort()
            raise

    def abort(self) -> None:
        """Drop what was written; the store keeps what it had under the key."""
        if not self.closed:
            self.closed = True
            self._abort()

    def __enter__(self) -> ObjectWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()


class BufferedObjectWriter(ObjectWriter):
    """A writer for stores that cannot stream: the bytes are kept (encoded,
    so a shard costs its stored size) and written with one ``set`` at commit."""

    def __init__(self, store: Store, key: str):
        super().__init__(key)
        self._store = store
        self._buffer: io.BytesIO | None = io.BytesIO()

    def _write(self, data: memoryview) -> None:
        assert self._buffer is not None
        self._buffer.write(data)

    def _commit(self) -> None:
        assert self._buffer is not None
        value = self._buffer.getvalue()
        self._buffer = None
        self._store.set(self.key, value)

    def _abort(self) -> None:
        self._buffer = None


class ConditionalSwitch:
    """A store's ``supports_conditional_writes``: what ``allowed(store)``
    says of its backend, asked once (on first use, so opening a store sends
    nothing); setting False turns conditional writes off, True goes back to
    what the backend allows."""

    def __init__(self, allowed: Callable[[Any], bool]):
        self.allowed = allowed
        self.__doc__ = allowed.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}_setting"

    def __get__(self, store: Any, owner: type | None = None) -> Any:
        if store is None:
            return self
        value = store.__dict__.get(self.slot)
        if value is None:
            value = store.__dict__[self.slot] = bool(self.allowed(store))
        return value

    def __set__(self, store: Any, value: bool) -> None:
        store.__dict__[self.slot] = None if value else False


__all__ = ["ABSENT", "BufferedObjectWriter", "ConditionalSwitch", "ConditionalWrite", "ObjectWriter"]
