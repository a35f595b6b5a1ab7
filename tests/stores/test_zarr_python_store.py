"""ZarrPythonStore: zarr-python 3 stores through zarrpy's store contract, and
arrays shared between zarrpy and zarr-python through one store object."""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
import zarr.storage

import zarrpy
from zarrpy.core.byte_range import RangeRequest, SuffixRequest
from zarrpy.errors import InvalidKeyError, KeyNotFoundError, ReadOnlyError
from zarrpy.stores import LocalStore, MemoryStore, ZarrPythonStore, store_from_url

from .contract import StoreContract, eio

# Every method of a zarr-python store the adapter may call.
ZARR_CALLS = ("get", "get_partial_values", "set", "delete", "exists", "getsize", "list", "list_prefix", "list_dir")


def break_zarr_store(store: ZarrPythonStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every method of the wrapped zarr-python store raises OSError(EIO)."""
    for name in ZARR_CALLS:
        monkeypatch.setattr(store.store, name, eio)


class ZarrPythonContract(StoreContract):
    def open_read_only(self, store: ZarrPythonStore) -> ZarrPythonStore:
        return ZarrPythonStore(store.store, read_only=True)

    def break_backend(self, store: ZarrPythonStore, monkeypatch: pytest.MonkeyPatch) -> None:
        break_zarr_store(store, monkeypatch)


class TestZarrPythonMemoryStore(ZarrPythonContract):
    @pytest.fixture
    def store(self) -> ZarrPythonStore:
        return ZarrPythonStore(zarr.storage.MemoryStore())


class TestZarrPythonLocalStore(ZarrPythonContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> ZarrPythonStore:
        return ZarrPythonStore(zarr.storage.LocalStore(tmp_path / "store.zarr"))


class TestZarrPythonFsspecStore(ZarrPythonContract):
    """zarr-python's own FsspecStore (async, over fsspec's memory filesystem)."""

    @pytest.fixture
    def store(self) -> ZarrPythonStore:
        return ZarrPythonStore(zarr.storage.FsspecStore.from_url(f"memory://zarrpy-zp/{uuid.uuid4().hex}"))


# -- store_from_url --------------------------------------------------------------------------------


def test_store_from_url_wraps_zarr_python_stores(tmp_path: Path) -> None:
    zstore = zarr.storage.LocalStore(tmp_path / "x.zarr")
    store = store_from_url(zstore)
    assert isinstance(store, ZarrPythonStore) and store.store is zstore and not store.read_only
    assert store_from_url(zstore, read_only=True).read_only
    # The same directory as a zarrpy LocalStore: the same identity (shared locks and cache).
    assert store.url == LocalStore(tmp_path / "x.zarr").url
    assert store.identity == LocalStore(tmp_path / "x.zarr").identity
    assert store == ZarrPythonStore(zarr.storage.LocalStore(tmp_path / "x.zarr"))
    with pytest.raises(TypeError, match="storage_options"):
        store_from_url(zstore, storage_options={"anon": True})


def test_memory_store_identity_is_its_dict() -> None:
    backing: dict[str, Any] = {}
    a, b = ZarrPythonStore(zarr.storage.MemoryStore(backing)), ZarrPythonStore(zarr.storage.MemoryStore(backing))
    assert a == b and hash(a) == hash(b) and a.identity == MemoryStore(backing).identity
    assert a != ZarrPythonStore(zarr.storage.MemoryStore())
    assert a.url is None and a.display_name == "<zarr-python MemoryStore>"
    assert a.process_local
    assert not ZarrPythonStore(zarr.storage.LocalStore("x.zarr")).process_local
    assert ZarrPythonStore(zarr.storage.FsspecStore.from_url("memory://zarrpy-zp/pl")).process_local


def test_a_read_only_zarr_python_store_stays_read_only(tmp_path: Path) -> None:
    zstore = zarr.storage.LocalStore(tmp_path / "x.zarr", read_only=True)
    store = store_from_url(zstore, read_only=False)
    assert store.read_only
    with pytest.raises(ReadOnlyError, match="zarr-python store LocalStore is read-only"):
        store.set("k", b"v")
    with pytest.raises(ReadOnlyError):
        zarrpy.create_array(zstore, shape=(2,), dtype="int8", chunks=(2,))


def test_invalid_keys_never_reach_the_zarr_python_store(monkeypatch: pytest.MonkeyPatch) -> None:
    store = ZarrPythonStore(zarr.storage.MemoryStore())
    break_zarr_store(store, monkeypatch)  # any call reaching the store would raise OSError
    for key in ("../x", "a/../../b", "/abs", "a//b"):
        with pytest.raises(InvalidKeyError):
            store.get(key)
        with pytest.raises(InvalidKeyError):
            store.set(key, b"x")
        with pytest.raises(InvalidKeyError):
            store.delete(key)


def test_zarr_python_local_store_directories_are_not_values(tmp_path: Path) -> None:
    """zarr-python's LocalStore gives a directory's size and deletes directories
    whole; through zarrpy a "directory" is no value."""
    store = ZarrPythonStore(zarr.storage.LocalStore(tmp_path))
    store.set("a/c/0", b"x")
    with pytest.raises(KeyNotFoundError):
        store.getsize("a/c")
    store.delete("a/c")  # not a key: nothing happens
    assert store.get("a/c/0") == b"x"


def test_get_partial_values_is_one_bridge_call(monkeypatch: pytest.MonkeyPatch) -> None:
    store = ZarrPythonStore(zarr.storage.MemoryStore())
    for i in range(20):
        store.set(f"c/{i}", bytes([i]) * 10)
    calls: list[object] = []
    real_run = store._run

    def counting_run(coroutine: Any) -> Any:
        calls.append(coroutine)
        return real_run(coroutine)

    monkeypatch.setattr(store, "_run", counting_run)
    got = store.get_partial_values([(f"c/{i}", RangeRequest(1, 3)) for i in range(20)] + [("c/0", SuffixRequest(2))])
    assert got == [bytes([i]) * 2 for i in range(20)] + [b"\x00\x00"]
    assert len(calls) == 1


def test_many_threads_share_the_bridge() -> None:
    store = ZarrPythonStore(zarr.storage.MemoryStore())
    values = {f"k/{i}": bytes([i % 256]) * (i + 1) for i in range(200)}
    store.set_many(values.items())
    barrier = threading.Barrier(16)

    def read(i: int) -> bool:
        if i < 16:
            barrier.wait()
        key = f"k/{i % 200}"
        value = values[key]
        return store.get(key) == value and store.get_partial_values([(key, SuffixRequest(1))]) == [value[-1:]]

    with ThreadPoolExecutor(16) as pool:
        assert all(pool.map(read, range(1000)))


# -- pickling ----------------------------------------------------------------------------------------


def test_pickles_as_the_zarr_python_store_does(tmp_path: Path) -> None:
    local = ZarrPythonStore(zarr.storage.LocalStore(tmp_path), read_only=True)
    clone = pickle.loads(pickle.dumps(local))
    assert isinstance(clone, ZarrPythonStore) and clone == local and clone.read_only


def test_a_store_that_does_not_pickle_is_refused_clearly() -> None:
    class Unpicklable(zarr.storage.MemoryStore):
        def __reduce__(self) -> Any:
            raise TypeError("sessions do not pickle")

    store = ZarrPythonStore(Unpicklable())
    with pytest.raises(TypeError, match="zarr-python store Unpicklable does not pickle .*sessions do not pickle"):
        pickle.dumps(store)


def test_array_on_a_zarr_python_local_store_pickles(tmp_path: Path) -> None:
    a = zarrpy.create_array(zarr.storage.LocalStore(tmp_path / "x.zarr"), shape=(6,), dtype="int16", chunks=(4,))
    a[:] = np.arange(6)
    clone = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(clone[:], np.arange(6))


def test_array_on_a_zarr_python_memory_store_is_process_local() -> None:
    a = zarrpy.create_array(zarr.storage.MemoryStore(), shape=(2,), dtype="int8", chunks=(2,))
    with pytest.raises(zarrpy.ProcessLocalError):
        pickle.dumps(a)


# -- interop: zarrpy and zarr-python on one store object ---------------------------------------------


@pytest.fixture(params=["memory", "local"])
def zarr_store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        return zarr.storage.MemoryStore()
    return zarr.storage.LocalStore(tmp_path / "interop.zarr")


@pytest.mark.integration
def test_zarrpy_writes_zarr_python_reads(zarr_store: Any) -> None:
    data = np.arange(30 * 20, dtype="float32").reshape(30, 20)
    a = zarrpy.create_array(zarr_store, name="dense", shape=data.shape, dtype="float32", chunks=(8, 8),
                            attributes={"units": "m"}, fill_value=0)
    a[...] = data
    s = zarrpy.create_array(zarr_store, name="sharded", shape=(64,), dtype="int32", chunks=(4,), shards=(16,))
    s[:] = np.arange(64)
    back = zarr.open_array(zarr_store, path="dense", mode="r")
    np.testing.assert_array_equal(back[...], data)
    assert back.attrs["units"] == "m"
    np.testing.assert_array_equal(zarr.open_array(zarr_store, path="sharded", mode="r")[5:37], np.arange(5, 37))
    # and zarrpy reads it again through the same store object (partial shard reads included)
    np.testing.assert_array_equal(zarrpy.open_array(zarr_store, path="sharded")[5:37], np.arange(5, 37))


@pytest.mark.integration
def test_zarr_python_writes_zarrpy_reads(zarr_store: Any) -> None:
    data = np.arange(100, dtype="int64")
    z = zarr.create_array(zarr_store, shape=(100,), dtype="int64", chunks=(10,), shards=(50,))
    z[:] = data
    a = zarrpy.open_array(zarr_store)
    np.testing.assert_array_equal(a[:], data)
    np.testing.assert_array_equal(a[[3, 57, 99]], data[[3, 57, 99]])
    b = zarrpy.open_array(zarr_store, mode="r+")
    b[10:20] = -1
    np.testing.assert_array_equal(z[8:22], np.r_[8, 9, [-1] * 10, 20, 21])


def test_zarrpy_does_not_import_zarr_or_obstore() -> None:
    code = (
        "import sys, zarrpy, numpy as np\n"
        "a = zarrpy.create_array({}, shape=(4,), dtype='int8', chunks=(2,)); a[:] = 1\n"
        "zarrpy.open_array(a.store, mode='r')[:]\n"
        "print(sorted(m for m in ('zarr', 'obstore') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
