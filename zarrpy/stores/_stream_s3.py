"""Streamed writes to S3 through s3fs: multipart uploads.

:class:`S3ObjectWriter` is ``FsspecStore.open_writer`` on an s3fs
filesystem. The bytes written collect in a part buffer; a full part is sent
(``UploadPart``) when more bytes come, on s3fs's event loop, while the
caller goes on writing:

- ``CreateMultipartUpload`` goes out with the first part, not before: an
  object that never fills a part (one of exactly one part too) is one
  ``PutObject`` at commit and nothing else;
- parts are all ``part_nbytes`` long (8 MiB by default; S3 wants at least
  5 MiB for every part but the last, and some S3-compatible services parts of
  one size), the last one shorter;
- up to ``parts_in_flight`` parts upload at once; a further full part waits
  for one of them to finish. The writer therefore holds at most
  ``(parts_in_flight + 1) * part_nbytes`` bytes (24 MiB by default),
  however large the object. While a part is in flight the HTTP client
  (aiohttp) holds a copy of it too, two on Python < 3.12.9 where it joins
  headers and body: a process streaming one object peaks near
  ``(2 * parts_in_flight + 1) * part_nbytes`` (40 MiB by default; 56 MiB
  with the second copy). A part goes out as ``bytes``, not as a file object
  (which would save aiohttp's copy), because s3fs retries a failed request
  with the same arguments: a file object would be sent again from wherever
  the failed attempt left it, and a short part completes a torn object;
- commit sends the last part, waits for every part and completes the upload
  (``CompleteMultipartUpload``): the object appears whole, at once;
- abort, or any failed request, waits for the parts in flight and removes
  the upload (``AbortMultipartUpload``): the key keeps its old object.

Requests go through s3fs's ``_call_s3`` (its retries, its request options
such as ``s3_additional_kwargs``, its errors translated to ``OSError``) and
fail as :class:`~zarrpy.errors.StoreError` naming the key. No request asks
for sizes or lists anything.

A writer whose process dies never completes its upload, so the key keeps
its old object; the parts sent stay in the bucket as an incomplete upload,
invisible to reads and listings but stored (and billed) until removed: a
bucket lifecycle rule with ``AbortIncompleteMultipartUpload`` removes them.
A failed ``AbortMultipartUpload`` (the network gone) leaves the same; it is
not raised, since an abort runs while another error is on its way up.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
from collections import deque
from typing import TYPE_CHECKING, Any

from fsspec.asyn import sync

from ..errors import StoreError
from .abc import store_error
from .writes import ObjectWriter

if TYPE_CHECKING:
    from .abc import Store

PART_NBYTES = 8 << 20
"""The default part size of a streamed S3 write."""
PARTS_IN_FLIGHT = 2
"""The default number of parts uploading at once while the writer goes on."""
MIN_PART_NBYTES = 5 << 20
"""S3's minimum size of every part but the last."""
MAX_PART_NBYTES = 5 << 30
"""S3's maximum part size."""
MAX_PARTS = 10_000
"""S3's maximum number of parts of one upload."""


def check_part_settings(part_nbytes: int, parts_in_flight: int) -> None:
    """Refuse a part size S3 would refuse, or fewer than one part in flight."""
    if isinstance(part_nbytes, bool) or not isinstance(part_nbytes, int) or not (
        MIN_PART_NBYTES <= part_nbytes <= MAX_PART_NBYTES
    ):
        raise ValueError(f"write_part_nbytes must be an int from {MIN_PART_NBYTES} (5 MiB, S3's minimum part size) "
                         f"to {MAX_PART_NBYTES} (5 GiB), not {part_nbytes!r}")
    if isinstance(parts_in_flight, bool) or not isinstance(parts_in_flight, int) or parts_in_flight < 1:
        raise ValueError(f"write_parts_in_flight must be an int >= 1, not {parts_in_flight!r}")


