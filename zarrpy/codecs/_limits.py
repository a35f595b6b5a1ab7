"""How many bytes a bytes-to-bytes decoder may produce for one chunk.

A compressed frame states (or implies) how large its decoded form is. A
decoder must not believe that claim further than the chunk can justify, or a
corrupt or hostile chunk makes it allocate gigabytes. The bytes-to-bytes
codecs receive the spec of the array-to-bytes codec's *decoded* chunk, not
the exact size of their own decoded output: that can differ (a ``crc32c``
before the compressor adds 4 bytes, a compressor before it adds framing,
``sharding_indexed`` adds its index). So the bound allows some slack on top of
``size * itemsize``, or on top of the array-to-bytes codec's own worst case
when it declares one (``ChunkSpec.encoded_nbytes_bound``: zfp at a high
fixed rate stores more than the elements); the array-to-bytes codec then
checks the exact size.

For variable-length data types no bound is known: decoders then stream, so
memory grows with the data actually decoded, never with a header's claim.
"""

from __future__ import annotations

from .abc import ChunkSpec

_SLACK_NBYTES = 1 << 16
"""Headroom for checksums, stacked compressors and small shard indexes."""


def max_decoded_nbytes(spec: ChunkSpec) -> int | None:
    """Upper bound on a bytes-to-bytes decoder's output for ``spec``, or None.

    ``size * itemsize`` plus one eighth plus 64 KiB for fixed-size types (at
    least the array-to-bytes codec's declared bound plus 64 KiB); None for
    variable-length types.
    """
    if spec.dtype.is_variable:
        return None
    nbytes = spec.size * spec.dtype.itemsize
    bound = nbytes + nbytes // 8 + _SLACK_NBYTES
    if spec.encoded_nbytes_bound is not None:
        bound = max(bound, spec.encoded_nbytes_bound + _SLACK_NBYTES)
    return bound
