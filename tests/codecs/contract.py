"""The behaviour every zarrpy codec must have, as a reusable test class.

Subclass :class:`CodecContract` in a ``test_*.py`` module (the class name must
start with ``Test``; import it as ``from tests.codecs.contract import
CodecContract``: ``tests/codecs`` has no ``__init__.py``) and set:

- ``codec_class``: the codec class under test (the coverage test,
  ``test_contract_coverage.py``, checks that every registered class has one);
- ``configs``: V3 ``configuration`` objects (None: absent); each builds one
  codec through :meth:`CodecContract.make`;
- ``golden``: at least one :class:`Golden` vector, its bytes taken from an
  independent implementation where one exists;

and, where the defaults do not fit, override

- :meth:`~CodecContract.specs`: the chunk specs a codec takes (default: the
  fixed ``dtypes`` over small shapes, 0-d and 0-size ones included);
- :meth:`~CodecContract.elements`: chunks of a spec's data type;
- :meth:`~CodecContract.chain_for`: the codecs needed around the one under
  test to make a chain (default: ``bytes`` / a vlen codec as serializer);
- :meth:`~CodecContract.expected_round_trip`: what decoding gives back for a
  lossy codec (default: the input, bit for bit);
- :meth:`~CodecContract.expects_partial_decode` and
  :meth:`~CodecContract.large_case`: whether a chain of the codec reads less
  than the whole value for a small selection, and the chunk to show it on;
- ``v2_class``: the class the registry finds for ``v2_id`` (default
  ``codec_class``; another one where a native codec owns the id).

What is checked: configuration and JSON round trips, bad configurations,
the V2 form, data round trips (hypothesis), partial decoding against full
decoding, bytes read by partial decoders, golden encoded bytes, and
``update`` against encoding the merged chunk.
"""

from __future__ import annotations

import json
import pickle
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from zarrpy.codecs.abc import (
    ArrayToArrayCodec,
    ArrayToBytesCodec,
    ChunkSpec,
    Codec,
)
from zarrpy.codecs.bytes import BytesCodec
from zarrpy.codecs.chain import BoundChain, CodecChain
from zarrpy.codecs.fill import is_fill
from zarrpy.codecs.merge import ChunkWrite
from zarrpy.codecs.partial import BytesReader, RangeReader, full_selection, selection_shape
from zarrpy.codecs.registry import (
    codec_class_for_v2_id,
    codec_from_json,
    get_codec_class,
)
from zarrpy.codecs.vlen_v2 import VlenBytesCodec, VlenUtf8Codec
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.byte_range import slice_bytes
from zarrpy.core.byte_reader import ByteReader
from zarrpy.core.dtypes import DataType
from zarrpy.errors import CodecError

MAX_EXAMPLES = 25
SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    # one test function, run by each subclass: the executors differ by design
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.differing_executors],
)

DEFAULT_DTYPES: tuple[str, ...] = ("bool", "uint8", "int16", "int64", "float16", "float32", "float64", "complex128")


@dataclass(frozen=True)
class Golden:
    """One golden vector: the codec of ``config`` in :meth:`CodecContract.chain_for`
    encodes ``values`` (a nested list for fixed types, a flat list of str /
    bytes for variable ones) of ``dtype`` and ``shape`` to ``hex``.

    ``ignore`` lists byte positions not compared (a gzip header's mtime and OS).
    """

    config: Any
    dtype: str
    shape: tuple[int, ...]
    values: Any
    hex: str
    source: str
    ignore: tuple[int, ...] = ()


# -- data ----------------------------------------------------------------------


def spec_of(dtype: str, shape: Sequence[int], fill: Any = None) -> ChunkSpec:
    data_type = DataType.from_json(dtype)
    return ChunkSpec(tuple(shape), data_type, data_type.default_fill() if fill is None else data_type.coerce_fill(fill))


def chunk_of(values: Any, spec: ChunkSpec) -> ArrayBytes:
    """A chunk of ``spec`` holding ``values`` (see :class:`Golden`)."""
    if not spec.dtype.is_variable:
        return ArrayBytes.from_array(np.array(values, dtype=spec.dtype.numpy).reshape(spec.shape))
    if spec.dtype.is_string:
        return ArrayBytes.from_elements(np.array(list(values), dtype=np.dtypes.StringDType()).reshape(spec.shape))
    return ArrayBytes.from_bytes_list([bytes(v) for v in values], spec.shape)


