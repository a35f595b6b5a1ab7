"""Encoding without the ``tobytes`` copy: the ``bytes`` codec hands a
compressor that reads buffers (``encodes_buffers``) the chunk's own memory
(:meth:`ArrayToBytesCodec.encode_buffer`). Every chain must store exactly
what encoding through ``bytes`` objects stores, and a codec that did not
declare it still gets ``bytes``."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrpy.codecs.abc import BytesToBytesCodec, ChunkSpec
from zarrpy.codecs.bytes import BytesCodec
from zarrpy.codecs.chain import CodecChain
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.dtypes import DataType

SETTINGS = settings(max_examples=80, deadline=None, database=None)

B2B = {
    "zstd": {"name": "zstd", "configuration": {"level": 1, "checksum": True}},
    "gzip": {"name": "gzip", "configuration": {"level": 1}},
    "blosc": {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}},
    "crc32c": {"name": "crc32c"},
}
DTYPES = ["uint8", "int16", "uint32", "float64", "bool", "complex64", "datetime64[s]", "bfloat16"]


def spec(shape: tuple[int, ...], dtype: str) -> ChunkSpec:
    data_type = DataType.from_json(dtype) if dtype == "bfloat16" else DataType.from_numpy(np.dtype(dtype))
    return ChunkSpec(shape, data_type, data_type.coerce_fill(0))


def values(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    numpy_dtype = spec(shape, dtype).dtype.numpy
    raw = np.random.default_rng(seed).integers(0, 200, size=int(np.prod(shape)) * numpy_dtype.itemsize, dtype=np.uint8)
    if numpy_dtype.kind == "b":
        raw = raw % 2
    return raw.view(numpy_dtype).reshape(shape)


def by_bytes_objects(codecs: list[dict[str, Any]], chunk: ArrayBytes, chunk_spec: ChunkSpec) -> bytes:
    """The chain's encoding with ``bytes`` between every two codecs (the form before ``encode_buffer``)."""
    chain = CodecChain.from_json(codecs)
    data = chain.array_to_bytes.encode(chunk, chunk_spec)
    for b2b in chain.bytes_to_bytes:
        data = b2b.encode(bytes(data), chunk_spec)
    return data


@SETTINGS
@given(
    dtype=st.sampled_from(DTYPES),
    shape=st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple),
    endian=st.sampled_from(["little", "big"]),
    b2bs=st.lists(st.sampled_from(sorted(B2B)), min_size=1, max_size=2),
    strided=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_chain_encodes_the_same_bytes_as_through_bytes_objects(dtype, shape, endian, b2bs, strided, seed):
    chunk_spec = spec(shape, dtype)
    source = values(shape, dtype, seed)
    if strided and source.ndim:  # a chunk cut out of a larger block (from_array copies it to C order)
        source = np.repeat(source, 2, axis=-1)[..., ::2]
    codecs = [{"name": "bytes", "configuration": {"endian": endian}}, *(B2B[name] for name in b2bs)]
    chunk = ArrayBytes.from_array(source)
    encoded = CodecChain.from_json(codecs).bind(chunk_spec).encode(chunk)
    assert isinstance(encoded, bytes)
    assert encoded == by_bytes_objects(codecs, chunk, chunk_spec)
    back = CodecChain.from_json(codecs).bind(chunk_spec).decode(encoded)
    as_bytes = np.ascontiguousarray(source).reshape(-1).view(np.uint8)
    np.testing.assert_array_equal(back.array.reshape(-1).view(np.uint8), as_bytes)


def test_bytes_codec_hands_over_the_chunks_memory_when_it_is_stored_as_is():
    chunk_spec = spec((4, 5), "uint16")
    chunk = ArrayBytes.from_array(values((4, 5), "uint16", 1))
    view = BytesCodec("little").encode_buffer(chunk, chunk_spec)
    assert isinstance(view, np.ndarray) and view.dtype == np.uint8 and view.size == 40
    assert np.shares_memory(view, chunk.array)  # no copy
    assert bytes(view) == BytesCodec("little").encode(chunk, chunk_spec)


@pytest.mark.parametrize("dtype, endian", [("uint16", "big"), ("bfloat16", "little")])
def test_bytes_codec_copies_when_the_stored_form_differs(dtype, endian):
    """A byte swap, or a type whose family shapes its stored elements, makes new bytes."""
    chunk_spec = spec((3, 3), dtype)
    chunk = ArrayBytes.from_array(values((3, 3), dtype, 2))
    out = BytesCodec(endian).encode_buffer(chunk, chunk_spec)
    assert isinstance(out, bytes)
    assert out == BytesCodec(endian).encode(chunk, chunk_spec)


class _Recording(BytesToBytesCodec):
    """A third-party style codec that never said it takes buffers."""

    name = "test.recording-b2b"
    __slots__ = ()
    seen: ClassVar[list[type]] = []

    @classmethod
    def from_config(cls, config):
        return cls()

    def to_config(self):
        return {}

    def encode(self, data, spec):
        self.seen.append(type(data))
        return bytes(data)

    def decode(self, data, spec):
        return data


def test_a_codec_that_did_not_declare_it_still_gets_bytes():
    _Recording.seen.clear()
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}, _Recording(), B2B["zstd"]]
    chunk = ArrayBytes.from_array(np.arange(8, dtype="int32"))
    CodecChain.from_json(codecs).bind(spec((8,), "int32")).encode(chunk)
    assert _Recording.seen == [bytes]
