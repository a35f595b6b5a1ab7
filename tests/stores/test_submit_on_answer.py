"""``Store.submit_versioned(requests, on_answer=...)``: each request's answer
handed on as it comes in, the same answer ``result()`` gives; a failed
request is not handed on, its error comes from ``result()``.

Over HTTP ``on_answer`` runs on the store's event loop, where it may start
the next batch (a read's next stage): that batch is scheduled and answered;
waiting there for a batch not yet answered would wait forever, so
``result()`` refuses with NotImplementedError. Only the store's own loop is
refused: blocking reads called from a user's ``asyncio.run`` work."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from bench.http_server import LoopbackServer, serve_directory
from tests.stores.failing_http import FailingHandler
from zarrpy.core.byte_range import ObjectRead, RangeRequest, SuffixRequest, VersionedRequest
from zarrpy.core.pending import Pending
from zarrpy.errors import StoreError
from zarrpy.stores import LocalStore, MemoryStore
from zarrpy.stores.abc import Store

VALUES = {"a": b"0123456789", "b/c": b"abcdefghijklmnopqrstuvwxyz", "d": b""}
REQUESTS = [VersionedRequest("a"), VersionedRequest("b/c", RangeRequest(2, 6)), VersionedRequest("missing"),
            VersionedRequest("a", SuffixRequest(3)), VersionedRequest("d")]


class Answers:
    """An ``on_answer`` that records each call (position, answer, thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[int, ObjectRead | None, str, float]] = []

    def __call__(self, i: int, answer: ObjectRead | None) -> None:
        with self.lock:
            self.calls.append((i, answer, threading.current_thread().name, time.monotonic()))

    def by_position(self) -> dict[int, ObjectRead | None]:
        with self.lock:
            return {i: a for i, a, _, _ in self.calls}

    def positions(self) -> list[int]:
        with self.lock:
            return [i for i, _, _, _ in self.calls]


def check_each_answered_once(store: Store, requests: list[VersionedRequest] = REQUESTS) -> Answers:
    seen = Answers()
    pending = store.submit_versioned(requests, on_answer=seen)
    answers = pending.result()
    assert sorted(seen.positions()) == list(range(len(requests)))  # each once, before result() returned
    by_position = seen.by_position()
    for i, got in enumerate(answers):
        assert by_position[i] == got
    assert answers[2] is None and by_position[2] is None  # a missing key is an answer too
    assert answers[0] is not None and answers[0].data == VALUES["a"]
    assert answers[1] is not None and answers[1].data == b"cdef" and answers[1].size == 26
    assert answers[3] is not None and answers[3].data == b"789"
    assert answers[4] is not None and answers[4].data == b""
    assert pending.result() == answers and len(seen.positions()) == len(requests)  # not handed on again
    return seen


def _fill(store: Store) -> Store:
    for key, value in VALUES.items():
        store.set(key, value)
    return store


def test_memory_store_hands_on_each_answer(tmp_path: Path) -> None:
    check_each_answered_once(_fill(MemoryStore()))


def test_local_store_hands_on_each_answer(tmp_path: Path) -> None:
    check_each_answered_once(_fill(LocalStore(tmp_path)))


def test_without_on_answer_the_answers_are_the_same(tmp_path: Path) -> None:
    store = _fill(LocalStore(tmp_path))
    plain = store.submit_versioned(REQUESTS).result()
    seen = Answers()
    assert store.submit_versioned(REQUESTS, on_answer=seen).result() == plain


class _FailingMapping(dict):  # type: ignore[type-arg]
    """A backing mapping whose reads of one key fail (as a shelve's may)."""

    def get(self, key: Any, default: Any = None) -> Any:
        if key == "broken":
            raise OSError(5, "Input/output error")
        return super().get(key, default)


def test_memory_store_failed_request_is_not_handed_on() -> None:
    store = _fill(MemoryStore(_FailingMapping()))
    seen = Answers()
    pending = store.submit_versioned([VersionedRequest("a"), VersionedRequest("broken")], on_answer=seen)
    for _ in range(2):
        with pytest.raises(StoreError) as caught:
            pending.result()
        assert caught.value.key == "broken"
    assert 1 not in seen.positions()


