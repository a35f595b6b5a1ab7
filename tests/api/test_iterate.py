"""Reading into growable buffers: ``read_into``, ``zarrpy.iter_rows``, ``zarrpy.concat``.

Arrays sit in two stores at once (a MemoryStore and a LocalStore, the latter
also given by path) and are compared with ``numpy.concatenate`` of their
contents; buffers are checked for their reallocation counts.
"""

from __future__ import annotations

import math
import threading
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.api import _iterate
from zarrpy import GrowableArray, GrowableRagged, RaggedArray
from zarrpy.errors import SelectionError
from zarrpy.stores import LocalStore, MemoryStore

N_ARRAYS = 100


def _lengths(n: int, seed: int) -> list[int]:
    return np.random.default_rng(seed).integers(0, 8, size=n).tolist()


@pytest.fixture(scope="module")
def numeric(tmp_path_factory):
    """100 arrays of shape (k, 3), k in 0..7: even ones in memory, odd ones
    on disk (every other of those given as a path string)."""
    memory = MemoryStore()
    root = tmp_path_factory.mktemp("numeric")
    local = LocalStore(root)
    inputs, data = [], []
    for i, k in enumerate(_lengths(N_ARRAYS, 0)):
        values = np.arange(k * 3, dtype="int32").reshape(k, 3) + 1000 * i
        store = memory if i % 2 == 0 else local
        a = zarrpy.create_array(store, name=f"a{i}", shape=(k, 3), dtype="int32", chunks=(3, 2))
        a[...] = values
        inputs.append(str(root / f"a{i}") if i % 4 == 1 else a)
        data.append(values)
    return inputs, np.concatenate(data)


@pytest.fixture(scope="module")
def strings(tmp_path_factory):
    root = tmp_path_factory.mktemp("strings")
    inputs, data = [], []
    for i, k in enumerate(_lengths(20, 1)):
        values = [f"{i}-{j}" + "é" * (j % 3) for j in range(k)]
        store = MemoryStore() if i % 2 else root / f"s{i}.zarr"
        a = zarrpy.create_array(store, shape=(k,), dtype=str, chunks=(3,))
        a[...] = np.array(values, dtype=np.dtypes.StringDType())
        inputs.append(a)
        data.extend(values)
    return inputs, data


@pytest.fixture(scope="module")
def ragged(tmp_path_factory):
    root = tmp_path_factory.mktemp("ragged")
    inputs, data = [], []
    for i, k in enumerate(_lengths(20, 2)):
        values = [list(range(i, i + (j % 4))) for j in range(k)]
        store = MemoryStore() if i % 2 else root / f"r{i}.zarr"
        a = zarrpy.create_array(store, shape=(k,), dtype="int16", chunks=(3,), serializer="numcodecs.vlen-array",
                                zarr_format=2 if i % 3 == 0 else 3)
        if k:
            a[...] = RaggedArray.from_list(values, "int16")
        inputs.append(a)
        data.extend(values)
    return inputs, data


# -- iter_rows -------------------------------------------------------------------


