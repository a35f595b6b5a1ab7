"""Sharded arrays through the Array API: store traffic, byte reuse, corrupt
shards, concurrency, and random reads and writes against numpy.

The store traffic is measured with :class:`CountingStore`, a wrapper of
:class:`~zarrpy.stores.memory.MemoryStore` that counts requests per key: a
``get`` is one request and a ``get_partial_values`` call with at least one
(key, range) is ONE request however many ranges it batches (an empty batch is
counted apart, not as a request). It also counts the bytes it returns and the
``set`` and ``delete`` calls, and size requests (``getsize``: a stat, a
HEAD), which count as requests too. A ``get_versioned`` call (a batch of
reads that also return each object's size and version) is one request too,
like a batch.

What DESIGN.md ("Sharding", "Remote stores") promises and these tests hold
zarrpy to: reading part of shards costs one batched suffix read of their
indexes (which returns each shard's length: the index is checked against
it before anything else is read, with no size request) plus one batched read
of the inner chunks needed, and a later read into the same shard only the
second, conditional on the shard's version; a write reads each shard at most once and writes it
once, not at all when the write covers it whole; untouched inner chunks keep
their encoded bytes; inner chunks of fill values are left out and a shard left
all fill is deleted; a corrupt shard is an error naming its key.
"""

from __future__ import annotations

import itertools
import struct
import threading
from collections import Counter

import google_crc32c
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.sharding import ShardingCodec
from zarrpy.stores.abc import Store
from zarrpy.stores.memory import MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}
CRC = {"name": "crc32c"}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}


class CountingStore(Store):
    """A MemoryStore that counts what is asked of it (see the module docstring)."""

    def __init__(self, inner: MemoryStore | None = None):
        self.inner = inner if inner is not None else MemoryStore()
        self._counts_lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with getattr(self, "_counts_lock", threading.Lock()):
            self.gets: Counter[str] = Counter()  # single requests per key
            self.batches = 0  # get_partial_values calls with >= 1 request
            self.empty_batches = 0
            self.batch_keys: Counter[str] = Counter()  # batched calls that asked for a key
            self.nbytes = 0
            self.sets: Counter[str] = Counter()
            self.deletes: Counter[str] = Counter()
            self.sizes: Counter[str] = Counter()  # size requests (a stat, a HEAD) per key
            self.versioned: Counter[str] = Counter()  # versioned reads (get_versioned items) per key

    # -- counters -------------------------------------------------------
    @property
    def requests(self) -> int:
        """Every request: single reads, batches and size requests."""
        return sum(self.gets.values()) + self.batches + sum(self.sizes.values())

    def reads_of(self, key: str) -> int:
        """Requests that fetched (any part of) ``key``."""
        return self.gets[key] + self.batch_keys[key]

    @property
    def request_concurrency(self):
        return self.inner.request_concurrency

    @property
    def set_calls(self) -> int:
        return sum(self.sets.values())

    # -- the Store contract ---------------------------------------------
    def get(self, key, byte_range=None):
        value = self.inner.get(key, byte_range)
        with self._counts_lock:
            self.gets[key] += 1
            self.nbytes += 0 if value is None else len(value)
        return value

    def getsize(self, key):
        with self._counts_lock:
            self.sizes[key] += 1
        return self.inner.getsize(key)

    def get_partial_values(self, requests):
        requests = list(requests)
        out = self.inner.get_partial_values(requests)
        with self._counts_lock:
            if requests:
                self.batches += 1
            else:
                self.empty_batches += 1
            for key in {k for k, _ in requests}:
                self.batch_keys[key] += 1
            self.nbytes += sum(len(v) for v in out if v is not None)
        return out

    def get_versioned(self, requests):
        requests = list(requests)
        out = self.inner.get_versioned(requests)
        with self._counts_lock:
            if requests:
                self.batches += 1
            for key in {r.key for r in requests}:
                self.batch_keys[key] += 1
            for r in requests:
                self.versioned[r.key] += 1
            self.nbytes += sum(len(v.data) for v in out if v is not None and v.data is not None)
        return out

    def _set(self, key, value):
        with self._counts_lock:
            self.sets[key] += 1
        self.inner.set(key, value)

    def _delete(self, key):
        with self._counts_lock:
            self.deletes[key] += 1
        self.inner.delete(key)

    def list_prefix(self, prefix):
        return self.inner.list_prefix(prefix)

    # -- helpers --------------------------------------------------------
    def raw(self, key: str) -> bytes | None:
        """A stored value, without counting."""
        return self.inner.get(key)

    def put(self, key: str, value: bytes) -> None:
        """Store a value, without counting."""
        self.inner.set(key, value)


