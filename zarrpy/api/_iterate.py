"""Reading many arrays into growable buffers: blocks of rows across them
(``iter_rows``) and all of them into one (``concat``).

Fixed-size elements are scattered straight into a :class:`GrowableArray`
through ``Array.read(selection, out=...)``, so no intermediate array is
built; strings, bytes and ragged vectors are read as usual and appended to a
:class:`GrowableRagged` (their results are built from the decoded chunks in
any case). The arrays may live in different stores; all must have the same
element type and the same row shape.
"""

from __future__ import annotations

import math
import operator
import os
from functools import partial
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

from ..core._typing import Selection, Shape
from ..errors import SelectionError
from ..pipeline.chunk_io import INLINE_READ_NBYTES
from ..pipeline.concurrency import map_chunks
from ..pipeline.io_pool import map_io, waits_on_network
from ._array import Array
from ._buffer_fit import Buffer, check_buffer, describe, new_buffer
from ._buffers import GrowableArray
from ._node import location
from ._open import ArrayTarget, open_array_targets


class _Source(NamedTuple):
    """One input array and how errors name it."""

    array: Array
    label: str


class _Piece(NamedTuple):
    """Rows ``start:stop`` of source number ``source``, going to buffer row ``offset``."""

    source: int
    start: int
    stop: int
    offset: int


# -- many arrays -------------------------------------------------------------


def iter_rows(
    arrays: Iterable[Array | str | os.PathLike[str]],
    rows: int,
    buffer: Buffer | None = None,
    selection: Selection | None = None,
    *,
    prefetch: bool = False,
) -> Iterator[Buffer]:
    """Blocks of ``rows`` rows of the arrays concatenated along axis 0.

    ``arrays`` are :class:`~zarrpy.Array` s or URLs / paths (opened
    read-only), possibly in different stores; all are opened first, their
    metadata fetched side by side (as :func:`~zarrpy.open_arrays` does), and
    must share the element type and row shape. The arrays of a block are
    read side by side (on remote stores every array's requests are in flight
    together, on zarrpy's IO thread pool). Block *k* holds rows
    ``k*rows`` to ``k*rows + rows - 1`` of the concatenation, across array
    boundaries; every block has ``rows`` rows except perhaps the last.

    Each block is read into one reused buffer (``buffer``, or a new
    :class:`GrowableArray` / :class:`GrowableRagged` of the right kind), and
    the buffer itself is yielded: **the next step overwrites it** -- copy
    (``np.array(buf.nda)``, ``buf.to_numpy()``) what you keep.

    ``selection`` applies to the trailing axes (1, 2, ...) of every array:
    a slice, an integer or a tuple of them (``(slice(0, 3), 2)`` keeps
    columns 0-2 of axis 1 and drops axis 2). The row shape is then that of
    the selected part.

    ``prefetch=True`` reads the next block on a background thread into a
    second buffer of the same kind while the current one is in use (double
    buffering; two buffers in memory). Yielded blocks then alternate
    between the two buffers, and the contract above still holds: a yielded
    buffer is only refilled after the step that follows it.

    Raises
    ------
    SelectionError
        If an array is 0-d, or its element type or row shape differs from
        the first array's (the message names the array), or ``buffer`` does
        not match them.
    """
    rows = _positive(rows)
    sources = _open_all(arrays)
    tail = _tail_selection(selection)
    row_shape = _common_row_shape(sources, tail)
    if not sources:
        return iter(())
    buf = buffer if buffer is not None else new_buffer(sources[0].array, sources[0].label, row_shape)
    check_buffer(buf, sources[0].array, sources[0].label, row_shape)
    plan = _plan([len(s.array) for s in sources], rows)
    carry = _Carry()  # blocks are filled one after another, in order

    def fill(target: Buffer, pieces: list[_Piece]) -> None:
        _fill(target, sources, tail, pieces, carry)

    if not prefetch:
        return _serial(plan, buf, fill)
    return _double_buffered(plan, buf, new_buffer(sources[0].array, sources[0].label, row_shape), fill)


def concat(
    arrays: Iterable[Array | str | os.PathLike[str]], selection: Selection | None = None
) -> Buffer:
    """All rows of ``arrays`` (as :func:`iter_rows` takes them) in one new buffer.

    The total number of rows is known from the metadata, so the buffer is
    reserved once: a :class:`GrowableArray` reallocates exactly once (zero
    times for no rows). A :class:`GrowableRagged` reserves its offsets once
    too, but the size of the values is only known once they are read, so they
    grow as appending grows them: a logarithmic number of reallocations.
    ``selection`` applies to the trailing axes, as in :func:`iter_rows`.
    """
    sources = _open_all(arrays)
    if not sources:
        raise SelectionError("concat: no arrays given")
    tail = _tail_selection(selection)
    row_shape = _common_row_shape(sources, tail)
    buf = new_buffer(sources[0].array, sources[0].label, row_shape)
    lengths = [len(s.array) for s in sources]
    buf.reserve(sum(lengths))
    _fill(buf, sources, tail, [p for block in _plan(lengths, max(1, sum(lengths))) for p in block])
    return buf


