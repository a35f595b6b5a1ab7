"""The child process of tests/stores/test_object_writers.py: one streamed write.

    python stream_writer_child.py SPEC KEY NBYTES MODE

``SPEC`` is a JSON object naming the store: ``{"kind": "local", "root": …}``,
``{"kind": "s3", "url": …, "storage_options": {…}}`` or ``{"kind":
"obstore-s3", "bucket": …, "prefix": …, "config": {…}}``, with
``"part_nbytes"``. The object is ``NBYTES`` bytes of :func:`content`, written
in pieces of :data:`PIECE_NBYTES` through ``store.open_writer(KEY)``.

``MODE``:

- ``kill``: once ``SPEC["ready_nbytes"]`` bytes are written, print ``READY``
  and go on writing; after the last byte wait on stdin (for ever: the test
  kills the process first), so this writer never commits;
- ``measure``: write and commit with :mod:`tracemalloc` on, then print
  ``PEAK <traced peak bytes> <the writer's peak_nbytes or -1>``.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from typing import Any, Iterator

import numpy as np

PIECE_NBYTES = 1 << 20


def content(nbytes: int, seed: int) -> Iterator[bytes]:
    """``nbytes`` pseudo-random bytes of ``seed``, in pieces of :data:`PIECE_NBYTES`."""
    rng = np.random.default_rng(seed)
    for start in range(0, nbytes, PIECE_NBYTES):
        yield rng.bytes(min(PIECE_NBYTES, nbytes - start))


def open_store(spec: dict[str, Any]) -> Any:
    kind = spec["kind"]
    if kind == "local":
        from zarrpy.stores import LocalStore

        return LocalStore(spec["root"])
    if kind == "s3":
        from zarrpy.stores import FsspecStore

        store = FsspecStore.from_url(spec["url"], storage_options=spec["storage_options"])
    elif kind == "obstore-s3":
        from obstore.store import S3Store

        from zarrpy.stores import ObjectStore

        store = ObjectStore(S3Store(spec["bucket"], **spec["config"]), spec["prefix"])
    else:
        raise ValueError(f"unknown store kind {kind!r}")
    store.write_part_nbytes = spec["part_nbytes"]
    return store


def main(argv: list[str]) -> int:
    spec, key, nbytes, mode = json.loads(argv[1]), argv[2], int(argv[3]), argv[4]
    store = open_store(spec)
    if mode == "measure":
        tracemalloc.start()
    writer = store.open_writer(key)
    written, ready = 0, False
    for piece in content(nbytes, spec["seed"]):
        writer.write(piece)
        written += len(piece)
        if mode == "kill" and not ready and written >= spec["ready_nbytes"]:
            print("READY", flush=True)
            ready = True
    if mode == "kill":
        sys.stdin.read()  # the test kills this process here, or earlier
        return 1
    writer.commit()
    _, peak = tracemalloc.get_traced_memory()
    print("PEAK", peak, getattr(writer, "peak_nbytes", -1), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
