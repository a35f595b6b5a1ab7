"""A codec chain, validated once and bound to one chunk spec.

``CodecChain`` holds the codecs of a ``codecs`` list in order (array-to-array*,
exactly one array-to-bytes, bytes-to-bytes*). ``chain.bind(spec)`` resolves the
spec through every codec once (checking data type and shape support) and
returns a :class:`BoundChain` that encodes and decodes whole chunks.
"""

from __future__ import annotations

import marshal
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, cast

import numpy as np

from ..core._typing import BytesLike
from ..core.array_bytes import ArrayBytes
from ..core.dtypes.optional import OPTIONAL, is_optional, is_paired_box
from ..errors import ChunkDecodeError, CodecError
from ..core.aligned import page_offset
from ..core.scratch import ScratchLease, scratch
from .abc import ArrayToArrayCodec, ArrayToBytesCodec, ByteReader, BytesToBytesCodec, ChunkSpec, Codec
from .fill import is_fill
from .merge import ChunkWrite, merge_writes
from .partial import DEFAULT_OPTIONS, PARTIAL, PARTIAL_UNCHECKED, WHOLE_ONLY, ArrayPartialDecoder, CodecCapabilities, DecodeOptions
from .registry import codec_from_json
from .registry import generation as codec_generation


class CodecChain:
    """An ordered, validated list of codecs."""

    __slots__ = ("array_to_array", "array_to_bytes", "bytes_to_bytes")

    def __init__(self, codecs: Iterable[Codec]):
        a2a: list[ArrayToArrayCodec] = []
        a2b: ArrayToBytesCodec | None = None
        b2b: list[BytesToBytesCodec] = []
        for codec in codecs:
            if isinstance(codec, ArrayToArrayCodec):
                if a2b is not None:
                    raise CodecError(f"codec {codec.name!r}: array-to-array codecs must come before the array-to-bytes codec")
                a2a.append(codec)
            elif isinstance(codec, ArrayToBytesCodec):
                if a2b is not None:
                    raise CodecError(f"codec {codec.name!r}: a chain has exactly one array-to-bytes codec; {a2b.name!r} came first")
                a2b = codec
            elif isinstance(codec, BytesToBytesCodec):
                if a2b is None:
                    raise CodecError(f"codec {codec.name!r}: bytes-to-bytes codecs must come after the array-to-bytes codec")
                b2b.append(codec)
            else:
                raise CodecError(f"{codec!r} is not a codec")
        if a2b is None:
            raise CodecError("codecs: a chain needs exactly one array-to-bytes codec (e.g. 'bytes')")
        self.array_to_array: tuple[ArrayToArrayCodec, ...] = tuple(a2a)
        self.array_to_bytes: ArrayToBytesCodec = a2b
        self.bytes_to_bytes: tuple[BytesToBytesCodec, ...] = tuple(b2b)

    @classmethod
    def from_json(cls, codecs: Sequence[Any]) -> CodecChain:
        """Build from a V3 ``codecs`` list (dicts, names or codec objects)."""
        return cls(codec_from_json(c) for c in codecs)

    @classmethod
    def from_field(cls, codec: str, field: str, value: Any) -> CodecChain:
        """A nested chain (e.g. sharding's ``codecs``); errors name the
        enclosing ``codec`` and its ``field``."""
        if isinstance(value, CodecChain):
            return value
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
            raise CodecError(f"codec {codec!r}: {field!r} must be a list of codecs, got {value!r}")
        try:
            return cls.from_json(value)
        except CodecError as exc:
            raise type(exc)(f"codec {codec!r}: {field!r}: {exc}") from None

    def evolve(self, spec: ChunkSpec) -> CodecChain:
        """This chain with each codec's chunk-dependent settings filled in
        (see :meth:`Codec.evolve`), each seeing the spec its input has."""
        out: list[Codec] = []
        for codec in self.codecs:
            codec = codec.evolve(spec)
            if isinstance(codec, ArrayToArrayCodec):
                spec = codec.resolve(spec)
            out.append(codec)
        return CodecChain(out)

    @property
    def codecs(self) -> tuple[Codec, ...]:
        """All the codecs in encoding order: filters, serializer, compressors."""
        return (*self.array_to_array, self.array_to_bytes, *self.bytes_to_bytes)

    def to_json(self) -> list[dict[str, Any]]:
        """The V3 ``codecs`` metadata member: each codec's JSON object, in order."""
        return [c.to_json() for c in self.codecs]

    def bind(self, spec: ChunkSpec) -> BoundChain:
        """Resolve ``spec`` through the chain once; see :class:`BoundChain`."""
        return BoundChain(self, spec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CodecChain) and self.codecs == other.codecs

    def __repr__(self) -> str:
        return f"CodecChain({list(self.codecs)!r})"


