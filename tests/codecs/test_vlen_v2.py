"""Interleaved vlen codecs (vlen-utf8, vlen-bytes, zarrs.vlen_v2) and vlen-array helpers."""

from __future__ import annotations

import doctest
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy.codecs.vlen_v2 as vlen_v2_module
from tests.codecs._vlen_helpers import (
    BYTES,
    STRING,
    as_bytes,
    assert_valid,
    binaries,
    items,
    items_of,
    spec_of,
    strings,
    variable_chunk,
)
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.registry import codec_from_json
from zarrpy.codecs.vlen_v2 import (
    InterleavedVlenCodec,
    VlenBytesCodec,
    VlenUtf8Codec,
    VlenV2Codec,
    decode_interleaved,
    decode_vlen_array,
    encode_interleaved,
    encode_vlen_array,
)
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChunkDecodeError, CodecError

CLASSES = {"vlen-utf8": VlenUtf8Codec, "vlen-bytes": VlenBytesCodec, "zarrs.vlen_v2": VlenV2Codec}

# numcodecs 0.17.1 test vectors, reference/ZARR-FORMAT-NOTES.md §11.
UTF8_VECTORS = [
    (["ab", "", "ĉ"], "03000000 02000000 6162 00000000 02000000 c489"),
    (["ab", "", "c"], "03000000 02000000 6162 00000000 01000000 63"),
]
BYTES_VECTOR = ([b"ab", b"", b"xyz"], "03000000 02000000 6162 00000000 03000000 78797a")
ARRAY_VECTOR = ([[1, 2], [], [3]], "03000000 04000000 01000200 00000000 02000000 0300")


