"""An ``fsspec.FSMap`` (``fsspec.get_mapper(url)``) as ``store=``: an
FsspecStore over the map's filesystem and root, through the store contract."""

from __future__ import annotations

import pickle
import uuid
from pathlib import Path

import fsspec
import numpy as np
import pytest

import zarrpy
from zarrpy.stores import FsspecStore, store_from_url

from .test_fsspec import FsspecContract


class FSMapContract(FsspecContract):
    def open_read_only(self, store: FsspecStore) -> FsspecStore:
        return store_from_url(fsspec.FSMap(store.path, store.fs), read_only=True)  # type: ignore[return-value]


class TestFSMapLocal(FSMapContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> FsspecStore:
        store = store_from_url(fsspec.get_mapper((tmp_path / "store.zarr").as_uri()))
        assert isinstance(store, FsspecStore)
        return store


class TestFSMapMemory(FSMapContract):
    @pytest.fixture
    def store(self) -> FsspecStore:
        store = store_from_url(fsspec.get_mapper(f"memory://zarrpy-fsmap/{uuid.uuid4().hex}"))
        assert isinstance(store, FsspecStore)
        return store


def test_fsmap_becomes_an_fsspec_store_over_its_fs_and_root(tmp_path: Path) -> None:
    mapper = fsspec.get_mapper(str(tmp_path / "x.zarr"))
    store = store_from_url(mapper, read_only=True)
    assert isinstance(store, FsspecStore)
    assert store.fs is mapper.fs and store.path == mapper.root and store.read_only
    with pytest.raises(TypeError, match="storage_options"):
        store_from_url(mapper, storage_options={"auto_mkdir": True})


@pytest.mark.parametrize("where", ["local", "memory"])
def test_array_round_trip(tmp_path: Path, where: str) -> None:
    url = (tmp_path / "x.zarr").as_uri() if where == "local" else f"memory://zarrpy-fsmap/{uuid.uuid4().hex}/x.zarr"
    mapper = fsspec.get_mapper(url)
    data = np.arange(24 * 10, dtype="uint16").reshape(24, 10)
    a = zarrpy.create_array(mapper, shape=data.shape, dtype="uint16", chunks=(8, 4), shards=(16, 8))
    a[...] = data
    # The map sees what zarrpy wrote, under the keys zarrpy wrote.
    assert b'"zarr_format": 3' in mapper["zarr.json"] or b'"zarr_format":3' in mapper["zarr.json"]
    assert "c/0/0" in mapper
    back = zarrpy.open_array(fsspec.get_mapper(url))
    np.testing.assert_array_equal(back[...], data)
    np.testing.assert_array_equal(back[3:20, 2:9], data[3:20, 2:9])
    # and the same data through the URL
    np.testing.assert_array_equal(zarrpy.open_array(url)[...], data)


def test_local_fsmap_store_pickles(tmp_path: Path) -> None:
    store = store_from_url(fsspec.get_mapper(str(tmp_path)))
    store.set("a/k", b"v")
    clone = pickle.loads(pickle.dumps(store))
    assert clone.get("a/k") == b"v"


@pytest.mark.parametrize("key", ["../escape", "a/../../b"])
def test_keys_cannot_leave_the_root(tmp_path: Path, key: str) -> None:
    root = tmp_path / "root"
    store = store_from_url(fsspec.get_mapper(str(root)))
    with pytest.raises(zarrpy.InvalidKeyError):
        store.set(key, b"x")
    assert not (tmp_path / "escape").exists() and not (tmp_path / "b").exists()
