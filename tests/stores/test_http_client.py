"""zarrpy's lean HTTP/1.1 GET client (:mod:`zarrpy.stores._http_client`)
against real servers on 127.0.0.1.

Two servers: :mod:`bench.http_server` (files with ``Range``, ``ETag`` and
``If-Match``, as an object store's HTTP interface answers them) and a tiny
raw-socket server here (:class:`RawServer`) that sends hand-crafted bytes,
split across several sends when a test wants the client's parsing to see
partial heads, chunk-size lines and bodies. Nothing of the client is mocked;
a few tests count calls of its methods (spies that call through).

Bodies longer than ``IN_PLACE_NBYTES`` are received straight into the
buffer of the ``bytes`` they are handed on as, and finished one loop
iteration later (asyncio still holds a slice of that buffer while
``buffer_updated`` runs): the last section checks that such bodies arrive
intact, that bytes after them or a close right after them are handled, and
that the body is not copied once more at the end (``tracemalloc``).
"""

from __future__ import annotations

import asyncio
import datetime
import gzip
import ipaddress
import socket
import ssl
import threading
import time
import tracemalloc
import warnings
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator, Sequence

import numpy as np
import pytest

from bench.http_server import serve_directory
from zarrpy.errors import StoreError
from zarrpy.stores import _fsspec_versioned, _http_client
from zarrpy.stores._http_client import ENV_VAR, IN_PLACE_NBYTES, MAX_HEAD, Answer, LeanClient, plain_client_for

CLOSE = "close"
"""A :class:`RawServer` action: close the connection (a FIN, nothing more is sent)."""

Respond = Callable[["RawServer", int, str], Sequence[Any]]


