from __future__ import annotations

import pickle

import pytest

from zarrpy.stores import MemoryStore

from .contract import StoreContract, eio


class _BrokenMapping(dict):  # type: ignore[type-arg]
    """A mapping whose every access fails (think a shelve on a failing disk)."""

    __getitem__ = __setitem__ = __delitem__ = __contains__ = __iter__ = eio  # type: ignore[assignment]
    get = pop = items = keys = values = eio  # type: ignore[assignment]


class TestMemoryStore(StoreContract):
    @pytest.fixture
    def store(self) -> MemoryStore:
        return MemoryStore()

    def open_read_only(self, store: MemoryStore) -> MemoryStore:
        return MemoryStore(store._data, read_only=True)

    def break_backend(self, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(store, "_data", _BrokenMapping())


def test_uses_the_given_dict() -> None:
    backing: dict[str, bytes] = {"a/b": b"1"}
    store = MemoryStore(backing)
    assert store.get("a/b") == b"1"
    store.set("c", b"2")
    assert backing == {"a/b": b"1", "c": b"2"}


def test_url_is_none_and_equality_is_by_backing_dict() -> None:
    backing: dict[str, bytes] = {}
    a, b = MemoryStore(backing), MemoryStore(backing)
    assert a.url is None
    assert a == a and a == b and hash(a) == hash(b)
    assert a != MemoryStore()


def test_pickles_by_value_and_copy_is_independent() -> None:
    store = MemoryStore()
    store.set("k", b"v")
    clone = pickle.loads(pickle.dumps(store))
    clone.set("k", b"changed")
    clone.set("only-in-clone", b"x")
    assert store.get("k") == b"v"
    assert store.get("only-in-clone") is None
    assert clone != store
