"""Sharded reads over a real HTTP server, driven by the store's answers.

On a store that sends a batch at once (fsspec's HTTP filesystem here) a
read that takes some shards in part is :meth:`ShardReads.read_answered`:
stage 1 is one batch of every missing shard index (a suffix read) with the
whole values of the shards read whole; each index is checked, and its
shard's inner-chunk ranges sent, on the store's event loop as soon as it is
in; every decode is work on an AnswerDrain run by the reading thread, which
raises any error. The server (:mod:`bench.http_server` on 127.0.0.1) waits
before each answer and logs every request, so the round trips, and that no
request is sent twice, can be counted. Each read is checked against numpy:
kept indexes on a repeated read, a shard rewritten between reads (the kept
index is stale: 412, planned again) or between its index and its ranges,
missing or deleted shards (fill), corrupt indexes and inner chunks (an error naming the
shard's key), a failed request, and variable-length strings.
"""

from __future__ import annotations

import functools
import os
import struct
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest

pytest.importorskip("aiohttp")

import google_crc32c  # noqa: E402

from bench.http_server import LoggedRequest, LoopbackServer, serve_directory  # noqa: E402
from tests.stores.failing_http import FailingHandler  # noqa: E402

import zarrpy  # noqa: E402
from zarrpy.errors import ChunkDecodeError, StoreError, ZarrpyError  # noqa: E402
from zarrpy.pipeline import shard_reads  # noqa: E402

LATENCY_S = 0.03
SHAPE, SHARD, INNER = (256, 256), (128, 128), (32, 32)
INNER_PER_SHARD = 16  # 4 x 4
INDEX_NBYTES = INNER_PER_SHARD * 16 + 4  # (offset, nbytes) as two uint64 each, then a crc32c
REGION = (slice(10, 170), slice(7, 180))  # shard c/0/0 wanted whole, the three others in part
IN_PART = ("c/0/1", "c/1/0", "c/1/1")
FILL = 7
ZSTD = {"name": "zstd", "configuration": {"level": 1}}


def _data(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 4000, SHAPE, dtype=np.uint16)


def _write(path: Path, data: np.ndarray | None) -> None:
    a = zarrpy.create_array(str(path), shape=SHAPE, dtype="uint16", chunks=INNER, shards=SHARD,
                            compressors=[ZSTD], fill_value=FILL)
    if data is not None:
        a[...] = data


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, np.ndarray, LoopbackServer]]:
    """The array ``s.zarr`` written locally and served with latency: its
    URL, its local directory, its data, the server."""
    data = _data()
    _write(tmp_path / "s.zarr", data)
    with serve_directory(tmp_path, latency=LATENCY_S) as (base, server):
        server.RequestHandlerClass = functools.partial(FailingHandler, directory=server.directory)
        yield f"{base}/s.zarr", tmp_path / "s.zarr", data, server


def _key(entry: LoggedRequest) -> str:
    return entry.path.split(".zarr/", 1)[1]


def _reads(server: LoopbackServer, key: str) -> list[LoggedRequest]:
    return sorted((e for e in server.log.entries() if _key(e) == key), key=lambda e: e.start)


def _is_suffix(entry: LoggedRequest) -> bool:
    return entry.range is not None and entry.range.startswith("bytes=-")


def _replace(path: Path, content: bytes) -> None:
    """``content`` renamed over ``path`` (a new inode: a new ETag)."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(content)
    os.replace(tmp, path)


def _index(path: Path) -> tuple[bytes, np.ndarray]:
    """A shard file's chunks and its index ((offset, nbytes) per inner chunk)."""
    raw = path.read_bytes()
    entries = np.frombuffer(raw[-INDEX_NBYTES:-4], dtype="<u8").reshape(INNER_PER_SHARD, 2).copy()
    return raw[:-INDEX_NBYTES], entries


def _with_index(chunks: bytes, entries: np.ndarray) -> bytes:
    """A shard file of ``chunks`` and the index ``entries``, its checksum right."""
    raw = entries.astype("<u8").tobytes()
    return chunks + raw + struct.pack("<I", google_crc32c.value(raw))


