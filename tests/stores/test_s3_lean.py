"""Lean S3 GETs (zarrpy.stores._s3_lean): signatures as botocore makes them,
reads signed on the wire, and everything unusual left to s3fs."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from datetime import datetime, timezone
from typing import Any, Iterator

import numpy as np
import pytest

pytest.importorskip("s3fs")
from botocore.auth import S3SigV4Auth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402
from fsspec.asyn import sync  # noqa: E402

import zarrpy  # noqa: E402
from zarrpy.core.byte_range import RangeRequest, SuffixRequest  # noqa: E402
from zarrpy.stores.abc import VersionedRequest  # noqa: E402
from zarrpy.stores.fsspec import FsspecStore  # noqa: E402
from zarrpy.stores._s3_lean import SigV4, lean_s3_of  # noqa: E402
from tests.stores.sends import Sends  # noqa: E402
from tests.stores.s3_server import BUCKET, inspect_requests, request_log, s3_options, set_latency  # noqa: E402,F401

WHEN = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone.utc)


def botocore_authorization(url: str, headers: dict[str, str], key: str, secret: str, token: str | None,
                           region: str, stamp: str, method: str = "GET") -> str:
    """The ``Authorization`` botocore computes for ``method url`` that signs
    exactly ``headers`` (names as sent; the payload hash among them) at ``stamp``."""
    request = AWSRequest(method, url, headers=dict(headers))
    request.context["timestamp"] = stamp
    auth = S3SigV4Auth(Credentials(key, secret, token), "s3", region)
    canonical = auth.canonical_request(request)
    to_sign = auth.string_to_sign(request, canonical)
    signed = auth.signed_headers(auth.headers_to_sign(request))
    scope = f"{stamp[:8]}/{region}/s3/aws4_request"
    return f"AWS4-HMAC-SHA256 Credential={key}/{scope}, SignedHeaders={signed}, Signature={auth.signature(to_sign, request)}"


@pytest.mark.parametrize("path", ["/bucket/a/zarr.json", "/bucket/c/0/1", "/b/%20sp%C3%A4ce%2Bplus%3D~x",
                                  "/b//double/%2F"])
@pytest.mark.parametrize("extra", [{}, {"Range": "bytes=-4096"}, {"Range": "bytes=10-19", "If-Match": '"abc"'}])
@pytest.mark.parametrize("token", [None, "session/token+="])
def test_signatures_are_the_ones_botocore_makes(path: str, extra: dict[str, str], token: str | None) -> None:
    signer = SigV4("eu-west-3")
    host = "127.0.0.1:9000"
    out = signer.sign("GET", host, path, extra, "AKIDEXAMPLE", "wJalr/XUtnFEMI+K7MDENG", token, now=WHEN)
    sent = {k: v for k, v in out.items() if k != "Authorization"}
    assert sent["x-amz-date"] == "20260304T050607Z"
    assert ("x-amz-security-token" in sent) == (token is not None)
    expected = botocore_authorization(f"http://{host}{path}", {"host": host, **sent}, "AKIDEXAMPLE",
                                      "wJalr/XUtnFEMI+K7MDENG", token, "eu-west-3", sent["x-amz-date"])
    assert out["Authorization"] == expected


@pytest.mark.parametrize("payload", [hashlib.sha256(b"value").hexdigest(), "UNSIGNED-PAYLOAD"])
def test_put_signatures_are_the_ones_botocore_makes(payload: str) -> None:
    signer = SigV4("us-east-1")
    out = signer.sign("PUT", "s3.example", "/b/c/0/1", {"If-None-Match": "*"}, "AK", "SK", None, now=WHEN,
                      payload=payload)
    sent = {k: v for k, v in out.items() if k != "Authorization"}
    assert sent["x-amz-content-sha256"] == payload
    assert out["Authorization"] == botocore_authorization("https://s3.example/b/c/0/1", {"host": "s3.example", **sent},
                                                          "AK", "SK", None, "us-east-1", sent["x-amz-date"], "PUT")


def test_the_signing_key_is_made_again_for_a_new_day_or_secret() -> None:
    signer = SigV4("us-east-1")
    one = signer.sign("GET", "h", "/b/k", {}, "A", "s1", None, now=WHEN)["Authorization"]
    assert signer.sign("GET", "h", "/b/k", {}, "A", "s1", None, now=WHEN)["Authorization"] == one
    other_secret = signer.sign("GET", "h", "/b/k", {}, "A", "s2", None, now=WHEN)["Authorization"]
    next_day = signer.sign("GET", "h", "/b/k", {}, "A", "s1", None, now=WHEN.replace(day=5))
    assert other_secret != one
    assert next_day["Authorization"] == botocore_authorization(
        "http://h/b/k", {"host": "h", **{k: v for k, v in next_day.items() if k != "Authorization"}}, "A", "s1", None,
        "us-east-1", "20260305T050607Z")


# -- against moto's server ----------------------------------------------------------


class Wire:
    """What the server saw: each request's method, raw path and whether it
    came from botocore (its User-Agent) and carried a valid signature."""

    def __init__(self, key: str, secret: str) -> None:
        self.key, self.secret = key, secret
        self.seen: list[tuple[str, str, bool, bool]] = []
        self.answer: dict[tuple[str, int], int] = {}  # (method, n-th lean one, 0-based) -> status to answer instead
        self._lean: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any]) -> int | None:
        botocore = "botocore" in environ.get("HTTP_USER_AGENT", "")
        valid = self._valid(environ)
        with self._lock:
            self.seen.append((environ["REQUEST_METHOD"], environ["RAW_URI"], botocore, valid))
            if botocore:
                return None
            method = environ["REQUEST_METHOD"]
            n = self._lean[method] = self._lean.get(method, -1) + 1
            return self.answer.get((method, n))

    def _valid(self, environ: dict[str, Any]) -> bool:
        auth = environ.get("HTTP_AUTHORIZATION", "")
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            return False
        signed = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
        headers = {name: environ["HTTP_HOST"] if name == "host" else environ[f"HTTP_{name.upper().replace('-', '_')}"]
                   for name in signed}
        region = auth.split("Credential=")[1].split("/")[2]
        token = environ.get("HTTP_X_AMZ_SECURITY_TOKEN")
        expected = botocore_authorization(f"http://{environ['HTTP_HOST']}{environ['RAW_URI']}", headers, self.key,
                                          self.secret, token, region, environ["HTTP_X_AMZ_DATE"],
                                          environ["REQUEST_METHOD"])
        return auth == expected

    def lean_gets(self, method: str = "GET") -> list[tuple[str, str, bool, bool]]:
        return [s for s in self.seen if s[0] == method and not s[2]]

    def botocore_gets(self, method: str = "GET") -> list[tuple[str, str, bool, bool]]:
        return [s for s in self.seen if s[0] == method and s[2]]


@pytest.fixture
def wire(s3_options: dict[str, Any]) -> Iterator[Wire]:  # noqa: F811
    w = Wire(s3_options["key"], s3_options["secret"])
    inspect_requests(s3_options, w)
    try:
        yield w
    finally:
        inspect_requests(s3_options, None)


def s3fs_of(s3_options: dict[str, Any], **extra: Any) -> Any:  # noqa: F811
    import s3fs

    return s3fs.S3FileSystem(skip_instance_cache=True, **s3_options, **extra)


def test_array_reads_go_signed_through_the_lean_client(s3_options: dict[str, Any], wire: Wire) -> None:  # noqa: F811
    fs = s3fs_of(s3_options)
    store = FsspecStore(fs, f"{BUCKET}/lean/a b+ä")
    data = np.arange(64 * 48, dtype="uint16").reshape(64, 48)
    a = zarrpy.create_array(store, shape=data.shape, chunks=(16, 16), shards=(32, 32), dtype=data.dtype)
    a[:] = data
    wire.seen.clear()
    b = zarrpy.open_array(store, mode="r")
    np.testing.assert_array_equal(b[5:40, 3:30], data[5:40, 3:30])
    gets = wire.lean_gets()
    assert gets and not wire.botocore_gets(), wire.seen
    assert all(valid for *_, valid in gets), gets
    assert any("a%20b%2B%C3%A4/zarr.json" in path for _, path, _, _ in gets)


def test_lean_answers_keep_missing_changed_and_suffix_semantics(s3_options: dict[str, Any], wire: Wire) -> None:  # noqa: F811
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-semantics")
    store.set("k", bytes(range(200)))
    wire.seen.clear()
    first = store.get_versioned([VersionedRequest("k", SuffixRequest(50))])[0]
    assert first is not None and first.data == bytes(range(150, 200)) and first.size == 200
    again = store.get_versioned([VersionedRequest("k", RangeRequest(10, 20), first.version),
                                 VersionedRequest("missing", None)])
    assert again[0] is not None and again[0].data == bytes(range(10, 20))
    assert again[1] is None
    store.set("k", b"new")
    changed = store.get_versioned([VersionedRequest("k", RangeRequest(0, 2), first.version)])[0]
    assert changed is not None and changed.data is None
    assert len(wire.lean_gets()) == 4 and not wire.botocore_gets(), wire.seen


@pytest.mark.parametrize("status", [500, 503, 403])
def test_an_answer_it_does_not_take_is_asked_again_through_s3fs(s3_options: dict[str, Any], wire: Wire,
                                                              status: int) -> None:  # noqa: F811
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-fallback")
    store.set("k", b"0123456789")
    wire.seen.clear()
    wire.answer = {("GET", 0): status}
    assert store.get("k", RangeRequest(2, 5)) == b"234"
    assert len(wire.botocore_gets()) == 1
    assert store.get("k") == b"0123456789"  # the next read is lean again
    assert len(wire.lean_gets()) == 2 and len(wire.botocore_gets()) == 1


@pytest.mark.parametrize("status", [301, 400])
def test_a_bucket_that_redirects_is_left_to_s3fs(s3_options: dict[str, Any], wire: Wire, status: int) -> None:  # noqa: F811
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-redirect")
    store.set("k", b"abc")
    wire.seen.clear()
    wire.answer = {("GET", 0): status}
    assert store.get("k") == b"abc"
    assert store.get("k") == b"abc"
    assert len(wire.lean_gets()) == 1 and len(wire.botocore_gets()) == 2


def test_a_lost_connection_is_asked_again_through_s3fs(s3_options: dict[str, Any], wire: Wire) -> None:  # noqa: F811
    fs = s3fs_of(s3_options)
    store = FsspecStore(fs, f"{BUCKET}/lean-lost")
    store.set("k", b"abc")
    lean = sync(fs.loop, lean_s3_of, fs)
    assert lean is not None
    lean._netloc = "127.0.0.1:1"  # nothing listens there: the connection is refused
    wire.seen.clear()
    assert store.get("k") == b"abc"
    assert len(wire.botocore_gets()) == 1


@pytest.mark.parametrize("extra", [
    {"requester_pays": True},
    {"version_aware": True},
    {"s3_additional_kwargs": {"ServerSideEncryption": "AES256"}},
    {"config_kwargs": {"proxies": {"http": "http://127.0.0.1:1"}}},
    {"config_kwargs": {"s3": {"use_accelerate_endpoint": True}}},
    {"client_kwargs": {"verify": False}},
])
def test_settings_only_s3fs_honours_leave_reads_to_it(s3_options: dict[str, Any], extra: dict[str, Any]) -> None:  # noqa: F811
    options = dict(s3_options)
    for name in ("config_kwargs", "client_kwargs"):
        if name in extra:
            extra = {**extra, name: {**options.pop(name, {}), **extra[name]}}
    fs = s3fs_of(options, **extra)
    assert sync(fs.loop, lean_s3_of, fs) is None


def test_the_environment_switch_leaves_reads_to_s3fs(s3_options: dict[str, Any], wire: Wire,  # noqa: F811
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZARRPY_HTTP_CLIENT", "aiohttp")
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-off")
    store.set("k", b"abc")
    wire.seen.clear()
    assert store.get("k") == b"abc"
    assert not wire.lean_gets() and len(wire.botocore_gets()) == 1


def test_a_new_session_gets_a_new_lean_client(s3_options: dict[str, Any]) -> None:  # noqa: F811
    fs = s3fs_of(s3_options)
    first = sync(fs.loop, lean_s3_of, fs)
    assert first is not None and sync(fs.loop, lean_s3_of, fs) is first

    async def refreshed() -> Any:
        await fs.set_session(refresh=True)
        return await lean_s3_of(fs)

    second = sync(fs.loop, refreshed)
    assert second is not None and second is not first and second.s3client is fs._s3


def test_anonymous_reads_are_unsigned(s3_options: dict[str, Any], wire: Wire) -> None:  # noqa: F811
    s3fs_of(s3_options).call_s3("put_object", Bucket=BUCKET, Key="lean-anon/k", Body=b"abc", ACL="public-read")
    options = {k: v for k, v in s3_options.items() if k not in ("key", "secret")}
    store = FsspecStore(s3fs_of(options, anon=True), f"{BUCKET}/lean-anon")
    wire.seen.clear()
    assert store.get("k") == b"abc"
    assert len(wire.lean_gets()) == 1 and not wire.botocore_gets()
    assert not wire.lean_gets()[0][3]  # no signature at all


def test_virtual_hosted_urls_on_aws_and_path_style_elsewhere() -> None:
    from zarrpy.stores._s3_lean import LeanS3

    aws = LeanS3(None, "https://s3.eu-west-1.amazonaws.com", "eu-west-1", "auto", None, True)
    assert aws.url_of("my-bucket", "a/b c") == "https://my-bucket.s3.eu-west-1.amazonaws.com/a/b%20c"
    assert aws.url_of("my.dotted.bucket", "k") == "https://s3.eu-west-1.amazonaws.com/my.dotted.bucket/k"
    assert aws.url_of("Upper", "k") == "https://s3.eu-west-1.amazonaws.com/Upper/k"
    path = LeanS3(None, "https://s3.eu-west-1.amazonaws.com", "eu-west-1", "path", None, True)
    assert path.url_of("my-bucket", "k") == "https://s3.eu-west-1.amazonaws.com/my-bucket/k"
    custom = LeanS3(None, "http://127.0.0.1:9000/base/", "us-east-1", "auto", None, True)
    assert custom.url_of("my-bucket", "~k") == "http://127.0.0.1:9000/base/my-bucket/~k"
    virtual = LeanS3(None, "http://minio.example:9000", "us-east-1", "virtual", None, True)
    assert virtual.url_of("bkt", "k") == "http://bkt.minio.example:9000/k"
    assert virtual.url_of("My_Bucket", "k") == "http://minio.example:9000/My_Bucket/k"  # not a host name
    on_ip = LeanS3(None, "http://127.0.0.1:9000", "us-east-1", "virtual", None, True)
    assert on_ip.url_of("bkt", "k") == "http://127.0.0.1:9000/bkt/k"


@pytest.mark.parametrize("bucket", ["arn:aws:s3:us-west-2:123456789012:accesspoint/ap", "data--usw2-az1--x-s3",
                                    "data--usw2-az1--xa-s3", "mfzwi23gnjvgw.mrap"])
def test_buckets_with_endpoints_of_their_own_are_left_to_s3fs(bucket: str) -> None:
    from zarrpy.stores._s3_lean import LeanS3, plain_bucket

    assert not plain_bucket(bucket)
    lean = LeanS3(None, "http://127.0.0.1:1", "us-east-1", "auto", None, True)
    assert asyncio.run(lean.get(bucket, "k", {})) is None  # nothing sent (nothing listens there either)
    assert plain_bucket("my-bucket") and plain_bucket("my.dotted.bucket")


def test_tls_trusts_botocores_bundle_and_timeouts_follow_the_client(s3_options: dict[str, Any]) -> None:  # noqa: F811
    import ssl

    from botocore.httpsession import get_cert_path

    from zarrpy.stores._s3_lean import _timeout_of, _tls_of

    fs = s3fs_of(s3_options)
    client = fs.s3
    # aiobotocore trusts exactly get_cert_path(verify): certifi's bundle, or AWS_CA_BUNDLE's
    expected = ssl.create_default_context(cafile=get_cert_path(client._endpoint.http_session._verify)).cert_store_stats()
    tls = _tls_of(client)
    assert tls is not None and tls.cert_store_stats() == expected
    assert _timeout_of(client) == 15.0  # the fixture's connect (5 s) and read (10 s) timeouts
    lean = sync(fs.loop, lean_s3_of, fs)
    assert lean is not None and lean.client._timeout == 15.0


def test_a_404_that_is_not_no_such_key_is_asked_again_through_s3fs(s3_options: dict[str, Any],  # noqa: F811
                                                                   wire: Wire) -> None:
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-404")
    store.set("k", b"there")
    wire.seen.clear()
    wire.answer = {("GET", 0): 404}  # an error document whose code is not NoSuchKey
    assert store.get("k") == b"there"
    assert len(wire.lean_gets()) == 1 and len(wire.botocore_gets()) == 1
    wire.seen.clear()
    assert store.get("missing") is None  # moto's NoSuchKey: missing, without asking s3fs
    assert len(wire.lean_gets()) == 1 and not wire.botocore_gets()


def test_concurrent_reads_each_get_their_own_answer(s3_options: dict[str, Any], wire: Wire) -> None:  # noqa: F811
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-many")
    for i in range(8):
        store.set(f"k{i}", bytes([i]) * 100)
    wire.seen.clear()
    for _ in range(3):
        got = store.get_partial_values([(f"k{i}", RangeRequest(0, 10)) for i in range(8)])
        assert got == [bytes([i]) * 10 for i in range(8)]
    assert len(wire.lean_gets()) == 24 and all(valid for *_, valid in wire.lean_gets())


# -- PUTs ----------------------------------------------------------------------------


def test_array_writes_go_signed_through_the_lean_client(s3_options: dict[str, Any], wire: Wire) -> None:  # noqa: F811
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-put")
    data = np.arange(64 * 48, dtype="uint16").reshape(64, 48)
    wire.seen.clear()
    a = zarrpy.create_array(store, shape=data.shape, chunks=(16, 16), shards=(32, 32), dtype=data.dtype)
    a[:] = data
    a[3:9, 5:7] = 7  # read-modify-write of one shard, written conditionally
    data[3:9, 5:7] = 7
    puts = wire.lean_gets("PUT")
    assert len(puts) >= 6 and not wire.botocore_gets("PUT"), wire.seen
    assert all(valid for *_, valid in puts), puts
    np.testing.assert_array_equal(zarrpy.open_array(FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-put"))[:],
                                  data)


def test_conditional_puts_through_the_lean_client_refuse_as_s3_does(s3_options: dict[str, Any],  # noqa: F811
                                                                     wire: Wire) -> None:
    from zarrpy.stores.writes import ABSENT, ConditionalWrite

    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-conditional")
    assert store.supports_conditional_writes
    wire.seen.clear()
    assert store.set_conditional([ConditionalWrite("k", b"one", ABSENT)]) == [True]
    version = store.get_versioned([VersionedRequest("k", None)])[0].version
    assert store.set_conditional([ConditionalWrite("k", b"two", ABSENT),
                                  ConditionalWrite("k", b"two", '"not-the-etag"')]) == [False, False]
    assert store.set_conditional([ConditionalWrite("k", b"two", version)]) == [True]
    assert store.set_conditional([ConditionalWrite("gone", b"x", version)]) == [False]
    assert store.get("k") == b"two" and store.get("gone") is None
    assert len(wire.lean_gets("PUT")) == 5 and not wire.botocore_gets("PUT"), wire.seen


@pytest.mark.parametrize("status", [500, 503])
def test_a_put_it_does_not_take_is_sent_again_through_s3fs(s3_options: dict[str, Any], wire: Wire,  # noqa: F811
                                                         status: int) -> None:
    from zarrpy.stores.writes import ABSENT, ConditionalWrite

    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-put-fallback-{status}")
    wire.seen.clear()
    wire.answer = {("PUT", 0): status, ("PUT", 1): status}
    store.set("k", b"plain")
    assert store.set_conditional([ConditionalWrite("c", b"new", ABSENT)]) == [True]
    assert store.get("k") == b"plain" and store.get("c") == b"new"
    assert len(wire.lean_gets("PUT")) == 2 and len(wire.botocore_gets("PUT")) == 2


def test_a_long_value_is_left_to_s3fs(s3_options: dict[str, Any], wire: Wire,  # noqa: F811
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from zarrpy.stores import _s3_lean

    monkeypatch.setattr(_s3_lean, "PUT_MAX_NBYTES", 1000)
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-put-long")
    wire.seen.clear()
    store.set_many([("short", b"s" * 999), ("long", b"l" * 1000)])
    assert store.get("short") == b"s" * 999 and store.get("long") == b"l" * 1000
    assert [p for _, p, _, _ in wire.lean_gets("PUT")] == [f"/{BUCKET}/lean-put-long/short"]
    assert [p for _, p, _, _ in wire.botocore_gets("PUT")] == [f"/{BUCKET}/lean-put-long/long"]


def test_another_loop_gets_its_own_lean_client(s3_options: dict[str, Any]) -> None:  # noqa: F811
    fs = s3fs_of(s3_options)
    first = sync(fs.loop, lean_s3_of, fs)
    assert first is not None
    elsewhere = asyncio.run(lean_s3_of(fs))  # its connections would belong to another loop
    assert elsewhere is not None and elsewhere is not first and elsewhere.client is not first.client
    assert sync(fs.loop, lean_s3_of, fs) is not first  # made again for fs's own loop, not shared


def test_lean_requests_keep_the_round_trips_at_the_floor(s3_options: dict[str, Any], wire: Wire) -> None:  # noqa: F811
    """Through the lean client: open = 1 GET; a region over 4 shards = the
    indexes in one wave, then the inner chunks' ranges in one; writing 4
    whole shards = 4 PUTs in one wave (all signed, none through botocore)."""
    from bench.http_server import round_trip_depth

    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-waves")
    data = np.arange(64 * 64, dtype="uint16").reshape(64, 64)
    a = zarrpy.create_array(store, shape=data.shape, chunks=(8, 8), shards=(32, 32), dtype=data.dtype)
    log = request_log(s3_options)
    set_latency(s3_options, 0.05)
    try:
        log.clear()
        wire.seen.clear()
        a[:] = data
        writes = log.entries()
        assert [e.method for e in writes] == ["PUT"] * 4 and round_trip_depth(writes) == 1
        log.clear()
        b = zarrpy.open_array(store, mode="r")
        assert [e.method for e in log.entries()] == ["GET"]
        log.clear()
        np.testing.assert_array_equal(b[5:40, 3:45], data[5:40, 3:45])
        reads = log.entries()
        assert all(e.method == "GET" for e in reads) and round_trip_depth(reads) == 2, reads
    finally:
        set_latency(s3_options, 0.0)
    assert not wire.botocore_gets() and not wire.botocore_gets("PUT"), wire.seen
    assert all(valid for *_, valid in wire.lean_gets() + wire.lean_gets("PUT"))


def test_a_single_read_is_signed_and_sent_from_the_calling_thread(s3_options: dict[str, Any], wire: Wire,  # noqa: F811
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the lean client exists, one read alone is sent blocking (no hop
    through the loop); a batch goes on the loop. Both signed, the same answers."""
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-blocking")
    store.set("k", bytes(range(100)))  # the write made the lean client
    sends = Sends(monkeypatch)
    wire.seen.clear()
    alone = [store.get_versioned([VersionedRequest("k", RangeRequest(3, 9))])[0],
             store.get_versioned([VersionedRequest("missing")])[0]]
    assert (sends.blocking, sends.on_loop) == (2, 0)
    batch = store.get_versioned([VersionedRequest("k", RangeRequest(3, 9)), VersionedRequest("missing")])
    assert (sends.blocking, sends.on_loop) == (2, 1)
    assert alone == batch and alone[0] is not None and alone[0].data == bytes(range(3, 9)) and alone[1] is None
    changed = store.get_versioned([VersionedRequest("k", None, '"not-its-etag"')])[0]
    assert changed is not None and changed.data is None
    assert len(wire.lean_gets()) == 5 and not wire.botocore_gets(), wire.seen
    assert all(valid for *_, valid in wire.lean_gets())


