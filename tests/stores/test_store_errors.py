"""Real filesystem faults reach the user as StoreError naming the key, the
OSError chained (issue 13). The contract (``contract.py``) injects EIO into
every store; these are faults a disk or a filesystem really produces."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import ClassVar

import fsspec
import pytest
from fsspec.implementations.memory import MemoryFileSystem

from zarrpy.core.byte_range import RangeRequest
from zarrpy.errors import KeyNotFoundError, StoreError
from zarrpy.stores import FsspecStore, LocalStore

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _chained(exc: StoreError, key: str, code: int | None = None, chained: bool = True) -> None:
    assert repr(key) in str(exc) and exc.key == key
    if chained:
        assert isinstance(exc.__cause__, OSError)
    if code is not None:
        assert exc.errno == code
        assert not chained or exc.__cause__.errno == code  # type: ignore[union-attr]


def test_a_fifo_is_not_a_value_and_does_not_block(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    result: list[BaseException] = []

    def read() -> None:
        try:
            store.get("pipe")
        except BaseException as exc:  # noqa: BLE001 - examined below
            result.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert isinstance(result[0], StoreError)
    _chained(result[0], "pipe", errno.EINVAL, chained=False)  # zarrpy's own finding: no OSError to chain
    assert "not a regular file" in str(result[0])
    assert list(store.list()) == []


def test_a_directory_is_a_missing_key_and_cannot_be_written(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.set("a/b", b"1")
    assert store.get("a") is None and not store.exists("a")
    assert store.get_partial_values([("a", RangeRequest(0, 1))]) == [None]
    with pytest.raises(KeyNotFoundError):
        store.getsize("a")
    with pytest.raises(StoreError) as info:
        store.set("a", b"x")
    _chained(info.value, "a", errno.EISDIR)
    store.delete("a")  # not a key: nothing to delete
    assert store.get("a/b") == b"1"


def test_a_path_component_that_is_a_file(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.set("a", b"file")
    assert store.get("a/b") is None  # missing, as before
    with pytest.raises(StoreError) as info:
        store.set("a/b/c", b"x")
    _chained(info.value, "a/b/c")
    store.delete("a/b")
    assert store.get("a") == b"file"


def test_permission_denied(tmp_path: Path) -> None:
    """chmod blocks everyone but root; as root a FIFO where the key's
    directory should be is the fault that stops the write."""
    store = LocalStore(tmp_path)
    store.set("ro/k", b"old")
    if AS_ROOT:
        os.mkfifo(tmp_path / "fifo")
        with pytest.raises(StoreError) as info:
            store.set("fifo/k", b"x")
        _chained(info.value, "fifo/k")
        return
    (tmp_path / "ro").chmod(0o555)
    (tmp_path / "ro" / "k").chmod(0o000)
    try:
        for call, key in ((lambda: store.set("ro/k", b"new"), "ro/k"), (lambda: store.get("ro/k"), "ro/k"),
                          (lambda: store.delete("ro/k"), "ro/k"), (lambda: store.set("ro/new", b"x"), "ro/new")):
            with pytest.raises(StoreError) as info:
                call()
            _chained(info.value, key, errno.EACCES)
    finally:
        (tmp_path / "ro").chmod(0o755)
        (tmp_path / "ro" / "k").chmod(0o644)
    assert store.get("ro/k") == b"old"


def test_file_size_limit_is_a_store_error_and_leaves_the_old_value(tmp_path: Path) -> None:
    """RLIMIT_FSIZE stops a write half way (EFBIG), for root too: the disk-full case."""
    script = textwrap.dedent(f"""
        import errno, resource, signal
        from zarrpy.errors import StoreError
        from zarrpy.stores import LocalStore
        store = LocalStore({str(tmp_path)!r})
        store.set("a/k", b"old")
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        try:
            store.set("a/k", bytes(100_000))
        except StoreError as exc:
            assert exc.errno == errno.EFBIG and exc.__cause__.errno == errno.EFBIG, exc
            assert "'a/k'" in str(exc), exc
            print("refused:", exc)
        assert store.get("a/k") == b"old"
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "refused:" in proc.stdout and "File too large" in proc.stdout
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["k"]  # its temporary file is gone


class _Faulty(MemoryFileSystem):
    """memory:// where "ro/" refuses writes and deletes and "full/" is out of space."""

    protocol = "zarrpy-faulty"
    store: ClassVar[dict[str, bytes]] = {}
    pseudo_dirs: ClassVar[list[str]] = [""]

    def pipe_file(self, path, value, **kwargs):  # type: ignore[no-untyped-def]
        if "/ro/" in path:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        if "/full/" in path:
            raise OSError(errno.ENOSPC, "No space left on device", path)
        return super().pipe_file(path, value, **kwargs)

    def rm_file(self, path):  # type: ignore[no-untyped-def]
        if "/ro/" in path:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return super().rm_file(path)

    def cat_file(self, path, start=None, end=None, **kwargs):  # type: ignore[no-untyped-def]
        if "/ro/" in path:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return super().cat_file(path, start, end, **kwargs)


def test_fsspec_os_errors_are_store_errors() -> None:
    store = FsspecStore(_Faulty(), "/faulty")
    _Faulty.store["/faulty/ro/k"] = b"old"
    for call, key, code in (
        (lambda: store.set("ro/k", b"x"), "ro/k", errno.EACCES),
        (lambda: store.delete("ro/k"), "ro/k", errno.EACCES),
        (lambda: store.get("ro/k"), "ro/k", errno.EACCES),
        (lambda: store.set("full/k", b"x"), "full/k", errno.ENOSPC),
    ):
        with pytest.raises(StoreError) as info:
            call()
        _chained(info.value, key, code)
    assert store.get("elsewhere") is None  # missing is still None
    store.set("fine", b"1")
    assert store.get("fine") == b"1"


def test_fsspec_memory_filesystem_directory_is_missing() -> None:
    store = FsspecStore.from_url("memory://zarrpy-tests/store-errors")
    store.set("a/b", b"1")
    try:
        assert store.get("a") is None and not store.exists("a")
    finally:
        fsspec.filesystem("memory").rm("/zarrpy-tests/store-errors", recursive=True)