def hexbytes(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def codec_for(values):
    return VlenUtf8Codec() if values and isinstance(values[0], str) else VlenBytesCodec()


def test_module_doctests():
    assert doctest.testmod(vlen_v2_module).failed == 0


# -- configuration -------------------------------------------------------


@pytest.mark.parametrize("name", list(CLASSES))
@pytest.mark.parametrize("config", [{}, None])
def test_config_is_empty_and_written_as_empty(name, config):
    obj = {"name": name} if config is None else {"name": name, "configuration": config}
    codec = codec_from_json(obj)
    assert type(codec) is CLASSES[name]
    assert isinstance(codec, InterleavedVlenCodec)
    assert codec.to_json() == {"name": name, "configuration": {}}


@pytest.mark.parametrize("alias", ["vlen_v2", "https://codec.zarrs.dev/array_to_bytes/vlen_v2"])
def test_zarrs_aliases(alias):
    codec = codec_from_json({"name": alias, "configuration": {}})
    assert type(codec) is VlenV2Codec
    assert codec.to_json()["name"] == "zarrs.vlen_v2"


@pytest.mark.parametrize("name", list(CLASSES))
@pytest.mark.parametrize("config, field", [({"dtype": "<i2"}, "dtype"), ({"x": 1}, "x"), ([], "configuration"), ("utf8", "configuration")])
def test_bad_config(name, config, field):
    with pytest.raises(CodecError, match=name) as info:
        CLASSES[name].from_config(config)
    assert field in str(info.value)


def test_codecs_compare_by_name():
    assert VlenUtf8Codec() == VlenUtf8Codec()
    assert VlenUtf8Codec() != VlenBytesCodec()
    assert VlenV2Codec() != VlenBytesCodec()


@pytest.mark.integration
def test_json_matches_zarr_python():
    from zarr.codecs import VLenBytesCodec as ZarrBytes
    from zarr.codecs import VLenUTF8Codec as ZarrUtf8

    assert VlenUtf8Codec().to_json() == ZarrUtf8().to_dict()
    assert VlenBytesCodec().to_json() == ZarrBytes().to_dict()


def test_resolve_checks_the_data_type():
    uint8 = ChunkSpec((3,), DataType.from_json("uint8"), 0)
    string, raw = ChunkSpec((3,), STRING, ""), ChunkSpec((3,), BYTES, b"")
    assert VlenUtf8Codec().resolve(string) == string
    assert VlenBytesCodec().resolve(raw) == raw
    assert VlenV2Codec().resolve(string) == string and VlenV2Codec().resolve(raw) == raw
    for codec in CLASSES.values():
        with pytest.raises(CodecError, match=f"{codec.name}.*fixed-size"):
            codec().resolve(uint8)
    # One layout: zarrs writes either name on either variable type, and both read it.
    assert VlenUtf8Codec().resolve(raw) == raw and VlenBytesCodec().resolve(string) == string
    for alias in ("bytes", "binary"):
        spec = ChunkSpec((1,), DataType.from_json(alias), b"")
        assert VlenBytesCodec().resolve(spec) == spec


def test_either_name_reads_the_other_type():
    """zarrs writes ``vlen-utf8`` on bytes data and ``vlen-bytes`` on strings: the same bytes."""
    strings = np.array(["a", "", "ßü"], dtype=np.dtypes.StringDType())
    raw = np.array([b"\x00\xff", b"", b"x"], dtype=object)
    for name in ("vlen-utf8", "vlen-bytes"):
        bound = CodecChain.from_json([{"name": name, "configuration": {}}]).bind(ChunkSpec((3,), BYTES, b""))
        other = CodecChain.from_json([{"name": "vlen-bytes", "configuration": {}}]).bind(ChunkSpec((3,), BYTES, b""))
        encoded = bound.encode(ArrayBytes.from_elements(raw))
        assert encoded == other.encode(ArrayBytes.from_elements(raw))
        assert bound.decode(encoded).to_bytes_objects().tolist() == raw.tolist()
        bound = CodecChain.from_json([{"name": name, "configuration": {}}]).bind(ChunkSpec((3,), STRING, ""))
        encoded = bound.encode(ArrayBytes.from_elements(strings))
        assert bound.decode(encoded).to_strings().tolist() == strings.tolist()
    with pytest.raises(CodecError, match="vlen-utf8"):
        CodecChain.from_json([{"name": "vlen-utf8", "configuration": {}}]).bind(
            ChunkSpec((2,), DataType.from_json("uint8"), 0)
        )


# -- byte layout ---------------------------------------------------------


@pytest.mark.parametrize("values, hex_", UTF8_VECTORS)
def test_numcodecs_utf8_vectors(values, hex_):
    expected = hexbytes(hex_)
    for codec in (VlenUtf8Codec(), VlenV2Codec()):
        assert codec.encode(variable_chunk(values), spec_of(values)) == expected
        decoded = codec.decode(expected, spec_of(values))
        assert [b.decode() for b in items_of(decoded)] == values
        assert_valid(decoded)


def test_numcodecs_bytes_vector():
    values, hex_ = BYTES_VECTOR
    expected = hexbytes(hex_)
    for codec in (VlenBytesCodec(), VlenV2Codec()):
        assert codec.encode(variable_chunk(values), spec_of(values)) == expected
        assert items_of(codec.decode(expected, spec_of(values))) == values


def test_numcodecs_vlen_array_vector():
    values, hex_ = ARRAY_VECTOR
    expected = hexbytes(hex_)
    chunk = variable_chunk([np.array(v, "<i2").tobytes() for v in values])
    assert encode_vlen_array(chunk, "<i2") == expected
    decoded = decode_vlen_array(expected, (3,), "<i2")
    assert [np.frombuffer(b, "<i2").tolist() for b in items_of(decoded)] == values


def test_vlen_array_big_endian_is_stored_big_and_decoded_little():
    stored = hexbytes("01000000 04000000 00010002")  # >i2 [1, 2]
    decoded = decode_vlen_array(stored, (1,), ">i2")
    assert decoded.data == np.array([1, 2], "<i2").tobytes()
    assert encode_vlen_array(decoded, ">i2") == stored


def test_vlen_array_rejects_lengths_that_are_not_whole_items():
    stored = hexbytes("02000000 03000000 010002 00000000")
    with pytest.raises(ChunkDecodeError, match="vlen-array.*element 0 has 3 bytes.*item size 2"):
        decode_vlen_array(stored, (2,), "<i2")
    assert items_of(decode_vlen_array(stored, (2,), "u1")) == [b"\x01\x00\x02", b""]
    with pytest.raises(CodecError, match="vlen-array"):
        encode_vlen_array(variable_chunk([b"abc"]), "<i2")


@pytest.mark.parametrize("dtype", ["O", "U3", "S2", "V4", "M8[s]", "not-a-dtype"])
def test_vlen_array_rejects_non_numeric_dtypes(dtype):
    with pytest.raises(CodecError, match="vlen-array.*dtype"):
        decode_vlen_array(hexbytes("00000000"), (0,), dtype)


def test_empty_chunk_and_empty_elements():
    assert VlenV2Codec().encode(variable_chunk([]), ChunkSpec((0,), BYTES, b"")) == b"\x00" * 4
    assert VlenV2Codec().decode(b"\x00" * 4, ChunkSpec((0,), BYTES, b"")).size == 0
    values = ["", "", ""]
    out = VlenUtf8Codec().encode(variable_chunk(values), spec_of(values))
    assert out == struct.pack("<4I", 3, 0, 0, 0)
    assert items_of(VlenUtf8Codec().decode(out, spec_of(values))) == [b""] * 3


def test_two_dimensional_chunk_keeps_its_shape():
    values = ["a", "bb", "", "dddd"]
    spec = ChunkSpec((2, 2), STRING, "")
    codec = VlenUtf8Codec()
    decoded = codec.decode(codec.encode(variable_chunk(values, (2, 2)), spec), spec)
    assert decoded.shape == (2, 2)
    assert items_of(decoded) == [v.encode() for v in values]


def test_encode_accepts_offsets_not_starting_at_zero():
    # A view into a larger buffer (e.g. after a gather) still encodes its own elements.
    chunk = ArrayBytes((2,), offsets=np.array([3, 5, 6], dtype=np.int64), data=b"xxxabc")
    assert encode_interleaved(chunk.offsets, chunk.data) == struct.pack("<II", 2, 2) + b"ab" + struct.pack("<I", 1) + b"c"


def test_encode_rejects_fixed_chunks_and_wrong_sizes():
    with pytest.raises(CodecError, match="vlen-bytes"):
        VlenBytesCodec().encode(ArrayBytes.from_array(np.zeros(3, np.uint8)), spec_of([b"", b"", b""]))
    with pytest.raises(CodecError, match="vlen-bytes.*2 elements"):
        VlenBytesCodec().encode(variable_chunk([b"a", b"b"]), spec_of([b"", b"", b""]))


def test_encode_rejects_elements_longer_than_u32():
    huge = np.array([0, 2**32], dtype=np.int64)
    with pytest.raises(CodecError, match="zarrs.vlen_v2.*longer"):
        encode_interleaved(huge, b"")


# -- round trips and numcodecs as oracle ---------------------------------


@settings(max_examples=100, deadline=None)
@given(values=items, generic=st.booleans())
def test_round_trip(values, generic):
    codec = VlenV2Codec() if generic else codec_for(values)
    spec = spec_of(values)
    encoded = codec.encode(variable_chunk(values), spec)
    raw = [as_bytes(v) for v in values]
    assert len(encoded) == 4 + 4 * len(values) + sum(map(len, raw))
    decoded = codec.decode(encoded, spec)
    assert_valid(decoded)
    assert items_of(decoded) == raw


@pytest.mark.integration
@settings(max_examples=100, deadline=None)
@given(values=strings)
def test_numcodecs_utf8_oracle(values):
    from numcodecs import VLenUTF8

    objects = np.array(values + [None], dtype=object)[:-1]  # keeps a 1-D object array
    theirs = VLenUTF8().encode(objects)
    spec = spec_of(values, STRING)
    ours = VlenUtf8Codec().encode(variable_chunk(values), spec)
    assert ours == bytes(theirs)
    assert [b.decode() for b in items_of(VlenUtf8Codec().decode(bytes(theirs), spec))] == values
    assert list(VLenUTF8().decode(ours)) == values


@pytest.mark.integration
@settings(max_examples=100, deadline=None)
@given(values=binaries)
def test_numcodecs_bytes_oracle(values):
    from numcodecs import VLenBytes

    objects = np.array(values + [None], dtype=object)[:-1]
    theirs = bytes(VLenBytes().encode(objects))
    spec = spec_of(values, BYTES)
    assert VlenBytesCodec().encode(variable_chunk(values), spec) == theirs
    assert items_of(VlenBytesCodec().decode(theirs, spec)) == values
    assert list(VLenBytes().decode(VlenV2Codec().encode(variable_chunk(values), spec))) == values


@pytest.mark.integration
@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(st.lists(st.integers(-(2**15), 2**15 - 1), max_size=8), max_size=20),
    dtype=st.sampled_from(["<i2", ">i2"]),
)
def test_numcodecs_vlen_array_oracle(values, dtype):
    from numcodecs import VLenArray

    objects = np.empty(len(values), dtype=object)
    objects[:] = [np.array(v, dtype=dtype) for v in values]
    theirs = bytes(VLenArray(dtype).encode(objects))
    decoded = decode_vlen_array(theirs, (len(values),), dtype)
    assert [np.frombuffer(b, "<i2").tolist() for b in items_of(decoded)] == values
    ours = encode_vlen_array(decoded, dtype)
    assert ours == theirs
    assert [a.tolist() for a in VLenArray(dtype).decode(ours)] == values


