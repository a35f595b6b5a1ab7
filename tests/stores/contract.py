"""The behaviour every zarrpy store must have, as a reusable test class.

Subclass :class:`StoreContract` in a ``test_*.py`` module (the class name
must start with ``Test``) and provide:

- a ``store`` fixture returning an empty, writable store;
- ``open_read_only(store)``, returning a read-only store over the same data;
- ``break_backend(store, monkeypatch)``, making every I/O call of the store's
  backend raise ``OSError(EIO)`` (until ``monkeypatch.undo()``): the store must
  answer with a :class:`~zarrpy.errors.StoreError` naming the key.

Every store promises atomic overwrites (a reader racing a writer sees the old
or the new value, never a mix). ``threads`` sets how many threads the
concurrency tests use.
"""

from __future__ import annotations

import errno
import pickle
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from zarrpy.core.byte_range import (
    ByteRequest,
    OffsetRequest,
    RangeRequest,
    SuffixRequest,
)
from zarrpy.errors import InvalidKeyError, KeyNotFoundError, ReadOnlyError, StoreError
from zarrpy.stores.abc import Store

VALUE = b"0123456789"

# (request, expected bytes of VALUE); clamped like a file read.
RANGE_CASES: list[tuple[ByteRequest | None, bytes]] = [
    (None, VALUE),
    (RangeRequest(0, 10), VALUE),
    (RangeRequest(2, 5), b"234"),
    (RangeRequest(0, 1), b"0"),
    (RangeRequest(0, 0), b""),
    (RangeRequest(4, 4), b""),
    (RangeRequest(10, 10), b""),
    (RangeRequest(8, 20), b"89"),
    (RangeRequest(10, 20), b""),
    (RangeRequest(15, 20), b""),
    (OffsetRequest(0), VALUE),
    (OffsetRequest(3), b"3456789"),
    (OffsetRequest(9), b"9"),
    (OffsetRequest(10), b""),
    (OffsetRequest(15), b""),
    (SuffixRequest(0), b""),
    (SuffixRequest(1), b"9"),
    (SuffixRequest(4), b"6789"),
    (SuffixRequest(10), VALUE),
    (SuffixRequest(15), VALUE),
]

EMPTY_VALUE_REQUESTS: list[ByteRequest | None] = [
    None,
    RangeRequest(0, 0),
    RangeRequest(0, 5),
    RangeRequest(3, 5),
    OffsetRequest(0),
    OffsetRequest(2),
    SuffixRequest(0),
    SuffixRequest(5),
]

INVALID_KEYS = ["..", "a/../b", "../a", "/abs", "/", "a//b", "a/", "./a", "a/.", "a\x00b", "a\\b", ""]

LISTING_KEYS = ["zarr.json", "a/zarr.json", "a/c/0/0", "a/c/0/1", "ab/x", "b"]


def _ids(cases: list) -> list[str]:
    return [repr(c[0] if isinstance(c, tuple) else c) for c in cases]


