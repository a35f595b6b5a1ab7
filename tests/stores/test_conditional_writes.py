"""Writes that lose nothing without locks (issue 29): conditional writes on
object stores, batched writes and deletes, and update locks of local files.

**Conditional writes** run on MemoryStore, FsspecStore over S3 (s3fs, on
moto's server on 127.0.0.1: tests/stores/s3_server.py) and ObjectStore over
obstore's S3 store (the same server) and memory store. Every version comes
from ``get_versioned`` of the store itself, and another handle over the same
data plays the other writer. On S3 the server's log shows the requests: one
per write, a batch in one round trip, deletes batched.

**Update locks** of :class:`~zarrpy.stores.LocalStore` are taken by real
processes (spawned, or forked inside a fresh interpreter), with bounded
waits: holders of one key's lock never overlap, whatever path names the
store, and the store's listing never shows a lock file.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import sys
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from fsspec.asyn import sync
from obstore.store import LocalStore as ObsLocalStore
from obstore.store import MemoryStore as ObsMemoryStore
from obstore.store import S3Store

from bench.http_server import RequestLog
from zarrpy.core.byte_range import VersionedRequest
from zarrpy.errors import InvalidKeyError, ReadOnlyError, StoreError
from zarrpy.stores import FsspecStore, LocalStore, MemoryStore, ObjectStore, _update_locks
from zarrpy.stores.abc import Store
from zarrpy.stores.writes import ABSENT, ConditionalWrite

from . import _update_lock_workers
from .s3_server import BUCKET, obstore_config, request_log, s3_options, set_latency  # noqa: F401 - a fixture

W = ConditionalWrite
LATENCY = 0.15  # per answer, so that requests in flight together overlap in the log


@dataclass
class Backend:
    """A store that writes conditionally, another handle over the same data
    (the other writer), and on S3 the server's log and latency setting."""

    store: Store
    other: Store
    log: RequestLog | None = None
    set_latency: Callable[[float], None] | None = None

    @contextmanager
    def latency(self) -> Iterator[None]:
        """The server waits :data:`LATENCY` per answer inside the block."""
        assert self.set_latency is not None
        self.set_latency(LATENCY)
        try:
            yield
        finally:
            self.set_latency(0.0)


def _memory(request: pytest.FixtureRequest) -> Backend:
    data: dict[str, bytes] = {}
    return Backend(MemoryStore(data), MemoryStore(data))


def _fsspec_s3(request: pytest.FixtureRequest) -> Backend:
    options = request.getfixturevalue("s3_options")
    url = f"s3://{BUCKET}/{uuid.uuid4().hex}"
    return Backend(FsspecStore.from_url(url, storage_options=options),
                   FsspecStore.from_url(url, storage_options={**options, "skip_instance_cache": True}),
                   request_log(options), lambda s: set_latency(options, s))


def _obstore_memory(request: pytest.FixtureRequest) -> Backend:
    backing = ObsMemoryStore()
    return Backend(ObjectStore(backing), ObjectStore(backing))


def _obstore_s3(request: pytest.FixtureRequest) -> Backend:
    options = request.getfixturevalue("s3_options")
    prefix = uuid.uuid4().hex
    return Backend(ObjectStore(S3Store(BUCKET, prefix=prefix, **obstore_config(options))),
                   ObjectStore(S3Store(BUCKET, prefix=prefix, **obstore_config(options))),
                   request_log(options), lambda s: set_latency(options, s))


BACKENDS = {"memory": _memory, "fsspec-s3": _fsspec_s3, "obstore-memory": _obstore_memory, "obstore-s3": _obstore_s3}
S3 = ["fsspec-s3", "obstore-s3"]


