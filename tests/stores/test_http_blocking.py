"""Single HTTP reads sent from the calling thread
(:meth:`~zarrpy.stores._http_client.LeanClient.request_blocking`, used by
:meth:`FsspecStore.get_versioned` for one request): the same answers as a
batch on the event loop, no hop through the loop, a pool of blocking
connections shared safely by threads. Real servers on 127.0.0.1; the
client's parsing is tested in both ways of sending in test_http_client.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest

import zarrpy
from bench.http_server import serve_directory
from zarrpy.core.byte_range import RangeRequest, SuffixRequest, VersionedRequest
from zarrpy.errors import StoreError
from zarrpy.stores._http_client import LeanClient
from zarrpy.stores.fsspec import FsspecStore

from .sends import Sends
from .test_http_client import RawServer, answer, spy_aiohttp


def test_blocking_requests_from_many_threads_share_kept_alive_connections() -> None:
    """Each thread takes a connection of its own from the blocking pool and
    puts it back after its answer: every answer is its own request's, and
    no more connections open than threads ask at once."""

    def respond(server: RawServer, n: int, head: str) -> Sequence[Any]:
        return [answer(head.split(" ", 2)[1].encode())]

    with RawServer(respond) as server:
        client = LeanClient()
        threads, per_thread = 6, 25
        got: dict[str, bytes] = {}

        def reads(t: int) -> None:
            for i in range(per_thread):
                path = f"/t{t}/r{i}"
                answered = client.request_blocking("GET", server.url(path), {})
                assert answered is not None
                got[path] = answered.body

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(reads, range(threads)))  # a failed read raises here
        for conns in client._blocking_idle.values():
            for conn in conns:
                conn.close()
    assert len(got) == threads * per_thread and all(body == path.encode() for path, body in got.items())
    assert server.accepted <= threads


@pytest.fixture
def site(tmp_path: Path) -> Any:
    data = bytes(range(256)) * 40
    (tmp_path / "obj").write_bytes(data)
    with serve_directory(tmp_path) as (base, server):
        yield FsspecStore.from_url(base, read_only=True), data, tmp_path, server


def test_one_read_is_sent_from_the_calling_thread_a_batch_on_the_loop(site, monkeypatch) -> None:
    store, data, _, server = site
    sends = Sends(monkeypatch)
    whole, = store.get_versioned([VersionedRequest("obj")])
    assert (sends.blocking, sends.on_loop) == (1, 0)
    assert whole is not None and whole.data == data and whole.size == len(data) and whole.version is not None
    part, tail = store.get_versioned([VersionedRequest("obj", RangeRequest(10, 20)), VersionedRequest("obj", SuffixRequest(7))])
    assert (sends.blocking, sends.on_loop) == (1, 1)
    assert (part.data, tail.data) == (data[10:20], data[-7:])
    assert server.log.count("GET") == 3


def test_one_blocking_read_answers_as_a_batch_does(site, monkeypatch) -> None:
    """Missing, ranged, conditional (matching and changed), and past the end:
    each read alone (blocking) equals the same read in a batch (on the loop)."""
    store, data, root, _ = site
    version = store.get_versioned([VersionedRequest("obj")])[0].version
    requests = [VersionedRequest("missing"), VersionedRequest("obj", RangeRequest(5, 9)),
                VersionedRequest("obj", SuffixRequest(3), version), VersionedRequest("obj", None, '"other"'),
                VersionedRequest("obj", RangeRequest(len(data) + 5, len(data) + 9))]
    sends = Sends(monkeypatch)
    alone = [store.get_versioned([r])[0] for r in requests]
    batch = store.get_versioned(requests)
    assert (sends.blocking, sends.on_loop) == (len(requests), 1)
    assert alone == batch
    assert alone[0] is None and alone[1].data == data[5:9] and alone[2].data == data[-3:]
    assert alone[3].data is None  # a changed object: 412
    assert alone[4].data == b"" and alone[4].size == len(data)


def test_a_blocking_read_that_fails_names_the_key(tmp_path: Path) -> None:
    def respond(server: RawServer, n: int, head: str) -> Sequence[Any]:
        return [answer(b"no", status="500 Internal Server Error")]

    with RawServer(respond) as server:
        store = FsspecStore.from_url(server.url("/base"), read_only=True)
        with pytest.raises(StoreError, match="'some/key'"):
            store.get("some/key")


def test_on_the_loop_thread_a_single_read_still_refuses_to_wait(site) -> None:
    """A read waited for on the filesystem's own loop would block it: refused,
    as a batch is, rather than sent blocking from there."""
    store, _, _, _ = site

    async def read_on_loop() -> Any:
        return store.get_versioned([VersionedRequest("obj")])

    with pytest.raises(NotImplementedError):
        asyncio.run_coroutine_threadsafe(read_on_loop(), store.fs.loop).result(timeout=10)


def test_an_array_opens_and_reads_one_chunk_without_a_hop(tmp_path: Path, monkeypatch) -> None:
    """Open = one request, and a read of one chunk one more, each sent
    from the reading thread."""
    x = np.arange(64 * 64, dtype="int32").reshape(64, 64)
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=x.shape, dtype="int32", chunks=(32, 32))
    a[...] = x
    with serve_directory(tmp_path, latency=0.05) as (base, server):  # requests in flight together overlap
        sends = Sends(monkeypatch)
        got = zarrpy.open_array(f"{base}/a.zarr", mode="r")
        np.testing.assert_array_equal(got[3:20, 5:30], x[3:20, 5:30])
        assert (sends.blocking, sends.on_loop) == (2, 0)
        np.testing.assert_array_equal(got[...], x)  # four chunks: one batch on the loop
        assert (sends.blocking, sends.on_loop) == (2, 1)
        assert server.log.count("GET") == 1 + 1 + 4
        assert server.log.depth() == 3


def test_the_aiohttp_setting_sends_nothing_blocking(site, monkeypatch) -> None:
    store, data, _, _ = site
    monkeypatch.setenv("ZARRPY_HTTP_CLIENT", "aiohttp")
    calls = spy_aiohttp(monkeypatch)
    sends = Sends(monkeypatch)
    assert store.get("obj") == data
    assert sends.blocking == 0 and len(calls) == 1
