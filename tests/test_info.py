"""Array.info / info_complete / nbytes_stored / nchunks_initialized: what they
report, and that they never read a chunk (counted in the store, and at the
server over HTTP and S3)."""

from __future__ import annotations

import functools
import http.server
import threading
import uuid
from pathlib import Path
from typing import Any, Iterator, Sequence
from urllib.parse import urlsplit

import numpy as np
import pytest

import zarrpy
from zarrpy.api._info import human_bytes
from zarrpy.core.byte_range import ByteRequest
from zarrpy.errors import KeyNotFoundError
from zarrpy.stores import LocalStore, MemoryStore, Store, store_from_url

# The real moto S3 server of the store tests (a module-scoped fixture).
from tests.stores.test_fsspec_s3 import BUCKET, s3_options  # noqa: F401

zarr = pytest.importorskip("zarr")

ZSTD = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]


class CountingStore(Store):
    """Delegates every method to ``inner`` and records what was asked of it."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.fetched: list[str] = []  # keys read by get / get_partial_values
        self.listings = 0  # list_prefix / list_dir / list_prefix_with_sizes calls
        self.sized: list[str] = []  # keys asked with getsize

    @property
    def read_only(self) -> bool:  # type: ignore[override]
        return self.inner.read_only

    def reset(self) -> None:
        self.fetched.clear()
        self.sized.clear()
        self.listings = 0

    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        self.fetched.append(key)
        return self.inner.get(key, byte_range)

    def get_partial_values(self, requests: Sequence[tuple[str, ByteRequest | None]]) -> list[bytes | None]:
        self.fetched.extend(key for key, _ in requests)
        return self.inner.get_partial_values(requests)

    def set(self, key: str, value: bytes) -> None:
        self.inner.set(key, value)

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def _set(self, key: str, value: bytes) -> None:
        self.inner.set(key, value)

    def _delete(self, key: str) -> None:
        self.inner.delete(key)

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        self.listings += 1
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix: str) -> Iterator[str]:
        self.listings += 1
        return self.inner.list_dir(prefix)

    def list_prefix_with_sizes(self, prefix: str) -> Iterator[tuple[str, int]]:
        self.listings += 1
        return self.inner.list_prefix_with_sizes(prefix)

    def getsize(self, key: str) -> int:
        self.sized.append(key)
        return self.inner.getsize(key)

    def __repr__(self) -> str:
        return f"CountingStore({self.inner!r})"


def _disk_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _fill(a: zarrpy.Array, rng: np.random.Generator) -> np.ndarray:
    data = rng.integers(0, 1000, size=a.shape).astype(a.dtype)
    a[...] = data
    return data


@pytest.fixture(params=["memory", "local"])
def counted(request: pytest.FixtureRequest, tmp_path: Path) -> CountingStore:
    inner: Store = MemoryStore() if request.param == "memory" else LocalStore(tmp_path / "a.zarr")
    return CountingStore(inner)


@pytest.mark.parametrize("shards", [None, (8, 8)], ids=["chunks", "shards"])
def test_info_and_info_complete_read_no_chunk(counted: CountingStore, shards: tuple[int, int] | None) -> None:
    a = zarrpy.create_array(counted, shape=(20, 20), dtype="int32", chunks=(4, 4), shards=shards,
                            compressors=ZSTD, fill_value=0)
    _fill(a, np.random.default_rng(0))
    opened = zarrpy.open_array(counted)
    counted.reset()
    text = str(opened.info)
    assert counted.fetched == [] and counted.sized == [] and counted.listings == 1
    counted.reset()
    complete = opened.info_complete()
    assert counted.fetched == [] and counted.sized == [] and counted.listings == 1
    counted.reset()
    str(complete), complete.as_dict()  # a snapshot: printing does not list again
    assert counted.listings == 0
    for label in ("Type", "Zarr format", "Data type", "Fill value", "Shape", "Chunk shape", "Order",
                  "Read-only", "Store type", "Filters", "Serializer", "Compressors", "No. bytes"):
        assert f"\n{label.ljust(18)} : " in "\n" + text, label
    assert "No. bytes stored" not in text and "Storage ratio" not in text
    assert ("Shard shape" in text) == (shards is not None)
    assert "zstd(level=1, checksum=False)" in text and "int32" in text and "(20, 20)" in text
    d = complete.as_dict()
    assert d["nbytes"] == 1600 and d["nbytes_stored"] == opened.nbytes_stored() > 0
    assert d["storage_ratio"] == round(1600 / d["nbytes_stored"], 1)
    assert d["chunks_initialized"] == ("25/25" if shards is None else "36/25")
    if shards is not None:
        assert d["shards_initialized"] == "9/9" and d["shard_shape"] == (8, 8)


def test_nbytes_stored_and_counts_read_no_chunk(counted: CountingStore) -> None:
    a = zarrpy.create_array(counted, shape=(12,), dtype="uint8", chunks=(2,), shards=(6,))
    a[:7] = 1
    counted.reset()
    assert a.nshards_initialized == 2 and a.nchunks_initialized == 6
    assert a.nbytes_stored() > 0
    assert counted.fetched == [] and counted.sized == [] and counted.listings == 3


def test_info_as_dict_keeps_the_keys_the_cli_uses() -> None:
    a = zarrpy.create_array({}, shape=(6, 4), dtype="float32", chunks=(3, 2), fill_value=np.float32(1.5),
                            attributes={"u": 1})
    a[:3] = 2
    d = a.info.as_dict()
    assert d["name"] == "/" and d["type"] == "Array" and d["zarr_format"] == 3
    assert d["data_type"] == "float32" and d["fill_value"] == 1.5
    assert d["shape"] == (6, 4) and d["chunk_shape"] == (3, 2) and "shard_shape" not in d
    assert d["order"] == "C" and d["read_only"] is False and d["store"] == "MemoryStore"
    assert d["serializer"] == {"name": "bytes", "configuration": {"endian": "little"}}
    assert d["codecs"][0]["name"] == "bytes" and d["filters"] == []
    assert d["nbytes"] == 96 and d["chunks_initialized"] == "2/4"
    assert "nbytes_stored" not in d


def test_v2_array_info(tmp_path: Path) -> None:
    a = zarrpy.create_array(str(tmp_path / "v2.zarr"), shape=(5, 5), dtype="<i4", chunks=(2, 2),
                            zarr_format=2, order="F")
    a[:2, :2] = 1
    info = a.info_complete()
    d = info.as_dict()
    assert d["zarr_format"] == 2 and d["order"] == "F" and d["chunks_initialized"] == "1/9"
    assert d["nbytes_stored"] == _disk_bytes(tmp_path / "v2.zarr")


def test_human_bytes() -> None:
    assert human_bytes(0) == "0" and human_bytes(1023) == "1023"
    assert human_bytes(1024) == "1024 (1.0K)" and human_bytes(2_000_000) == "2000000 (1.9M)"
    assert human_bytes(3 * 2**40) == f"{3 * 2**40} (3.0T)"


# -- agreement with the disk and with zarr-python ---------------------------------------
@pytest.mark.parametrize(
    ("shape", "chunks", "shards", "region"),
    [
        ((10, 10), (2, 2), (4, 4), (slice(0, 5), slice(0, 5))),  # edge shards
        ((10, 10), (2, 2), (4, 4), (slice(None), slice(None))),
        ((9, 8), (3, 2), None, (slice(2, 7), slice(0, 3))),
        ((16,), (2,), (8,), (slice(9, 10),)),
    ],
    ids=["sharded-edge", "sharded-full", "chunks", "sharded-1d"],
)
def test_counts_and_sizes_match_zarr_python_and_the_disk(
    tmp_path: Path, shape: tuple[int, ...], chunks: tuple[int, ...], shards: tuple[int, ...] | None,
    region: tuple[slice, ...],
) -> None:
    root = tmp_path / "a.zarr"
    z = zarr.create_array(str(root), shape=shape, chunks=chunks, shards=shards, dtype="int16", fill_value=0)
    z[region] = 7
    ours = zarrpy.open_array(str(root))
    assert ours.nchunks_initialized == z.nchunks_initialized
    assert ours.nshards_initialized == z._nshards_initialized
    assert ours.nbytes_stored() == z.nbytes_stored() == _disk_bytes(root)
    # and for what zarrpy writes
    mine = tmp_path / "b.zarr"
    b = zarrpy.create_array(str(mine), shape=shape, chunks=chunks, shards=shards, dtype="int16", fill_value=0)
    b[region] = 7
    zb = zarr.open_array(str(mine), mode="r")
    assert b.nchunks_initialized == zb.nchunks_initialized
    assert b.nbytes_stored() == zb.nbytes_stored() == _disk_bytes(mine)
    assert b.info_complete().as_dict()["nbytes_stored"] == _disk_bytes(mine)


def test_nbytes_stored_of_a_nested_array_counts_only_its_own_keys(tmp_path: Path) -> None:
    g = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="w")
    x = g.create_array("x", shape=(4,), dtype="int8", chunks=(2,))
    x[...] = 1
    g.create_array("xy", shape=(4,), dtype="int8", chunks=(2,))[...] = 2  # a sibling with a shared name prefix
    assert x.nbytes_stored() == _disk_bytes(tmp_path / "g.zarr" / "x")


# -- the Store defaults and the overrides ---------------------------------------------------
class DictOnlyStore(Store):
    """Implements only the abstract methods: sizes come from the defaults."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.reads: list[str] = []

    def get(self, key: str, byte_range: ByteRequest | None = None) -> bytes | None:
        self.reads.append(key)
        return self.data.get(key)

    def _set(self, key: str, value: bytes) -> None:
        self.data[key] = value

    def _delete(self, key: str) -> None:
        self.data.pop(key, None)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        return iter([k for k in list(self.data) if k.startswith(prefix)])


