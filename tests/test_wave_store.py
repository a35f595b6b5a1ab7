"""The latency-injecting counting store of ``tests/wave_store.py``: waves
(sequential round trips) and requests are counted as a remote store would
see them, and every Store method reaches the inner store."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

import zarrpy
from tests.wave_store import Call, Request, WaveStore, wave_depths
from zarrpy.core.byte_range import RangeRequest, SuffixRequest, VersionedRequest
from zarrpy.errors import KeyNotFoundError, ProcessLocalError, ReadOnlyError
from zarrpy.stores import LocalStore, MemoryStore

LATENCY = 0.03


def _store(**kwargs) -> WaveStore:
    inner = MemoryStore()
    for i in range(4):
        inner.set(f"k{i}", bytes(range(10 + i)))
    return WaveStore(inner, latency=LATENCY, **kwargs)


def _at_once(*calls) -> None:
    """Run each callable on its own thread, all released together."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        call()

    threads = [threading.Thread(target=run, args=(c,)) for c in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)


def test_two_calls_from_two_threads_at_once_are_one_wave():
    ws = _store()
    _at_once(lambda: ws.get("k0"), lambda: ws.get("k1", RangeRequest(2, 5)))
    assert ws.waves == 1
    assert ws.requests == 2
    assert sorted(ws.keys("get")) == ["k0", "k1"]
    assert len({c.thread for c in ws.log}) == 2


def test_sequential_calls_are_one_wave_each():
    ws = _store()
    assert ws.get("k0") == bytes(range(10))
    assert ws.get("k1", SuffixRequest(3)) == bytes([8, 9, 10])
    assert ws.waves == 2 and ws.requests == 2
    ws.reset()
    assert ws.waves == 0 and ws.requests == 0 and ws.log == []


def test_a_batch_is_one_wave_of_one_request_per_item():
    ws = _store()
    got = ws.get_partial_values([("k0", None), ("k1", RangeRequest(0, 2)), ("nope", None)])
    assert got == [bytes(range(10)), b"\x00\x01", None]
    assert ws.waves == 1 and ws.requests == 3 and len(ws.log) == 1
    call = ws.log[0]
    assert call.end - call.start >= LATENCY  # the batch waited (once: it is one call)
    ws.reset()
    assert ws.get_partial_values([]) == [] and ws.log == []  # nothing sent


def test_a_chain_with_a_concurrent_middle_is_three_waves():
    ws = _store()
    ws.get("k0")
    _at_once(lambda: ws.getsize("k1"), lambda: ws.get_partial_values([("k2", None), ("k3", None)]))
    ws.get("k0")
    assert ws.waves == 3 and ws.requests == 5
    waves = ws.wave_list()
    assert [sorted(r.key for r in w) for w in waves] == [["k0"], ["k1", "k2", "k3"], ["k0"]]


def test_wave_depths_of_given_intervals():
    def call(start, end):
        return Call("get", (Request("get", "k"),), start, end, 0)

    # a: 0-1, b: 0.5-2 (overlaps a), c: 1-3 (starts as a ends), d: 2.5-4 (after b, inside c), e: 3-4 (after c)
    calls = [call(0, 1), call(0.5, 2), call(1, 3), call(2.5, 4), call(3, 4)]
    assert wave_depths(calls) == [1, 1, 2, 2, 3]
    assert wave_depths([]) == []


def test_every_kind_of_request_is_tagged_and_forwarded():
    ws = _store()
    assert ws.getsize("k2") == 12
    with pytest.raises(KeyNotFoundError):
        ws.getsize("nope")
    assert ws.exists("k0") and not ws.exists("nope")
    assert sorted(ws.list_prefix("k")) == ["k0", "k1", "k2", "k3"]
    assert sorted(ws.list()) == ["k0", "k1", "k2", "k3"]
    assert sorted(ws.list_dir("")) == ["k0", "k1", "k2", "k3"]
    assert dict(ws.list_prefix_with_sizes("k")) == {"k0": 10, "k1": 11, "k2": 12, "k3": 13}
    assert ws.getsize_prefix("") == 46
    assert [r.kind for r in ws.requests_of()] == ["size", "size", "exists", "exists"] + ["list"] * 5
    assert ws.waves == 9


