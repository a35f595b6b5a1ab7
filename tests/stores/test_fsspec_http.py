"""FsspecStore reading over HTTP from a real server on 127.0.0.1.

The server is :mod:`bench.http_server` serving a temporary directory: it
honours single ``Range`` headers (RFC 9110: ``a-b``, ``a-``, ``-n``; 416 when
unsatisfiable) and logs every request. A second server ignores ``Range`` to
check that the store still returns the right bytes when a server answers
with the whole file.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Iterator

import pytest

aiohttp = pytest.importorskip("aiohttp")

from bench.http_server import RequestLog, serve_directory  # noqa: E402

from zarrpy.core.byte_range import ByteRequest, RangeRequest, SuffixRequest  # noqa: E402
from zarrpy.errors import ReadOnlyError  # noqa: E402
from zarrpy.stores import FsspecStore, store_from_url  # noqa: E402

from .contract import EMPTY_VALUE_REQUESTS, RANGE_CASES, VALUE, _ids  # noqa: E402


def _serve(directory: Path, honour_ranges: bool) -> Iterator[tuple[str, RequestLog]]:
    with serve_directory(directory, honour_ranges=honour_ranges) as (base, server):
        yield base, server.log


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("http-site")
    (root / "x.zarr" / "c" / "0").mkdir(parents=True)
    (root / "x.zarr" / "zarr.json").write_bytes(b'{"zarr_format": 3}')
    (root / "x.zarr" / "c" / "0" / "0").write_bytes(VALUE)
    (root / "x.zarr" / "empty").write_bytes(b"")
    return root


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[tuple[str, RequestLog]]:
    yield from _serve(site, honour_ranges=True)


@pytest.fixture(scope="module")
def plain_server(site: Path) -> Iterator[tuple[str, RequestLog]]:
    yield from _serve(site, honour_ranges=False)


@pytest.fixture
def store(server: tuple[str, RequestLog]) -> FsspecStore:
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
    store: FsspecStore, server: tuple[str, RequestLog]
) -> None:
    _, log = server
    log.clear()
    assert store.get("c/0/0", RangeRequest(2, 5)) == b"234"
    assert store.get("c/0/0", SuffixRequest(4)) == b"6789"
    assert [(e.method, e.range, e.status) for e in log.entries()] == [("GET", "bytes=2-4", 206), ("GET", "bytes=-4", 206)]


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
    plain_server: tuple[str, RequestLog], request_: ByteRequest, expected: bytes
) -> None:
    base, _ = plain_server
    store = store_from_url(f"{base}/x.zarr", read_only=True)
    assert store.get("c/0/0", request_) == expected
    assert store.get_partial_values([("c/0/0", request_)]) == [expected]