class S3ObjectWriter(ObjectWriter):
    """The object under ``key`` (s3fs path ``path``) of ``store``, written as
    a multipart upload; see the module docstring."""

    def __init__(self, store: Store, key: str, fs: Any, path: str,
                 part_nbytes: int = PART_NBYTES, parts_in_flight: int = PARTS_IN_FLIGHT) -> None:
        check_part_settings(part_nbytes, parts_in_flight)
        super().__init__(key)
        self._store, self._fs, self._path = store, fs, path
        self._bucket, self._object, _ = fs.split_path(path)
        self._part_nbytes, self._parts_in_flight = part_nbytes, parts_in_flight
        self._loop: asyncio.AbstractEventLoop = fs.loop
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # no loop runs in this thread: the usual case
            running = None
        if running is self._loop:  # waiting for a part there would wait for ever
            raise NotImplementedError(f"cannot stream {key!r} to S3 from s3fs's own event loop thread")
        self._buffer, self._filled = io.BytesIO(), 0
        """The part being filled, and its length. ``getvalue()`` of a file
        object written once hands over its bytes without copying them: the
        request's body costs no second copy of the part (bytes, not the file
        object itself, so that a retried request sends the part from its start)."""
        self._upload: concurrent.futures.Future[str] | None = None
        """The upload's id (``CreateMultipartUpload``), once a part went out."""
        self._sending: deque[tuple[concurrent.futures.Future[dict[str, Any]], int]] = deque()
        """The parts in flight, each with its size."""
        self._sent: list[dict[str, Any]] = []
        """``{"PartNumber", "ETag"}`` of each part uploaded."""
        self._next_part = 1
        self.peak_nbytes = 0
        """The most bytes this writer has held at once (buffer and parts in flight)."""

    @property
    def buffered_nbytes(self) -> int:
        """The bytes this writer holds now: its part buffer and the parts in flight."""
        return self._filled + sum(n for fut, n in self._sending if not fut.done())

    # -- requests (on s3fs's loop) ----------------------------------------------------
    async def _create(self) -> str:
        out = await self._fs._call_s3("create_multipart_upload", Bucket=self._bucket, Key=self._object)
        upload_id: str = out["UploadId"]
        return upload_id

    async def _upload_part(self, number: int, body: bytes) -> dict[str, Any]:
        assert self._upload is not None
        upload_id = await asyncio.wrap_future(self._upload)
        out = await self._fs._call_s3("upload_part", Bucket=self._bucket, Key=self._object,
                                      UploadId=upload_id, PartNumber=number, Body=body)
        return {"PartNumber": number, "ETag": out["ETag"]}

    def _call(self, method: str, **kwargs: Any) -> Any:
        """One request of s3fs, waited for."""
        return sync(self._loop, self._fs._call_s3, method, Bucket=self._bucket, Key=self._object, **kwargs)

    # -- parts --------------------------------------------------------------------------
    def _send_part(self) -> None:
        """Send the part buffer, once a slot is free (the oldest part done)."""
        if self._next_part > MAX_PARTS:
            raise StoreError(f"cannot write key {self.key!r} to {self._store.display_name}: more than {MAX_PARTS} "
                             f"parts of {self._part_nbytes} bytes (S3's limit); set the store's "
                             "write_part_nbytes larger")
        self.peak_nbytes = max(self.peak_nbytes, self.buffered_nbytes)
        self._reap(block=len(self._sending) >= self._parts_in_flight)
        if self._upload is None:
            self._upload = asyncio.run_coroutine_threadsafe(self._create(), self._loop)
        body, nbytes = self._take_buffer()
        part = asyncio.run_coroutine_threadsafe(self._upload_part(self._next_part, body), self._loop)
        self._sending.append((part, nbytes))
        self._next_part += 1

    def _take_buffer(self) -> tuple[bytes, int]:
        """The bytes of the part buffer and their length; a new buffer takes its place."""
        body, nbytes = self._buffer.getvalue(), self._filled
        self._buffer, self._filled = io.BytesIO(), 0
        return body, nbytes

    def _reap(self, block: bool) -> None:
        """Collect the parts done (raising the first failure); with ``block``,
        wait until one is."""
        if block:
            concurrent.futures.wait([fut for fut, _ in self._sending], return_when=concurrent.futures.FIRST_COMPLETED)
        for item in [item for item in self._sending if item[0].done()]:
            self._sending.remove(item)
            self._sent.append(item[0].result())

    # -- the ObjectWriter steps ---------------------------------------------------------
    def _write(self, data: memoryview) -> None:
        try:
            while data:
                if self._filled == self._part_nbytes:  # full, and more is coming
                    self._send_part()
                piece = data[: self._part_nbytes - self._filled]
                self._buffer.write(piece)
                self._filled += len(piece)
                data = data[len(piece) :]
            self.peak_nbytes = max(self.peak_nbytes, self.buffered_nbytes)
        except Exception as exc:
            self.abort()
            if isinstance(exc, StoreError):
                raise
            raise store_error(self._store, "write", self.key, exc) from exc

    def _commit(self) -> None:
        try:
            if self._upload is None:
                self._call("put_object", Body=self._take_buffer()[0])
            else:
                if self._filled:
                    self._send_part()
                while self._sending:
                    self._reap(block=True)
                parts = sorted(self._sent, key=lambda p: p["PartNumber"])
                self._call("complete_multipart_upload", UploadId=self._upload.result(),
                           MultipartUpload={"Parts": parts})
        except StoreError:
            raise
        except Exception as exc:
            raise store_error(self._store, "write", self.key, exc) from exc
        finally:
            self._fs.invalidate_cache(self._path)

    def _abort(self) -> None:
        self._take_buffer()
        # Parts still uploading could land after the abort and be stored
        # again: let them finish (at most parts_in_flight of them) first.
        concurrent.futures.wait([fut for fut, _ in self._sending])
        self._sending.clear()
        if self._upload is None:
            return
        with contextlib.suppress(Exception):  # best effort (module docstring)
            self._call("abort_multipart_upload", UploadId=self._upload.result())


__all__ = ["MIN_PART_NBYTES", "PARTS_IN_FLIGHT", "PART_NBYTES", "S3ObjectWriter", "check_part_settings"]
