"""Store.get_versioned on every store: the bytes with the object's size and
version from one request, checked against ``if_match`` in that request.

One contract runs over MemoryStore, LocalStore, ZipStore, FsspecStore on
memory://, file://, http:// (bench/http_server.py on 127.0.0.1) and s3://
(moto on 127.0.0.1), and ObjectStore over obstore's memory, local, S3 and
HTTP stores. Each value is rewritten through another handle (or straight in
the served directory), as another writer would. On HTTP and S3 the server's
log shows what went over the wire: one GET per item, no HEAD, and no more
requests in flight than ``request_concurrency``.
"""

from __future__ import annotations

import functools
import itertools
import os
import pickle
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import fsspec
import pytest
from obstore.store import HTTPStore, S3Store
from obstore.store import LocalStore as ObsLocalStore
from obstore.store import MemoryStore as ObsMemoryStore

from bench.http_server import LoopbackServer, RequestLog, round_trip_depth, serve_directory
from zarrpy.core.byte_range import (
    UNKNOWN_SIZE,
    ObjectRead,
    OffsetRequest,
    RangeRequest,
    SuffixRequest,
    VersionedRequest,
)
from zarrpy.stores import FsspecStore, LocalStore, MemoryStore, ObjectStore, ZipStore
from zarrpy.stores._files import RACY_NS
from zarrpy.stores.abc import Store

from .contract import EMPTY_VALUE_REQUESTS, RANGE_CASES, VALUE
from .s3_server import BUCKET, obstore_config, request_log, s3_options, set_latency  # noqa: F401 - a fixture

OTHER = b"abcdefghij"  # as long as VALUE: a version must tell content, not only size


@dataclass
class Backend:
    """A store under test, a way to replace its values from outside it, and
    where there is a server, its request log and a way to set its latency."""

    store: Store
    write: Callable[[str, bytes], None]
    log: RequestLog | None = None
    set_latency: Callable[[float], None] | None = None

    @contextmanager
    def latency(self, seconds: float) -> Iterator[None]:
        """The server waits ``seconds`` before each answer inside the block."""
        assert self.set_latency is not None
        self.set_latency(seconds)
        try:
            yield
        finally:
            self.set_latency(0.0)


@dataclass
class Site:
    root: Path
    base: str
    server: LoopbackServer


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("versioned-site")
    with serve_directory(root) as (base, server):
        yield Site(root, base, server)


