"""The stores' bounded batches of async requests (``zarrpy.stores._concurrent``):
results in order, the limit kept, and a batch started on its own loop's
thread (the next stage, from an answer's callback) running its requests to
their first wait before the call returns, where Python starts tasks eagerly."""

from __future__ import annotations

import asyncio
import threading

import pytest

from zarrpy.stores._concurrent import EAGER_TASKS, bounded, start_on_loop


def _gated() -> tuple[list[int], asyncio.Event, object]:
    entered: list[int] = []
    gate = asyncio.Event()

    async def func(i: int) -> int:
        entered.append(i)
        await gate.wait()
        if i == 3:
            raise ValueError("three")
        return i * 2

    return entered, gate, func


@pytest.mark.parametrize("limit", [1, 2, 8])
def test_a_batch_started_on_its_loop_writes_what_it_can_before_returning(limit: int) -> None:
    async def main() -> tuple[list[int], list[object], bool, list[tuple[int, object]]]:
        entered, gate, func = _gated()
        answered: list[tuple[int, object]] = []
        future, sent = start_on_loop(asyncio.get_running_loop(), limit, func, [0, 1, 2, 3],  # type: ignore[arg-type]
                                     lambda i, r: answered.append((i, r)))
        at_once = list(entered)
        gate.set()
        while not future.done():
            await asyncio.sleep(0)
        return at_once, future.result(), sent.is_set(), answered

    at_once, results, sent, answered = asyncio.run(main())
    assert at_once == (list(range(min(limit, 4))) if EAGER_TASKS else [])
    assert results[:3] == [0, 2, 4] and isinstance(results[3], ValueError)  # in order, each error in its place
    assert sent
    assert sorted(answered) == [(0, 0), (1, 2), (2, 4)]  # on_each for each success only


def test_a_batch_started_from_another_thread_runs_on_the_loop() -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        names: list[str] = []

        async def func(i: int) -> int:
            names.append(threading.current_thread().name)
            await asyncio.sleep(0.001)
            return i + 1

        future, sent = start_on_loop(loop, 2, func, [0, 1, 2])
        assert future.result(timeout=10) == [1, 2, 3]
        assert sent.wait(timeout=10)
        assert set(names) == {thread.name}
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


def test_bounded_never_has_more_than_its_limit_in_flight() -> None:
    in_flight, most = 0, 0

    async def func(i: int) -> int:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.001)
        in_flight -= 1
        return i

    assert asyncio.run(bounded(3, func, list(range(10)))) == list(range(10))
    assert most == 3
