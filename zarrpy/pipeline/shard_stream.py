"""Writing one whole shard inner chunk by inner chunk, in bounded memory.

:func:`write_shard` stores the shard at some grid coordinates of an array
from a function that reads the array's elements for a region (``read``).
The shard is cut into *bands*: boxes of whole inner chunks that follow the
order the shard's inner chunks are written in (``subchunk_write_order``;
see :func:`plan_band`): for C order (``lexicographic``, ``unordered``) one
inner chunk, a row of them, a slab of rows...; for Fortran order
(``colexicographic``) the same with the dimensions reversed; for
``morton`` aligned cubes of 2, 4, 8... inner chunks a side, each a run of
consecutive inner chunks in Z order. Bands are read in the write order,
each once; its inner chunks are copied out of it (an edge inner chunk
padded with the fill value, as the usual write path pads it), and the band
is dropped before the next is read. The inner chunks are encoded on the
chunk pool (:mod:`.concurrency`) in runs of about :data:`RUN_NBYTES`, with
at most :func:`max_workers` runs in flight, and their bytes go to the
store's object writer (:meth:`~zarrpy.stores.abc.Store.open_writer`) in
the write order as they are done, the index last
(:class:`~zarrpy.codecs.sharding.stream.ShardStream`, which holds back an
inner chunk that comes early: bands of another shape still give the right
bytes, with more held). The stored shard is byte for byte the one
``array[shard region] = data`` stores.

Memory: one band of elements, and per run in flight (the pool's threads,
and one more being copied out) a copy of its inner chunks, their encoded
bytes and the comparison with the fill value (:func:`in_flight_nbytes`).
Bands planned for the write order hold no inner chunk back; bands of
another shape hold the early ones' encoded bytes (spooled to disk past
:data:`~zarrpy.codecs.sharding.stream.SPOOL_MEMORY_NBYTES`).
A store that cannot stream (:attr:`~zarrpy.stores.abc.Store.streams_writes`
False) also keeps the shard's encoded bytes until it is stored whole.

A shard left with only the fill value is not written, and a shard stored
there before is removed (:meth:`ChunkIO.remove`). A failure (a read, an
inner chunk that does not encode, the store) aborts the writer: the store
keeps the shard it had.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from concurrent.futures import Future, wait
from types import EllipsisType
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..codecs.merge import ChunkWrite, merge_writes
from ..codecs.sharding import ShardingCodec
from ..codecs.sharding._layout import ShardLayout
from ..codecs.sharding.index import NAME
from ..codecs.sharding.order import DEFAULT_WRITE_ORDER, morton_codes
from ..codecs.sharding.stream import ShardStream
from ..core._typing import ChunkCoords, Shape
from ..core.array_bytes import ArrayBytes
from ..errors import CodecError, SelectionError, at_key
from ..stores.writes import ObjectWriter
from .chunk_io import ChunkIO
from .concurrency import get_pool, in_worker, max_workers

Region = tuple[slice, ...]
Encoded = list[tuple[int, bytes | None]]

RUN_NBYTES = 256 << 10
"""Decoded bytes of inner chunks one pool task encodes (at least one inner
chunk): a task costs about what encoding a small chunk does."""

INNER_COPIES = 3
"""Per run in flight: a contiguous copy of its inner chunks, their encoded
bytes (counted as large: incompressible data) and the comparison with the
fill value (up to one byte per element)."""


def streams(io: ChunkIO) -> bool:
    """Can :func:`write_shard` write this array's shards? (Its chain is one
    ``sharding_indexed`` codec, and the array has dimensions.)"""
    return _codec(io) is not None and len(io.shape) > 0


def shard_nbytes(io: ChunkIO) -> int:
    """Decoded bytes of one whole shard of ``io``'s array (itemsize-based;
    the largest, for a shard grid of several shapes)."""
    return math.prod(io.spec.shape) * max(io.form.dtype.itemsize, 1)


def in_flight_nbytes(inner_nbytes: int, workers: int, run_nbytes: int = RUN_NBYTES) -> int:
    """Bytes the encoding of a shard holds at once besides the band being
    read, for inner chunks of ``inner_nbytes`` decoded bytes, ``workers``
    pool threads and runs of ``run_nbytes``: :data:`INNER_COPIES` of a run
    per thread and one more."""
    return (workers + 1) * INNER_COPIES * _per_run(inner_nbytes, run_nbytes) * inner_nbytes


def plan_band(shard_shape: Shape, inner_shape: Shape, fits: Callable[[Shape], bool],
              order: str = DEFAULT_WRITE_ORDER) -> Shape | None:
    """The largest band of a shard of ``shard_shape`` for which ``fits(band)``,
    its inner chunks consecutive in the write ``order``. For C order: whole
    inner chunks, one along every dimension before some dimension ``d``,
    any number along ``d`` and the whole shard after it; ``colexicographic``:
    the same with the dimensions reversed; ``morton``: ``2**k`` inner chunks
    along every dimension (all of a dimension with fewer). None if one
    inner chunk does not fit. ``fits`` must grow monotonically false with
    the band."""
    if order == "colexicographic":
        flipped = plan_band(shard_shape[::-1], inner_shape[::-1], lambda b: fits(b[::-1]))
        return None if flipped is None else flipped[::-1]
    if order == "morton":
        return _plan_morton_band(shard_shape, inner_shape, fits)
    grid = [s // c for s, c in zip(shard_shape, inner_shape)]

    def band(d: int, k: int) -> Shape:
        return tuple(c if i < d else k * c if i == d else s
                     for i, (s, c) in enumerate(zip(shard_shape, inner_shape)))

    for d in range(len(grid)):
        if not fits(band(d, 1)):
            continue
        low, high = 1, grid[d]  # the most inner chunks along d that fit, by bisection
        while low < high:
            mid = (low + high + 1) // 2
            if fits(band(d, mid)):
                low = mid
            else:
                high = mid - 1
        return band(d, low)
    return None


def _plan_morton_band(shard_shape: Shape, inner_shape: Shape, fits: Callable[[Shape], bool]) -> Shape | None:
    """:func:`plan_band` for Z order: the largest aligned cube of ``2**k``
    inner chunks a side (clipped to the shard) that fits. Its inner chunks
    are consecutive in the compressed Morton order, since the code's low
    bits are the coordinates' bits below ``k``."""
    grid = [s // c for s, c in zip(shard_shape, inner_shape)]
    best = None
    side = 1
    while True:
        band = tuple(min(side, g) * c for g, c in zip(grid, inner_shape))
        if not fits(band):
            return best
        best = band
        if all(side >= g for g in grid):
            return best
        side *= 2


def bands(region: Region, origin: ChunkCoords, inner_shape: Shape, band: Shape,
          order: str = DEFAULT_WRITE_ORDER) -> list[Region]:
    """The bands of ``band``'s shape (see :func:`plan_band`) covering the part
    ``region`` of the shard that starts at ``origin``, clipped to it, in the
    write ``order`` (C order; ``colexicographic``: Fortran order;
    ``morton``: Z order of the bands' first inner chunks).

    A band is clipped to the inner chunks that ``region`` touches, so one band
    shape serves edge shards too; ValueError if it is not whole inner chunks
    in C order there (in Fortran order for ``colexicographic``; any box of
    whole inner chunks for ``morton``)."""
    if order == "colexicographic":
        flipped = _boxes(region[::-1], tuple(origin)[::-1], inner_shape[::-1], band[::-1], "Fortran")
        return [box[::-1] for box in flipped]
    if order == "morton":
        # By the Z order of each band's first inner chunk in the region's own
        # grid: the order in the shard's grid, whose extra code bits are 0 here.
        boxes = _boxes(region, origin, inner_shape, band, None)
        grid = tuple(-(-(r.stop - o) // c) for r, o, c in zip(region, origin, inner_shape))
        codes = morton_codes(grid)
        first = [int(codes[_grid_position(box, origin, inner_shape, grid)]) for box in boxes]
        return [box for _, box in sorted(zip(first, boxes), key=lambda pair: pair[0])]
    return _boxes(region, origin, inner_shape, band, "C")


def _grid_position(box: Region, origin: ChunkCoords, inner_shape: Shape, grid: Shape) -> int:
    """The flat C-order position in ``grid`` of the first inner chunk of ``box``."""
    position = 0
    for b, o, c, n in zip(box, origin, inner_shape, grid):
        position = position * n + (b.start - o) // c
    return position


def _boxes(region: Region, origin: ChunkCoords, inner_shape: Shape, band: Shape, order: str | None) -> list[Region]:
    """The bands of :func:`bands` in C order of their place; ValueError if
    their inner chunks are not consecutive in ``order`` ("C" or "Fortran",
    of the dimensions as given; None: not checked)."""
    extent = [-(-(r.stop - o) // c) * c for r, o, c in zip(region, origin, inner_shape)]
    band = tuple(min(b, e) for b, e in zip(band, extent))
    if any(b < 1 or b % c for b, c in zip(band, inner_shape)):
        raise ValueError(f"bands of shape {band} are not whole inner chunks of shape {inner_shape}")
    partial = [d for d, (b, e) in enumerate(zip(band, extent)) if b < e]
    if order is not None and partial and any(band[d] != inner_shape[d] for d in range(partial[-1])):
        if order == "Fortran":
            band, inner_shape = band[::-1], inner_shape[::-1]
        raise ValueError(f"bands of shape {band} do not follow the {order} order of inner chunks of shape "
                         f"{inner_shape}")
    counts = [-(-e // b) for e, b in zip(extent, band)]
    return [
        tuple(slice(o + i * b, min(o + (i + 1) * b, r.stop)) for i, o, b, r in zip(index, origin, band, region))
        for index in itertools.product(*(range(n) for n in counts))
    ]


def write_shard(io: ChunkIO, coords: ChunkCoords, read: Callable[[Region], Any], *, band: Shape | None = None,
                run_nbytes: int = RUN_NBYTES) -> bool:
    """Store the shard at grid ``coords`` of ``io``'s array from ``read(region)``
    (the array's elements in ``region``: anything the array's element form
    takes, shaped like the region), read band by band in the shard's write
    order (``band``: see :func:`plan_band` with the codec's
    ``subchunk_write_order``; default one inner chunk), encoded in runs of
    inner chunks of about ``run_nbytes`` (at least one). True if a shard was
    stored, False if it held only the fill value (nothing is then stored
    under its key). See the module docstring.

    Raises
    ------
    ValueError
        If the array's chain is not one ``sharding_indexed`` codec.
    SelectionError
        If ``coords`` are not a shard of the array.
    ChunkDecodeError
        Naming the shard's key, if an inner chunk does not encode.
    """
    codec = _codec(io)
    if codec is None or not io.shape:
        raise ValueError(f"array {io.path or '/'!r}: its codecs are not one {NAME!r} codec: shards cannot stream")
    if not io.grid.contains(tuple(coords)):
        raise SelectionError(f"shard {tuple(coords)} is outside the grid {io.grid.grid_shape} of array {io.path or '/'!r}")
    layout = codec.layout(io.spec_at(tuple(coords)))
    key = io.key(coords)
    inner_shape = layout.inner_spec.shape
    origin = io.grid.chunk_origin(tuple(coords))
    region = io.grid.chunk_region(coords)
    per_run = _per_run(layout.chunk_size * max(io.form.dtype.itemsize, 1), run_nbytes)
    writer: ObjectWriter | None = None

    def open_sink() -> ObjectWriter:
        nonlocal writer
        writer = io.store.open_writer(key)
        return writer

    try:
        with ShardStream(layout, open_sink) as stream:
            stream.leave_out(_outside(layout, origin, region))
            window = _Window(stream, key)
            try:
                for box in bands(region, origin, inner_shape, band or inner_shape, layout.write_order):
                    data = io.form.coerce(read(box), tuple(b.stop - b.start for b in box))
                    members = _inner_chunks(layout, box, origin, region)
                    while run := list(itertools.islice(members, per_run)):
                        window.submit([(pos, _inner_chunk(io, layout, data, sel, key)) for pos, sel in run])
                    del data  # before the next band is read
                window.drain()
            finally:
                window.cancel()
            stored = stream.finish()
        if writer is not None:
            writer.commit()
    finally:
        if writer is not None:
            writer.abort()  # nothing after a commit
    if not stored:
        io.remove(key)
    io.forget([tuple(coords)])
    return stored


# -- inner chunks -------------------------------------------------------------
def _inner_chunks(layout: ShardLayout, box: Region, origin: ChunkCoords, region: Region) -> Iterator[tuple[int, Region]]:
    """``(position in the shard, selection in the band's elements)`` of each
    inner chunk in the band ``box``, in the write order (edge ones clipped
    to ``region``)."""
    inner = layout.inner_spec.shape
    ranges = [range((b.start - o) // c, -(-(b.stop - o) // c)) for b, o, c in zip(box, origin, inner)]
    members: Iterable[tuple[int, ...]] = itertools.product(*ranges)
    if not layout.writes_c_order:
        rank = layout.write_ranks()
        members = sorted(members, key=lambda ic: int(rank[layout.position(ic)]))
    for ic in members:
        sel = tuple(
            slice(o + i * c - b.start, min(o + (i + 1) * c, r.stop) - b.start)
            for i, o, c, b, r in zip(ic, origin, inner, box, region)
        )
        yield layout.position(ic), sel


def _outside(layout: ShardLayout, origin: ChunkCoords, region: Region) -> np.ndarray:
    """Flat positions of the shard's inner chunks wholly past the array's
    edge (``region`` is the shard clipped to the array): they never come."""
    inside = tuple(-(-(r.stop - o) // c) for r, o, c in zip(region, origin, layout.inner_spec.shape))
    if inside == tuple(layout.grid_shape):
        return np.zeros(0, dtype=np.int64)
    mask = np.ones(layout.grid_shape, dtype=bool)
    mask[tuple(slice(0, n) for n in inside)] = False
    return np.flatnonzero(mask)


def _inner_chunk(io: ChunkIO, layout: ShardLayout, data: np.ndarray, sel: Region, key: str) -> ArrayBytes:
    """The inner chunk at ``sel`` of a band's elements, as its own copy
    (the band is dropped before the runs are encoded); an edge one padded
    with the fill value past the array's edge."""
    index: tuple[slice | EllipsisType, ...] = (*sel, Ellipsis)  # Ellipsis: a 0-d box stays an array
    piece = np.array(data[index], order="C")  # a copy
    chunk = io.form.to_array_bytes(piece)
    shape = layout.inner_spec.shape
    if piece.shape == shape:
        return chunk
    try:
        return merge_writes(_no_old_chunk, None, [ChunkWrite(tuple(slice(0, n) for n in piece.shape), chunk)],
                            layout.inner_spec, NAME)
    except CodecError as exc:
        raise at_key(exc, key) from exc


def _no_old_chunk(data: bytes) -> ArrayBytes:
    raise AssertionError("an edge inner chunk is padded from the fill value, never from a stored chunk")


def _per_run(inner_nbytes: int, run_nbytes: int) -> int:
    """Inner chunks one pool task encodes."""
    return max(1, run_nbytes // max(inner_nbytes, 1))


def _codec(io: ChunkIO) -> ShardingCodec | None:
    chain = io.chain
    codec = chain.array_to_bytes
    if chain.array_to_array or chain.bytes_to_bytes or not isinstance(codec, ShardingCodec):
        return None
    return codec


class _Window:
    """Runs of inner chunks encoded on the pool, at most :func:`max_workers`
    in flight, stored in the order they were given."""

    def __init__(self, stream: ShardStream, key: str):
        self.stream = stream
        self.key = key
        self.size = max_workers()
        self.inline = self.size == 1 or in_worker()  # a pool thread's work runs inline (no deadlock)
        self.pending: deque[Future[Encoded]] = deque()

    def submit(self, run: list[tuple[int, ArrayBytes]]) -> None:
        if self.inline:
            self._store(self._encode(run))
            return
        while len(self.pending) >= self.size:
            self._store(self.pending.popleft().result())
        self.pending.append(get_pool().submit(self._encode, run))

    def drain(self) -> None:
        while self.pending:
            self._store(self.pending.popleft().result())

    def cancel(self) -> None:
        """Drop what is still queued and wait for what runs (after a failure)."""
        for future in self.pending:
            future.cancel()
        wait(self.pending)
        self.pending.clear()

    def _encode(self, run: list[tuple[int, ArrayBytes]]) -> Encoded:
        try:
            return [(pos, self.stream.encode(chunk)) for pos, chunk in run]
        except CodecError as exc:
            raise at_key(exc, self.key) from exc

    def _store(self, results: Encoded) -> None:
        for pos, data in results:
            self.stream.add_encoded(pos, data)


__all__ = ["INNER_COPIES", "RUN_NBYTES", "bands", "in_flight_nbytes", "plan_band", "shard_nbytes", "streams",
           "write_shard"]
