"""AnswerDrain: items put from any thread, worked off by the thread in run()
and, while there is a backlog, a few chunk-pool threads."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from typing import Any, Callable

import pytest

from zarrpy.pipeline.answer_drain import AnswerDrain
from zarrpy.pipeline.concurrency import get_pool, max_workers

TIMEOUT_S = 30


def run_bounded(drain: AnswerDrain[Any], timeout: float = TIMEOUT_S) -> tuple[int, BaseException | None]:
    """``drain.run()`` on a thread of its own, which must end within
    ``timeout``: that thread's ident and run()'s error (None)."""
    error: list[BaseException] = []

    def target() -> None:
        try:
            drain.run()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            error.append(exc)

    t = threading.Thread(target=target, name="drain-run")
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "run() did not return"
    assert t.ident is not None
    return t.ident, (error[0] if error else None)


def feed(drain: AnswerDrain[Any], items: list[Any], *, pause: float = 0.0, close: bool = True,
         before_close: float = 0.0) -> threading.Thread:
    """A thread that puts ``items`` (pausing up to ``pause`` between them),
    then closes the drain."""

    def target() -> None:
        rng = random.Random(1)
        for item in items:
            drain.put(item)
            if pause:
                time.sleep(rng.uniform(0, pause))
        time.sleep(before_close)
        if close:
            drain.close()

    t = threading.Thread(target=target, name="drain-feed")
    t.start()
    return t


class Recorder:
    """A ``work`` that records each item with the thread that worked it,
    optionally sleeping, and counts works in progress."""

    def __init__(self, delay: float = 0.0, fail: Callable[[Any], bool] = lambda item: False) -> None:
        self.delay = delay
        self.fail = fail
        self.lock = threading.Lock()
        self.worked: list[tuple[Any, int]] = []
        self.finished = 0
        self.running = 0
        self.most_running = 0

    def __call__(self, item: Any) -> None:
        with self.lock:
            self.worked.append((item, threading.get_ident()))
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        try:
            if self.delay:
                time.sleep(self.delay)
            if self.fail(item):
                raise ValueError(f"cannot work {item}")
        finally:
            with self.lock:
                self.running -= 1
                self.finished += 1

    def items(self) -> list[Any]:
        with self.lock:
            return [item for item, _ in self.worked]

    def threads(self) -> set[int]:
        with self.lock:
            return {t for _, t in self.worked}


@pytest.mark.parametrize("helpers", [None, 0, 2])
def test_items_put_from_another_thread_are_each_worked_once(helpers: int | None) -> None:
    work = Recorder()
    drain: AnswerDrain[int] = AnswerDrain(work, helpers=helpers)
    items = list(range(3000))
    feeder = feed(drain, items, pause=0.0002)
    _, error = run_bounded(drain)
    feeder.join(TIMEOUT_S)
    assert error is None
    counts = Counter(work.items())
    assert set(counts) == set(items) and set(counts.values()) == {1}


def test_items_put_before_run_are_worked() -> None:
    work = Recorder()
    drain: AnswerDrain[str] = AnswerDrain(work, helpers=0)
    for item in "abc":
        drain.put(item)
    drain.close()
    ident, error = run_bounded(drain)
    assert error is None and work.items() == ["a", "b", "c"]  # in order, on the run() thread
    assert work.threads() == {ident}


def test_run_returns_only_after_close() -> None:
    work = Recorder()
    drain: AnswerDrain[int] = AnswerDrain(work)
    closed_at: list[float] = []

    def late_close() -> None:
        drain.put(1)
        time.sleep(0.3)  # the queue is empty meanwhile: run() waits
        drain.put(2)
        closed_at.append(time.monotonic())
        drain.close()

    t = threading.Thread(target=late_close)
    t.start()
    _, error = run_bounded(drain)
    returned_at = time.monotonic()
    t.join(TIMEOUT_S)
    assert error is None
    assert sorted(work.items()) == [1, 2]
    assert closed_at and returned_at >= closed_at[0]


def test_run_returns_only_after_the_helpers_finish() -> None:
    """Slow items put at once and the drain closed at once: the helpers are
    still working when the queue empties; run() waits for them."""
    work = Recorder(delay=0.05)
    drain: AnswerDrain[int] = AnswerDrain(work, helpers=2)
    for i in range(12):
        drain.put(i)
    drain.close()
    ident, error = run_bounded(drain)
    with work.lock:
        finished, running = work.finished, work.running
    assert error is None
    assert (finished, running) == (12, 0)  # nothing still at work when run() returned
    assert len(work.threads() - {ident}) >= 1  # helpers took part


def test_work_that_queues_more_work_is_waited_for() -> None:
    """An item's work may put more items (a shard queues its inner chunks),
    on a helper thread too: run() returns once those are worked as well."""
    lock = threading.Lock()
    done: list[tuple[int, int]] = []
    drain: AnswerDrain[tuple[int, int]]

    def work(item: tuple[int, int]) -> None:
        level, n = item
        time.sleep(0.005)
        if level < 2:
            for k in range(3):
                drain.put((level + 1, n * 3 + k))
        with lock:
            done.append(item)

    drain = AnswerDrain(work, helpers=2)
    for n in range(4):
        drain.put((0, n))
    drain.close()  # closed before any child is queued
    _, error = run_bounded(drain)
    assert error is None
    assert len(done) == 4 + 12 + 36 and len(set(done)) == len(done)


def test_the_first_error_is_raised_and_no_later_item_is_worked() -> None:
    work = Recorder(fail=lambda item: item in (5, 8))
    drain: AnswerDrain[int] = AnswerDrain(work, helpers=0)  # one thread: a known order
    for i in range(20):
        drain.put(i)
    drain.close()
    _, error = run_bounded(drain)
    assert isinstance(error, ValueError) and str(error) == "cannot work 5"
    assert work.items() == [0, 1, 2, 3, 4, 5]
    drain.put(99)  # after the error: never worked
    _, again = run_bounded(drain)
    assert again is error
    assert 99 not in work.items()


def test_an_error_ends_run_without_waiting_for_close() -> None:
    """A failed item ends the read: run() does not wait for answers still to come."""
    work = Recorder(fail=lambda item: item == "bad")
    drain: AnswerDrain[str] = AnswerDrain(work, helpers=0)
    drain.put("good")
    drain.put("bad")  # never closed
    _, error = run_bounded(drain, timeout=10)
    assert isinstance(error, ValueError)
    assert work.items() == ["good", "bad"]


def test_after_an_error_the_helpers_take_no_more_items() -> None:
    work = Recorder(delay=0.003, fail=lambda item: item == 10)
    drain: AnswerDrain[int] = AnswerDrain(work, helpers=2)
    for i in range(300):
        drain.put(i)
    drain.close()
    _, error = run_bounded(drain)
    assert isinstance(error, ValueError) and str(error) == "cannot work 10"
    with work.lock:
        running, seen = work.running, len(work.worked)
    assert running == 0  # run() waited for the helpers' items in hand
    assert seen < 300  # the queue was dropped at the error
    for i in range(300, 320):
        drain.put(i)  # no helper starts, nothing is worked
    time.sleep(0.1)
    assert len(work.items()) == seen


def test_helpers_work_a_backlog_alongside_run() -> None:
    work = Recorder(delay=0.02)
    drain: AnswerDrain[int] = AnswerDrain(work, helpers=2)
    feeder = feed(drain, list(range(30)))  # faster than one thread works them
    ident, error = run_bounded(drain)
    feeder.join(TIMEOUT_S)
    assert error is None and sorted(work.items()) == list(range(30))
    assert len(work.threads()) > 1  # pool threads helped
    assert ident in work.threads()  # and so did the thread in run()
    assert work.most_running <= 3  # at most the two helpers and run()'s thread


def test_no_helpers_means_only_the_run_thread() -> None:
    work = Recorder(delay=0.005)
    drain: AnswerDrain[int] = AnswerDrain(work, helpers=0)
    feeder = feed(drain, list(range(30)))
    ident, error = run_bounded(drain)
    feeder.join(TIMEOUT_S)
    assert error is None and work.threads() == {ident} and work.most_running == 1


def test_a_drain_in_a_chunk_pool_worker_works_alone_and_completes() -> None:
    """A drain run from a pool thread has no helpers: with every pool thread
    in such a drain, a helper queued on the pool would never start, and a
    run() waiting for it would wait forever."""
    n = max_workers()
    ready = threading.Barrier(n + 1, timeout=TIMEOUT_S)

    def in_worker() -> tuple[int, set[int], list[int]]:
        work = Recorder(delay=0.001)
        drain: AnswerDrain[int] = AnswerDrain(work)  # helpers=None: the default
        ready.wait()  # every pool thread is in here: the pool is full
        feeder = feed(drain, list(range(100)))
        drain.run()
        feeder.join(TIMEOUT_S)
        return threading.get_ident(), work.threads(), sorted(work.items())

    futures = [get_pool().submit(in_worker) for _ in range(n)]
    ready.wait()
    results = [f.result(timeout=TIMEOUT_S) for f in futures]
    assert len({ident for ident, _, _ in results}) == n  # each on its own pool thread
    for ident, threads, items in results:
        assert threads == {ident}
        assert items == list(range(100))


def test_a_drain_in_a_chunk_pool_worker_raises_its_error() -> None:
    def in_worker() -> None:
        drain: AnswerDrain[int] = AnswerDrain(Recorder(fail=lambda item: item == 2), helpers=4)
        feeder = feed(drain, [1, 2, 3])
        try:
            drain.run()
        finally:
            feeder.join(TIMEOUT_S)

    with pytest.raises(ValueError, match="cannot work 2"):
        get_pool().submit(in_worker).result(timeout=TIMEOUT_S)
