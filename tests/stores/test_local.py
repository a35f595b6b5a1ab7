from __future__ import annotations

import builtins
import io
import os
from pathlib import Path

import pytest

from zarrpy.core.byte_range import RangeRequest, SuffixRequest
from zarrpy.errors import InvalidKeyError, StoreError
from zarrpy.stores import LocalStore

from .contract import StoreContract, eio

OS_CALLS = ("open", "scandir", "stat", "lstat", "unlink", "replace", "remove", "makedirs")


def break_local(store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """os calls on paths under ``store``'s root (or relative to a directory
    descriptor) raise OSError(EIO); everything else works as usual."""
    root = os.fspath(store.root)
    for name in OS_CALLS:
        real = getattr(os, name)

        def call(*args, _real=real, **kwargs):  # type: ignore[no-untyped-def]
            path = args[0] if args else kwargs.get("path", "")
            if kwargs.get("dir_fd") is not None or kwargs.get("src_dir_fd") is not None:
                return eio()
            if isinstance(path, (str, os.PathLike)) and os.fspath(path).startswith(root):
                return eio()
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, call)


class TestLocalStore(StoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> LocalStore:
        return LocalStore(tmp_path / "store.zarr")

    def open_read_only(self, store: LocalStore) -> LocalStore:
        return LocalStore(store.root, read_only=True)

    def break_backend(self, store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
        break_local(store, monkeypatch)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_layout_on_disk(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.set("a/c/0/1", b"x")
    assert (tmp_path / "a" / "c" / "0" / "1").read_bytes() == b"x"
    assert store.url == tmp_path.as_uri()


def test_relative_root_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = LocalStore("rel.zarr")
    monkeypatch.chdir("/")
    store.set("k", b"v")
    assert (tmp_path / "rel.zarr" / "k").read_bytes() == b"v"


def test_failed_replace_keeps_old_value_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path)
    store.set("a/k", b"old value")

    def broken_replace(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(StoreError, match="a/k"):
        store.set("a/k", b"new value")
    with pytest.raises(StoreError):
        store.set("a/other", b"new value")
    monkeypatch.undo()
    assert store.get("a/k") == b"old value"
    assert _files(tmp_path) == ["a", "a/k"]


def test_failed_write_keeps_old_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore(tmp_path)
    store.set("k", b"old")

    class Boom(Exception):
        pass

    real_fdopen = os.fdopen

    def fdopen_then_fail(fd: int, *args, **kwargs):  # type: ignore[no-untyped-def]
        f = real_fdopen(fd, *args, **kwargs)
        real_write = f.write

        def write(data: bytes) -> int:
            real_write(data[: len(data) // 2])
            raise Boom("interrupted midway")

        f.write = write  # type: ignore[method-assign]
        return f

    monkeypatch.setattr(os, "fdopen", fdopen_then_fail)
    with pytest.raises(Boom):
        store.set("k", b"new value that never lands")
    monkeypatch.undo()
    assert store.get("k") == b"old"
    assert _files(tmp_path) == ["k"]


def test_listing_ignores_in_progress_temp_files(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.set("a/k", b"1")
    (tmp_path / "a" / ".zarrpy-tmp-0123abcd").write_bytes(b"partial")
    (tmp_path / ".zarrpy-tmp-ffff").write_bytes(b"partial")
    assert list(store.list()) == ["a/k"]
    assert list(store.list_dir("a")) == ["k"]
    assert list(store.list_dir("")) == ["a"]


def test_delete_prunes_empty_directories_but_not_the_root(tmp_path: Path) -> None:
    root = tmp_path / "store"
    store = LocalStore(root)
    store.set("a/b/c/d", b"1")
    store.set("a/x", b"2")
    store.delete("a/b/c/d")
    assert _files(root) == ["a", "a/x"]
    store.delete("a/x")
    assert root.is_dir() and _files(root) == []


def test_delete_of_a_directory_is_a_no_op(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.set("a/b", b"1")
    store.delete("a")
    assert store.get("a/b") == b"1"
    assert store.get("a") is None


def test_range_reads_only_the_requested_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore(tmp_path)
    value = os.urandom(1 << 20)
    store.set("big", value)
    raw_bytes_read: list[int] = []

    class CountingFileIO(io.FileIO):
        def readinto(self, buffer):  # type: ignore[no-untyped-def]
            n = super().readinto(buffer)
            raw_bytes_read.append(n or 0)
            return n

        def readall(self) -> bytes:
            data = super().readall()
            raw_bytes_read.append(len(data))
            return data

    real_open = builtins.open

    def counting_open(path, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
        if mode == "rb":
            return io.BufferedReader(CountingFileIO(path, "rb"))
        return real_open(path, mode, *args, **kwargs)

    real_pread = getattr(os, "pread", None)

    def counting_pread(fd: int, n: int, offset: int) -> bytes:  # positioned reads, where the platform has them
        data = real_pread(fd, n, offset)  # type: ignore[misc]
        raw_bytes_read.append(len(data))
        return data

    monkeypatch.setattr(builtins, "open", counting_open)
    if real_pread is not None:
        monkeypatch.setattr(os, "pread", counting_pread)
    assert store.get("big", RangeRequest(1000, 1100)) == value[1000:1100]
    assert store.get("big", SuffixRequest(50)) == value[-50:]
    assert store.get("big", RangeRequest(500_000, 500_010)) == value[500_000:500_010]
    with store.open_reader("big") as reader:
        assert reader.read_many([RangeRequest(7, 9), SuffixRequest(3)]) == [value[7:9], value[-3:]]
    monkeypatch.undo()
    # Buffered reads may round up to one buffer, never to the file.
    assert 0 < sum(raw_bytes_read) <= 3 * io.DEFAULT_BUFFER_SIZE * 2


def test_missing_parent_that_is_a_file(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.set("a", b"file")
    assert store.get("a/b") is None
    with pytest.raises(StoreError, match="a/b"):
        store.set("a/b", b"x")
    assert store.get("a") == b"file"


def test_symlinked_root_works(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    store = LocalStore(link)
    store.set("a/k", b"v")
    assert (real / "a" / "k").read_bytes() == b"v"
    assert list(store.list()) == ["a/k"]


def test_writing_over_a_directory_fails_cleanly(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.set("a/b", b"1")
    with pytest.raises(StoreError, match="'a'"):
        store.set("a", b"x")
    assert store.get("a/b") == b"1"
    assert _files(tmp_path) == ["a", "a/b"]


def test_keys_cannot_leave_the_root(tmp_path: Path) -> None:
    root = tmp_path / "store"
    store = LocalStore(root)
    for key in ("../outside", "a/../../outside", "/tmp/outside", "..\\outside"):
        with pytest.raises(InvalidKeyError):
            store.set(key, b"x")
    assert not root.exists() and _files(tmp_path) == []


def test_open_reader_reads_one_file_even_when_it_is_replaced(tmp_path):
    """The reader of one partial decode keeps the file it opened: a shard
    replaced meanwhile cannot mix its old index with new inner chunks."""
    store = LocalStore(tmp_path)
    store.set("c/0", b"old-index-and-chunks")
    with store.open_reader("c/0") as reader:
        assert reader(RangeRequest(0, 3)) == b"old"
        store.set("c/0", b"NEW-VALUE-OF-OTHER-LENGTH")
        assert reader.size() == len(b"old-index-and-chunks")
        assert reader(SuffixRequest(6)) == b"chunks"
    with store.open_reader("c/0") as reader:
        assert reader(None) == b"NEW-VALUE-OF-OTHER-LENGTH"


def test_open_reader_of_a_directory_is_missing_and_closes_its_file(tmp_path):
    import gc
    import os

    store = LocalStore(tmp_path)
    store.set("d/k", b"v")
    with store.open_reader("d") as reader:
        assert reader.size() is None and reader(None) is None
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    for _ in range(50):
        with store.open_reader("d/k") as reader:
            assert reader(None) == b"v"
    gc.collect()
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) <= before  # every descriptor closed


def test_get_scratch_reuses_one_buffer_and_refuses_directories(tmp_path):
    import numpy as np

    from zarrpy.core import scratch

    scratch._local.free = []  # this thread's buffers: none yet
    store = LocalStore(tmp_path)
    store.set("d/a", b"x" * 5000)
    store.set("d/b", b"y" * 4000)
    with store.get_scratch("d/a") as first:
        assert bytes(first) == b"x" * 5000
    with store.get_scratch("d/b") as second:
        assert bytes(second) == b"y" * 4000
        assert np.shares_memory(np.asarray(first), np.asarray(second))  # the thread's buffer, reused
    with store.get_scratch("d") as data:
        assert data is None  # a directory is not a key


@pytest.mark.parametrize("positioned", [True, False], ids=["pread", "lseek-read"])
def test_open_file_reads_every_request_like_a_file_read(tmp_path, monkeypatch, positioned):
    """OpenFile's reads, with positioned reads and with the lseek/read
    fallback of platforms without them, against plain slicing."""
    from zarrpy.stores import _files
    from .contract import RANGE_CASES, VALUE

    monkeypatch.setattr(_files, "HAS_PREAD", positioned and _files.HAS_PREAD)
    path = tmp_path / "v"
    path.write_bytes(VALUE)
    fd = os.open(path, os.O_RDONLY)
    with _files.OpenFile(fd, len(VALUE)) as f:
        for request, expected in RANGE_CASES:
            assert f.read(request) == expected, request
        buf = bytearray(len(VALUE) + 5)
        assert f.read_into(buf) == len(VALUE) and bytes(buf[: len(VALUE)]) == VALUE
    assert f.fd == -1  # closed