@pytest.mark.parametrize("rows", [1, 16, 1000])
@pytest.mark.parametrize("prefetch", [False, True], ids=["serial", "prefetch"])
def test_iter_rows_equals_concatenate(numeric, rows, prefetch):
    inputs, expected = numeric
    blocks = []
    seen = set()
    for buf in zarrpy.iter_rows(inputs, rows, prefetch=prefetch):
        assert isinstance(buf, GrowableArray) and buf.shape_tail == (3,)
        blocks.append(np.array(buf.nda))  # the next step overwrites buf
        seen.add(id(buf))
    sizes = [len(b) for b in blocks]
    total = len(expected)
    assert sizes == [rows] * (total // rows) + ([total % rows] if total % rows else [])
    np.testing.assert_array_equal(np.concatenate(blocks), expected)
    assert len(seen) == (1 if not prefetch or len(blocks) == 1 else 2)


def test_iter_rows_fills_the_given_buffer(numeric):
    inputs, expected = numeric
    buf = GrowableArray("int32", shape_tail=(3,))
    out = []
    for block in zarrpy.iter_rows(inputs, 50, buffer=buf):
        assert block is buf
        out.append(buf.nda.copy())
    np.testing.assert_array_equal(np.concatenate(out), expected)
    assert buf.reallocations == 1  # every full block fits the first allocation


def test_iter_rows_with_prefetch_alternates_two_buffers(numeric):
    inputs, _ = numeric
    buf = GrowableArray("int32", shape_tail=(3,))
    yielded = list(zarrpy.iter_rows(inputs, 64, buffer=buf, prefetch=True))
    assert yielded[0] is buf and yielded[1] is not buf and yielded[2] is buf


def test_closing_a_prefetching_iterator_stops_its_thread(numeric):
    inputs, _ = numeric
    before = {t for t in threading.enumerate() if t.name.startswith("zarrpy-prefetch")}
    it = zarrpy.iter_rows(inputs, 8, prefetch=True)
    next(it)
    it.close()
    after = {t for t in threading.enumerate() if t.name.startswith("zarrpy-prefetch") and t.is_alive()}
    assert after <= before


def test_iter_rows_trailing_selection(numeric):
    inputs, expected = numeric
    cols = np.concatenate([np.array(b.nda) for b in zarrpy.iter_rows(inputs, 32, selection=slice(1, 3))])
    np.testing.assert_array_equal(cols, expected[:, 1:3])
    one = zarrpy.iter_rows(inputs, 32, selection=(2,))
    first = next(one)
    assert first.shape_tail == ()
    np.testing.assert_array_equal(first.nda, expected[:32, 2])


def test_iter_rows_strings(strings):
    inputs, expected = strings
    out = []
    for buf in zarrpy.iter_rows(inputs, 7):
        assert isinstance(buf, GrowableRagged) and buf.kind == "str"
        out.append(buf.to_list())
    assert [len(b) for b in out[:-1]] == [7] * (len(out) - 1)
    assert [s for block in out for s in block] == expected


@pytest.mark.parametrize("prefetch", [False, True], ids=["serial", "prefetch"])
def test_iter_rows_ragged(ragged, prefetch):
    inputs, expected = ragged
    out = []
    for buf in zarrpy.iter_rows(inputs, 5, prefetch=prefetch):
        assert buf.kind == "ragged" and buf.dtype == np.int16
        out.extend(x.tolist() for x in buf.to_list())
    assert out == expected


def test_iter_rows_of_nothing():
    assert list(zarrpy.iter_rows([], 4)) == []
    empty = zarrpy.create_array({}, shape=(0, 2), dtype="int8", chunks=(1, 2))
    assert list(zarrpy.iter_rows([empty, empty], 4)) == []


# -- concat ------------------------------------------------------------------------


def test_concat_equals_concatenate(numeric, strings, ragged):
    inputs, expected = numeric
    buf = zarrpy.concat(inputs)
    np.testing.assert_array_equal(buf.nda, expected)
    assert buf.reallocations == 1 and buf.capacity == len(expected)
    assert zarrpy.concat(strings[0]).to_list() == strings[1]
    r = zarrpy.concat(ragged[0])
    assert [x.tolist() for x in r.to_list()] == ragged[1]
    assert r.capacity == len(ragged[1])  # offsets reserved once; values grew as read


def test_concat_of_1000_arrays_reallocates_once():
    store = MemoryStore()
    arrays = []
    for i in range(1000):
        a = zarrpy.create_array(store, name=f"x{i}", shape=(2, 2), dtype="float32", chunks=(2, 2))
        a[...] = i
        arrays.append(a)
    buf = zarrpy.concat(arrays)
    assert buf.reallocations == 1 and buf.shape == (2000, 2)
    np.testing.assert_array_equal(buf.nda[::2, 0], np.arange(1000, dtype="float32"))


def test_appending_without_knowing_the_total_grows_logarithmically():
    """What concat avoids: extending block by block doubles the capacity,
    so 1,000 extends of 3 rows reallocate at capacities 3, 6, 12, ..., 3072."""
    buf = GrowableArray("float32", shape_tail=(2,))
    for i in range(1000):
        buf.extend(np.full((3, 2), i, dtype="float32"))
    assert buf.reallocations == math.ceil(math.log2(1000)) + 1
    assert buf.capacity == 3 * 2**10


# -- read_into -------------------------------------------------------------------


def test_same_size_windows_reuse_one_allocation():
    a = zarrpy.create_array({}, shape=(7003, 2), dtype="float64", chunks=(64, 2))
    data = np.random.default_rng(3).random((7003, 2))
    a[...] = data
    buf = GrowableArray("float64", shape_tail=(2,))
    assert a.read_into(buf, slice(0, 7)) is buf
    assert buf.reallocations == 1
    for k in range(1, 1000):
        a.read_into(buf, slice(7 * k, 7 * k + 7))
        np.testing.assert_array_equal(buf.nda, data[7 * k : 7 * k + 7])
    assert buf.reallocations == 1 and buf.size == 7
    a.read_into(buf, slice(7000, None))  # the short last window just sets a smaller size
    assert buf.size == 3 and buf.reallocations == 1
    np.testing.assert_array_equal(buf.nda, data[7000:])
    # with the capacity given up front, 1,000 windows reallocate 0 times
    sized = GrowableArray("float64", capacity=7, shape_tail=(2,))
    storage = sized.nda.base
    for k in range(1000):
        a.read_into(sized, slice(7 * k, 7 * k + 7))
    assert sized.reallocations == 0 and sized.nda.base is storage
    np.testing.assert_array_equal(sized.nda, data[6993:7000])


def test_read_into_other_selections():
    a = zarrpy.create_array({}, shape=(6, 4, 3), dtype="uint16", chunks=(4, 2, 3))
    data = np.arange(72, dtype="uint16").reshape(6, 4, 3)
    a[...] = data
    buf = GrowableArray("uint16", shape_tail=(3,))
    np.testing.assert_array_equal(a.read_into(buf, (slice(None, None, 2), 1)).nda, data[::2, 1])
    np.testing.assert_array_equal(a.read_into(buf, (1, slice(None), slice(None))).nda, data[1])
    np.testing.assert_array_equal(a.read_into(buf, ([5, 0], 3)).nda, data[[5, 0], 3])


def test_read_into_ragged_buffers(strings, ragged):
    s = strings[0][1]
    buf = GrowableRagged("str")
    assert s.read_into(buf).to_list() == s[...].tolist()
    r = next(a for a in ragged[0] if a.shape[0] >= 2)
    rbuf = GrowableRagged("int16")
    r.read_into(rbuf, slice(1, None))
    assert rbuf.as_ragged().equals(r[1:])


def test_read_into_fills_fixed_width_and_bool_dtypes():
    a = zarrpy.create_array({}, shape=(3,), dtype="bool", chunks=(2,))
    a[...] = [True, False, True]
    assert a.read_into(GrowableArray("bool")).nda.tolist() == [True, False, True]


# -- errors ------------------------------------------------------------------------


def test_mismatched_arrays_are_named(numeric, strings):
    inputs = list(numeric[0][:4])
    inputs.append(zarrpy.create_array({}, shape=(2, 3), dtype="int64", chunks=(2, 3)))
    with pytest.raises(SelectionError, match=r"array 4 .*dtype int64.*array 0 has dtype int32"):
        zarrpy.iter_rows(inputs, 4)  # checked on the call, before any block is read
    inputs[4] = zarrpy.create_array({}, shape=(2, 5), dtype="int32", chunks=(2, 5))
    with pytest.raises(SelectionError, match=r"array 4 .*row shape \(5,\).*row shape \(3,\)"):
        zarrpy.concat(inputs)
    with pytest.raises(SelectionError, match=r"array 1 .*strings"):
        zarrpy.concat([numeric[0][0], strings[0][0]])
    scalar = zarrpy.create_array({}, shape=(), dtype="int32")
    with pytest.raises(SelectionError, match="array 1 .* 0-d"):
        zarrpy.concat([numeric[0][0], scalar])


def test_a_path_that_fails_to_open_is_reported(tmp_path):
    with pytest.raises(zarrpy.NodeNotFoundError):
        zarrpy.concat([str(tmp_path / "missing.zarr")])
    with pytest.raises(TypeError, match="array 0: expected a zarrpy.Array"):
        zarrpy.concat([np.zeros(3)])


def test_buffer_mismatches_name_both_sides(numeric, strings):
    a = numeric[0][0]
    with pytest.raises(SelectionError, match="buffer dtype int64 does not match the dtype int32"):
        a.read_into(GrowableArray("int64", shape_tail=(3,)))
    with pytest.raises(SelectionError, match=r"buffer row shape \(2,\) does not match the row shape \(3,\)"):
        a.read_into(GrowableArray("int32", shape_tail=(2,)))
    with pytest.raises(SelectionError, match="GrowableArray"):
        a.read_into(GrowableRagged("int32"))
    with pytest.raises(SelectionError, match="GrowableRagged"):
        strings[0][0].read_into(GrowableArray("uint8"))
    with pytest.raises(SelectionError, match="cannot hold the strings"):
        strings[0][0].read_into(GrowableRagged("bytes"))
    with pytest.raises(SelectionError, match="picks one element"):
        a.read_into(GrowableArray("int32", shape_tail=(3,)), (0, 0))
    with pytest.raises(SelectionError, match="buffer dtype"):
        zarrpy.iter_rows([a], 4, buffer=GrowableArray("float32", shape_tail=(3,)))
    with pytest.raises(TypeError, match="GrowableArray or GrowableRagged"):
        a.read_into(np.empty((3, 3), "int32"))
    with pytest.raises(ValueError, match="rows must be a positive integer"):
        zarrpy.iter_rows([a], 0)
    with pytest.raises(TypeError):
        zarrpy.iter_rows([a], 2.5)


def test_a_refused_read_leaves_the_buffer_as_it_was():
    from zarrpy.core.dtypes.optional import optional_of

    a = zarrpy.create_array({}, shape=(4,), dtype=optional_of("int16"), chunks=(2,))
    buf = GrowableArray(a.dtype)
    buf.extend(np.zeros(2, a.dtype))
    with pytest.raises(SelectionError, match="reads into a new result"):
        a.read_into(buf)
    assert buf.size == 2


# -- blocks that cut chunks --------------------------------------------------------


class _ChunkReadCounter(MemoryStore):
    """A MemoryStore counting the reads of each chunk key (a batched call counts each key once)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: dict[str, int] = {}
        self._inside = threading.local()

    def _count(self, key: str) -> None:
        if "/c/" in f"/{key}":
            self.reads[key] = self.reads.get(key, 0) + 1

    def get(self, key, byte_range=None):
        if not getattr(self._inside, "batch", False):
            self._count(key)
        return super().get(key, byte_range)

    def get_partial_values(self, requests):
        for key, _ in requests:
            self._count(key)
        self._inside.batch = True
        try:
            return super().get_partial_values(requests)
        finally:
            self._inside.batch = False


@pytest.mark.parametrize("prefetch", [False, True], ids=["serial", "prefetch"])
@pytest.mark.parametrize("rows", [1, 7, 96, 4096])
def test_a_chunk_cut_by_block_boundaries_is_read_once(rows, prefetch):
    store = _ChunkReadCounter()
    arrays, data = [], []
    for i, n in enumerate([2000, 1500, 37, 2000]):
        values = np.arange(n * 4, dtype="uint16").reshape(n, 4) + i
        a = zarrpy.create_array(store, name=f"a{i}", shape=(n, 4), dtype="uint16", chunks=(500, 4))
        a[...] = values
        arrays.append(a)
        data.append(values)
    store.reads.clear()
    blocks = [np.array(b.nda) for b in zarrpy.iter_rows(arrays, rows, prefetch=prefetch)]
    np.testing.assert_array_equal(np.concatenate(blocks), np.concatenate(data))
    assert all(len(b) == rows for b in blocks[:-1])
    assert store.reads and set(store.reads.values()) == {1}  # every chunk read once, cut or not
    assert len(store.reads) == sum(-(-len(d) // 500) for d in data)


@settings(max_examples=40, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 40), min_size=1, max_size=6),
    chunk_rows=st.integers(1, 9),
    rows=st.integers(1, 50),
    sharded=st.booleans(),
    prefetch=st.booleans(),
    tail=st.sampled_from([None, slice(1, 3), 2, (slice(None, None, 2),)]),
    pooled=st.booleans(),
)
def test_iter_rows_equals_concatenate_for_any_chunking(lengths, chunk_rows, rows, sharded, prefetch, tail, pooled):
    """``pooled``: every block goes to the pool, as big blocks do (small ones are read inline)."""
    with mock.patch.object(_iterate, "INLINE_READ_NBYTES", -1 if pooled else _iterate.INLINE_READ_NBYTES):
        _check_iter_rows_against_concatenate(lengths, chunk_rows, rows, sharded, prefetch, tail)


def _check_iter_rows_against_concatenate(lengths, chunk_rows, rows, sharded, prefetch, tail):
    store = MemoryStore()
    arrays, data = [], []
    for i, n in enumerate(lengths):
        values = np.arange(n * 3, dtype="int32").reshape(n, 3) * 7 + i
        shards = {"shards": (chunk_rows * 2, 3)} if sharded else {}
        a = zarrpy.create_array(store, name=f"a{i}", shape=(n, 3), dtype="int32", chunks=(chunk_rows, 3), **shards)
        if n:
            a[...] = values
        arrays.append(a)
        data.append(values)
    expected = np.concatenate(data)
    if tail is not None:
        expected = expected[(slice(None), *(tail if isinstance(tail, tuple) else (tail,)))]
    blocks = [np.array(b.nda) for b in zarrpy.iter_rows(arrays, rows, selection=tail, prefetch=prefetch)]
    got = np.concatenate(blocks) if blocks else expected[:0]
    np.testing.assert_array_equal(got, expected)
    assert all(len(b) == rows for b in blocks[:-1])


class _ThreadRecorder(MemoryStore):
    """A MemoryStore noting the names of the threads that read chunks."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()

    def _note(self, key: str) -> None:
        if "/c/" in f"/{key}":
            self.threads.add(threading.current_thread().name)

    def get(self, key, byte_range=None):
        self._note(key)
        return super().get(key, byte_range)

    def get_partial_values(self, requests):
        for key, _ in requests:
            self._note(key)
        return super().get_partial_values(requests)


def test_small_blocks_are_read_by_the_caller_and_big_ones_on_the_pool(monkeypatch):
    """A block decoding at most INLINE_READ_NBYTES is read in the calling
    thread (the pool costs more than it saves there); a bigger one spreads
    its arrays over the pool (on a store where each request is a round trip,
    a read's chunks are fetched in one batch and decoded on the pool; the
    chunk read in part is read there too)."""
    monkeypatch.setenv("ZARRPY_THREADS", "2")
    store = _ThreadRecorder()
    arrays, data = [], []
    for i in range(3):
        values = np.arange(3000 * 64, dtype="float64").reshape(3000, 64) + i  # chunks of 256 KiB
        a = zarrpy.create_array(store, name=f"a{i}", shape=(3000, 64), dtype="float64", chunks=(500, 64))
        a[...] = values
        arrays.append(a)
        data.append(values)
    expected = np.concatenate(data)
    caller = threading.current_thread().name
    for rows, pooled in ((700, False), (5900, True)):  # blocks decoding 512 KiB, or 3 MiB (a cut chunk too)
        assert (_iterate._decoded_nbytes(next(_iterate._plan([3000] * 3, rows)), [
            _iterate._Source(a, "") for a in arrays]) > _iterate.INLINE_READ_NBYTES) is pooled
        store.threads.clear()
        got = np.concatenate([np.array(b.nda) for b in zarrpy.iter_rows(arrays, rows)])
        np.testing.assert_array_equal(got, expected)
        if pooled:  # the cut chunk read on the pool
            assert any(name.startswith("zarrpy") for name in store.threads), store.threads
        else:
            assert store.threads == {caller}
