"""``zarrpy verify``: decode every stored chunk, and find what interrupted writers left.

:func:`check_chunks` reads every stored chunk of every array below a node
through the array (:meth:`~zarrpy.Array.read_chunks`, so each is decoded by
its codec chain: a ``crc32c`` checksum is checked, a truncated or garbled
chunk fails to decompress or has the wrong size); in a shard, every inner
chunk (and the shard index, with its checksum). A failure is recorded with
the store key and the error (:class:`~zarrpy.ChunkDecodeError`,
:class:`~zarrpy.ChecksumError` or a store error) and the check goes on.
Chunks are read a batch of stored objects at a time (at most
:data:`BATCH_NBYTES` decoded), so memory stays bounded; a failing batch is
read again object by object, and a failing shard inner chunk by inner chunk,
to name exactly what is bad.

A writer killed mid-write (SIGKILL, power loss) leaves its temporary file
(``.zarrpy-tmp-…``) next to the chunk it was replacing; the chunk itself
holds the old value or the new one, never a mix. Such files are never read
as data, and the next write into their directory removes them, but a store
that is no longer written keeps them. :func:`check_temp_files` lists them and,
asked to, removes the stale ones. A temporary file of a writer that may still
be running is reported and kept.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..api._array import Array
from ..api._group import Group
from ..core._typing import ChunkCoords
from ..errors import CodecError, StoreError
from ..stores import LocalStore, Store, store_from_url
from ._nodes import (
    StoredObject,
    in_grid,
    inner_chunks,
    outer_shape,
    unit_shape,
    stored_objects,
    v3_metadata,
)

BATCH_NBYTES = 32 << 20
"""Decoded bytes of the chunks read in one call (fixed-size types; 64 objects for variable-length ones)."""


@dataclass
class TempFileReport:
    """Temporary files found under a store's root (paths relative to it)."""

    root: str
    stale: list[str] = field(default_factory=list)
    """Left by writers that are gone (still there unless ``removed``)."""
    live: list[str] = field(default_factory=list)
    """Of writers that may still be running: kept."""
    removed: list[str] = field(default_factory=list)
    stale_nbytes: int = 0

    @property
    def ok(self) -> bool:
        """True when no stale temporary file remains."""
        return len(self.removed) == len(self.stale)


def _local_store(target: str | Store) -> LocalStore:
    store = target if isinstance(target, Store) else store_from_url(target, read_only=True)
    if not isinstance(store, LocalStore):
        raise TypeError(
            f"verify looks for temporary files in directory stores; {store.display_name!r} is a "
            f"{type(store).__name__}, which writes none"
        )
    if not store.root.is_dir():
        raise FileNotFoundError(f"no store directory at {store.display_name!r}")
    return store


def check_temp_files(target: str | Store, clean: bool = False) -> TempFileReport:
    """Report the temporary files under the directory store ``target``;
    with ``clean``, remove the stale ones."""
    store = _local_store(target)
    root = os.fspath(store.root)
    report = TempFileReport(root)
    for path, stale in store.temp_files():
        rel = os.path.relpath(path, root)
        if not stale:
            report.live.append(rel)
            continue
        report.stale.append(rel)
        try:
            report.stale_nbytes += os.lstat(path).st_size
        except FileNotFoundError:
            pass
    if clean and report.stale:
        removed = {os.path.relpath(p, root) for p in store.remove_stale_temp_files()}
        report.removed = [rel for rel in report.stale if rel in removed or not os.path.lexists(os.path.join(root, rel))]
    return report


@dataclass(frozen=True)
class BadChunk:
    """A stored chunk that does not decode."""

    array: str
    """The array's name (``/a/b``)."""
    key: str
    """The store key of the chunk (of the shard, for an inner chunk)."""
    error: str
    inner_chunk: ChunkCoords | None = None
    """For a shard whose other inner chunks decode: the inner chunk's grid coordinates."""

    def describe(self) -> str:
        """``key [inner chunk (0, 1)]: error``, one line."""
        where = self.key if self.inner_chunk is None else f"{self.key} [inner chunk {self.inner_chunk}]"
        return f"{where}: {self.error}"


