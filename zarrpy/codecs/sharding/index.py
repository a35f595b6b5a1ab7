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

import numpy as np

from ...core._typing import Shape
from ...core.array_bytes import ArrayBytes
from ...core.dtypes import DataType
from ...errors import ChunkDecodeError, CodecError
from ..abc import ChunkSpec
from ..chain import BoundChain

NAME = "sharding_indexed"
EMPTY = np.uint64(2**64 - 1)
"""The offset and length of an empty inner chunk."""

UINT64 = DataType.from_json("uint64")

_EMPTY_INT = int(EMPTY)
_MAX_LISTED_ENTRIES = 1 << 17
"""Read-only indexes up to this many numbers (65,536 inner chunks) keep a list for lookups."""


def index_spec(grid_shape: Shape) -> ChunkSpec:
    """The chunk spec of a shard index for an inner grid of ``grid_shape``."""
    return ChunkSpec((*grid_shape, 2), UINT64, EMPTY)


class ShardIndex:
    """Offsets and lengths of a shard's inner chunks (a mutable value).

    ``entries`` is a ``uint64`` array of shape ``grid_shape + (2,)``.
    Positions are flat C-order inner-chunk numbers (``np.ravel_multi_index``
    of the inner coordinates).
    """

    __slots__ = ("grid_shape", "entries", "_pairs")

    def __init__(self, grid_shape: Shape, entries: np.ndarray | None = None):
        self.grid_shape: Shape = tuple(grid_shape)
        if entries is None:
            entries = np.full((*self.grid_shape, 2), EMPTY, dtype=np.uint64)
        self.entries = entries
        self._pairs: list[list[int]] | None = None

    @property
    def nchunks(self) -> int:
        """Number of inner chunks in the shard (stored or not)."""
        return int(np.prod(self.grid_shape, dtype=np.int64))

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
        looked up in a list of Python ints made once: a reader asks for
        a few entries per read, and numpy scalars cost more than the lookup.
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
        if offset == _EMPTY_INT:
            return None
        return offset, nbytes

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
        try:
            decoded = chain.decode(encoded)
        except ChunkDecodeError as exc:
            raise type(exc)(f"codec {NAME!r}: index: {exc}") from None
        except CodecError as exc:
            raise ChunkDecodeError(f"codec {NAME!r}: index: {exc}") from None
        entries = np.array(decoded.array, dtype=np.uint64, copy=True)
        index = cls(grid_shape, entries.reshape((*grid_shape, 2)))
        index.check(index_offset, len(encoded), shard_nbytes)
        return index

    def check(self, index_offset: int | None, index_nbytes: int, shard_nbytes: int | None) -> None:
        """Raise ChunkDecodeError if the entries cannot describe a valid shard."""
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


__all__ = ["EMPTY", "ShardIndex", "index_spec"]