def test_numcodecs_encodes_none_as_empty():
    from numcodecs import VLenUTF8

    theirs = bytes(VLenUTF8().encode(np.array(["a", None, "b"], dtype=object)))
    assert items_of(VlenUtf8Codec().decode(theirs, spec_of(["", "", ""]))) == [b"a", b"", b"b"]


@pytest.mark.integration
def test_reads_zarr_python_v3_string_chunk():
    import zarr
    from zarr.storage import MemoryStore

    store = MemoryStore()
    values = np.array(["ab", "", "ĉ", "longer string", "z"], dtype=str)
    arr = zarr.create_array(store, shape=(5,), chunks=(5,), dtype=str)
    arr[:] = values
    metadata = arr.metadata.to_dict()
    import asyncio

    from zarr.core.buffer import default_buffer_prototype

    raw = asyncio.run(store.get("c/0", prototype=default_buffer_prototype())).to_bytes()
    bound = CodecChain.from_json(metadata["codecs"]).bind(ChunkSpec((5,), STRING, ""))
    assert [b.decode() for b in items_of(bound.decode(raw))] == values.tolist()
    assert bound.encode(variable_chunk(values.tolist())) == raw


# -- corrupt input -------------------------------------------------------


GOOD = hexbytes(UTF8_VECTORS[0][1])
SPEC3 = spec_of(["", "", ""])


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "too short"),
        (b"\x03\x00", "too short"),
        (struct.pack("<I", 2) + GOOD[4:], "header says 2 elements, the chunk has 3"),
        (struct.pack("<I", 4) + GOOD[4:], "header says 4 elements"),
        (struct.pack("<I", 2**32 - 1), "header says 4294967295"),
        (GOOD[:8], "truncated"),
        (GOOD[:-1], "element 2 runs past the end"),
        (GOOD[:4] + struct.pack("<I", 1000) + GOOD[8:], "element 0 runs past the end"),
        (GOOD[:4] + struct.pack("<I", 2**32 - 1) + GOOD[8:], "element 0 runs past the end"),
        (GOOD[:10] + struct.pack("<I", 9) + GOOD[14:], "element 1 runs past the end"),
    ],
)
def test_corrupt_input(data, message):
    for codec in CLASSES.values():
        spec = spec_of(["", "", ""], BYTES if codec is VlenBytesCodec else STRING)
        with pytest.raises(ChunkDecodeError, match=f"{codec.name}.*") as info:
            codec().decode(data, spec)
        assert message in str(info.value)


