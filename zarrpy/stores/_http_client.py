"""A lean HTTP/1.1 client on asyncio: GETs for the plain case of fsspec's
HTTP filesystem (no proxy, authentication or client settings), and S3's
signed GETs and PUTs (:mod:`zarrpy.stores._s3_lean`).

Why: a remote read is judged by its round trips, and once those are at the
floor by the CPU each answer costs on the one event-loop thread that
receives them all. aiohttp spends about 0.15-0.25 ms of CPU per request and
receives a body in many small blocks that it joins at the end; this client
spends about a third of that, and receives a body straight into one buffer
of the announced length (:class:`asyncio.BufferedProtocol`).

What it does: ``GET`` with extra headers (``Range``, ``If-Match``) over
kept-alive connections (one pool per event loop and origin), bodies framed by
``Content-Length``, ``chunked`` or the connection's end, ``http`` and ``https``
(the default TLS context: verified certificates). A kept-alive connection
the server closed meanwhile is retried once on a new one, as long as no
byte of an answer came (a GET is safe to repeat, and so is a PUT; a
conditional PUT that the server applied but whose answer was lost is then
refused by its own first attempt and reported as not applied, as any
client's retry would: the caller re-reads and writes again, so nothing is
lost). A request whose caller waits for its one answer can be sent from that
thread instead (:meth:`LeanClient.request_blocking`): the same parsing
(:class:`_Connection`, driven by a blocking socket), its own pool of
kept-alive connections, each checked for a close or stray bytes before it
is used again; no hop to the loop's thread and back.
What it leaves to aiohttp (:func:`plain_client_for` says None, or
:meth:`LeanClient.get` answers None before anything is used): redirects,
encoded bodies (it asks for ``identity``), credentials in the URL, and any
filesystem whose session or request options are set.
"""

from __future__ import annotations

import asyncio
import functools
import io
import os
import re
import ssl
import socket
import sys
import threading
import time
import weakref
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import SplitResult, urlsplit

from ..errors import StoreError

ENV_VAR = "ZARRPY_HTTP_CLIENT"
"""``aiohttp`` sends every request through fsspec's aiohttp session (HTTP)
and s3fs's botocore client (S3)."""

MAX_HEAD = 64 * 1024
"""Longest status line and headers taken (a longer head is refused)."""

PREALLOCATE = 64 * 1024 * 1024
"""Largest body buffer allocated at once from ``Content-Length`` (a longer
body grows as it arrives, so a length the server only claims costs nothing)."""

IN_PLACE_NBYTES = 64 * 1024
"""Bodies longer than this (up to :data:`PREALLOCATE`) are received into the
buffer of the ``bytes`` object they are handed on as (an :class:`io.BytesIO`'s,
whose ``getvalue`` gives its buffer without a copy when nothing else holds
it), not copied out of a ``bytearray`` at the end: a 1 MB copy into freshly
mapped pages costs about what receiving the body does."""

TIMEOUT = 300.0
"""Seconds one request may take, connecting included (aiohttp's default)."""

IDLE_PER_ORIGIN = 128
"""Kept-alive connections kept per origin."""

_UNSENDABLE = re.compile(r"[\x00-\x20\x7f-\uffff]")
_STATUS = re.compile(r"[0-9]{3}")
_DIGITS = re.compile(r"[0-9]+")
_HEX = re.compile(rb"[0-9A-Fa-f]+")


@dataclass(frozen=True, slots=True)
class Answer:
    """A response: status, headers (lowercase names), body."""

    status: int
    headers: dict[str, str]
    body: bytes


class _Outcome(Protocol):
    """Where a connection puts its answer: an :class:`asyncio.Future`, or a
    :class:`concurrent.futures.Future` for a blocking exchange."""

    def done(self) -> bool: ...

    def set_result(self, result: Answer, /) -> None: ...

    def set_exception(self, exception: BaseException, /) -> None: ...


