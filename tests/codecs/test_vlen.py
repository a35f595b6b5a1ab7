"""zarrs.vlen codec: configuration, the notes' worked example, round trips, partial reads, corrupt input."""

from __future__ import annotations

import doctest
import struct

import numpy as np
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy.codecs.vlen as vlen_module
from tests.codecs._vlen_helpers import (
    BYTES,
    STRING,
    assert_valid,
    items,
    items_of,
    spec_of,
    strings,
    variable_chunk,
)
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.byte_range import slice_bytes
from zarrpy.core.byte_reader import ByteReader
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.registry import codec_from_json
from zarrpy.codecs.vlen import VlenCodec
from zarrpy.core.dtypes import DataType
from zarrpy.errors import BoundsCheckError, ChecksumError, ChunkDecodeError, CodecError

DEFAULT_CONFIG = {
    "data_codecs": [{"name": "bytes"}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "index_data_type": "uint64",
    "index_location": "start",
}
LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": True}}
GZIP = {"name": "gzip", "configuration": {"level": 6}}
BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 1, "blocksize": 0}}
CRC = {"name": "crc32c"}

INDEX_CHAINS = [[LE], [BE], [LE, ZSTD], [BE, dict(BLOSC, configuration=dict(BLOSC["configuration"], typesize=8))], [LE, CRC]]
DATA_CHAINS = [[{"name": "bytes"}], [{"name": "bytes"}, GZIP], [{"name": "bytes"}, ZSTD], [{"name": "bytes"}, BLOSC], [{"name": "bytes"}, CRC]]

# The notes' worked example, §10: ["ab", "", "c"], uint32 index, both chains just bytes.
EXAMPLE = ["ab", "", "c"]
EXAMPLE_START = bytes.fromhex("1000000000000000" "00000000020000000200000003000000" "616263")
EXAMPLE_END = bytes.fromhex("616263" "00000000020000000200000003000000" "1000000000000000")


def vlen(**config) -> VlenCodec:
    return VlenCodec.from_config(config)


def encode(codec: VlenCodec, values, spec=None) -> bytes:
    return codec.encode(variable_chunk(values), spec or spec_of(values))


class CountingReader(ByteReader):
    """A ByteReader over one value that counts requests and bytes returned."""

    def __init__(self, value: bytes | None):
        self.value = value
        self.requests = []
        self.nbytes = 0

    def __call__(self, request):
        self.requests.append(request)
        if self.value is None:
            return None
        out = slice_bytes(self.value, request)
        self.nbytes += len(out)
        return out


def test_module_doctests():
    assert doctest.testmod(vlen_module).failed == 0


# -- configuration -------------------------------------------------------


@pytest.mark.parametrize("index_data_type", ["uint32", "uint64"])
@pytest.mark.parametrize("index_location", ["start", "end"])
@pytest.mark.parametrize("index_codecs", INDEX_CHAINS[:3])
@pytest.mark.parametrize("data_codecs", DATA_CHAINS[:3])
def test_config_round_trip(index_data_type, index_location, index_codecs, data_codecs):
    config = {
        "data_codecs": data_codecs,
        "index_codecs": index_codecs,
        "index_data_type": index_data_type,
        "index_location": index_location,
    }
    codec = codec_from_json({"name": "zarrs.vlen", "configuration": config})
    assert isinstance(codec, VlenCodec)
    assert codec.to_json() == {"name": "zarrs.vlen", "configuration": config}
    assert list(codec.to_config()) == ["data_codecs", "index_codecs", "index_data_type", "index_location"]
    assert VlenCodec.from_config(codec.to_config()) == codec


@pytest.mark.parametrize("name", ["zarrs.vlen", "vlen", "https://codec.zarrs.dev/array_to_bytes/vlen"])
def test_names_read_and_zarrs_vlen_written(name):
    codec = codec_from_json({"name": name, "configuration": DEFAULT_CONFIG})
    assert isinstance(codec, VlenCodec)
    assert codec.to_json()["name"] == "zarrs.vlen"


def test_defaults_fill_every_key():
    assert VlenCodec().to_config() == DEFAULT_CONFIG
    assert codec_from_json({"name": "zarrs.vlen"}).to_config() == DEFAULT_CONFIG
    assert codec_from_json({"name": "zarrs.vlen", "configuration": {}}).to_config() == DEFAULT_CONFIG


