"""The shard index: where each inner chunk lives inside a shard.

The index is a ``uint64`` array of shape ``chunks_per_shard + [2]`` in C order
over inner-chunk coordinates; entry ``[..., 0]`` is the inner chunk's byte
offset, ``[..., 1]`` its length. Offsets are absolute from byte 0 of the
shard, wherever the index sits. The pair ``(2^64-1, 2^64-1)`` marks an empty
inner chunk (read as the fill value). The index is stored encoded with the
``index_codecs`` chain, whose output has a fixed size (``16·n + 4`` bytes
with the default ``bytes`` + ``crc32c``).

:meth:`ShardIndex.decode` checks what reference/ZARR-FORMAT-NOTES.md §9 asks
for: the encoded index has its fixed size, its checksum matches
(:class:`~zarrpy.errors.ChecksumError`), no pair is half empty, every
non-empty range lies inside the shard and outside the index, and no two
ranges overlap. Each failure is a :class:`~zarrpy.errors.ChunkDecodeError`
naming the codec.
"""

from __future__ import annotations

import math
import struct
from typing import Any, Sequence

import numpy as np

from ...core._typing import Shape
from ...core.array_bytes import ArrayBytes
from ...core.dtypes import DataType
from ...errors import ChunkDecodeError, CodecError
from ..abc import ChunkSpec
from ..bytes import BytesCodec
from ..chain import BoundChain
from ..crc32c import Crc32cCodec

NAME = "sharding_indexed"
EMPTY = np.uint64(2**64 - 1)
"""The offset and length of an empty inner chunk."""

UINT64 = DataType.from_json("uint64")

EMPTY_OFFSET = int(EMPTY)
""":data:`EMPTY` as a Python int (what :meth:`ShardIndex.pairs` holds)."""
_MAX_LISTED_ENTRIES = 1 << 17
"""Read-only indexes up to this many numbers (65,536 inner chunks) keep a list for lookups."""
_SMALL_INDEX_CHUNKS = 64
"""Indexes of up to this many inner chunks are decoded and checked on
Python ints (:func:`_plain_numbers`, :meth:`ShardIndex._check_pairs`),
larger ones with numpy. A remote read decodes an index between its answer
and the requests for the inner chunks, after waiting idle for the answer:
there each numpy call costs several times what it costs warm. Measured
(decode and check, µs, warm / after a 20 ms wait): 16 chunks 17 / 170 on
ints, 38 / 423 with numpy; 64 chunks 51 / 238 and 44 / 417; 256 chunks
151 / 438 and 52 / 416, where numpy is the better choice."""


def index_spec(grid_shape: Shape) -> ChunkSpec:
    """The chunk spec of a shard index for an inner grid of ``grid_shape``."""
    return ChunkSpec((*grid_shape, 2), UINT64, EMPTY)