# -- over HTTP: the store's event loop hands each answer on as it arrives -----------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, LoopbackServer]]:
    pytest.importorskip("aiohttp")
    root = tmp_path_factory.mktemp("on-answer-site")
    _fill(LocalStore(root / "s"))
    with serve_directory(root) as (base, server):
        server.RequestHandlerClass = functools.partial(FailingHandler, directory=server.directory)
        yield f"{base}/s", server


@pytest.fixture
def http_store(site: tuple[str, LoopbackServer]) -> Iterator[Store]:
    from zarrpy.stores.fsspec import FsspecStore

    url, server = site
    yield FsspecStore.from_url(url, read_only=True)
    server.extra_delay = None
    server.failing_paths = ()  # type: ignore[attr-defined]


def test_fsspec_http_hands_on_each_answer_on_its_loop(http_store: Store) -> None:
    assert http_store.sends_at_once
    seen = check_each_answered_once(http_store)
    threads = {name for _, _, name, _ in seen.calls}
    assert threading.current_thread().name not in threads  # on the filesystem's event loop


def test_fsspec_http_hands_on_answers_as_they_arrive(http_store: Store, site) -> None:
    _, server = site
    server.extra_delay = lambda path, rng: 0.4 if path.endswith("/s/a") and rng is None else 0.0
    seen = Answers()
    t0 = time.monotonic()
    pending = http_store.submit_versioned(REQUESTS, on_answer=seen)
    answers = pending.result()
    slow = [e for e in server.log.entries() if e.path.endswith("/s/a") and e.range is None][-1]
    assert seen.positions()[-1] == 0  # the slow answer came last
    fast = [when for i, _, _, when in seen.calls if i != 0]
    assert len(fast) == len(REQUESTS) - 1 and max(fast) < slow.end  # handed on before the slow one was in
    assert max(fast) - t0 < 0.3
    assert answers[0] is not None and answers[0].data == VALUES["a"]


def test_fsspec_http_failed_request_is_not_handed_on(http_store: Store, site) -> None:
    _, server = site
    server.failing_paths = ("/s/b/c",)  # type: ignore[attr-defined]
    seen = Answers()
    pending = http_store.submit_versioned(REQUESTS, on_answer=seen)
    with pytest.raises(StoreError, match="500") as caught:
        pending.result()
    assert caught.value.key == "b/c"
    assert sorted(seen.positions()) == [0, 2, 3, 4]  # every other request was answered and handed on
    assert seen.by_position()[0].data == VALUES["a"]  # type: ignore[union-attr]
    with pytest.raises(StoreError):
        pending.result()
    assert len(seen.positions()) == 4


class OnLoop:
    """An ``on_answer`` that runs ``work()`` on the first answer (on the
    store's loop), once ``ready`` is set, keeping what it returned or
    raised (an error raised by ``on_answer`` itself would fail the request)."""

    def __init__(self, work: Any) -> None:
        self.work = work
        self.ready = threading.Event()
        self.ready.set()
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self.thread = ""

    def __call__(self, i: int, answer: ObjectRead | None) -> None:
        if i != 0:
            return
        self.thread = threading.current_thread().name
        try:
            assert self.ready.wait(5)
            self.value = self.work()
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            self.error = exc
        finally:
            self.done.set()


def test_fsspec_http_a_batch_submitted_from_on_answer_is_answered(http_store: Store, site) -> None:
    _, server = site
    server.log.clear()
    later = Answers()
    callback = OnLoop(lambda: http_store.submit_versioned(
        [VersionedRequest("b/c"), VersionedRequest("a", RangeRequest(1, 4)), VersionedRequest("missing")],
        on_answer=later))
    first = http_store.submit_versioned([VersionedRequest("a")], on_answer=callback)
    assert first.result()[0].data == VALUES["a"]  # type: ignore[union-attr]
    assert callback.done.wait(5) and callback.error is None, callback.error
    assert callback.thread != threading.current_thread().name  # submitted on the store's loop
    second: Pending[list[ObjectRead | None]] = callback.value
    assert second.live
    answered = threading.Event()
    second.when_done(answered.set)
    assert answered.wait(10)
    got = second.result()
    assert got[0] is not None and got[0].data == VALUES["b/c"]
    assert got[1] is not None and got[1].data == b"123" and got[1].size == 10
    assert got[2] is None
    assert sorted(later.positions()) == [0, 1, 2]  # its own on_answer ran for each
    paths = sorted(e.path.rsplit("/s/", 1)[1] for e in server.log.entries())
    assert paths == ["a", "a", "b/c", "missing"]  # each request sent once


