"""ZipStore: the store contract, zip-specific limits, arrays in zip archives,
and interchange with zarr-python's ZipStore in both directions."""

from __future__ import annotations

import pickle
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from zarrpy.core.byte_range import OffsetRequest, RangeRequest, SuffixRequest
from zarrpy.errors import InvalidKeyError, KeyNotFoundError, ReadOnlyError, StoreError
from zarrpy.stores import FsspecStore, LocalStore, ZipStore, store_from_url

from .contract import LISTING_KEYS, VALUE, StoreContract, eio

zarr = pytest.importorskip("zarr")

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")


class TestZipStore(StoreContract):
    threads = 4

    @pytest.fixture
    def store(self, tmp_path: Path) -> ZipStore:
        return ZipStore(tmp_path / "store.zip", mode="w")

    def open_read_only(self, store: ZipStore) -> ZipStore:
        store.close()  # the central directory is written on close
        return ZipStore(store.path, mode="r")

    def break_backend(self, store: ZipStore, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in ("open", "writestr", "namelist", "getinfo"):
            monkeypatch.setattr(zipfile.ZipFile, name, eio)

    # Zip archives cannot remove members: the contract's delete tests become
    # "deleting a present key is refused and changes nothing".
    def test_delete(self, store: ZipStore) -> None:
        store.set("a/b", b"1")
        store.delete("a/missing")  # missing: not an error
        store.delete("never/was")
        with pytest.raises(StoreError, match=r"'a/b'.*store\.zip.*cannot remove"):
            store.delete("a/b")
        assert store.get("a/b") == b"1"
        assert sorted(store.list()) == ["a/b"]

    def test_delete_prefix(self, store: ZipStore) -> None:
        for key in LISTING_KEYS:
            store.set(key, key.encode())
        store.delete_prefix("nope/")  # nothing under it: fine
        with pytest.raises(StoreError, match="cannot remove"):
            store.delete_prefix("a/")
        assert sorted(store.list()) == sorted(LISTING_KEYS)

    # A pickled ZipStore reopens the file read-only (no two writers of one zip).
    def test_pickle_round_trip(self, store: ZipStore) -> None:
        store.set("a/k", VALUE)
        clone = pickle.loads(pickle.dumps(store))  # before close: opens lazily
        store.close()
        assert type(clone) is ZipStore and clone.url == store.url and clone.read_only
        assert clone.get("a/k") == VALUE
        assert clone.get("a/k", RangeRequest(1, 3)) == b"12"
        with pytest.raises(ReadOnlyError, match="unpickled"):
            clone.set("a/new", b"n")
        store.set("a/new", b"n")  # the original reopens in mode "a" and still writes
        store.close()
        assert ZipStore(store.path).get("a/new") == b"n"


# -- the zip archive itself -------------------------------------------------------
def test_members_are_stored_and_ranges_read_the_right_bytes(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with ZipStore(path, mode="w") as store:
        store.set("a/big", bytes(range(256)) * 100)
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("a/big")
        assert info.compress_type == zipfile.ZIP_STORED and info.file_size == 25600
    store = ZipStore(path)
    value = bytes(range(256)) * 100
    assert store.get("a/big", RangeRequest(300, 310)) == value[300:310]
    assert store.get("a/big", OffsetRequest(25590)) == value[25590:]
    assert store.get("a/big", SuffixRequest(7)) == value[-7:]
    assert store.getsize("a/big") == 25600


def test_compressed_members_read_too(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with ZipStore(path, mode="w", compression=zipfile.ZIP_DEFLATED) as store:
        store.set("k", b"abc" * 1000)
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("k").compress_type == zipfile.ZIP_DEFLATED
    store = ZipStore(path)
    assert store.get("k", RangeRequest(2996, 2999)) == b"cab"
    assert store.get("k", SuffixRequest(4)) == b"cabc"
    assert store.getsize("k") == 3000


def test_overwrite_appends_a_member_and_reads_see_the_latest(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"first value")
        with pytest.warns(UserWarning, match="Duplicate name"):
            store.set("k", b"second")
        assert store.get("k") == b"second" and store.getsize("k") == 6
        assert list(store.list()) == ["k"]
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == ["k", "k"]  # both members are in the file
    reopened = ZipStore(path)
    assert reopened.get("k") == b"second"
    assert list(reopened.list_prefix_with_sizes("")) == [("k", 6)]


def test_sizes(tmp_path: Path) -> None:
    store = ZipStore(tmp_path / "x.zip", mode="w")
    store.set("a/x", b"12345")
    store.set("a/y", b"")
    store.set("b", b"123")
    assert store.getsize("a/x") == 5 and store.getsize("a/y") == 0
    assert sorted(store.list_prefix_with_sizes("a/")) == [("a/x", 5), ("a/y", 0)]
    assert store.getsize_prefix("a") == 5 and store.getsize_prefix("") == 8
    with pytest.raises(KeyNotFoundError, match="'nope'"):
        store.getsize("nope")
    with pytest.raises(FileNotFoundError):  # zarr-python's error for a missing key
        store.getsize("a")


def test_directory_members_written_by_other_tools_are_not_keys(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.mkdir("a")
        zf.writestr("a/k", b"v")
    store = ZipStore(path)
    assert list(store.list()) == ["a/k"] and list(store.list_dir("")) == ["a"]
    assert store.get("a/k") == b"v"


def test_read_only_store_refuses_writes_naming_zipstore(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with ZipStore(path, mode="w") as store:
        store.set("k", b"v")
    before = path.read_bytes()
    ro = ZipStore(path, mode="r")
    assert ro.read_only
    with pytest.raises(ReadOnlyError, match=r"'k'.*x\.zip.*mode='a'"):
        ro.set("k", b"w")
    with pytest.raises(ReadOnlyError):
        ro.delete("k")
    ro.close()
    assert path.read_bytes() == before


def test_mode_a_adds_to_an_existing_archive(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with ZipStore(path, mode="w") as store:
        store.set("old", b"1")
    with ZipStore(path, mode="a") as store:
        assert store.get("old") == b"1"
        store.set("new", b"2")
    assert sorted(ZipStore(path).list()) == ["new", "old"]


def test_mode_w_truncates_and_x_refuses_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    with ZipStore(path, mode="x") as store:
        store.set("old", b"1")
    with pytest.raises(StoreError, match=r"x\.zip"):
        ZipStore(path, mode="x")
    with ZipStore(path, mode="w") as store:
        assert list(store.list()) == []
        store.set("k", b"2")
    assert list(ZipStore(path).list()) == ["k"]


def test_close_then_reuse_keeps_entries(tmp_path: Path) -> None:
    """'w' truncates on the first open only: after close() the store reopens
    in mode 'a', as zarr-python's does."""
    store = ZipStore(tmp_path / "x.zip", mode="w")
    store.set("a", b"1")
    store.close()
    store.close()  # twice is fine
    store.set("b", b"2")
    assert store.get("a") == b"1"
    store.close()
    assert sorted(ZipStore(store.path).list()) == ["a", "b"]


def test_missing_or_broken_archive_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="nothing.zip"):
        ZipStore(tmp_path / "nothing.zip")
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip archive")
    with pytest.raises(StoreError, match="bad.zip"):
        ZipStore(bad)
    with pytest.raises(ValueError, match="mode"):
        ZipStore(tmp_path / "x.zip", mode="rw")  # type: ignore[arg-type]


def test_url_reopens_read_only_through_fsspec(tmp_path: Path) -> None:
    with ZipStore(tmp_path / "x.zip", mode="w") as store:
        store.set("a/k", b"v")
    assert store.url == "zip::" + (tmp_path / "x.zip").as_uri()
    again = store_from_url(store.url, read_only=True)
    assert isinstance(again, FsspecStore) and again.get("a/k") == b"v"


def test_concurrent_reads_and_writes(tmp_path: Path) -> None:
    store = ZipStore(tmp_path / "x.zip", mode="w")
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(30):
                store.set(f"t{t}/{i}", bytes([t]) * (i + 1))
                assert store.get(f"t{t}/{i}", SuffixRequest(1)) == bytes([t])
                assert store.getsize(f"t{t}/{i}") == i + 1
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    store.close()
    assert len(list(ZipStore(store.path).list())) == 120


# -- arrays and groups in zip archives ------------------------------------------------
def test_array_round_trip_through_close_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    data = np.arange(200, dtype="int32").reshape(10, 20)
    store = ZipStore(path, mode="w")
    a = zarrpy.create_array(store, shape=(10, 20), dtype="int32", chunks=(4, 8), fill_value=-1,
                            compressors=[{"name": "zstd", "configuration": {"level": 1, "checksum": False}}])
    a[...] = data
    np.testing.assert_array_equal(a[...], data)  # reads while the archive is open for writing
    store.close()
    back = zarrpy.open_array(ZipStore(path, mode="r"))
    np.testing.assert_array_equal(back[...], data)
    assert back.read_only
    with pytest.raises(ReadOnlyError):
        back[0, 0] = 5


def test_zarr_python_reads_what_zarrpy_wrote(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    data = np.linspace(0, 1, 60).reshape(6, 10)
    with ZipStore(path, mode="w") as store:
        g = zarrpy.open_group(store, mode="w", attributes={"title": "zip"})
        arr = g.create_array("x", shape=(6, 10), dtype="float64", chunks=(2, 5), shards=(4, 10))
        arr[...] = data
    zstore = zarr.storage.ZipStore(path, mode="r")
    try:
        zg = zarr.open_group(zstore, mode="r")
        assert zg.attrs["title"] == "zip"
        np.testing.assert_array_equal(zg["x"][...], data)
    finally:
        zstore.close()


def test_zarrpy_reads_what_zarr_python_wrote(tmp_path: Path) -> None:
    path = tmp_path / "z.zip"
    data = np.arange(30, dtype="uint16").reshape(5, 6)
    zstore = zarr.storage.ZipStore(path, mode="w")
    z = zarr.create_array(zstore, name="sub/arr", shape=(5, 6), dtype="uint16", chunks=(2, 3))
    z[...] = data
    zstore.close()
    store = ZipStore(path)
    np.testing.assert_array_equal(zarrpy.open_array(store, path="sub/arr")[...], data)
    group = zarrpy.open_group(store, mode="r")
    np.testing.assert_array_equal(group["sub/arr"][...], data)
    # a plain path to the zip file opens it read-only (a LocalStore on a file cannot work)
    by_path = zarrpy.open_array(str(path), path="sub/arr")
    assert isinstance(by_path.store, ZipStore) and by_path.store.read_only
    np.testing.assert_array_equal(by_path[...], data)
    with pytest.raises(ReadOnlyError, match=r"z\.zip"):
        zarrpy.open_array(path, path="sub/arr", mode="a")[0, 0] = 1
    with pytest.raises(ReadOnlyError, match=r"z\.zip' with mode='w-'.*ZipStore\(path, mode='a'\)"):
        zarrpy.create_array(path, name="sub/new", shape=(2,), dtype="int8")


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("shards", [None, (4,)])
def test_a_chunk_becoming_fill_value_is_overwritten_not_deleted(tmp_path: Path, shards) -> None:
    """A zip cannot delete: a stored chunk (shard) that becomes all fill value
    is rewritten as the encoded fill chunk, for writes and resizes alike."""
    store = ZipStore(tmp_path / "a.zip", mode="w")
    a = zarrpy.create_array(store, name="a", shape=(8,), dtype="int8", chunks=(2,), shards=shards, fill_value=0)
    a[...] = 1
    a[:4] = 0
    assert a[...].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    a.resize(4)
    a.resize(8)  # grown again: the cut part reads as fill, never as the old values
    assert a[...].tolist() == [0] * 8
    b = zarrpy.create_array(store, name="b", shape=(4,), dtype="int8", chunks=(2,), fill_value=0)
    b[:2] = 0  # nothing stored: nothing to overwrite
    store.close()
    reopened = ZipStore(store.path)
    assert zarrpy.open_array(reopened, path="a")[...].tolist() == [0] * 8
    assert not any(k.startswith("b/c") for k in reopened.list())


def test_fsspec_store_refuses_a_writable_zip_filesystem(tmp_path: Path) -> None:
    from fsspec.implementations.zip import ZipFileSystem

    fs = ZipFileSystem(str(tmp_path / "w.zip"), mode="w")
    with pytest.raises(StoreError, match=r"mode 'w'.*zarrpy\.stores\.ZipStore"):
        FsspecStore(fs)
    fs.close()


def test_mode_a_adds_an_array_to_an_existing_zip(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w") as store:
        zarrpy.create_array(store, name="one", shape=(3,), dtype="int8", chunks=(2,))[...] = [1, 2, 3]
    with ZipStore(path, mode="a") as store:
        zarrpy.create_array(store, name="two", shape=(2,), dtype="int8", chunks=(2,))[...] = [4, 5]
    store = ZipStore(path)
    assert zarrpy.open_array(store, path="one")[...].tolist() == [1, 2, 3]
    assert zarrpy.open_array(store, path="two")[...].tolist() == [4, 5]


def test_a_path_that_is_not_an_existing_zip_file_stays_a_local_store(tmp_path: Path) -> None:
    # As in zarr-python 3: a path is a directory store, even when named *.zip.
    assert isinstance(store_from_url(str(tmp_path / "new.zip")), LocalStore)
    assert isinstance(store_from_url((tmp_path / "d.zip").as_uri()), LocalStore)


# -- zip:: URLs through fsspec read only ---------------------------------------------------
@pytest.fixture
def zipped(tmp_path: Path) -> Path:
    path = tmp_path / "z.zip"
    with ZipStore(path, mode="w") as store:
        group = zarrpy.open_group(store, mode="w")
        group.create_array("x", shape=(4,), dtype="int16", chunks=(2,))[...] = [1, 2, 3, 4]
    return path


def test_zip_url_reads_and_refuses_writes_at_the_first_write(zipped: Path) -> None:
    before = zipped.read_bytes()
    url = f"zip::{zipped.as_uri()}"
    a = zarrpy.open_array(url, path="x", mode="a")
    assert a[...].tolist() == [1, 2, 3, 4]
    with pytest.raises(ReadOnlyError, match=r"'x/c/0'.*zarrpy\.stores\.ZipStore"):
        a[0] = 9
    with pytest.raises(ReadOnlyError, match=r"'b/zarr\.json'.*ZipStore"):
        zarrpy.create_array(url, name="b", shape=(2,), dtype="int8")
    assert zipped.read_bytes() == before
    assert zarrpy.open_array(url, path="x")[...].tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize("options", [{"mode": "w"}, {"zip": {"mode": "a"}}], ids=["mode", "keyed"])
def test_zip_url_with_a_write_mode_is_refused_before_touching_the_file(zipped: Path, options: dict) -> None:
    before = zipped.read_bytes()
    with pytest.raises(StoreError, match=r"zarrpy\.stores\.ZipStore"):
        store_from_url(f"zip::{zipped.as_uri()}", storage_options=options)
    assert zipped.read_bytes() == before  # not truncated
    assert zarrpy.open_array(f"zip::{zipped.as_uri()}", path="x")[...].tolist() == [1, 2, 3, 4]


def test_zip_url_to_a_missing_archive_points_to_zipstore(tmp_path: Path) -> None:
    url = f"zip::{(tmp_path / 'new.zip').as_uri()}"
    with pytest.raises(StoreError, match=r"new\.zip.*ZipStore"):
        zarrpy.create_array(url, shape=(2,), dtype="int8")
    assert not (tmp_path / "new.zip").exists()


def test_member_names_that_are_not_keys_are_never_listed_or_reached(tmp_path: Path) -> None:
    """Zip slip: an archive made elsewhere may name members ``../x`` or ``/x``.
    ZipStore never extracts; such members are not listed and no key names them."""
    path = tmp_path / "inside" / "slip.zip"
    path.parent.mkdir()
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("zarr.json", b"{}")
        for name in ("../escaped", "/etc/escaped", "a/../../escaped", "a//b", "dir/"):
            zf.writestr(zipfile.ZipInfo(name), b"x")
    store = ZipStore(path)
    assert sorted(store.list()) == ["zarr.json"]
    assert sorted(store.list_dir("")) == ["zarr.json"]
    for key in ("../escaped", "/etc/escaped", "a/../../escaped"):
        with pytest.raises(InvalidKeyError):
            store.get(key)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["inside", "slip.zip"]