def test_draft_v0_0_without_index_location_means_start():
    draft = {k: v for k, v in DEFAULT_CONFIG.items() if k != "index_location"}
    draft["index_data_type"] = "uint32"
    codec = codec_from_json({"name": "vlen", "configuration": draft})
    assert codec.index_location == "start"
    assert codec.to_config() == dict(draft, index_location="start")


def test_constructor_takes_codec_chains():
    chain = CodecChain.from_json([{"name": "bytes"}, GZIP])
    assert VlenCodec(data_codecs=chain).data_codecs is chain


@pytest.mark.parametrize(
    "config, field",
    [
        ({"index_data_type": "uint16"}, "index_data_type"),
        ({"index_data_type": "int64"}, "index_data_type"),
        ({"index_data_type": None}, "index_data_type"),
        ({"index_location": "middle"}, "index_location"),
        ({"index_location": None}, "index_location"),
        ({"data_codecs": "bytes"}, "data_codecs"),
        ({"data_codecs": {"name": "bytes"}}, "data_codecs"),
        ({"data_codecs": 3}, "data_codecs"),
        ({"data_codecs": []}, "data_codecs"),
        ({"data_codecs": [ZSTD]}, "data_codecs"),
        ({"data_codecs": [{"name": "bytes"}, {"name": "bytes"}]}, "data_codecs"),
        ({"data_codecs": [{"name": "no-such-codec"}]}, "data_codecs"),
        ({"data_codecs": [{"name": "vlen-utf8"}]}, "data_codecs"),
        ({"data_codecs": [{"name": "zarrs.vlen"}]}, "data_codecs"),
        ({"index_codecs": [{"name": "bytes"}]}, "index_codecs"),  # uint64 needs an endian
        ({"index_codecs": [{"name": "bytes", "configuration": {"endian": "middle"}}]}, "index_codecs"),
        ({"index_codecs": [ZSTD, LE]}, "index_codecs"),
        ({"index_codecs": None}, "index_codecs"),
        ({"index_location": "end", "extra": 1}, "extra"),
    ],
)
def test_bad_config(config, field):
    with pytest.raises(CodecError, match="zarrs.vlen") as info:
        VlenCodec.from_config(config)
    assert field in str(info.value)


def test_configuration_must_be_an_object():
    with pytest.raises(CodecError, match="zarrs.vlen.*configuration"):
        VlenCodec.from_config([DEFAULT_CONFIG])


def test_index_codecs_without_endian_are_fine_for_one_byte_types_only():
    # uint32 still needs an endian: the bytes codec refuses otherwise.
    with pytest.raises(CodecError, match="index_codecs"):
        vlen(index_data_type="uint32", index_codecs=[{"name": "bytes"}])


def test_resolve_requires_a_variable_length_type():
    codec = VlenCodec()
    for dtype in (STRING, BYTES):
        spec = ChunkSpec((2, 3), dtype, dtype.default_fill())
        assert codec.resolve(spec) == spec
    with pytest.raises(CodecError, match="zarrs.vlen.*fixed-size"):
        codec.resolve(ChunkSpec((3,), DataType.from_json("uint8"), 0))


def test_evolve_fills_blosc_typesize_per_part():
    untyped = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": "shuffle"}}
    codec = vlen(index_codecs=[LE, untyped], data_codecs=[{"name": "bytes"}, untyped])
    evolved = codec.evolve(spec_of(EXAMPLE))
    assert evolved.to_config()["index_codecs"][1]["configuration"]["typesize"] == 8
    assert evolved.to_config()["data_codecs"][1]["configuration"]["typesize"] == 1
    assert VlenCodec().evolve(spec_of(EXAMPLE)) == VlenCodec()


# -- the layout, byte for byte -------------------------------------------


@pytest.mark.parametrize("location, expected", [("start", EXAMPLE_START), ("end", EXAMPLE_END)])
def test_worked_example(location, expected):
    codec = vlen(index_data_type="uint32", index_location=location)
    assert encode(codec, EXAMPLE) == expected
    decoded = codec.decode(expected, spec_of(EXAMPLE))
    assert items_of(decoded) == [b"ab", b"", b"c"]
    assert_valid(decoded)


