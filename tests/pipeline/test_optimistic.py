"""Read-modify-write by conditional writes (zarrpy.pipeline.optimistic).

Another writer's update is made to land between this writer's read and its
write: the conditional write is refused, the update is redone on the new
content, and neither writer's inner chunks are lost. Round trips and
requests of a partial write on a store with latency are pinned.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence

import numpy as np
import pytest

import zarrpy
from zarrpy.errors import StoreError
from zarrpy.pipeline import optimistic
from zarrpy.stores.memory import MemoryStore
from zarrpy.stores.writes import ABSENT, ConditionalWrite
from tests.wave_store import WaveStore


class Writer(MemoryStore):
    """A MemoryStore over a shared dict with an identity of its own, as a
    store object in another process has: it shares no in-process locks with
    the others, so only the conditional writes keep updates apart.
    ``before_write`` runs once, just before the first conditional write."""

    def __init__(self, data: dict, name: str, *, conditional_deletes: bool = True):
        super().__init__(data)
        self.name = name
        self.before_write: list = []
        self.refused = 0
        self.supports_conditional_deletes = conditional_deletes  # type: ignore[misc]

    @property
    def identity(self) -> Hashable:
        return ("writer", self.name)

    def set_conditional(self, writes: Sequence[ConditionalWrite]) -> list[bool]:
        while self.before_write:
            self.before_write.pop(0)()
        done = super().set_conditional(writes)
        self.refused += done.count(False)
        return done


def _sharded(store, **kw):
    return zarrpy.create_array(store, shape=(16, 16), chunks=(4, 4), shards=(8, 8), dtype="int32",
                               fill_value=0, **kw)


def test_a_write_that_lands_between_read_and_write_is_kept():
    data: dict = {}
    a_store, b_store = Writer(data, "a"), Writer(data, "b")
    a = _sharded(a_store)
    b = zarrpy.open_array(b_store, mode="r+")
    before = optimistic.conflict_count()
    # While a's update of shard (0, 0) is in flight, b writes another inner chunk of it.
    a_store.before_write.append(lambda: b.__setitem__((slice(4, 8), slice(4, 8)), 2))
    a[0:4, 0:4] = 1
    expected = np.zeros((16, 16), "int32")
    expected[0:4, 0:4] = 1
    expected[4:8, 4:8] = 2
    np.testing.assert_array_equal(zarrpy.open_array(MemoryStore(data))[...], expected)
    assert a_store.refused == 1
    assert optimistic.conflict_count() == before + 1


def test_a_new_shard_is_created_only_if_still_absent():
    data: dict = {}
    a_store, b_store = Writer(data, "a"), Writer(data, "b")
    a = _sharded(a_store)
    b = zarrpy.open_array(b_store, mode="r+")
    a_store.before_write.append(lambda: b.__setitem__((slice(8, 12), slice(8, 12)), 7))
    a[12:16, 12:16] = 3  # shard (1, 1) is absent when a reads it; b creates it first
    got = zarrpy.open_array(MemoryStore(data))[8:16, 8:16]
    assert (got[0:4, 0:4] == 7).all() and (got[4:8, 4:8] == 3).all()
    assert a_store.refused == 1


@pytest.mark.parametrize("conditional_deletes", [True, False])
def test_emptying_a_shard_keeps_a_concurrent_write(conditional_deletes):
    data: dict = {}
    a_store = Writer(data, "a", conditional_deletes=conditional_deletes)
    b_store = Writer(data, "b", conditional_deletes=conditional_deletes)
    a = _sharded(a_store)
    a[0:4, 0:4] = 1
    b = zarrpy.open_array(b_store, mode="r+")
    # a clears the only stored inner chunk (a delete of the shard) while b writes another.
    a_store.before_write.append(lambda: b.__setitem__((slice(0, 4), slice(4, 8)), 5))
    a[0:4, 0:4] = 0
    got = zarrpy.open_array(MemoryStore(data))[0:8, 0:8]
    assert (got[0:4, 4:8] == 5).all() and (got[0:4, 0:4] == 0).all()
    # And emptied for real afterwards: deleted, or (no conditional deletes) an index of no inner chunk.
    b[0:4, 4:8] = 0
    np.testing.assert_array_equal(zarrpy.open_array(MemoryStore(data))[...], 0)
    assert ("c/0/0" in data) is not conditional_deletes


def test_plain_chunks_are_merged_conditionally_too():
    data: dict = {}
    a_store, b_store = Writer(data, "a"), Writer(data, "b")
    a = zarrpy.create_array(a_store, shape=(8,), chunks=(8,), dtype="uint8", fill_value=0, compressors=None)
    b = zarrpy.open_array(b_store, mode="r+")
    a_store.before_write.append(lambda: b.__setitem__(slice(6, 8), 9))
    a[0:2] = 4
    np.testing.assert_array_equal(zarrpy.open_array(MemoryStore(data))[...], [4, 4, 0, 0, 0, 0, 9, 9])


def test_threads_with_separate_stores_lose_nothing():
    """Four writers with their own store objects (no shared locks) write
    disjoint inner chunks of the same shards, several rounds each."""
    data: dict = {}
    stores = [Writer(data, f"w{i}") for i in range(4)]
    _sharded(stores[0])
    arrays = [zarrpy.open_array(s, mode="r+") for s in stores]
    barrier = threading.Barrier(4)

    def run(i: int) -> None:
        barrier.wait()
        for r in range(6):
            for ci in range(4):  # writer i owns inner chunk column i of every row of inner chunks
                arrays[i][ci * 4 : ci * 4 + 4, i * 4 : i * 4 + 4] = 100 * i + r

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    expected = np.repeat(np.array([5, 105, 205, 305], "int32"), 4)[None, :].repeat(16, 0)
    np.testing.assert_array_equal(zarrpy.open_array(MemoryStore(data))[...], expected)


class AlwaysChanged(Writer):
    def set_conditional(self, writes):
        return [False] * len(writes)


def test_a_key_that_never_settles_is_a_store_error_naming_it(monkeypatch):
    monkeypatch.setattr(optimistic, "MAX_ATTEMPTS", 3)
    monkeypatch.setattr(optimistic, "BACKOFF_SECONDS", 0.0)
    data: dict = {}
    _sharded(MemoryStore(data))  # created where writes go through (creating writes conditionally too)
    store = AlwaysChanged(data, "x")
    a = zarrpy.open_array(store, mode="r+")
    with pytest.raises(StoreError, match=r"'c/0/0'.*after 3 conditional writes"):
        a[0, 0] = 1
    assert "c/0/0" not in store._data


def test_a_partial_sharded_write_is_two_round_trips():
    """Read the shards with versions (one batch), write them back
    conditionally beside the whole-shard writes (one batch)."""
    store = WaveStore(MemoryStore(), latency=0.01)
    a = _sharded(store)
    a[...] = 1
    store.reset()
    a[2:14, 0:8] = 2  # shards (0, 0) and (1, 0) in part
    assert store.waves == 2
    assert sorted(store.keys("versioned")) == ["c/0/0", "c/1/0"]
    assert sorted(store.keys("set")) == ["c/0/0", "c/1/0"]
    assert store.requests == 4
    store.reset()
    a[:, 0:8] = 3  # two shards whole, no read
    assert store.waves == 1 and store.requests == 2 and not store.keys("versioned")


def test_create_only_if_absent_in_memory():
    store = MemoryStore()
    assert store.set_conditional([ConditionalWrite("k", b"1", ABSENT)]) == [True]
    assert store.set_conditional([ConditionalWrite("k", b"2", ABSENT)]) == [False]
    assert store.get("k") == b"1"
