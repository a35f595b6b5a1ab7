"""Partial shard reads planned in stages, each stage one concurrent batch.

A read that takes parts of many shards needs, for each, the shard's index
and then the inner chunks the index points to. Asking shard by shard costs
three sequential round trips per shard on an object store (a size request,
the index, the inner chunks). :class:`ShardReads` asks for all of them
together instead:

1. **indexes**: one batch of suffix reads (:meth:`Store.get_versioned`) for
   the shards whose index it does not hold; each answer carries the shard's
   length (the index is checked against it: the reliability bounds check,
   with no HEAD) and its version;
2. **inner chunks**: every shard's merged byte ranges, each conditional on
   the version its index came from.

Every request of stage 2 is sent before anything decodes (the shards read
whole in stage 1 decode while stage 2 is in flight): decoding holds the
GIL in bursts, and a Python HTTP client's request that is not yet written
waits for it. On stores that start a batch at once
(:attr:`~zarrpy.stores.abc.Store.sends_at_once`: HTTP, S3, obstore) each
shard's ranges go out as soon as its own index is in, as tensorstore
pipelines them, so a slow index, or a big shard fetched whole beside the
indexes, holds back no other shard; elsewhere stage 2 goes out in a few
batches once every index is in. Either way a read is two round trips deep.
On those stores :meth:`ShardReads.read_answered` checks each index and
sends its shard's ranges from the store's event loop, in the answer's own
callback: a hop to a reading thread waits for the GIL while other answers
are being received, which delayed stage 2 by 1-3 ms over HTTP.

Checked indexes are kept (:class:`IndexCache`) with the shard's version and
length, so a later read into the same shard costs one round trip. A kept
index is used only under that condition: when the shard changed (or was
deleted) since, the store says so instead of answering, the index is
dropped and the shard is planned again, so a read never combines an index
with another version's bytes. Stores that tell no versions keep nothing.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass
from threading import Condition, Lock
from typing import Any, Callable, Hashable, Sequence

from ..codecs.chain import BoundChain
from ..codecs.partial import ChunkSelection, DecodeOptions, IndexedDecoder, PrefetchedReader
from ..core.batches import even_runs
from ..core.byte_range import ObjectRead, RangeRequest, VersionedRequest
from ..core.pending import Pending, in_answer_order
from ..errors import CodecError, StoreError, at_key
from ..stores.abc import Store
from .cache_hook import ChunkCache
from .answer_drain import AnswerDrain
from .io_pool import get_io_pool, map_io

MAX_ATTEMPTS = 4
"""Plans of one shard before a read gives up on a shard that changes under
every one of them (each attempt is a new index and new bytes)."""

INDEX_CACHE_ENTRIES = 512
"""Shard indexes an array keeps when no central cache is given."""


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """A checked shard index and the shard it came from."""

    index: Any
    """What :meth:`IndexedDecoder.load_index` returned (a ``ShardIndex``)."""
    size: int
    version: Hashable

    @property
    def nbytes(self) -> int:
        """What the entry holds, for a cache's byte budget."""
        return int(self.index.nbytes)