def test_the_first_read_of_a_filesystem_goes_on_the_loop_then_blocking(s3_options: dict[str, Any], wire: Wire,  # noqa: F811
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    s3fs_of(s3_options).pipe_file(f"{BUCKET}/lean-first/k", b"abc")
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-first")  # a new filesystem: no lean client yet
    sends = Sends(monkeypatch)
    wire.seen.clear()
    assert store.get("k") == b"abc"
    assert sends.blocking == 0  # the lean client is made on the loop (it awaits the session)
    assert store.get("k") == b"abc"
    assert sends.blocking == 1
    assert len(wire.lean_gets()) == 2 and not wire.botocore_gets(), wire.seen


def test_credentials_due_for_a_refresh_are_refreshed_on_the_loop(s3_options: dict[str, Any], wire: Wire,  # noqa: F811
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Refreshable credentials that are due cannot be had without the loop:
    that read goes the async way (which refreshes them), the next one,
    with fresh credentials, blocking; both signed with them."""
    from datetime import timedelta

    from aiobotocore.credentials import AioRefreshableCredentials

    fs = s3fs_of(s3_options)
    store = FsspecStore(fs, f"{BUCKET}/lean-refresh")
    store.set("k", b"abc")
    refreshes = []

    async def refresh() -> dict[str, Any]:
        refreshes.append(1)
        later = datetime.now(timezone.utc) + timedelta(hours=1)
        return {"access_key": s3_options["key"], "secret_key": s3_options["secret"], "token": "fresh-token",
                "expiry_time": later.isoformat()}

    expired = (datetime.now(timezone.utc) - timedelta(minutes=1)).isoformat()
    fs._s3._request_signer._credentials = AioRefreshableCredentials.create_from_metadata(
        {"access_key": "old", "secret_key": "old", "token": "old-token", "expiry_time": expired}, refresh, "test")
    sends = Sends(monkeypatch)
    wire.seen.clear()
    assert store.get("k") == b"abc"
    assert refreshes == [1] and sends.blocking == 0
    assert store.get("k") == b"abc"
    assert refreshes == [1] and sends.blocking == 1
    assert len(wire.lean_gets()) == 2 and not wire.botocore_gets(), wire.seen
    assert all(valid for *_, valid in wire.lean_gets())


@pytest.mark.parametrize("status", [500, 403])
def test_a_blocking_read_it_does_not_take_is_asked_once_through_s3fs(s3_options: dict[str, Any], wire: Wire,  # noqa: F811
                                                                     status: int) -> None:
    store = FsspecStore(s3fs_of(s3_options), f"{BUCKET}/lean-blocking-fallback")
    store.set("k", b"0123456789")
    wire.seen.clear()
    wire.answer = {("GET", 0): status}
    assert store.get("k", RangeRequest(2, 5)) == b"234"
    assert len(wire.lean_gets()) == 1 and len(wire.botocore_gets()) == 1  # the lean request is not sent twice
