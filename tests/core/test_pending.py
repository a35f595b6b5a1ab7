"""Pending batches: run once, by whoever asks first; live ones in answer order.

A live batch knows the event loop it runs on: waiting for it on that loop's
own thread (an ``on_answer`` callback) would wait forever, so ``result()``
refuses there until the batch is done; any other thread, and any other
loop's (a user's ``asyncio.run``), waits as usual."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterator

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


# -- when_done --------------------------------------------------------------------------------


def test_when_done_of_a_later_batch_runs_after_result_ran_it() -> None:
    events: list[str] = []
    p = Pending.later(lambda: events.append("ran") or "value")
    p.when_done(lambda: events.append(f"done, result {p.result()}"))  # result() is ready inside
    p.when_done(lambda: events.append("second"))
    assert events == []  # nothing runs the batch yet
    assert p.result() == "value"
    assert events == ["ran", "done, result value", "second"]
    p.result()
    assert events.count("second") == 1  # once only


def test_when_done_of_a_finished_later_batch_runs_at_once_on_the_calling_thread() -> None:
    p = Pending.later(lambda: 7)
    p.result()
    where: list[threading.Thread] = []
    p.when_done(lambda: where.append(threading.current_thread()))
    assert where == [threading.current_thread()]


def test_when_done_of_a_failed_later_batch_still_runs() -> None:
    called = threading.Event()
    p = Pending.later(lambda: 1 / 0)
    p.when_done(called.set)
    with pytest.raises(ZeroDivisionError):
        p.result()
    assert called.is_set()


def test_when_done_of_a_started_batch_runs_on_the_executor_after_it() -> None:
    release = threading.Event()
    seen: list[tuple[str, bool]] = []
    done = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        p = Pending.later(lambda: release.wait(5) and "answers")
        p.when_done(lambda: (seen.append((threading.current_thread().name, release.is_set())), done.set()))
        p.start(pool)
        time.sleep(0.05)
        assert seen == []  # still running
        release.set()
        assert done.wait(5)
        assert p.result() == "answers"
    assert seen and seen[0][0] != threading.current_thread().name and seen[0][1]


def test_when_done_of_a_live_batch_runs_when_its_future_finishes() -> None:
    future: Future[object] = Future()
    p = Pending.on_loop(future, lambda raw: raw, threading.Event())
    where: list[str] = []
    p.when_done(lambda: where.append(threading.current_thread().name))
    time.sleep(0.02)
    assert where == []
    setter = threading.Thread(target=future.set_result, args=("in",), name="the-loop")
    setter.start()
    setter.join(5)
    assert where == ["the-loop"]  # on the thread that finished it
    p.when_done(lambda: where.append("late"))  # already done: at once
    assert where == ["the-loop", "late"]
    assert p.result() == "in"


def test_when_done_of_a_failed_live_batch_runs_and_result_raises() -> None:
    future: Future[object] = Future()
    p = Pending.on_loop(future, lambda raw: raw, threading.Event())
    called: list[int] = []
    p.when_done(lambda: called.append(1))
    future.set_exception(OSError("no answer"))
    assert called == [1]
    with pytest.raises(OSError, match="no answer"):
        p.result()


def test_when_done_racing_the_batch_runs_each_callback_once() -> None:
    for _ in range(50):
        gate = threading.Event()
        p = Pending.later(lambda: gate.wait(5))
        counts = [0] * 8
        lock = threading.Lock()

        def register(i: int) -> None:
            def bump() -> None:
                with lock:
                    counts[i] += 1
            p.when_done(bump)

        threads = [threading.Thread(target=register, args=(i,)) for i in range(8)]
        runner = threading.Thread(target=p.result)
        runner.start()
        for t in threads[:4]:
            t.start()
        gate.set()
        for t in threads[4:]:
            t.start()
        for t in [runner, *threads]:
            t.join(5)
        assert counts == [1] * 8


# -- result() on the batch's own event loop ---------------------------------------------------


@pytest.fixture
def loop_thread() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running on a thread of its own, as a store's is."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="store-loop", daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    assert not thread.is_alive()
    loop.close()


def _on(loop: asyncio.AbstractEventLoop, fn: Callable[[], Any]) -> Any:
    """``fn()`` run on ``loop``'s thread: its value, or the exception it raised."""

    async def call() -> Any:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - handed back to the test
            return exc

    return asyncio.run_coroutine_threadsafe(call(), loop).result(timeout=5)


def test_result_on_the_batchs_own_loop_is_refused_until_it_is_done(loop_thread) -> None:
    future: Future[object] = Future()
    p = Pending.on_loop(future, lambda raw: ["finished", raw], threading.Event(), loop_thread)
    refused = _on(loop_thread, p.result)
    assert isinstance(refused, NotImplementedError) and "wait forever" in str(refused)
    future.set_result("raw")
    assert _on(loop_thread, p.result) == ["finished", "raw"]  # done: nothing to wait for, so given there too
    assert p.result() == ["finished", "raw"]


def test_result_of_a_failed_batch_on_its_own_loop_raises_the_batchs_error(loop_thread) -> None:
    future: Future[object] = Future()
    p = Pending.on_loop(future, lambda raw: raw, threading.Event(), loop_thread)
    future.set_exception(OSError("no answer"))
    got = _on(loop_thread, p.result)
    assert isinstance(got, OSError) and "no answer" in str(got)


def test_result_on_another_thread_waits_for_a_batch_of_a_loop(loop_thread) -> None:
    future: Future[object] = Future()
    p = Pending.on_loop(future, lambda raw: raw, threading.Event(), loop_thread)
    loop_thread.call_soon_threadsafe(loop_thread.call_later, 0.05, future.set_result, "late")
    t = time.monotonic()
    assert p.result() == "late"
    assert 0.04 <= time.monotonic() - t < 5  # it waited for the answer


def test_result_on_another_event_loop_waits_rather_than_refuses(loop_thread) -> None:
    """A user's own loop (``asyncio.run`` on the main thread) calling
    blocking code: the batch runs on another loop, so waiting is fine."""
    future: Future[object] = Future()
    p = Pending.on_loop(future, lambda raw: raw, threading.Event(), loop_thread)
    loop_thread.call_soon_threadsafe(loop_thread.call_later, 0.05, future.set_result, "answered")

    async def users_code() -> Any:
        assert asyncio.get_running_loop() is not loop_thread
        return p.result()

    assert asyncio.run(users_code()) == "answered"
