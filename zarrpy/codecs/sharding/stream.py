"""A shard written inner chunk by inner chunk: the streaming form of ``ShardLayout.build``.

:class:`ShardStream` takes a shard's inner chunks one at a time, in any
order, and sends each one's encoded bytes to a byte sink (anything with a
``write`` method: a store's object writer, a file) as soon as it comes. It
records where each landed and writes the index last (``index_location``
``"end"``). An index at the start must precede the data, whose offsets are
known only at the end, so the encoded inner chunks are spooled
(:class:`tempfile.SpooledTemporaryFile`: in memory up to
:data:`SPOOL_MEMORY_NBYTES`, then on disk) and written after the index when
the stream finishes. Either way only encoded bytes are ever kept, never a
decoded shard.

Inner chunks are stored in the layout's write order (``subchunk_write_order``,
:mod:`.order`), whatever order they come in: one that comes before its
turn is held (encoded, in a spool like the one above) until the inner
chunks before it have come, so a caller that hands them over in the write
order (as :mod:`zarrpy.pipeline.shard_stream` does) holds nothing back. An
inner chunk that never comes is missing (fill). The bytes are those
:meth:`ShardLayout.build` makes from the same inner chunks, so a shard is
the same whichever way it is written. Inner chunks equal to the fill value
are left out, as the codec's whole-shard encoding does. The sink is opened only when the first byte is
due (``open_sink``), so a shard that turns out to hold only the fill value
opens nothing: :meth:`ShardStream.finish` then returns False and the caller
deletes the stored shard instead.

Encoding an inner chunk (:meth:`ShardStream.encode`) touches no state, so a
caller may run it on several threads and hand the results over, best in
the write order, to :meth:`ShardStream.add_encoded`; inner chunks that
will never come (past the array's edge) are named with
:meth:`ShardStream.leave_out`, so that none waits for them. The codec
owns no thread (see :mod:`zarrpy.pipeline.shard_stream`).
"""

from __future__ import annotations

import tempfile
from typing import IO, Any, Callable, Protocol

import numpy as np

from ...core.array_bytes import ArrayBytes
from ...errors import CodecError
from ._layout import ShardLayout
from .index import NAME, ShardIndex

SPOOL_MEMORY_NBYTES = 4 << 20
"""Encoded inner chunks a shard with its index at the start keeps in memory
before spooling them to a temporary file (4 MiB)."""

COPY_BLOCK_NBYTES = 1 << 20
"""Bytes moved at a time from the spool to the sink."""


class ByteSink(Protocol):
    """Where a shard's bytes go, in order (a store's object writer, a file)."""

    def write(self, data: Any, /) -> Any:
        """Append ``data`` (bytes-like)."""


