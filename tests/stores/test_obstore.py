"""ObjectStore: obstore's memory, local and S3 stores through the store
contract (S3: moto's server on 127.0.0.1, tests/stores/s3_server.py)."""

from __future__ import annotations

import pickle
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import obstore
import pytest
from obstore.store import LocalStore as ObsLocalStore
from obstore.store import MemoryStore as ObsMemoryStore
from obstore.store import S3Store

import zarrpy
from zarrpy.core.byte_range import OffsetRequest, RangeRequest, SuffixRequest
from zarrpy.errors import InvalidKeyError, ReadOnlyError
from zarrpy.stores import LocalStore, ObjectStore, store_from_url

from .contract import StoreContract, eio
from .s3_server import BUCKET, obstore_config, s3_options  # noqa: F401 - s3_options is a fixture

# Every obstore function the adapter may call.
OBSTORE_CALLS = (
    "get", "get_async", "get_range", "get_range_async", "get_ranges", "get_ranges_async", "head", "head_async",
    "put", "put_async", "delete", "delete_async", "list", "list_with_delimiter",
)


def break_obstore(store: ObjectStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every obstore call raises OSError(EIO)."""
    for name in OBSTORE_CALLS:
        monkeypatch.setattr(obstore, name, eio)


class ObstoreContract(StoreContract):
    def open_read_only(self, store: ObjectStore) -> ObjectStore:
        return ObjectStore(store.store, store.prefix, read_only=True)

    def break_backend(self, store: ObjectStore, monkeypatch: pytest.MonkeyPatch) -> None:
        break_obstore(store, monkeypatch)


class InMemory(ObstoreContract):
    """obstore's MemoryStore does not pickle: an ObjectStore over it says so."""

    def test_pickle_round_trip(self, store: ObjectStore) -> None:
        with pytest.raises(TypeError, match="obstore's MemoryStore does not pickle"):
            pickle.dumps(store)

    def test_pickle_keeps_read_only(self, store: ObjectStore) -> None:
        with pytest.raises(TypeError, match="does not pickle"):
            pickle.dumps(self.open_read_only(store))


class TestObstoreMemory(InMemory):
    @pytest.fixture
    def store(self) -> ObjectStore:
        return ObjectStore(ObsMemoryStore())


class TestObstoreMemoryWithPrefix(InMemory):
    @pytest.fixture
    def store(self) -> ObjectStore:
        inner = ObsMemoryStore()
        obstore.put(inner, "outside/k", b"not ours")  # beside the prefix: never listed
        obstore.put(inner, "sub/x.zarrish", b"not ours")
        return ObjectStore(inner, prefix="sub/x.zarr")


class TestObstoreLocal(ObstoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> ObjectStore:
        return ObjectStore(ObsLocalStore(tmp_path / "store.zarr", mkdir=True))


class TestObstoreS3(ObstoreContract):
    threads = 4

    @pytest.fixture
    def store(self, s3_options: dict[str, Any]) -> ObjectStore:
        return ObjectStore(S3Store(BUCKET, prefix=uuid.uuid4().hex, **obstore_config(s3_options)))


# -- store_from_url, urls, identity ------------------------------------------------------------------


def test_raw_obstore_store_is_wrapped(tmp_path: Path) -> None:
    inner = ObsLocalStore(tmp_path, mkdir=True)
    store = store_from_url(inner, read_only=True)
    assert isinstance(store, ObjectStore) and store.store is inner and store.read_only
    assert store.url == tmp_path.as_uri() == LocalStore(tmp_path).url
    with pytest.raises(ReadOnlyError):
        store.set("k", b"v")
    with pytest.raises(TypeError, match="storage_options"):
        store_from_url(inner, storage_options={"anon": True})


def test_urls_and_identity(s3_options: dict[str, Any]) -> None:
    s3 = ObjectStore(S3Store(BUCKET, prefix="a/b", **obstore_config(s3_options)), prefix="x.zarr")
    assert s3.url == f"s3://{BUCKET}/a/b/x.zarr"
    assert s3 == ObjectStore(S3Store(BUCKET, prefix="a/b", **obstore_config(s3_options)), prefix="x.zarr")
    assert s3 != ObjectStore(S3Store(BUCKET, prefix="a/b", endpoint="http://127.0.0.1:9"), prefix="x.zarr")
    memory = ObsMemoryStore()
    assert ObjectStore(memory).url is None and ObjectStore(memory).process_local
    assert ObjectStore(memory) == ObjectStore(memory) != ObjectStore(ObsMemoryStore())
    assert ObjectStore(memory, prefix="p").display_name == "<obstore MemoryStore 'p'>"
    assert not s3.process_local


def test_from_url(tmp_path: Path) -> None:
    store = ObjectStore.from_url(tmp_path.as_uri(), prefix="x.zarr")
    store.set("k", b"v")
    assert (tmp_path / "x.zarr" / "k").read_bytes() == b"v"


@pytest.mark.parametrize("prefix", ["../up", "a/../b", "a//b", "a\\b"])
def test_bad_prefix_is_refused(prefix: str) -> None:
    with pytest.raises(InvalidKeyError):
        ObjectStore(ObsMemoryStore(), prefix=prefix)


def test_keys_cannot_leave_the_root(tmp_path: Path) -> None:
    store = ObjectStore(ObsLocalStore(tmp_path / "root", mkdir=True))
    for key in ("../escape", "a/../../escape"):
        with pytest.raises(InvalidKeyError):
            store.set(key, b"x")
    assert not (tmp_path / "escape").exists()


def test_missing_obstore_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "obstore", None)
    with pytest.raises(ImportError, match=r"zarrpy\[obstore\]"):
        ObjectStore(object())


def test_not_an_obstore_store() -> None:
    with pytest.raises(TypeError, match="ObjectStore.from_url"):
        ObjectStore("s3://bucket/x")


# -- batched reads ----------------------------------------------------------------------------------


def test_ranges_of_one_key_go_out_in_one_get_ranges_call(monkeypatch: pytest.MonkeyPatch) -> None:
    store = ObjectStore(ObsMemoryStore())
    value = bytes(range(256)) * 4
    store.set("shard", value)
    store.set("other", b"abc")
    calls: list[dict[str, Any]] = []
    real = obstore.get_ranges_async

    async def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return await real(*args, **kwargs)

    monkeypatch.setattr(obstore, "get_ranges_async", spy)
    ranges = [RangeRequest(s, s + 10) for s in range(0, 1000, 50)]
    got = store.get_partial_values([("shard", r) for r in ranges] + [("other", None), ("shard", SuffixRequest(4))])
    assert got == [value[r.start : r.end] for r in ranges] + [b"abc", value[-4:]]
    assert len(calls) == 1 and calls[0]["starts"] == [r.start for r in ranges]
    assert calls[0].get("coalesce", 0) == 0  # zarrpy merges ranges itself


def test_overlapping_and_out_of_range_requests_of_one_key() -> None:
    store = ObjectStore(ObsMemoryStore())
    store.set("k", b"0123456789")
    requests = [RangeRequest(0, 4), RangeRequest(4, 8), RangeRequest(2, 6), RangeRequest(8, 20),
                RangeRequest(12, 20), RangeRequest(30, 40), OffsetRequest(10), SuffixRequest(3)]
    assert store.get_partial_values([("k", r) for r in requests]) == [
        b"0123", b"4567", b"2345", b"89", b"", b"", b"", b"789"]
    assert store.get_partial_values([("missing", r) for r in requests]) == [None] * len(requests)


# -- arrays -----------------------------------------------------------------------------------------


def test_array_round_trip_on_s3(s3_options: dict[str, Any]) -> None:
    prefix = uuid.uuid4().hex
    inner = S3Store(BUCKET, prefix=prefix, **obstore_config(s3_options))
    data = np.arange(40 * 30, dtype="int32").reshape(40, 30)
    a = zarrpy.create_array(inner, shape=data.shape, dtype="int32", chunks=(5, 5), shards=(20, 15))
    a[...] = data
    back = zarrpy.open_array(inner)  # a raw obstore store, wrapped by store_from_url
    np.testing.assert_array_equal(back[...], data)
    np.testing.assert_array_equal(back[7:33, 4:11], data[7:33, 4:11])
    clone = pickle.loads(pickle.dumps(back))  # S3Store pickles by its configuration
    np.testing.assert_array_equal(clone[1:3, 1:3], data[1:3, 1:3])
    # The same objects read through fsspec (s3fs) under the same URL.
    pytest.importorskip("s3fs")
    np.testing.assert_array_equal(
        zarrpy.open_array(f"s3://{BUCKET}/{prefix}", storage_options=s3_options)[...], data
    )


def test_array_on_local_obstore_pickles(tmp_path: Path) -> None:
    a = zarrpy.create_array(ObsLocalStore(tmp_path, mkdir=True), shape=(6,), dtype="float64", chunks=(4,))
    a[:] = np.linspace(0, 1, 6)
    clone = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(clone[:], np.linspace(0, 1, 6))
    # zarrpy's own LocalStore reads what obstore wrote
    np.testing.assert_array_equal(zarrpy.open_array(tmp_path)[:], np.linspace(0, 1, 6))


def test_array_on_obstore_memory_is_process_local() -> None:
    a = zarrpy.create_array(ObsMemoryStore(), shape=(2,), dtype="int8", chunks=(2,))
    with pytest.raises(zarrpy.ProcessLocalError):
        pickle.dumps(a)


def test_relative_local_root_has_an_absolute_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = ObjectStore(ObsLocalStore("rel", mkdir=True), prefix="x.zarr")
    assert store.url == (tmp_path / "rel" / "x.zarr").as_uri()