# --------------------------------------------------------------------------
# helpers


def _data(shape, dtype="uint16", seed=0) -> np.ndarray:
    """Random values, never 0 (the fill value)."""
    return np.random.default_rng(seed).integers(1, 60000, size=shape).astype(dtype)


def make_array(store=None, *, shape=(64, 64), chunks=(8, 8), shards=(32, 32), dtype="uint16",
               location="end", compressors=(ZSTD,), fill_value=0):
    store = CountingStore() if store is None else store
    if location == "end":
        a = zarrpy.create_array(store, shape=shape, dtype=dtype, chunks=chunks, shards=shards,
                                compressors=list(compressors), fill_value=fill_value)
    else:
        sharding = {"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunks), "codecs": [LE, *compressors], "index_codecs": [LE, CRC],
            "index_location": location}}
        a = zarrpy.create_array(store, shape=shape, dtype=dtype, chunks=shards, serializer=sharding,
                                compressors=None, fill_value=fill_value)
    assert a.chunks == tuple(chunks) and a.shards == tuple(shards)
    return store, a


def _codec_and_spec(a) -> tuple[ShardingCodec, ChunkSpec]:
    (codec,) = a.codecs
    assert isinstance(codec, ShardingCodec)
    return codec, ChunkSpec(a.shards, a.metadata.data_type, a.metadata.fill_value)


def inner_chunks(a, raw: bytes) -> dict[tuple[int, ...], bytes]:
    """Encoded bytes of each stored inner chunk of a shard, by inner coords."""
    codec, spec = _codec_and_spec(a)
    index = codec.read_index(raw, spec)
    out = {}
    for pos in np.flatnonzero(index.present()):
        offset, nbytes = index.get(int(pos))
        out[tuple(int(c) for c in np.unravel_index(int(pos), index.grid_shape))] = raw[offset:offset + nbytes]
    return out


def index_nbytes(a) -> int:
    codec, spec = _codec_and_spec(a)
    return codec.index_nbytes(spec)


def _shard_keys(store: CountingStore) -> set[str]:
    return {k for k in store.inner.list_prefix("") if k != "zarr.json"}


# --------------------------------------------------------------------------
# reads: one batch of index reads, one batch of inner-chunk reads


@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("sel", [
    (slice(8, 16), slice(16, 24)),  # one inner chunk exactly
    (slice(9, 12), slice(17, 23)),  # part of one inner chunk
    (10, 20),  # one element
], ids=["whole-inner", "part-inner", "element"])
def test_reading_one_inner_chunk_costs_two_reads_and_only_its_bytes(location, sel):
    store, a = make_array(location=location)
    data = _data(a.shape)
    a[...] = data
    chunk_bytes = inner_chunks(a, store.raw("c/0/0"))[(1, 2)]
    store.reset()
    got = a[sel]
    np.testing.assert_array_equal(got, data[sel])
    # the index (a suffix read that also tells the shard's length), then the inner chunk
    assert store.requests == 2 and not store.sizes, (store.gets, store.batches)
    assert store.reads_of("c/0/0") == 2
    assert store.nbytes == index_nbytes(a) + len(chunk_bytes)
    assert store.set_calls == 0
    store.reset()  # again: the index is kept, the inner chunk read on the condition that the shard is unchanged
    np.testing.assert_array_equal(a[sel], data[sel])
    assert store.requests == 1 and store.nbytes == len(chunk_bytes)


