"""The codec contract.

A codec is a small, immutable object built from its V3 JSON configuration.
Three kinds exist, by what they consume and produce:

- :class:`ArrayToArrayCodec` (e.g. ``transpose``): ArrayBytes -> ArrayBytes;
- :class:`ArrayToBytesCodec` (e.g. ``bytes``): ArrayBytes -> bytes; a chain
  has exactly one;
- :class:`BytesToBytesCodec` (e.g. ``gzip``): bytes -> bytes.

Every codec

- round-trips its configuration: ``from_config(c).to_config() == c`` for any
  normalised ``c``; a bad configuration raises :class:`CodecError` naming the
  codec and field;
- is bound to a chunk once through :meth:`Codec.resolve`, which validates the
  data type and shape and returns the spec of what the codec *produces*;
- is a plain synchronous function of its input: thread pools, stores and keys
  belong to higher layers. Codecs must be thread-safe (no mutable state).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from ..core._typing import BytesLike, Shape
from ..core.array_bytes import ArrayBytes
from ..core.chunk_spec import ChunkSpec
from ..core.dtypes import DataType
from ..errors import CodecError
from ._config import check_keys
from .fill import is_fill
from .merge import ChunkWrite, merge_writes
from .partial import (
    ByteReader,
    DEFAULT_OPTIONS,
    WHOLE_ONLY,
    ArrayPartialDecoder,
    CodecCapabilities,
    DecodeOptions,
    WholeBytesDecoder,
    WholeChunkDecoder,
    full_selection,
)


class Codec(ABC):
    """Base of all codecs. Subclasses set ``name`` (the V3 name they write).

    **V2 form (optional).** A codec that has a Zarr V2 form sets ``v2_id``
    (the numcodecs id written in ``.zarray``); the registry then finds the
    class for that id (:func:`zarrpy.codecs.registry.codec_class_for_v2_id`),
    plugins included. By default the V2 configuration is
    ``{"id": v2_id, **to_config()}`` and is read back through
    :meth:`from_config`; codecs whose V2 form differs (other defaults, other
    spellings) override :meth:`from_v2_config` / :meth:`to_v2_config`.
    """

    name: ClassVar[str]
    v2_id: ClassVar[str | None] = None
    __slots__ = ()

    @classmethod
    def from_v2_config(cls, config: Mapping[str, Any], *, typesize: int = 1) -> Codec:
        """Build from a V2 codec configuration ``{"id": ..., **settings}``.

        ``typesize`` is the item size of what the codec receives in the V2
        pipeline (1 after the serializer or a bytes codec), for settings V2
        derives from it. Raises CodecError naming the codec and field.
        """
        return cls.from_config({k: v for k, v in config.items() if k != "id"})

    def to_v2_config(self, data_type: DataType | None = None) -> dict[str, Any]:
        """The V2 codec configuration ``{"id": ..., **settings}``.

        ``data_type`` is the array's data type (codecs whose V2 id depends on
        it use it). Raises CodecError if this codec has no V2 form.
        """
        if self.v2_id is None:
            raise CodecError(f"codec {self.name!r} has no V2 form")
        return {"id": self.v2_id, **(self.to_config() or {})}

    def same_stored_form(self, other: Codec) -> bool:
        """True when ``other`` reads and writes the same bytes as this codec
        (e.g. the form a V2 round trip gives back). Default: equal JSON."""
        return self.to_json() == other.to_json()

    def matches_v2_config(self, config: Mapping[str, Any]) -> bool:
        """True when the V2 codec configuration ``config`` (of this codec's
        ``v2_id``) reads and writes the same bytes as this codec."""
        try:
            return self.same_stored_form(type(self).from_v2_config(config))
        except CodecError:
            return False

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> Codec:
        """Build from a V3 ``configuration`` object (None when absent)."""
        check_keys(cls.name, config)
        return cls()

    def evolve(self, spec: ChunkSpec) -> Codec:
        """This codec with chunk-dependent settings filled in (e.g. blosc's
        ``typesize``); called once when an array is created."""
        return self

    def to_config(self) -> dict[str, Any] | None:
        """The V3 ``configuration`` object, or None to omit it."""
        return None

    def to_json(self) -> dict[str, Any]:
        """The full V3 codec object ``{"name", "configuration"?}``."""
        config = self.to_config()
        return {"name": self.name} if config is None else {"name": self.name, "configuration": config}

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        """Validate against ``spec``; return the spec of the encoded form.

        Raises CodecError (naming this codec) if the chunk is unsupported.
        """
        return spec

    @property
    def capabilities(self) -> CodecCapabilities:
        """What this codec's partial decoder does better than decoding
        everything (default: nothing; see :mod:`zarrpy.codecs.partial`)."""
        return WHOLE_ONLY

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Codec) and type(self) is type(other) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash((type(self), repr(self.to_json())))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_config() or ''})"


class ArrayToArrayCodec(Codec):
    """Transforms the elements of a chunk, e.g. reordering them."""

    __slots__ = ()

    def v2_filter_dtypes(self) -> tuple[np.dtype | None, np.dtype | None]:
        """As a V2 filter: the (decoded, encoded) dtypes it is configured with,
        in their stated byte order; None where it keeps its input's type."""
        return None, None

    @abstractmethod
    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        """Transform the elements of ``chunk`` (of ``spec``, the *decoded*
        chunk's spec) into the form the next codec takes, whose spec is
        :meth:`resolve`'s result.

        Raises CodecError when ``chunk`` does not fit this codec's settings.
        """

    @abstractmethod
    def decode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        """Invert :meth:`encode`; ``spec`` is the *decoded* chunk's spec."""

    def partial_decoder(self, input: ArrayPartialDecoder, spec: ChunkSpec) -> ArrayPartialDecoder:
        """A decoder of selections of the *decoded* chunk (``spec``) over
        ``input``, the decoder of the encoded chunk. Default: decode all of it."""
        encoded = self.resolve(spec)

        def load() -> ArrayBytes | None:
            chunk = input.decode_selection(full_selection(encoded.shape))
            return None if chunk is None else self.decode(chunk, spec)

        return WholeChunkDecoder(load)


