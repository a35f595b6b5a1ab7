"""FsspecStore reading over HTTP from a real server on 127.0.0.1.

The server is ``http.server`` serving a temporary directory, extended to
honour single ``Range`` headers (RFC 9110: ``a-b``, ``a-``, ``-n``; 416 when
unsatisfiable). A second server ignores ``Range`` to check that the store
still returns the right bytes when a server answers with the whole file.
"""

from __future__ import annotations

import functools
import http.server
import io
import os
import pickle
import re
import threading
from pathlib import Path
from typing import Iterator

import pytest

aiohttp = pytest.importorskip("aiohttp")

from zarrpy.core.byte_range import ByteRequest, RangeRequest, SuffixRequest  # noqa: E402
from zarrpy.errors import ReadOnlyError  # noqa: E402
from zarrpy.stores import FsspecStore, store_from_url  # noqa: E402

from .contract import EMPTY_VALUE_REQUESTS, RANGE_CASES, VALUE, _ids  # noqa: E402


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    honour_ranges = True
    seen_ranges: list[str | None]  # set per server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send_head(self):  # type: ignore[no-untyped-def]
        rng = self.headers.get("Range")
        if self.command == "GET":
            self.seen_ranges.append(rng)
        path = self.translate_path(self.path)
        if rng is None or not self.honour_ranges or not os.path.isfile(path):
            return super().send_head()
        size = os.path.getsize(path)
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
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
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read(end - start + 1)
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        return io.BytesIO(data)


class IgnoreRangeHandler(RangeHandler):
    honour_ranges = False


def _serve(directory: Path, handler: type[RangeHandler]) -> Iterator[tuple[str, list[str | None]]]:
    seen: list[str | None] = []
    cls = type("Handler", (handler,), {"seen_ranges": seen})
    server_cls = type("Server", (http.server.ThreadingHTTPServer,), {"request_queue_size": 128})
    server = server_cls(("127.0.0.1", 0), functools.partial(cls, directory=str(directory)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("http-site")
    (root / "x.zarr" / "c" / "0").mkdir(parents=True)
    (root / "x.zarr" / "zarr.json").write_bytes(b'{"zarr_format": 3}')
    (root / "x.zarr" / "c" / "0" / "0").write_bytes(VALUE)
    (root / "x.zarr" / "empty").write_bytes(b"")
    return root


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[tuple[str, list[str | None]]]:
    yield from _serve(site, RangeHandler)


@pytest.fixture(scope="module")
def plain_server(site: Path) -> Iterator[tuple[str, list[str | None]]]:
    yield from _serve(site, IgnoreRangeHandler)


@pytest.fixture
def store(server: tuple[str, list[str | None]]) -> FsspecStore:
    base, _ = server
    # Short timeouts: everything is on loopback.
    options = {"client_kwargs": {"timeout": aiohttp.ClientTimeout(total=10)}}
    store = store_from_url(f"{base}/x.zarr", storage_options=options, read_only=True)
    assert isinstance(store, FsspecStore)
    return store


def test_reads_whole_values_and_missing_keys(store: FsspecStore) -> None:
    assert store.get("zarr.json") == b'{"zarr_format": 3}'
    assert store.get("c/0/0") == VALUE
    assert store.get("c/0/1") is None
    assert store.get("nope/zarr.json") is None
    assert store.get("empty") == b""


@pytest.mark.parametrize(("request_", "expected"), RANGE_CASES, ids=_ids(RANGE_CASES))
def test_byte_ranges(store: FsspecStore, request_: ByteRequest | None, expected: bytes) -> None:
    assert store.get("c/0/0", request_) == expected
    assert store.get("c/0/9", request_) is None


@pytest.mark.parametrize("request_", EMPTY_VALUE_REQUESTS, ids=_ids(EMPTY_VALUE_REQUESTS))
def test_ranges_of_empty_value(store: FsspecStore, request_: ByteRequest | None) -> None:
    assert store.get("empty", request_) == b""


def test_ranges_are_sent_as_range_headers(
    store: FsspecStore, server: tuple[str, list[str | None]]
) -> None:
    _, seen = server
    seen.clear()
    assert store.get("c/0/0", RangeRequest(2, 5)) == b"234"
    assert store.get("c/0/0", SuffixRequest(4)) == b"6789"
    assert seen == ["bytes=2-4", "bytes=-4"]


def test_get_partial_values(store: FsspecStore) -> None:
    requests = [(key, req) for req, _ in RANGE_CASES for key in ("c/0/0", "c/9/9")]
    expected = [exp for _, exp in RANGE_CASES for exp in (exp, None)]
    assert store.get_partial_values(requests) == expected


def test_is_read_only(store: FsspecStore) -> None:
    with pytest.raises(ReadOnlyError):
        store.set("c/0/0", b"x")
    with pytest.raises(ReadOnlyError):
        store.delete("c/0/0")
    assert store.get("c/0/0") == VALUE


def test_pickle_reopens_by_url(store: FsspecStore) -> None:
    clone = pickle.loads(pickle.dumps(store))
    assert clone == store and clone.read_only
    assert clone.get("c/0/0", SuffixRequest(3)) == b"789"


# A whole-file answer is recognisable only when it is longer than the request
# could be; for a range past the end (e.g. [8, 20) of 10 bytes) or an offset
# request it is not, and fsspec's HTTP filesystem does not expose the status
# code. Those cases are a known limit, not tested here.
_RECOGNISABLE = [
    (r, e)
    for r, e in RANGE_CASES
    if (isinstance(r, RangeRequest) and r.end - r.start < len(VALUE)) or isinstance(r, SuffixRequest)
]


@pytest.mark.parametrize(("request_", "expected"), _RECOGNISABLE, ids=_ids(_RECOGNISABLE))
def test_server_that_ignores_range(
    plain_server: tuple[str, list[str | None]], request_: ByteRequest, expected: bytes
) -> None:
    base, _ = plain_server
    store = store_from_url(f"{base}/x.zarr", read_only=True)
    assert store.get("c/0/0", request_) == expected
    assert store.get_partial_values([("c/0/0", request_)]) == [expected]