def test_fsspec_http_waiting_on_its_loop_for_an_unanswered_batch_is_refused(http_store: Store) -> None:
    holder: list[Pending[list[ObjectRead | None]]] = []
    refused: dict[str, BaseException] = {}
    submitted: list[Pending[list[ObjectRead | None]]] = []

    def work() -> None:
        nxt = http_store.submit_versioned([VersionedRequest("b/c")])
        submitted.append(nxt)
        for name, wait in [("next", nxt.result), ("own", holder[0].result), ("get", lambda: http_store.get("a"))]:
            try:
                wait()
            except BaseException as exc:  # noqa: BLE001 - what the test checks
                refused[name] = exc

    callback = OnLoop(work)
    callback.ready.clear()  # until the batch is in holder
    t = time.monotonic()
    holder.append(http_store.submit_versioned([VersionedRequest("a"), VersionedRequest("d")], on_answer=callback))
    callback.ready.set()
    # Bounded: had a wait there not been refused, the loop would be stuck
    # for good, and the batch's result() below with it.
    assert callback.done.wait(5) and callback.error is None, callback.error
    assert time.monotonic() - t < 5  # refused at once, nothing waited forever
    answers = holder[0].result()
    assert set(refused) == {"next", "own", "get"}
    assert isinstance(refused["next"], NotImplementedError) and "wait forever" in str(refused["next"])
    assert isinstance(refused["own"], NotImplementedError)  # its own batch: not done while it hands answers on
    assert isinstance(refused["get"], NotImplementedError)  # a blocking store call there, too
    assert answers[0] is not None and answers[0].data == VALUES["a"]
    (nxt,) = submitted
    assert nxt.result()[0].data == VALUES["b/c"]  # type: ignore[union-attr]  # the refused batch still answered


def test_fsspec_http_on_its_loop_an_answered_batch_is_given(http_store: Store) -> None:
    earlier = http_store.submit_versioned([VersionedRequest("b/c", RangeRequest(0, 3))])
    expected = earlier.result()
    callback = OnLoop(earlier.result)
    http_store.submit_versioned([VersionedRequest("a")], on_answer=callback).result()
    assert callback.done.wait(5) and callback.error is None, callback.error
    assert callback.value == expected and expected[0].data == b"abc"  # type: ignore[union-attr]


def test_fsspec_http_blocking_reads_inside_a_users_event_loop_work(http_store: Store, tmp_path: Path) -> None:
    """A plain function doing blocking zarrpy reads, called from a
    coroutine under ``asyncio.run`` on the main thread: that loop is not
    the store's, so nothing is refused."""
    import zarrpy

    data = np.arange(40 * 30, dtype=np.int32).reshape(40, 30)
    zarrpy.create_array(str(tmp_path / "arr.zarr"), shape=data.shape, dtype="int32", chunks=(8, 8),
                        shards=(16, 16))[...] = data

    def blocking_reads(base: str) -> tuple[Any, Any, Any]:
        answers = http_store.submit_versioned(REQUESTS).result()
        return answers, http_store.get("b/c"), zarrpy.open_array(f"{base}/arr.zarr", mode="r")[3:37, 5:29]

    async def users_code(base: str) -> tuple[Any, Any, Any]:
        await asyncio.sleep(0)
        return blocking_reads(base)

    with serve_directory(tmp_path) as (base, _server):
        answers, value, region = asyncio.run(users_code(base))
    assert answers[0].data == VALUES["a"] and answers[2] is None
    assert value == VALUES["b/c"]
    np.testing.assert_array_equal(region, data[3:37, 5:29])


def test_obstore_memory_hands_on_each_answer() -> None:
    obstore = pytest.importorskip("obstore")
    from zarrpy.stores import ObjectStore

    check_each_answered_once(_fill(ObjectStore(obstore.store.MemoryStore())))
