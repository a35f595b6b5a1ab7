"""The servers of the remote benchmark (``remote.py``), each in its own process.

A server in the benchmark's own process would take the GIL from the engines
it serves (zarrpy and zarr-python decode in Python threads), so each runs in
a child process and is driven over a pipe: its base URL, its latency (may be
changed between timings), and its request log (:class:`http_server.LoggedRequest`
entries, so :func:`http_server.round_trip_depth` reads both kinds).

* ``"http"``: :func:`http_server.serve_directory` over a directory (read-only).
* ``"s3"``: moto's S3 server (in memory, writable) behind a WSGI middleware
  that sleeps the latency before each request and logs it the same way:
  its start when the request reached the application, its end when the
  answer was ready and before it went out.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: http_server
from http_server import LoggedRequest, RequestLog, serve_directory  # noqa: E402

S3_REGION = "us-east-1"
S3_KEY, S3_SECRET = "bench-key", "bench-secret"
"""The credentials the S3 clients send (moto accepts any)."""

START_TIMEOUT_S = 60.0


class _Settings:
    """What the S3 middleware reads on every request (the HTTP server has its own)."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.log = RequestLog()


class _Delayed:
    """WSGI middleware: wait ``settings.latency``, answer from ``app``, log the request."""

    def __init__(self, app: Callable[..., Iterable[bytes]], settings: _Settings) -> None:
        self.app, self.settings = app, settings

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        start = time.monotonic()
        if self.settings.latency > 0:
            time.sleep(self.settings.latency)
        status = [0]

        def record_status(line: str, headers: list, exc_info: Any = None) -> Any:
            status[0] = int(line.split()[0])
            return start_response(line, headers, exc_info)

        body = self.app(environ, record_status)
        try:
            out = list(body)  # the whole answer is ready before any of it goes out
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
        path = environ.get("PATH_INFO", "") + ("?" + environ["QUERY_STRING"] if environ.get("QUERY_STRING") else "")
        self.settings.log.add(LoggedRequest(environ["REQUEST_METHOD"], path, environ.get("HTTP_RANGE"),
                                            start, time.monotonic(), status[0]))
        return out


def _moto_server(settings: _Settings):
    """A threaded werkzeug server on 127.0.0.1 (free port) running moto's S3 behind ``_Delayed``."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    class QuietHandler(MotoRequestHandler):
        disable_nagle_algorithm = True  # as http_server's handler: no 40 ms wait for a delayed ACK

        def log(self, type: str, message: str, *args: Any) -> None:
            pass

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = _Delayed(DomainDispatcherApplication(create_backend_app), settings)
    return make_server("127.0.0.1", 0, app, threaded=True, request_handler=QuietHandler)


def _answer(conn: multiprocessing.connection.Connection, set_latency: Callable[[float], None], log: RequestLog) -> None:
    """Serve the parent's commands until it says ``stop`` (or goes away)."""
    while True:
        try:
            cmd, arg = conn.recv()
        except EOFError:
            return
        if cmd == "latency":
            set_latency(arg)
            conn.send(None)
        elif cmd == "take":  # every entry so far, and forget them
            entries = log.entries()
            log.clear()
            conn.send(entries)
        elif cmd == "stop":
            conn.send(None)
            return


def _child(kind: str, root: str | None, latency: float, conn: multiprocessing.connection.Connection) -> None:
    if kind == "http":
        with serve_directory(root, latency=latency) as (url, server):
            conn.send(url)
            _answer(conn, lambda s: setattr(server, "latency", s), server.log)
        return
    settings = _Settings(latency)
    server = _moto_server(settings)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        conn.send(f"http://127.0.0.1:{server.server_address[1]}")
        _answer(conn, lambda s: setattr(settings, "latency", s), settings.log)
    finally:
        server.shutdown()
        server.server_close()


class ServerProcess:
    """A server (``kind`` ``"http"`` over ``root``, or ``"s3"``) in a child
    process, as a context manager: ``url``, ``set_latency``, ``take``."""

    def __init__(self, kind: str, root: str | None = None, latency: float = 0.0) -> None:
        if kind not in ("http", "s3"):
            raise ValueError(f"unknown server kind {kind!r} (http or s3)")
        ctx = multiprocessing.get_context("spawn")  # no fork of the engines' threads
        self._conn, child_conn = ctx.Pipe()
        self._proc = ctx.Process(target=_child, args=(kind, root, latency, child_conn), daemon=True,
                                 name=f"bench-{kind}-server")
        self._proc.start()
        child_conn.close()
        self.kind, self.latency = kind, latency
        if not self._conn.poll(START_TIMEOUT_S):
            self.close()
            raise RuntimeError(f"the {kind} server did not start within {START_TIMEOUT_S:.0f} s")
        self.url: str = self._conn.recv()

    def _call(self, cmd: str, arg: Any = None) -> Any:
        self._conn.send((cmd, arg))
        return self._conn.recv()

    def set_latency(self, seconds: float) -> None:
        """Sleep ``seconds`` before each answer from now on."""
        self._call("latency", seconds)
        self.latency = seconds

    def take(self) -> list[LoggedRequest]:
        """Every request answered since the last ``take`` (the log is emptied)."""
        return self._call("take")

    def close(self) -> None:
        """Stop the server and its process."""
        if self._proc.is_alive():
            try:
                self._call("stop")
            except (EOFError, OSError, BrokenPipeError):
                pass
            self._proc.join(timeout=10)
            if self._proc.is_alive():
                self._proc.terminate()
                self._proc.join(timeout=5)
        self._conn.close()

    def __enter__(self) -> "ServerProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