def test_a_region_over_four_shards_is_the_open_and_two_round_trips(served) -> None:
    url, _, data, server = served
    got = zarrpy.open_array(url, mode="r")[REGION]
    np.testing.assert_array_equal(got, data[REGION])
    entries = server.log.entries()
    assert server.log.depth() == 3  # zarr.json; the indexes with the whole shard; the inner chunks
    assert all(e.method == "GET" and e.status in (200, 206) for e in entries)
    assert len({(e.path, e.range) for e in entries}) == len(entries)  # no request sent twice
    [whole] = _reads(server, "c/0/0")
    assert whole.range is None
    indexes = []
    for key in IN_PART:
        index, *ranges = _reads(server, key)
        assert _is_suffix(index) and ranges, key
        assert all(r.start >= index.end and not _is_suffix(r) for r in ranges), key  # after its own index
        indexes.append(index)
    stage_one = [whole, *indexes]
    assert max(e.start for e in stage_one) < min(e.end for e in stage_one)  # one batch, all in flight together
    assert len(entries) == 1 + len(stage_one) + sum(len(_reads(server, k)) - 1 for k in IN_PART)


def test_a_repeated_region_reuses_the_kept_indexes(served) -> None:
    url, _, data, server = served
    a = zarrpy.open_array(url, mode="r")
    np.testing.assert_array_equal(a[REGION], data[REGION])
    first = {key: [e.range for e in _reads(server, key) if not _is_suffix(e)] for key in IN_PART}
    server.log.clear()
    np.testing.assert_array_equal(a[REGION], data[REGION])
    entries = server.log.entries()
    assert not any(_is_suffix(e) for e in entries)  # no index asked again
    assert server.log.depth() == 1  # the ranges (on the kept indexes) beside the whole shard
    assert [e.range for e in _reads(server, "c/0/0")] == [None]
    for key in IN_PART:
        assert [e.range for e in _reads(server, key)] == first[key]  # the same ranges, once each
        assert all(e.status == 206 for e in _reads(server, key))


def test_a_shard_rewritten_between_reads_on_one_handle_is_read_anew(served) -> None:
    """Another handle rewrites shard c/1/1 after the first read: its kept
    index is stale, the server answers 412 to the ranges asked under it,
    and the read plans the shard again: the new data, not the old."""
    url, local, data, server = served
    a = zarrpy.open_array(url, mode="r")
    np.testing.assert_array_equal(a[REGION], data[REGION])
    new = data.copy()
    new[128:, 128:] = _data(seed=1)[128:, 128:]
    zarrpy.open_array(str(local), mode="r+")[128:, 128:] = new[128:, 128:]
    server.log.clear()
    got = a[REGION]
    np.testing.assert_array_equal(got, new[REGION])
    assert not np.array_equal(got, data[REGION])
    stale, index, *ranges = _reads(server, "c/1/1")
    assert stale.status == 412 and not _is_suffix(stale)  # the ranges of the kept index, refused
    assert _is_suffix(index) and index.start >= stale.end  # then a new index
    assert ranges and all(r.status == 206 and r.start >= index.end for r in ranges)
    for key in ("c/0/1", "c/1/0"):  # unchanged: their kept indexes still hold
        assert all(e.status == 206 and not _is_suffix(e) for e in _reads(server, key))
    np.testing.assert_array_equal(a[REGION], new[REGION])  # and again, on the new kept index


def test_a_shard_rewritten_between_its_index_and_its_ranges_is_planned_again(served, tmp_path: Path) -> None:
    """The shard changes on the server the moment its first inner-chunk
    range arrives (before the server reads the file): the range is refused
    (412), the shard is planned again from a new index."""
    url, local, data, server = served
    new = data.copy()
    new[128:, 128:] = _data(seed=2)[128:, 128:]
    _write(tmp_path / "new.zarr", new)
    replacement = (tmp_path / "new.zarr" / "c" / "1" / "1").read_bytes()
    swapped: list[str] = []

    def swap_on_first_range(path: str, rng: str | None) -> float:
        if path.endswith("/s.zarr/c/1/1") and rng is not None and not rng.startswith("bytes=-") and not swapped:
            swapped.append(rng)
            _replace(local / "c" / "1" / "1", replacement)
        return 0.0

    server.extra_delay = swap_on_first_range
    got = zarrpy.open_array(url, mode="r")[REGION]
    np.testing.assert_array_equal(got, new[REGION])
    assert len(swapped) == 1
    statuses = [(_is_suffix(e), e.status) for e in _reads(server, "c/1/1")]
    assert statuses[:3] == [(True, 206), (False, 412), (True, 206)]  # index, refused range, new index
    assert statuses[3:] and all(s == (False, 206) for s in statuses[3:])


