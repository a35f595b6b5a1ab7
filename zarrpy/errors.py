"""The one exception tree of zarrpy.

Every error zarrpy raises on purpose derives from :class:`ZarrpyError`. Each
also derives from the closest builtin (``ValueError``, ``KeyError`` …) so that
generic ``except`` clauses written for numpy or zarr-python keep working.
Messages name the store key, codec or metadata field at fault.
"""

from __future__ import annotations

import pickle


class ZarrpyError(Exception):
    """Base class of every zarrpy error."""


class MetadataError(ZarrpyError, ValueError):
    """A ``zarr.json`` / ``.zarray`` document is malformed or unsupported."""


class NodeNotFoundError(ZarrpyError, FileNotFoundError):
    """No array or group exists at the requested path."""


class NodeExistsError(ZarrpyError, FileExistsError):
    """An array or group already exists where a new one was to be created."""


class CodecError(ZarrpyError, ValueError):
    """A codec is misconfigured, or cannot handle the chunk it was given."""


class UnknownCodecError(CodecError):
    """No codec is registered (or discoverable) under a name."""


class ChunkDecodeError(CodecError):
    """A stored chunk could not be decoded (corrupt, truncated, wrong size)."""


class ChecksumError(ChunkDecodeError):
    """A stored checksum does not match the data (e.g. crc32c)."""


class StoreError(ZarrpyError, OSError):
    """A store could not carry out a request."""

    key: str | None = None
    """The store key (or list prefix) the failed request named, when there is one;
    ``errno`` is the underlying ``OSError``'s, so ``exc.errno == errno.ENOSPC`` works."""


class InvalidKeyError(StoreError, ValueError):
    """A store key is unsafe or malformed (``..``, absolute, NUL …)."""


class ReadOnlyError(StoreError, PermissionError):
    """A write was attempted on a store or array opened read-only."""


class KeyNotFoundError(StoreError, FileNotFoundError):
    """A store holds no value under a key whose size was asked for
    (``Store.getsize``; ``get`` answers a missing key with None instead)."""


class BoundsCheckError(ZarrpyError, IndexError):
    """An index lies outside the array."""


class SelectionError(ZarrpyError, IndexError):
    """A selection is of a kind zarrpy does not support, or is malformed."""


class DataTypeError(ZarrpyError, TypeError):
    """A value cannot be written as the array's elements (e.g. a number
    where a ragged array needs a 1-D vector of numbers)."""


class BroadcastError(SelectionError, ValueError):
    """A value's shape cannot be broadcast to the shape of the selection it
    is written to (a ``ValueError`` too, as numpy's is)."""


class OutTypeError(SelectionError, TypeError):
    """A read's ``out=`` is not a numpy array (a ``TypeError`` too, as numpy's
    and zarr-python's are)."""


class ProcessLocalError(ZarrpyError, pickle.PicklingError):
    """An array on a store that lives in this process's memory (a
    ``MemoryStore``, fsspec's ``memory://``) was pickled: another process
    could not see its data, and writes there would be lost."""


class IrregularChunksError(ZarrpyError, NotImplementedError):
    """An array's chunks (or shards) have no single shape (a rectilinear
    chunk grid): ``Array.chunks`` / ``Array.shards`` cannot say one. A
    ``NotImplementedError`` too, as zarr-python raises; ``read_chunk_sizes``
    and ``write_chunk_sizes`` give every chunk's size."""


class ChunkAlignmentError(ZarrpyError, ValueError):
    """Blocks of a parallel write (dask) do not align to the array's chunks
    or shards: two tasks would rewrite the same stored object."""


def at_key(exc: CodecError, key: str) -> ChunkDecodeError:
    """Return ``exc`` re-raised as a :class:`ChunkDecodeError` naming ``key``.

    Codecs know bytes, not keys; the array layer, which knows the key, calls
    this. A ``ChecksumError`` stays a ``ChecksumError``.
    """
    cls = type(exc) if isinstance(exc, ChunkDecodeError) else ChunkDecodeError
    new = cls(f"chunk {key!r}: {exc}")
    new.key = key  # type: ignore[attr-defined]
    return new