class _Connection(asyncio.BufferedProtocol):
    """One connection: receives a response's head into a small buffer, then
    its body straight into a buffer of the announced length."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._head = bytearray(MAX_HEAD)
        self._scratch = bytearray(65536)  # chunked or connection-ended bodies arrive here
        self._raw = bytearray()  # chunked: framing not yet parsed
        self._future: _Outcome | None = None
        self._head_only = False
        self._reset()

    def _reset(self) -> None:
        self._n = 0  # bytes of the head buffer in use
        self._status = 0
        self._headers: dict[str, str] = {}
        self._body: bytearray | memoryview | None = None  # None: still in the head
        self._in_place: io.BytesIO | None = None  # the body is received into its buffer (_body views it)
        self._complete = False  # every announced byte is in: its finish is scheduled
        self._got = 0
        self._length = -1  # -1: until the connection ends; -2: chunked
        self._raw.clear()
        self.keep_alive = True
        self.received = False

    # -- asyncio -----------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        f = self._future
        if f is None or f.done():
            return
        if exc is None and self._body is not None and (self._length == -1 or self._complete):
            self._finish()  # a body that ends with the connection, or one whose finish is scheduled
        else:
            f.set_exception(exc or ConnectionResetError("the server closed the connection"))

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._body is None:
            return memoryview(self._head)[self._n:]
        if self._length >= 0:
            if self._complete:  # bytes past the answer, before its scheduled finish
                return memoryview(self._scratch)
            if self._got >= len(self._body):  # the announced length did not fit in one allocation
                assert isinstance(self._body, bytearray)  # an in-place body is allocated whole
                self._body.extend(bytes(min(PREALLOCATE, self._length - self._got) or 1))
            return memoryview(self._body)[self._got:]
        return memoryview(self._scratch)

    def buffer_updated(self, nbytes: int) -> None:
        self.received = True
        if self._future is None:  # bytes nobody asked for: the connection cannot be trusted
            self.keep_alive = False
            if self.transport is not None:
                self.transport.close()
            return
        try:
            if self._body is None:
                self._n += nbytes
                self._take_head()
            elif self._complete:  # more than the answer: the connection cannot be trusted
                self.keep_alive = False
            elif self._length >= 0:
                self._got += nbytes
            else:
                self._take_unframed(memoryview(self._scratch)[:nbytes])
            if self._body is not None and self._length >= 0 and self._got >= self._length and not self._complete:
                # Finish on the loop's next turn: asyncio still holds the
                # slice an in-place body was received into (a copy would be
                # made now), and bytes past the answer that are already on
                # the socket are seen first, so the connection is not reused.
                self._complete = True
                self._schedule_finish()
        except Exception as exc:  # noqa: BLE001 - the request fails, the connection is dropped
            self.keep_alive = False
            if self.transport is not None:
                self.transport.close()
            if self._future is not None and not self._future.done():
                self._future.set_exception(exc)

    def eof_received(self) -> bool | None:
        return None  # close the transport; connection_lost finishes the body

    # -- one request ---------------------------------------------------------
    def request(self, data: bytes, body: bytes, head_only: bool) -> asyncio.Future[Answer]:
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._start(data, body, head_only, future)
        return future

    def _start(self, data: bytes, body: bytes, head_only: bool, future: _Outcome) -> None:
        """Send one request; its answer (or error) goes to ``future``."""
        assert self.transport is not None
        self._reset()
        self._head_only = head_only
        self._future = future
        if len(body) <= 16384:
            self.transport.write(data + body if body else data)
        else:  # not copied into one buffer
            self.transport.writelines([data, body])

    def _schedule_finish(self) -> None:
        asyncio.get_running_loop().call_soon(self._finish_scheduled)

    def _take_head(self) -> None:
        end = self._head.find(b"\r\n\r\n", 0, self._n)
        if end < 0:
            if self._n >= len(self._head):
                raise StoreError(f"a response head longer than {MAX_HEAD} bytes")
            return
        lines = bytes(self._head[:end]).decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        if not version.startswith("HTTP/1."):
            raise StoreError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        code = rest[:3]
        if not _STATUS.fullmatch(code) or rest[3:4] not in ("", " "):
            raise StoreError(f"no status code in {lines[0][:80]!r}")
        self._status = int(code)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise StoreError(f"a header line without a colon: {line[:80]!r}")
            name = name.strip().lower()
            value = value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self._headers = headers
        connection = headers.get("connection", "").lower()
        self.keep_alive = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
        if 100 <= self._status < 200:  # an interim answer: the real one follows
            after_interim = self._head[end + 4:self._n]
            self._n = len(after_interim)
            self._head[:self._n] = after_interim
            return self._take_head() if self._n else None
        leftover = memoryview(self._head)[end + 4:self._n]
        self._n = 0  # the head buffer is free again (leftover is read below)
        if self._head_only or self._status in (204, 304):
            self._length = 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._length = -2
        elif "content-length" in headers:
            length_text = headers["content-length"]
            if not _DIGITS.fullmatch(length_text):
                raise StoreError(f"a bad Content-Length: {length_text[:40]!r}")
            self._length = int(length_text)
        else:
            self._length = -1
            self.keep_alive = False
        if self._length >= 0:
            if IN_PLACE_NBYTES < self._length <= PREALLOCATE:
                self._in_place = io.BytesIO()
                self._in_place.seek(self._length - 1)
                self._in_place.write(b"\0")  # sized exactly: getvalue() hands its buffer on
                self._body = self._in_place.getbuffer()
            else:
                self._body = bytearray(min(self._length, PREALLOCATE))
            take = min(len(leftover), self._length)
            self._body[:take] = leftover[:take]
            if len(leftover) > take:  # more than the answer: the connection cannot be trusted
                self.keep_alive = False
            self._got = take
        else:
            self._body = bytearray()
            self._take_unframed(leftover)

    def _take_unframed(self, data: bytes | bytearray | memoryview) -> None:
        """Body bytes of a chunked or connection-ended answer."""
        body = self._body
        assert isinstance(body, bytearray)  # no length announced: never received in place
        if self._length == -1:
            body += data
            return
        self._raw += data
        raw, pos = self._raw, 0
        while True:
            line_end = raw.find(b"\r\n", pos)
            if line_end < 0:
                break
            size_text = bytes(raw[pos:line_end]).split(b";", 1)[0].strip()
            if not _HEX.fullmatch(size_text):
                raise StoreError(f"a bad chunk size: {size_text[:20]!r}")
            size = int(size_text, 16)
            if size == 0:  # the last chunk, then trailers up to an empty line
                if raw[line_end + 2:line_end + 4] == b"\r\n":
                    end = line_end + 4
                else:
                    found = raw.find(b"\r\n\r\n", line_end + 2)
                    if found < 0:
                        break
                    end = found + 4
                if len(raw) > end:
                    self.keep_alive = False
                self._finish()
                return
            if len(raw) < line_end + 2 + size + 2:
                break
            if raw[line_end + 2 + size:line_end + 4 + size] != b"\r\n":
                raise StoreError("a chunk's data not followed by CRLF")
            body += raw[line_end + 2:line_end + 2 + size]
            pos = line_end + 2 + size + 2
        del raw[:pos]

    def _finish_scheduled(self) -> None:
        if self._body is not None and self._complete:  # not finished by connection_lost meanwhile
            self._finish()

    def _finish(self) -> None:
        body = self._body
        assert body is not None
        if self._in_place is not None:
            assert isinstance(body, memoryview)
            body.release()
            data = self._in_place.getvalue()  # its own buffer (a copy only if a view is still held)
            self._in_place = None
        else:
            got = self._got if self._length >= 0 else len(body)
            data = bytes(memoryview(body)[:got])
        answer = Answer(self._status, self._headers, data)
        self._body = None
        f, self._future = self._future, None
        if f is not None and not f.done():
            f.set_result(answer)


def _prepare(method: str, url: str, headers: dict[str, str], body: bytes) -> tuple[tuple[str, str, int], bytes] | None:
    """The origin and the head of a request, or None for a URL this client
    leaves to aiohttp (not http(s), credentials in it, not encoded)."""
    split = _split(url)
    if split is None:
        return None
    origin, target, host = split
    lines = [f"{method} {target} HTTP/1.1", host, "Accept-Encoding: identity"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return origin, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


@functools.lru_cache(maxsize=1024)
def _split(url: str) -> tuple[tuple[str, str, int], str, str] | None:
    """The origin, request target and ``Host`` line of an encoded ``url``
    (None: one this client leaves to aiohttp), remembered: a read asks
    for the same few objects again and again, and splitting a URL costs
    more than the rest of a request's head."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.username is not None or not parts.hostname:
        return None
    host = parts.hostname
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if _UNSENDABLE.search(target):
        return None  # not an encoded URL
    return (parts.scheme, host, port), target, f"Host: {host_header(parts)}"