def test_versioned_reads_are_forwarded_with_their_condition():
    ws = _store()
    first, missing = ws.get_versioned([VersionedRequest("k1", SuffixRequest(2)), VersionedRequest("nope")])
    assert missing is None
    assert first.data == bytes([9, 10]) and first.size == 11 and first.version is not None
    (same,) = ws.get_versioned([("k1", RangeRequest(0, 1), first.version)])
    assert same.data == b"\x00" and not same.changed
    ws.put("k1", b"new value")  # replaced behind the reader's back
    (changed,) = ws.get_versioned([VersionedRequest("k1", RangeRequest(0, 1), first.version)])
    assert changed.changed and changed.size == 9
    assert ws.requests == 4 and ws.waves == 3
    assert [(r.kind, r.if_match) for r in ws.requests_of("versioned")][-1] == ("versioned", first.version)


def test_writes_are_forwarded_and_logged():
    ws = _store()
    ws.set("a/b", b"xy")
    ws.set_many([("c", b"1"), ("d", b"2")])
    ws.delete("k0")
    ws.delete_prefix("a/")
    assert ws.raw("c") == b"1" and ws.raw("k0") is None and ws.raw("a/b") is None
    assert [r.kind for r in ws.requests_of()] == ["set", "set", "set", "delete", "delete"]
    assert ws.waves == 4  # set_many is one batch
    with pytest.raises(ReadOnlyError):
        WaveStore(MemoryStore(read_only=True), latency=0).set("x", b"")


def test_settings_and_identity_are_the_inner_stores():
    shared: dict[str, bytes] = {}
    inner = MemoryStore(shared)
    ws = WaveStore(inner, latency=0)
    assert ws.whole_read_nbytes == 0  # a remote store by default
    assert WaveStore(inner, whole_read_nbytes=None).whole_read_nbytes == inner.whole_read_nbytes
    assert WaveStore(inner, whole_read_nbytes=123).whole_read_nbytes == 123
    assert ws.request_concurrency == inner.request_concurrency
    assert WaveStore(inner, request_concurrency=5).request_concurrency == 5
    ws.request_concurrency, ws.whole_read_nbytes = 7, None  # set as on any store
    assert ws.request_concurrency == 7 and ws.whole_read_nbytes == inner.whole_read_nbytes
    assert ws.identity == inner.identity and ws.url is None and ws.process_local
    assert ws == WaveStore(MemoryStore(shared)) and ws != WaveStore(MemoryStore())
    assert ws.read_only is False and WaveStore(MemoryStore(read_only=True)).read_only is True


def test_an_array_reads_through_it_and_pickles_as_on_the_inner_store(tmp_path):
    data = np.arange(60, dtype="uint16").reshape(6, 10)
    local = LocalStore(tmp_path / "x.zarr")
    zarrpy.create_array(local, shape=data.shape, dtype="uint16", chunks=(3, 5))[...] = data
    ws = WaveStore(local, latency=0.001)
    a = zarrpy.open_array(ws, mode="r")
    np.testing.assert_array_equal(a[...], data)
    assert ws.reads_of("c/0/0") == 1 and ws.url == local.url
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b.store, WaveStore) and b.store is not ws and b.store.latency == ws.latency
    assert ws.reads_of("zarr.json") == 1  # the copy reopened the array through its own log
    b.store.reset()
    np.testing.assert_array_equal(b[...], data)
    assert b.store.reads_of("c/1/1") == 1 and ws.reads_of("c/1/1") == 1

    mem = WaveStore(latency=0)
    zarrpy.create_array(mem, shape=(2,), dtype="uint16", chunks=(2,))
    with pytest.raises(ProcessLocalError):
        pickle.dumps(zarrpy.open_array(mem))
