"""Pending batches: run once, by whoever asks first; live ones in answer order."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from zarrpy.core.pending import Pending, in_answer_order


def test_a_later_batch_runs_once_at_the_first_result() -> None:
    calls = []
    p = Pending.later(lambda: calls.append(1) or len(calls))
    assert calls == []
    assert p.result() == 1 and p.result() == 1
    assert calls == [1]
    assert not p.live
    p.wait_sent()  # nothing to wait for


def test_a_started_batch_runs_on_the_executor() -> None:
    where = []
    with ThreadPoolExecutor(1) as pool:
        p = Pending.later(lambda: where.append(threading.current_thread().name) or "done").start(pool)
        assert p.result() == "done"
    assert where and where[0] != threading.current_thread().name


def test_result_runs_the_batch_itself_when_the_executor_is_busy() -> None:
    release = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(release.wait, 10)  # the only thread is taken
        p = Pending.later(threading.current_thread).start(pool)
        assert p.result() is threading.current_thread()  # no wait for the busy pool
        release.set()


def test_an_error_is_raised_by_every_result() -> None:
    p = Pending.later(lambda: 1 / 0)
    for _ in range(2):
        with pytest.raises(ZeroDivisionError):
            p.result()


def test_a_live_batch_finishes_its_future_and_tells_when_sent() -> None:
    future: Future[object] = Future()
    sent = threading.Event()
    p = Pending.on_loop(future, lambda raw: [raw, raw], sent)
    assert p.live
    threading.Timer(0.05, sent.set).start()
    p.wait_sent(timeout=5)
    assert sent.is_set()
    future.set_result(3)
    assert p.result() == [3, 3]


def test_in_answer_order_gives_later_batches_first_then_live_ones_as_they_finish() -> None:
    slow: Future[object] = Future()
    fast: Future[object] = Future()
    batches = [Pending.on_loop(slow, lambda r: r, threading.Event()), Pending.later(lambda: "now"),
               Pending.on_loop(fast, lambda r: r, threading.Event())]
    threading.Timer(0.02, fast.set_result, ("fast",)).start()
    threading.Timer(0.2, slow.set_result, ("slow",)).start()
    t = time.monotonic()
    order = list(in_answer_order(batches))
    assert order == [1, 2, 0]
    assert time.monotonic() - t < 5