class IndexCache:
    """Checked shard indexes by store key: in the central ``cache`` when one
    is given (under ``prefix``, so dropping a node's entries drops these),
    else in a small LRU of this array's own."""

    def __init__(self, cache: ChunkCache | None, prefix: tuple[Any, ...], capacity: int = INDEX_CACHE_ENTRIES):
        self._cache, self._prefix = cache, (*prefix, "shard-index")
        self._own: OrderedDict[str, IndexEntry] = OrderedDict()
        self._capacity = capacity
        self._lock = Lock()

    def get(self, key: str) -> IndexEntry | None:
        """The entry kept for ``key``, or None."""
        if self._cache is not None:
            try:
                entry: IndexEntry = self._cache[(*self._prefix, key)]
                return entry
            except KeyError:
                return None
        with self._lock:
            entry_or_none = self._own.get(key)
            if entry_or_none is not None:
                self._own.move_to_end(key)
            return entry_or_none

    def put(self, key: str, entry: IndexEntry) -> None:
        """Keep ``entry`` for ``key``."""
        if self._cache is not None:
            self._cache.store_if_current((*self._prefix, key), entry, self._cache.version)
            return
        with self._lock:
            self._own[key] = entry
            self._own.move_to_end(key)
            while len(self._own) > self._capacity:
                self._own.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry of this array."""
        if self._cache is not None:
            self._cache.discard_prefix(self._prefix)
            return
        with self._lock:
            self._own.clear()

    def discard(self, keys: Sequence[str]) -> None:
        """Drop the entries of ``keys`` (their shards were written or changed)."""
        if self._cache is not None:
            self._cache.discard([(*self._prefix, key) for key in keys])
            return
        with self._lock:
            for key in keys:
                self._own.pop(key, None)


@dataclass(slots=True)
class _Plan:
    """One shard of a read being planned: its decoder and what it needs."""

    key: str
    selections: list[ChunkSelection]
    decoder: IndexedDecoder
    reader: PrefetchedReader
    entry: IndexEntry | None = None
    ranges: list[RangeRequest] | None = None
    cached: bool = False
    parts: list[frozenset[int]] | None = None  # per range, its inner chunks: each range decodes as it arrives
    writers: _Writers | None = None  # with parts: the range decodes writing into the output


class _Writers:
    """The decodes of one plan's ranges, each as its range arrives: once the
    shard is found changed (:meth:`supersede`), none starts, and the read
    planned again waits for those running, so none writes after it."""

    __slots__ = ("_cond", "_active", "_superseded")

    def __init__(self) -> None:
        self._cond = Condition()
        self._active = 0
        self._superseded = False

    def enter(self) -> bool:
        """Start a decode; False (do nothing) once superseded."""
        with self._cond:
            if self._superseded:
                return False
            self._active += 1
            return True

    def leave(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()

    def supersede(self) -> None:
        """No decode starts from now on; return once the running ones end
        (they wait on nothing, so this cannot wait forever)."""
        with self._cond:
            self._superseded = True
            self._cond.wait_for(lambda: self._active == 0)


class ShardReads:
    """Stage 1 (indexes) and stage 2 (inner-chunk ranges) of the partial
    shard reads of one operation (see the module docstring)."""

    def __init__(self, store: Store, bound_for_key: Callable[[str], BoundChain], options: DecodeOptions,
                 indexes: IndexCache):
        """``bound_for_key(key)``: the chain bound to the shard under ``key``
        (shards of one array may differ in shape: a rectilinear shard grid)."""
        self.store, self.bound_for_key, self.options, self.indexes = store, bound_for_key, options, indexes

    def read(
        self, wanted: Sequence[tuple[str, list[ChunkSelection]]], ready: Callable[[str, IndexedDecoder], None],
        whole: Sequence[str] = (), whole_ready: Callable[[list[bytes | None]], None] | None = None,
        groups: int = 1,
    ) -> None:
        """Read the shards ``wanted`` (key, selections of it): ``ready(key,
        decoder)`` is called for each, from some thread, as soon as its
        decoder holds its index and the bytes it needs. Stage 1 also fetches
        the whole values of the keys ``whole``, handed to ``whole_ready``,
        which runs while stage 2's requests are in flight. Stage 2 goes out
        as ``groups`` batches at once, so the first shards decode while the
        others' bytes still arrive."""
        plans = [self._plan(key, selections) for key, selections in wanted]
        whole_data: Pending[list[bytes | None]] = Pending.later(
            lambda: self.store.get_partial_values([(k, None) for k in whole]) if whole else [])
        if whole:
            whole_data.start(get_io_pool())  # in flight beside the indexes
        sent = self._send(plans, groups)
        steps: list[Callable[[], None]] = [
            functools.partial(self._finish, run, ready) for run in even_runs(sent, max(1, groups))]
        if whole_ready is not None and whole:

            def decode_whole() -> None:
                # Every request goes out before anything decodes: decoding
                # holds the GIL in bursts, which holds back requests not yet written.
                for _, ranges in sent:
                    ranges.wait_sent()
                whole_ready(whole_data.result())

            steps.append(decode_whole)
        map_io(lambda step: step(), steps)

    def read_answered(
        self, wanted: Sequence[tuple[str, list[ChunkSelection]]], ready: Callable[[str, IndexedDecoder], None],
        whole: Sequence[str], whole_ready: Callable[[int, ObjectRead | None], None],
        drain: AnswerDrain[Callable[[], None]],
        ready_parts: Callable[[str, IndexedDecoder, frozenset[int]], None] | None = None,
        splits: Callable[[str, IndexedDecoder], bool] = lambda key, decoder: False,
    ) -> None:
        """:meth:`read` on a store that sends a batch at once, driven by its
        answers: stage 1 (the indexes not kept, and the whole values of the
        keys ``whole``) is one batch; each index is checked, and its shard's
        ranges sent, on the store's event loop as soon as the index is in,
        so no thread hop (each a wait for the GIL while answers are being
        received) delays stage 2. Decoding is work on ``drain``:
        ``whole_ready(i, answer)`` for each whole value, ``ready(key,
        decoder)`` for each shard once its ranges are in, or, for a shard
        ``splits(key, decoder)`` allows whose ranges are several,
        ``ready_parts(key, decoder, parts)`` as each range arrives, with the
        inner chunks it holds (so what is left once the last answer is in is
        that range's decode, not the shard's). The drain is run here, by
        this thread and its helpers, and closed once every batch is
        answered; a failed request or a decoding error is raised."""
        plans = [self._plan(key, selections) for key, selections in wanted]
        lock = Lock()
        open_batches = 1  # stage 1, until it is answered

        def settle() -> None:
            nonlocal open_batches
            with lock:
                open_batches -= 1
                last = open_batches == 0
            if last:
                drain.close()

        def decode_range(plan: _Plan, j: int, data: bytes) -> None:
            assert plan.writers is not None and plan.parts is not None and plan.ranges is not None
            if not plan.writers.enter():
                return  # the shard changed: it is read again whole
            try:
                plan.reader.add([plan.ranges[j]], [data])
                assert ready_parts is not None
                ready_parts(plan.key, plan.decoder, plan.parts[j])
            finally:
                plan.writers.leave()

        def range_answered(plan: _Plan, j: int, answer: ObjectRead | None) -> None:
            if answer is not None and answer.data is not None:  # else it changed: the finish reads it again
                drain.put(functools.partial(decode_range, plan, j, answer.data))

        def send(plan: _Plan) -> None:
            nonlocal open_batches
            by_range = range_answered if ready_parts is not None and splits(plan.key, plan.decoder) else None
            sent = self._send_ranges([plan], by_range)
            finish = functools.partial(self._finish_batch, [plan], sent, ready)
            if not sent.live:  # nothing in flight on a loop: the drain fetches it
                drain.put(finish)
                return
            with lock:
                open_batches += 1

            def answered() -> None:
                drain.put(finish)
                settle()

            sent.answers.when_done(answered)

        for plan in plans:
            if self._use_kept_index(plan):
                send(plan)
        missing = [plan for plan in plans if not plan.cached]
        n_indexes = len(missing)

        def on_answer(i: int, answer: ObjectRead | None) -> None:
            if i >= n_indexes:
                drain.put(functools.partial(whole_ready, i - n_indexes, answer))
                return
            try:
                self._take_index(missing[i], answer)
                send(missing[i])
            except BaseException as exc:  # noqa: BLE001 - raised by the drain, on the reading thread
                drain.put(functools.partial(_raise, exc))

        stage1 = self.store.submit_versioned(
            [VersionedRequest(p.key, p.decoder.index_request()) for p in missing] + [VersionedRequest(k) for k in whole],
            on_answer=on_answer)
        stage1.when_done(settle)
        for plan in missing:  # while the indexes are in flight
            plan.decoder.prepare(plan.selections)
        if not stage1.live:
            stage1.result()  # a store that answers the batch all at once, here
        drain.run()
        stage1.result()  # a failed request's error

    def _send(self, plans: list[_Plan], groups: int) -> list[tuple[list[_Plan], _SentRanges]]:
        """Stage 1, and stage 2 sent. On a store that sends a batch at once
        (:attr:`Store.sends_at_once`) each shard's ranges go out as soon as
        its index is in (a kept index: at once), as tensorstore pipelines
        them; elsewhere after every index, in ``groups`` batches."""
        if not self.store.sends_at_once:
            self._stage_indexes(plans)
            return [(batch, self._send_ranges(batch)) for batch in even_runs(plans, max(1, groups))]
        missing = [plan for plan in plans if not self._use_kept_index(plan)]
        out = [([plan], self._send_ranges([plan])) for plan in plans if plan.cached]
        pending = [self.store.submit_versioned([VersionedRequest(p.key, p.decoder.index_request())]) for p in missing]
        for plan in missing:  # while the indexes are in flight
            plan.decoder.prepare(plan.selections)
        for i in in_answer_order(pending):
            (answer,) = pending[i].result()
            self._take_index(missing[i], answer)
            out.append(([missing[i]], self._send_ranges([missing[i]])))
        return out

    def prepare(self, wanted: Sequence[tuple[str, list[ChunkSelection]]]) -> dict[str, IndexedDecoder]:
        """Decoders for the shards ``wanted`` (key, selections of it), each
        with its index and the bytes it needs in memory (:meth:`read`, all
        in one batch per stage)."""
        done: dict[str, IndexedDecoder] = {}
        self.read(wanted, done.__setitem__)
        return done

    def _finish(self, run: list[tuple[list[_Plan], _SentRanges]], ready: Callable[[str, IndexedDecoder], None]) -> None:
        """:meth:`_finish_batch` of each batch of ``run``, in order."""
        for plans, sent in run:
            self._finish_batch(plans, sent, ready)

    def _finish_batch(self, plans: list[_Plan], sent: _SentRanges, ready: Callable[[str, IndexedDecoder], None]) -> None:
        """Stage 2 of ``plans`` (its requests ``sent``), then ``ready`` for
        each; a shard that changed since its index is planned again, at most
        :data:`MAX_ATTEMPTS` times."""
        for attempt in range(MAX_ATTEMPTS):
            if attempt:
                self._stage_indexes(plans)
                sent = self._send_ranges(plans)
            changed = self._take_ranges(plans, sent)
            for plan in plans:
                if plan.key in changed:
                    if plan.writers is not None:
                        plan.writers.supersede()  # no range of the old shard writes after its new read
                elif plan.parts is None:  # else each range was decoded as it came
                    ready(plan.key, plan.decoder)
            plans = [self._plan(p.key, p.selections) for p in plans if p.key in changed]
            if not plans:
                return
        keys = ", ".join(repr(p.key) for p in plans)
        raise StoreError(f"shard {keys} in {self.store.display_name} changed during each of {MAX_ATTEMPTS} reads of it")

    def _plan(self, key: str, selections: list[ChunkSelection]) -> _Plan:
        reader = PrefetchedReader(0, self.store.reader(key))
        decoder = self.bound_for_key(key).partial_decoder(reader, self.options)
        assert isinstance(decoder, IndexedDecoder)  # ChunkIO plans shards of plain chains only
        return _Plan(key, selections, decoder, reader)

    def _use_kept_index(self, plan: _Plan) -> bool:
        """Take the kept index of ``plan``'s shard, if there is one."""
        entry = self.indexes.get(plan.key)
        if entry is None:
            return False
        plan.entry, plan.cached = entry, True
        plan.decoder.use_index(entry.index)
        plan.reader.total = entry.size
        return True

    def _stage_indexes(self, plans: list[_Plan]) -> None:
        """Stage 1 in one batch: kept indexes taken, the others read."""
        missing = [plan for plan in plans if not self._use_kept_index(plan)]
        if missing:
            answers = self.store.get_versioned([VersionedRequest(p.key, p.decoder.index_request()) for p in missing])
            for plan, answer in zip(missing, answers):
                self._take_index(plan, answer)

    def _take_index(self, plan: _Plan, answer: ObjectRead | None) -> None:
        if answer is None or answer.data is None:  # a missing shard: fill, nothing to keep
            plan.decoder.use_index(None)
            return
        try:
            index = plan.decoder.load_index(answer.data, answer.size)
        except CodecError as exc:
            raise at_key(exc, plan.key) from exc
        plan.reader.total = answer.size
        if index is not None and answer.version is not None:
            plan.entry = IndexEntry(index, answer.size, answer.version)
            self.indexes.put(plan.key, plan.entry)

    def _send_ranges(self, plans: list[_Plan],
                     by_range: Callable[[_Plan, int, ObjectRead | None], None] | None = None) -> _SentRanges:
        """Stage 2, sent: every shard's ranges in one batch, conditional on
        the version of its index (the ranges of shards without versions in a
        plain batch beside it). With ``by_range``, a single shard whose
        several ranges are all versioned and whose decoder splits its parts
        by range gets ``by_range(plan, j, answer)`` (on the store's loop) as
        its range ``j`` is answered."""
        versioned: list[tuple[_Plan, RangeRequest | None]] = []
        plain: list[tuple[_Plan, RangeRequest]] = []
        for plan in plans:
            plan.ranges = plan.decoder.byte_ranges(plan.selections)
            version = plan.entry.version if plan.entry is not None else None
            if version is None:
                plain.extend((plan, r) for r in plan.ranges)
            elif plan.ranges:
                versioned.extend((plan, r) for r in plan.ranges)
            elif plan.cached:  # nothing to read, but a kept index must still be confirmed
                versioned.append((plan, None))
        on_answer = None
        if by_range is not None and len(plans) == 1 and not plain and len(versioned) > 1:
            plan = plans[0]
            parts = plan.decoder.parts_by_range(plan.selections)
            if parts is not None and len(parts) == len(versioned):
                plan.parts, plan.writers = parts, _Writers()

                def on_answer(j: int, answer: ObjectRead | None) -> None:
                    by_range(plan, j, answer)

        answers = self.store.submit_versioned(
            [VersionedRequest(p.key, r if r is not None else p.decoder.index_request(), p.entry.version)  # type: ignore[union-attr]
             for p, r in versioned], on_answer=on_answer) if versioned else Pending.later(list)
        data = Pending.later(lambda: self.store.get_partial_values([(p.key, r) for p, r in plain]) if plain else [])
        if versioned and plain:  # both in flight at once
            data.start(get_io_pool())
        return _SentRanges(versioned, plain, answers, data)

    def _take_ranges(self, plans: list[_Plan], sent: _SentRanges) -> set[str]:
        """Stage 2, answered: each shard's bytes handed to its reader; the
        keys whose shard changed since its index."""
        answers, data = sent.answers.result(), sent.data.result()
        changed: set[str] = set()
        got: dict[str, tuple[list[RangeRequest], list[bytes]]] = {}
        for (plan, request), answer in zip(sent.versioned, answers):
            if answer is None or answer.data is None:
                changed.add(plan.key)
            elif request is not None:
                ranges, datas = got.setdefault(plan.key, ([], []))
                ranges.append(request)
                datas.append(answer.data)
        for (plan, request), value in zip(sent.plain, data):
            if value is not None:
                ranges, datas = got.setdefault(plan.key, ([], []))
                ranges.append(request)
                datas.append(value)
        if changed:
            self.indexes.discard(sorted(changed))
        for plan in plans:
            if plan.key in got and plan.key not in changed and plan.parts is None:  # else added range by range
                plan.reader.add(*got[plan.key])
        return changed


@dataclass(slots=True)
class _SentRanges:
    """Stage 2 of some shards, sent: the requests and their pending answers."""

    versioned: list[tuple[_Plan, RangeRequest | None]]
    plain: list[tuple[_Plan, RangeRequest]]
    answers: Pending[list[ObjectRead | None]]
    data: Pending[list[bytes | None]]

    @property
    def live(self) -> bool:
        """Whether every request is in flight on an event loop (none waits
        for a thread to run it)."""
        return self.answers.live and not self.plain

    def wait_sent(self) -> None:
        """Until the requests are written (see :meth:`Pending.wait_sent`)."""
        self.answers.wait_sent()


def _raise(exc: BaseException) -> None:
    raise exc


__all__ = ["INDEX_CACHE_ENTRIES", "IndexCache", "IndexEntry", "MAX_ATTEMPTS", "ShardReads"]