@dataclass(frozen=True, slots=True)
class InnerChunks:
    """Chunks inside a stored chunk (a shard's inner chunks): their shape and
    the chain that encodes each."""

    shape: Shape
    codecs: Any  # CodecChain (chain.py imports this module)


class ArrayToBytesCodec(Codec):
    """Serialises a chunk's elements to bytes."""

    __slots__ = ()

    decodes_buffers: ClassVar[bool] = False
    """True when :meth:`decode` takes any C-contiguous buffer (a numpy
    ``uint8`` array) as well as ``bytes``; then a chain may hand it a
    reused scratch buffer (:meth:`~zarrpy.codecs.chain.BoundChain.decoded`)."""

    def inner_chunks(self) -> InnerChunks | None:
        """The chunks this codec stores independently inside one stored
        chunk (``sharding_indexed``: its inner chunks), else None."""
        return None

    def ragged_dtype(self) -> np.dtype | None:
        """The numpy type of each element when elements are 1-D arrays of
        numbers (numcodecs ``vlen-array``), else None."""
        return None

    @abstractmethod
    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        """Serialise ``chunk``'s elements (a chunk of ``spec``) to bytes;
        :meth:`decode` of the result gives the same elements back.

        Raises CodecError when the elements cannot be stored in this form.
        """

    def encode_buffer(self, chunk: ArrayBytes, spec: ChunkSpec) -> BytesLike:
        """:meth:`encode`, for a chain whose next codec takes any buffer
        (:attr:`BytesToBytesCodec.encodes_buffers`): the result may view
        ``chunk``'s own memory instead of copying it into ``bytes``, so it
        is only valid while ``chunk`` is unchanged. Default: :meth:`encode`."""
        return self.encode(chunk, spec)

    @abstractmethod
    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        """Parse ``data`` into a chunk of ``spec.shape``.

        Raises ChunkDecodeError when ``data`` does not hold such a chunk. Must
        never allocate more than the chunk's expected size on a header's word.
        """

    def compute_encoded_size(self, spec: ChunkSpec) -> int | None:
        """Encoded size in bytes when it is fixed by ``spec``, else None."""
        return None

    def decode_into(
        self, data: BytesLike, spec: ChunkSpec, dest: np.ndarray, options: DecodeOptions = DEFAULT_OPTIONS
    ) -> bool:
        """Decode ``data`` straight into ``dest`` (a writable array of
        ``spec.shape`` and the type's in-memory numpy dtype, maybe a strided
        view into a bigger array) when this codec can do better than
        :meth:`decode` plus a copy; True when done. On False (the default)
        ``dest`` may hold anything. Errors are those of :meth:`decode`.
        ``options.map_fn`` runs independent pieces (a shard's inner chunks)."""
        return False

    def decodes_into_elements(self, spec: ChunkSpec) -> bool:
        """True when :meth:`decode_into` builds the elements from the whole
        decoded bytes and always does it for a ``dest`` of ``spec.shape`` and
        the in-memory dtype, so a chain may run its bytes-to-bytes codecs
        first and hand it their output. Default: False."""
        return False

    def native_bytes(self, spec: ChunkSpec) -> bool:
        """True when the encoded chunk is exactly the elements' in-memory
        bytes in C order (so a decompressor may write it straight into an
        output array). Default: False."""
        return False

    def partial_decoder(
        self, input: ByteReader, spec: ChunkSpec, options: DecodeOptions = DEFAULT_OPTIONS
    ) -> ArrayPartialDecoder:
        """A decoder of selections of one stored chunk of ``spec``, reading
        from ``input`` (the encoded bytes). Default: read and decode it whole."""

        def load() -> ArrayBytes | None:
            data = input(None)
            return None if data is None else self.decode(data, spec)

        return WholeChunkDecoder(load)

    def update(
        self, old: bytes | None, writes: Sequence[ChunkWrite], spec: ChunkSpec, *, keep_fill: bool = False
    ) -> bytes | None:
        """The stored chunk after writing each block at its selection (later
        writes win); None when it ends up all fill and ``keep_fill`` is False.

        ``old`` is the chunk's current encoding (None: missing, all fill).
        Default: decode ``old`` (unless a write covers the chunk whole),
        merge, encode. Codecs that hold many independently encoded pieces
        (``sharding_indexed``) override this to touch only what the writes
        reach and keep the other pieces' bytes.
        """
        chunk = merge_writes(lambda data: self.decode(data, spec), old, writes, spec, self.name)
        if not keep_fill and is_fill(chunk, spec):
            return None
        return self.encode(chunk, spec)


