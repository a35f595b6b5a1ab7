"""FsspecStore against a real S3 API: moto's server on 127.0.0.1, via s3fs.

The server runs in a thread of this process for the module, on a free port;
credentials are dummies and every client timeout is bounded.
"""

from __future__ import annotations

import os
import pickle
import uuid
from typing import Any, Iterator

import pytest

pytest.importorskip("s3fs")
moto_server = pytest.importorskip("moto.server")

import s3fs  # noqa: E402

from zarrpy.core.byte_range import RangeRequest, SuffixRequest  # noqa: E402
from zarrpy.stores import FsspecStore, store_from_url  # noqa: E402

from .test_fsspec import FsspecContract  # noqa: E402

BUCKET = "zarrpy-test"
DUMMY_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


def _one_server_header(mp: pytest.MonkeyPatch) -> None:
    """Make moto's server send one ``Server`` header, not two.

    Werkzeug sends its own and moto adds ``Server: AmazonS3``; aiohttp's
    pure-Python parser (used under ``python -X dev`` or without its C
    extension) rejects the duplicate. Test-only patch, undone with ``mp``.
    """
    try:
        from moto.moto_server.werkzeug_app import MotoRequestHandler
    except ImportError:  # another moto layout: leave it alone
        return
    original = MotoRequestHandler.send_header

    def send_header(self, keyword: str, value: str) -> None:  # type: ignore[no-untyped-def]
        if keyword.lower() == "server":
            if getattr(self, "_zarrpy_server_sent", None) is self.requestline:
                return
            self._zarrpy_server_sent = self.requestline
        original(self, keyword, value)

    mp.setattr(MotoRequestHandler, "send_header", send_header)


@pytest.fixture(scope="module")
def s3_options() -> Iterator[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as mp:
        for name, value in DUMMY_ENV.items():
            mp.setenv(name, value)
        mp.delenv("AWS_PROFILE", raising=False)
        _one_server_header(mp)
        server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        try:
            host, port = server.get_host_and_port()
            options: dict[str, Any] = {
                "endpoint_url": f"http://{host}:{port}",
                "key": "testing",
                "secret": "testing",
                "config_kwargs": {
                    "connect_timeout": 5,
                    "read_timeout": 10,
                    "retries": {"max_attempts": 1},
                },
            }
            fs = s3fs.S3FileSystem(**options)
            # moto keeps buckets per process: a second server for another module
            # reusing this fixture (tests/test_info.py) already has the bucket.
            fs.makedirs(BUCKET, exist_ok=True)
            yield options
        finally:
            server.stop()


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