class BoundChain:
    """A chain bound to one chunk spec: encode/decode whole chunks."""

    __slots__ = ("chain", "spec", "_a2a_specs", "_a2b_spec", "encoded_size", "_capabilities", "_single")

    def __init__(self, chain: CodecChain, spec: ChunkSpec):
        self.chain = chain
        self.spec = spec
        specs = []
        for codec in chain.array_to_array:
            specs.append(spec)
            spec = codec.resolve(spec)
        self._a2a_specs = tuple(specs)
        a2b = chain.array_to_bytes
        if is_optional(spec.dtype) and a2b.name != OPTIONAL and a2b.inner_chunks() is None:
            raise CodecError(
                f"codec {a2b.name!r}: data type {spec.dtype.name!r} is stored only by the {OPTIONAL!r} codec "
                "(optionally inside sharding_indexed)"
            )
        self._a2b_spec = chain.array_to_bytes.resolve(spec)
        size = chain.array_to_bytes.compute_encoded_size(self._a2b_spec)
        for b2b in chain.bytes_to_bytes:
            b2b.resolve(self._a2b_spec)
            size = None if size is None else b2b.compute_encoded_size(size)
        self.encoded_size: int | None = size
        self._capabilities: CodecCapabilities | None = None
        self._single: tuple[BytesToBytesCodec | None] | None = None  # single_compressor(), once worked out

    def encode(self, chunk: ArrayBytes) -> bytes:
        """Encode a chunk of ``spec.shape`` to its stored bytes."""
        for codec, spec in zip(self.chain.array_to_array, self._a2a_specs):
            chunk = codec.encode(chunk, spec)
        a2b, b2bs = self.chain.array_to_bytes, self.chain.bytes_to_bytes
        if not b2bs:
            return a2b.encode(chunk, self._a2b_spec)
        # A first codec that reads any buffer gets the chunk's own memory: no copy into bytes.
        serialise = a2b.encode_buffer if b2bs[0].encodes_buffers else a2b.encode
        data = b2bs[0].encode(cast(bytes, serialise(chunk, self._a2b_spec)), self._a2b_spec)
        for b2b in b2bs[1:]:
            data = b2b.encode(data, self._a2b_spec)
        return data

    @contextmanager
    def decoded(self, data: BytesLike) -> Iterator[ArrayBytes]:
        """:meth:`decode`, for a caller that copies the chunk out before the
        ``with`` block ends: the innermost bytes-to-bytes codec decodes into
        a scratch buffer of this thread (:mod:`zarrpy.core.scratch`)
        when it can, so no buffer is allocated per chunk. The chunk yielded
        may view that buffer: it is valid inside the block only."""
        b2bs = self.chain.bytes_to_bytes
        a2b = self.chain.array_to_bytes
        nbytes = a2b.compute_encoded_size(self._a2b_spec) if b2bs and a2b.decodes_buffers else None
        if not nbytes:
            yield self.decode(_as_bytes(data))
            return
        for b2b in reversed(b2bs[1:]):
            data = b2b.decode(_as_bytes(data), self._a2b_spec)
        with scratch(nbytes) as buf:
            if b2bs[0].decode_into(data, buf, self._a2b_spec):
                yield self._decode_array(buf)
                return
        yield self._decode_array(b2bs[0].decode(_as_bytes(data), self._a2b_spec))

    def decode_into(
        self, data: BytesLike, dest: np.ndarray, options: DecodeOptions = DEFAULT_OPTIONS
    ) -> bool:
        """Decode a chunk straight into ``dest`` (writable, of
        ``spec.shape`` and the in-memory dtype, maybe a view into a bigger
        array) without a chunk-sized buffer of its own: a contiguous
        ``dest`` of plain numbers gets the decompressor's output directly; a
        shard decodes each inner chunk into its part of ``dest`` (in
        parallel through ``options.map_fn``); strings of
        ``vlen-utf8`` are cast into ``dest`` from the decompressed bytes. True when
        done; on False ``dest`` may hold anything (the caller then decodes
        with :meth:`decoded` and copies the whole chunk over it)."""
        chain = self.chain
        if chain.array_to_array:
            return False
        if dest.shape != self.spec.shape or dest.dtype != self.spec.dtype.numpy:
            # Value/flag pairs of optional strings (zarrpy.pipeline.paired): only
            # an array-to-bytes codec that builds elements fills them.
            a2b = chain.array_to_bytes
            if not (is_paired_box(dest, self.spec.shape) and a2b.decodes_into_elements(self._a2b_spec)):
                return False
            for b2b in reversed(chain.bytes_to_bytes):
                data = b2b.decode(_as_bytes(data), self._a2b_spec)
            return a2b.decode_into(_as_bytes(data), self._a2b_spec, dest, options)
        compressor = self.single_compressor()
        if compressor is not None:  # the usual chain, worked out once: decompress into ``dest``
            if not (dest.flags.c_contiguous and dest.flags.writeable):
                return False
            return compressor.decode_into(data, dest.reshape(-1).view(np.uint8), self._a2b_spec)
        a2b, b2bs = chain.array_to_bytes, chain.bytes_to_bytes
        if not b2bs:
            return a2b.decode_into(data if a2b.decodes_buffers else _as_bytes(data), self._a2b_spec, dest, options)
        if a2b.decodes_into_elements(self._a2b_spec):
            # Elements built from the whole decoded bytes (vlen-utf8's strings):
            # decompress, then the codec fills ``dest`` (no chunk-sized copy).
            for b2b in reversed(b2bs):
                data = b2b.decode(_as_bytes(data), self._a2b_spec)
            return a2b.decode_into(_as_bytes(data), self._a2b_spec, dest)
        if not (dest.flags.c_contiguous and dest.flags.writeable and a2b.native_bytes(self._a2b_spec)):
            return False
        for b2b in reversed(b2bs[1:]):
            data = b2b.decode(_as_bytes(data), self._a2b_spec)
        return b2bs[0].decode_into(data, dest.reshape(-1).view(np.uint8), self._a2b_spec)

    def decode(self, data: bytes) -> ArrayBytes:
        """Decode stored bytes to a chunk of ``spec.shape``.

        Raises ChunkDecodeError (or ChecksumError) if ``data`` is corrupt or
        decodes to the wrong size.
        """
        for b2b in reversed(self.chain.bytes_to_bytes):
            data = b2b.decode(data, self._a2b_spec)
        return self._decode_array(data)

    def _decode_array(self, data: Any) -> ArrayBytes:
        """The array-to-bytes and array-to-array decoding of :meth:`decode`."""
        chunk = self.chain.array_to_bytes.decode(data, self._a2b_spec)
        _check_shape(chunk, self._a2b_spec, self.chain.array_to_bytes)
        for codec, spec in zip(reversed(self.chain.array_to_array), reversed(self._a2a_specs)):
            chunk = codec.decode(chunk, spec)
        _check_shape(chunk, self.spec, self.chain.array_to_bytes)
        return chunk

    def single_compressor(self) -> BytesToBytesCodec | None:
        """The compressor of a chain that is just ``bytes`` storing plain
        numbers as they are in memory and one bytes-to-bytes codec that can
        decode into a buffer (``decode_into``: zstd, blosc), else None. Its
        decoded bytes are the chunk's elements: decoding into a buffer and
        viewing it is the whole decode."""
        if self._single is None:
            chain = self.chain
            b2b = chain.bytes_to_bytes[0] if len(chain.bytes_to_bytes) == 1 else None
            plain = (
                b2b is not None and not chain.array_to_array and b2b.decodes_into_buffers
                and chain.array_to_bytes.native_bytes(self._a2b_spec)
            )
            self._single = (b2b if plain else None,)
        return self._single[0]

    def scratch_decoder(self, like: np.ndarray | None = None) -> ScratchDecoder:
        """For a chain of :meth:`single_compressor`: in a ``with`` block, a
        function decoding one stored chunk into this thread's scratch buffer
        and returning its elements (a view of the buffer, of ``spec.shape``),
        or None when the compressor refuses the frame (the caller then
        decodes the usual way, which raises the error). The elements are
        valid until the next call or the end of the block. The block gets
        None for any other chain. One buffer serves every chunk decoded in
        the block, taken on the first decode (a block that decodes straight
        into its output takes none); it starts where ``like`` (the array the
        elements are copied into) starts within its page, so the copies run
        at full speed (:func:`~zarrpy.core.aligned.page_offset`)."""
        return ScratchDecoder(self, like)

    @property
    def inner_reads_partially(self) -> bool:
        """For a chain holding chunks (:attr:`holds_chunks`): do its inner
        chunks read partially (uncompressed ``bytes``, nested shards)? Else
        an inner chunk is read whole for any part of it: compressed, or with
        a check that only a whole read makes (``crc32c``; see
        :func:`~zarrpy.codecs.partial.reads_partially`)."""
        inner = self.chain.array_to_bytes.inner_chunks()
        if inner is None:
            return False
        caps = [c.capabilities for c in inner.codecs.codecs]
        return all(c.partial_decode for c in caps) and not any(c.skips_checks for c in caps)

    @property
    def holds_chunks(self) -> bool:
        """True when a stored chunk holds chunks of its own, each with its own
        place in it (a shard: an array-to-bytes codec with inner chunks)."""
        return self.chain.array_to_bytes.inner_chunks() is not None

    @property
    def capabilities(self) -> CodecCapabilities:
        """Partial decoding pays off only when every codec reads partially;
        it skips checks when any codec's partial reads do. (Worked out once:
        codecs are immutable.)"""
        if self._capabilities is None:
            caps = [c.capabilities for c in self.chain.codecs]
            if not all(c.partial_decode for c in caps):
                self._capabilities = WHOLE_ONLY
            else:
                self._capabilities = PARTIAL_UNCHECKED if any(c.skips_checks for c in caps) else PARTIAL
        return self._capabilities

    def partial_decoder(self, read: ByteReader, options: DecodeOptions = DEFAULT_OPTIONS) -> ArrayPartialDecoder:
        """A decoder of selections of one stored chunk, composed bottom-up:
        ``read`` (the stored bytes) wrapped by each bytes-to-bytes codec, then
        the array-to-bytes codec, then each array-to-array codec (see
        :mod:`zarrpy.codecs.partial`). Always available; it reads only what it
        needs where :attr:`capabilities` says so, else decodes the whole chunk."""
        reader: ByteReader = read
        for b2b in reversed(self.chain.bytes_to_bytes):
            reader = b2b.partial_decoder(reader, self._a2b_spec)
        decoder = self.chain.array_to_bytes.partial_decoder(reader, self._a2b_spec, options)
        for codec, spec in zip(reversed(self.chain.array_to_array), reversed(self._a2a_specs)):
            decoder = codec.partial_decoder(decoder, spec)
        return decoder

    def update(self, old: bytes | None, writes: Sequence[ChunkWrite], *, keep_fill: bool = False) -> bytes | None:
        """The stored chunk after ``writes`` (see :meth:`ArrayToBytesCodec.update`);
        None when it ends up all fill and ``keep_fill`` is False.

        A chain of just an array-to-bytes codec hands the update to that codec
        (``sharding_indexed`` then rewrites only the inner chunks written);
        otherwise the chunk is decoded, merged and encoded whole."""
        a2b = self.chain.array_to_bytes
        if not self.chain.array_to_array and not self.chain.bytes_to_bytes:
            return a2b.update(old, writes, self._a2b_spec, keep_fill=keep_fill)
        chunk = merge_writes(self.decode, old, writes, self.spec, a2b.name)
        if not keep_fill and is_fill(chunk, self.spec):
            return None
        return self.encode(chunk)