def test_store_size_defaults_fall_back_to_reading() -> None:
    store = DictOnlyStore()
    store.set("a/x", b"123")
    store.set("a/y", b"")
    store.set("ab", b"12345")
    assert store.getsize("a/x") == 3
    assert sorted(store.list_prefix_with_sizes("a")) == [("a/x", 3), ("a/y", 0), ("ab", 5)]
    assert store.getsize_prefix("a") == 3  # a "directory": "a/" only
    assert store.getsize_prefix("") == 8
    with pytest.raises(KeyNotFoundError, match="'a/z'"):
        store.getsize("a/z")
    assert "a/x" in store.reads  # the default reads; the bundled stores override it


def test_bundled_stores_report_sizes_without_reading(tmp_path: Path) -> None:
    for inner in (MemoryStore(), LocalStore(tmp_path / "s")):
        store = CountingStore(inner)
        store.set("a/x", b"123")
        assert store.getsize("a/x") == 3 and store.getsize_prefix("a") == 3
        assert store.fetched == []


# -- over HTTP: the server sees no chunk download --------------------------------------------
class CountingHandler(http.server.SimpleHTTPRequestHandler):
    requests: list[tuple[str, str]]  # (method, path), set per server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send_head(self):  # type: ignore[no-untyped-def]
        self.requests.append((self.command, urlsplit(self.path).path))
        return super().send_head()