def assert_same(actual: ArrayBytes | None, expected: ArrayBytes) -> None:
    """Same shape and every element's bits (fixed) or bytes (variable)."""
    assert actual is not None, "got None for an existing chunk"
    assert tuple(actual.shape) == tuple(expected.shape), f"shape {actual.shape} != {expected.shape}"
    if expected.is_fixed:
        assert actual.is_fixed, f"variable chunk {actual!r}, expected a fixed one"
        assert isinstance(actual.array, np.ndarray), f"{type(actual.array)} is not a numpy array"
        a, e = actual.array, np.asarray(expected.array)
        assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(e).tobytes(), f"bits differ:\n{a!r}\n!=\n{e!r}"
    else:
        assert not actual.is_fixed, f"fixed chunk {actual!r}, expected a variable one"
        assert actual.to_bytes_list() == expected.to_bytes_list()


def as_numpy(chunk: ArrayBytes, spec: ChunkSpec) -> np.ndarray:
    """A writable numpy copy: the array, or an object array of bytes."""
    if chunk.is_fixed:
        return np.array(chunk.array, copy=True)
    out = np.empty(chunk.size, dtype=object)
    out[:] = chunk.to_bytes_list()
    return out.reshape(chunk.shape)


def from_numpy(arr: np.ndarray, spec: ChunkSpec) -> ArrayBytes:
    if arr.dtype.kind == "O":
        return ArrayBytes.from_bytes_list(arr.reshape(-1).tolist(), arr.shape)
    return ArrayBytes.from_array(np.array(arr, copy=True, order="C"))  # ascontiguousarray makes 0-d 1-d


def fill_numpy(spec: ChunkSpec, shape: Sequence[int]) -> np.ndarray:
    """An all-fill block of ``shape`` (independent of zarrpy.codecs.fill)."""
    if spec.dtype.is_variable:
        fill = spec.fill_value
        fill = fill.encode("utf-8") if isinstance(fill, str) else bytes(fill)
        out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=object)
        out[:] = [fill] * out.size
        return out.reshape(tuple(shape))
    return np.full(tuple(shape), spec.fill_value, dtype=spec.dtype.numpy)


def to_ix(selection: Sequence[Any], shape: Sequence[int]) -> Any:
    parts = [
        np.arange(*s.indices(n), dtype=np.int64) if isinstance(s, slice) else np.asarray(s, dtype=np.int64)
        for s, n in zip(selection, shape)
    ]
    return np.ix_(*parts) if parts else ()


@st.composite
def dim_selections(draw: Any, n: int) -> Any:
    """A slice with a positive step, or a 1-D int array (sorted or not, repeats allowed)."""
    if n == 0 or draw(st.booleans()):
        start = draw(st.integers(0, n))
        stop = draw(st.integers(start, n))
        return slice(start, stop, draw(st.integers(1, 3)))
    idx = draw(st.lists(st.integers(0, n - 1), max_size=6))
    if draw(st.booleans()):
        idx = sorted(set(idx))
    return np.array(idx, dtype=np.int64)


def selections(shape: Sequence[int]) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.tuples(*(dim_selections(n) for n in shape))


class CountingReader(ByteReader):
    """A ByteReader over bytes that counts the bytes it hands out."""

    def __init__(self, value: bytes | None):
        self.value = value
        self.nbytes = 0

    def _get(self, request: Any) -> bytes | None:
        if self.value is None:
            return None
        out = slice_bytes(self.value, request)
        self.nbytes += len(out)
        return out

    def __call__(self, request: Any = None) -> bytes | None:
        return self._get(request)

    def read_many(self, requests: Sequence[Any]) -> list[bytes | None]:
        return [self._get(r) for r in requests]


@st.composite
def cases(draw: Any, contract: CodecContract) -> tuple[Codec, ChunkSpec, ArrayBytes]:
    """A codec of ``contract``, a spec it takes and a chunk of that spec."""
    codec = draw(st.sampled_from(contract.codecs()))
    spec = draw(contract.specs(codec))
    return codec, spec, draw(contract.elements(spec, spec.shape))


@st.composite
def chunk_writes(draw: Any, contract: CodecContract, spec: ChunkSpec) -> list[ChunkWrite]:
    """1-3 writes into a chunk of ``spec``: whole or orthogonal selections,
    blocks of data or of the fill value."""
    writes = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 4)) == 0:
            sel: tuple[Any, ...] = full_selection(spec.shape)
        else:
            sel = draw(selections(spec.shape))
        shape = selection_shape(sel, spec.shape)
        if draw(st.booleans()):
            block = from_numpy(fill_numpy(spec, shape), spec)
        else:
            block = draw(contract.elements(spec, shape))
        writes.append(ChunkWrite(sel, block))
    return writes


