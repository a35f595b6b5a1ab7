"""``Store.submit_versioned(requests, on_answer=...)``: each request's answer
handed on as it comes in, the same answer ``result()`` gives; a failed
request is not handed on, its error comes from ``result()``."""

from __future__ import annotations

import functools
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from bench.http_server import LoopbackServer, RangeHandler, serve_directory
from zarrpy.core.byte_range import ObjectRead, RangeRequest, SuffixRequest, VersionedRequest
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


class FailingHandler(RangeHandler):
    """The loopback server's handler, answering 500 for the paths in
    ``server.failing_paths``."""

    def send_head(self) -> Any:
        if any(self.path.endswith(p) for p in getattr(self.server, "failing_paths", ())):
            self.send_error(500, "injected failure")
            return None
        return super().send_head()


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


def test_obstore_memory_hands_on_each_answer() -> None:
    obstore = pytest.importorskip("obstore")
    from zarrpy.stores import ObjectStore

    check_each_answered_once(_fill(ObjectStore(obstore.store.MemoryStore())))