@pytest.fixture
def http_site(tmp_path: Path) -> Iterator[tuple[str, Path, list[tuple[str, str]]]]:
    pytest.importorskip("aiohttp")
    seen: list[tuple[str, str]] = []
    handler = type("Handler", (CountingHandler,), {"requests": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(tmp_path)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}", tmp_path, seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.parametrize("shards", [None, (16, 16)], ids=["chunks", "shards"])
def test_info_over_http_downloads_no_chunk(
    http_site: tuple[str, Path, list[tuple[str, str]]], shards: tuple[int, int] | None
) -> None:
    base, root, seen = http_site
    a = zarrpy.create_array(str(root / "x.zarr"), shape=(64, 64), dtype="float32", chunks=(8, 8),
                            shards=shards, compressors=ZSTD)
    _fill(a, np.random.default_rng(1))
    remote = zarrpy.open_array(f"{base}/x.zarr")
    seen.clear()
    text = str(remote.info)
    assert "Chunks Initialized : 64/64" in text
    complete = remote.info_complete()
    assert remote.nbytes_stored() == complete.as_dict()["nbytes_stored"] == _disk_bytes(root / "x.zarr")
    assert remote.nchunks_initialized == 64
    # GETs are directory pages only (no file is downloaded); sizes come from HEAD requests
    downloads = [path for method, path in seen if method == "GET" and (root / path.lstrip("/")).is_file()]
    assert downloads == []
    heads = [path for method, path in seen if method == "HEAD"]
    assert heads and all((root / path.lstrip("/")).is_file() for path in heads)
    assert {method for method, _ in seen} == {"GET", "HEAD"}


# -- over S3 (moto): the server sees listings, no GetObject of a chunk -------------------------
@pytest.fixture
def s3_requests(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every request moto's server answers, as (method, URL path and query)."""
    from moto.moto_api import recorder

    seen: list[tuple[str, str]] = []

    def record(request: Any, body: Any = None) -> None:
        parts = urlsplit(request.raw_url)
        seen.append((request.method, parts.path + ("?" + parts.query if parts.query else "")))

    monkeypatch.setattr(recorder, "_record_request", record)
    return seen


def test_info_complete_over_s3_downloads_no_chunk(
    s3_options: dict[str, Any], s3_requests: list[tuple[str, str]]
) -> None:
    url = f"s3://{BUCKET}/{uuid.uuid4().hex}/x.zarr"
    a = zarrpy.create_array(url, storage_options=s3_options, shape=(32, 32), dtype="int32", chunks=(8, 8),
                            shards=(16, 16), compressors=ZSTD)
    _fill(a, np.random.default_rng(2))
    expected = sum(len(v) for v in (a.store.get(k) for k in a.store.list()) if v is not None)
    remote = zarrpy.open_array(store_from_url(url, storage_options=s3_options, read_only=True))
    s3_requests.clear()
    complete = remote.info_complete().as_dict()
    assert complete["nbytes_stored"] == expected
    assert complete["shards_initialized"] == "4/4" and complete["chunks_initialized"] == "16/16"
    assert s3_requests, "the recorder saw no request: the counting hook is not wired"
    object_reads = [(m, p) for m, p in s3_requests if m in ("GET", "HEAD") and "/c/" in p.split("?")[0]]
    assert object_reads == []
    listings = [p for m, p in s3_requests if m == "GET" and "list-type=2" in p]
    assert len(listings) == len(s3_requests) == 1