# -- block plans and filling -------------------------------------------------


def _plan(lengths: Sequence[int], rows: int) -> Iterator[list[_Piece]]:
    """The pieces of each block of ``rows`` rows over arrays of ``lengths``."""
    block: list[_Piece] = []
    filled = 0
    for i, n in enumerate(lengths):
        start = 0
        while start < n:
            take = min(n - start, rows - filled)
            block.append(_Piece(i, start, start + take, filled))
            filled += take
            start += take
            if filled == rows:
                yield block
                block, filled = [], 0
    if block:
        yield block


class _Carry:
    """The rows of the chunk a block boundary cuts, read once for both blocks.

    A block ends inside an array wherever ``rows`` is not a multiple of the
    chunk rows: reading the two parts in their blocks would decode that
    chunk twice. Instead the block that ends there reads the whole chunk
    (its rows ``start:stop`` of source ``source``, trailing selection applied),
    takes its part, and keeps the rest here for the next block's first piece.
    """

    __slots__ = ("source", "start", "stop", "rows")

    def __init__(self) -> None:
        self.source, self.start, self.stop = -1, 0, 0
        self.rows: Any = None

    def take(self, p: _Piece) -> tuple[Any, _Piece]:
        """The rows at the head of ``p`` this carry holds (or None), and what is left of ``p``."""
        if self.rows is None or p.source != self.source or not self.start <= p.start < self.stop:
            return None, p
        stop = min(p.stop, self.stop)
        head = self.rows[p.start - self.start : stop - self.start]
        return head, _Piece(p.source, stop, p.stop, p.offset + stop - p.start)


def _fill(
    buf: Buffer, sources: Sequence[_Source], tail: tuple[Any, ...], pieces: list[_Piece], carry: _Carry | None = None
) -> None:
    """Read ``pieces`` into ``buf``, which ends up holding exactly them; with
    ``carry``, a chunk cut by the end of the block is read once (see :class:`_Carry`)."""
    total = pieces[-1].offset + pieces[-1].stop - pieces[-1].start if pieces else 0
    remote = waits_on_network({sources[p.source].array.store for p in pieces})
    if isinstance(buf, GrowableArray):
        buf.resize(total)
        out = buf.nda
        inline = not remote and _decoded_nbytes(pieces, sources) <= INLINE_READ_NBYTES
        tasks: list[Callable[[], None]] = []
        if carry is not None and pieces:
            head, rest = carry.take(pieces[0])
            if head is not None:
                out[pieces[0].offset : pieces[0].offset + len(head)] = head
                pieces = [rest, *pieces[1:]] if rest.stop > rest.start else pieces[1:]
            if pieces:
                pieces, cut = _cut_tail(pieces, sources)
                if cut is not None:
                    tasks.append(partial(_read_cut, out, sources[cut.source].array, tail, cut, carry))

        def read(p: _Piece) -> None:
            rows = out[p.offset : p.offset + p.stop - p.start]
            sources[p.source].array.read((slice(p.start, p.stop), *tail), out=rows)

        tasks.extend([partial(read, p) for p in pieces])
        if inline:
            # A small block: handing its few chunks to the pool and waiting
            # costs more than decoding them here (as for one small read).
            for task in tasks:
                task()
        else:
            # The pieces (parts of different arrays) land in disjoint rows:
            # read them side by side. Over remote stores on the IO pool, so
            # every array's requests are in flight at once (their chunks decode
            # on the chunk pool); over local ones on the chunk pool (each
            # piece's chunks then run in its pool thread), so small arrays
            # keep every core busy. One piece alone runs here and spreads its
            # chunks over the chunk pool.
            (map_io if remote else map_chunks)(lambda task: task(), tasks)
    else:
        buf.clear()

        def read_rows(p: _Piece) -> Any:
            return sources[p.source].array[(slice(p.start, p.stop), *tail)]

        if remote:  # every array's requests in flight at once; appended in order
            for rows in map_io(read_rows, pieces):
                buf.extend(rows)
        else:
            for p in pieces:
                buf.extend(read_rows(p))


def _decoded_nbytes(pieces: Sequence[_Piece], sources: Sequence[_Source]) -> int:
    """About how many bytes reading ``pieces`` decodes: each piece widened to
    whole chunks along the rows, times the array's bytes per row."""
    total = 0
    for p in pieces:
        array = sources[p.source].array
        first = _row_chunk(array, p.start)[0]  # arrays here have rows (0-d ones are refused)
        last = _row_chunk(array, p.stop - 1)[1] if p.stop > p.start else first
        total += (last - first) * math.prod(array.shape[1:]) * array.dtype.itemsize
    return total


def _row_chunk(array: Array, row: int) -> tuple[int, int]:
    """The rows (start, stop; clipped to the array) of the chunk holding ``row``
    (the read unit's chunks: inner chunks of a sharded array; any chunk grid)."""
    rows = array._io.unit_grid.dims[0]
    i = rows.index_to_chunk(row)
    start = rows.offset(i)
    return start, start + rows.data_size(i)