def test_uint64_index_layout():
    out = encode(VlenCodec(), EXAMPLE)
    index = np.array([0, 2, 2, 3], dtype="<u8").tobytes()
    assert out == struct.pack("<Q", 32) + index + b"abc"


def test_big_endian_index_codec_is_honoured():
    out = encode(vlen(index_codecs=[BE], index_data_type="uint32"), EXAMPLE)
    assert out == struct.pack("<Q", 16) + np.array([0, 2, 2, 3], dtype=">u4").tobytes() + b"abc"


@pytest.mark.parametrize("location", ["start", "end"])
def test_no_data_means_empty_data_part_and_no_data_codecs(location):
    codec = vlen(index_location=location, data_codecs=[{"name": "bytes"}, ZSTD])
    values = ["", "", ""]
    out = encode(codec, values)
    assert len(out) == 8 + 4 * 8  # L and the index: data codecs did not run
    assert items_of(codec.decode(out, spec_of(values))) == [b""] * 3


def test_empty_chunk():
    spec = ChunkSpec((0,), STRING, "")
    for location in ("start", "end"):
        codec = vlen(index_location=location)
        out = codec.encode(variable_chunk([]), spec)
        length, index = struct.pack("<Q", 8), struct.pack("<Q", 0)  # L = 8, the one offset 0
        assert out == (length + index if location == "start" else index + length)
        assert codec.decode(out, spec).size == 0


def test_data_part_that_decodes_to_nothing_is_accepted():
    # A writer that ran the data codecs on no data: zstd of b"" is a frame.
    codec = vlen(data_codecs=[{"name": "bytes"}, ZSTD])
    index = np.zeros(3, dtype="<u8").tobytes()
    chunk = struct.pack("<Q", len(index)) + index + zstandard.ZstdCompressor().compress(b"")
    assert items_of(codec.decode(chunk, spec_of(["", ""]))) == [b"", b""]


def test_two_dimensional_chunk_through_a_chain():
    spec = ChunkSpec((2, 3), STRING, "")
    values = ["a", "bé", "", "ĉĉĉ", "x" * 50, "z"]
    bound = CodecChain.from_json([{"name": "zarrs.vlen", "configuration": DEFAULT_CONFIG}, ZSTD]).bind(spec)
    decoded = bound.decode(bound.encode(variable_chunk(values, (2, 3))))
    assert decoded.shape == (2, 3)
    assert items_of(decoded) == [v.encode() for v in values]


def test_uint32_index_overflow_raises_codec_error():
    codec = vlen(index_data_type="uint32")
    # Offsets that claim 2**32 bytes; the codec must refuse before touching the data.
    huge = ArrayBytes((1,), offsets=np.array([0, 2**32], dtype=np.int64), data=b"")
    with pytest.raises(CodecError, match="zarrs.vlen.*uint32") as info:
        codec.encode(huge, spec_of(["x"]))
    assert not isinstance(info.value, ChunkDecodeError)


def test_encode_rejects_fixed_chunks_and_wrong_sizes():
    codec = VlenCodec()
    with pytest.raises(CodecError, match="zarrs.vlen"):
        codec.encode(ArrayBytes.from_array(np.zeros(3, np.uint8)), spec_of(EXAMPLE))
    with pytest.raises(CodecError, match="zarrs.vlen"):
        codec.encode(variable_chunk(["a", "b"]), spec_of(EXAMPLE))


# -- round trips ---------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    values=items,
    index_data_type=st.sampled_from(["uint32", "uint64"]),
    index_location=st.sampled_from(["start", "end"]),
    index_codecs=st.sampled_from(INDEX_CHAINS),
    data_codecs=st.sampled_from(DATA_CHAINS),
)
def test_round_trip(values, index_data_type, index_location, index_codecs, data_codecs):
    codec = vlen(
        index_data_type=index_data_type,
        index_location=index_location,
        index_codecs=index_codecs,
        data_codecs=data_codecs,
    )
    spec = spec_of(values)
    encoded = encode(codec, values, spec)
    decoded = codec.decode(encoded, spec)
    assert_valid(decoded)
    assert decoded.shape == spec.shape
    assert items_of(decoded) == [v.encode() if isinstance(v, str) else v for v in values]
    (index_nbytes,) = struct.unpack("<Q", encoded[:8] if index_location == "start" else encoded[-8:])
    assert 8 + index_nbytes <= len(encoded)