@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("sel,how", [
    ((slice(0, 16), slice(0, 24)), "basic"),  # 2x3 inner chunks
    ((slice(3, 29, 5), slice(1, 31, 7)), "basic"),  # strided: every inner chunk, none whole
    (([1, 20, 3], [30, 3]), "oindex"),  # scattered, unsorted, repeated chunks
], ids=["block", "strided", "oindex"])
def test_reading_k_inner_chunks_of_one_shard_costs_two_reads(location, sel, how):
    store, a = make_array(location=location)
    data = _data(a.shape, seed=1)
    a[...] = data
    store.reset()
    if how == "oindex":
        got, expected = a.oindex[sel], data[np.ix_(*sel)]
    else:
        got, expected = a[sel], data[sel]
    np.testing.assert_array_equal(got, expected)
    if sel == (slice(3, 29, 5), slice(1, 31, 7)):
        # every inner chunk is needed (each whole, compressed): the shard in one read, as tensorstore does
        assert store.requests == 1 and store.reads_of("c/0/0") == 1 and not store.sizes
        return
    assert store.requests == 2 and not store.sizes  # the index, then one batch
    assert store.reads_of("c/0/0") == 2
    assert store.nbytes <= len(store.raw("c/0/0"))


@pytest.mark.parametrize("compressors,whole", [
    ((ZSTD,), True),  # compressed inner chunks: each read whole anyway
    ((CRC,), True),  # checksummed: read whole, so the checksum is checked
    ((), False),  # plain bytes: each read in part, inside its range
], ids=["zstd", "crc32c", "plain"])
def test_a_selection_needing_every_inner_chunk_reads_the_shard_whole_when_they_are_read_whole(compressors, whole):
    store, a = make_array(compressors=compressors)
    data = _data(a.shape, seed=8)
    a[...] = data
    store.reset()
    sel = (slice(3, 29, 5), slice(1, 31, 7))  # every inner chunk of shard c/0/0, none whole
    np.testing.assert_array_equal(a[sel], data[sel])
    assert store.reads_of("c/0/0") == (1 if whole else 2) and store.requests == (1 if whole else 2)
    assert not store.sizes


def test_partial_reads_across_shards_cost_two_batches_in_all():
    store, a = make_array(shape=(70, 70))  # 3x3 shards, edge shards 6 wide
    data = _data(a.shape, seed=2)
    a[...] = data
    store.reset()
    sel = (slice(5, 67, 2), slice(30, 66))  # cuts all 9 shards, none whole
    np.testing.assert_array_equal(a[sel], data[sel])
    # every index in one batch, every inner chunk in one; the edge shards whose
    # every inner chunk is needed are read whole, in a batch beside the indexes
    keys = [f"c/{i}/{j}" for i in range(3) for j in range(3)]
    whole = {k for k in keys if store.reads_of(k) == 1}
    # columns 30:66 take every inner chunk of shard columns 1 and 2 (the edge one is 6 wide)
    assert whole == {f"c/{i}/{j}" for i in range(3) for j in (1, 2)}
    assert all(store.reads_of(k) == 2 for k in keys if k not in whole)
    assert store.requests == 3 and not store.sizes


def test_reading_missing_shards_and_empty_inner_chunks():
    store, a = make_array()
    a[40:48, 40:48] = 7  # one inner chunk of shard c/1/1
    store.reset()
    np.testing.assert_array_equal(a[0:20, 0:20], 0)  # missing shard: one index request, nothing read
    assert store.requests == 1 and not store.sizes and store.nbytes == 0
    store.reset()
    np.testing.assert_array_equal(a[33:39, 33:39], 0)  # stored shard, empty inner chunk: the index only
    assert store.requests == 1 and store.nbytes == index_nbytes(a)
    store.reset()  # the kept index is confirmed (a conditional read of it), nothing else read
    np.testing.assert_array_equal(a[33:39, 33:39], 0)
    assert store.requests == 1 and store.nbytes == index_nbytes(a)


def test_reading_whole_shards_fetches_each_once():
    store, a = make_array()
    data = _data(a.shape, seed=3)
    a[...] = data
    store.reset()
    np.testing.assert_array_equal(a[...], data)
    keys = _shard_keys(store)
    assert all(store.reads_of(k) == 1 for k in keys)
    assert store.nbytes == sum(len(store.raw(k)) for k in keys)


