"""A shard read in part whose inner chunks come in several ranges decodes
each range's inner chunks as that range's answer arrives (over a real HTTP
server with latency), not once all of them are in.

The array's inner chunks are incompressible and 32 KiB each, so inner chunks
one column apart in a shard lie more than the merge gap (64 KiB) apart: a
window one inner chunk wide takes one range per inner chunk. Each read is
checked against numpy, with the decodes counted; a shard that changes
between its ranges (one range answered from the old shard, the next refused
with 412) is read again from its new index and the result is the new data
throughout: no decode of the old shard writes after the new one.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

pytest.importorskip("aiohttp")

from bench.http_server import LoggedRequest, LoopbackServer, serve_directory  # noqa: E402

import zarrpy  # noqa: E402
from zarrpy.codecs.sharding.partial import ShardPartialDecoder  # noqa: E402

LATENCY_S = 0.03
SHAPE, SHARD, INNER = (1024, 1024), (512, 512), (128, 128)
WINDOW = (slice(10, 500), slice(400, 600))  # inner column 3 of shard c/0/0, column 0 of c/0/1: 4 ranges each
ZSTD = {"name": "zstd", "configuration": {"level": 1}}


def _data(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 65535, SHAPE, dtype=np.uint16)


def _write(path: Path, data: np.ndarray) -> None:
    a = zarrpy.create_array(str(path), shape=SHAPE, dtype="uint16", chunks=INNER, shards=SHARD, compressors=[ZSTD])
    a[...] = data


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, np.ndarray, LoopbackServer]]:
    data = _data(0)
    _write(tmp_path / "s.zarr", data)
    with serve_directory(tmp_path, latency=LATENCY_S) as (base, server):
        yield f"{base}/s.zarr", tmp_path / "s.zarr", data, server


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[frozenset[int]]:
    """The inner chunks of each per-range decode, in the order they ran."""
    seen: list[frozenset[int]] = []
    lock = threading.Lock()
    original = ShardPartialDecoder.decode_parts_into

    def spy(self, selections, dests, parts):  # type: ignore[no-untyped-def]
        with lock:
            seen.append(parts)
        return original(self, selections, dests, parts)

    monkeypatch.setattr(ShardPartialDecoder, "decode_parts_into", spy)
    return seen


def _ranges(server: LoopbackServer, key: str) -> list[LoggedRequest]:
    return [e for e in server.log.entries()
            if e.path.endswith("/s.zarr/" + key) and e.range is not None and not e.range.startswith("bytes=-")]


def test_each_range_of_a_shard_decodes_on_its_own(served, decodes) -> None:
    url, _, data, server = served
    got = zarrpy.open_array(url, mode="r")[WINDOW]
    np.testing.assert_array_equal(got, data[WINDOW])
    for key in ("c/0/0", "c/0/1"):
        assert len(_ranges(server, key)) == 4  # one per inner chunk: too far apart to merge
    assert server.log.count() == 1 + 2 + 8 and server.log.depth() == 3  # open, the indexes, the ranges
    assert len(decodes) == 8  # each range's decode on its own
    assert sorted(len(parts) for parts in decodes) == [1] * 8
    # shard c/0/0's inner chunks (r, 3) and c/0/1's (r, 0), one per decode
    assert sorted(next(iter(p)) for p in decodes) == sorted([r * 4 + 3 for r in range(4)] + [r * 4 for r in range(4)])


def test_inner_chunks_stored_nowhere_fill_once(tmp_path: Path, decodes) -> None:
    """Inner chunks of the fill value are not stored: they are written with
    the first range's inner chunks, and read as the fill value."""
    data = _data(1)
    data[128:256, 384:512] = 0  # inner chunk (1, 3) of c/0/0: all fill, not stored
    _write(tmp_path / "s.zarr", data)
    with serve_directory(tmp_path, latency=LATENCY_S) as (base, server):
        got = zarrpy.open_array(f"{base}/s.zarr", mode="r")[WINDOW]
        np.testing.assert_array_equal(got, data[WINDOW])
        assert len(_ranges(server, "c/0/0")) == 3
    for_c00 = [p for p in decodes if p & {3, 7, 11, 15}]
    assert sorted(map(sorted, for_c00)) == [[3, 7], [11], [15]]  # the unstored (1, 3) = 7 rides with the first range


@pytest.mark.parametrize("slow_old_decodes", [False, True], ids=["prompt", "slow-old-decodes"])
def test_a_shard_changing_between_its_ranges_is_read_anew_throughout(served, tmp_path: Path, decodes,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     slow_old_decodes: bool) -> None:
    """Shard c/0/1's first range is answered from the old shard; the second
    waits until then and swaps the file before its answer (412): the shard is
    planned again and read anew, and no old range's decode writes after
    that: every element is the new data. With slow old decodes, the old
    range's decode is still running when the change is found: the new read
    waits for it rather than being overwritten by it."""
    url, local, data, server = served
    if slow_old_decodes:
        spied = ShardPartialDecoder.decode_parts_into

        def slow(self, selections, dests, parts):  # type: ignore[no-untyped-def]
            if parts <= {0, 4, 8, 12}:  # c/0/1's inner chunks: only the old shard decodes range by range
                time.sleep(0.4)
            return spied(self, selections, dests, parts)

        monkeypatch.setattr(ShardPartialDecoder, "decode_parts_into", slow)
    new = data.copy()
    new[:512, 512:] = _data(2)[:512, 512:]
    _write(tmp_path / "new.zarr", new)
    replacement = (tmp_path / "new.zarr" / "c" / "0" / "1").read_bytes()
    seen: list[str] = []
    lock = threading.Lock()

    def swap_on_second_range(path: str, rng: str | None) -> float:
        if not (path.endswith("/s.zarr/c/0/1") and rng is not None and not rng.startswith("bytes=-")):
            return 0.0
        with lock:
            seen.append(rng)
            second = len(seen) == 2
        if second:
            time.sleep(LATENCY_S + 0.1)  # the first range was answered meanwhile, from the old shard
            tmp = local / "c" / "0" / "1.new"
            tmp.write_bytes(replacement)
            os.replace(tmp, local / "c" / "0" / "1")
        return 0.0

    server.extra_delay = swap_on_second_range
    got = zarrpy.open_array(url, mode="r")[WINDOW]
    np.testing.assert_array_equal(got, new[WINDOW])
    statuses = sorted(e.status for e in _ranges(server, "c/0/1"))
    assert 412 in statuses and statuses.count(206) >= 4 + 1  # a refused range; old ranges, then the new read's
    assert any(p <= {0, 4, 8, 12} for p in decodes)  # an old range was decoded on its own