@settings(max_examples=50, deadline=None)
@given(values=strings, outer=st.sampled_from([[], [ZSTD], [GZIP], [CRC]]))
def test_round_trip_in_a_chain(values, outer):
    spec = spec_of(values, STRING)
    codecs = [{"name": "zarrs.vlen", "configuration": dict(DEFAULT_CONFIG, index_location="end")}, *outer]
    bound = CodecChain.from_json(codecs).bind(spec)
    assert items_of(bound.decode(bound.encode(variable_chunk(values)))) == [v.encode() for v in values]


# -- partial decoding ----------------------------------------------------


@st.composite
def selections(draw, values_strategy=items):
    values = draw(values_strategy)
    n = len(values)
    picks = draw(st.lists(st.integers(0, n - 1), max_size=20)) if n else []
    return values, picks


@settings(max_examples=100, deadline=None)
@given(
    case=selections(),
    index_data_type=st.sampled_from(["uint32", "uint64"]),
    index_location=st.sampled_from(["start", "end"]),
    index_codecs=st.sampled_from(INDEX_CHAINS),
    data_codecs=st.sampled_from(DATA_CHAINS),
    max_gap=st.sampled_from([0, 1, 16]),
)
def test_partial_equals_full(case, index_data_type, index_location, index_codecs, data_codecs, max_gap):
    values, picks = case
    codec = vlen(
        index_data_type=index_data_type,
        index_location=index_location,
        index_codecs=index_codecs,
        data_codecs=data_codecs,
    )
    spec = spec_of(values)
    encoded = encode(codec, values, spec)
    full = codec.decode(encoded, spec)
    reader = CountingReader(encoded)
    part = codec.partial_decoder(reader, spec, max_gap_nbytes=max_gap).decode_elements(picks)
    assert_valid(part)
    assert part.shape == (len(picks),)
    assert items_of(part) == items_of(full.take(np.array(picks, dtype=np.int64), (len(picks),)))
    if not codec.data_is_raw:
        assert reader.requests == [None]  # one whole read
    elif index_codecs in ([LE], [BE]):
        # Header and index in one read, then at most one read per element.
        assert 1 <= len(reader.requests) <= 1 + len(set(picks))


def test_partial_reads_fewer_bytes_when_data_is_uncompressed():
    values = [f"{i:04d}" * 25 for i in range(1000)]  # 1000 elements of 100 bytes
    picks = [3, 500, 501, 999, 3]
    for location in ("start", "end"):
        for index_codecs in ([LE], [LE, ZSTD]):
            codec = vlen(index_location=location, index_codecs=index_codecs)
            spec = spec_of(values)
            encoded = encode(codec, values, spec)
            (index_nbytes,) = struct.unpack("<Q", encoded[:8] if location == "start" else encoded[-8:])
            reader = CountingReader(encoded)
            part = codec.decode_elements(reader, spec, picks)
            assert items_of(part) == [values[i].encode() for i in picks]
            if index_codecs == [LE]:  # fixed index size: L and index in one read
                header_reads, header_nbytes = 1, 8 + index_nbytes
            else:  # L first, then the index (a suffix read at the end repeats L)
                header_reads, header_nbytes = 2, 8 + index_nbytes + (8 if location == "end" else 0)
            # Then 3 runs of 100, 200 (elements 500 and 501 coalesce) and 100 bytes.
            assert len(reader.requests) == header_reads + 3
            assert reader.nbytes == header_nbytes + 400
            assert reader.nbytes < len(encoded) // 5
            full = CountingReader(encoded)
            codec.decode(full(None), spec)
            assert reader.nbytes < full.nbytes


def test_partial_reads_everything_once_when_data_is_compressed():
    values = [f"{i:04d}" * 25 for i in range(100)]
    codec = vlen(data_codecs=[{"name": "bytes"}, ZSTD])
    spec = spec_of(values)
    encoded = encode(codec, values, spec)
    reader = CountingReader(encoded)
    assert items_of(codec.decode_elements(reader, spec, [7])) == [values[7].encode()]
    assert reader.requests == [None] and reader.nbytes == len(encoded)