class ShardIndex:
    """Offsets and lengths of a shard's inner chunks (a mutable value).

    ``entries`` is a ``uint64`` array of shape ``grid_shape + (2,)``.
    Positions are flat C-order inner-chunk numbers (``np.ravel_multi_index``
    of the inner coordinates).
    """

    __slots__ = ("grid_shape", "_entries", "_pairs", "_frozen")

    def __init__(self, grid_shape: Shape, entries: np.ndarray | None = None):
        self.grid_shape: Shape = tuple(grid_shape)
        if entries is None:
            entries = np.full((*self.grid_shape, 2), EMPTY, dtype=np.uint64)
        self._entries: np.ndarray | None = entries
        self._pairs: list[Any] | None = None  # (offset, nbytes) by position, as Python ints
        self._frozen = False

    @classmethod
    def _of_pairs(cls, grid_shape: Shape, pairs: list[tuple[int, int]]) -> ShardIndex:
        """An index held as Python ints (a small decoded one): its numpy
        ``entries`` are made only if something asks for them."""
        index = cls.__new__(cls)
        index.grid_shape, index._entries, index._pairs, index._frozen = tuple(grid_shape), None, pairs, False
        return index

    @property
    def entries(self) -> np.ndarray:
        """The ``uint64`` array ``grid_shape + (2,)`` (read-only once :meth:`freeze` d)."""
        entries = self._entries
        if entries is None:
            entries = self._entries = np.array(self._pairs, dtype=np.uint64).reshape((*self.grid_shape, 2))
            if self._frozen:
                entries.setflags(write=False)
            else:
                self._pairs = None  # the array may be written now: lookups read it
        return entries

    def freeze(self) -> None:
        """Make the index read-only (readers keep indexes that must not change)."""
        self._frozen = True
        if self._entries is not None:
            self._entries.setflags(write=False)

    @property
    def nchunks(self) -> int:
        """Number of inner chunks in the shard (stored or not)."""
        return math.prod(self.grid_shape)

    @property
    def nbytes(self) -> int:
        """The size of the entries (16 bytes an inner chunk), for a cache's budget."""
        return 16 * self.nchunks

    def _flat(self) -> np.ndarray:
        return self.entries.reshape(-1, 2)

    def present(self) -> np.ndarray:
        """Boolean mask (flat, C order) of inner chunks that are stored."""
        mask: np.ndarray = self._flat()[:, 0] != EMPTY
        return mask

    def is_empty(self) -> bool:
        """True when no inner chunk is stored."""
        return not bool(self.present().any())

    def get(self, position: int) -> tuple[int, int] | None:
        """``(offset, nbytes)`` of the inner chunk at flat ``position``, or None if empty.

        A read-only index (as readers keep them, see
        ``ShardLayout.checked_index``) cannot change, so its entries are
        looked up in a list of Python ints made once (or decoded as such):
        a reader asks for a few entries per read, and numpy scalars cost
        more than the lookup.
        """
        pairs = self._pairs
        if pairs is None:
            entries = self.entries
            if entries.flags.writeable or entries.size > _MAX_LISTED_ENTRIES:
                offset, nbytes = self._flat()[position]
                if offset == EMPTY:
                    return None
                return int(offset), int(nbytes)
            pairs = self._pairs = self._flat().tolist()
        offset, nbytes = pairs[position]
        if offset == EMPTY_OFFSET:
            return None
        return offset, nbytes

    def pairs(self) -> Sequence[Sequence[int]]:
        """``(offset, nbytes)`` of every position (empty: both
        :data:`EMPTY`), as Python ints; not to be changed."""
        return self._pairs if self._pairs is not None else self._flat().tolist()

    def set(self, position: int, offset: int, nbytes: int) -> None:
        """Record that the inner chunk at flat ``position`` is stored at
        ``offset`` (bytes from the shard's start) and is ``nbytes`` long."""
        self._flat()[position] = (offset, nbytes)

    def clear(self, position: int) -> None:
        """Mark the inner chunk at flat ``position`` as not stored (it reads as fill)."""
        self._flat()[position] = (EMPTY, EMPTY)

    def stored_nbytes(self) -> int:
        """Total bytes of the stored inner chunks."""
        flat = self._flat()
        return int(flat[flat[:, 0] != EMPTY, 1].sum(dtype=np.uint64))

    def encode(self, chain: BoundChain) -> bytes:
        """The index encoded with ``chain`` (bound to :func:`index_spec`)."""
        return chain.encode(ArrayBytes.from_array(self.entries))

    @classmethod
    def decode(
        cls,
        encoded: bytes,
        chain: BoundChain,
        grid_shape: Shape,
        *,
        index_offset: int | None,
        shard_nbytes: int | None,
    ) -> ShardIndex:
        """Decode and check an encoded index.

        ``index_offset`` is where the index starts in the shard and
        ``shard_nbytes`` the shard's length; each is None when unknown (a
        partial reader of an index at the end knows neither), and the checks
        that need it are skipped: a range past the end then shows up as a
        short read.

        Raises
        ------
        ChecksumError
            If the index checksum does not match.
        ChunkDecodeError
            If the index is malformed or describes ranges that cannot be right.
        """
        expected = chain.encoded_size
        if expected is not None and len(encoded) != expected:
            raise ChunkDecodeError(
                f"codec {NAME!r}: the index needs {expected} bytes, got {len(encoded)}"
            )
        n = math.prod(grid_shape)
        try:
            numbers = _plain_numbers(encoded, chain, n) if n <= _SMALL_INDEX_CHUNKS else None
            if numbers is None:
                entries = np.array(chain.decode(encoded).array, dtype=np.uint64, copy=True)
        except ChunkDecodeError as exc:
            raise type(exc)(f"codec {NAME!r}: index: {exc}") from None
        except CodecError as exc:
            raise ChunkDecodeError(f"codec {NAME!r}: index: {exc}") from None
        if numbers is None:
            index = cls(grid_shape, entries.reshape((*grid_shape, 2)))
            index.check(index_offset, len(encoded), shard_nbytes)
        else:
            pairs = list(zip(numbers[0::2], numbers[1::2]))
            index = cls._of_pairs(grid_shape, pairs)
            index._check_pairs(pairs, index_offset, len(encoded), shard_nbytes)
        return index

    def check(self, index_offset: int | None, index_nbytes: int, shard_nbytes: int | None) -> None:
        """Raise ChunkDecodeError if the entries cannot describe a valid shard
        (small indexes are checked on Python ints, :meth:`_check_pairs`)."""
        if self.nchunks <= _SMALL_INDEX_CHUNKS:
            self._check_pairs(self.pairs(), index_offset, index_nbytes, shard_nbytes)
        else:
            self._check_arrays(index_offset, index_nbytes, shard_nbytes)

    def _check_arrays(self, index_offset: int | None, index_nbytes: int, shard_nbytes: int | None) -> None:
        """:meth:`check` with numpy, for large indexes."""
        flat = self._flat()
        offsets, lengths = flat[:, 0], flat[:, 1]
        empty_offset, empty_length = offsets == EMPTY, lengths == EMPTY
        half = empty_offset != empty_length
        if half.any():
            raise ChunkDecodeError(
                f"codec {NAME!r}: index entry for inner chunk {self._coords(half)} is half empty "
                f"(offset {int(offsets[half][0])}, nbytes {int(lengths[half][0])})"
            )
        present = ~empty_offset
        if not present.any():
            return
        starts, nbytes = offsets[present], lengths[present]
        positions = np.flatnonzero(present)
        # start + nbytes must not wrap around 2^64.
        wraps = nbytes > EMPTY - starts
        if wraps.any():
            raise ChunkDecodeError(
                f"codec {NAME!r}: inner chunk {self._coords_at(positions[wraps][0])} has an "
                f"impossible range (offset {int(starts[wraps][0])}, nbytes {int(nbytes[wraps][0])})"
            )
        ends = starts + nbytes
        if shard_nbytes is not None:
            past = ends > np.uint64(shard_nbytes)
            if past.any():
                raise ChunkDecodeError(
                    f"codec {NAME!r}: inner chunk {self._coords_at(positions[past][0])} ends at byte "
                    f"{int(ends[past][0])}, past the end of the {shard_nbytes}-byte shard"
                )
        if index_offset is not None:
            lo, hi = np.uint64(index_offset), np.uint64(index_offset + index_nbytes)
            hits = (nbytes > 0) & (starts < hi) & (ends > lo)
            if hits.any():
                raise ChunkDecodeError(
                    f"codec {NAME!r}: inner chunk {self._coords_at(positions[hits][0])} "
                    f"(bytes [{int(starts[hits][0])}, {int(ends[hits][0])})) overlaps the index "
                    f"at bytes [{index_offset}, {index_offset + index_nbytes})"
                )
        nonzero = nbytes > 0
        if np.count_nonzero(nonzero) > 1:
            s, e, p = starts[nonzero], ends[nonzero], positions[nonzero]
            order = np.argsort(s, kind="stable")
            s, e, p = s[order], e[order], p[order]
            clash = s[1:] < e[:-1]
            if clash.any():
                i = int(np.flatnonzero(clash)[0])
                raise ChunkDecodeError(
                    f"codec {NAME!r}: inner chunks {self._coords_at(p[i])} and {self._coords_at(p[i + 1])} "
                    f"overlap (bytes [{int(s[i])}, {int(e[i])}) and [{int(s[i + 1])}, {int(e[i + 1])}))"
                )

    def _check_pairs(self, pairs: Sequence[Sequence[int]], index_offset: int | None, index_nbytes: int,
                     shard_nbytes: int | None) -> None:
        """:meth:`check` on Python ints (``(offset, nbytes)`` by position):
        each rule over every entry in turn, the first entry (in position
        order; for overlaps, in order of offset) that breaks it named, as
        the numpy checks name it."""
        for p, (offset, nbytes) in enumerate(pairs):
            if (offset == EMPTY_OFFSET) != (nbytes == EMPTY_OFFSET):
                raise ChunkDecodeError(
                    f"codec {NAME!r}: index entry for inner chunk {self._coords_at(p)} is half empty "
                    f"(offset {offset}, nbytes {nbytes})"
                )
        present = [(offset, nbytes, p) for p, (offset, nbytes) in enumerate(pairs) if offset != EMPTY_OFFSET]
        for start, nbytes, p in present:
            if nbytes > EMPTY_OFFSET - start:
                raise ChunkDecodeError(
                    f"codec {NAME!r}: inner chunk {self._coords_at(p)} has an "
                    f"impossible range (offset {start}, nbytes {nbytes})"
                )
        if shard_nbytes is not None:
            for start, nbytes, p in present:
                if start + nbytes > shard_nbytes:
                    raise ChunkDecodeError(
                        f"codec {NAME!r}: inner chunk {self._coords_at(p)} ends at byte "
                        f"{start + nbytes}, past the end of the {shard_nbytes}-byte shard"
                    )
        if index_offset is not None:
            lo, hi = index_offset, index_offset + index_nbytes
            for start, nbytes, p in present:
                if nbytes > 0 and start < hi and start + nbytes > lo:
                    raise ChunkDecodeError(
                        f"codec {NAME!r}: inner chunk {self._coords_at(p)} "
                        f"(bytes [{start}, {start + nbytes})) overlaps the index "
                        f"at bytes [{index_offset}, {index_offset + index_nbytes})"
                    )
        spans = sorted(((start, start + nbytes, p) for start, nbytes, p in present if nbytes > 0),
                       key=lambda span: span[0])  # stable: equal starts stay in position order
        for (s0, e0, p0), (s1, e1, p1) in zip(spans, spans[1:]):
            if s1 < e0:
                raise ChunkDecodeError(
                    f"codec {NAME!r}: inner chunks {self._coords_at(p0)} and {self._coords_at(p1)} "
                    f"overlap (bytes [{s0}, {e0}) and [{s1}, {e1}))"
                )

    def _coords(self, mask: np.ndarray) -> tuple[int, ...]:
        return self._coords_at(int(np.flatnonzero(mask)[0]))

    def _coords_at(self, position: int) -> tuple[int, ...]:
        return tuple(int(c) for c in np.unravel_index(int(position), self.grid_shape))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ShardIndex)
            and self.grid_shape == other.grid_shape
            and np.array_equal(self.entries, other.entries)
        )

    def __repr__(self) -> str:
        return f"<ShardIndex grid={self.grid_shape} stored={int(self.present().sum())}/{self.nchunks}>"


def _plain_numbers(encoded: bytes, chain: BoundChain, n: int) -> tuple[int, ...] | None:
    """The ``2 n`` numbers of an index encoded by the usual chain (``bytes``,
    then ``crc32c`` or nothing), read with :mod:`struct`, the checksum
    checked (a mismatch raises the codec's error); None for any other chain."""
    codecs = chain.chain
    serializer = codecs.array_to_bytes
    if codecs.array_to_array or type(serializer) is not BytesCodec or len(codecs.bytes_to_bytes) > 1:
        return None
    if codecs.bytes_to_bytes:
        if type(codecs.bytes_to_bytes[0]) is not Crc32cCodec:
            return None
        encoded = codecs.bytes_to_bytes[0].decode(encoded, chain.spec)
    order = ">" if serializer.endian == "big" else "<"
    return struct.unpack(f"{order}{2 * n}Q", encoded)


__all__ = ["EMPTY", "EMPTY_OFFSET", "ShardIndex", "index_spec"]