def test_a_shard_that_changes_under_every_read_gives_up_naming_it(served) -> None:
    url, local, _, server = served
    shard = local / "c" / "1" / "1"
    content = shard.read_bytes()
    ranges: list[str] = []

    def rewrite_on_every_range(path: str, rng: str | None) -> float:
        if path.endswith("/s.zarr/c/1/1") and rng is not None and not rng.startswith("bytes=-"):
            ranges.append(rng)
            _replace(shard, content)  # the same bytes, a new file: a new ETag
        return 0.0

    server.extra_delay = rewrite_on_every_range
    t = time.monotonic()
    with pytest.raises(StoreError, match=r"c/1/1.*changed during each of"):
        zarrpy.open_array(url, mode="r")[REGION]
    assert time.monotonic() - t < 10
    assert len(ranges) == shard_reads.MAX_ATTEMPTS


def test_missing_shards_in_the_region_read_as_fill(tmp_path: Path) -> None:
    """Only shard c/0/1 is written: c/0/0 (wanted whole) and c/1/0, c/1/1
    (wanted in part) are missing, and read as the fill value."""
    data = _data()
    _write(tmp_path / "m.zarr", None)
    zarrpy.open_array(str(tmp_path / "m.zarr"), mode="r+")[:128, 128:] = data[:128, 128:]
    expected = np.full(SHAPE, FILL, dtype=np.uint16)
    expected[:128, 128:] = data[:128, 128:]
    assert sorted(str(p.relative_to(tmp_path / "m.zarr")) for p in (tmp_path / "m.zarr" / "c").rglob("*")
                  if p.is_file()) == [os.path.join("c", "0", "1")]
    with serve_directory(tmp_path, latency=LATENCY_S) as (base, server):
        a = zarrpy.open_array(f"{base}/m.zarr", mode="r")
        np.testing.assert_array_equal(a[REGION], expected[REGION])
        assert [(e.range, e.status) for e in _reads(server, "c/0/0")] == [(None, 404)]
        for key in ("c/1/0", "c/1/1"):
            [index] = _reads(server, key)  # the index only: nothing else to ask of a missing shard
            assert _is_suffix(index) and index.status == 404
        assert server.log.depth() == 3  # zarr.json; stage 1; the ranges of c/0/1
        server.log.clear()
        np.testing.assert_array_equal(a[REGION], expected[REGION])  # nothing kept of a missing shard: asked again
        assert [e.status for e in _reads(server, "c/1/0")] == [404]


def test_a_shard_deleted_between_reads_on_one_handle_reads_as_fill(served) -> None:
    url, local, data, server = served
    a = zarrpy.open_array(url, mode="r")
    np.testing.assert_array_equal(a[REGION], data[REGION])
    (local / "c" / "1" / "0").unlink()
    expected = data.copy()
    expected[128:, :128] = FILL
    server.log.clear()
    np.testing.assert_array_equal(a[REGION], expected[REGION])
    stale, index = _reads(server, "c/1/0")  # the ranges of the kept index; then the index, to plan again
    assert stale.status == 404 and not _is_suffix(stale)
    assert _is_suffix(index) and index.status == 404