class ShardStream:
    """One shard's encoded bytes, sent to a sink inner chunk by inner chunk.

    ``open_sink`` is called once, when the first byte is due (never for a
    shard that holds no inner chunk). Use as a context manager, or call
    :meth:`close`: that drops the spool of an unfinished stream. The stream
    neither commits nor aborts the sink; its caller does.
    """

    __slots__ = ("layout", "_open_sink", "_sink", "_spool", "_index", "_offset", "_seen", "_order", "_next",
                 "_held", "_hold", "count", "nbytes")

    def __init__(self, layout: ShardLayout, open_sink: Callable[[], ByteSink]):
        self.layout = layout
        self._open_sink = open_sink
        self._sink: ByteSink | None = None
        self._spool: IO[bytes] | None = None
        self._index = ShardIndex(layout.grid_shape)
        self._offset = layout.index_nbytes if layout.index_at_start else 0
        """Where the next inner chunk starts in the shard."""
        self._seen = bytearray(layout.nchunks)
        """1 at the position of each inner chunk added (stored or fill)."""
        self._order: list[int] | None = None if layout.writes_c_order else layout.written_positions().tolist()
        """Positions in the write order (None: C order, position i is i-th)."""
        self._next = 0
        """Place in the write order of the next inner chunk due."""
        self._held: dict[int, tuple[int, int] | None] = {}
        """Inner chunks that came before their turn: (offset, nbytes) in the
        hold spool, or None for a fill one."""
        self._hold: IO[bytes] | None = None
        self.count = 0
        """Inner chunks stored so far."""
        self.nbytes = 0
        """Bytes sent to the sink so far."""

    # -- inner chunks --------------------------------------------------
    def encode(self, inner: ArrayBytes) -> bytes | None:
        """``inner`` encoded with the inner chain, or None when it holds only
        the fill value (it is then left out). Safe to call from any thread."""
        layout = self.layout
        if inner.shape != layout.inner_spec.shape:
            raise CodecError(f"codec {NAME!r}: inner chunk of shape {inner.shape}, expected {layout.inner_spec.shape}")
        if layout.is_fill(inner):
            return None
        return layout.encode_inner(inner)

    def add(self, position: int, inner: ArrayBytes) -> None:
        """Encode the inner chunk at flat (C-order) ``position`` and store it
        (leave it out if it holds only the fill value)."""
        self.add_encoded(position, self.encode(inner))

    def add_encoded(self, position: int, data: Any) -> None:
        """Store the encoded inner chunk at flat ``position`` (None: it is
        fill, stored as missing): now if its turn in the write order has
        come, else once the inner chunks before it have come (or at
        :meth:`finish`). Each position may come once."""
        if not 0 <= position < self.layout.nchunks:
            raise CodecError(
                f"codec {NAME!r}: inner chunk position {position} outside a shard of {self.layout.nchunks}"
            )
        if self._seen[position]:
            raise CodecError(f"codec {NAME!r}: inner chunk {self.layout.coords(position)} was given twice")
        self._seen[position] = 1
        if position != self._due():
            self._hold_back(position, data)
            return
        self._next += 1
        self._store(data, position)
        self._release()

    def leave_out(self, positions: Any) -> None:
        """Inner chunks at flat ``positions`` (an integer array) will not come
        (they lie outside the array): they are missing, and the ones after
        them in the write order need not wait for them."""
        positions = np.asarray(positions, dtype=np.int64).reshape(-1)
        if positions.size == 0:
            return
        if positions.min() < 0 or positions.max() >= self.layout.nchunks:
            raise CodecError(f"codec {NAME!r}: inner chunk positions outside a shard of {self.layout.nchunks}")
        seen = np.frombuffer(self._seen, dtype=np.uint8)
        if seen[positions].any():
            raise CodecError(f"codec {NAME!r}: an inner chunk left out was given already")
        seen[positions] = 1
        self._release()

    def _due(self) -> int:
        """The position whose turn it is (past the end: -1)."""
        n = self._next
        if n >= self.layout.nchunks:
            return -1
        return n if self._order is None else self._order[n]

    def _release(self) -> None:
        """Store the held inner chunks whose turn has come."""
        while (due := self._due()) >= 0 and self._seen[due]:
            self._next += 1
            self._store(self._take_held(due), due)

    def _hold_back(self, position: int, data: Any) -> None:
        if data is None:
            self._held[position] = None
            return
        if self._hold is None:
            self._hold = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_NBYTES)
        hold = self._hold
        offset = hold.seek(0, 2)
        hold.write(data)
        self._held[position] = (offset, memoryview(data).nbytes)

    def _take_held(self, position: int) -> bytes | None:
        entry = self._held.pop(position, None)  # None too for one left out
        if entry is None:
            return None
        assert self._hold is not None  # it holds the entry
        self._hold.seek(entry[0])
        return self._hold.read(entry[1])

    def _store(self, data: Any, position: int) -> None:
        """Put an inner chunk's bytes next in the shard (None: fill, nothing)."""
        if data is None:
            return
        nbytes = memoryview(data).nbytes
        if self.layout.index_at_start:
            if self._spool is None:
                self._spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_NBYTES)
            self._spool.write(data)
        else:
            self._send(data)
        self._index.set(position, self._offset, nbytes)
        self._offset += nbytes
        self.count += 1

    # -- the end -------------------------------------------------------
    def finish(self) -> bool:
        """Write what is left (the index; with the index at the start, the
        index and then the spooled inner chunks). False, and nothing
        written, when no inner chunk was stored: the shard is all fill."""
        while self._held:  # inner chunks whose predecessors never came
            self._next += 1
            due = self._due()
            if due in self._held:
                self._store(self._take_held(due), due)
        if self.count == 0:
            self.close()
            return False
        self._send(self._index.encode(self.layout.index_chain))
        if not self.layout.index_at_start:
            return True
        spool = self._spool
        assert spool is not None  # count > 0
        spool.seek(0)
        while block := spool.read(COPY_BLOCK_NBYTES):
            self._send(block)
        self.close()
        return True

    def close(self) -> None:
        """Drop the spools (their temporary files, if they had any)."""
        if self._spool is not None:
            self._spool.close()
            self._spool = None
        if self._hold is not None:
            self._hold.close()
            self._hold = None
        self._held.clear()

    def __enter__(self) -> ShardStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, data: Any) -> None:
        if self._sink is None:
            self._sink = self._open_sink()
        self._sink.write(data)
        self.nbytes += memoryview(data).nbytes


__all__ = ["ByteSink", "COPY_BLOCK_NBYTES", "SPOOL_MEMORY_NBYTES", "ShardStream"]