def _memory(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    data: dict[str, bytes] = {}
    return Backend(MemoryStore(data), MemoryStore(data).set)


_AGES = itertools.count(1)


def _aged_writer(root: Path) -> Callable[[str, bytes], None]:
    """LocalStore.set, then the file's mtime set back beyond the racy window
    (each write to its own past instant), as for a file written a while ago:
    a file younger than that has no version (``stores._files.RACY_NS``)."""
    store = LocalStore(root)

    def write(key: str, value: bytes) -> None:
        store.set(key, value)
        when = time.time_ns() - 2 * RACY_NS - next(_AGES) * 1_000_000
        os.utime(root / key, ns=(when, when))

    return write


def _local(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    return Backend(LocalStore(tmp_path), _aged_writer(tmp_path))


def _zip(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    store = ZipStore(tmp_path / "a.zip", mode="w")  # one writer per archive: itself
    request.addfinalizer(store.close)
    return Backend(store, store.set)


def _fsspec_memory(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    url = f"memory://versioned-{uuid.uuid4().hex}"
    request.addfinalizer(lambda: fsspec.filesystem("memory").rm(url, recursive=True))
    return Backend(FsspecStore.from_url(url), FsspecStore.from_url(url).set)


def _fsspec_file(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    return Backend(FsspecStore.from_url(tmp_path.as_uri()), _aged_writer(tmp_path))


def _served(request: pytest.FixtureRequest, make: Callable[[str], Store]) -> Backend:
    site: Site = request.getfixturevalue("site")
    name = uuid.uuid4().hex
    (site.root / name).mkdir()
    return Backend(make(f"{site.base}/{name}"), LocalStore(site.root / name).set, site.server.log,
                   functools.partial(setattr, site.server, "latency"))


def _fsspec_http(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    return _served(request, lambda url: FsspecStore.from_url(url, read_only=True))


def _obstore_http(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    return _served(request, lambda url: ObjectStore(HTTPStore.from_url(url, client_options={"allow_http": True}),
                                                    read_only=True))


def _fsspec_s3(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    options = request.getfixturevalue("s3_options")
    url = f"s3://{BUCKET}/{uuid.uuid4().hex}"
    return Backend(FsspecStore.from_url(url, storage_options=options),
                   FsspecStore.from_url(url, storage_options=options).set, request_log(options),
                   functools.partial(set_latency, options))


def _obstore_memory(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    backing = ObsMemoryStore()
    return Backend(ObjectStore(backing), ObjectStore(backing).set)


def _obstore_local(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    return Backend(ObjectStore(ObsLocalStore(tmp_path)), LocalStore(tmp_path).set)


def _obstore_s3(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    options = request.getfixturevalue("s3_options")
    backing = S3Store(BUCKET, prefix=uuid.uuid4().hex, **obstore_config(options))
    return Backend(ObjectStore(backing), ObjectStore(backing).set, request_log(options),
                   functools.partial(set_latency, options))


BACKENDS: dict[str, Callable[[Path, pytest.FixtureRequest], Backend]] = {
    "memory": _memory, "local": _local, "zip": _zip,
    "fsspec-memory": _fsspec_memory, "fsspec-file": _fsspec_file, "fsspec-http": _fsspec_http,
    "fsspec-s3": _fsspec_s3,
    "obstore-memory": _obstore_memory, "obstore-local": _obstore_local, "obstore-s3": _obstore_s3,
    "obstore-http": _obstore_http,
}
REMOTE = ["fsspec-http", "fsspec-s3", "obstore-http", "obstore-s3"]


@pytest.fixture(params=list(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return BACKENDS[request.param](tmp_path, request)


@pytest.fixture(params=REMOTE)
def remote(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return BACKENDS[request.param](tmp_path, request)


def _read(store: Store, key: str, byte_range: Any = None, if_match: Any = None) -> ObjectRead | None:
    [got] = store.get_versioned([VersionedRequest(key, byte_range, if_match)])
    return got


# -- the contract ------------------------------------------------------------------------


def test_suffix_read_tells_the_size_and_a_version(backend: Backend) -> None:
    backend.write("c/0", VALUE)
    got = _read(backend.store, "c/0", SuffixRequest(4))
    assert got is not None and got.version is not None
    assert got == ObjectRead(b"6789", len(VALUE), got.version) and not got.changed


def test_ranges_are_answered_as_get_answers_them(backend: Backend) -> None:
    backend.write("v", VALUE)
    backend.write("empty", b"")
    requests = [VersionedRequest("v", r) for r, _ in RANGE_CASES]
    requests += [VersionedRequest("empty", r) for r in EMPTY_VALUE_REQUESTS]
    got = backend.store.get_versioned(requests)
    assert all(g is not None for g in got)
    assert [g.data for g in got if g] == [e for _, e in RANGE_CASES] + [b""] * len(EMPTY_VALUE_REQUESTS)
    assert [g.data for g in got if g] == [backend.store.get(r.key, r.range) for r in requests]
    assert [g.size for g in got if g] == [len(VALUE)] * len(RANGE_CASES) + [0] * len(EMPTY_VALUE_REQUESTS)
    assert len({g.version for g in got[: len(RANGE_CASES)] if g}) == 1  # one object, one version


def test_missing_keys_read_as_none(backend: Backend) -> None:
    backend.write("here", VALUE)
    [here] = backend.store.get_versioned([VersionedRequest("here")])
    assert here is not None
    got = backend.store.get_versioned([
        VersionedRequest("nope"), VersionedRequest("here", SuffixRequest(2)),
        VersionedRequest("no/such/key", RangeRequest(0, 4)), VersionedRequest("nope", None, here.version),
    ])
    assert got == [None, ObjectRead(b"89", len(VALUE), here.version), None, None]


@pytest.mark.filterwarnings("ignore:Duplicate name")  # ZipStore appends a member set again
def test_version_is_stable_and_changes_with_the_value(backend: Backend) -> None:
    backend.write("k", VALUE)
    a, b = backend.store.get_versioned([VersionedRequest("k", SuffixRequest(4)), VersionedRequest("k", RangeRequest(0, 2))])
    assert a is not None and b is not None and a.version is not None and a.version == b.version
    assert _read(backend.store, "k") == ObjectRead(VALUE, len(VALUE), a.version)
    assert _read(backend.store, "k", RangeRequest(2, 5), a.version) == ObjectRead(b"234", len(VALUE), a.version)

    backend.write("k", OTHER)
    new = _read(backend.store, "k", SuffixRequest(4))
    assert new is not None and new.data == b"ghij" and new.version is not None and new.version != a.version
    old, current = backend.store.get_versioned([
        VersionedRequest("k", RangeRequest(0, 3), a.version), VersionedRequest("k", RangeRequest(0, 3), new.version),
    ])
    assert old is not None and old.changed and old.data is None
    assert old.size in (len(OTHER), UNKNOWN_SIZE) and old.version in (new.version, None)
    assert current == ObjectRead(b"abc", len(OTHER), new.version) and not current.changed


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_value_rewritten_twice_between_reads_is_changed(backend: Backend) -> None:
    """The version read first must not come back for the third value: not
    through a reused object id (memory), inode (files) or position."""
    for i in range(20):
        backend.write("k", bytes([65 + i]) * 10)
        first = _read(backend.store, "k", SuffixRequest(1))
        assert first is not None
        version = first.version
        del first  # nothing keeps the first value alive
        backend.write("k", b"-" * 10)
        backend.write("k", bytes([97 + i]) * 10)
        got = _read(backend.store, "k", SuffixRequest(1), version)
        assert got is not None and got.changed, i


# -- requests on the wire ------------------------------------------------------------------


def _segment(path: str) -> str:
    return path.split("?", 1)[0].rsplit("/", 1)[-1]


def test_one_get_per_item_and_no_head(remote: Backend) -> None:
    assert remote.log is not None
    for key in ("a", "b", "c"):
        remote.write(key, VALUE)
    [before] = remote.store.get_versioned([VersionedRequest("a", SuffixRequest(1))])
    remote.write("a", OTHER)
    [c] = remote.store.get_versioned([VersionedRequest("c", SuffixRequest(1))])
    assert before is not None and c is not None
    remote.log.clear()
    with remote.latency(0.15):  # so that requests in flight together overlap in the log
        got = remote.store.get_versioned([
            VersionedRequest("a", SuffixRequest(4)), VersionedRequest("b", RangeRequest(2, 5)),
            VersionedRequest("c"), VersionedRequest("b", OffsetRequest(3)), VersionedRequest("missing", SuffixRequest(4)),
            VersionedRequest("a", RangeRequest(0, 2), before.version), VersionedRequest("c", RangeRequest(0, 2), c.version),
        ])
    assert [g.data if g else g for g in got] == [b"ghij", b"234", VALUE, b"3456789", None, None, b"01"]
    assert got[5] is not None and got[5].changed
    seen = sorted((e.method, _segment(e.path), e.range or "") for e in remote.log.entries())
    assert seen == sorted([
        ("GET", "a", "bytes=-4"), ("GET", "b", "bytes=2-4"), ("GET", "c", ""), ("GET", "b", "bytes=3-"),
        ("GET", "missing", "bytes=-4"), ("GET", "a", "bytes=0-1"), ("GET", "c", "bytes=0-1"),
    ])
    assert remote.log.depth() == 1  # all in one round trip


def test_plain_reads_are_one_get_each_and_no_head(remote: Backend) -> None:
    """``get`` and ``get_partial_values`` too: one GET per value or range, a
    batch in one round trip (s3fs's own ``cat_file`` asks a HEAD before a
    whole read)."""
    assert remote.log is not None
    for key in ("a", "b"):
        remote.write(key, VALUE)
    remote.log.clear()
    assert remote.store.get("a") == VALUE
    assert remote.store.get("b", RangeRequest(2, 5)) == b"234"
    with remote.latency(0.15):
        got = remote.store.get_partial_values([("a", None), ("b", SuffixRequest(3)), ("missing", None)])
    assert got == [VALUE, b"789", None]
    entries = remote.log.entries()
    assert [e.method for e in entries] == ["GET"] * 5
    assert round_trip_depth(entries[2:]) == 1  # the batch in one round trip


def test_request_concurrency_bounds_the_requests_in_flight(remote: Backend) -> None:
    assert remote.log is not None
    keys = [f"k{i}" for i in range(8)]
    for key in keys:
        remote.write(key, VALUE)
    store = remote.store
    batch = [VersionedRequest(key, SuffixRequest(4)) for key in keys]
    with remote.latency(0.15):
        remote.log.clear()
        assert [g.data if g else g for g in store.get_versioned(batch)] == [b"6789"] * 8
        assert remote.log.count("GET") == 8 and remote.log.max_in_flight() == 8 and remote.log.depth() == 1

        store.request_concurrency = 2
        remote.log.clear()
        assert [g.data if g else g for g in store.get_versioned(batch)] == [b"6789"] * 8
        assert remote.log.count("GET") == 8 and remote.log.count("HEAD") == 0
        assert remote.log.max_in_flight() == 2 and remote.log.depth() == 4

        remote.log.clear()  # the same bound for plain batched reads
        assert store.get_partial_values([(key, SuffixRequest(4)) for key in keys]) == [b"6789"] * 8
        assert remote.log.max_in_flight() == 2


# -- backend specifics ---------------------------------------------------------------------------


def test_http_server_ignoring_range_and_if_match(tmp_path: Path) -> None:
    """A server that answers every GET with the whole file and never checks
    If-Match: the store cuts the range out and compares the ETag itself."""
    (tmp_path / "v").write_bytes(VALUE)
    with serve_directory(tmp_path, honour_ranges=False, honour_if_match=False) as (base, server):
        store = FsspecStore.from_url(base, read_only=True)
        got = store.get_versioned([VersionedRequest("v", r) for r, _ in RANGE_CASES])
        assert [g.data if g else g for g in got] == [e for _, e in RANGE_CASES]
        assert {(g.size, g.version) for g in got if g} == {(len(VALUE), got[0].version if got[0] else None)}
        old = got[0].version if got[0] else None
        LocalStore(tmp_path).set("v", OTHER)
        server.log.clear()
        changed = _read(store, "v", SuffixRequest(2), old)
        assert changed is not None and changed.changed and changed.size == len(OTHER) and changed.version != old
        assert [(e.status, e.method) for e in server.log.entries()] == [(200, "GET")]


def test_other_fsspec_filesystems_fall_back_to_the_default(tmp_path: Path) -> None:
    """A filesystem with no versioned reader (here fsspec's zip) answers
    through Store's default: right bytes and sizes, no versions, and so no
    if_match can be confirmed."""
    with ZipStore(tmp_path / "a.zip", mode="w") as z:
        z.set("v", VALUE)
    store = FsspecStore.from_url(f"zip::{(tmp_path / 'a.zip').as_uri()}")
    assert store.get_versioned([VersionedRequest("v", SuffixRequest(3)), VersionedRequest("nope")]) == [
        ObjectRead(b"789", len(VALUE), None), None]
    got = _read(store, "v", SuffixRequest(3), "any")
    assert got is not None and got.changed


def test_fsspec_request_concurrency_setting_survives_pickle(site: Site) -> None:
    assert FsspecStore.from_url("memory://rc-default").request_concurrency == 64
    by_url = FsspecStore.from_url(site.base, read_only=True, request_concurrency=3)
    clone = pickle.loads(pickle.dumps(by_url))
    assert clone == by_url and clone.request_concurrency == 3 and clone.read_only
    by_fs = FsspecStore(fsspec.filesystem("memory"), "/rc", request_concurrency=5)
    assert pickle.loads(pickle.dumps(by_fs)).request_concurrency == 5
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="request_concurrency"):
            FsspecStore.from_url("memory://rc", request_concurrency=bad)  # type: ignore[arg-type]


def test_obstore_request_concurrency_and_its_old_name(tmp_path: Path) -> None:
    store = ObjectStore(ObsLocalStore(tmp_path), request_concurrency=3)
    assert store.request_concurrency == store.max_concurrency == 3
    store.max_concurrency = 7
    assert store.request_concurrency == 7
    assert pickle.loads(pickle.dumps(store)).request_concurrency == 7
    assert ObjectStore.from_url(tmp_path.as_uri(), request_concurrency=4).max_concurrency == 4
    assert ObjectStore(ObsMemoryStore()).request_concurrency == 64
    with pytest.raises(ValueError, match="request_concurrency"):
        store.max_concurrency = 0


def test_zarr_python_store_request_concurrency_is_its_bound() -> None:
    zarr_storage = pytest.importorskip("zarr.storage")
    from zarrpy.stores.zarr_python import ZarrPythonStore

    store = ZarrPythonStore(zarr_storage.MemoryStore())
    assert store.request_concurrency == store.max_concurrency == 32
    store.max_concurrency = 2
    assert store.request_concurrency == 2
    store.set("a", VALUE)
    assert store.get_versioned([VersionedRequest("a", SuffixRequest(3))]) == [ObjectRead(b"789", 10, None)]


@pytest.mark.parametrize("make", [LocalStore, lambda root: FsspecStore.from_url(root.as_uri())], ids=["local", "fsspec-file"])
def test_a_file_written_within_the_racy_window_has_no_version_and_fails_an_older_condition(tmp_path, make):
    """Inodes are reused and mtimes coarse, so two quick same-sized writes
    can leave size, mtime and inode equal: a file that young tells no
    version, and a condition on its previous version is not met."""
    write = _aged_writer(tmp_path)
    write("k", VALUE)
    store = make(tmp_path)
    old = _read(store, "k")
    assert old is not None and old.version is not None
    LocalStore(tmp_path).set("k", OTHER)  # just now
    young = _read(store, "k", SuffixRequest(2))
    assert young == ObjectRead(b"ij", len(OTHER), None)
    stale = _read(store, "k", None, old.version)
    assert stale is not None and stale.changed
