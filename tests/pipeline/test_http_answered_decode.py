"""Plain chunks over a real HTTP server, each decoded as its answer arrives.

The server (:mod:`bench.http_server` on 127.0.0.1) waits before every
answer and logs when each request arrived and when its answer was ready. A
region over many plain (unsharded) chunks is the open and one stage: every
chunk's GET in flight together. One chunk's answer is made 0.3 s slower:
the others are decoded meanwhile (:class:`~zarrpy.pipeline.answer_drain.AnswerDrain`
fed by the store's ``on_answer``), so what is left once the slow answer is
in is that chunk's decode, not the batch's. A chunk whose GET fails fails
the read with a StoreError naming its key.
"""

from __future__ import annotations

import functools
import threading
import time
from typing import Any, Iterator

import numpy as np
import pytest

pytest.importorskip("aiohttp")

from bench.http_server import LoggedRequest, LoopbackServer, serve_directory  # noqa: E402
from tests.stores.failing_http import FailingHandler  # noqa: E402

import zarrpy  # noqa: E402
from zarrpy.errors import StoreError  # noqa: E402
from zarrpy.pipeline.chunk_io import ChunkIO  # noqa: E402

LATENCY_S = 0.05
SLOW_S = 0.3
SHAPE, CHUNKS = (96, 96), (16, 16)  # 6 x 6 chunks
REGION = (slice(5, 90), slice(3, 95))  # touches all 36 chunks, most of them in part
SLOW_KEY = "c/2/3"
NCHUNKS = 36


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, np.ndarray, LoopbackServer]]:
    root = tmp_path_factory.mktemp("http-plain-chunks")
    data = np.random.default_rng(5).integers(0, 60000, SHAPE, dtype=np.uint16)
    a = zarrpy.create_array(str(root / "p.zarr"), shape=SHAPE, dtype="uint16", chunks=CHUNKS,
                            compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    a[...] = data
    with serve_directory(root, latency=LATENCY_S) as (base, server):
        server.RequestHandlerClass = functools.partial(FailingHandler, directory=server.directory)
        yield f"{base}/p.zarr", data, server


@pytest.fixture
def server(served) -> Iterator[LoopbackServer]:
    _, _, server = served
    server.log.clear()
    yield server
    server.extra_delay = None
    server.failing_paths = ()  # type: ignore[attr-defined]


def _chunk_reads(server: LoopbackServer) -> list[LoggedRequest]:
    return [e for e in server.log.entries() if "/c/" in e.path]


def _decode_spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float, float, str]]:
    """Wrap ChunkIO._scatter_whole: (key, start, end, thread name) of each call."""
    calls: list[tuple[str, float, float, str]] = []
    lock = threading.Lock()
    original = ChunkIO._scatter_whole

    def spy(self: ChunkIO, out: Any, key: str, *args: Any, **kwargs: Any) -> Any:
        start = time.monotonic()
        try:
            return original(self, out, key, *args, **kwargs)
        finally:
            with lock:
                calls.append((key, start, time.monotonic(), threading.current_thread().name))

    monkeypatch.setattr(ChunkIO, "_scatter_whole", spy)
    return calls


def test_a_region_is_the_open_and_one_get_per_chunk_in_two_round_trips(served, server, monkeypatch) -> None:
    url, data, _ = served
    decoded = _decode_spy(monkeypatch)
    got = zarrpy.open_array(url, mode="r")[REGION]
    np.testing.assert_array_equal(got, data[REGION])
    entries = server.log.entries()
    assert all(e.method == "GET" for e in entries)  # no HEAD for a length
    assert [e.path.rsplit("/", 1)[1] for e in entries if "/c/" not in e.path] == ["zarr.json"]
    chunks = _chunk_reads(server)
    assert len(chunks) == NCHUNKS and all(e.range is None for e in chunks)  # each chunk whole, once
    assert len({e.path for e in chunks}) == NCHUNKS
    assert len(entries) == 1 + NCHUNKS
    assert server.log.depth() == 2  # zarr.json; every chunk at once
    assert sorted(key for key, *_ in decoded) == sorted(e.path.split("/p.zarr/", 1)[1] for e in chunks)


def test_the_other_chunks_are_decoded_before_the_slow_answer_arrives(served, server, monkeypatch) -> None:
    url, data, _ = served
    a = zarrpy.open_array(url, mode="r")
    server.log.clear()
    server.extra_delay = lambda path, rng: SLOW_S if path.endswith("/" + SLOW_KEY) else 0.0
    decoded = _decode_spy(monkeypatch)
    got = a[REGION]
    np.testing.assert_array_equal(got, data[REGION])
    chunks = _chunk_reads(server)
    assert len(chunks) == NCHUNKS and server.log.depth() == 1  # the open was before the log was cleared
    [slow] = [e for e in chunks if e.path.endswith("/" + SLOW_KEY)]
    assert slow.end - slow.start >= SLOW_S
    others = [(key, end) for key, _, end, _ in decoded if key != SLOW_KEY]
    assert len(others) == NCHUNKS - 1
    late = [key for key, end in others if end >= slow.end]
    assert not late, f"decoded only after the slow answer was ready: {late}"
    [(_, slow_start, _, _)] = [c for c in decoded if c[0] == SLOW_KEY]
    assert slow_start >= slow.end  # the slow chunk itself once its answer was in


def test_a_chunk_whose_get_fails_fails_the_read_naming_its_key(served, server) -> None:
    url, _, _ = served
    a = zarrpy.open_array(url, mode="r")
    server.failing_paths = ("/" + SLOW_KEY,)  # type: ignore[attr-defined]
    with pytest.raises(StoreError) as caught:
        a[REGION]
    assert caught.value.key == SLOW_KEY
    assert SLOW_KEY in str(caught.value) and "500" in str(caught.value)
    statuses = {e.path.split("/p.zarr/", 1)[1]: e.status for e in _chunk_reads(server)}
    assert statuses[SLOW_KEY] == 500 and len(statuses) == NCHUNKS  # the others were asked all the same
    server.failing_paths = ()  # type: ignore[attr-defined]
    np.testing.assert_array_equal(a[REGION], served[1][REGION])  # the array reads again once the server does


def test_a_failing_chunk_with_a_slow_one_still_fails_and_waits_for_no_more(served, server) -> None:
    """One chunk fails at once, another answers late: the read still raises
    the failed chunk's StoreError (after the batch is in: the drain is closed
    when the batch finishes)."""
    url, _, _ = served
    a = zarrpy.open_array(url, mode="r")
    server.failing_paths = ("/c/0/0",)  # type: ignore[attr-defined]
    server.extra_delay = lambda path, rng: SLOW_S if path.endswith("/" + SLOW_KEY) else 0.0
    t = time.monotonic()
    with pytest.raises(StoreError) as caught:
        a[REGION]
    assert caught.value.key == "c/0/0"
    assert time.monotonic() - t < 10