class StoreContract:
    threads = 8

    @pytest.fixture
    def store(self) -> Store:
        raise NotImplementedError("a StoreContract subclass must provide a `store` fixture")

    def open_read_only(self, store: Store) -> Store:
        raise NotImplementedError

    def break_backend(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        raise NotImplementedError

    # -- get / set / delete ---------------------------------------------------
    def test_missing_key_is_none(self, store: Store) -> None:
        assert store.get("nope") is None
        assert store.get("a/b/nope") is None
        assert not store.exists("nope")

    @pytest.mark.parametrize("request_", [c[0] for c in RANGE_CASES], ids=_ids(RANGE_CASES))
    def test_missing_key_with_range_is_none(self, store: Store, request_: ByteRequest | None) -> None:
        assert store.get("nope", request_) is None

    def test_set_get(self, store: Store) -> None:
        store.set("zarr.json", b'{"zarr_format": 3}')
        store.set("a/b/c/0.0", VALUE)
        assert store.get("zarr.json") == b'{"zarr_format": 3}'
        value = store.get("a/b/c/0.0")
        assert value == VALUE and type(value) is bytes
        assert store.exists("a/b/c/0.0")

    def test_set_bytes_like(self, store: Store) -> None:
        store.set("ba", bytearray(b"xyz"))
        store.set("mv", memoryview(b"uvw"))
        assert store.get("ba") == b"xyz" and type(store.get("ba")) is bytes
        assert store.get("mv") == b"uvw"

    def test_empty_value(self, store: Store) -> None:
        store.set("empty", b"")
        assert store.get("empty") == b""
        assert store.exists("empty")
        assert list(store.list()) == ["empty"]

    @pytest.mark.parametrize("request_", EMPTY_VALUE_REQUESTS, ids=_ids(EMPTY_VALUE_REQUESTS))
    def test_ranges_of_empty_value(self, store: Store, request_: ByteRequest | None) -> None:
        store.set("empty", b"")
        assert store.get("empty", request_) == b""

    @pytest.mark.parametrize(("request_", "expected"), RANGE_CASES, ids=_ids(RANGE_CASES))
    def test_byte_ranges(self, store: Store, request_: ByteRequest | None, expected: bytes) -> None:
        store.set("a/k", VALUE)
        assert store.get("a/k", request_) == expected

    def test_open_reader_answers_like_get(self, store: Store) -> None:
        """``open_reader`` (one reader for one partial decode) gives what
        ``get`` gives for every request, its size, and None for a missing key."""
        store.set("a/k", VALUE)
        with store.open_reader("a/k") as reader:
            assert reader.size() == len(VALUE)
            for request, expected in RANGE_CASES:
                assert reader(request) == expected, request
            assert reader.read_many([r for r, _ in RANGE_CASES]) == [e for _, e in RANGE_CASES]
        with store.open_reader("a/missing") as reader:
            assert reader.size() is None
            assert reader(None) is None
            assert reader.read_many([RangeRequest(0, 2), None]) == [None, None]

    def test_get_scratch_answers_like_get(self, store: Store) -> None:
        """``get_scratch`` gives the whole value (bytes-like, maybe a reused
        buffer valid inside the block), None for a missing key."""
        big = bytes(range(256)) * 1024
        store.set("a/k", VALUE)
        store.set("big", big)
        store.set("empty", b"")
        for key, value in [("a/k", VALUE), ("big", big), ("empty", b""), ("a/k", VALUE)]:
            with store.get_scratch(key) as data:
                assert data is not None and bytes(data) == value
        with store.get_scratch("a/missing") as data:
            assert data is None

    def test_open_reader_is_shared_by_threads(self, store: Store) -> None:
        value = bytes(range(256)) * 64
        store.set("big", value)
        with store.open_reader("big") as reader:
            def read(i: int) -> bytes | None:
                return reader(RangeRequest(i * 97, i * 97 + 300))

            with ThreadPoolExecutor(self.threads) as pool:
                got = list(pool.map(read, range(150)))
        assert got == [value[i * 97 : i * 97 + 300] for i in range(150)]

    def test_byte_ranges_large_value(self, store: Store) -> None:
        value = bytes(range(256)) * 1024  # 256 KiB
        store.set("big", value)
        assert store.get("big") == value
        assert store.get("big", RangeRequest(1000, 70000)) == value[1000:70000]
        assert store.get("big", OffsetRequest(200_000)) == value[200_000:]
        assert store.get("big", SuffixRequest(12345)) == value[-12345:]

    def test_overwrite_replaces_whole_value(self, store: Store) -> None:
        store.set("k", b"a long first value")
        store.set("k", b"short")
        assert store.get("k") == b"short"
        assert store.get("k", SuffixRequest(100)) == b"short"
        assert store.get("k", OffsetRequest(2)) == b"ort"
        store.set("k", b"")
        assert store.get("k") == b""

    def test_delete(self, store: Store) -> None:
        store.set("a/b", b"1")
        store.set("a/c", b"2")
        store.delete("a/b")
        assert store.get("a/b") is None
        assert store.get("a/c") == b"2"
        assert sorted(store.list()) == ["a/c"]
        store.delete("a/b")  # missing: not an error
        store.delete("never/was")
        store.delete("a/c")
        assert list(store.list()) == []
        store.set("a/c", b"3")  # the emptied "directory" can be used again
        assert store.get("a/c") == b"3"

    def test_delete_prefix(self, store: Store) -> None:
        for key in LISTING_KEYS:
            store.set(key, key.encode())
        store.delete_prefix("a/")
        assert sorted(store.list()) == ["ab/x", "b", "zarr.json"]

    # -- get_partial_values ------------------------------------------------------
    def test_get_partial_values(self, store: Store) -> None:
        store.set("x", VALUE)
        store.set("d/y", b"abcdef")
        requests = [(key, req) for req, _ in RANGE_CASES for key in ("x", "missing")]
        requests += [("d/y", SuffixRequest(2)), ("x", None), ("x", None), ("d/missing", RangeRequest(0, 3))]
        expected = [exp for _, exp in RANGE_CASES for exp in (exp, None)]
        expected += [b"ef", VALUE, VALUE, None]
        assert store.get_partial_values(requests) == expected

    def test_get_partial_values_empty(self, store: Store) -> None:
        assert store.get_partial_values([]) == []

    # -- listing ---------------------------------------------------------------
    @pytest.fixture
    def filled(self, store: Store) -> Store:
        for key in LISTING_KEYS:
            store.set(key, key.encode())
        return store

    def test_list_empty(self, store: Store) -> None:
        assert list(store.list()) == []
        assert list(store.list_prefix("")) == []
        assert list(store.list_dir("")) == []
        assert list(store.list_dir("a")) == []

    def test_list(self, filled: Store) -> None:
        assert sorted(filled.list()) == sorted(LISTING_KEYS)

    @pytest.mark.parametrize(
        ("prefix", "expected"),
        [
            ("", sorted(LISTING_KEYS)),
            ("a/", ["a/c/0/0", "a/c/0/1", "a/zarr.json"]),
            ("a", ["a/c/0/0", "a/c/0/1", "a/zarr.json", "ab/x"]),  # a string prefix
            ("a/c/0/", ["a/c/0/0", "a/c/0/1"]),
            ("a/c/0/1", ["a/c/0/1"]),
            ("a/z", ["a/zarr.json"]),
            ("zarr.json", ["zarr.json"]),
            ("nope/", []),
            ("nope", []),
            ("b/", []),
        ],
    )
    def test_list_prefix(self, filled: Store, prefix: str, expected: list[str]) -> None:
        assert sorted(filled.list_prefix(prefix)) == expected

    @pytest.mark.parametrize(
        ("prefix", "expected"),
        [
            ("", ["a", "ab", "b", "zarr.json"]),
            ("a", ["c", "zarr.json"]),
            ("a/", ["c", "zarr.json"]),
            ("a/c", ["0"]),
            ("a/c/0/", ["0", "1"]),
            ("ab", ["x"]),
            ("nope", []),
            ("b", []),  # a key, not a "directory"
        ],
    )
    def test_list_dir(self, filled: Store, prefix: str, expected: list[str]) -> None:
        assert sorted(filled.list_dir(prefix)) == expected

    # -- sizes -------------------------------------------------------------------
    def test_sizes(self, filled: Store) -> None:
        filled.set("a/empty", b"")
        assert filled.getsize("a/c/0/0") == len(b"a/c/0/0")
        assert filled.getsize("a/empty") == 0
        assert sorted(filled.list_prefix_with_sizes("a/")) == sorted(
            [(k, len(k)) for k in LISTING_KEYS if k.startswith("a/")] + [("a/empty", 0)]
        )
        assert filled.getsize_prefix("a") == sum(len(k) for k in LISTING_KEYS if k.startswith("a/"))
        assert filled.getsize_prefix("") == sum(len(k) for k in LISTING_KEYS)
        for missing in ("nope", "a/c", "a/c/0/2"):  # "a/c" is a "directory", not a key
            with pytest.raises(KeyNotFoundError, match=repr(missing)):
                filled.getsize(missing)
        with pytest.raises(FileNotFoundError):  # zarr-python's error for a missing key
            filled.getsize("nope")

    # -- invalid keys ---------------------------------------------------------------
    @pytest.mark.parametrize("key", INVALID_KEYS, ids=repr)
    def test_invalid_key_raises_and_writes_nothing(self, store: Store, key: str) -> None:
        with pytest.raises(InvalidKeyError):
            store.set(key, b"x")
        with pytest.raises(InvalidKeyError):
            store.get(key)
        with pytest.raises(InvalidKeyError):
            store.get(key, RangeRequest(0, 1))
        with pytest.raises(InvalidKeyError):
            store.get_partial_values([("ok", None), (key, None)])
        with pytest.raises(InvalidKeyError):
            store.delete(key)
        with pytest.raises(InvalidKeyError):
            store.set_many([("ok", b"1"), (key, b"2")])
        assert sorted(store.list()) == ["ok"]  # set_many wrote the valid key only
        assert store.get("ok") == b"1"

    @pytest.mark.parametrize("prefix", ["../", "/abs/", "..", "a/../", "a//b/", "a\x00/"], ids=repr)
    def test_invalid_prefix_raises(self, store: Store, prefix: str) -> None:
        with pytest.raises(InvalidKeyError):
            list(store.list_prefix(prefix))
        with pytest.raises(InvalidKeyError):
            list(store.list_dir(prefix))

    # -- read-only -------------------------------------------------------------------
    def test_read_only(self, store: Store) -> None:
        store.set("a/k", VALUE)
        ro = self.open_read_only(store)
        assert ro.read_only
        assert ro.get("a/k") == VALUE
        assert ro.get("a/k", SuffixRequest(3)) == b"789"
        assert ro.get_partial_values([("a/k", RangeRequest(0, 2)), ("nope", None)]) == [b"01", None]
        assert sorted(ro.list()) == ["a/k"]
        for write in (
            lambda: ro.set("a/k", b"new"),
            lambda: ro.set("b", b"new"),
            lambda: ro.delete("a/k"),
            lambda: ro.delete("nope"),
            lambda: ro.delete_prefix(""),
            lambda: ro.set_many([("c", b"1")]),
        ):
            with pytest.raises(ReadOnlyError):
                write()
        assert store.get("a/k") == VALUE
        assert sorted(store.list()) == ["a/k"]

    # -- pickling ----------------------------------------------------------------------
    def test_pickle_round_trip(self, store: Store) -> None:
        store.set("a/k", VALUE)
        clone = pickle.loads(pickle.dumps(store))
        assert type(clone) is type(store)
        assert clone.read_only == store.read_only
        assert clone.url == store.url
        assert clone.get("a/k") == VALUE
        assert clone.get("a/k", RangeRequest(1, 3)) == b"12"
        clone.set("a/new", b"n")
        assert clone.get("a/new") == b"n"
        assert "a/new" in set(clone.list_prefix("a/"))

    def test_pickle_keeps_read_only(self, store: Store) -> None:
        store.set("k", b"v")
        clone = pickle.loads(pickle.dumps(self.open_read_only(store)))
        assert clone.read_only and clone.get("k") == b"v"
        with pytest.raises(ReadOnlyError):
            clone.set("k", b"w")

    # -- threads ----------------------------------------------------------------------
    def test_concurrent_writes_of_distinct_keys(self, store: Store) -> None:
        def work(t: int) -> None:
            for i in range(5):
                store.set(f"t{t}/c/{i}", f"{t}.{i}".encode())

        with ThreadPoolExecutor(self.threads) as pool:
            list(pool.map(work, range(self.threads)))
        keys = sorted(store.list())
        assert keys == sorted(f"t{t}/c/{i}" for t in range(self.threads) for i in range(5))
        assert all(store.get(k) == k[1:].replace("/c/", ".").encode() for k in keys)

    def test_concurrent_overwrite_is_all_or_nothing(self, store: Store) -> None:
        values = [bytes([65 + i]) * (1000 * (i + 1)) for i in range(4)]
        store.set("k", values[0])
        stop = threading.Event()
        seen: list[bytes | None] = []

        def read() -> None:
            while not stop.is_set():
                seen.append(store.get("k"))

        reader = threading.Thread(target=read)
        reader.start()
        try:
            for _ in range(5):
                for value in values:
                    store.set("k", value)
        finally:
            stop.set()
            reader.join(timeout=30)
        assert seen and all(v in values for v in seen)

    # -- backend failures --------------------------------------------------------------
    def test_backend_errors_are_store_errors_naming_the_key(
        self, store: Store, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An OSError of the backend (EIO here; permission denied, disk full …)
        reaches the caller as a StoreError naming the key, the OSError chained."""
        store.set("a/k", VALUE)
        calls: list[tuple[str, Callable[[], object]]] = [
            ("a/k", lambda: store.get("a/k")),
            ("a/k", lambda: store.get("a/k", RangeRequest(0, 2))),
            ("a/k", lambda: store.get("a/k", SuffixRequest(2))),
            ("a/k", lambda: store.get_partial_values([("a/k", RangeRequest(1, 3)), ("a/k", None)])),
            ("a/k", lambda: store.set("a/k", b"new")),
            ("a/new", lambda: store.set("a/new", b"new")),
            ("a/", lambda: list(store.list_prefix("a/"))),
            ("a/k", lambda: store.getsize("a/k")),
            ("a/k", lambda: read_through_open_reader(store, "a/k")),
            ("a/k", lambda: read_through_scratch(store, "a/k")),
        ]
        if store.supports_deletes:
            calls.append(("a/k", lambda: store.delete("a/k")))
        self.break_backend(store, monkeypatch)
        for key, call in calls:
            with pytest.raises(StoreError) as info:
                call()
            err = info.value
            assert repr(key) in str(err), str(err)
            assert isinstance(err.__cause__, OSError) and err.__cause__.errno == errno.EIO, repr(err.__cause__)
            assert err.errno == errno.EIO and err.key == key
            assert not isinstance(err, (InvalidKeyError, KeyNotFoundError))
        monkeypatch.undo()
        assert store.get("a/k") == VALUE  # the failed calls changed nothing
        assert sorted(store.list()) == ["a/k"]


def eio(*args: object, **kwargs: object) -> None:
    """A backend call that fails as a broken disk or connection would."""
    raise OSError(errno.EIO, "Input/output error (injected)")


def read_through_open_reader(store: Store, key: str) -> object:
    """A read of ``key`` through :meth:`Store.open_reader` (its size and first bytes)."""
    with store.open_reader(key) as reader:
        return reader.size(), reader(RangeRequest(0, 2))


def read_through_scratch(store: Store, key: str) -> object:
    """A read of ``key`` through :meth:`Store.get_scratch`."""
    with store.get_scratch(key) as data:
        return None if data is None else bytes(data)
