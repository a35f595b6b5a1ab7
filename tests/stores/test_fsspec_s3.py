"""FsspecStore against a real S3 API: moto's server on 127.0.0.1, via s3fs.

The server (tests/stores/s3_server.py) runs in a thread of this process for
the module, on a free port; credentials are dummies and every client timeout
is bounded.
"""

from __future__ import annotations

import pickle
import uuid
from typing import Any

import pytest

pytest.importorskip("s3fs")

import s3fs  # noqa: E402

from zarrpy.core.byte_range import RangeRequest, SuffixRequest  # noqa: E402
from zarrpy.stores import FsspecStore, store_from_url  # noqa: E402

from .s3_server import BUCKET, s3_options  # noqa: E402, F401 - tests/test_info.py imports them from here
from .test_fsspec import FsspecContract  # noqa: E402

class TestFsspecS3(FsspecContract):
    threads = 4

    @pytest.fixture
    def store(self, s3_options: dict[str, Any]) -> FsspecStore:
        return FsspecStore.from_url(f"s3://{BUCKET}/{uuid.uuid4().hex}", storage_options=s3_options)

    def open_read_only(self, store: FsspecStore) -> FsspecStore:
        return FsspecStore.from_url(store.url, storage_options=store._storage_options, read_only=True)


def test_store_from_url_and_pickle(s3_options: dict[str, Any]) -> None:
    url = f"s3://{BUCKET}/{uuid.uuid4().hex}/x.zarr"
    store = store_from_url(url, storage_options=s3_options)
    assert isinstance(store, FsspecStore) and store.url == url
    store.set("c/0/0", b"0123456789")
    clone = pickle.loads(pickle.dumps(store))
    assert clone.get("c/0/0", SuffixRequest(4)) == b"6789"
    assert clone.get_partial_values(
        [("c/0/0", RangeRequest(0, 2)), ("c/0/1", None), ("c/0/0", SuffixRequest(20))]
    ) == [b"01", None, b"0123456789"]


def test_writes_from_another_client_are_listed(s3_options: dict[str, Any]) -> None:
    """Listing must not answer from a stale s3fs directory cache."""
    prefix = uuid.uuid4().hex
    store = FsspecStore.from_url(f"s3://{BUCKET}/{prefix}", storage_options=s3_options)
    store.set("a/k1", b"1")
    assert sorted(store.list_prefix("a/")) == ["a/k1"]
    assert list(store.list_dir("a")) == ["k1"]
    other = s3fs.S3FileSystem(**s3_options, skip_instance_cache=True)
    other.pipe_file(f"{BUCKET}/{prefix}/a/k2", b"2")
    assert sorted(store.list_prefix("a/")) == ["a/k1", "a/k2"]
    assert sorted(store.list_dir("a")) == ["k1", "k2"]
    other.rm_file(f"{BUCKET}/{prefix}/a/k1")
    assert sorted(store.list()) == ["a/k2"]


def test_botocore_pool_is_as_large_as_the_request_concurrency(s3_options: dict[str, Any]) -> None:
    """botocore keeps 10 connections by default: a batch of 25 reads would go
    out in three waves. The pool follows ``request_concurrency`` unless the
    options set it."""
    url = f"s3://{BUCKET}/{uuid.uuid4().hex}"
    store = FsspecStore.from_url(url, storage_options=s3_options, request_concurrency=48)
    assert store.fs.config_kwargs["max_pool_connections"] == 48
    assert FsspecStore.from_url(url, storage_options=s3_options).fs.config_kwargs["max_pool_connections"] == 64
    mine = {**s3_options, "config_kwargs": {"max_pool_connections": 7}}
    assert FsspecStore.from_url(url, storage_options=mine).fs.config_kwargs["max_pool_connections"] == 7
    assert pickle.loads(pickle.dumps(store)).fs.config_kwargs["max_pool_connections"] == 48