# --------------------------------------------------------------------------
# writes: one read + one write, untouched inner chunks byte-identical


@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("sel", [
    (slice(8, 16), slice(16, 24)),  # one inner chunk whole
    (slice(9, 12), slice(17, 23)),  # part of one inner chunk
    (slice(6, 18), slice(14, 26)),  # parts of 3x3 inner chunks
], ids=["whole-inner", "part-inner", "3x3-parts"])
def test_writing_into_an_existing_shard_reads_once_writes_once_and_keeps_other_bytes(location, sel):
    store, a = make_array(location=location)
    data = _data(a.shape, seed=4)
    a[...] = data
    before = inner_chunks(a, store.raw("c/0/0"))
    assert len(before) == 16
    store.reset()
    new = _data(data[sel].shape, seed=5)
    a[sel] = new
    data[sel] = new
    assert store.requests == 1 and store.reads_of("c/0/0") == 1
    assert dict(store.sets) == {"c/0/0": 1} and not store.deletes
    after = inner_chunks(a, store.raw("c/0/0"))
    touched = {(r // 8, c // 8) for r in range(sel[0].start, sel[0].stop) for c in range(sel[1].start, sel[1].stop)}
    assert set(after) == set(before)
    for coords in before:
        if coords not in touched:
            assert after[coords] == before[coords], coords
        else:
            assert after[coords] != before[coords], coords
    np.testing.assert_array_equal(a[...], data)


def test_a_write_covering_whole_shards_reads_nothing():
    store, a = make_array(shape=(70, 70))
    data = _data(a.shape, seed=6)
    a[...] = data
    store.reset()
    sel = (slice(32, 64), slice(0, 70))  # shard row 1: two whole shards and an edge shard, whole
    data[sel] = _data(data[sel].shape, seed=7)
    a[sel] = data[sel]
    assert store.requests == 0
    assert dict(store.sets) == {"c/1/0": 1, "c/1/1": 1, "c/1/2": 1}
    store.reset()
    sel = (slice(64, 70), slice(64, 70))  # the corner edge shard, whole
    data[sel] = 9
    a[sel] = 9
    assert store.requests == 0 and dict(store.sets) == {"c/2/2": 1}
    np.testing.assert_array_equal(a[...], data)


def test_a_whole_array_write_into_an_empty_array_reads_nothing():
    store, a = make_array(shape=(70, 70))
    store.reset()
    a[...] = _data(a.shape, seed=8)
    assert store.requests == 0
    assert dict(store.sets) == {f"c/{i}/{j}": 1 for i in range(3) for j in range(3)}


def test_fill_inner_chunks_are_left_out_and_all_fill_shards_deleted():
    store, a = make_array()
    data = np.zeros(a.shape, dtype="uint16")
    data[0:8, 0:8] = 1  # c/0/0: one inner chunk
    data[40:50, 40:42] = 2  # c/1/1: parts of two inner chunks
    a[...] = data
    assert _shard_keys(store) == {"c/0/0", "c/1/1"}
    assert set(inner_chunks(a, store.raw("c/0/0"))) == {(0, 0)}
    assert set(inner_chunks(a, store.raw("c/1/1"))) == {(1, 1), (2, 1)}
    # A partial write that leaves c/0/0 all fill deletes it (after one read).
    store.reset()
    a[0:8, 0:10] = 0
    assert store.reads_of("c/0/0") == 1 and dict(store.deletes) == {"c/0/0": 1} and not store.sets
    # A partial write that empties one of two inner chunks keeps the other's bytes.
    kept = inner_chunks(a, store.raw("c/1/1"))[(2, 1)]
    a[40:48, 40:48] = 0
    assert inner_chunks(a, store.raw("c/1/1")) == {(2, 1): kept}
    # A whole-shard write of fill values deletes without reading.
    store.reset()
    a[32:64, 32:64] = 0
    assert store.requests == 0 and dict(store.deletes) == {"c/1/1": 1} and not store.sets
    assert _shard_keys(store) == set()
    # Writing fill values where nothing is stored stores nothing.
    store.reset()
    a[1:5, 1:50] = 0
    assert store.set_calls == 0
    np.testing.assert_array_equal(a[...], 0)


def test_reads_write_nothing():
    store, a = make_array()
    a[0:3, 0:3] = 1
    store.reset()
    a[...]
    a[0:20, 5:40]
    a.read_chunks([(0, 0), (7, 7)])
    assert store.set_calls == 0 and not store.deletes


# --------------------------------------------------------------------------
# corrupt shards


def _index_entries(raw: bytes, n: int) -> list[tuple[int, int]]:
    return [struct.unpack_from("<QQ", raw, len(raw) - (16 * n + 4) + 16 * i) for i in range(n)]


def _with_entries(raw: bytes, entries) -> bytes:
    body = b"".join(struct.pack("<QQ", o, n) for o, n in entries)
    k = 16 * len(entries) + 4
    return raw[:-k] + body + struct.pack("<I", google_crc32c.value(bytes(body)))


def _corrupt(kind: str, raw: bytes) -> bytes:
    n = 4
    k = 16 * n + 4
    entries = _index_entries(raw, n)
    last = max(range(n), key=lambda i: entries[i][0])
    if kind == "truncated":
        return raw[: len(raw) // 2]
    if kind == "shorter-than-index":
        return raw[:20]
    if kind == "data-cut-out":  # index intact, data gone
        return raw[:10] + raw[-k:]
    if kind == "index-crc":
        return raw[:-k] + bytes([raw[-k] ^ 0x01]) + raw[-k + 1:]
    if kind == "past-the-end":
        entries[last] = (entries[last][0], entries[last][1] + 1000)
        return _with_entries(raw, entries)
    if kind == "overlap":
        entries[1] = (entries[0][0] + 1, entries[1][1])
        return _with_entries(raw, entries)
    if kind == "half-empty":
        entries[2] = (entries[2][0], 2**64 - 1)
        return _with_entries(raw, entries)
    # The probe's hostile entries, refused by partial reads too (before any range is read):
    if kind == "huge-nbytes":  # was a MemoryError
        entries[0] = (entries[0][0], 2**62)
        return _with_entries(raw, entries)
    if kind == "wrapping-nbytes":  # was an OverflowError
        entries[0] = (entries[0][0], 2**64 - 2)
        return _with_entries(raw, entries)
    if kind == "into-the-index":  # returned the index bytes as array data
        entries[0] = (len(raw) - k, entries[0][1])
        return _with_entries(raw, entries)
    raise AssertionError(kind)


CORRUPTIONS = ["truncated", "shorter-than-index", "data-cut-out", "index-crc", "past-the-end", "overlap", "half-empty",
               "huge-nbytes", "wrapping-nbytes", "into-the-index"]
OPERATIONS = {
    "read-whole": lambda a: a[0:16, 0:16],
    "read-part": lambda a: a[9:12, 9:12],
    "read-all-chunks": lambda a: a.read_chunks([(0, 0), (1, 1)]),
    "write-part": lambda a: a.__setitem__((slice(1, 3), slice(1, 3)), 7),
    "write-chunks": lambda a: a.write_chunks({(0, 0): np.full((8, 8), 5, dtype="uint16")}),
}


@pytest.mark.parametrize("op", list(OPERATIONS))
@pytest.mark.parametrize("kind", CORRUPTIONS)
def test_corrupt_shards_raise_errors_naming_the_key_and_change_nothing(kind, op):
    store, a = make_array(shape=(30, 30), shards=(16, 16))
    a[...] = _data(a.shape, seed=9)
    bad = _corrupt(kind, store.raw("c/0/0"))
    store.put("c/0/0", bad)
    others = {k: store.raw(k) for k in _shard_keys(store)}
    expected = zarrpy.ChecksumError if kind in ("index-crc", "truncated") else zarrpy.ChunkDecodeError
    with pytest.raises(expected, match=r"c/0/0") as info:
        OPERATIONS[op](a)
    assert isinstance(info.value, zarrpy.ZarrpyError)
    assert {k: store.raw(k) for k in _shard_keys(store)} == others  # nothing written


def test_a_corrupt_shard_does_not_stop_writes_that_cover_it_whole():
    store, a = make_array(shape=(30, 30), shards=(16, 16))
    a[...] = _data(a.shape, seed=10)
    store.put("c/0/0", b"garbage")
    a[0:16, 0:16] = 3
    np.testing.assert_array_equal(a[0:16, 0:16], 3)


# --------------------------------------------------------------------------
# concurrency


def _partition(rng: np.random.Generator, n: int, parts: int) -> list[tuple[int, int]]:
    cuts = sorted(rng.choice(np.arange(1, n), size=parts - 1, replace=False).tolist())
    edges = [0, *cuts, n]
    return list(zip(edges[:-1], edges[1:]))


@pytest.mark.parametrize("run", range(6))
def test_threads_writing_disjoint_regions_of_one_shard_lose_nothing(run):
    rng = np.random.default_rng(100 + run)
    n_threads = 8
    shape = (48, 40)
    store, a = make_array(MemoryStore(), shape=shape, chunks=(4, 5), shards=(24, 40), dtype="int32",
                          location=("end", "start")[run % 2])
    expected = np.zeros(shape, dtype="int32")
    # Each thread owns a band of rows cut at random (bands share inner chunks
    # and shards) and writes it in several random pieces; a few threads use
    # their own Array object on the same store.
    bands = _partition(rng, shape[0], n_threads)
    plans = []
    for t, (r0, r1) in enumerate(bands):
        pieces = []
        for c0, c1 in _partition(rng, shape[1], int(rng.integers(1, 4))):
            block = rng.integers(1, 1 << 30, size=(r1 - r0, c1 - c0)).astype("int32")
            if rng.random() < 0.15:
                block[...] = 0  # some writes of fill values
            expected[r0:r1, c0:c1] = block
            pieces.append(((slice(r0, r1), slice(c0, c1)), block))
        plans.append(pieces)
    barrier = threading.Barrier(n_threads)
    errors = []

    def work(t: int) -> None:
        arr = zarrpy.open_array(store, mode="r+") if t % 3 == 0 else a
        barrier.wait()
        try:
            for sel, block in plans[t]:
                arr[sel] = block
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    np.testing.assert_array_equal(a[...], expected)


@pytest.mark.parametrize("run", range(3))
def test_threads_writing_inner_chunks_of_shared_shards_with_write_chunks(run):
    rng = np.random.default_rng(200 + run)
    shape, chunks = (24, 30), (4, 5)
    store, a = make_array(MemoryStore(), shape=shape, chunks=chunks, shards=(12, 15), dtype="int32")
    coords = list(itertools.product(range(6), range(6)))
    rng.shuffle(coords)
    n_threads = 6
    expected = np.zeros(shape, dtype="int32")
    jobs = []
    for t in range(n_threads):
        todo = {}
        for c in coords[t::n_threads]:
            block = rng.integers(1, 1000, size=chunks).astype("int32")
            todo[tuple(c)] = block
            expected[c[0] * 4:(c[0] + 1) * 4, c[1] * 5:(c[1] + 1) * 5] = block
        jobs.append(todo)
    barrier = threading.Barrier(n_threads)

    def work(t):
        barrier.wait()
        for c, block in jobs[t].items():  # one chunk per call: many racing read-modify-writes
            a.write_chunks({c: block})

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    np.testing.assert_array_equal(a[...], expected)


# --------------------------------------------------------------------------
# block API: inner chunk coords, aggregated per shard


def _chunk_region(coords, chunks, shape):
    return tuple(slice(c * cs, min((c + 1) * cs, s)) for c, cs, s in zip(coords, chunks, shape))


READ_CHUNKS = [(0, 0), (0, 1), (1, 1), (3, 2), (8, 8), (5, 5), (0, 0), (8, 0)]
READ_CHUNKS_SHARDS = {"c/0/0", "c/1/1", "c/2/2", "c/2/0"}


def test_read_chunks_returns_inner_chunks_and_reads_each_index_once():
    store, a = make_array(shape=(70, 70))
    data = _data(a.shape, seed=11)
    a[...] = data
    store.reset()
    got = a.read_chunks(READ_CHUNKS)
    for c, block in zip(READ_CHUNKS, got):
        np.testing.assert_array_equal(block, data[_chunk_region(c, (8, 8), a.shape)])
    assert got[4].shape == (6, 6) and got[7].shape == (6, 8)  # edge inner chunks are clipped
    assert set(store.versioned) == READ_CHUNKS_SHARDS and not store.gets
    assert store.requests == 2, "every index in one batch, every inner chunk in another"
    assert store.set_calls == 0


def test_read_chunks_reads_each_shard_once():
    store, a = make_array(shape=(70, 70))
    a[...] = _data(a.shape, seed=11)
    store.reset()
    a.read_chunks(READ_CHUNKS)
    for key in READ_CHUNKS_SHARDS:  # one index read and one read for its inner chunks
        assert store.batch_keys[key] == 2, f"{key}: read {store.batch_keys[key]} times"
    assert store.requests == 2  # the indexes in one batch, the inner chunks in one


def test_read_chunks_of_missing_shards_and_empty_inner_chunks_are_fill():
    store, a = make_array(fill_value=7)
    a[0:8, 0:8] = 1
    out = a.read_chunks([(0, 0), (0, 1), (7, 7)])
    np.testing.assert_array_equal(out[0], 1)
    np.testing.assert_array_equal(out[1], 7)
    np.testing.assert_array_equal(out[2], 7)


def test_write_chunks_reads_each_shard_at_most_once_and_writes_it_once():
    store, a = make_array(shape=(70, 70))
    data = _data(a.shape, seed=12)
    a[...] = data
    before = {k: inner_chunks(a, store.raw(k)) for k in _shard_keys(store)}
    todo = {}
    for c in [(0, 0), (0, 1), (1, 1), (3, 3), (5, 5), (6, 4), (8, 8), (8, 7)]:
        region = _chunk_region(c, (8, 8), a.shape)
        todo[c] = _data(data[region].shape, seed=13 + len(todo))
        data[region] = todo[c]
    store.reset()
    a.write_chunks(todo)
    touched = {"c/0/0", "c/1/1", "c/2/1", "c/2/2"}
    assert dict(store.sets) == {k: 1 for k in touched}
    for key in touched - {"c/2/2"}:
        assert store.reads_of(key) == 1, key
    # Inner chunk (8, 8) is all of the corner edge shard that lies in the array:
    # writing it covers the shard, which is not read.
    assert store.reads_of("c/2/2") == 0
    assert store.requests <= 3
    np.testing.assert_array_equal(a[...], data)
    # Inner chunks the call did not write keep their bytes.
    written = {("c/%d/%d" % (c[0] // 4, c[1] // 4), (c[0] % 4, c[1] % 4)) for c in todo}
    for key, chunks in before.items():
        after = inner_chunks(a, store.raw(key))
        for coords, raw in chunks.items():
            if (key, coords) not in written:
                assert after[coords] == raw, (key, coords)


def test_write_chunks_covering_a_shard_does_not_read_it():
    store, a = make_array()
    a[...] = _data(a.shape, seed=14)
    todo = {(i, j): np.full((8, 8), i * 4 + j + 1, dtype="uint16") for i in range(4) for j in range(4)}
    store.reset()
    a.write_chunks(todo)
    assert dict(store.sets) == {"c/0/0": 1}
    assert store.requests == 0


def test_write_chunks_into_missing_shards_and_fill_chunks():
    store, a = make_array()
    store.reset()
    a.write_chunks({(0, 0): np.ones((8, 8), "uint16"), (0, 1): np.zeros((8, 8), "uint16"),
                    (6, 6): np.zeros((8, 8), "uint16")})
    assert dict(store.sets) == {"c/0/0": 1}  # the all-fill shard c/1/1 is not stored
    assert set(inner_chunks(a, store.raw("c/0/0"))) == {(0, 0)}
    a.write_chunks({(0, 0): np.zeros((8, 8), "uint16")})
    assert _shard_keys(store) == set()


# --------------------------------------------------------------------------
# hypothesis: random layouts, selections, reads and writes against numpy


@st.composite
def layouts(draw):
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    shard = tuple(c * draw(st.integers(1, 3)) for c in inner)
    shape = tuple(draw(st.integers(1, 3 * s + 2)) for s in shard)
    return shape, inner, shard


@st.composite
def dim_selection(draw, n):
    kind = draw(st.sampled_from(["slice", "int", "array"]))
    if kind == "int":
        return draw(st.integers(-n, n - 1))
    if kind == "array":
        return np.array(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=5, unique=True)), dtype=np.int64)
    start = draw(st.integers(0, n - 1))
    stop = draw(st.integers(start + 1, n))
    step = draw(st.integers(1, 3))
    return slice(start, stop, step)


def _oindex_numpy(arr: np.ndarray, sel) -> tuple:
    """The numpy index that selects ``sel`` orthogonally (ints drop their dimension)."""
    full = []
    for s, n in zip(sel, arr.shape):
        if isinstance(s, np.ndarray):
            full.append(s)
        elif isinstance(s, slice):
            full.append(np.arange(n)[s])
        else:
            full.append(np.array([s % n]))
    ix = np.ix_(*full)
    drop = tuple(0 if not isinstance(s, (slice, np.ndarray)) else slice(None) for s in sel)
    return ix, drop


def _check_stored_layout(store: MemoryStore, a, expected: np.ndarray) -> None:
    """No shard is all fill and no index lists an inner chunk of fill values."""
    codec, spec = _codec_and_spec(a)
    for key in store.list_prefix("c/"):
        outer = tuple(int(x) for x in key.split("/")[1:])
        present = inner_chunks(a, store.get(key))
        assert present, f"{key} is stored but all fill"
        grid = [s // c for s, c in zip(a.shards, a.chunks)]
        for inner in itertools.product(*map(range, grid)):
            start = [o * s + i * c for o, s, i, c in zip(outer, a.shards, inner, a.chunks)]
            region = tuple(slice(b, b + c) for b, c in zip(start, a.chunks))
            has_data = bool(np.any(expected[region] != 0))
            assert (inner in present) == has_data, (key, inner)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_writes_and_reads_match_numpy(data):
    shape, inner, shard = data.draw(layouts(), label="layout")
    dtype = data.draw(st.sampled_from(["uint8", "int32", "float64"]), label="dtype")
    location = data.draw(st.sampled_from(["end", "start"]), label="location")
    compressors = data.draw(st.sampled_from([(), (ZSTD,)]), label="compressors")
    store = MemoryStore()
    _, a = make_array(store, shape=shape, chunks=inner, shards=shard, dtype=dtype, location=location,
                      compressors=compressors)
    expected = np.zeros(shape, dtype=dtype)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    for _ in range(data.draw(st.integers(1, 4), label="writes")):
        sel = tuple(data.draw(dim_selection(n)) for n in shape)
        ix, drop = _oindex_numpy(expected, sel)
        target_shape = expected[ix][drop].shape
        value = rng.integers(0, 3, size=target_shape).astype(dtype)  # many zeros: fill chunks
        if data.draw(st.booleans(), label="scalar"):
            value = np.asarray(value.flat[0] if value.size else 0, dtype=dtype)
        a.oindex[sel] = value
        view = expected[ix]
        view[drop] = value
        expected[ix] = view
    np.testing.assert_array_equal(a[...], expected)
    _check_stored_layout(store, a, expected)
    for _ in range(3):
        sel = tuple(data.draw(dim_selection(n)) for n in shape)
        ix, drop = _oindex_numpy(expected, sel)
        np.testing.assert_array_equal(a.oindex[sel], expected[ix][drop])
    # the block API agrees too
    grid = [range(-(-s // c)) for s, c in zip(shape, inner)]
    coords = list(itertools.product(*grid))
    for c, block in zip(coords, a.read_chunks(coords)):
        np.testing.assert_array_equal(block, expected[_chunk_region(c, inner, shape)])