# -- the contract --------------------------------------------------------------


class CodecContract:
    codec_class: ClassVar[type[Codec]]
    configs: ClassVar[list[Any]] = [None]
    golden: ClassVar[list[Golden]] = []
    dtypes: ClassVar[tuple[str, ...]] = DEFAULT_DTYPES
    max_dims: ClassVar[int] = 3
    min_side: ClassVar[int] = 0
    """1 for codecs that cannot take a chunk of no elements (0-size shapes)."""
    v2_class: ClassVar[type[Codec] | None] = None
    keeps_fill: ClassVar[bool] = True
    """``update(..., keep_fill=True)`` stores an all-fill chunk (sharding never does)."""
    deterministic_encode: ClassVar[bool] = True
    """False for codecs whose bytes for equal input may differ between calls
    (multi-threaded blosc stores its blocks in the order they finish); their
    encodings are compared by what they decode to."""

    # -- hooks -----------------------------------------------------------------
    def make(self, config: Any) -> Codec:
        return self.codec_class.from_config(config)

    def codecs(self) -> list[Codec]:
        return [self.make(c) for c in self.configs]

    def specs(self, codec: Codec) -> st.SearchStrategy[ChunkSpec]:
        """Chunk specs ``codec`` takes: shapes with 0..``max_dims`` dims, sides ``min_side``..6."""
        shapes = hnp.array_shapes(min_dims=0, max_dims=self.max_dims, min_side=self.min_side, max_side=6)
        return st.builds(spec_of, st.sampled_from(self.dtypes), shapes)

    def elements(self, spec: ChunkSpec, shape: Sequence[int]) -> st.SearchStrategy[ArrayBytes]:
        """Chunks of ``spec``'s data type and ``shape`` (every bit pattern for numbers)."""
        shape = tuple(shape)
        if not spec.dtype.is_variable:
            return hnp.arrays(spec.dtype.numpy, shape).map(ArrayBytes.from_array)
        n = int(np.prod(shape, dtype=np.int64))
        if spec.dtype.is_string:
            items = st.lists(st.text(max_size=8), min_size=n, max_size=n)
            return items.map(lambda xs: ArrayBytes.from_elements(np.array(xs, dtype=np.dtypes.StringDType()).reshape(shape)))
        return st.lists(st.binary(max_size=8), min_size=n, max_size=n).map(lambda xs: ArrayBytes.from_bytes_list(xs, shape))

    def chain_for(self, codec: Codec, spec: ChunkSpec) -> list[Codec]:
        """The chain that runs ``codec`` on chunks of ``spec``."""
        if isinstance(codec, ArrayToBytesCodec):
            return [codec]
        if spec.dtype.is_variable:
            serializer: Codec = VlenUtf8Codec() if spec.dtype.is_string else VlenBytesCodec()
        else:
            serializer = BytesCodec("little")
        return [codec, serializer] if isinstance(codec, ArrayToArrayCodec) else [serializer, codec]

    def expected_round_trip(self, codec: Codec, spec: ChunkSpec, chunk: ArrayBytes) -> ArrayBytes:
        """What decoding the encoded ``chunk`` gives (lossy codecs override)."""
        return chunk

    def expects_partial_decode(self, codec: Codec) -> bool:
        """Whether the chain of :meth:`large_case` reads partially (capabilities)."""
        return False

    def large_case(self, codec: Codec) -> tuple[ChunkSpec, ArrayBytes, tuple[Any, ...]]:
        """A chunk large enough that a small selection of it is cheap to read."""
        spec = spec_of("uint16", (64, 64))
        data = (np.arange(64 * 64, dtype=np.uint16) * 7).reshape(64, 64)
        return spec, ArrayBytes.from_array(data), (slice(3, 5), np.array([40, 10, 11]))

    def from_v2(self, codec: Codec, v2: dict[str, Any]) -> Codec:
        """Read the V2 form back (blosc passes the item size V2 leaves out)."""
        return type(codec).from_v2_config(v2)

    def expected_from_v2(self, codec: Codec) -> Codec:
        return codec

    def bad_config(self, codec: Codec) -> dict[str, Any]:
        return {**(codec.to_config() or {}), "no_such_key": 1}

    # -- helpers ---------------------------------------------------------------
    def bind(self, codec: Codec, spec: ChunkSpec) -> BoundChain:
        return CodecChain(self.chain_for(codec, spec)).bind(spec)

    def cases(self) -> st.SearchStrategy[tuple[Codec, ChunkSpec, ArrayBytes]]:
        return cases(self)

    # -- 1. configuration --------------------------------------------------------
    def test_codecs_are_registered_instances(self) -> None:
        codecs = self.codecs()
        assert codecs, "a CodecContract needs at least one configuration"
        for codec in codecs:
            assert type(codec) is self.codec_class
            assert get_codec_class(codec.name) is self.codec_class

    def test_config_round_trip(self) -> None:
        for codec in self.codecs():
            config = codec.to_config()
            again = type(codec).from_config(config)
            assert again == codec and hash(again) == hash(codec)
            assert again.to_config() == config
            doc = codec.to_json()
            assert doc["name"] == codec.name
            if config is None:
                assert doc == {"name": codec.name}
            else:
                assert doc == {"name": codec.name, "configuration": config}
            doc = json.loads(json.dumps(doc))  # plain JSON
            built = codec_from_json(doc)
            assert type(built) is type(codec) and built == codec
            assert built.to_json() == doc
            assert pickle.loads(pickle.dumps(codec)) == codec

    def test_bad_config_names_the_codec(self) -> None:
        for codec in self.codecs():
            with pytest.raises(CodecError, match=re.escape(codec.name)):
                type(codec).from_config(self.bad_config(codec))
            with pytest.raises(CodecError, match=re.escape(codec.name)):
                codec_from_json({"name": codec.name, "configuration": self.bad_config(codec)})

    # -- 2. V2 form -----------------------------------------------------------------
    def test_v2_form(self) -> None:
        for codec in self.codecs():
            if codec.v2_id is None:
                with pytest.raises(CodecError):
                    codec.to_v2_config()
                continue
            v2 = codec.to_v2_config()
            assert v2["id"] == codec.v2_id
            assert json.loads(json.dumps(v2)) == v2
            assert self.from_v2(codec, v2) == self.expected_from_v2(codec)
            assert codec_class_for_v2_id(codec.v2_id) is (self.v2_class or self.codec_class)

    # -- 3. data round trip -------------------------------------------------------------
    @SETTINGS
    @given(data=st.data())
    def test_round_trip(self, data: st.DataObject) -> None:
        codec, spec, chunk = data.draw(self.cases())
        bound = self.bind(codec, spec)
        encoded = bound.encode(chunk)
        assert isinstance(encoded, bytes)
        if bound.encoded_size is not None:
            assert bound.encoded_size == len(encoded)
        decoded = bound.decode(encoded)
        expected = self.expected_round_trip(codec, spec, chunk)
        assert_same(decoded, expected)
        if expected is chunk:  # lossless: encoding is a function of the data
            if self.deterministic_encode:
                assert bound.encode(decoded) == encoded
            else:  # the same elements again, whatever order the blocks were stored in
                assert_same(bound.decode(bound.encode(decoded)), expected)

    # -- 4. partial decoding -----------------------------------------------------------
    @SETTINGS
    @given(data=st.data())
    def test_partial_decode_equals_full_decode(self, data: st.DataObject) -> None:
        codec, spec, chunk = data.draw(self.cases())
        bound = self.bind(codec, spec)
        encoded = bound.encode(chunk)
        full = bound.decode(encoded)
        sels = data.draw(st.lists(selections(spec.shape), min_size=1, max_size=3))
        for sel in sels:
            got = bound.partial_decoder(BytesReader(encoded)).decode_selection(sel)
            assert_same(got, full.select(sel))
            assert tuple(got.shape) == selection_shape(sel, spec.shape)
        many = bound.partial_decoder(BytesReader(encoded)).decode_selections(sels)
        assert len(many) == len(sels)
        for got, sel in zip(many, sels):
            assert_same(got, full.select(sel))
        whole = bound.partial_decoder(BytesReader(encoded)).decode_selection(full_selection(spec.shape))
        assert_same(whole, full)
        # the value as a byte range of a larger one (an inner chunk of a shard)
        inner = RangeReader(BytesReader(b"\xa5" * 7 + encoded + b"\x5a" * 5), 7, len(encoded))
        for got, sel in zip(bound.partial_decoder(inner).decode_selections(sels), sels):
            assert_same(got, full.select(sel))

    def test_missing_value_decodes_to_none(self) -> None:
        for codec in self.codecs():
            spec, _, sel = self.large_case(codec)
            bound = self.bind(codec, spec)
            assert bound.partial_decoder(BytesReader(None)).decode_selection(sel) is None
            assert bound.partial_decoder(BytesReader(None)).decode_selections([sel, full_selection(spec.shape)]) == [None, None]

    def test_partial_reads_read_less(self) -> None:
        for codec in self.codecs():
            spec, chunk, sel = self.large_case(codec)
            bound = self.bind(codec, spec)
            expected = self.expects_partial_decode(codec)
            assert bound.capabilities.partial_decode is expected, f"{codec!r}: capabilities {bound.capabilities}"
            encoded = bound.encode(chunk)
            reader = CountingReader(encoded)
            got = bound.partial_decoder(reader).decode_selection(sel)
            assert_same(got, bound.decode(encoded).select(sel))
            if expected and spec.size > 1:  # a one-element chunk has nothing smaller to read
                assert 0 < reader.nbytes < len(encoded), f"{codec!r} read {reader.nbytes} of {len(encoded)} bytes"
            else:
                assert reader.nbytes >= len(encoded)

    # -- 5. golden bytes ----------------------------------------------------------------
    def test_golden_bytes(self) -> None:
        assert self.golden, "a CodecContract needs at least one golden vector"
        for g in self.golden:
            codec = self.make(g.config)
            spec = spec_of(g.dtype, g.shape)
            bound = self.bind(codec, spec)
            chunk = chunk_of(g.values, spec)
            expected = bytes.fromhex(g.hex)
            encoded = bound.encode(chunk)
            assert len(encoded) == len(expected), f"{g.source}: {encoded.hex()} != {g.hex}"
            mask = [i for i in range(len(expected)) if i not in g.ignore]
            assert bytes(encoded[i] for i in mask) == bytes(expected[i] for i in mask), (
                f"{g.source}: {encoded.hex()} != {g.hex}"
            )
            assert_same(bound.decode(expected), self.expected_round_trip(codec, spec, chunk))

    # -- 6. update -------------------------------------------------------------------------
    @SETTINGS
    @given(data=st.data())
    def test_update_equals_encode_of_merged(self, data: st.DataObject) -> None:
        codec, spec, chunk = data.draw(self.cases())
        bound = self.bind(codec, spec)
        old = None if data.draw(st.booleans()) else bound.encode(chunk)
        writes = data.draw(chunk_writes(self, spec))
        merged = fill_numpy(spec, spec.shape) if old is None else as_numpy(bound.decode(old), spec)
        for w in writes:
            block = as_numpy(w.block, spec)
            if spec.shape == ():  # an object 0-d array would be stored as one element
                merged[()] = block[()]
            else:
                merged[to_ix(w.selection, spec.shape)] = block
        merged_chunk = from_numpy(merged, spec)
        expected = None if is_fill(merged_chunk, spec) else bound.encode(merged_chunk)
        if isinstance(codec, ArrayToBytesCodec):
            got = codec.update(old, writes, spec)
        else:
            got = bound.update(old, writes)
        self.assert_same_stored(bound, got, expected)

    def assert_same_stored(self, bound: BoundChain, got: bytes | None, expected: bytes | None) -> None:
        """Both None, or both stored chunks: equal bytes (when the codec's
        encoding is deterministic) and equal decoded elements."""
        assert (got is None) == (expected is None), (got, expected)
        if got is None or expected is None:
            return
        if self.deterministic_encode:
            assert got == expected
        assert_same(bound.decode(got), bound.decode(expected))

    def test_update_with_fill_everywhere_is_none(self) -> None:
        for codec in self.codecs():
            spec, chunk, _ = self.large_case(codec)
            bound = self.bind(codec, spec)
            old = bound.encode(chunk)
            write = ChunkWrite(full_selection(spec.shape), from_numpy(fill_numpy(spec, spec.shape), spec))
            if isinstance(codec, ArrayToBytesCodec):
                assert codec.update(old, [write], spec) is None
                kept = codec.update(None, [write], spec, keep_fill=True)
                self.assert_same_stored(bound, kept, bound.encode(write.block) if self.keeps_fill else None)
            else:
                assert bound.update(old, [write]) is None
                self.assert_same_stored(bound, bound.update(None, [write], keep_fill=True), bound.encode(write.block))


__all__ = [
    "CodecContract",
    "CountingReader",
    "Golden",
    "assert_same",
    "chunk_of",
    "selections",
    "spec_of",
]
