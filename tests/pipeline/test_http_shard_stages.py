"""The stages of a sharded read over a real HTTP server with latency.

The server (:mod:`bench.http_server` on 127.0.0.1) waits before every
answer and logs when each request arrived and when its answer was ready.
A region over four shards, one of them wanted whole, must be the open,
one stage of indexes (with the whole shard) and one stage of inner-chunk
ranges; each shard's ranges are asked only after its own index came back,
and all of stage 2 is in flight together: every range request reaches the
server before the first of them is answered, so the decoding of the whole
shard, which runs meanwhile, holds none of them back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

pytest.importorskip("aiohttp")

from bench.http_server import LoggedRequest, serve_directory  # noqa: E402

import zarrpy  # noqa: E402

LATENCY_S = 0.05
SHAPE, SHARD, INNER = (256, 256), (128, 128), (32, 32)
REGION = (slice(10, 170), slice(7, 180))  # shard c/0/0 wanted whole, the three others in part


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, np.ndarray, object]]:
    root = tmp_path_factory.mktemp("http-shards")
    data = np.random.default_rng(0).integers(0, 4000, SHAPE, dtype=np.uint16)
    a = zarrpy.create_array(str(root / "s.zarr"), shape=SHAPE, dtype="uint16", chunks=INNER, shards=SHARD,
                            compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    a[...] = data
    with serve_directory(root, latency=LATENCY_S) as (base, server):
        yield f"{base}/s.zarr", data, server


def _reads(server: object, key: str) -> list[LoggedRequest]:
    return [e for e in server.log.entries() if e.path.endswith("/" + key)]  # type: ignore[attr-defined]


def test_a_sharded_region_is_the_open_and_two_stages_with_stage_two_in_flight_together(served) -> None:
    url, data, server = served
    server.log.clear()
    got = zarrpy.open_array(url, mode="r")[REGION]
    np.testing.assert_array_equal(got, data[REGION])
    entries = server.log.entries()
    assert server.log.depth() == 3  # zarr.json; indexes + the whole shard; inner chunks
    assert all(e.method == "GET" for e in entries)  # no HEAD for a length
    whole = _reads(server, "c/0/0")
    assert [e.range for e in whole] == [None]
    stage_two: list[LoggedRequest] = []
    for key in ("c/0/1", "c/1/0", "c/1/1"):
        index, *ranges = sorted(_reads(server, key), key=lambda e: e.start)
        assert index.range is not None and index.range.startswith("bytes=-")
        assert ranges, f"no inner chunk read of {key}"
        assert all(r.start >= index.end for r in ranges)  # after its own index
        stage_two.extend(ranges)
    assert max(e.start for e in stage_two) < min(e.end for e in stage_two)
    # requests: zarr.json, the whole shard, three indexes, the ranges; none twice
    assert len(entries) == 5 + len(stage_two)
    assert len({(e.path, e.range) for e in entries}) == len(entries)


def test_a_repeated_region_reuses_the_indexes_and_is_one_stage(served) -> None:
    url, data, server = served
    a = zarrpy.open_array(url, mode="r")
    sel = (slice(140, 200), slice(10, 60))  # in shard c/1/0 only
    np.testing.assert_array_equal(a[sel], data[sel])
    server.log.clear()
    np.testing.assert_array_equal(a[sel], data[sel])
    entries = server.log.entries()
    assert server.log.depth() == 1
    assert all(e.range is not None and not e.range.startswith("bytes=-") for e in entries)


def test_each_shard_asks_for_its_inner_chunks_as_soon_as_its_own_index_is_in(served) -> None:
    """One index answers late: the other shards' inner chunks are asked
    (and answered) meanwhile, not after every index (tensorstore's pipelining)."""
    url, data, server = served
    slow_s = 0.3
    server.extra_delay = lambda path, rng: slow_s if path.endswith("/c/1/1") and rng == "bytes=-260" else 0.0
    try:
        server.log.clear()
        got = zarrpy.open_array(url, mode="r")[REGION]
    finally:
        server.extra_delay = None
    np.testing.assert_array_equal(got, data[REGION])
    slow_index = next(e for e in _reads(server, "c/1/1") if e.range == "bytes=-260")
    for key in ("c/0/1", "c/1/0"):
        ranges = [e for e in _reads(server, key) if not e.range.startswith("bytes=-")]  # type: ignore[union-attr]
        assert ranges and all(r.end < slow_index.end for r in ranges), key
    slow_ranges = [e for e in _reads(server, "c/1/1") if e is not slow_index]
    assert len(server.log.entries()) == 5 + sum(len(_reads(server, k)) - 1 for k in ("c/0/1", "c/1/0", "c/1/1"))
    assert slow_ranges and all(r.start >= slow_index.end for r in slow_ranges)