class RawServer:
    """A threaded TCP (or TLS) server on 127.0.0.1 that reads request heads
    and answers each with the actions ``respond(server, connection number,
    head)`` returns: bytes are sent, a number is slept, :data:`CLOSE` closes
    the connection. A connection serves requests until it is closed, so
    kept-alive reuse shows in :attr:`accepted` and :attr:`requests`."""

    def __init__(self, respond: Respond, tls: ssl.SSLContext | None = None) -> None:
        self._respond = respond
        self._tls = tls
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.port: int = self._listener.getsockname()[1]
        self.accepted = 0
        self.requests: list[tuple[int, str]] = []  # (connection number, request head)
        self.errors: list[BaseException] = []  # TLS handshakes that failed
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def url(self, path: str = "/x", scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    def paths(self) -> list[str]:
        with self._lock:
            return [head.split(" ", 2)[1] for _, head in self.requests]

    def connections(self) -> list[int]:
        """The connection number of each request, in order."""
        with self._lock:
            return [n for n, _ in self.requests]

    def __enter__(self) -> RawServer:
        self._start(self._accept_loop)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in list(self._threads):
            t.join(timeout=10)
        self._listener.close()
        assert not any(t.is_alive() for t in self._threads), "a raw-server thread did not end"

    def _start(self, target: Callable[..., None], *args: Any) -> None:
        t = threading.Thread(target=target, args=args, daemon=True)
        with self._lock:
            self._threads.append(t)
        t.start()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except (socket.timeout, TimeoutError):
                continue
            except OSError:
                return
            with self._lock:
                self.accepted += 1
                n = self.accepted
            self._start(self._serve, conn, n)

    def _serve(self, conn: socket.socket, n: int) -> None:
        try:
            if self._tls is not None:
                conn.settimeout(10)
                try:
                    conn = self._tls.wrap_socket(conn, server_side=True)
                except OSError as exc:  # ssl.SSLError too: the client refused the certificate
                    with self._lock:
                        self.errors.append(exc)
                    return
            self._requests(conn, n)
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _requests(self, conn: socket.socket, n: int) -> None:
        buf = b""
        deadline = time.monotonic() + 30
        while not self._stop.is_set() and time.monotonic() < deadline:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                conn.settimeout(0.05)
                try:
                    data = conn.recv(65536)
                except (socket.timeout, TimeoutError):
                    continue
                except OSError:
                    return
                if not data:
                    return
                buf += data
                continue
            head, buf = buf[:end].decode("latin-1"), buf[end + 4:]
            with self._lock:
                self.requests.append((n, head))
            conn.settimeout(10)
            for action in self._respond(self, n, head):
                if isinstance(action, str):
                    assert action == CLOSE
                    return
                if isinstance(action, (int, float)):
                    time.sleep(action)
                    continue
                try:
                    conn.sendall(action)
                except OSError:  # the client gave up on the answer (a refused head)
                    return


def answer(body: bytes, *headers: str, status: str = "200 OK", version: str = "HTTP/1.1") -> bytes:
    """A response with ``Content-Length``."""
    lines = [f"{version} {status}", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def pieces(data: bytes, size: int, pause: float = 0.002) -> list[Any]:
    """``data`` as actions: sends of ``size`` bytes with short sleeps between
    (each send arrives on its own, so the client parses partial input)."""
    out: list[Any] = []
    for i in range(0, len(data), size):
        out += [data[i:i + size], pause]
    return out


def chunked(parts: Sequence[bytes], extension: bytes = b"", trailers: bytes = b"") -> bytes:
    """A chunked body of ``parts`` (sizes in hex, each with ``extension``), then the trailers."""
    out = b"".join(b"%x%s\r\n%s\r\n" % (len(p), extension, p) for p in parts)
    return out + b"0" + extension + b"\r\n" + trailers + b"\r\n"


class BlockingClient:
    """A :class:`LeanClient` whose requests are its blocking ones
    (:meth:`LeanClient.request_blocking`, each from a worker thread), behind
    the async ``get`` / ``request`` the tests call: every test that uses
    :func:`run` checks both ways of sending."""

    def __init__(self) -> None:
        self.client = LeanClient()

    async def get(self, url: str, headers: dict[str, str]) -> Answer | None:
        return await asyncio.to_thread(self.client.request_blocking, "GET", url, headers)

    async def request(self, method: str, url: str, headers: dict[str, str], body: bytes = b"") -> Answer | None:
        return await asyncio.to_thread(self.client.request_blocking, method, url, headers, body)

    def close(self) -> None:
        for conns in self.client._blocking_idle.values():
            for conn in conns:
                conn.close()


SENDING = ["loop"]
"""How :func:`run`'s client sends: on the event loop, or blocking (set per test by :func:`sending`)."""


@pytest.fixture(autouse=True, params=["loop", "blocking"])
def sending(request: pytest.FixtureRequest) -> Iterator[str]:
    SENDING[0] = request.param
    yield request.param
    SENDING[0] = "loop"


def run(fn: Callable[[Any], Awaitable[Any]], timeout: float = 20.0) -> Any:
    """``fn(client)`` on a new event loop with a new :class:`LeanClient`
    (or its :class:`BlockingClient`, see :data:`SENDING`), bounded in time;
    the client's kept-alive connections are closed after."""

    async def main() -> Any:
        client: Any = LeanClient() if SENDING[0] == "loop" else BlockingClient()
        try:
            async with asyncio.timeout(timeout):
                return await fn(client)
        finally:
            if isinstance(client, BlockingClient):
                client.close()
            else:
                for conns in client._idle.values():
                    for conn in conns:
                        if conn.transport is not None:
                            conn.transport.close()
            await asyncio.sleep(0)

    return asyncio.run(main())


def by_path(table: dict[str, Sequence[Any]]) -> Respond:
    """Answer each request by its path (404 for any other)."""

    def respond(server: RawServer, n: int, head: str) -> Sequence[Any]:
        path = head.split(" ", 2)[1]
        return table.get(path, [answer(b"", status="404 Not Found")])

    return respond


# -- Content-Length bodies from the loopback file server -------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, bytes]]]:
    root = tmp_path_factory.mktemp("lean-client-site")
    rng = np.random.default_rng(7)
    files = {"small": b"0123456789", "empty": b"", "big": rng.integers(0, 256, 6 * 1024 * 1024, dtype=np.uint8).tobytes()}
    for name, data in files.items():
        (root / name).write_bytes(data)
    with serve_directory(root) as (base, _server):
        yield base, files


@pytest.mark.parametrize("name", ["small", "empty", "big"])
def test_content_length_bodies_arrive_whole(site, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    base, files = site
    calls = []
    original = _http_client._Connection.buffer_updated

    def counting(self: Any, nbytes: int) -> None:
        calls.append(nbytes)
        original(self, nbytes)

    monkeypatch.setattr(_http_client._Connection, "buffer_updated", counting)
    got = run(lambda c: c.get(f"{base}/{name}", {}))
    assert isinstance(got, Answer)
    assert got.status == 200
    assert got.body == files[name]
    assert got.headers["content-length"] == str(len(files[name]))
    assert got.headers["etag"].startswith('"')  # names are lowercase
    if name == "big":
        assert len(calls) > 1  # the body came in many reads into one buffer
        assert sum(calls) > len(files[name])  # every byte counted once, the head too


def test_a_body_longer_than_one_allocation_grows_as_it_arrives(site, monkeypatch: pytest.MonkeyPatch) -> None:
    base, files = site
    monkeypatch.setattr(_http_client, "PREALLOCATE", 4096)
    got = run(lambda c: c.get(f"{base}/big", {}))
    assert got.body == files["big"]


def test_ranges_answer_206_with_content_range(site) -> None:
    base, files = site
    big = files["big"]

    async def reads(client: LeanClient) -> list[Answer | None]:
        return [await client.get(f"{base}/big", {"Range": "bytes=100-199"}),
                await client.get(f"{base}/big", {"Range": "bytes=-10"}),
                await client.get(f"{base}/big", {"Range": "bytes=5000000-"})]

    first, suffix, tail = run(reads)
    assert (first.status, first.headers["content-range"], first.body) == (206, f"bytes 100-199/{len(big)}", big[100:200])
    assert (suffix.status, suffix.body) == (206, big[-10:])
    assert (tail.status, tail.body) == (206, big[5000000:])


def test_empty_answers_412_416_and_the_next_answer_on_the_connection(site) -> None:
    """Answers with no body (412, 416): nothing of them is left on the
    connection for the answer after them."""
    base, files = site

    async def reads(client: LeanClient) -> list[Answer | None]:
        return [await client.get(f"{base}/small", {"If-Match": '"not-the-tag"'}),
                await client.get(f"{base}/small", {"Range": "bytes=50-"}),
                await client.get(f"{base}/small", {"Range": "bytes=2-4"}),
                await client.get(f"{base}/nope", {}),
                await client.get(f"{base}/small", {})]

    changed, unsatisfiable, ranged, missing, whole = run(reads)
    assert (changed.status, changed.body) == (412, b"")
    assert changed.headers["etag"].startswith('"')
    assert (unsatisfiable.status, unsatisfiable.body) == (416, b"")
    assert unsatisfiable.headers["content-range"] == "bytes */10"
    assert (ranged.status, ranged.body) == (206, b"234")
    assert missing.status == 404
    assert (whole.status, whole.body) == (200, files["small"])


def test_many_requests_at_once_each_get_their_own_answer(site) -> None:
    base, files = site
    big = files["big"]
    starts = [i * 100_003 for i in range(40)]

    async def reads(client: LeanClient) -> list[Answer | None]:
        return await asyncio.gather(*[client.get(f"{base}/big", {"Range": f"bytes={s}-{s + 999}"}) for s in starts])

    for s, got in zip(starts, run(reads)):
        assert got.status == 206 and got.body == big[s:s + 1000]


# -- framing: chunked, to the end of the connection, interim answers -------------------------

BODY = b"The quick brown fox jumps over the lazy dog. " * 40


@pytest.mark.parametrize("split", [None, 1, 7, 200], ids=lambda s: f"split-{s}")
def test_chunked_bodies_with_extensions_and_trailers(split: int | None) -> None:
    parts = [BODY[:1], BODY[1:300], BODY[300:301], BODY[301:]]
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nETag: \"c\"\r\n\r\n"
    wire = head + chunked(parts, extension=b';name="value"', trailers=b"X-Checksum: abc\r\nX-More: 1\r\n")
    sends = [wire] if split is None else pieces(wire, split, pause=0.0005 if split == 1 else 0.002)
    plain = chunked([b"second"])  # then a plain chunked answer on the same connection
    table = {"/a": sends, "/b": [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + plain]}
    with RawServer(by_path(table)) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/a"), {}), await client.get(server.url("/b"), {})]

        first, second = run(reads, timeout=30)
    assert first.status == 200 and first.body == BODY
    assert first.headers["etag"] == '"c"'
    assert second.body == b"second"
    assert server.accepted == 1  # the chunked answer was taken exactly: the connection was kept


def test_chunk_sizes_in_upper_case_hex_and_with_spaces() -> None:
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1A \r\n" + BODY[:26] + b"\r\n0\r\n\r\n"
    with RawServer(by_path({"/x": [wire]})) as server:
        got = run(lambda c: c.get(server.url(), {}))
    assert got.body == BODY[:26]


@pytest.mark.parametrize("version", ["HTTP/1.0", "HTTP/1.1"])
@pytest.mark.parametrize("split", [None, 50])
def test_a_body_that_ends_with_the_connection(version: str, split: int | None) -> None:
    wire = f"{version} 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n".encode() + BODY
    sends = [wire] if split is None else pieces(wire, split)
    table = {"/a": [*sends, 0.02, CLOSE], "/b": [answer(b"after")]}
    with RawServer(by_path(table)) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/a"), {}), await client.get(server.url("/b"), {})]

        first, second = run(reads)
    assert first.status == 200 and first.body == BODY
    assert second.body == b"after"
    assert server.accepted == 2  # a body ended by the connection: the next request needs a new one


@pytest.mark.parametrize("split", [None, 3, 40])
def test_interim_answers_come_before_the_real_one(split: int | None) -> None:
    wire = (b"HTTP/1.1 100 Continue\r\n\r\n"
            + b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
            + answer(BODY, "X-Real: yes"))
    sends = [wire] if split is None else pieces(wire, split, pause=0.001)
    table = {"/a": sends, "/b": [answer(b"next")]}
    with RawServer(by_path(table)) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/a"), {}), await client.get(server.url("/b"), {})]

        got, after = run(reads, timeout=30)
    assert got.status == 200 and got.body == BODY
    assert got.headers["x-real"] == "yes" and "link" not in got.headers  # the final answer's headers
    assert after.body == b"next" and server.accepted == 1


def test_an_interim_answer_sent_alone_then_the_answer_later() -> None:
    table = {"/x": [b"HTTP/1.1 100 Continue\r\n\r\n", 0.05, answer(b"late")]}
    with RawServer(by_path(table)) as server:
        got = run(lambda c: c.get(server.url(), {}))
    assert (got.status, got.body) == (200, b"late")


def test_connection_close_answers_are_not_reused() -> None:
    table = {"/x": [answer(b"bye", "Connection: close"), 0.01, CLOSE]}
    with RawServer(by_path(table)) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url(), {}) for _ in range(3)]

        got = run(reads)
    assert [a.body for a in got] == [b"bye"] * 3
    assert server.accepted == 3 and server.connections() == [1, 2, 3]


def test_connection_close_is_honoured_even_if_the_server_keeps_the_connection() -> None:
    """The client closes after a ``Connection: close`` answer itself: the
    server here would have served more on it."""
    with RawServer(by_path({"/x": [answer(b"once", "Connection: close")]})) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url(), {}) for _ in range(2)]

        got = run(reads)
    assert [a.body for a in got] == [b"once", b"once"]
    assert server.accepted == 2