def _as_bytes(data: BytesLike) -> bytes:
    """``data`` as ``bytes`` (a shard hands its inner chunks over as memoryviews:
    only ``decode_into`` takes those, ``decode`` wants bytes)."""
    return data if isinstance(data, bytes) else bytes(data)


class _SharedChains:
    """:class:`CodecChain` objects by the exact JSON of their ``codecs`` list
    (see :func:`chain_from_json`). Bounded (the oldest go first), thread-safe."""

    MAX_ENTRIES = 256

    def __init__(self) -> None:
        # (registry generation, marshalled codecs JSON) -> (chain, marshalled chain.to_json())
        self._entries: dict[tuple[int, bytes], tuple[CodecChain, bytes]] = {}
        self._lock = threading.Lock()

    def get(self, codecs: Sequence[Any]) -> CodecChain:
        try:
            # marshal takes JSON values only (a codec object in the list raises
            # ValueError: built afresh); version 2 writes equal values alike.
            key = (codec_generation(), marshal.dumps(tuple(codecs), 2))
        except ValueError:
            return CodecChain.from_json(codecs)
        found = self._entries.get(key)
        if found is not None and _stamp(found[0]) == found[1]:
            return found[0]
        chain = CodecChain.from_json(codecs)
        stamp = _stamp(chain)
        if stamp is not None:
            with self._lock:
                if len(self._entries) >= self.MAX_ENTRIES:
                    del self._entries[next(iter(self._entries))]
                self._entries[key] = (chain, stamp)
        return chain

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def _stamp(chain: CodecChain) -> bytes | None:
    """The chain's JSON as it is now (None: not plain JSON, not shared)."""
    try:
        return marshal.dumps(chain.to_json(), 2)
    except ValueError:
        return None