def _taken(answer: Answer) -> Answer | None:
    """``answer``, or None for one left to aiohttp (a redirect, an encoded body)."""
    if 300 <= answer.status < 400 and "location" in answer.headers:
        return None
    if answer.headers.get("content-encoding", "identity").lower() != "identity":
        return None
    return answer


def _remaining(deadline: float) -> float:
    """Seconds left before ``deadline``; a TimeoutError once none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request took longer than the client's timeout")
    return left


class _SocketWriter:
    """The part of a transport a :class:`_Connection` uses, over a blocking socket."""

    __slots__ = ("sock", "_closed")

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self._closed = sock, False

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)

    def writelines(self, parts: list[bytes]) -> None:
        for part in parts:
            self.sock.sendall(part)

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.sock.close()


class _BlockingConnection(_Connection):
    """A :class:`_Connection` driven from a blocking socket by the thread
    that asks (:meth:`LeanClient.request_blocking`): the same parsing, the
    answer finished as soon as its last byte is in (no loop holds a view of
    the buffer it was received into)."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self.sock = sock
        self._writer = _SocketWriter(sock)
        self.transport = self._writer  # type: ignore[assignment]  # what _Connection writes to and closes

    def close(self) -> None:
        self._writer.close()

    def _schedule_finish(self) -> None:
        pass  # exchange() finishes it once the receive's view is dropped

    def exchange(self, data: bytes, body: bytes, deadline: float) -> Answer:
        """Send one request and receive its answer, by ``deadline``."""
        sock = self.sock
        sock.settimeout(_remaining(deadline))
        outcome: Future[Answer] = Future()
        self._start(data, body, False, outcome)
        while not outcome.done():
            sock.settimeout(_remaining(deadline))
            view = self.get_buffer(-1)
            try:
                nbytes = sock.recv_into(view)
            finally:
                view.release()
            if nbytes == 0:
                self.connection_lost(None)
                break
            self.buffer_updated(nbytes)
            if self._complete:
                self._finish_scheduled()
        return outcome.result()

    def reusable(self) -> bool:
        """Whether this idle connection can take another request: still open,
        and nothing arrived since its last answer (a server's close, or
        bytes no one asked for)."""
        if self.closed or self._writer.is_closing():
            return False
        sock = self.sock
        sock.setblocking(False)
        try:
            sock.recv(1)  # bytes, or b"" at the connection's end: not reusable either way
        except (BlockingIOError, ssl.SSLWantReadError):
            return True  # nothing there (on TLS: no application data; session tickets are read here)
        except OSError:
            return False
        finally:
            if not self._writer.is_closing():
                sock.setblocking(True)
        return False