def test_more_bytes_than_the_answer_drop_the_connection() -> None:
    table = {"/a": [answer(b"hello") + b"GARBAGE"], "/b": [answer(b"clean")]}
    with RawServer(by_path(table)) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/a"), {}), await client.get(server.url("/b"), {})]

        first, second = run(reads)
    assert (first.body, second.body) == (b"hello", b"clean")
    assert server.accepted == 2  # the stray bytes would have been taken for the next answer


# -- kept-alive connections ------------------------------------------------------------------


def test_one_kept_alive_connection_serves_requests_one_after_another() -> None:
    table = {f"/{i}": [answer(f"body {i}".encode(), "Content-Type: text/plain")] for i in range(6)}
    with RawServer(by_path(table)) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url(f"/{i}"), {"X-Seq": str(i)}) for i in range(6)]

        got = run(reads)
        heads = [head for _, head in server.requests]
    assert [a.body for a in got] == [f"body {i}".encode() for i in range(6)]
    assert server.accepted == 1 and server.connections() == [1] * 6
    first = heads[0].split("\r\n")
    assert first[0] == "GET /0 HTTP/1.1"
    assert f"Host: 127.0.0.1:{server.port}" in first
    assert "Accept-Encoding: identity" in first and "X-Seq: 0" in first


def test_an_http_1_0_answer_with_keep_alive_keeps_the_connection() -> None:
    table = {"/x": [answer(b"ok", "Connection: keep-alive", version="HTTP/1.0")]}
    with RawServer(by_path(table)) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url(), {}) for _ in range(3)]

        assert [a.body for a in run(reads)] == [b"ok"] * 3
    assert server.accepted == 1


