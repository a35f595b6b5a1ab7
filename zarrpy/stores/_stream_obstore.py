"""Streamed writes through obstore: its ``open_writer`` (object_store's
``BufWriter``).

obstore 0.12's writable file keeps up to ``buffer_size`` bytes: an object
shorter than that is one ``put`` at ``close()``; one of ``buffer_size``
bytes or more becomes a multipart upload of ``buffer_size`` parts, up to
``max_concurrency`` of them in flight while the caller goes on writing
(the store's ``write_part_nbytes`` and ``write_parts_in_flight``),
completed at ``close()``. Parts are copied into obstore's own (Rust)
buffers, so the writer holds about ``(max_concurrency + 1) * buffer_size``
bytes however large the object. Leaving
the file's context with an exception aborts the upload instead
(``AbortMultipartUpload`` on S3; a local store's staging file is removed),
and nothing appears: that is how :class:`ObstoreObjectWriter` aborts. Plain
``close()`` would complete it, so it is never used to abort.

On S3, GCS and Azure the parts go out as the bytes come; a local obstore
store writes them to a staging file (``<name>#<n>``, which obstore never
lists) renamed over the target at completion. A killed writer leaves the
old object, and an incomplete upload (or staging file) behind, as with
:mod:`zarrpy.stores._stream_s3`.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from .abc import store_error
from .writes import ObjectWriter

if TYPE_CHECKING:
    from .abc import Store


class _Aborted(Exception):
    """Handed to obstore's ``__exit__`` so that it aborts the upload."""


class ObstoreObjectWriter(ObjectWriter):
    """The object ``path`` of the obstore store ``backend``, through
    ``obstore.open_writer``; errors are StoreErrors naming ``key`` of ``store``."""

    def __init__(self, store: Store, key: str, obs: Any, backend: Any, path: str,
                 part_nbytes: int, parts_in_flight: int) -> None:
        super().__init__(key)
        self._store = store
        try:
            self._file = obs.open_writer(backend, path, buffer_size=part_nbytes, max_concurrency=parts_in_flight)
        except Exception as exc:
            raise store_error(store, "write", key, exc) from exc

    def _write(self, data: memoryview) -> None:
        try:
            self._file.write(data)
        except Exception as exc:
            self.abort()
            raise store_error(self._store, "write", self.key, exc) from exc

    def _commit(self) -> None:
        try:
            self._file.close()
        except Exception as exc:
            raise store_error(self._store, "write", self.key, exc) from exc

    def _abort(self) -> None:
        with contextlib.suppress(Exception):  # best effort: another error is on its way up
            self._file.__exit__(_Aborted, _Aborted(f"write of {self.key!r} aborted"), None)


__all__ = ["ObstoreObjectWriter"]