@dataclass
class ChunkReport:
    """What :func:`check_chunks` found."""

    arrays: int = 0
    objects: int = 0
    """Stored chunk objects checked (shards, when sharded)."""
    chunks: int = 0
    """Chunks decoded (inner chunks of shards)."""
    bad: list[BadChunk] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    """Keys of stored chunks outside the array's grid (left over after a shrink): never read."""

    @property
    def ok(self) -> bool:
        """True when every chunk decoded."""
        return not self.bad


def _error_text(exc: BaseException, key: str) -> str:
    text = " ".join(str(exc).split())
    for prefix in (f"chunk {key!r}: ", f"chunk {key!r} "):
        text = text.removeprefix(prefix)
    return f"{type(exc).__name__}: {text}"


_READ_ERRORS = (CodecError, StoreError)


def _chunks_per_batch(a: Array) -> int:
    """(Inner) chunks read in one call: about :data:`BATCH_NBYTES` of decoded elements
    (64 for strings, bytes and ragged vectors, whose size is not known ahead)."""
    if v3_metadata(a).data_type.is_variable:
        return 64
    return max(BATCH_NBYTES // max(math.prod(unit_shape(a)) * max(a.dtype.itemsize, 1), 1), 1)


@dataclass
class _Failures:
    """The inner chunks of one stored object that failed, and how many it holds."""

    obj: StoredObject
    total: int
    first: BaseException | None = None
    failing: list[tuple[ChunkCoords, BaseException]] = field(default_factory=list)


def _read(a: Array, coords: list[ChunkCoords]) -> BaseException | None:
    """Decode ``coords`` (results dropped at once); the read error, or None."""
    try:
        a.read_chunks(coords)
    except _READ_ERRORS as exc:
        return exc
    return None


def check_array(a: Array, report: ChunkReport, advance: Callable[[int], None] | None = None) -> None:
    """Decode every stored chunk of ``a`` into ``report``; ``advance(n)`` as ``n`` more objects are done.

    Chunks go in batches of :func:`_chunks_per_batch` (a big shard in
    several). A failing batch is read again object by object; in a failing
    shard, each inner chunk alone. A shard all of whose inner chunks fail
    (a damaged index, most likely) is listed once, by its key."""
    report.arrays += 1
    objects = []
    for obj in stored_objects(a):
        if in_grid(a, obj.coords):
            objects.append(obj)
        else:
            report.outside.append(obj.key)
    per = _chunks_per_batch(a)
    failures: dict[str, _Failures] = {}

    def run(batch: list[tuple[StoredObject, list[ChunkCoords], bool]]) -> None:
        if _read(a, [c for _, part, _ in batch for c in part]) is not None:
            for obj, part, _ in batch:
                error = _read(a, part)
                if error is None:
                    continue
                record = failures.setdefault(obj.key, _Failures(obj, len(inner_chunks(a, obj.coords))))
                record.first = record.first or error
                if not a.is_sharded:
                    continue
                for c in part:
                    inner_error = error if len(part) == 1 else _read(a, [c])
                    if inner_error is not None:
                        record.failing.append((c, inner_error))
        done = sum(1 for _, _, last in batch if last)
        report.objects += done
        report.chunks += sum(len(part) for _, part, _ in batch)
        if advance is not None and done:
            advance(done)

    batch: list[tuple[StoredObject, list[ChunkCoords], bool]] = []
    size = 0
    for obj in objects:
        coords = inner_chunks(a, obj.coords)
        for start in range(0, len(coords), per):
            part = coords[start:start + per]
            if batch and size + len(part) > per:
                run(batch)
                batch, size = [], 0
            batch.append((obj, part, start + per >= len(coords)))
            size += len(part)
    if batch:
        run(batch)
    for record in failures.values():
        key = record.obj.key
        if not a.is_sharded or not record.failing or len(record.failing) == record.total:
            assert record.first is not None
            report.bad.append(BadChunk(a.name, key, _error_text(record.first, key)))
        else:
            report.bad.extend(BadChunk(a.name, key, _error_text(exc, key), c) for c, exc in record.failing)


def arrays_below(node: Array | Group) -> Iterator[Array]:
    """``node`` if it is an array, else every array below it (live metadata, sorted by path)."""
    if isinstance(node, Array):
        yield node
        return
    for _, member in node.members(max_depth=None):
        if isinstance(member, Array):
            yield member


def count_objects(arrays: list[Array]) -> int:
    """Stored chunk objects of ``arrays`` (one listing each), for a progress bar's total."""
    return sum(len(a.stored_chunk_keys()) for a in arrays)


def check_chunks(node: Array | Group, advance: Callable[[int], None] | None = None) -> ChunkReport:
    """Decode every stored chunk of every array at or below ``node`` (see the module docstring)."""
    report = ChunkReport()
    for a in arrays_below(node):
        check_array(a, report, advance)
    return report


def temp_files_checked(store: Store) -> bool:
    """Does :func:`check_temp_files` apply to ``store``? (Only directory stores write temporary files.)"""
    return isinstance(store, LocalStore)


def as_document(report: ChunkReport) -> dict[str, Any]:
    """``report`` as JSON-friendly values."""
    return {
        "arrays": report.arrays,
        "objects_checked": report.objects,
        "chunks_checked": report.chunks,
        "bad": [{"array": b.array, "key": b.key, "inner_chunk": None if b.inner_chunk is None else list(b.inner_chunk),
                 "error": b.error} for b in report.bad],
        "outside_grid": list(report.outside),
    }


def run_verify(target: str, path: str | None, *, clean: bool, as_json: bool, quiet: bool,
               storage_options: dict[str, Any] | None = None) -> int:
    """``zarrpy verify``: print what is bad (text, or one JSON document); 1 if anything is, else 0."""
    from .. import api
    from ._nodes import json_text
    from .progress import Progress, wanted

    store = store_from_url(target, read_only=True, storage_options=storage_options)
    node = api.open(store, mode="r", path=path, use_consolidated=False)
    temp = check_temp_files(store, clean=clean) if temp_files_checked(store) else None
    arrays = list(arrays_below(node))
    show = wanted(quiet)
    with Progress(count_objects(arrays) if show else 0, "verify", enabled=show) as bar:
        report = ChunkReport()
        for a in arrays:
            check_array(a, report, bar.advance)
    ok = report.ok and (temp is None or temp.ok)
    if as_json:
        print(json_text({
            "target": target, "path": node.name, "ok": ok, **as_document(report),
            "temp_files": None if temp is None else {
                "stale": temp.stale, "live": temp.live, "removed": temp.removed, "stale_nbytes": temp.stale_nbytes},
        }))
        return 0 if ok else 1
    for bad in report.bad:
        print(f"bad chunk {bad.describe()}")
    for key in report.outside:
        print(f"not read (outside the array's chunk grid): {key}")
    print(f"{target}: {report.chunks} chunk(s) in {report.objects} stored object(s) of {report.arrays} array(s) "
          f"decoded: " + (f"{len(report.bad)} bad" if report.bad else "all good"))
    if temp is None:
        print(f"{target}: temporary files not looked for ({type(store).__name__} writes none)")
        return 0 if ok else 1
    for rel in temp.stale:
        print(f"{'removed' if rel in temp.removed else 'stale'} temporary file: {rel}")
    for rel in temp.live:
        print(f"in progress (kept): {rel}")
    count = f"{len(temp.stale)} stale temporary file(s), {temp.stale_nbytes:,} bytes"
    if not temp.stale:
        print(f"{target}: no stale temporary files")
    elif temp.ok:
        print(f"{target}: removed {count}")
    else:
        print(f'{target}: {count}; run "zarrpy verify --clean {target}" to remove them')
    return 0 if ok else 1


__all__ = ["BATCH_NBYTES", "BadChunk", "ChunkReport", "TempFileReport", "arrays_below", "as_document",
           "check_array", "check_chunks", "check_temp_files", "count_objects", "run_verify", "temp_files_checked"]