def test_an_http_1_0_answer_without_keep_alive_closes_the_connection() -> None:
    with RawServer(by_path({"/x": [answer(b"ok", version="HTTP/1.0")]})) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url(), {}) for _ in range(2)]

        assert [a.body for a in run(reads)] == [b"ok"] * 2
    assert server.accepted == 2


def test_a_connection_the_server_closed_while_idle_is_retried_on_a_new_one(monkeypatch: pytest.MonkeyPatch,
                                                                          sending: str) -> None:
    """The server closes a kept-alive connection soon after its answer. On
    the loop the client only notices when it sends the next request there
    (the loop was busy meanwhile), and sends it once more on a new
    connection; a blocking connection is checked before it is used again, so
    the request goes to a new connection at once."""
    sent = []
    original = _http_client._Connection._start

    def counting(self: Any, data: bytes, body: bytes, head_only: bool, future: Any) -> None:
        sent.append(data.split(b"\r\n", 1)[0])
        original(self, data, body, head_only, future)

    monkeypatch.setattr(_http_client._Connection, "_start", counting)

    def respond(server: RawServer, n: int, head: str) -> Sequence[Any]:
        return [answer(f"conn {n}".encode()), 0.05, CLOSE] if n == 1 else [answer(f"conn {n}".encode())]

    with RawServer(respond) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            first = await client.get(server.url("/a"), {})
            time.sleep(0.3)  # the loop is busy: it has not seen the server's close yet
            return [first, await client.get(server.url("/b"), {})]

        first, second = run(reads)
    assert (first.body, second.body) == (b"conn 1", b"conn 2")
    assert server.accepted == 2 and server.paths() == ["/a", "/b"]
    twice = sending == "loop"
    assert sent == [b"GET /a HTTP/1.1", b"GET /b HTTP/1.1"] + [b"GET /b HTTP/1.1"] * twice  # on the loop: /b written twice


def test_a_kept_alive_connection_closed_on_the_next_request_is_retried_once() -> None:
    def respond(server: RawServer, n: int, head: str) -> Sequence[Any]:
        first_on_connection = server.connections().count(n) == 1
        return [answer(b"fine")] if n == 1 and first_on_connection else [CLOSE] if n == 1 else [answer(b"again")]

    with RawServer(respond) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/a"), {}), await client.get(server.url("/b"), {})]

        first, second = run(reads)
    assert (first.body, second.body) == (b"fine", b"again")
    assert server.connections() == [1, 1, 2]  # /b: dropped unanswered, then sent again on a new connection


def test_a_server_that_does_not_answer_times_out_at_the_clients_timeout(sending: str) -> None:
    def respond(server: RawServer, n: int, head: str) -> Sequence[Any]:
        return [3.0, answer(b"late")]

    with RawServer(respond) as server:
        client = LeanClient(timeout=0.3)
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            if sending == "loop":
                asyncio.run(client.get(server.url(), {}))
            else:
                client.request_blocking("GET", server.url(), {})
        assert time.monotonic() - start < 2.5
    assert server.paths() == ["/x"]


def _b_after_a_fails(respond: Any) -> RawServer:
    """``/a``, then ``/b`` on the same client, whose request must fail with a
    ConnectionError; the server, stopped, for its log."""
    with RawServer(respond) as server:

        async def reads(client: LeanClient) -> Answer | None:
            await client.get(server.url("/a"), {})
            return await client.get(server.url("/b"), {})

        with pytest.raises(ConnectionError):
            run(reads)
    return server


def test_the_retry_is_only_once() -> None:
    def respond(server: RawServer, n: int, head: str) -> Sequence[Any]:
        return [answer(b"fine")] if server.paths() == ["/a"] else [CLOSE]

    server = _b_after_a_fails(respond)
    assert server.connections() == [1, 1, 2]  # the retry failed too: no third attempt


def test_a_new_connection_closed_before_the_answer_is_an_error_not_retried() -> None:
    with RawServer(lambda server, n, head: [CLOSE]) as server:
        with pytest.raises(ConnectionError):
            run(lambda c: c.get(server.url(), {}))
    assert server.accepted == 1 and len(server.requests) == 1


def test_no_retry_once_part_of_the_answer_came() -> None:
    """A request whose answer had begun may have been acted on: it is not
    sent again, its error is raised."""

    def respond(server: RawServer, n: int, head: str) -> Sequence[Any]:
        return [answer(b"fine")] if server.paths() == ["/a"] else [b"HTTP/1.1 200 OK\r\nContent-Le", 0.02, CLOSE]

    server = _b_after_a_fails(respond)
    assert server.connections() == [1, 1]


@pytest.mark.parametrize("wire", [
    answer(b"0123456789")[:-5],  # Content-Length 10, 5 bytes sent
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",  # no last chunk
    b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\nhello",  # a length only claimed
    answer(bytes(range(256)) * 1024)[:-5],  # received in place: all but the last 5 bytes sent
    b"HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\nhello",  # received in place: only begun
], ids=["content-length", "chunked", "claimed-length", "in-place", "in-place-begun"])
def test_a_body_cut_short_by_the_connection_is_an_error(wire: bytes) -> None:
    with RawServer(by_path({"/x": [wire, 0.02, CLOSE]})) as server:
        with pytest.raises(ConnectionError):
            run(lambda c: c.get(server.url(), {}))


# -- malformed answers -----------------------------------------------------------------------

