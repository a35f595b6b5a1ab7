"""Whole shards of an Array written inner chunk by inner chunk.

The API side of :mod:`zarrpy.pipeline.shard_stream`, for the copies that
move more than memory holds (:func:`zarrpy.from_array`, ``zarrpy cp``): a
shard is read from its source band by band and streamed to the store, so
writing it needs memory for a band and a few inner chunks, never for the
shard.
"""

from __future__ import annotations

from typing import Any, Callable

from ..core._typing import ChunkCoords, Shape
from ..pipeline import shard_stream
from ._array import Array

Region = tuple[slice, ...]


def streams_shards(array: Array) -> bool:
    """Can :func:`write_shard` write ``array``'s shards (it is sharded, with
    ``sharding_indexed`` as its whole chain, and has dimensions)?"""
    return array.is_sharded and shard_stream.streams(array._io)


def write_shard(array: Array, coords: ChunkCoords, read: Callable[[Region], Any], *,
                band: Shape | None = None, run_nbytes: int = shard_stream.RUN_NBYTES) -> bool:
    """Store the shard at grid ``coords`` of ``array`` from ``read(region)``
    (elements for a region of the array), read in bands of ``band`` (whole
    inner chunks consecutive in the array's write order: :func:`plan_band`;
    default one inner chunk), encoded on the pool in runs of about
    ``run_nbytes``. True if stored, False if it held only the fill value
    (then nothing is stored under its key)."""
    array._check_writable()
    return shard_stream.write_shard(array._io, coords, read, band=band, run_nbytes=run_nbytes)


def plan_band(array: Array, fits: Callable[[Shape], bool]) -> Shape | None:
    """The largest band of ``array``'s (largest) shards for which ``fits(band)``, its
    inner chunks consecutive in the order the array writes them, or None
    when one inner chunk does not fit (see :func:`~zarrpy.pipeline.shard_stream.plan_band`)."""
    assert array.is_sharded
    # The largest shard's bands: a band is cut to each shard it is used in.
    return shard_stream.plan_band(array._io.spec.shape, array.chunks, fits,
                                  array.subchunk_write_order or "lexicographic")


__all__ = ["plan_band", "streams_shards", "write_shard"]