@pytest.fixture(params=list(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    return BACKENDS[request.param](request)


@pytest.fixture(params=S3)
def s3(request: pytest.FixtureRequest) -> Backend:
    return BACKENDS[request.param](request)


def _version(store: Store, key: str) -> Any:
    [got] = store.get_versioned([VersionedRequest(key)])
    assert got is not None and got.version is not None
    return got.version


# -- the contract -------------------------------------------------------------------------


def test_these_stores_write_conditionally(backend: Backend) -> None:
    assert backend.store.supports_conditional_writes
    assert backend.store.supports_concurrent_updates


def test_create_if_absent_is_refused_when_present(backend: Backend) -> None:
    store = backend.store
    assert store.set_conditional([W("c/0", b"first", ABSENT)]) == [True]
    assert store.get("c/0") == b"first"
    assert store.set_conditional([W("c/0", b"second", ABSENT)]) == [False]
    assert backend.other.set_conditional([W("c/0", b"third", ABSENT)]) == [False]
    assert store.get("c/0") == b"first"


def test_if_match_is_refused_after_another_write_and_applied_when_unchanged(backend: Backend) -> None:
    store, other = backend.store, backend.other
    store.set("c/0", b"old")
    seen = _version(store, "c/0")
    other.set("c/0", b"theirs")  # another writer got there first
    assert store.set_conditional([W("c/0", b"mine", seen)]) == [False]
    assert store.get("c/0") == b"theirs"
    now = _version(store, "c/0")
    assert now != seen
    assert store.set_conditional([W("c/0", b"mine", now)]) == [True]
    assert other.get("c/0") == b"mine"
    assert store.set_conditional([W("c/0", b"again", now)]) == [False]  # our own write changed the version
    assert other.set_conditional([W("c/0", b"again", _version(other, "c/0"))]) == [True]
    assert store.get("c/0") == b"again"


def test_if_match_on_a_deleted_object_is_refused(backend: Backend) -> None:
    store = backend.store
    store.set("c/0", b"old")
    seen = _version(store, "c/0")
    backend.other.delete("c/0")
    assert store.set_conditional([W("c/0", b"mine", seen)]) == [False]
    assert store.get("c/0") is None


def test_a_batch_answers_each_write_in_order(backend: Backend) -> None:
    store = backend.store
    for key in ("a", "b", "c"):
        store.set(key, b"v0")
    va, vb = _version(store, "a"), _version(store, "b")
    backend.other.set("b", b"theirs")
    got = store.set_conditional([
        W("new", b"n", ABSENT),   # absent: created
        W("c", b"x", ABSENT),     # present: refused
        W("a", b"a1", va),        # unchanged: written
        W("b", b"b1", vb),        # changed since: refused
        W("new2", b"m", ABSENT),
    ])
    assert got == [True, False, True, False, True]
    assert [store.get(k) for k in ("new", "c", "a", "b", "new2")] == [b"n", b"v0", b"a1", b"theirs", b"m"]


def test_an_empty_batch_is_empty(backend: Backend) -> None:
    assert backend.store.set_conditional([]) == []


def test_a_version_that_is_no_version_names_the_key(backend: Backend) -> None:
    backend.store.set("c/0", b"v0")
    if isinstance(backend.store, MemoryStore):  # its versions are ints: 12345 is one that never matches
        assert backend.store.set_conditional([W("c/0", b"x", 12345)]) == [False]
        return
    with pytest.raises(StoreError, match="'c/0'"):  # an S3 or obstore version is an ETag string
        backend.store.set_conditional([W("c/0", b"x", 12345)])
    assert backend.store.get("c/0") == b"v0"


def test_read_only_stores_refuse(backend: Backend) -> None:
    store = backend.store
    ro = {MemoryStore: lambda s: MemoryStore(s._data, read_only=True),
          FsspecStore: lambda s: FsspecStore(s.fs, s.path, read_only=True),
          ObjectStore: lambda s: ObjectStore(s.store, s.prefix, read_only=True)}[type(store)](store)
    with pytest.raises(ReadOnlyError):
        ro.set_conditional([W("c/0", b"x", ABSENT)])
    assert store.get("c/0") is None


def test_unsafe_keys_are_refused(backend: Backend) -> None:
    with pytest.raises(InvalidKeyError):
        backend.store.set_conditional([W("../x", b"x", ABSENT)])


# -- conditional deletes -----------------------------------------------------------------------


def test_conditional_deletes(backend: Backend) -> None:
    store = backend.store
    store.set("c/0", b"v0")
    seen = _version(store, "c/0")
    if not store.supports_conditional_deletes:  # obstore: no conditional delete
        assert isinstance(store, ObjectStore)
        with pytest.raises(StoreError, match="cannot delete conditionally"):
            store.set_conditional([W("c/0", None, seen)])
        assert store.get("c/0") == b"v0"
        return
    backend.other.set("c/0", b"theirs")
    assert store.set_conditional([W("c/0", None, seen)]) == [False]
    assert store.get("c/0") == b"theirs"
    now = _version(store, "c/0")
    assert store.set_conditional([W("c/0", None, now)]) == [True]
    assert store.get("c/0") is None
    assert store.set_conditional([W("c/0", None, now)]) == [False]  # gone since: not ours to delete


def test_which_stores_delete_conditionally(backend: Backend) -> None:
    assert backend.store.supports_conditional_deletes == (not isinstance(backend.store, ObjectStore))


# -- S3 on the wire -------------------------------------------------------------------------------


def _seen(log: RequestLog) -> list[tuple[str, int]]:
    return sorted((e.method, e.status) for e in log.entries())


def test_each_conditional_write_is_one_request_and_a_batch_one_round_trip(s3: Backend) -> None:
    assert s3.log is not None
    store = s3.store
    for key in ("a", "b"):
        store.set(key, b"v0")
    va, vb = _version(store, "a"), _version(store, "b")
    s3.other.set("b", b"theirs")
    writes = [W("a", b"a1", va), W("b", b"b1", vb), W("c", b"c1", ABSENT), W("a2", b"x", ABSENT),
              W("b", b"y", ABSENT)]
    s3.log.clear()
    with s3.latency():
        assert store.set_conditional(writes) == [True, False, True, True, False]
    assert _seen(s3.log) == sorted([("PUT", 200), ("PUT", 412), ("PUT", 200), ("PUT", 200), ("PUT", 412)])
    assert s3.log.depth() == 1


def test_conditional_deletes_are_one_request_each_and_absent_ones_none(request: pytest.FixtureRequest) -> None:
    s3 = _fsspec_s3(request)  # obstore deletes nothing conditionally (test_conditional_deletes)
    store = s3.store
    assert s3.log is not None
    store.set("a", b"v0")
    store.set("b", b"v0")
    va, vb = _version(store, "a"), _version(store, "b")
    s3.other.set("b", b"theirs")
    s3.log.clear()
    assert store.set_conditional([W("a", None, va), W("b", None, vb), W("never", None, ABSENT)]) == [True, False, True]
    assert _seen(s3.log) == sorted([("DELETE", 204), ("DELETE", 412)])
    assert store.get("a") is None and store.get("b") == b"theirs"


def test_versions_are_the_etags_s3_reports(s3: Backend) -> None:
    """The version is the ETag string, quotes included, the same through s3fs
    and obstore (so either store's read conditions the other's write)."""
    s3.store.set("k", b"value")
    version = _version(s3.store, "k")
    assert isinstance(version, str) and version.startswith('"') and version.endswith('"')
    assert s3.other.set_conditional([W("k", b"new", version)]) == [True]


def test_fsspec_and_obstore_share_versions(s3_options: dict[str, Any]) -> None:
    prefix = uuid.uuid4().hex
    fs_store = FsspecStore.from_url(f"s3://{BUCKET}/{prefix}", storage_options=s3_options)
    obs_store = ObjectStore(S3Store(BUCKET, prefix=prefix, **obstore_config(s3_options)))
    fs_store.set("k", b"value")
    assert _version(fs_store, "k") == _version(obs_store, "k")
    assert obs_store.set_conditional([W("k", b"by obstore", _version(fs_store, "k"))]) == [True]
    assert fs_store.set_conditional([W("k", b"by s3fs", _version(obs_store, "k"))]) == [True]
    assert obs_store.get("k") == b"by s3fs"


def test_plain_writes_and_deletes_are_one_request(s3: Backend) -> None:
    assert s3.log is not None
    s3.log.clear()
    s3.store.set("deep/er/k", b"v")
    s3.store.delete("deep/er/k")
    s3.store.delete("missing")
    # (obstore sends even one delete as a DeleteObjects POST)
    delete = "DELETE" if isinstance(s3.store, FsspecStore) else "POST"
    assert [e.method for e in s3.log.entries()] == ["PUT", delete, delete]


def test_set_many_sends_every_value_at_once(s3: Backend) -> None:
    assert s3.log is not None
    assert s3.store.batches_writes
    items = [(f"c/{i}", bytes([i]) * 10) for i in range(16)]
    s3.log.clear()
    with s3.latency():
        s3.store.set_many(items)
    assert [e.method for e in s3.log.entries()] == ["PUT"] * 16
    assert s3.log.depth() == 1
    assert [s3.other.get(k) for k, _ in items] == [v for _, v in items]

    s3.store.request_concurrency = 4
    s3.log.clear()
    with s3.latency():
        s3.store.set_many(items)
    assert s3.log.count("PUT") == 16 and s3.log.max_in_flight() == 4 and s3.log.depth() == 4


def test_delete_many_is_one_request_per_batch(s3: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    assert s3.log is not None
    keys = [f"c/{i}" for i in range(30)]
    s3.store.set_many([(k, b"v") for k in keys])
    s3.log.clear()
    s3.store.delete_many(keys[:20] + ["missing", keys[0]])
    assert [(e.method, e.path.split("?", 1)[-1]) for e in s3.log.entries()] == [("POST", "delete")]
    assert sorted(s3.other.list()) == sorted(keys[20:])
    if isinstance(s3.store, FsspecStore):  # the batches of 1000 keys, shrunk to 4
        import zarrpy.stores.fsspec as fsspec_store

        monkeypatch.setattr(fsspec_store, "S3_DELETE_BATCH", 4)
        s3.log.clear()
        s3.store.delete_many(keys[20:])
        assert s3.log.count("POST") == 3 and s3.log.count() == 3
        assert list(s3.other.list()) == []


def test_s3fs_directory_cache_sees_conditional_writes(s3_options: dict[str, Any]) -> None:
    prefix = uuid.uuid4().hex
    store = FsspecStore.from_url(f"s3://{BUCKET}/{prefix}", storage_options=s3_options)
    store.set("d/a", b"1")
    assert store.fs.ls(f"{BUCKET}/{prefix}/d", detail=False) == [f"{BUCKET}/{prefix}/d/a"]  # now cached
    assert store.set_conditional([W("d/b", b"2", ABSENT)]) == [True]
    assert sorted(store.fs.ls(f"{BUCKET}/{prefix}/d", detail=False)) == [f"{BUCKET}/{prefix}/d/a",
                                                                         f"{BUCKET}/{prefix}/d/b"]
    assert store.set_conditional([W("d/a", None, _version(store, "d/a"))]) == [True]
    assert store.fs.ls(f"{BUCKET}/{prefix}/d", detail=False) == [f"{BUCKET}/{prefix}/d/b"]


def test_conditional_writes_can_be_turned_off(s3: Backend) -> None:
    s3.store.supports_conditional_writes = False
    assert not s3.store.supports_conditional_writes and not s3.store.supports_conditional_deletes
    with pytest.raises(StoreError, match="cannot write conditionally"):
        s3.store.set_conditional([W("k", b"x", ABSENT)])
    s3.store.supports_conditional_writes = True
    assert s3.store.set_conditional([W("k", b"x", ABSENT)]) == [True]


def test_a_botocore_without_the_condition_parameters_writes_nothing_conditionally(
        s3_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """s3fs drops what botocore's model lacks: an older botocore would send
    an ``IfMatch`` put as a plain one, so the store does not offer them."""
    store = FsspecStore.from_url(f"s3://{BUCKET}/{uuid.uuid4().hex}",
                                 storage_options={**s3_options, "skip_instance_cache": True})
    sync(store.fs.loop, store.fs.set_session)
    helper = store.fs._kwargs_helper
    keep = helper.filter_dict
    monkeypatch.setattr(helper, "filter_dict",
                        lambda method, d: {k: v for k, v in keep(method, d).items() if not k.startswith("If")})
    assert not store.supports_conditional_writes and not store.supports_conditional_deletes


# -- stores without conditional writes --------------------------------------------------------------


def test_stores_without_conditional_writes_say_so(tmp_path: Path, s3_options: dict[str, Any]) -> None:
    for store in (FsspecStore.from_url(f"memory://cond-{uuid.uuid4().hex}"), FsspecStore.from_url(tmp_path.as_uri()),
                  ObjectStore(ObsLocalStore(tmp_path)),  # object_store has no update mode on local files
                  ObjectStore(S3Store(BUCKET, conditional_put="disabled", **obstore_config(s3_options)))):
        assert not store.supports_conditional_writes and not store.supports_conditional_deletes, store
        with pytest.raises(StoreError, match="cannot write conditionally"):
            store.set_conditional([W("k", b"x", ABSENT)])
    for store in (LocalStore(tmp_path / "local"), ObjectStore(ObsLocalStore(tmp_path))):  # they lock instead
        assert not store.supports_conditional_writes and store.locks_updates and store.supports_concurrent_updates
    assert not ObjectStore(ObsMemoryStore()).locks_updates


def test_batches_on_other_fsspec_filesystems(tmp_path: Path) -> None:
    for store in (FsspecStore.from_url(f"memory://cond-{uuid.uuid4().hex}"), FsspecStore.from_url(tmp_path.as_uri())):
        assert not store.batches_writes  # value by value: callers spread them over threads
        store.set_many([("a/b", b"1"), ("c", b"2")])
        assert sorted(store.list()) == ["a/b", "c"]
        store.delete_many(["a/b", "missing", "c"])
        assert list(store.list()) == []


def test_a_refused_key_stops_a_batch_after_the_keys_before_it(s3: Backend) -> None:
    s3.store.set_many([("a", b"1"), ("b", b"2"), ("c", b"3")])
    with pytest.raises(InvalidKeyError):
        s3.store.delete_many(["a", "b", "../c"])
    assert sorted(s3.other.list()) == ["c"]


def test_obstore_batches_in_memory() -> None:
    store = ObjectStore(ObsMemoryStore(), prefix="p")
    store.set_many([(f"k{i}", bytes([i])) for i in range(5)])
    assert store.get("k3") == b"\x03"
    store.delete_many(["k0", "k1", "missing"])
    assert sorted(store.list()) == ["k2", "k3", "k4"]


# -- LocalStore update locks --------------------------------------------------------------------------


def _pairs_unbroken(lines: list[str]) -> bool:
    """Whether every ``start`` line is followed by the ``end`` of the same writer and round."""
    return len(lines) % 2 == 0 and all(
        a.replace(" start ", " end ") == b for a, b in zip(lines[::2], lines[1::2])
    ) and all(" start " in a for a in lines[::2])


def test_two_processes_holding_one_key_never_overlap(tmp_path: Path) -> None:
    """Two spawned processes append a start and an end line under one key's
    lock, one naming the store through a symbolic link: no pair is broken."""
    root = tmp_path / "store"
    root.mkdir()
    link = tmp_path / "link"
    link.symlink_to(root)
    shared = str(tmp_path / "log.txt")
    ctx = mp.get_context("spawn")
    go = ctx.Event()
    readies = [ctx.Event(), ctx.Event()]
    procs = [ctx.Process(target=_update_lock_workers.append_under_lock,
                         args=(str(path), "c/0/0", shared, tag, 20, ready, go))
             for path, tag, ready in ((root, "A", readies[0]), (link, "B", readies[1]))]
    for p in procs:
        p.start()
    try:
        assert all(r.wait(60) for r in readies)
        go.set()
        for p in procs:
            p.join(timeout=60)
        assert [p.exitcode for p in procs] == [0, 0]
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
    lines = Path(shared).read_text().splitlines()
    assert len(lines) == 80 and {line[0] for line in lines} == {"A", "B"}
    assert _pairs_unbroken(lines), lines
    assert list(LocalStore(root).list()) == [] and os.listdir(root) == []


def test_threads_holding_one_key_never_overlap(tmp_path: Path) -> None:
    """Threads of one process share each lock file's descriptor: a thread lock serialises them."""
    store = LocalStore(tmp_path)
    lines: list[str] = []
    go = threading.Barrier(4)

    def work(tag: str) -> None:
        go.wait(10)
        for i in range(25):
            with store.locked_for_update(["c/0", "c/1"]):
                lines.append(f"{tag} start {i}")
                lines.append(f"{tag} end {i}")

    threads = [threading.Thread(target=work, args=(t,)) for t in "ABCD"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert len(lines) == 200 and _pairs_unbroken(lines)


def test_a_forked_child_waits_for_its_parents_lock(tmp_path: Path) -> None:
    """In a fresh interpreter (no other threads to fork): a parent holds a
    key's lock, forks, lets go 0.3 s later; the child's lock of that key
    comes after (an inherited descriptor would share the parent's lock)."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    shared = tmp_path / "log.txt"
    done = subprocess.run([sys.executable, "-c", _update_lock_workers.FORK_SCRIPT, str(tmp_path / "s"), str(shared)],
                          cwd=Path(__file__).parents[2], timeout=60, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert shared.read_text().splitlines() == ["parent releases", "child locked"]


SAME_DIRECTORY: dict[str, Callable[[Path], Store]] = {
    "local-through-a-link": lambda tmp: LocalStore(tmp / "link"),
    "obstore-local-through-a-link": lambda tmp: ObjectStore(ObsLocalStore(tmp / "link")),
    "obstore-local-with-a-prefix": lambda tmp: ObjectStore(ObsLocalStore(tmp), prefix="store"),
}


@pytest.mark.parametrize("make", list(SAME_DIRECTORY))
def test_two_paths_to_one_directory_share_their_locks(tmp_path: Path, make: str) -> None:
    """A LocalStore holds a key's lock; another store over the same directory
    (a link to it, obstore's LocalStore) waits for it."""
    root = tmp_path / "store"
    root.mkdir()
    (tmp_path / "link").symlink_to(root)
    a, b = LocalStore(root), SAME_DIRECTORY[make](tmp_path)
    assert b.locks_updates and b.supports_concurrent_updates
    assert _update_locks.lock_dir(os.fspath(a.root)) == _update_locks.lock_dir(str(tmp_path / "link"))
    other = tmp_path / "other"
    other.mkdir()
    assert _update_locks.lock_dir(str(other)) != _update_locks.lock_dir(str(root))
    held = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def holder() -> None:
        with a.locked_for_update(["c/0"]):
            held.set()
            release.wait(10)
            order.append("a releases")

    def wait_for_it() -> None:
        with b.locked_for_update(["c/0"]):
            order.append("b locked")

    t = threading.Thread(target=holder)
    t.start()
    assert held.wait(10)
    waiter = threading.Thread(target=wait_for_it)
    waiter.start()
    waiter.join(0.3)
    release.set()
    t.join(10)
    waiter.join(10)
    assert order == ["a releases", "b locked"]


def test_the_store_shows_no_lock_file(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "s")
    store.set("c/0", b"x")
    with store.locked_for_update(["c/0", "c/1", "zarr.json"]):
        store.set("c/1", b"y")
    assert sorted(store.list()) == ["c/0", "c/1"]
    assert sorted(os.listdir(tmp_path / "s")) == ["c"]
    directory = _update_locks.lock_dir(os.fspath(store.root))
    assert not directory.startswith(os.fspath(store.root))
    made = {f"{_update_locks.stripe_of(k):04d}.lock" for k in ("c/0", "c/1", "zarr.json")}
    assert made <= set(os.listdir(directory))  # (a directory of an earlier root with this inode may hold more)


def test_a_missing_root_is_made_and_bad_keys_lock_nothing(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "new" / "store")
    with store.locked_for_update(["c/0"]):
        store.set("c/0", b"x")
    assert store.get("c/0") == b"x"
    with pytest.raises(InvalidKeyError):
        store.locked_for_update(["../escape"])


def test_read_only_stores_take_no_locks(tmp_path: Path) -> None:
    store = LocalStore(tmp_path, read_only=True)
    before = len(_update_locks._current().stripes)
    with store.locked_for_update(["c/0"]), store.locked_for_update(["c/0"]):  # nothing held: no self-deadlock
        pass
    assert len(_update_locks._current().stripes) == before


def test_idle_lock_files_are_closed_beyond_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_update_locks, "MAX_OPEN", 8)
    store = LocalStore(tmp_path)
    table = _update_locks._current()
    for i in range(40):
        with store.locked_for_update([f"c/{i}"]):
            pass
    assert len(table.stripes) <= 8
    with store.locked_for_update([f"c/{i}" for i in range(20)]):  # held ones stay open
        assert len(table.stripes) >= len({_update_locks.stripe_of(f"c/{i}") for i in range(20)})
    assert len(table.stripes) <= 8

