"""Lean S3 GETs and PUTs: zarrpy's HTTP client with AWS Signature Version 4,
for the plain case of an s3fs filesystem.

Why: on an object store a read is judged by its round trips, and once those
are at the floor by the CPU each answer costs on the one event-loop thread
that receives them all. A ``get_object`` through s3fs and aiobotocore costs
about 1.3 ms of CPU (parameter checks, endpoint rules, signing, event hooks,
response parsing); the same GET signed here and sent through
:class:`~zarrpy.stores._http_client.LeanClient` costs about a fifth of that.

What it covers: ``GET`` of one object, with ``Range`` and ``If-Match``,
signed with the credentials of the filesystem's own botocore client (asked
for every request, so refreshed credentials are used), to the endpoint and
region that client resolved: path-style on a custom endpoint (as botocore
does), virtual-hosted on AWS for DNS-compatible bucket names. Answers it
hands on: ``200``, ``206``, ``404`` and ``412``. ``PUT`` of one value below
:data:`PUT_MAX_NBYTES`, with ``If-Match`` / ``If-None-Match`` when written
conditionally, its body hashed into the signature over plain HTTP (not over
TLS, as botocore does); answers handed on: ``200``, and the refusals
``412``, ``409`` and ``404`` (no checksum header is sent: TLS, or over
plain HTTP the signed body hash, protects the bytes; a bucket that demands
one answers ``400``). A ``404`` is handed on only as S3's ``NoSuchKey``.
Everything else (a redirect to another region, a missing bucket, an
unsatisfiable range, throttling, a refused signature, a lost connection, a
request that takes longer than the client's connect and read timeouts
together) goes back to s3fs, which retries, redirects and names errors as
it always has; a bucket that answered with a redirect or a ``400`` is left
to s3fs from then on. TLS trusts what botocore trusts (its CA bundle).

What it leaves to s3fs (:func:`lean_s3_of` says None, or the bucket is
not :func:`plain_bucket`: ARNs, directory buckets): version-aware or
requester-pays filesystems, extra request arguments (SSE-C, …), per-bucket
region caching, proxies, client certificates, TLS verification turned off,
accelerate / dual-stack / FIPS endpoints, client context parameters,
signature versions other than
SigV4, and ``ZARRPY_HTTP_CLIENT=aiohttp``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import os
import re
import ssl
import sys
import urllib.request
import weakref
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, urlsplit

from ._http_client import ENV_VAR, TIMEOUT, Answer, LeanClient, host_header

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
"""The payload hash of a request without a body (``x-amz-content-sha256``)."""

ANSWERED = frozenset({200, 206, 404, 412})
"""Statuses handed on; any other answer is asked again through s3fs."""

PUT_ANSWERED = frozenset({200, 409, 412, 404})
"""Statuses of a PUT handed on: written, or a condition refused."""

PUT_MAX_NBYTES = 100 * 2**20
"""Values this long or longer are left to s3fs (a multipart upload, as s3fs sends them)."""

UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"

LEFT_TO_S3FS = frozenset({301, 307, 400})
"""Statuses after which a bucket is read through s3fs only (its region or
endpoint is not the one this client signs for)."""

_ALLOWED_S3_CONFIG = frozenset({"addressing_style", "us_east_1_regional_endpoint", "payload_signing_enabled"})
_HARMLESS_CONNECTOR_ARGS = frozenset({"keepalive_timeout", "force_close", "use_dns_cache", "ttl_dns_cache",
                                      "enable_cleanup_closed"})
"""aiohttp connector settings that change nothing a GET sends or trusts."""
_OWN_ENDPOINT_SUFFIXES = ("--x-s3", "--xa-s3", "--op-s3", ".mrap")
_ERROR_CODE = re.compile(rb"<Code>([^<]{1,64})</Code>")
_VIRTUAL_BUCKET = re.compile(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]")


class SigV4:
    """AWS Signature Version 4 of S3 requests without a query, for one region."""

    def __init__(self, region: str, service: str = "s3") -> None:
        self.region = region
        self.service = service
        self._key: tuple[str, str, bytes] | None = None  # (secret, day, signing key)

    def _signing_key(self, secret: str, day: str) -> bytes:
        cached = self._key
        if cached is not None and cached[0] == secret and cached[1] == day:
            return cached[2]
        key = ("AWS4" + secret).encode()
        for part in (day, self.region, self.service, "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        self._key = (secret, day, key)
        return key

    def sign(self, method: str, host: str, path: str, headers: dict[str, str], access_key: str, secret: str,
             token: str | None, now: datetime | None = None, payload: str = EMPTY_SHA256) -> dict[str, str]:
        """``headers`` plus ``x-amz-date``, ``x-amz-content-sha256``
        (``payload``: the body's SHA-256, or ``UNSIGNED-PAYLOAD``), the
        session token and ``Authorization``; ``path`` is the request target
        as sent (percent-encoded, no query), ``host`` the ``Host`` header."""
        stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
        out = dict(headers)
        out["x-amz-content-sha256"] = payload
        out["x-amz-date"] = stamp
        if token:
            out["x-amz-security-token"] = token
        signed = {name.lower(): " ".join(value.split()) for name, value in out.items()}
        signed["host"] = host
        names = sorted(signed)
        canonical = "\n".join([method, path, "", *(f"{n}:{signed[n]}" for n in names), "", ";".join(names),
                               payload])
        day = stamp[:8]
        scope = f"{day}/{self.region}/{self.service}/aws4_request"
        to_sign = f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        signature = hmac.new(self._signing_key(secret, day), to_sign.encode(), hashlib.sha256).hexdigest()
        out["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
                                f"SignedHeaders={';'.join(names)}, Signature={signature}")
        return out


class LeanS3:
    """GETs of one s3fs filesystem's objects, signed for its botocore client."""

    def __init__(self, s3client: Any, endpoint: str, region: str, addressing: str, tls: ssl.SSLContext | None,
                 unsigned: bool, timeout: float = TIMEOUT) -> None:
        self.s3client = s3client
        parts = urlsplit(endpoint)
        self._scheme = parts.scheme
        self._netloc = parts.netloc
        self._host = host_header(parts)  # as the HTTP client sends it
        self._base = parts.path.rstrip("/")
        host = parts.hostname or ""
        self._aws = host.endswith(".amazonaws.com")
        self._ip_host = _is_ip(host)
        self._addressing = addressing
        self._unsigned = unsigned
        self.signer = SigV4(region)
        self.client = LeanClient(tls=tls, timeout=timeout)
        self.left_to_s3fs: set[str] = set()

    def url_of(self, bucket: str, key: str) -> str:
        """The object's URL: path-style unless virtual-hosted applies (as
        botocore chooses: on AWS, or with ``addressing_style="virtual"``,
        for a bucket name that can be a host name, on a host that is not an
        IP address)."""
        return self._target(bucket, key)[0]

    def _target(self, bucket: str, key: str) -> tuple[str, str, str]:
        """The object's URL, its ``Host`` header and its request path (see :meth:`url_of`)."""
        quoted = quote(key, safe="/~")
        virtual = (self._addressing == "virtual" or (self._aws and self._addressing != "path")) and \
            _VIRTUAL_BUCKET.fullmatch(bucket) is not None and not self._ip_host
        if virtual:
            path = f"{self._base}/{quoted}"
            return f"{self._scheme}://{bucket}.{self._netloc}{path}", f"{bucket}.{self._host}", path
        path = f"{self._base}/{bucket}/{quoted}"
        return f"{self._scheme}://{self._netloc}{path}", self._host, path

    async def get(self, bucket: str, key: str, headers: dict[str, str]) -> Answer | None:
        """The answer of one signed GET, or None when s3fs is to ask (see the
        module docstring)."""
        return await self._send("GET", bucket, key, headers, b"", ANSWERED)

    async def put(self, bucket: str, key: str, value: bytes, headers: dict[str, str]) -> Answer | None:
        """The answer of one signed PUT of ``value`` (``200``, or a refused
        condition: ``412``, ``409``, ``404``), or None when s3fs is to send it
        (nothing was written then)."""
        if len(value) >= PUT_MAX_NBYTES:
            return None
        return await self._send("PUT", bucket, key, headers, value, PUT_ANSWERED)

    def get_blocking(self, bucket: str, key: str, headers: dict[str, str]) -> Answer | None | object:
        """:meth:`get` from the calling thread (no hop through the event
        loop, see :meth:`LeanClient.request_blocking`): the answer, None when
        s3fs is to ask, or :data:`NOT_NOW` when the credentials cannot be
        had without the loop (refreshable ones that are due: the async path
        refreshes them)."""
        if not self._sendable(bucket):
            return None
        frozen = None if self._unsigned else self._frozen_now()
        if frozen is NOT_NOW:
            return NOT_NOW
        prepared = self._signed("GET", bucket, key, headers, b"", frozen)
        if prepared is None:
            return None
        url, signed = prepared
        try:
            answer = self.client.request_blocking("GET", url, signed)
        except (OSError, ValueError):  # TimeoutError is an OSError
            return None  # s3fs asks again, with its retries and its errors
        return self._taken(bucket, answer, ANSWERED)

    async def _send(self, method: str, bucket: str, key: str, headers: dict[str, str], body: bytes,
                    answered: frozenset[int]) -> Answer | None:
        if not self._sendable(bucket):
            return None
        frozen = None
        if not self._unsigned:
            credentials = self.s3client._request_signer._credentials
            if credentials is None:
                return None
            frozen = await credentials.get_frozen_credentials()
        prepared = self._signed(method, bucket, key, headers, body, frozen)
        if prepared is None:
            return None
        url, signed = prepared
        try:
            answer = await self.client.request(method, url, signed, body)
        except (OSError, asyncio.TimeoutError, ValueError):
            return None  # s3fs asks again, with its retries and its errors
        return self._taken(bucket, answer, answered)

    def _sendable(self, bucket: str) -> bool:
        return bucket not in self.left_to_s3fs and plain_bucket(bucket)

    def _signed(self, method: str, bucket: str, key: str, headers: dict[str, str], body: bytes,
                frozen: Any) -> tuple[str, dict[str, str]] | None:
        """The URL and the signed headers of a request (unsigned when
        ``frozen``, the credentials, is None on an unsigned client); None
        without usable credentials."""
        url, host, path = self._target(bucket, key)
        if self._unsigned:
            return url, headers
        if frozen is None or not frozen.access_key or not frozen.secret_key:
            return None
        # Over TLS the body is not hashed (as botocore does); over plain HTTP it is signed.
        payload = EMPTY_SHA256 if not body else \
            UNSIGNED_PAYLOAD if self._scheme == "https" else hashlib.sha256(body).hexdigest()
        return url, self.signer.sign(method, host, path, headers, frozen.access_key, frozen.secret_key,
                                     frozen.token, payload=payload)

    def _frozen_now(self) -> Any:
        """The client's credentials as they are now, without awaiting: static
        ones, or refreshable ones already fetched and not yet due; else
        :data:`NOT_NOW` (or None: no credentials)."""
        credentials = self.s3client._request_signer._credentials
        if credentials is None:
            return None
        refreshable = sys.modules.get("botocore.credentials")
        if refreshable is not None and isinstance(credentials, refreshable.RefreshableCredentials):
            frozen = getattr(credentials, "_frozen_credentials", None)
            if frozen is None or credentials.refresh_needed():
                return NOT_NOW
            return frozen
        return credentials  # static: access_key, secret_key and token are plain attributes

    def _taken(self, bucket: str, answer: Answer | None, answered: frozenset[int]) -> Answer | None:
        """``answer`` if it is one handed on; None leaves it to s3fs (and a
        redirect or a refused request the bucket, from then on)."""
        if answer is None or answer.status in LEFT_TO_S3FS:  # a redirect, or not this endpoint's bucket
            self.left_to_s3fs.add(bucket)
            return None
        if answer.status not in answered or (answer.status == 404 and error_code(answer) != "NoSuchKey"):
            return None  # a missing bucket, or a 404 from something else: s3fs tells
        return answer


NOT_NOW = object()
"""What :meth:`LeanS3.get_blocking` answers when only the async path can
sign (refreshable credentials that are due)."""


def plain_bucket(bucket: str) -> bool:
    """Whether ``bucket`` is an ordinary bucket name: access-point and
    Object Lambda ARNs, directory buckets (S3 Express) and multi-region
    access points go to endpoints and signatures of their own (s3fs's)."""
    return ":" not in bucket and not bucket.endswith(_OWN_ENDPOINT_SUFFIXES)


def error_code(answer: Answer) -> str | None:
    """The ``<Code>`` of an S3 error document."""
    m = _ERROR_CODE.search(answer.body[:4096])
    return m[1].decode("ascii", "replace") if m else None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _plain_config(s3client: Any) -> bool:
    """Whether the botocore client's settings are ones :class:`LeanS3` honours."""
    config = s3client.meta.config
    if getattr(config, "proxies", None) or getattr(config, "client_cert", None):
        return False
    if getattr(config, "use_fips_endpoint", False) or getattr(config, "use_dualstack_endpoint", False):
        return False
    if getattr(config, "client_context_params", None):  # accelerate, force_path_style … as ruleset inputs
        return False
    s3 = getattr(config, "s3", None) or {}
    if set(s3) - _ALLOWED_S3_CONFIG or s3.get("addressing_style", "auto") not in ("auto", "path", "virtual"):
        return False
    session = getattr(getattr(s3client, "_endpoint", None), "http_session", None)
    if session is None or getattr(session, "_cert_file", None):
        return False
    if set(getattr(session, "_connector_args", None) or {}) - _HARMLESS_CONNECTOR_ARGS:
        return False
    proxy_config = getattr(session, "_proxy_config", None)
    endpoint = s3client.meta.endpoint_url
    if proxy_config is not None and proxy_config.proxy_url_for(endpoint):
        return False
    parts = urlsplit(endpoint)
    if urllib.request.getproxies().get(parts.scheme) and not urllib.request.proxy_bypass(parts.hostname or ""):
        return False
    return getattr(session, "_verify", True) is not False


def _tls_of(s3client: Any) -> ssl.SSLContext | None:
    """The TLS context trusting what the botocore client trusts: its CA
    bundle (``verify=True`` is botocore's default bundle, certifi's), not
    the system's store."""
    from botocore.httpsession import get_cert_path  # type: ignore[import-untyped]

    verify = get_cert_path(getattr(s3client._endpoint.http_session, "_verify", True))
    if not isinstance(verify, str) or not os.path.exists(verify):
        return None  # the default context (only used for https)
    if os.path.isdir(verify):
        return ssl.create_default_context(capath=verify)
    return ssl.create_default_context(cafile=verify)


def _timeout_of(s3client: Any) -> float:
    """Seconds one lean request may take: the client's connect and read
    timeouts together (a stalled request then goes to s3fs, which retries)."""
    config = s3client.meta.config
    total = 0.0
    for name in ("connect_timeout", "read_timeout"):
        value = getattr(config, name, None)
        total += float(value) if isinstance(value, (int, float)) and value > 0 else 60.0
    return total


def _lean_for_client(s3client: Any) -> LeanS3 | None:
    if not _plain_config(s3client):
        return None
    import botocore  # type: ignore[import-untyped]  # s3fs is in use, so botocore is there

    signature = s3client._request_signer._signature_version
    unsigned = signature is botocore.UNSIGNED
    if not unsigned and signature not in ("s3v4", "v4"):
        return None
    endpoint = s3client.meta.endpoint_url
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or parts.query:
        return None
    s3 = getattr(s3client.meta.config, "s3", None) or {}
    return LeanS3(s3client, endpoint, s3client._request_signer._region_name or s3client.meta.region_name,
                  s3.get("addressing_style", "auto"), _tls_of(s3client), unsigned, _timeout_of(s3client))


def _plain_fs(fs: Any) -> bool:
    """Whether the s3fs filesystem asks nothing of its requests beyond a GET."""
    if os.environ.get(ENV_VAR, "").strip().lower() == "aiohttp":
        return False
    if getattr(fs, "version_aware", True) or getattr(fs, "requester_pays", True):
        return False
    if getattr(fs, "s3_additional_kwargs", None) or getattr(fs, "req_kw", None):
        return False
    return not getattr(fs, "cache_regions", False)


_LEAN: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, asyncio.AbstractEventLoop], LeanS3 | None]] = \
    weakref.WeakKeyDictionary()
