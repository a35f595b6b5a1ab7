"""A loopback HTTP server for remote-store tests and benchmarks.

It serves a directory on 127.0.0.1 the way an object store's HTTP interface
does, which is what a remote read is judged against: how many requests it
sends and how many *sequential round trips* they take.

- Single ``Range`` headers are honoured (RFC 9110: ``a-b``, ``a-``, ``-n``;
  ``206`` with ``Content-Range: bytes a-b/N``, ``416`` with ``bytes */N``
  when unsatisfiable), unless the server is told to ignore them (then every
  GET answers ``200`` with the whole file).
- Every file answer carries a strong ``ETag`` made from the file's size,
  mtime (ns) and inode, so a rewrite (a new file renamed over) is a new tag;
  ``If-Match`` that names no current tag answers ``412``, with the current
  ``ETag`` and no body (unless the server is told to ignore ``If-Match``).
  File answers carry ``Last-Modified`` too.
- ``latency`` seconds are slept before each answer; the server is threaded,
  so concurrent requests wait side by side, as on a real network.
- Every request is logged (:class:`LoggedRequest`): method, path, Range,
  start and end (``time.monotonic``) and status. :func:`round_trip_depth`
  turns a log into the number of sequential round trips,
  :func:`max_in_flight` into the most requests answered at once.

Use :func:`serve_directory` (a context manager yielding ``(base_url,
server)``; ``server.log`` is the log) in tests, or run this file
(``python bench/http_server.py DIR --latency 0.02``) for a server in its own
process. Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import io
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One request as the server saw it.

    ``start`` is when its headers had been read, ``end`` when its answer was
    ready and began to go out (after the latency): a request sent because of
    this one's answer necessarily starts after ``end``, whatever the threads
    of the process do meanwhile."""

    method: str
    path: str
    range: str | None
    start: float
    end: float
    status: int


class RequestLog:
    """The requests a server answered, in the order they ended (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[LoggedRequest] = []

    def add(self, entry: LoggedRequest) -> None:
        """Record one answered request."""
        with self._lock:
            self._entries.append(entry)

    def entries(self) -> list[LoggedRequest]:
        """A copy of every entry so far."""
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        """Forget every entry (between the phases of a test)."""
        with self._lock:
            self._entries.clear()

    def count(self, method: str | None = None) -> int:
        """How many requests (of ``method`` when given: ``"GET"``, ``"HEAD"``)."""
        return sum(1 for e in self.entries() if method is None or e.method == method)

    def depth(self) -> int:
        """:func:`round_trip_depth` of the log."""
        return round_trip_depth(self.entries())

    def max_in_flight(self) -> int:
        """:func:`max_in_flight` of the log."""
        return max_in_flight(self.entries())


def round_trip_depth(entries: Iterable[LoggedRequest]) -> int:
    """The number of sequential round trips in ``entries``: the longest chain
    of requests each of which started strictly after the one before it
    ended (0 for no request). Requests in flight together count once, so a batch issued
    concurrently is one round trip however many requests it holds."""
    by_start = sorted(entries, key=lambda e: (e.start, e.end))
    by_end = sorted(range(len(by_start)), key=lambda i: by_start[i].end)
    depth = [0] * len(by_start)
    best_before = 0  # the deepest chain among requests that ended before the current start
    j = 0
    for i, entry in enumerate(by_start):
        # A request that ended before this one started also started before it,
        # so it sorts earlier in by_start and its depth is known.
        while j < len(by_end) and by_start[by_end[j]].end < entry.start:
            best_before = max(best_before, depth[by_end[j]])
            j += 1
        depth[i] = best_before + 1
    return max(depth, default=0)


def max_in_flight(entries: Iterable[LoggedRequest]) -> int:
    """The most requests whose ``[start, end]`` overlap at one instant (an
    answer that ends exactly when another request starts overlaps it, as
    :func:`round_trip_depth` counts the two as one round trip)."""
    entries = list(entries)
    events = sorted([(e.start, 0) for e in entries] + [(e.end, 1) for e in entries])
    # At equal times starts (0) sort before ends (1).
    now = most = 0
    for _, is_end in events:
        now += -1 if is_end else 1
        most = max(most, now)
    return most


def etag_of(st: os.stat_result) -> str:
    """The strong ETag of a file's content: its size, mtime (ns) and inode."""
    return f'"{st.st_size:x}-{st.st_mtime_ns:x}-{st.st_ino:x}"'


def _matches(if_match: str, etag: str) -> bool:
    """Whether an ``If-Match`` header holds for ``etag`` (strong comparison)."""
    tags = [t.strip() for t in if_match.split(",")]
    return "*" in tags or etag in tags