MALFORMED = {
    "http-2-status-line": (b"HTTP/2 200 OK\r\nContent-Length: 2\r\n\r\nok", "not an HTTP/1.x status line"),
    "not-http": (b"ICY 200 OK\r\nContent-Length: 2\r\n\r\nok", "not an HTTP/1.x status line"),
    "no-status-code": (b"HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\nok", "no status code"),
    "header-without-colon": (b"HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\nok", "without a colon"),
    "content-length-text": (b"HTTP/1.1 200 OK\r\nContent-Length: two\r\n\r\nok", "bad Content-Length"),
    "content-length-negative": (b"HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok", "bad Content-Length"),
    "chunk-size-text": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n", "bad chunk size"),
    "chunk-size-empty": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\nok\r\n0\r\n\r\n", "bad chunk size"),
    "chunk-size-signed": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+2\r\nok\r\n0\r\n\r\n", "bad chunk size"),
    "chunk-size-underscore": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0_2\r\nok\r\n0\r\n\r\n",
                              "bad chunk size"),
    "chunk-data-without-crlf": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXY0\r\n\r\n",
                                "not followed by CRLF"),
    "content-length-signed": (b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok", "bad Content-Length"),
    "content-length-underscore": (b"HTTP/1.1 200 OK\r\nContent-Length: 0_2\r\n\r\nok", "bad Content-Length"),
    "status-two-digits": (b"HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nok", "no status code"),
    "status-four-digits": (b"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok", "no status code"),
    "status-signed": (b"HTTP/1.1 +20 OK\r\nContent-Length: 2\r\n\r\nok", "no status code"),
}


@pytest.mark.parametrize("split", [None, 4])
@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_answer_is_a_store_error_and_the_client_stays_usable(case: str, split: int | None) -> None:
    wire, message = MALFORMED[case]
    bad = [wire] if split is None else pieces(wire, split)
    with RawServer(by_path({"/bad": bad, "/good": [answer(b"good")]})) as server:

        async def reads(client: LeanClient) -> tuple[BaseException, Answer | None]:
            with pytest.raises(StoreError, match=message) as caught:
                await client.get(server.url("/bad"), {})
            return caught.value, await client.get(server.url("/good"), {})

        error, good = run(reads)
    assert isinstance(error, OSError)  # a StoreError is an OSError: callers name the key
    assert good.body == b"good"
    assert server.accepted == 2  # the connection of the bad answer was dropped


@pytest.mark.parametrize("size", [b"-5", b"-7"])
def test_a_negative_chunk_size_is_refused(size: bytes) -> None:
    """A negative number is no chunk size (RFC 9112: hex digits): the answer
    is malformed, a StoreError, not a body (``-5``: parsed on with a negative
    slice, the framing comes back as the body) nor a wait for more bytes
    (``-7``: the parse position goes back before the buffer's start)."""
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size + b"\r\nhello\r\n0\r\n\r\n"
    with RawServer(by_path({"/x": [wire]})) as server:

        async def read(client: LeanClient) -> Any:
            try:
                async with asyncio.timeout(2):
                    return await client.get(server.url(), {})
            except (StoreError, TimeoutError) as exc:
                return exc

        got = run(read)
    assert isinstance(got, StoreError), f"a malformed chunk size was answered with {got!r}"


@pytest.mark.parametrize("split", [None, 8192])
def test_a_head_longer_than_max_head_is_refused(split: int | None) -> None:
    start = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Pad: "
    wire = start + b"a" * (MAX_HEAD + 1 - len(start) - 4) + b"\r\n\r\nok"
    assert wire.index(b"\r\n\r\n") + 4 == MAX_HEAD + 1
    bad = [wire] if split is None else pieces(wire, split)
    with RawServer(by_path({"/bad": bad, "/good": [answer(b"good")]})) as server:

        async def reads(client: LeanClient) -> Answer | None:
            with pytest.raises(StoreError, match="longer than"):
                await client.get(server.url("/bad"), {})
            return await client.get(server.url("/good"), {})

        assert run(reads).body == b"good"


def test_a_head_of_exactly_max_head_is_taken() -> None:
    start = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Pad: "
    wire = start + b"a" * (MAX_HEAD - len(start) - 4) + b"\r\n\r\nok"
    assert wire.index(b"\r\n\r\n") + 4 == MAX_HEAD
    with RawServer(by_path({"/x": [wire]})) as server:
        got = run(lambda c: c.get(server.url(), {}))
    assert got.body == b"ok" and len(got.headers["x-pad"]) > 60000


# -- what is left to aiohttp ------------------------------------------------------------------


@pytest.mark.parametrize("status", ["301 Moved Permanently", "302 Found", "307 Temporary Redirect",
                                    "308 Permanent Redirect"])
def test_a_redirect_is_left_to_aiohttp(status: str) -> None:
    with RawServer(by_path({"/x": [answer(b"", "Location: /y", status=status)], "/y": [answer(b"y")]})) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/x"), {}), await client.get(server.url("/y"), {})]

        moved, target = run(reads)
    assert moved is None
    assert target.body == b"y" and server.accepted == 1  # the redirect's connection is still good


def test_a_3xx_without_location_is_an_answer() -> None:
    with RawServer(by_path({"/x": [b"HTTP/1.1 304 Not Modified\r\nETag: \"e\"\r\n\r\n"], "/y": [answer(b"y")]})) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/x"), {}), await client.get(server.url("/y"), {})]

        not_modified, after = run(reads)
    assert (not_modified.status, not_modified.body) == (304, b"")  # a 304 has no body, whatever it says
    assert after.body == b"y" and server.accepted == 1


@pytest.mark.parametrize(("encoding", "lean"), [("gzip", False), ("br", False), ("identity", True), ("IDENTITY", True)])
def test_an_encoded_body_is_left_to_aiohttp(encoding: str, lean: bool) -> None:
    body = gzip.compress(BODY) if encoding == "gzip" else BODY
    with RawServer(by_path({"/x": [answer(body, f"Content-Encoding: {encoding}")]})) as server:
        got = run(lambda c: c.get(server.url(), {}))
    assert (got is not None) == lean
    if lean:
        assert got.body == BODY