_shared_chains = _SharedChains()


def chain_from_json(codecs: Sequence[Any]) -> CodecChain:
    """:meth:`CodecChain.from_json`, built once per distinct ``codecs`` JSON
    and shared: arrays opened with the same codecs get the same chain.

    Codec objects are values, as zarr-python's frozen codecs are (no zarrpy
    code changes one in place). Every hit still checks that the shared
    chain's JSON is what it was when built, so a codec changed in place
    anyway is never handed to another array; a :func:`register_codec`
    call starts afresh (what a name means may have changed). A ``codecs``
    list holding codec objects (not JSON) is built anew each time.
    """
    return _shared_chains.get(codecs)


def _check_shape(chunk: ArrayBytes, spec: ChunkSpec, codec: Codec) -> None:
    if chunk.shape != spec.shape:
        raise ChunkDecodeError(
            f"codec {codec.name!r} decoded a chunk of shape {chunk.shape}, expected {spec.shape}"
        )


class ScratchDecoder:
    """The context manager of :meth:`BoundChain.scratch_decoder`."""

    __slots__ = ("bound", "like", "compressor", "_lease", "_buf", "_elements")

    def __init__(self, bound: BoundChain, like: np.ndarray | None):
        self.bound, self.like = bound, like
        self.compressor = bound.single_compressor()
        self._lease: ScratchLease | None = None
        self._buf: np.ndarray | None = None
        self._elements: np.ndarray | None = None

    def __enter__(self) -> Callable[[BytesLike], np.ndarray | None] | None:
        return None if self.compressor is None else self.decode

    def decode(self, data: BytesLike) -> np.ndarray | None:
        """Decode one stored chunk into the scratch buffer; its elements, or None (see above)."""
        if self._buf is None:  # the first decode takes the buffer
            spec = self.bound.spec
            dtype = spec.dtype.numpy
            self._lease = scratch(spec.size * dtype.itemsize, page_offset(self.like))
            self._buf = self._lease.__enter__()
            self._elements = self._buf.view(dtype).reshape(spec.shape)
        assert self.compressor is not None and self._elements is not None
        return self._elements if self.compressor.decode_into(data, self._buf, self.bound._a2b_spec) else None

    def __exit__(self, *exc: object) -> None:
        lease, self._lease, self._buf, self._elements = self._lease, None, None, None
        if lease is not None:
            lease.__exit__(None, None, None)


__all__ = ["BoundChain", "CodecChain", "ScratchDecoder", "chain_from_json"]
