"""bench/http_server.py: the loopback server answers Range, ETag and
If-Match as an object store's HTTP interface does, waits its latency with
requests side by side, and its log tells requests and round trips apart."""

from __future__ import annotations

import http.client
import os
import threading
from pathlib import Path

from bench.http_server import LoggedRequest, max_in_flight, round_trip_depth, serve_directory


def _get(base: str, path: str, headers: dict[str, str] | None = None,
         method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def _req(start: float, end: float) -> LoggedRequest:
    return LoggedRequest("GET", "/x", None, start, end, 200)


def test_depth_counts_sequential_round_trips_not_requests() -> None:
    assert round_trip_depth([]) == 0
    # three at once, then two at once after all of them, then one
    log = [_req(0, 1), _req(0.1, 1.2), _req(0.2, 0.9), _req(1.5, 2), _req(1.3, 2.1), _req(2.5, 3)]
    assert round_trip_depth(log) == 3
    assert max_in_flight(log) == 3
    # a chain through a request that started before the others ended
    assert round_trip_depth([_req(0, 1), _req(0.5, 2), _req(1.1, 1.2), _req(2.1, 3)]) == 3
    # an answer ending exactly when another starts: not strictly after, so together
    assert round_trip_depth([_req(0, 1), _req(1, 2)]) == 1
    assert max_in_flight([_req(0, 1), _req(1, 2)]) == 2


def test_ranges_etags_and_if_match(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"0123456789")
    with serve_directory(tmp_path) as (base, server):
        status, headers, body = _get(base, "/f", {"Range": "bytes=-4"})
        assert (status, headers["Content-Range"], body) == (206, "bytes 6-9/10", b"6789")
        etag = headers["ETag"]
        assert etag.startswith('"') and not etag.startswith("W/")
        status, headers, body = _get(base, "/f", {"Range": "bytes=2-4", "If-Match": etag})
        assert (status, body, headers["ETag"]) == (206, b"234", etag)
        status, headers, body = _get(base, "/f", {"Range": "bytes=20-"})
        assert (status, headers["Content-Range"], body) == (416, "bytes */10", b"")
        status, headers, body = _get(base, "/f")
        assert (status, body, headers["ETag"]) == (200, b"0123456789", etag)
        # a rewrite by rename is a new tag; the old one no longer matches
        (tmp_path / "g").write_bytes(b"abcdefghij")
        os.replace(tmp_path / "g", tmp_path / "f")
        status, headers, body = _get(base, "/f", {"Range": "bytes=0-1", "If-Match": etag})
        assert (status, body) == (412, b"") and headers["ETag"] != etag
        status, _, body = _get(base, "/f", {"Range": "bytes=0-1", "If-Match": headers["ETag"]})
        assert (status, body) == (206, b"ab")
        assert _get(base, "/missing")[0] == 404
        assert _get(base, "/f", method="HEAD")[0] == 200
        log = server.log.entries()
        assert [(e.method, e.path, e.range, e.status) for e in log] == [
            ("GET", "/f", "bytes=-4", 206), ("GET", "/f", "bytes=2-4", 206), ("GET", "/f", "bytes=20-", 416),
            ("GET", "/f", None, 200), ("GET", "/f", "bytes=0-1", 412), ("GET", "/f", "bytes=0-1", 206),
            ("GET", "/missing", None, 404), ("HEAD", "/f", None, 200)]
        assert server.log.count("HEAD") == 1 and server.log.count() == 8
        assert server.log.depth() == 8  # one request after another


def test_server_ignoring_ranges_answers_whole_files(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"0123456789")
    with serve_directory(tmp_path, honour_ranges=False) as (base, _):
        status, _, body = _get(base, "/f", {"Range": "bytes=2-4"})
        assert (status, body) == (200, b"0123456789")


def test_latency_is_waited_side_by_side(tmp_path: Path) -> None:
    n = 6
    (tmp_path / "f").write_bytes(b"x")
    with serve_directory(tmp_path, latency=0.2) as (base, server):
        threads = [threading.Thread(target=_get, args=(base, "/f")) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        log = server.log.entries()
        assert len(log) == n and all(e.end - e.start >= 0.2 for e in log)
        assert server.log.max_in_flight() == n and server.log.depth() == 1
        server.log.clear()
        _get(base, "/f")
        _get(base, "/f")
        assert server.log.depth() == 2 and server.log.max_in_flight() == 1
