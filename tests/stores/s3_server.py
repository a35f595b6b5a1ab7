"""A real S3 API for the store tests: moto's server on 127.0.0.1.

Import the ``s3_options`` fixture into a test module
(``from tests.stores.s3_server import BUCKET, s3_options  # noqa: F401``):
the server runs in a thread of this process for that module, on a free port,
with bucket :data:`BUCKET` made; credentials are dummies and every client
timeout is bounded. The fixture yields s3fs ``storage_options``
(``endpoint_url``, ``key``, ``secret`` …); :func:`obstore_config` turns them
into obstore's ``S3Store`` keyword arguments. :func:`request_log` is the
server's log of every request it answered (``bench.http_server``'s
:class:`~bench.http_server.RequestLog`), to count requests and round trips;
:func:`set_latency` makes the server wait before each answer;
:func:`inspect_requests` shows a test every request as it comes.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from typing import Any, Callable, Iterable, Iterator

import pytest

from bench.http_server import LoggedRequest, RequestLog

moto_server = pytest.importorskip("moto.server")

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


class _Watch:
    """What the test sees of one server: its request log and its latency."""

    def __init__(self) -> None:
        self.log = RequestLog()
        self.latency = 0.0
        self.inspect: Callable[[dict[str, Any]], int | None] | None = None


_WATCHES: dict[str, _Watch] = {}


def request_log(s3_options: dict[str, Any]) -> RequestLog:
    """The log of the server behind ``s3_options`` (the fixture's value)."""
    return _WATCHES[s3_options["endpoint_url"]].log


def set_latency(s3_options: dict[str, Any], seconds: float) -> None:
    """Make the server behind ``s3_options`` wait ``seconds`` before each answer
    (its threads wait side by side, as bench.http_server's do)."""
    _WATCHES[s3_options["endpoint_url"]].latency = seconds


def inspect_requests(s3_options: dict[str, Any], inspect: Callable[[dict[str, Any]], int | None] | None) -> None:
    """Call ``inspect`` with the WSGI environ of every request the server
    behind ``s3_options`` gets from now on (None: stop); a status it returns
    is the answer (an S3 error document), instead of moto's."""
    _WATCHES[s3_options["endpoint_url"]].inspect = inspect


def _watched(app: Callable[..., Iterable[bytes]], watch: _Watch) -> Callable[..., Iterable[bytes]]:
    """The WSGI app ``app`` waiting the latency and logging each request when
    its answer starts (as bench.http_server logs)."""
    log = watch.log

    def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        start = time.monotonic()
        status = watch.inspect(environ) if watch.inspect is not None else None
        if status is not None:
            return _error_answer(status, start_response)
        if watch.latency > 0:
            time.sleep(watch.latency)
        path = environ.get("PATH_INFO", "") + (f"?{environ['QUERY_STRING']}" if environ.get("QUERY_STRING") else "")

        def logged_start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            log.add(LoggedRequest(environ["REQUEST_METHOD"], path, environ.get("HTTP_RANGE"), start,
                                  time.monotonic(), int(status.split()[0])))
            return start_response(status, headers, exc_info)

        return app(environ, logged_start)

    return wsgi


def _error_answer(status: int, start_response: Callable[..., Any]) -> Iterable[bytes]:
    body = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>Injected{status}</Code>'
            f"<Message>injected by the test</Message></Error>").encode()
    start_response(f"{status} Injected", [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))])
    return [body]


def _make_bucket(endpoint_url: str) -> None:
    # boto3 comes with moto; moto keeps buckets per process, so a second server
    # for another module using this fixture may have the bucket already.
    import boto3

    client = boto3.client(
        "s3", endpoint_url=endpoint_url, aws_access_key_id="testing", aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    try:
        client.create_bucket(Bucket=BUCKET)
    except client.exceptions.BucketAlreadyOwnedByYou:
        pass


@pytest.fixture(scope="module")
def s3_options() -> Iterator[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as mp:
        for name, value in DUMMY_ENV.items():
            mp.setenv(name, value)
        mp.delenv("AWS_PROFILE", raising=False)
        _one_server_header(mp)
        server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        watch = _Watch()
        server._server.app = _watched(server._server.app, watch)  # werkzeug asks server.app per request
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
            _make_bucket(options["endpoint_url"])
            _WATCHES[options["endpoint_url"]] = watch
            yield options
        finally:
            _WATCHES.pop(f"http://{host}:{port}", None)
            server.stop()


def obstore_config(s3_options: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of obstore's ``S3Store`` for the server behind
    ``s3_options`` (plain HTTP, path-style requests, bounded timeouts). moto
    answers a read racing an overwrite of the same object with a ``500`` now
    and then, which S3 clients retry: so does this one, briefly."""
    return {
        "endpoint": s3_options["endpoint_url"],
        "access_key_id": s3_options["key"],
        "secret_access_key": s3_options["secret"],
        "region": "us-east-1",
        "virtual_hosted_style_request": False,
        "client_options": {"allow_http": True, "connect_timeout": "5s", "timeout": "10s"},
        "retry_config": {
            "max_retries": 3,
            "retry_timeout": timedelta(seconds=10),
            "backoff": {"init_backoff": timedelta(milliseconds=10), "max_backoff": timedelta(seconds=1), "base": 2.0},
        },
    }
