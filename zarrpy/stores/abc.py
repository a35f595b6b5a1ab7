"""The store contract: a flat map of string keys to bytes.

Keys are ``/``-separated relative paths (``"a/b/zarr.json"``). A missing key
is not an error: ``get`` returns None. Stores know nothing of codecs or
metadata; they move bytes, whole or by range, and list keys.

Subclasses implement ``get``, ``set``, ``delete`` and ``list_prefix``; the
rest has working defaults they may override for speed (``get_partial_values``
to batch or run requests concurrently, ``list_dir`` to avoid a full listing,
``getsize`` and ``list_prefix_with_sizes`` to report sizes without reading
values).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Callable, Hashable, Iterable, Iterator, Sequence

from ..core.byte_range import ByteRequest, ObjectRead, VersionedRequest
from ..core.byte_reader import ByteReader
from ..core.pending import Pending
from ..errors import InvalidKeyError, KeyNotFoundError, ReadOnlyError, StoreError
from .writes import BufferedObjectWriter, ConditionalWrite, ObjectWriter

READ_ONLY_HINT = ("it was opened with mode='r' or read_only=True; "
                  "open it with mode='r+' (or 'a') to write")
"""The end of every read-only message: how the user gets write access."""


def validate_key(key: str) -> str:
    """Return ``key`` if it is a safe relative store key, else raise.

    Refused: non-strings, empty keys, absolute paths, backslashes, NUL,
    empty / ``.`` / ``..`` segments (so no key can escape the store's root).
    """
    if not isinstance(key, str) or not key:
        raise InvalidKeyError(f"invalid store key {key!r}: must be a non-empty string")
    if "\x00" in key or "\\" in key:
        raise InvalidKeyError(f"invalid store key {key!r}: NUL and backslash are not allowed")
    if key.startswith("/"):
        raise InvalidKeyError(f"invalid store key {key!r}: must be relative")
    for part in key.split("/"):
        if part in ("", ".", ".."):
            raise InvalidKeyError(f"invalid store key {key!r}: empty, '.' or '..' segment")
    return key


def validate_prefix(prefix: str) -> str:
    """Like :func:`validate_key` for list prefixes; ``""`` (the root) is fine."""
    if prefix == "":
        return prefix
    if prefix.endswith("/"):
        return validate_key(prefix[:-1]) + "/"
    return validate_key(prefix)


def store_error(store: Store, verb: str, key: str, exc: BaseException) -> StoreError:
    """The :class:`~zarrpy.errors.StoreError` for a failed ``verb`` ("read",
    "write", "delete", "list" …) on ``key``: the message names the key and the
    store, ``key`` and ``errno`` are copied over. Raise it ``from exc`` so the
    backend's own exception stays chained."""
    err = StoreError(f"cannot {verb} key {key!r} in {store.display_name}: {type(exc).__name__}: {exc}")
    err.key = key
    if isinstance(exc, OSError):
        err.errno = exc.errno
    return err


AnswerCallback = Callable[[int, "ObjectRead | None"], None]
"""``on_answer(i, answer)`` of :meth:`Store.submit_versioned`."""


def each_answered(answers: list[ObjectRead | None], on_answer: AnswerCallback) -> list[ObjectRead | None]:
    """``answers``, each first handed to ``on_answer`` (a batch answered all at once)."""
    for i, answer in enumerate(answers):
        on_answer(i, answer)
    return answers


def checked_answers(store: Store, requests: Sequence[VersionedRequest],
                    results: Sequence[ObjectRead | None | BaseException]) -> list[ObjectRead | None]:
    """The answers of a versioned batch, the first failed request's error
    raised as :func:`store_error` names it."""
    for r, result in zip(requests, results):
        if isinstance(result, BaseException):
            raise store_error(store, "read", r.key, result) from result
    return list(results)  # type: ignore[arg-type]  # no exception left


class KeyReader(ByteReader):
    """The :class:`~zarrpy.core.byte_reader.ByteReader` over one key of a store."""

    __slots__ = ("store", "key", "_missing")

    def __init__(self, store: Store, key: str):
        self.store, self.key = store, key
        self._missing = False
        """:meth:`size` found the key missing: reads answer None with no request
        (a shard asks the size first; a missing one costs one request, not two)."""

    def __call__(self, request: ByteRequest | None = None) -> bytes | None:
        return None if self._missing else self.store.get(self.key, request)

    def read_many(self, requests: Sequence[ByteRequest | None]) -> list[bytes | None]:
        """The requests of this one key in one batched store call (:meth:`Store.get_partial_values`)."""
        if self._missing:
            return [None] * len(requests)
        return self.store.get_partial_values([(self.key, r) for r in requests])

    def size(self) -> int | None:
        """The value's length (one size request, no data), or None when it is missing."""
        try:
            return self.store.getsize(self.key)
        except KeyNotFoundError:
            self._missing = True
            return None


class Store(ABC):
    """A key-value store of bytes."""

    read_only: bool = False
    supports_deletes: bool = True
    """False for stores that cannot remove a value (zip archives)."""
    request_concurrency: int = 64
    """How many requests a batch (:meth:`get_partial_values`,
    :meth:`get_versioned`) keeps in flight at once: a setting of its own,
    apart from the chunk thread pool, since a remote request waits on the
    network, not on a core. Stores take it as a constructor argument or an
    attribute set on the object."""
    whole_read_nbytes: int = 0
    """Values up to this size are read whole even when a reader wants a part:
    below it, a request's own cost exceeds the bytes a partial read saves
    (local files and memory; 0 for remote stores, where bytes cost)."""

    # -- required ------------------------------------------------------
    @abstractmethod
    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        """The value (or the requested part of it), or None if ``key`` is missing."""

    @abstractmethod
    def _set(self, key: str, value: bytes) -> None: ...

    @abstractmethod
    def _delete(self, key: str) -> None: ...

    @abstractmethod
    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix`` (full keys, any order)."""

    # -- provided ------------------------------------------------------
    def set(self, key: str, value: bytes) -> None:
        """Store ``value`` under ``key``, replacing any old value whole."""
        self._check_writable(key)
        self._set(validate_key(key), bytes(value) if not isinstance(value, bytes) else value)

    def delete(self, key: str) -> None:
        """Remove ``key``; a missing key is not an error."""
        self._check_writable(key)
        self._delete(validate_key(key))

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key under ``prefix``."""
        for key in list(self.list_prefix(validate_prefix(prefix))):
            self.delete(key)

    def get_partial_values(
        self, requests: Sequence[tuple[str, ByteRequest | None]]
    ) -> list[bytes | None]:
        """Answer many (key, range) requests at once, in order."""
        return [self.get(key, rng) for key, rng in requests]

    def get_versioned(self, requests: Sequence[VersionedRequest]) -> list[ObjectRead | None]:
        """Answer many requests at once, each with the object's size and
        version (None: the key is missing; see :class:`ObjectRead`).

        A request with ``if_match`` is answered only if the object still has
        that version; else its :attr:`ObjectRead.changed` is True and no
        bytes come back. The default asks the size (:meth:`getsize`) and
        then the bytes, and tells no versions; stores override it with what
        their backend returns in one request (``Content-Range`` and ETag,
        ``fstat``), checking ``if_match`` in the same request.
        """
        out: list[ObjectRead | None] = []
        for key, request, if_match in requests:
            try:
                size = self.getsize(key)
            except KeyNotFoundError:
                out.append(None)
                continue
            if if_match is not None:  # no versions here: the match cannot be confirmed
                out.append(ObjectRead(None, size, None))
                continue
            data = self.get(key, request)
            out.append(None if data is None else ObjectRead(data, size, None))
        return out

    sends_at_once: bool = False
    """Whether :meth:`submit_versioned` starts its batch at once (its
    requests run on an event loop): a read planner then sends each request
    as soon as what it needs is in, one batch per shard."""

    def submit_versioned(self, requests: Sequence[VersionedRequest],
                         on_answer: AnswerCallback | None = None) -> Pending[list[ObjectRead | None]]:
        """:meth:`get_versioned`, sent now and answered later: a read
        planner sends every batch of a stage before it decodes anything.
        Stores whose requests run on an event loop start the batch there at
        once; the default is the call, run when the answer is first asked
        for (or on an executor: :meth:`Pending.start`).

        ``on_answer(i, answer)``, when given, is called with each request's
        answer as it comes in (on a store's event loop: there, so it must
        only hand the answer on, or start the next batch: a submit from the
        loop's thread is scheduled, never waited for), before
        :meth:`Pending.result` returns; a failed request is not, its error
        comes from :meth:`Pending.result`."""
        requests = list(requests)
        if on_answer is None:
            return Pending.later(lambda: self.get_versioned(requests))
        return Pending.later(lambda: each_answered(self.get_versioned(requests), on_answer))

    def set_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """Store many ``(key, value)`` pairs; remote stores override this to
        keep up to :attr:`request_concurrency` writes in flight at once."""
        for key, value in items:
            self.set(key, value)

    batches_writes: bool = False
    """True when :meth:`set_many` and :meth:`delete_many` keep up to
    :attr:`request_concurrency` requests in flight themselves (or delete in
    batched requests); False: callers wanting many writes in flight split
    them over threads."""

    def _writable_keys(self, keys: Iterable[str]) -> tuple[list[str], StoreError | None]:
        """``keys`` checked for a batched write or delete, each once, in
        order, up to the first refused one; and the refusal (raise it after
        the batch, which then applies to the keys before it)."""
        names: list[str] = []
        try:
            for key in keys:
                self._check_writable(key)
                names.append(validate_key(key))
        except StoreError as exc:
            return list(dict.fromkeys(names)), exc
        return list(dict.fromkeys(names)), None

    def delete_many(self, keys: Iterable[str]) -> None:
        """Remove many keys (missing ones are not an error); stores that can
        delete in batches (S3's ``DeleteObjects``) override this."""
        for key in keys:
            self.delete(key)

    # -- safe concurrent updates -------------------------------------------
    supports_conditional_writes: bool = False
    """True when :meth:`set_conditional` works: a write can be made to depend
    on the object's version, checked by the backend in the same request.
    Read-modify-write then needs no lock (:mod:`zarrpy.stores.writes`)."""
    supports_conditional_deletes: bool = False
    """True when :meth:`set_conditional` can also delete (a ``value`` of
    None); where it cannot, writers store the empty encoding instead."""
    locks_updates: bool = False
    """True when :meth:`locked_for_update` locks across processes (local
    files): read-modify-write under it loses nothing without conditions."""

    @property
    def supports_concurrent_updates(self) -> bool:
        """Can writers in several processes update parts of one object (inner
        chunks of a shard, a region of a chunk) at once and lose nothing,
        with no synchronizer? True with conditional writes or cross-process
        update locks."""
        return self.supports_conditional_writes or self.locks_updates

    def set_conditional(self, writes: Sequence[ConditionalWrite]) -> list[bool]:
        """Apply each write only if its object still has its ``expected``
        version; True where it was applied, False where the object had
        changed (nothing written). Up to :attr:`request_concurrency` in
        flight at once. Stores without :attr:`supports_conditional_writes`
        raise :class:`~zarrpy.errors.StoreError`."""
        raise StoreError(f"{self.display_name!r} cannot write conditionally")

    def locked_for_update(self, keys: Sequence[str]) -> AbstractContextManager[None]:
        """Hold, across processes, the update locks of ``keys`` (where
        :attr:`locks_updates`); the default holds nothing."""
        return nullcontext()

    # -- streamed writes ---------------------------------------------------
    streams_writes: bool = False
    """True when :meth:`open_writer` sends bytes as they come (local temporary
    files, multipart uploads); False: it buffers them until commit."""

    def open_writer(self, key: str) -> ObjectWriter:
        """A writer of the object under ``key``: bytes go in piece by piece
        and the object appears whole at commit (see
        :class:`~zarrpy.stores.writes.ObjectWriter`). The default buffers."""
        self._check_writable(key)
        return BufferedObjectWriter(self, validate_key(key))

    def exists(self, key: str) -> bool:
        """True when ``key`` holds a value (stores override this to avoid reading it)."""
        return self.get(key) is not None

    def list(self) -> Iterator[str]:
        """Every key in the store."""
        return self.list_prefix("")

    def list_dir(self, prefix: str) -> Iterator[str]:
        """Immediate children of ``prefix`` (a ``/``-terminated or empty path):
        key names and sub-"directory" names, each once, without the prefix."""
        prefix = validate_prefix(prefix)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        seen: set[str] = set()
        for key in self.list_prefix(prefix):
            child = key[len(prefix) :].split("/", 1)[0]
            if child not in seen:
                seen.add(child)
                yield child

    # -- sizes -------------------------------------------------------------
    # The defaults read values; every bundled store overrides them with what
    # the backend reports (dict lengths, stat, object listings, zip entries).
    def getsize(self, key: str) -> int:
        """The length in bytes of the value under ``key`` (zarr-python's name).

        Raises :class:`~zarrpy.errors.KeyNotFoundError` (a
        ``FileNotFoundError``) when there is none, as zarr-python does.
        """
        value = self.get(key)
        if value is None:
            raise KeyNotFoundError(f"no value under key {key!r} in {self!r}")
        return len(value)

    def list_prefix_with_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        """``(key, size in bytes)`` for every key starting with ``prefix``.

        The batched form of :meth:`getsize`: one listing where the backend
        reports sizes with it, so callers never ask key by key. A key deleted
        between listing and sizing is left out.
        """
        for key in self.list_prefix(prefix):
            try:
                yield key, self.getsize(key)
            except KeyNotFoundError:
                continue

    def getsize_prefix(self, prefix: str) -> int:
        """Total size in bytes of the values under the "directory" ``prefix``
        (zarr-python's name; ``"a"`` means ``"a/"``, ``""`` the whole store)."""
        prefix = validate_prefix(prefix)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        return sum(size for _, size in self.list_prefix_with_sizes(prefix))

    def reader(self, key: str) -> KeyReader:
        """A byte-range reader of ``key`` for partial decoders."""
        return KeyReader(self, key)

    reads_in_place: bool = False
    """True when :meth:`get_scratch` reads into a reused buffer (local
    files): then a read gains nothing from fetching many values at once and
    goes value by value, each read, decoded and copied out in turn."""

    def get_scratch(self, key: str) -> AbstractContextManager[Any]:
        """The whole value of ``key`` (None when missing) as a bytes-like
        object valid inside the ``with`` block only: a store may read it into
        a scratch buffer of the calling thread (:mod:`zarrpy.core.scratch`).
        Default: :meth:`get`."""
        return nullcontext(self.get(key))

    def open_reader(self, key: str) -> AbstractContextManager[KeyReader]:
        """:meth:`reader` for one operation: the reads of a partial decode
        (the value's size, a shard's index, its inner chunks) happen inside
        the ``with`` block. A store may keep the value open meanwhile
        (:class:`~zarrpy.stores.local.LocalStore` opens the file once and
        reads every range of that one file). Default: :meth:`reader`."""
        return nullcontext(self.reader(key))

    @property
    def url(self) -> str | None:
        """A URL that reopens this store in another process, if there is one."""
        return None

    @property
    def process_local(self) -> bool:
        """True when the data lives in this process's memory (``MemoryStore``,
        fsspec's ``memory://``): no other process can reach it, so an array on
        it refuses to pickle (:class:`~zarrpy.errors.ProcessLocalError`)."""
        return False

    @property
    def identity(self) -> Hashable:
        """Equal for two store objects over the same data (the URL, else this
        object): what per-key locks and cache keys name the store by."""
        url = self.url
        return url if url is not None else ("object", id(self))

    @property
    def display_name(self) -> str:
        """How error messages name this store: the path or URL the user gave,
        else a description in angle brackets (``<MemoryStore>``)."""
        url = self.url
        return url if url is not None else f"<{type(self).__name__}>"

    @property
    def read_only_hint(self) -> str:
        """How to get write access: the end of every read-only message."""
        return READ_ONLY_HINT

    def _check_writable(self, key: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"cannot write {key!r} to {self.display_name!r}: the store is read-only; "
                                + self.read_only_hint)

    def __eq__(self, other: object) -> bool:
        """Stores of one type over the same data (:attr:`identity`) are equal."""
        if self is other:
            return True
        return type(self) is type(other) and isinstance(other, Store) and self.identity == other.identity

    def __hash__(self) -> int:
        return hash((type(self), self.identity))


__all__ = ["KeyReader", "Store", "store_error", "validate_key", "validate_prefix"]