def test_bytes_after_the_last_element_are_ignored():
    """As numcodecs and zarr-python read them: one decode path, one rule."""
    for codec in CLASSES.values():
        spec = spec_of(["", "", ""], BYTES if codec is VlenBytesCodec else STRING)
        assert items_of(codec().decode(GOOD + b"\x00junk", spec)) == items_of(codec().decode(GOOD, spec))


def test_every_truncation_fails():
    for cut in range(len(GOOD)):
        with pytest.raises(ChunkDecodeError, match="vlen-utf8"):
            VlenUtf8Codec().decode(GOOD[:cut], SPEC3)


def test_a_lying_count_allocates_nothing():
    spec = ChunkSpec((10_000_000,), BYTES, b"")
    tracemalloc.start()
    try:
        with pytest.raises(ChunkDecodeError, match="truncated"):
            VlenBytesCodec().decode(struct.pack("<I", 10_000_000), spec)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@settings(max_examples=100, deadline=None)
@given(values=items, flips=st.lists(st.integers(0, 10**6), min_size=1, max_size=4))
def test_corrupt_input_never_escapes_as_another_error(values, flips):
    codec = VlenV2Codec()
    spec = spec_of(values)
    corrupt = bytearray(codec.encode(variable_chunk(values), spec))
    for f in flips:
        corrupt[f % len(corrupt)] ^= 1 << (f % 8)
    try:
        out = codec.decode(bytes(corrupt), spec)
    except ChunkDecodeError:
        return
    assert_valid(out)
    assert out.shape == spec.shape