@pytest.mark.parametrize("url", ["http://user:secret@127.0.0.1:{port}/x", "ftp://127.0.0.1:{port}/x",
                                 "http://127.0.0.1:{port}/a b", "http://127.0.0.1:{port}/caf\u00e9",
                                 "http://127.0.0.1:{port}/x\r\nX-Injected: 1"])
def test_urls_it_does_not_send(url: str) -> None:
    with RawServer(by_path({})) as server:
        assert run(lambda c: c.get(url.format(port=server.port), {})) is None
    assert server.accepted == 0


def test_a_query_is_sent_with_the_path() -> None:
    with RawServer(by_path({"/x?a=1&b=%20": [answer(b"q")]})) as server:
        got = run(lambda c: c.get(server.url("/x?a=1&b=%20"), {}))
    assert got.body == b"q"


@pytest.fixture
def aiohttp_module() -> Any:
    return pytest.importorskip("aiohttp")


def spy_aiohttp(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs asked through the filesystem's aiohttp session from now on (a spy that calls through)."""
    urls: list[str] = []
    original = _fsspec_versioned._aiohttp_get

    async def counting(fs: Any, url: Any, headers: dict[str, str]) -> Answer:
        urls.append(str(url))
        return await original(fs, url, headers)

    monkeypatch.setattr(_fsspec_versioned, "_aiohttp_get", counting)
    return urls


def test_redirects_and_encoded_bodies_read_right_through_the_store(aiohttp_module, monkeypatch) -> None:
    """Through :func:`http_read` (a store's read), an answer the lean client
    leaves alone is asked again through the filesystem's aiohttp session,
    which follows the redirect and decodes the body."""
    from zarrpy.stores.fsspec import FsspecStore

    fallbacks = spy_aiohttp(monkeypatch)
    table = {"/site/moved": [answer(b"", "Location: /site/real", status="302 Found")],
             "/site/real": [answer(BODY, 'ETag: "r"')],
             "/site/packed": [answer(gzip.compress(BODY), "Content-Encoding: gzip")],
             "/site/plain": [answer(b"plain bytes")]}
    with RawServer(by_path(table)) as server:
        store = FsspecStore.from_url(server.url("/site"), read_only=True)
        assert store.get("moved") == BODY
        assert store.get("packed") == BODY
        assert store.get("plain") == b"plain bytes"
        heads = list(server.requests)
    assert [u.rsplit("/", 1)[1] for u in fallbacks] == ["moved", "packed"]  # the plain one needed no fallback
    lean = [h.split(" ", 2)[1] for _, h in heads if "Accept-Encoding: identity" in h.split("\r\n")]
    assert lean == ["/site/moved", "/site/packed", "/site/plain"]  # each asked first by the lean client
    assert [h.split(" ", 2)[1] for _, h in heads].count("/site/real") == 1  # aiohttp followed the redirect


# -- which filesystems get the lean client ----------------------------------------------------


def _client_for(fs: Any) -> LeanClient | None:
    async def ask() -> LeanClient | None:
        return plain_client_for(fs)

    return asyncio.run(ask())


def _http_fs(**options: Any) -> Any:
    import fsspec

    return fsspec.filesystem("http", skip_instance_cache=True, **options)


def test_plain_client_for_a_plain_filesystem(aiohttp_module, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert isinstance(_client_for(_http_fs()), LeanClient)
    assert isinstance(_client_for(_http_fs(headers={"X-Token": "t"})), LeanClient)  # headers are sent by it
    monkeypatch.setenv(ENV_VAR, "lean")  # any other value: the default
    assert isinstance(_client_for(_http_fs()), LeanClient)


def test_plain_client_for_is_one_client_per_event_loop(aiohttp_module) -> None:
    fs = _http_fs()

    async def twice() -> tuple[Any, Any]:
        return plain_client_for(fs), plain_client_for(_http_fs())

    a, b = asyncio.run(twice())
    assert a is b
    assert _client_for(fs) is not a  # another loop, another client


@pytest.mark.parametrize("options", [
    {"client_kwargs": {"trust_env": True}},
    {"client_kwargs": {"headers": {"X": "1"}}},
    {"auth": "basic"},
    {"proxy": "http://127.0.0.1:9"},
    {"headers": {"X": "1"}, "ssl": False},
], ids=["client_kwargs", "client_headers", "auth", "proxy", "headers-and-ssl"])
def test_plain_client_for_a_configured_filesystem_is_none(aiohttp_module, options: dict[str, Any]) -> None:
    if options.get("auth") == "basic":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # aiohttp 4 drops BasicAuth
            options = {"auth": aiohttp_module.BasicAuth("user", "pass")}
    assert _client_for(_http_fs(**options)) is None


def test_plain_client_for_a_custom_session_factory_is_none(aiohttp_module) -> None:
    from fsspec.implementations.http import get_client

    async def my_client(**kwargs: Any) -> Any:
        return await get_client(**kwargs)

    assert _client_for(_http_fs(get_client=my_client)) is None
    assert _client_for(object()) is None  # not fsspec's HTTP filesystem at all


@pytest.mark.parametrize("value", ["aiohttp", " AIOHTTP "])
def test_the_environment_variable_turns_the_lean_client_off(aiohttp_module, monkeypatch, value: str) -> None:
    monkeypatch.setenv(ENV_VAR, value)
    assert _client_for(_http_fs()) is None


@pytest.mark.parametrize("env", [None, "aiohttp"])
def test_an_array_reads_the_same_with_either_client(aiohttp_module, tmp_path: Path, monkeypatch, env) -> None:
    import zarrpy
    from zarrpy.stores.fsspec import FsspecStore

    data = np.random.default_rng(3).integers(-1000, 1000, (50, 37), dtype=np.int32)
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=data.shape, dtype="int32", chunks=(16, 16),
                            compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    a[...] = data
    lean_calls, blocking_calls = [], []
    lean_get, lean_blocking = LeanClient.get, LeanClient.request_blocking

    async def counting_lean(self: LeanClient, url: str, headers: dict[str, str]) -> Answer | None:
        lean_calls.append(url)
        return await lean_get(self, url, headers)

    def counting_blocking(self: LeanClient, method: str, url: str, headers: dict[str, str],
                          body: bytes = b"") -> Answer | None:
        lean_calls.append(url)
        blocking_calls.append(url)
        return lean_blocking(self, method, url, headers, body)

    monkeypatch.setattr(LeanClient, "get", counting_lean)
    monkeypatch.setattr(LeanClient, "request_blocking", counting_blocking)
    aiohttp_calls = spy_aiohttp(monkeypatch)
    if env is None:
        monkeypatch.delenv(ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(ENV_VAR, env)
    with serve_directory(tmp_path) as (base, server):
        store = FsspecStore.from_url(f"{base}/a.zarr", read_only=True)
        got = zarrpy.open_array(store, mode="r")
        np.testing.assert_array_equal(got[...], data)
        np.testing.assert_array_equal(got[3:41, 5:30], data[3:41, 5:30])
        gets = server.log.count("GET")
    assert gets == 1 + 12 + 6  # zarr.json, the 4 x 3 chunks, the region's 3 x 2
    if env is None:
        assert (len(lean_calls), len(aiohttp_calls)) == (gets, 0)
        assert len(blocking_calls) == 1  # zarr.json: a single request, sent from the reading thread
    else:
        assert (len(lean_calls), len(aiohttp_calls)) == (0, gets)


# -- https -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "zarrpy test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(key, hashes.SHA256()))
    root = tmp_path_factory.mktemp("tls")
    cert_path, key_path = root / "cert.pem", root / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def _server_context(certificate: tuple[Path, Path]) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*certificate)
    return ctx


BIG = np.random.default_rng(11).integers(0, 256, 5 * 1024 * 1024 + 123, dtype=np.uint8).tobytes()


def test_https_with_a_trusted_certificate_brings_a_large_body_intact(certificate, monkeypatch) -> None:
    cert_path, _ = certificate
    monkeypatch.setattr(_http_client, "tls_context", lambda: ssl.create_default_context(cafile=str(cert_path)))
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked([BODY, BODY[:7]])
    table = {"/big": pieces(answer(BIG), 1 << 20, pause=0.01), "/chunked": [wire]}
    with RawServer(by_path(table), tls=_server_context(certificate)) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/big", "https"), {"Range": "bytes=0-"}),
                    await client.get(server.url("/chunked", "https"), {})]

        big, small = run(reads, timeout=60)
    assert big.status == 200 and len(big.body) == len(BIG) and big.body == BIG
    assert small.body == BODY + BODY[:7]
    assert server.accepted == 1 and server.errors == []  # one TLS connection, kept alive


def test_https_refuses_an_untrusted_certificate_by_default(certificate) -> None:
    with RawServer(by_path({"/x": [answer(b"secret")]}), tls=_server_context(certificate)) as server:
        with pytest.raises(ssl.SSLCertVerificationError):
            run(lambda c: c.get(server.url("/x", "https"), {}))
        deadline = time.monotonic() + 5
        while not server.errors and time.monotonic() < deadline:
            time.sleep(0.01)
    assert server.requests == []  # nothing was asked over the refused connection
    assert server.errors and isinstance(server.errors[0], ssl.SSLError)


def test_tls_context_is_the_verifying_default() -> None:
    ctx = _http_client.tls_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname


# -- bodies above IN_PLACE_NBYTES: received into the bytes handed on --------------------------


def _random_bytes(n: int, seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _count_scheduled_finishes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Spy (calling through) on ``_Connection._finish_scheduled``: one entry per
    body finished (every finish is scheduled), True where it was received in
    place."""
    calls: list[bool] = []
    original = _http_client._Connection._finish_scheduled

    def counting(self: Any) -> None:
        calls.append(self._in_place is not None)
        original(self)

    monkeypatch.setattr(_http_client._Connection, "_finish_scheduled", counting)
    return calls


@pytest.mark.parametrize("size", [IN_PLACE_NBYTES - 1, IN_PLACE_NBYTES, IN_PLACE_NBYTES + 1, 3 * 1024 * 1024 + 7],
                         ids=["below", "at", "above", "3MB"])
def test_bodies_around_in_place_nbytes_arrive_intact(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    body = _random_bytes(size, size)
    scheduled = _count_scheduled_finishes(monkeypatch)
    split = 4093 if size < 1 << 20 else 100_003  # many sends, none aligned with the head or the body
    table = {"/x": pieces(answer(body, 'ETag: "e"'), split, pause=0.001), "/after": [answer(b"after")]}
    with RawServer(by_path(table)) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/x"), {}), await client.get(server.url("/after"), {})]

        got, after = run(reads)
    assert type(got.body) is bytes
    assert got.status == 200 and len(got.body) == size and got.body == body
    assert got.headers["etag"] == '"e"'
    assert scheduled == [size > IN_PLACE_NBYTES, False]  # received in place only above the bound
    assert after.body == b"after" and server.accepted == 1  # the body was taken exactly: the connection kept


def test_two_in_place_answers_back_to_back_share_one_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = _random_bytes(IN_PLACE_NBYTES * 4 + 3, 1), _random_bytes(IN_PLACE_NBYTES + 100, 2)
    scheduled = _count_scheduled_finishes(monkeypatch)
    table = {"/a": pieces(answer(first), 30_011, pause=0.001), "/b": [answer(second)]}
    with RawServer(by_path(table)) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/a"), {}), await client.get(server.url("/b"), {})]

        a, b = run(reads)
    assert (type(a.body), type(b.body)) == (bytes, bytes)
    assert a.body == first and b.body == second
    assert server.connections() == [1, 1]  # the second request went out on the first's connection
    assert scheduled == [True, True]


@pytest.fixture(params=["http", "https"])
def scheme(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ssl.SSLContext | None]:
    """``http``, or ``https`` with the test certificate trusted (over TLS,
    asyncio reads again before the scheduled finish: bytes past the body
    reach the client while it is still pending)."""
    if request.param == "http":
        return "http", None
    cert_path, _ = certificate = request.getfixturevalue("certificate")
    monkeypatch.setattr(_http_client, "tls_context", lambda: ssl.create_default_context(cafile=str(cert_path)))
    return "https", _server_context(certificate)


@pytest.mark.parametrize("split", [None, 8191])
def test_an_in_place_body_followed_by_more_bytes_drops_the_connection(scheme, split: int | None) -> None:
    name, tls = scheme
    body = _random_bytes(IN_PLACE_NBYTES * 3 + 17, 3)
    wire = answer(body) + b"GARBAGE"
    table = {"/a": [wire] if split is None else pieces(wire, split), "/b": [answer(b"clean")]}
    with RawServer(by_path(table), tls=tls) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/a", name), {}), await client.get(server.url("/b", name), {})]

        first, second = run(reads)
    assert first.status == 200 and first.body == body
    assert second.body == b"clean"  # not b"GARBAGE..." taken for the next answer's head
    assert server.accepted == 2 and server.connections() == [1, 2]  # the stray bytes' connection was not reused


@pytest.mark.parametrize("size", [40_000, IN_PLACE_NBYTES, IN_PLACE_NBYTES + 1], ids=["below", "at", "above"])
def test_more_bytes_after_a_body_in_pieces_drop_the_connection_whatever_its_length(size: int) -> None:
    """The same wire as above, with bodies either side of IN_PLACE_NBYTES:
    the body comes in pieces, so its last read takes exactly its last
    bytes and the stray ones (sent with them) are read next. The
    connection must be dropped whatever the body's length: the stray bytes
    must not be taken for the next answer's head."""
    body = _random_bytes(size, size)
    wire = answer(body) + b"GARBAGE"
    table = {"/a": pieces(wire, 8191), "/b": [answer(b"clean")]}
    with RawServer(by_path(table)) as server:

        async def reads(client: LeanClient) -> list[Answer | BaseException | None]:
            first = await client.get(server.url("/a"), {})
            try:
                return [first, await client.get(server.url("/b"), {})]
            except StoreError as exc:  # the stray bytes parsed as the next answer's head
                return [first, exc]

        first, second = run(reads)
    assert first.body == body  # type: ignore[union-attr]
    assert not isinstance(second, BaseException), f"the next request failed: {second!r}"
    assert second.body == b"clean" and server.accepted == 2  # type: ignore[union-attr]


@pytest.mark.parametrize("close_header", [True, False], ids=["connection-close", "kept-alive-but-closed"])
@pytest.mark.parametrize("split", [None, 8191])
def test_an_in_place_body_with_the_close_right_after_its_last_byte_is_an_answer(scheme, split: int | None,
                                                                                close_header: bool) -> None:
    """The server closes the connection right after the body's last byte
    (no pause): the close may come in before the scheduled finish; the
    complete body is still the answer, not a connection error."""
    name, tls = scheme
    body = _random_bytes(IN_PLACE_NBYTES * 2 + 5, 4)
    wire = answer(body, *(["Connection: close"] if close_header else []))
    table = {"/a": [*([wire] if split is None else pieces(wire, split)), CLOSE], "/b": [answer(b"next")]}
    with RawServer(by_path(table), tls=tls) as server:

        async def reads(client: LeanClient) -> list[Answer | None]:
            return [await client.get(server.url("/a", name), {}), await client.get(server.url("/b", name), {})]

        first, second = run(reads)
    assert first.status == 200 and type(first.body) is bytes and first.body == body
    assert second.body == b"next" and server.accepted == 2


def test_an_in_place_body_cut_short_after_many_pieces_is_an_error() -> None:
    body = _random_bytes(IN_PLACE_NBYTES * 8, 5)
    table = {"/x": [*pieces(answer(body)[:-1], 50_000, pause=0.001), 0.02, CLOSE]}  # all but the last byte
    with RawServer(by_path(table)) as server:
        with pytest.raises((StoreError, ConnectionError)):
            run(lambda c: c.get(server.url(), {}))


def test_an_in_place_body_is_not_copied_at_the_end() -> None:
    """A 16 MB body is one allocation of its length: the bytes handed on are
    the buffer it was received into (a copy at the end would double the
    peak). Traced only around the request itself, on a connection opened
    before, so the server's side (built beforehand) and setup do not count."""
    size = 16 * 1024 * 1024
    body = _random_bytes(size, 6)
    table = {"/x": pieces(answer(body), 1 << 20, pause=0.001), "/warm": [answer(b"warm")]}
    with RawServer(by_path(table)) as server:

        async def read(client: LeanClient) -> tuple[Answer | None, int]:
            assert (await client.get(server.url("/warm"), {})).body == b"warm"  # type: ignore[union-attr]
            tracemalloc.start()
            try:
                got = await client.get(server.url("/x"), {})
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            return got, peak

        got, peak = run(read)
    assert server.accepted == 1
    assert type(got.body) is bytes and got.body == body
    assert peak >= size  # the body itself was traced: the measurement saw the request
    assert peak < 1.5 * size, f"peak {peak / size:.2f}x the body: it was copied"