class BytesToBytesCodec(Codec):
    """Transforms bytes to bytes (compression, checksums)."""

    __slots__ = ()

    @abstractmethod
    def encode(self, data: bytes, spec: ChunkSpec) -> bytes:
        """Encode ``data`` (compress it, append a checksum...). ``spec`` is
        that of the chunk the bytes hold, for codecs that use the item size."""

    @abstractmethod
    def decode(self, data: bytes, spec: ChunkSpec) -> bytes:
        """Invert :meth:`encode`.

        Raises CodecError (ChecksumError for a checksum mismatch) for corrupt
        or truncated input, and ChunkDecodeError as soon as the output would
        pass the chunk's decoded-size bound, so a hostile frame cannot make
        it allocate without limit.
        """

    def compute_encoded_size(self, input_nbytes: int) -> int | None:
        """Encoded size for an input of ``input_nbytes``, if deterministic."""
        return None

    encodes_buffers: ClassVar[bool] = False
    """True when :meth:`encode` takes any C-contiguous buffer (a ``uint8``
    array) as well as ``bytes``, and only reads it: the array-to-bytes codec
    before it may then hand over the chunk's memory instead of a copy
    (:meth:`ArrayToBytesCodec.encode_buffer`)."""

    decodes_into_buffers: ClassVar[bool] = False
    """True when :meth:`decode_into` can do the work (it may still refuse
    a given input); False when it always returns False."""

    def decode_into(self, data: BytesLike, dest: np.ndarray, spec: ChunkSpec) -> bool:
        """Decode ``data`` straight into ``dest`` (a writable, C-contiguous
        ``uint8`` array) when it decodes to exactly ``dest.size`` bytes and
        this codec can write into a given buffer; True when done. False
        (the default) leaves ``dest`` undefined: the caller then uses
        :meth:`decode`, which also gives the error for corrupt data."""
        return False

    def partial_decoder(self, input: ByteReader, spec: ChunkSpec) -> ByteReader:
        """A reader of the *decoded* bytes over ``input``, the reader of the
        encoded ones. Default: read everything once, decode once, slice."""
        return WholeBytesDecoder(input, lambda data: self.decode(data, spec))


__all__ = [
    "ArrayPartialDecoder",
    "InnerChunks",
    "ArrayToArrayCodec",
    "ArrayToBytesCodec",
    "ByteReader",
    "BytesToBytesCodec",
    "ChunkSpec",
    "Codec",
]