def _garbage_index(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[-20:] = b"\xab" * 20
    path.write_bytes(bytes(raw))


def _index_past_the_end(path: Path) -> None:
    chunks, entries = _index(path)
    entries[5, 0] = path.stat().st_size + 1000  # inner chunk (1, 1), in the region, past the shard's end
    path.write_bytes(_with_index(chunks, entries))


@pytest.mark.parametrize("corrupt", [_garbage_index, _index_past_the_end], ids=["garbage", "past-the-end"])
@pytest.mark.parametrize("key", ["c/0/1", "c/1/1"])
def test_a_corrupt_shard_index_fails_the_read_naming_the_shard(served, corrupt: Callable[[Path], None],
                                                                key: str) -> None:
    url, local, data, server = served
    corrupt(local.joinpath(*key.split("/")))
    a = zarrpy.open_array(url, mode="r")
    t = time.monotonic()
    with pytest.raises(ZarrpyError) as caught:
        a[REGION]
    assert time.monotonic() - t < 10
    assert isinstance(caught.value, ChunkDecodeError)
    assert repr(key) in str(caught.value)
    assert all(k not in str(caught.value) for k in ("c/0/0", *IN_PART) if k != key)
    other = (slice(0, 100), slice(0, 100)) if key != "c/0/0" else (slice(130, 200), slice(130, 200))
    np.testing.assert_array_equal(a[other], data[other])  # the handle reads on after the error


def _corrupt_inner_chunk(path: Path, inner: int) -> None:
    _, entries = _index(path)
    offset, nbytes = (int(x) for x in entries[inner])
    raw = bytearray(path.read_bytes())
    raw[offset:offset + nbytes] = b"\x5a" * nbytes  # the same length: the index still holds
    path.write_bytes(bytes(raw))


def _fails_naming(a: Any, selection: tuple[slice, ...], key: str) -> None:
    """Reading ``selection`` fails soon with a decoding error naming ``key``."""
    t = time.monotonic()
    with pytest.raises(ChunkDecodeError) as caught:
        a[selection]
    assert time.monotonic() - t < 10
    assert f"'{key}'" in str(caught.value)


@pytest.mark.parametrize("selection", [(slice(None), slice(None)), REGION], ids=["full-array", "region"])
def test_a_corrupt_inner_chunk_of_a_shard_read_whole_names_the_shard(served, selection: tuple[slice, ...]) -> None:
    """Shard c/0/0 is fetched whole (the full array: every shard is; the
    region: only that one, beside three read in part); its inner chunks
    decode as queued work, whose error names the shard's key."""
    url, local, data, server = served
    _corrupt_inner_chunk(local / "c" / "0" / "0", inner=5)
    a = zarrpy.open_array(url, mode="r")
    _fails_naming(a, selection, "c/0/0")
    assert [e.range for e in _reads(server, "c/0/0")] == [None]  # it was fetched whole
    other = (slice(130, 250), slice(0, 250))
    np.testing.assert_array_equal(a[other], data[other])  # the handle reads on after the error


@pytest.mark.parametrize("inner", [0, 5], ids=["taken-whole", "taken-in-part"])
def test_a_corrupt_inner_chunk_of_a_shard_read_in_part_names_the_shard(served, inner: int) -> None:
    """Shard c/1/1 is read in part (its index, then its ranges); its inner
    chunks decode as work queued on the drain (not on the pool), whose
    error names the shard's key; the handle reads on afterwards."""
    url, local, data, server = served
    _corrupt_inner_chunk(local / "c" / "1" / "1", inner=inner)
    a = zarrpy.open_array(url, mode="r")
    _fails_naming(a, REGION, "c/1/1")
    ranges = [e.range for e in _reads(server, "c/1/1")]
    assert ranges[0] is not None and ranges[0].startswith("bytes=-") and len(ranges) > 1  # index, then ranges
    other = (slice(0, 120), slice(0, 250))
    np.testing.assert_array_equal(a[other], data[other])


def _fail_index(key: str) -> Callable[[str, str | None], bool]:
    return lambda path, rng: path.endswith("/s.zarr/" + key) and rng is not None and rng.startswith("bytes=-")


def _fail_ranges(key: str) -> Callable[[str, str | None], bool]:
    return lambda path, rng: path.endswith("/s.zarr/" + key) and rng is not None and not rng.startswith("bytes=-")


@pytest.mark.parametrize("fails", [_fail_index, _fail_ranges], ids=["index", "ranges"])
def test_a_failed_request_fails_the_read_naming_the_shard(served, fails: Callable[[str], Any]) -> None:
    url, _, data, server = served
    a = zarrpy.open_array(url, mode="r")
    server.fails = fails("c/1/0")  # type: ignore[attr-defined]
    t = time.monotonic()
    with pytest.raises(StoreError, match="500") as caught:
        a[REGION]
    assert time.monotonic() - t < 10
    assert caught.value.key == "c/1/0"
    assert any(e.status == 500 for e in _reads(server, "c/1/0"))
    server.fails = None  # type: ignore[attr-defined]
    np.testing.assert_array_equal(a[REGION], data[REGION])  # reads right once the server answers again


def test_variable_length_strings_in_shards_read_right(tmp_path: Path) -> None:
    shape = (48, 48)
    rng = np.random.default_rng(4)
    values = np.array([f"{i}:" + "\u00e9x" * int(rng.integers(0, 9)) for i in range(shape[0] * shape[1])],
                      dtype=object).reshape(shape)
    zarrpy.create_array(str(tmp_path / "v.zarr"), shape=shape, dtype=str, chunks=(8, 8), shards=(24, 24))[...] = values
    region = (slice(3, 40), slice(2, 33))  # c/0/0 whole (every inner chunk), the three others in part
    with serve_directory(tmp_path, latency=LATENCY_S) as (base, server):
        a = zarrpy.open_array(f"{base}/v.zarr", mode="r")
        got = a[region]
        assert got.shape == (37, 31)
        assert got.tolist() == values[region].tolist()
        assert [e.range for e in _reads(server, "c/0/0")] == [None]
        for key in ("c/0/1", "c/1/0", "c/1/1"):
            index, *ranges = _reads(server, key)
            assert _is_suffix(index) and ranges and all(r.start >= index.end for r in ranges), key
        assert server.log.depth() == 3
        assert a[10:12, 30:31].tolist() == values[10:12, 30:31].tolist()  # one inner chunk, on a kept index
