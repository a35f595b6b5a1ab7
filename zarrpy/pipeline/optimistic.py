"""Read-modify-write without locks: conditional writes, retried on conflict.

Writers in several processes (or machines sharing an object store) that
update parts of one stored object, such as inner chunks of one shard, each
read the object with its version, merge their own part in and write the
result only if the object still has that version
(:meth:`~zarrpy.stores.abc.Store.set_conditional`). A writer whose write is
refused lost a race: it reads the object again, merges *its own* writes into
what is there now, and tries again after a random pause, so no update is
ever written over. A new object is created only if it is still absent.

The retries are bounded (:data:`MAX_ATTEMPTS`, with exponential backoff and
full jitter); a key still in conflict after them is a
:class:`~zarrpy.errors.StoreError` naming it, and nothing of that key was
written. :func:`conflict_count` tells how many refused writes this process
retried (tests check that the retry path really ran).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from functools import partial

from ..core.batches import even_runs
from ..core.byte_range import VersionedRequest
from ..errors import StoreError
from ..stores.abc import Store
from ..stores.writes import ABSENT, ConditionalWrite
from .io_pool import map_io

MAX_ATTEMPTS = 40
"""Conditional writes of one key before giving up."""
BACKOFF_SECONDS = 0.005
"""The first retry waits up to this long; each next one up to twice as long..."""
BACKOFF_CAP_SECONDS = 0.5
"""... but never more than this."""

READ_BATCH = 1024
"""Objects read (and held, encoded) per batch of an update."""

Merge = Callable[[list[tuple[str, bytes | None]]], list[bytes | None]]
"""Given ``(key, current value or None)`` pairs, the new values (None: the
object should hold nothing, i.e. only the fill value)."""

_conflicts = 0
_conflicts_lock = threading.Lock()


def conflict_count() -> int:
    """How many conditional writes this process saw refused and retried."""
    return _conflicts


def _count(n: int) -> None:
    global _conflicts
    with _conflicts_lock:
        _conflicts += n


def update_conditionally(
    store: Store, keys: Sequence[str], merge: Merge, empty: Callable[[], bytes],
    *, first: Sequence[tuple[str, bytes | None]] = (),
) -> None:
    """Update the objects under ``keys`` through ``merge``, each written only
    if unchanged since it was read, re-read and re-merged on conflict.

    ``empty`` gives the stored form of "nothing but fill" for stores that
    cannot delete conditionally (an all-fill chunk, or a shard with no inner
    chunk): written in place of a delete, it keeps the version check.
    ``first`` are unconditional writes (None: delete) sent in the same round
    trip as the first conditional ones (objects written whole, whose old
    content does not matter)."""
    rest = list(first)
    for start in range(0, len(keys), READ_BATCH):
        _update_batch(store, list(keys[start : start + READ_BATCH]), merge, empty, rest)
        rest = []
    if rest:
        write_all(store, rest)


def _update_batch(
    store: Store, keys: list[str], merge: Merge, empty: Callable[[], bytes], also: list[tuple[str, bytes | None]]
) -> None:
    pending = keys
    for attempt in range(MAX_ATTEMPTS):
        reads = store.get_versioned([VersionedRequest(k) for k in pending])
        olds = [None if r is None else r.data for r in reads]
        versions: list[Hashable | None] = [ABSENT if r is None else r.version for r in reads]
        new_values = merge(list(zip(pending, olds)))
        conditional: list[ConditionalWrite] = []
        unversioned: list[tuple[str, bytes | None]] = []
        for key, value, version in zip(pending, new_values, versions):
            if version is None:  # the store told no version: nothing to condition on
                unversioned.append((key, value))
            elif value is None and version is ABSENT:
                continue  # all fill, and nothing stored: nothing to do
            elif value is None and not store.supports_conditional_deletes:
                conditional.append(ConditionalWrite(key, empty(), version))
            else:
                conditional.append(ConditionalWrite(key, value, version))
        done = _send(store, also + unversioned, conditional)
        also = []
        pending = [w.key for w, ok in zip(conditional, done) if not ok]
        if not pending:
            return
        _count(len(pending))
        time.sleep(random.uniform(0, min(BACKOFF_CAP_SECONDS, BACKOFF_SECONDS * 2**attempt)))
    raise StoreError(
        f"key {pending[0]!r} in {store.display_name}: still changed by other writers after {MAX_ATTEMPTS} "
        f"conditional writes ({len(pending)} key(s) not written)"
    )


def _send(store: Store, plain: list[tuple[str, bytes | None]], conditional: list[ConditionalWrite]) -> list[bool]:
    """Plain writes, deletes and conditional writes, all in flight together;
    the conditional writes' outcomes."""
    results: list[bool] = []

    def conditional_writes() -> None:
        results.extend(store.set_conditional(conditional))

    calls = [*_plain_calls(store, plain), *([conditional_writes] if conditional else [])]
    map_io(lambda call: call(), calls)
    return results


def write_all(store: Store, items: Sequence[tuple[str, bytes | None]]) -> None:
    """Write (None: delete) every item: the writes in one concurrent batch
    (:meth:`~zarrpy.stores.abc.Store.set_many`) beside one batched delete."""
    map_io(lambda call: call(), _plain_calls(store, items))


def _plain_calls(store: Store, items: Sequence[tuple[str, bytes | None]]) -> list[Callable[[], None]]:
    """Calls that write the puts and deletes of ``items``: one each on a
    store whose batches keep their requests in flight together
    (:attr:`~zarrpy.stores.abc.Store.batches_writes`); else the items split
    into up to :attr:`~zarrpy.stores.abc.Store.request_concurrency` runs, so
    the runs are in flight side by side."""
    puts = [(k, v) for k, v in items if v is not None]
    deletes = [k for k, v in items if v is None]
    runs = 1 if store.batches_writes else max(1, store.request_concurrency)
    calls: list[Callable[[], None]] = [partial(store.set_many, run) for run in even_runs(puts, runs)]
    calls += [partial(store.delete_many, run) for run in even_runs(deletes, runs)]
    return calls


__all__ = ["MAX_ATTEMPTS", "conflict_count", "update_conditionally", "write_all"]