def test_partial_decoder_keeps_its_index():
    values = ["ab", "", "c", "def"]
    codec = vlen(index_location="end")
    spec = spec_of(values)
    reader = CountingReader(encode(codec, values, spec))
    decoder = codec.partial_decoder(reader, spec)
    assert decoder.offsets().tolist() == [0, 2, 2, 3, 6]
    assert items_of(decoder.decode_elements([3, 0])) == [b"def", b"ab"]
    assert items_of(decoder.decode_elements([2], shape=(1, 1))) == [b"c"]
    assert len(reader.requests) == 1 + 2 + 1  # one index read in all


def test_partial_selection_of_empty_elements_reads_only_the_index():
    values = ["", "x", ""]
    codec = VlenCodec()
    spec = spec_of(values)
    reader = CountingReader(encode(codec, values, spec))
    assert items_of(codec.decode_elements(reader, spec, [0, 2, 0])) == [b"", b"", b""]
    assert items_of(codec.decode_elements(reader, spec, [])) == []
    assert len(reader.requests) == 2


def test_partial_missing_chunk_returns_none():
    spec = spec_of(EXAMPLE)
    for data_codecs in DATA_CHAINS[:2]:
        reader = CountingReader(None)
        assert vlen(data_codecs=data_codecs).decode_elements(reader, spec, [0]) is None
        assert len(reader.requests) == 1


@pytest.mark.parametrize("bad", [-1, 3, 10])
def test_partial_rejects_out_of_bounds_indices(bad):
    codec = VlenCodec()
    with pytest.raises(BoundsCheckError, match="zarrs.vlen"):
        codec.decode_elements(CountingReader(EXAMPLE_START), spec_of(EXAMPLE), [0, bad])


# -- corrupt input -------------------------------------------------------


def codec_for_example(location="start", **config) -> VlenCodec:
    return vlen(index_data_type="uint32", index_location=location, **config)


def with_index(offsets, data=b"abc", location="start", dtype="<u4") -> bytes:
    index = np.array(offsets, dtype=dtype).tobytes()
    header = struct.pack("<Q", len(index))
    return header + index + data if location == "start" else data + index + header


@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize(
    "chunk_args, message",
    [
        (([0, 2, 2, 4],), "ends at offset 4"),  # offsets past the end of the data
        (([0, 2, 2, 2],), "ends at offset 2"),  # data longer than the index says
        (([0, 2, 1, 3],), "decrease at element 1"),  # non-monotonic
        (([1, 2, 2, 3],), "start at offset 0"),
        (([0, 2, 2, 3], b""), "data part is empty"),
        (([0, 2, 2],), "index"),  # n offsets for n elements: truncated index
        (([0, 2, 2, 3, 3],), "index"),  # one offset too many
        (([0, 2, 2, 2**32 - 1],), "ends at offset"),
    ],
)
def test_corrupt_index_or_data(location, chunk_args, message):
    codec = codec_for_example(location)
    chunk = with_index(*chunk_args, location=location)
    with pytest.raises(ChunkDecodeError, match="zarrs.vlen") as info:
        codec.decode(chunk, spec_of(EXAMPLE))
    assert message in str(info.value)


def test_uint64_offset_beyond_int64_is_rejected():
    chunk = with_index([0, 2, 2, 2**64 - 1], dtype="<u8")
    with pytest.raises(ChunkDecodeError, match="zarrs.vlen.*implausibly large"):
        VlenCodec().decode(chunk, spec_of(EXAMPLE))


@pytest.mark.parametrize("nbytes", range(8))
def test_fewer_than_8_bytes(nbytes):
    with pytest.raises(ChunkDecodeError, match="zarrs.vlen.*too short"):
        VlenCodec().decode(b"\x00" * nbytes, spec_of(EXAMPLE))


@pytest.mark.parametrize("location, good", [("start", EXAMPLE_START), ("end", EXAMPLE_END)])
@pytest.mark.parametrize("claim", [20, 2**40, 2**64 - 1])
def test_index_length_field_larger_than_the_chunk(location, good, claim):
    field = struct.pack("<Q", claim)
    chunk = field + good[8:] if location == "start" else good[:-8] + field
    with pytest.raises(ChunkDecodeError, match="zarrs.vlen.*index length field"):
        codec_for_example(location).decode(chunk, spec_of(EXAMPLE))