def _cut_tail(pieces: list[_Piece], sources: Sequence[_Source]) -> tuple[list[_Piece], _Piece | None]:
    """``pieces`` without the part of the last one that lies in a chunk the
    block's end cuts, and that part (None when the block ends on a chunk
    boundary or at an array's end)."""
    last = pieces[-1]
    array = sources[last.source].array
    if last.stop >= len(array) or _row_chunk(array, last.stop)[0] == last.stop:
        return pieces, None
    c0 = max(last.start, _row_chunk(array, last.stop)[0])
    kept = [*pieces[:-1], _Piece(last.source, last.start, c0, last.offset)] if c0 > last.start else pieces[:-1]
    return kept, _Piece(last.source, c0, last.stop, last.offset + c0 - last.start)


def _read_cut(out: Any, array: Array, tail: tuple[Any, ...], cut: _Piece, carry: _Carry) -> None:
    """Read the whole chunk ``cut`` ends in, put ``cut`` into ``out`` and keep the chunk in ``carry``."""
    c0, c1 = _row_chunk(array, cut.stop)
    rows = array[(slice(c0, c1), *tail)]
    out[cut.offset : cut.offset + cut.stop - cut.start] = rows[cut.start - c0 : cut.stop - c0]
    carry.source, carry.start, carry.stop, carry.rows = cut.source, c0, c1, rows


Fill = Callable[[Buffer, list[_Piece]], None]


def _serial(plan: Iterator[list[_Piece]], buf: Buffer, fill: Fill) -> Iterator[Buffer]:
    for pieces in plan:
        fill(buf, pieces)
        yield buf


def _double_buffered(
    plan: Iterator[list[_Piece]], first: Buffer, second: Buffer, fill: Fill
) -> Iterator[Buffer]:
    """Fill block k+1 into one buffer while block k is yielded from the other.

    The background thread is a one-thread executor of its own, not the shared
    chunk pool: a task on the pool runs its own chunk work inline (no
    parallel decoding), and would hold a pool thread for the whole block.
    From this thread, the block's reads use the pool as any caller's do.
    """
    buffers = (first, second)
    with ThreadPoolExecutor(1, thread_name_prefix="zarrpy-prefetch") as executor:
        pending: Future[None] | None = None
        try:
            pieces = next(plan, None)
            if pieces is None:
                return
            pending = executor.submit(fill, buffers[0], pieces)
            current = 0
            for pieces in plan:
                pending.result()
                # The consumer asked for this step, so it is done with the other buffer.
                pending = executor.submit(fill, buffers[1 - current], pieces)
                yield buffers[current]
                current = 1 - current
            pending.result()
            pending = None
            yield buffers[current]
        finally:
            if pending is not None and not pending.cancel():
                pending.exception()  # wait: never leave a thread writing into a buffer


# -- checks --------------------------------------------------------------------


def _open_all(arrays: Iterable[Array | str | os.PathLike[str]]) -> list[_Source]:
    """The inputs as sources: Arrays as they are, paths and URLs opened
    read-only, all of their metadata fetched side by side (as
    :func:`~zarrpy.open_arrays` does)."""
    items = list(arrays)
    labels = []
    targets = []
    for i, item in enumerate(items):
        if isinstance(item, Array):
            labels.append(f"array {i} at {location(item.store, item.path)}")
        elif isinstance(item, (str, os.PathLike)):
            labels.append(f"array {i} ({os.fspath(item)!r})")
            targets.append(ArrayTarget(item, "", labels[-1]))
        else:
            raise TypeError(f"array {i}: expected a zarrpy.Array or a URL / path, got {type(item).__name__}")
    opened = iter(open_array_targets(targets, mode="r"))
    return [_Source(item if isinstance(item, Array) else next(opened), label) for item, label in zip(items, labels)]


def _result_shape(array: Array, selection: Any) -> Shape:
    """The shape ``array[selection]`` has."""
    return array.selection_shape(selection)


def _tail_selection(selection: Any) -> tuple[Any, ...]:
    if selection is None:
        return ()
    return selection if isinstance(selection, tuple) else (selection,)


def _common_row_shape(sources: Sequence[_Source], tail: tuple[Any, ...]) -> Shape:
    """The row shape all arrays share; SelectionError naming the first that differs."""
    first: tuple[str, Shape] | None = None
    for source in sources:
        if not source.array.shape:
            raise SelectionError(f"{source.label} is 0-d: it has no rows")
        try:
            row_shape = _result_shape(source.array, (slice(0, 0), *tail))[1:]
        except (SelectionError, IndexError) as exc:
            raise SelectionError(f"{source.label}: trailing selection {tail!r}: {exc}") from None
        this = (describe(source.array), row_shape)
        if first is None:
            first = this
        elif this != first:
            raise SelectionError(f"{source.label} has {this[0]} and row shape {this[1]}, but array 0 has "
                                 f"{first[0]} and row shape {first[1]}")
    return first[1] if first is not None else ()


def _positive(rows: Any) -> int:
    n = operator.index(rows)
    if n <= 0:
        raise ValueError(f"rows must be a positive integer, got {n}")
    return n


__all__ = ["concat", "iter_rows"]