class LeanClient:
    """Kept-alive connections of one event loop, by origin."""

    def __init__(self, tls: ssl.SSLContext | None = None, timeout: float = TIMEOUT) -> None:
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._blocking_idle: dict[tuple[str, str, int], list[_BlockingConnection]] = {}
        self._blocking_lock = threading.Lock()
        self._tls = tls  # None: tls_context(), made at the first https connection
        self._timeout = timeout

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = tls_context()
        return self._tls

    async def _connect(self, scheme: str, host: str, port: int) -> _Connection:
        loop = asyncio.get_running_loop()
        tls = self._tls_context() if scheme == "https" else None
        _, conn = await loop.create_connection(_Connection, host, port, ssl=tls,
                                               server_hostname=host if tls is not None else None)
        return conn

    def _take_idle(self, origin: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return conn
        return None

    async def get(self, url: str, headers: dict[str, str]) -> Answer | None:
        """``GET url`` (encoded, as ``fs.encode_url`` gives it) with
        ``headers``; None when the answer is one this client leaves to
        aiohttp (a redirect, an encoded body), or the URL is."""
        return await self.request("GET", url, headers)

    async def request(self, method: str, url: str, headers: dict[str, str], body: bytes = b"") -> Answer | None:
        """``method url`` with ``headers`` and ``body`` (sent with its
        ``Content-Length`` when not empty); None as :meth:`get` says."""
        prepared = _prepare(method, url, headers, body)
        if prepared is None:
            return None
        origin, data = prepared
        async with asyncio.timeout(self._timeout):
            answer = await self._send(origin, data, body)
        return _taken(answer)

    def request_blocking(self, method: str, url: str, headers: dict[str, str], body: bytes = b"") -> Answer | None:
        """:meth:`request` in the calling thread (any thread but the loop's),
        over blocking connections of its own: a caller that waits for one
        answer anyway saves the two hops through the event loop's thread
        (each a wake-up of another thread, 0.1-0.3 ms) and the loop's task
        machinery."""
        prepared = _prepare(method, url, headers, body)
        if prepared is None:
            return None
        origin, data = prepared
        deadline = time.monotonic() + self._timeout
        conn = self._take_idle_blocking(origin)
        answer: Answer | None = None
        if conn is not None:
            try:
                answer = self._exchange_blocking(origin, conn, data, body, deadline)
            except ConnectionError:
                if conn.received:
                    raise
            # a kept-alive connection the server had closed: once more, on a new one
        if answer is None:
            answer = self._exchange_blocking(origin, self._connect_blocking(origin, deadline), data, body, deadline)
        return _taken(answer)

    def _connect_blocking(self, origin: tuple[str, str, int], deadline: float) -> _BlockingConnection:
        scheme, host, port = origin
        sock = socket.create_connection((host, port), timeout=_remaining(deadline))
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as asyncio's transports
            if scheme == "https":
                sock = self._tls_context().wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise
        return _BlockingConnection(sock)

    def _take_idle_blocking(self, origin: tuple[str, str, int]) -> _BlockingConnection | None:
        with self._blocking_lock:
            idle = self._blocking_idle.get(origin)
            conn = idle.pop() if idle else None
            while conn is not None and not conn.reusable():
                conn.close()
                conn = idle.pop() if idle else None
            return conn

    def _exchange_blocking(self, origin: tuple[str, str, int], conn: _BlockingConnection, data: bytes, body: bytes,
                           deadline: float) -> Answer:
        try:
            answer = conn.exchange(data, body, deadline)
        except BaseException:
            conn.close()
            raise
        if conn.keep_alive and not conn.closed:
            with self._blocking_lock:
                idle = self._blocking_idle.setdefault(origin, [])
                if len(idle) < IDLE_PER_ORIGIN:
                    idle.append(conn)
                    return answer
        conn.close()
        return answer

    async def _send(self, origin: tuple[str, str, int], data: bytes, body: bytes) -> Answer:
        conn = self._take_idle(origin)
        if conn is not None:
            try:
                return await self._exchange(origin, conn, data, body)
            except (ConnectionError, asyncio.IncompleteReadError):
                if conn.received:
                    raise
            # a kept-alive connection the server had closed: once more, on a new one
        return await self._exchange(origin, await self._connect(*origin), data, body)

    async def _exchange(self, origin: tuple[str, str, int], conn: _Connection, data: bytes, body: bytes) -> Answer:
        try:
            answer = await conn.request(data, body, head_only=False)
        except BaseException:
            if conn.transport is not None:
                conn.transport.close()
            raise
        if conn.keep_alive and not conn.closed:
            idle = self._idle.setdefault(origin, [])
            if len(idle) < IDLE_PER_ORIGIN:
                idle.append(conn)
                return answer
        if conn.transport is not None:
            conn.transport.close()
        return answer


def host_header(parts: SplitResult) -> str:
    """The ``Host`` header of a request to the split URL ``parts``."""
    host = parts.hostname or ""
    value = f"[{host}]" if ":" in host else host
    return value if parts.port is None else f"{value}:{parts.port}"


def tls_context() -> ssl.SSLContext:
    """The TLS context of ``https`` connections: the default (certificates
    and host names verified against the system's trust store)."""
    return ssl.create_default_context()


_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LeanClient] = weakref.WeakKeyDictionary()
_CLIENTS_LOCK = threading.Lock()


def plain_client_for(fs: Any, loop: asyncio.AbstractEventLoop | None = None) -> LeanClient | None:
    """The lean client of ``fs``'s event loop when ``fs`` (fsspec's HTTP
    filesystem) is plain: fsspec's own session factory with no client
    options, no request options but headers, and ``ZARRPY_HTTP_CLIENT`` not
    ``aiohttp``. Call on that loop, or from another thread with ``loop``
    (for :meth:`LeanClient.request_blocking`)."""
    if os.environ.get(ENV_VAR, "").strip().lower() == "aiohttp":
        return None
    http = sys.modules.get("fsspec.implementations.http")
    if http is None or getattr(fs, "get_client", None) is not getattr(http, "get_client", None):
        return None
    if getattr(fs, "client_kwargs", None) or set(getattr(fs, "kwargs", None) or {}) - {"headers"}:
        return None
    if loop is None:
        loop = asyncio.get_running_loop()
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(loop)
        if client is None:
            client = _CLIENTS[loop] = LeanClient()
    return client


__all__ = ["Answer", "ENV_VAR", "StoreError", "LeanClient", "host_header", "plain_client_for", "tls_context"]