class LoopbackServer(http.server.ThreadingHTTPServer):
    """A threaded HTTP server over one directory, with its settings and log.

    ``latency`` (seconds before each answer), ``honour_ranges`` and
    ``honour_if_match`` (False: a server that ignores ``If-Match``, as some
    do) may be changed while it runs."""

    daemon_threads = True
    request_queue_size = 256

    def __init__(self, directory: str | os.PathLike[str], *, latency: float = 0.0,
                 honour_ranges: bool = True, honour_if_match: bool = True, port: int = 0) -> None:
        self.directory = str(directory)
        self.latency = latency
        self.extra_delay: Callable[[str, str | None], float] | None = None
        """Seconds more to wait before answering ``(path, Range header)``
        (None: none); set it to make some requests slower than others."""
        self.honour_ranges = honour_ranges
        self.honour_if_match = honour_if_match
        self.log = RequestLog()
        super().__init__(("127.0.0.1", port), functools.partial(RangeHandler, directory=self.directory))

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, without a trailing slash."""
        return f"http://127.0.0.1:{self.server_address[1]}"


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Files with ``Range``, ``ETag`` and ``If-Match``; directories as
    :class:`http.server.SimpleHTTPRequestHandler` lists them. Keeps
    connections alive (HTTP/1.1), as object-store clients expect."""

    server: LoopbackServer
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: the body, written after the headers, must not wait for the
    # client's delayed ACK (40 ms on Linux) before it goes out.
    disable_nagle_algorithm = True
    timeout = 30  # an idle kept-alive connection closes (its thread ends)
    # Headers and body go out in separate writes: without TCP_NODELAY the
    # body waits for the client's delayed ACK (~40 ms) on a kept-alive connection.
    disable_nagle_algorithm = True
    _start: float = 0.0
    _status: int = 0
    _logged: bool = True  # nothing to log outside a GET or HEAD
    _modified: str = ""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def send_response(self, code: int, message: str | None = None) -> None:
        self._status = int(code)
        super().send_response(code, message)

    def end_headers(self) -> None:
        # Logged before the answer goes out, so the entry is there by the
        # time the client has the answer.
        self._log()
        super().end_headers()

    def _log(self) -> None:
        if not self._logged:
            self._logged = True
            self.server.log.add(LoggedRequest(self.command, self.path, self.headers.get("Range"),
                                              self._start, time.monotonic(), self._status))

    def _answer(self, body: bool) -> None:
        """Wait the latency, answer, and log the request."""
        self._start = time.monotonic()
        self._status, self._logged = 0, False
        try:
            delay = self.server.latency
            if self.server.extra_delay is not None:
                delay += self.server.extra_delay(self.path, self.headers.get("Range"))
            if delay > 0:
                time.sleep(delay)
            f = self.send_head()
            if f is not None:
                try:
                    if body:
                        self.copyfile(f, self.wfile)
                finally:
                    f.close()
        finally:
            self._log()  # an answer that failed before its headers

    def send_head(self) -> BinaryIO | None:  # type: ignore[override]
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            return super().send_head()  # type: ignore[return-value]
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                data = f.read()
        except OSError:
            self.send_error(404, "File not found")
            return None
        etag = etag_of(st)
        self._modified = self.date_time_string(st.st_mtime)
        if_match = self.headers.get("If-Match")
        if if_match is not None and self.server.honour_if_match and not _matches(if_match, etag):
            self._empty(412, {"ETag": etag})
            return None
        size = len(data)
        rng = self.headers.get("Range")
        if rng is None or not self.server.honour_ranges:
            return self._file(200, data, {"ETag": etag})
        m = _RANGE.fullmatch(rng.strip())
        if m is None or m[1] == m[2] == "":
            self.send_error(400, "bad Range")
            return None
        if m[1]:
            start = int(m[1])
            end = min(int(m[2]), size - 1) if m[2] else size - 1
        else:
            start, end = max(0, size - int(m[2])), size - 1
            if int(m[2]) == 0:
                start = size  # unsatisfiable
        if start >= size or end < start:
            self._empty(416, {"Content-Range": f"bytes */{size}", "ETag": etag})
            return None
        return self._file(206, data[start : end + 1],
                          {"Content-Range": f"bytes {start}-{end}/{size}", "ETag": etag})

    def _file(self, status: int, data: bytes, headers: dict[str, str]) -> BinaryIO:
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Last-Modified", self._modified)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        return io.BytesIO(data)

    def _empty(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()


@contextlib.contextmanager
def serve_directory(directory: str | os.PathLike[str], *, latency: float = 0.0, honour_ranges: bool = True,
                    honour_if_match: bool = True) -> Iterator[tuple[str, LoopbackServer]]:
    """Serve ``directory`` on 127.0.0.1 on a free port for the ``with`` block:
    yields ``(base_url, server)``; ``server.log`` records every request.
    The server is shut down and its socket closed on exit."""
    server = LoopbackServer(directory, latency=latency, honour_ranges=honour_ranges,
                            honour_if_match=honour_if_match)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="loopback-http", daemon=True)
    thread.start()
    try:
        yield server.base_url, server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def main(argv: list[str] | None = None) -> None:
    """Serve a directory until interrupted (or for ``--seconds``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds slept before each answer")
    parser.add_argument("--ignore-ranges", action="store_true", help="answer every GET with the whole file")
    parser.add_argument("--seconds", type=float, default=None, help="stop after this long (default: never)")
    args = parser.parse_args(argv)
    with serve_directory(args.directory, latency=args.latency, honour_ranges=not args.ignore_ranges) as (url, _):
        print(url, flush=True)
        stop = threading.Event()
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait(args.seconds)


__all__ = ["LoggedRequest", "LoopbackServer", "RangeHandler", "RequestLog", "etag_of", "max_in_flight",
           "round_trip_depth", "serve_directory"]

if __name__ == "__main__":
    main()