@pytest.mark.parametrize("location, good", [("start", EXAMPLE_START), ("end", EXAMPLE_END)])
def test_every_truncation_and_extension_fails(location, good):
    codec = codec_for_example(location)
    for cut in range(len(good)):
        with pytest.raises(ChunkDecodeError, match="zarrs.vlen"):
            codec.decode(good[:cut], spec_of(EXAMPLE))
    with pytest.raises(ChunkDecodeError, match="zarrs.vlen"):
        codec.decode(good + b"x", spec_of(EXAMPLE)) if location == "start" else codec.decode(b"x" + good, spec_of(EXAMPLE))


def test_corrupt_compressed_parts():
    values = ["hello", "world"] * 20
    spec = spec_of(values)
    codec = vlen(index_codecs=[LE, ZSTD], data_codecs=[{"name": "bytes"}, CRC])
    good = bytearray(encode(codec, values, spec))
    bad_data = bytes(good[:-1]) + bytes([good[-1] ^ 1])  # the crc32c of the data
    with pytest.raises(ChecksumError, match="zarrs.vlen.: data: codec .crc32c."):
        codec.decode(bad_data, spec)
    (index_nbytes,) = struct.unpack("<Q", good[:8])
    bad_index = bytes(good[:10]) + b"\xff" * (index_nbytes - 2) + bytes(good[8 + index_nbytes :])
    with pytest.raises(ChunkDecodeError, match="zarrs.vlen.*index"):
        codec.decode(bad_index, spec)


@settings(max_examples=100, deadline=None)
@given(
    values=items,
    flips=st.lists(st.integers(0, 10**6), min_size=1, max_size=4),
    location=st.sampled_from(["start", "end"]),
    data_codecs=st.sampled_from(DATA_CHAINS),
)
def test_corrupt_input_never_escapes_as_another_error(values, flips, location, data_codecs):
    codec = vlen(index_location=location, data_codecs=data_codecs)
    spec = spec_of(values)
    corrupt = bytearray(encode(codec, values, spec))
    for f in flips:
        corrupt[f % len(corrupt)] ^= 1 << (f % 8)
    try:
        out = codec.decode(bytes(corrupt), spec)
    except ChunkDecodeError:
        return
    assert_valid(out)


@settings(max_examples=50, deadline=None)
@given(junk=st.binary(max_size=80), location=st.sampled_from(["start", "end"]), n=st.integers(0, 5))
def test_random_bytes_never_escape_as_another_error(junk, location, n):
    try:
        vlen(index_location=location).decode(junk, ChunkSpec((n,), BYTES, b""))
    except ChunkDecodeError:
        pass


@pytest.mark.parametrize("location", ["start", "end"])
def test_partial_decoder_checks_what_it_reads(location):
    spec = spec_of(EXAMPLE)
    good = EXAMPLE_START if location == "start" else EXAMPLE_END
    for index_codecs in ([LE], [LE, ZSTD]):
        codec = codec_for_example(location, index_codecs=index_codecs)
        good = encode(codec, EXAMPLE)
        field = struct.pack("<Q", 2**40)
        lying = field + good[8:] if location == "start" else good[:-8] + field
        with pytest.raises(ChunkDecodeError, match="zarrs.vlen.*index length field"):
            codec.decode_elements(CountingReader(lying), spec, [0])
        with pytest.raises(ChunkDecodeError, match="zarrs.vlen"):
            codec.decode_elements(CountingReader(good[:5]), spec, [0])
    # Offsets that run past the stored data: caught with the chunk's length ...
    past = with_index([0, 2, 2, 9], location=location)
    with pytest.raises(ChunkDecodeError, match="zarrs.vlen.*index ends at offset 9"):
        codec_for_example(location).decode_elements(CountingReader(past), spec, [0], total_nbytes=len(past))
    with pytest.raises(ChunkDecodeError, match="zarrs.vlen.*index length field"):
        codec_for_example(location).decode_elements(CountingReader(good), spec, [0], total_nbytes=len(good) - 20)
    # ... and without it when the index is at the start (the element read comes back short).
    if location == "start":
        with pytest.raises(ChunkDecodeError, match="zarrs.vlen.*chunk ends inside its data"):
            codec_for_example(location).decode_elements(CountingReader(past), spec, [2])
    decreasing = with_index([0, 2, 1, 3], location=location)
    with pytest.raises(ChunkDecodeError, match="zarrs.vlen.*decrease"):
        codec_for_example(location).decode_elements(CountingReader(decreasing), spec, [0])
