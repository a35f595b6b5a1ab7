from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from zarrpy.errors import StoreError
from zarrpy.stores import FsspecStore, LocalStore, MemoryStore, store_from_url


def test_store_is_returned_as_is() -> None:
    store = MemoryStore()
    assert store_from_url(store) is store
    assert store_from_url(store, read_only=True) is store


def test_dict_becomes_memory_store() -> None:
    backing = {"k": b"v"}
    store = store_from_url(backing, read_only=True)
    assert isinstance(store, MemoryStore) and store.read_only and store.get("k") == b"v"


@pytest.mark.parametrize("kind", ["path", "str", "file-url", "localhost-url"])
def test_local_forms(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "with space" / "x.zarr"
    store_like = {
        "path": root,
        "str": str(root),
        "file-url": root.as_uri(),
        "localhost-url": "file://localhost" + root.as_posix(),
    }[kind]
    store = store_from_url(store_like, read_only=True)
    assert isinstance(store, LocalStore)
    assert store.root == root and store.read_only
    assert store == LocalStore(root)
    assert store_from_url(store.url) == store  # the url reopens it


def test_relative_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = store_from_url("data/x.zarr")
    assert isinstance(store, LocalStore) and store.root == tmp_path / "data" / "x.zarr"


def test_storage_options_with_a_local_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="storage_options"):
        store_from_url(tmp_path, storage_options={"anon": True})
    with pytest.raises(TypeError, match="storage_options"):
        store_from_url(str(tmp_path), storage_options={"anon": True})


def test_file_url_with_storage_options_goes_to_fsspec(tmp_path: Path) -> None:
    store = store_from_url(tmp_path.as_uri(), storage_options={"auto_mkdir": True})
    assert isinstance(store, FsspecStore)
    store.set("a/b", b"1")
    assert (tmp_path / "a" / "b").read_bytes() == b"1"


def test_memory_url_goes_to_fsspec() -> None:
    store = store_from_url("memory://zarrpy-from-url/x.zarr", read_only=False)
    assert isinstance(store, FsspecStore) and store.url == "memory://zarrpy-from-url/x.zarr"
    store.set("k", b"v")
    again = store_from_url("memory://zarrpy-from-url/x.zarr", read_only=True)
    assert again.get("k") == b"v" and again.read_only


def test_chained_zip_url_reaches_fsspec_untouched(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("x.zarr/zarr.json", b"{}")
    url = f"zip::{path.as_uri()}"
    store = store_from_url(url, read_only=True)
    assert isinstance(store, FsspecStore) and store.url == url
    assert store.get("x.zarr/zarr.json") == b"{}"


def test_unknown_protocol_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="zarrpy-no-such-protocol"):
        store_from_url("zarrpy-no-such-protocol://x")


@pytest.mark.parametrize("bad", [42, None, b"/tmp/x", ["a"]])
def test_other_types_are_refused(bad: object) -> None:
    with pytest.raises(TypeError):
        store_from_url(bad)