@settings(max_examples=100, deadline=None)
@given(junk=st.binary(max_size=64), n=st.integers(0, 6))
def test_random_bytes_never_escape_as_another_error(junk, n):
    try:
        out = decode_interleaved(junk, n)
    except ChunkDecodeError:
        return
    offsets, data = out
    assert len(offsets) == n + 1 and offsets[-1] == len(data)


def test_decode_and_encode_a_million_short_strings():
    # Not a timing assertion (see bench/), just that the vectorised paths hold up.
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 13, size=1_000_000)
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = rng.integers(97, 123, size=int(offsets[-1]), dtype=np.uint8).tobytes()
    encoded = encode_interleaved(offsets, data)
    got_offsets, got_data = decode_interleaved(encoded, lengths.size)
    assert np.array_equal(got_offsets, offsets) and got_data == data


# -- decode_into: numcodecs' str objects cast straight into the read's result --

# Astral characters, NULs (embedded, leading and trailing), empty strings and
# strings long enough for numpy's StringDType arena all come up.
unicode_strings = st.lists(
    st.one_of(
        st.text(max_size=8),
        st.text(alphabet=st.sampled_from(["\x00", "a", "é", "€", "\U0001F600", "\U0010FFFF"]), max_size=24),
        st.text(min_size=16, max_size=300),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(values=unicode_strings, rows=st.integers(1, 3), offset=st.integers(0, 3), codec_class=st.sampled_from(
    [VlenUtf8Codec, VlenV2Codec, VlenBytesCodec]))
def test_decode_into_a_view_agrees_with_decode(values, rows, offset, codec_class):
    """Into a strided, offset view of a bigger StringDType result, whatever
    the view held before; the elements around it are untouched."""
    values = values[: len(values) - len(values) % rows]
    shape = (rows, len(values) // rows)
    spec = ChunkSpec(shape, STRING, STRING.default_fill())
    codec = codec_class()
    encoded = codec.encode(variable_chunk(values, shape), spec)
    plain = codec.decode(encoded, spec).to_strings()
    big = np.full((rows + offset, 2 * shape[1] + 1), "old value, long enough for the arena", dtype=STRING.numpy)
    before = big.copy()
    dest = big[offset : offset + rows, 1::2]
    assert codec.decode_into(encoded, spec, dest) is True
    np.testing.assert_array_equal(dest, plain)
    assert dest.reshape(-1).tolist() == values
    mask = np.ones(big.shape, dtype=bool)
    mask[offset : offset + rows, 1::2] = False
    np.testing.assert_array_equal(big[mask], before[mask])


def test_decode_into_declines_what_it_does_not_handle():
    strings_spec = spec_of(["a", "b"], STRING)
    encoded = VlenUtf8Codec().encode(variable_chunk(["a", "b"]), strings_spec)
    bytes_spec = spec_of([b"a", b"b"], BYTES)
    assert VlenBytesCodec().decode_into(encoded, bytes_spec, np.empty(2, dtype=object)) is False
    assert VlenUtf8Codec().decode_into(encoded, strings_spec, np.empty(2, dtype="U1")) is False
    assert VlenUtf8Codec().decode_into(encoded, strings_spec, np.empty(3, dtype=STRING.numpy)) is False
    assert VlenUtf8Codec().decode_into(encoded, strings_spec, np.empty((1, 2), dtype=STRING.numpy)) is False


@pytest.mark.parametrize(
    "data",
    [b"", struct.pack("<I", 2) + GOOD[4:], GOOD[:8], GOOD[:-1], GOOD[:4] + struct.pack("<I", 2**32 - 1) + GOOD[8:],
     # element 1 is b"\xff": not UTF-8
     struct.pack("<IIcIc", 3, 1, b"a", 1, b"\xff") + struct.pack("<I", 0)],
)
def test_decode_into_raises_what_decode_raises(data):
    dest = np.full(3, "x", dtype=STRING.numpy)
    with pytest.raises(ChunkDecodeError) as plain:
        VlenUtf8Codec().decode(data, SPEC3)
    with pytest.raises(ChunkDecodeError) as into:
        VlenUtf8Codec().decode_into(data, SPEC3, dest)
    assert str(into.value) == str(plain.value)
    assert "vlen-utf8" in str(into.value)



@settings(max_examples=50, deadline=None)
@given(values=unicode_strings.filter(bool), compressor=st.sampled_from(
    [[], [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
     [{"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}]]))
def test_a_chain_decodes_strings_into_the_result(values, compressor):
    """BoundChain.decode_into: bytes-to-bytes codecs first, then the strings
    cast into ``dest``; bytes data is left to decode plus a copy."""
    spec = spec_of(values, STRING)
    bound = CodecChain.from_json([{"name": "vlen-utf8", "configuration": {}}, *compressor]).bind(spec)
    encoded = bound.encode(variable_chunk(values))
    out = np.full(len(values) + 2, "x", dtype=STRING.numpy)
    assert bound.decode_into(encoded, out[1:-1]) is True
    assert out.tolist() == ["x", *values, "x"]
    assert bound.decode(encoded).to_strings().tolist() == values
    raw = [as_bytes(v) for v in values]
    bytes_bound = CodecChain.from_json([{"name": "vlen-bytes", "configuration": {}}, *compressor]).bind(
        spec_of(raw, BYTES))
    assert bytes_bound.decode_into(bytes_bound.encode(variable_chunk(raw)), np.empty(len(raw), dtype=object)) is False


def test_a_string_array_reads_whole_chunks_into_its_result(tmp_path):
    import zarrpy

    values = np.array(["", "a\x00", "\x00", "é€\U0001F600", "long enough for the arena " * 3] * 7, dtype=STRING.numpy)
    a = zarrpy.create_array(str(tmp_path / "s"), shape=values.shape, dtype=str, chunks=(5,))
    a[...] = values
    got = zarrpy.open_array(str(tmp_path / "s"), mode="r")
    np.testing.assert_array_equal(got[...], values)
    np.testing.assert_array_equal(got[3:29], values[3:29])
    out = np.full(values.shape, "old", dtype=STRING.numpy)
    got.get_basic_selection(..., out=out)
    np.testing.assert_array_equal(out, values)
