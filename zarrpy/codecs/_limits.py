"""How many bytes a decoder may produce for one chunk.

A compressed frame states (or implies) how large its decoded form is. A
decoder must not believe that claim further than the chunk can justify, or a
corrupt or hostile chunk makes it allocate gigabytes. Every bytes-to-bytes
decoder therefore gets a bound from :func:`max_decoded_nbytes` and stops with
:class:`~zarrpy.errors.ChunkDecodeError` (naming the codec and the bound) as
soon as its output would pass it.

**Fixed-size data types.** The bytes-to-bytes codecs receive the spec of the
array-to-bytes codec's *decoded* chunk, not the exact size of their own
decoded output: that can differ (a ``crc32c`` before the compressor adds 4
bytes, a compressor before it adds framing, ``sharding_indexed`` adds its
index). So the bound allows some slack on top of ``size * itemsize``, or on
top of the array-to-bytes codec's own worst case when it declares one
(``ChunkSpec.encoded_nbytes_bound``: zfp at a high fixed rate stores more than
the elements); the array-to-bytes codec then checks the exact size.

**Variable-length data types** (strings, bytes, ragged arrays). Nothing in
the chunk's spec says how long its elements are, and a compressed size says
nothing useful either (zstd turns 32 KiB into 1 GiB of zeros). The bound is
a ceiling on the element bytes of one chunk, plus room for the layouts'
per-element headers (16 bytes an element) and 64 KiB of slack, so a chunk of
many short strings is never refused for its headers. The ceiling is 256 MiB
(:data:`DEFAULT_MAX_CHUNK_NBYTES`) unless the environment variable
``ZARRPY_MAX_CHUNK_NBYTES`` says otherwise (a positive integer, in bytes;
read at each use, so it can be changed while a program runs). Legitimate
chunks of more element bytes than the ceiling — many long strings in one
large chunk or shard — need the variable raised to read them; the error
says so. The same ceiling limits the decoding memory a frame header may ask
for where a format has such a field (an xz dictionary).
"""

from __future__ import annotations

from ..core import limits
from ..errors import CodecError, MetadataError
from .abc import ChunkSpec

_SLACK_NBYTES = 1 << 16
"""Headroom for checksums, stacked compressors and small shard indexes."""

DEFAULT_MAX_CHUNK_NBYTES = limits.DEFAULT_MAX_VARIABLE_CHUNK_NBYTES
"""Default ceiling on the decoded element bytes of one variable-length chunk."""

ENV_VAR = limits.ENV_VAR

_HEADER_NBYTES_PER_ELEMENT = 16
"""More than any variable-length layout stores per element (vlen-utf8: a
4-byte length; zarrs.vlen: an 8-byte offset; optional: a 1-byte mask)."""


def max_chunk_nbytes() -> int:
    """The ceiling on one variable-length chunk's element bytes: the one
    :mod:`zarrpy.core.limits` keeps (``ZARRPY_MAX_CHUNK_NBYTES``, else
    :data:`DEFAULT_MAX_CHUNK_NBYTES`).

    Raises
    ------
    CodecError
        If the variable is set to anything but a positive integer: a limit
        meant to be raised must not silently fall back to the default.
    """
    try:
        return limits.max_chunk_nbytes(variable=True)
    except MetadataError as exc:
        raise CodecError(str(exc)) from None


def max_decoded_nbytes(spec: ChunkSpec) -> int:
    """Upper bound on a bytes-to-bytes decoder's output for ``spec``.

    Fixed-size types: ``size * itemsize`` plus one eighth plus 64 KiB (at
    least the array-to-bytes codec's declared bound plus 64 KiB).
    Variable-length types: :func:`max_chunk_nbytes` plus 16 bytes an element
    plus 64 KiB.
    """
    if spec.dtype.is_variable:
        return max_chunk_nbytes() + _HEADER_NBYTES_PER_ELEMENT * spec.size + _SLACK_NBYTES
    nbytes = spec.size * spec.dtype.itemsize
    bound = nbytes + nbytes // 8 + _SLACK_NBYTES
    if spec.encoded_nbytes_bound is not None:
        bound = max(bound, spec.encoded_nbytes_bound + _SLACK_NBYTES)
    return bound


def too_large(codec: str, limit: int, spec: ChunkSpec, *, claimed: int | None = None) -> str:
    """The message for output past ``limit`` (or a header that ``claimed``
    more): names the codec, the bound and, for variable-length chunks, how
    to raise it."""
    if claimed is None:
        what = f"data decodes to more than {limit} bytes, more than the chunk can hold"
    else:
        what = f"header claims {claimed} decoded bytes, more than the chunk can hold ({limit})"
    if spec.dtype.is_variable:
        what += f" (the ceiling for variable-length chunks; raise it with the environment variable {ENV_VAR})"
    return f"codec {codec!r}: {what}"


__all__ = ["DEFAULT_MAX_CHUNK_NBYTES", "ENV_VAR", "max_chunk_nbytes", "max_decoded_nbytes", "too_large"]