"""Per filesystem: what its lean client was made for (the botocore client
and the event loop) and that client (None: s3fs only). A forked process
never reuses it: fsspec refuses a filesystem used across a fork."""


def known_lean_s3(fs: Any) -> LeanS3 | None:
    """The lean client :func:`lean_s3_of` made for ``fs``, when ``fs``'s
    botocore client and loop are still the ones it was made for; None
    otherwise (not yet made, or only s3fs). For a read from another
    thread, which cannot await the session."""
    seen = _LEAN.get(fs) if _plain_fs(fs) else None
    if seen is None:
        return None
    (s3client, loop), lean = seen
    if getattr(fs, "_s3", None) is not s3client or getattr(fs, "loop", None) is not loop:
        return None
    return lean


async def lean_s3_of(fs: Any) -> LeanS3 | None:
    """The lean GETs of the s3fs filesystem ``fs`` (on its loop), or None
    when its settings are ones only s3fs honours. Follows the filesystem's
    client and loop: a new session or loop gets a new lean client (its
    kept-alive connections are never used from another loop)."""
    if not _plain_fs(fs):
        return None
    s3client = await fs.set_session()
    made_for = (s3client, asyncio.get_running_loop())
    seen = _LEAN.get(fs)
    if seen is not None and seen[0][0] is made_for[0] and seen[0][1] is made_for[1]:
        return seen[1]
    lean = _lean_for_client(s3client)
    _LEAN[fs] = (made_for, lean)
    return lean


async def lean_put(fs: Any, path: str, value: bytes, headers: dict[str, str]) -> int | None:
    """The status of one lean PUT of ``value`` at ``path`` on the s3fs
    filesystem ``fs`` (``200``, or a refused condition), or None when s3fs
    is to send it (nothing was written then). The filesystem's listing
    cache forgets ``path`` once anything answered."""
    lean = await lean_s3_of(fs)
    if lean is None:
        return None
    bucket, key, _ = fs.split_path(path)
    answer = await lean.put(bucket, key, value, headers)
    if answer is None:
        return None
    fs.invalidate_cache(path)
    return answer.status


__all__ = ["ANSWERED", "EMPTY_SHA256", "LeanS3", "NOT_NOW", "PUT_ANSWERED", "PUT_MAX_NBYTES", "SigV4", "known_lean_s3",
           "lean_put", "lean_s3_of"]
