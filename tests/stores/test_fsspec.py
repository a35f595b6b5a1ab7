from __future__ import annotations

import pickle
import uuid
import zipfile
from pathlib import Path

import fsspec
import pytest

from zarrpy.core.byte_range import OffsetRequest, RangeRequest, SuffixRequest
from zarrpy.errors import StoreError
from zarrpy.stores import FsspecStore
from zarrpy.stores._http_client import LeanClient

from .contract import StoreContract, eio

FS_CALLS = ("cat_file", "cat_ranges", "pipe_file", "rm_file", "find", "ls", "info", "makedirs")


def break_fsspec(store: FsspecStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every filesystem call of ``store`` raises OSError(EIO) (over S3, s3fs's
    own request call and zarrpy's lean GETs too)."""
    for name in FS_CALLS:
        monkeypatch.setattr(store.fs, name, eio)
    if hasattr(store.fs, "_call_s3"):
        async def call_s3_eio(*args: object, **kwargs: object) -> object:
            return eio()

        monkeypatch.setattr(store.fs, "_call_s3", call_s3_eio)
        # The lean GETs fail too (sent on the loop or blocking): what they
        # cannot do is asked again through _call_s3.
        monkeypatch.setattr(LeanClient, "request", call_s3_eio)
        monkeypatch.setattr(LeanClient, "request_blocking", lambda *args, **kwargs: eio())


class FsspecContract(StoreContract):
    def break_backend(self, store: FsspecStore, monkeypatch: pytest.MonkeyPatch) -> None:
        break_fsspec(store, monkeypatch)


class TestFsspecMemory(FsspecContract):
    @pytest.fixture
    def store(self) -> FsspecStore:
        return FsspecStore.from_url(f"memory://zarrpy-tests/{uuid.uuid4().hex}")

    def open_read_only(self, store: FsspecStore) -> FsspecStore:
        return FsspecStore.from_url(store.url, read_only=True)


class TestFsspecMemoryFromFilesystem(FsspecContract):
    """Built from a filesystem object rather than a URL (pickles the fs)."""

    @pytest.fixture
    def store(self) -> FsspecStore:
        return FsspecStore(fsspec.filesystem("memory"), f"/zarrpy-tests/{uuid.uuid4().hex}")

    def open_read_only(self, store: FsspecStore) -> FsspecStore:
        return FsspecStore(store.fs, store.path, read_only=True)


class TestFsspecLocal(FsspecContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> FsspecStore:
        return FsspecStore.from_url((tmp_path / "store.zarr").as_uri())

    def open_read_only(self, store: FsspecStore) -> FsspecStore:
        return FsspecStore.from_url(store.url, read_only=True)


def test_url_and_pickle_by_url(tmp_path: Path) -> None:
    url = (tmp_path / "x.zarr").as_uri()
    store = FsspecStore.from_url(url + "/", storage_options={"auto_mkdir": True})
    assert store.url == url
    store.set("a/b", b"v")
    reduced = store.__reduce__()
    assert reduced[1] == (url, {"auto_mkdir": True}, False)
    clone = pickle.loads(pickle.dumps(store))
    assert clone == store and clone.get("a/b") == b"v"


def test_root_of_a_memory_filesystem() -> None:
    store = FsspecStore(fsspec.filesystem("memory"), "")
    key = f"zarrpy-root-{uuid.uuid4().hex}/k"
    store.set(key, b"v")
    try:
        assert store.get(key) == b"v"
        assert key in set(store.list_prefix(key.split("/")[0] + "/"))
    finally:
        store.delete(key)


def test_zip_chained_url_reads(tmp_path: Path) -> None:
    path = tmp_path / "store.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("zarr.json", b'{"zarr_format": 3}')
        zf.writestr("c/0", b"0123456789")
    store = FsspecStore.from_url(f"zip::{path.as_uri()}", read_only=True)
    assert store.get("zarr.json") == b'{"zarr_format": 3}'
    assert store.get("c/0", RangeRequest(2, 4)) == b"23"
    assert store.get("c/0", SuffixRequest(3)) == b"789"
    assert store.get("c/0", OffsetRequest(8)) == b"89"
    assert store.get("c/1") is None
    assert sorted(store.list()) == ["c/0", "zarr.json"]
    assert sorted(store.list_dir("")) == ["c", "zarr.json"]
    clone = pickle.loads(pickle.dumps(store))
    assert clone.get("c/0") == b"0123456789"


def test_other_errors_become_store_errors_naming_the_key() -> None:
    class Broken(fsspec.AbstractFileSystem):
        protocol = "zarrpy-broken"

        def cat_file(self, path, start=None, end=None, **kwargs):  # type: ignore[no-untyped-def]
            raise ConnectionError("network down")

        def info(self, path, **kwargs):  # type: ignore[no-untyped-def]
            raise ConnectionError("network down")

        def pipe_file(self, path, value, **kwargs):  # type: ignore[no-untyped-def]
            raise ConnectionError("network down")

    store = FsspecStore(Broken(), "root")
    with pytest.raises(StoreError, match="'a/k'"):
        store.get("a/k")
    with pytest.raises(StoreError, match="'a/k'"):
        store.get("a/k", SuffixRequest(4))
    with pytest.raises(StoreError, match="'a/k'"):
        store.get_partial_values([("a/k", RangeRequest(0, 4))])
    with pytest.raises(StoreError, match="'a/k'"):
        store.set("a/k", b"x")


def test_suffix_without_negative_start_support() -> None:
    """A filesystem that refuses negative starts gets a size lookup instead."""

    class NoNegative(fsspec.implementations.memory.MemoryFileSystem):
        protocol = "zarrpy-noneg"
        store: dict = {}
        pseudo_dirs = [""]

        def cat_file(self, path, start=None, end=None, **kwargs):  # type: ignore[no-untyped-def]
            if start is not None and start < 0:
                raise ValueError("negative offsets are not supported")
            return super().cat_file(path, start, end, **kwargs)

    store = FsspecStore(NoNegative(), "/r")
    store.set("k", b"0123456789")
    assert store.get("k", SuffixRequest(3)) == b"789"
    assert store.get("k", SuffixRequest(30)) == b"0123456789"
    assert store.get_partial_values([("k", SuffixRequest(2)), ("gone", SuffixRequest(2))]) == [b"89", None]


def test_async_filesystem_instance_is_refused() -> None:
    class FakeAsync(fsspec.AbstractFileSystem):
        protocol = "zarrpy-fake-async"

    fs = FakeAsync()
    fs.asynchronous = True  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="asynchronous"):
        FsspecStore(fs, "x")


def test_batch_falls_back_to_single_reads_when_cat_ranges_fails() -> None:
    class NoBatch(fsspec.implementations.memory.MemoryFileSystem):
        protocol = "zarrpy-nobatch"
        store: dict = {}
        pseudo_dirs = [""]

        def cat_ranges(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise TypeError("unexpected keyword argument 'on_error'")

    store = FsspecStore(NoBatch(), "/r")
    store.set("k", b"0123456789")
    assert store.get_partial_values(
        [("k", None), ("k", SuffixRequest(2)), ("gone", None), ("k", RangeRequest(1, 3))]
    ) == [b"0123456789", b"89", None, b"12"]
