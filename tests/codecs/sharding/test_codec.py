"""sharding_indexed codec: configuration, whole-shard round trips, interop with
zarr-python and tensorstore both ways, nested shards, strings, corrupt shards."""

from __future__ import annotations

import doctest
import itertools
import json
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy.codecs.sharding.codec as codec_module
from tests.codecs.sharding._helpers import (
    CRC,
    DEFAULT_INDEX_CODECS,
    EMPTY,
    LE,
    STRING,
    CountingReader,
    as_strings,
    fixed,
    inner_bytes,
    raw_index,
    read_entries,
    shard_arrays,
    shard_layouts,
    sharding,
    spec,
    strings,
)
from tests.strategies import assert_identical, core_dtypes
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.registry import codec_from_json, get_codec_class
from zarrpy.codecs.sharding import ShardingCodec
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChecksumError, ChunkDecodeError, CodecError

DEFAULT_CONFIG = {
    "chunk_shape": [2, 2],
    "codecs": [LE],
    "index_codecs": DEFAULT_INDEX_CODECS,
    "index_location": "end",
}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}


# -- configuration -------------------------------------------------------------


def test_module_doctest():
    assert doctest.testmod(codec_module).failed == 0


def test_registered():
    assert get_codec_class("sharding_indexed") is ShardingCodec
    codec = codec_from_json({"name": "sharding_indexed", "configuration": {"chunk_shape": [4]}})
    assert isinstance(codec, ShardingCodec)


def test_defaults_written_like_zarr_python():
    codec = ShardingCodec.from_config({"chunk_shape": [2, 2]})
    assert codec.to_config() == DEFAULT_CONFIG
    assert json.dumps(codec.to_config()["index_codecs"]) == (
        '[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]'
    )
    assert list(codec.to_config()) == ["chunk_shape", "codecs", "index_codecs", "index_location"]


@pytest.mark.parametrize(
    "config",
    [
        DEFAULT_CONFIG,
        {**DEFAULT_CONFIG, "index_location": "start"},
        {**DEFAULT_CONFIG, "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}}, LE, ZSTD, CRC]},
        {**DEFAULT_CONFIG, "index_codecs": [LE]},
        {**DEFAULT_CONFIG, "index_codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, CRC]},
        {**DEFAULT_CONFIG, "codecs": [{"name": "sharding_indexed", "configuration": {**DEFAULT_CONFIG, "chunk_shape": [1, 1]}}]},
    ],
)
def test_config_round_trip(config):
    codec = ShardingCodec.from_config(config)
    assert codec.to_config() == config
    assert ShardingCodec.from_config(codec.to_config()) == codec
    assert codec_from_json(codec.to_json()) == codec


@pytest.mark.parametrize(
    "config, match",
    [
        ({}, "missing 'chunk_shape'"),
        (None, "missing 'chunk_shape'"),
        ({"chunk_shape": [2], "extra": 1}, r"unknown configuration field\(s\) \['extra'\]"),
        ({"chunk_shape": [0, 2]}, "'chunk_shape' must be a list of positive integers"),
        ({"chunk_shape": [-1]}, "'chunk_shape' must be a list of positive integers"),
        ({"chunk_shape": [True]}, "'chunk_shape' must be a list of positive integers"),
        ({"chunk_shape": [2.0]}, "'chunk_shape' must be a list of positive integers"),
        ({"chunk_shape": "22"}, "'chunk_shape' must be a list of positive integers"),
        ({"chunk_shape": 2}, "'chunk_shape' must be a list of positive integers"),
        ({"chunk_shape": [2], "codecs": None}, "'codecs' must be a list of codecs, got null"),
        ({"chunk_shape": [2], "codecs": {"name": "bytes"}}, "'codecs' must be a list of codecs"),
        ({"chunk_shape": [2], "codecs": [{"name": "nope"}]}, "'codecs'.*unknown codec 'nope'"),
        ({"chunk_shape": [2], "codecs": [ZSTD]}, "'codecs'.*array-to-bytes"),
        ({"chunk_shape": [2], "index_codecs": None}, "'index_codecs' must be a list of codecs, got null"),
        ({"chunk_shape": [2], "index_codecs": [LE, ZSTD]}, "'index_codecs' must produce a fixed size; compressors"),
        ({"chunk_shape": [2], "index_codecs": [LE, {"name": "gzip", "configuration": {"level": 1}}]}, "compressors are not allowed"),
        ({"chunk_shape": [2], "index_codecs": [{"name": "vlen-utf8"}]}, "'index_codecs'"),
        ({"chunk_shape": [2], "index_location": "middle"}, "'index_location' must be one of"),
    ],
)
def test_bad_config(config, match):
    with pytest.raises(CodecError, match=match) as info:
        ShardingCodec.from_config(config)
    assert "sharding_indexed" in str(info.value)


def test_resolve_checks_the_shard():
    codec = sharding([2, 3])
    assert codec.resolve(spec((4, 6))) == spec((4, 6))
    with pytest.raises(CodecError, match=r"sharding_indexed.*'chunk_shape' \[2, 3\] does not evenly divide the shard shape \(4, 4\)"):
        codec.resolve(spec((4, 4)))
    with pytest.raises(CodecError, match="'chunk_shape' .* has 2 dimensions, the shard shape .* has 1"):
        codec.resolve(spec((4,)))
    with pytest.raises(CodecError, match="sharding_indexed.*'codecs'.*variable-length"):
        codec.resolve(spec((4, 6), "string"))
    with pytest.raises(CodecError, match="sharding_indexed.*'codecs'.*'endian' is required"):
        sharding([2, 3], [{"name": "bytes"}]).resolve(spec((4, 6)))
    # The chain binds a sharding codec through resolve.
    with pytest.raises(CodecError, match="does not evenly divide"):
        CodecChain([codec]).bind(spec((5, 6)))


def test_evolve_fills_in_inner_blosc_typesize():
    blosc = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}}
    codec = sharding([2, 2], [LE, blosc])
    evolved = codec.evolve(spec((4, 4), "float64"))
    assert evolved.to_config()["codecs"][1]["configuration"]["typesize"] == 8
    assert sharding([2, 2]).evolve(spec((4, 4))) == sharding([2, 2])
    nested = sharding([4, 4], [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2], "codecs": [LE, blosc]}}])
    inner = nested.evolve(spec((8, 8), "int16")).to_config()["codecs"][0]["configuration"]["codecs"][1]
    assert inner["configuration"]["typesize"] == 2


# -- round trips ---------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_round_trip_fixed(data):
    shape, inner = data.draw(shard_layouts())
    dtype = data.draw(core_dtypes())
    fill = np.zeros((), dtype)[()]
    arr = data.draw(shard_arrays(shape, inner, dtype, fill))
    location = data.draw(st.sampled_from(["start", "end"]))
    codecs = data.draw(st.sampled_from([[LE], [LE, ZSTD], [{"name": "bytes", "configuration": {"endian": "big"}}, CRC]]))
    codec = sharding(inner, codecs, index_location=location)
    s = spec(shape, dtype, fill)
    encoded = codec.encode(fixed(arr), s)
    assert_identical(codec.decode(encoded, s).array, arr)
    grid = tuple(a // b for a, b in zip(shape, inner))
    nchunks = int(np.prod(grid))
    stored = [b is not None for b in inner_bytes(encoded, nchunks, location)]
    blocks = [arr[tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, inner))]
              for coords in itertools.product(*(range(g) for g in grid))]
    # An inner chunk is stored exactly when it differs from the fill bit for bit.
    assert stored == [b.tobytes() != np.full(b.shape, fill, dtype).tobytes() for b in blocks]
    if not any(stored):
        assert codec.encode_or_none(fixed(arr), s) is None
    else:
        assert codec.encode_or_none(fixed(arr), s) == encoded


def test_fill_comparison_is_bitwise():
    codec = sharding([2])
    s = spec((4,), "float32", float("nan"))
    arr = np.array([np.nan, np.nan, -0.0, 0.0], dtype="float32")
    encoded = codec.encode(fixed(arr), s)
    assert [b is not None for b in inner_bytes(encoded, 2)] == [False, True]
    assert_identical(codec.decode(encoded, s).array, arr)
    payload = np.array([0x7FC00001, 0x7FC00000], dtype="u4").view("float32")
    encoded = codec.encode(fixed(np.concatenate([payload, payload])), s)
    assert_identical(codec.decode(encoded, s).array, np.concatenate([payload, payload]))
    assert all(b is not None for b in inner_bytes(encoded, 2))


def test_raw_bits_type_and_nonzero_fill():
    codec = sharding([2])
    s = spec((4,), "r16", [1, 2])
    arr = np.frombuffer(bytes([1, 2, 1, 2, 3, 4, 1, 2]), dtype="V2")
    encoded = codec.encode(fixed(arr), s)
    assert [b is not None for b in inner_bytes(encoded, 2)] == [False, True]
    assert codec.decode(encoded, s).array.tobytes() == arr.tobytes()
    empty = codec.decode(raw_index([(EMPTY, EMPTY)] * 2), s).array
    assert empty.tobytes() == bytes([1, 2]) * 4


def test_zero_dimensional_shard():
    codec = sharding([])
    s = spec((), "int32", 0)
    encoded = codec.encode(fixed(np.array(5, "int32")), s)
    assert len(encoded) == 4 + 20
    assert codec.decode(encoded, s).array[()] == 5
    assert codec.encode_or_none(fixed(np.array(0, "int32")), s) is None


def test_nested_round_trip():
    inner = {"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2], "codecs": [LE, ZSTD], "index_location": "start"}}
    codec = sharding([4, 4], [inner])
    s = spec((8, 12), "int64", -1)
    arr = np.full((8, 12), -1, "int64")
    arr[1:3, 5:11] = np.arange(12).reshape(2, 6)
    encoded = codec.encode(fixed(arr), s)
    assert_identical(codec.decode(encoded, s).array, arr)
    # Outer inner chunks (0, 1) and (0, 2) only.
    assert [b is not None for b in inner_bytes(encoded, 6)] == [False, True, True, False, False, False]


@pytest.mark.parametrize("fill", ["", "x"])
def test_strings_round_trip(fill):
    codec = sharding([2, 2], [{"name": "vlen-utf8"}])
    s = ChunkSpec((4, 4), STRING, fill)
    items = [fill] * 4 + ["a", fill, "ünï", "🙂"] + [fill, fill, "", "x"] + ["long " * 20, "b", "c", "d"]
    # Inner chunks are 2x2 blocks: shape the items so that block (0, 0) is all fill.
    arr = np.empty((4, 4), dtype=object)
    for k, (i, j) in enumerate(itertools.product(range(2), range(2))):
        arr[2 * i : 2 * i + 2, 2 * j : 2 * j + 2] = np.array(items[4 * k : 4 * k + 4], dtype=object).reshape(2, 2)
    chunk = strings(arr.reshape(-1).tolist(), (4, 4))
    encoded = codec.encode(chunk, s)
    stored = [b is not None for b in inner_bytes(encoded, 4)]
    assert stored == [False, True, True, True]
    back = codec.decode(encoded, s)
    assert as_strings(back).tolist() == arr.tolist()
    assert codec.encode_or_none(strings([fill] * 16, (4, 4)), s) is None


def test_bytes_data_round_trip_and_partial():
    bytes_type = DataType.from_json("variable_length_bytes")
    codec = sharding([2], [{"name": "vlen-bytes"}], index_location="start")
    s = ChunkSpec((6,), bytes_type, b"\x00")
    items = [b"\x00", b"\x00", b"", b"\xff\x00", b"\x00", b"abc"]
    chunk = ArrayBytes.from_bytes_list(items, (6,))
    shard = codec.encode(chunk, s)
    assert [b is not None for b in inner_bytes(shard, 3, "start")] == [False, True, True]
    assert codec.decode(shard, s).to_bytes_list() == items
    part = codec.partial_decoder(CountingReader(shard), s).decode_selection((np.array([5, 0, 3]),))
    assert part.to_bytes_list() == [b"abc", b"\x00", b"\xff\x00"]
    assert codec.index_nbytes(s) == 3 * 16 + 4


def test_encode_rejects_wrong_shapes_and_kinds():
    codec = sharding([2])
    with pytest.raises(CodecError, match=r"shard of shape \(2,\), expected \(4,\)"):
        codec.encode(fixed(np.zeros(2, "u2")), spec((4,)))
    with pytest.raises(CodecError, match="expected a fixed-size shard"):
        codec.encode(strings(["a"] * 4, (4,)), spec((4,)))
    with pytest.raises(CodecError, match="expected a variable-length shard"):
        sharding([2], [{"name": "vlen-utf8"}]).encode(fixed(np.zeros(4, "u2")), ChunkSpec((4,), STRING, ""))


# -- zarr-python and tensorstore -----------------------------------------------

zarr = pytest.importorskip("zarr")


def _zarr_array(path: Path, shape, inner, shard, dtype, fill, location="end", compressors=None):
    from zarr.storage import LocalStore

    return zarr.create_array(
        store=LocalStore(str(path)), shape=shape, chunks=inner,
        shards={"shape": shard, "index_location": location}, dtype=dtype,
        fill_value=fill, compressors=compressors,
    )


def _shard_file(path: Path, coords) -> Path:
    return path.joinpath("c", *map(str, coords))


@pytest.mark.integration
@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("compressors", [None, "zstd"])
def test_decode_shards_written_by_zarr_python(tmp_path, location, compressors):
    compress = None if compressors is None else [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
    shape, inner, shard = (10, 7), (2, 3), (4, 6)
    z = _zarr_array(tmp_path, shape, inner, shard, "float32", np.nan, location, compress)
    ref = np.full(shape, np.nan, "float32")
    ref[1:9, 2:6] = np.arange(32, dtype="float32").reshape(8, 4)  # shards partly filled
    z[1:9, 2:6] = ref[1:9, 2:6]
    cfg = json.loads((tmp_path / "zarr.json").read_text())["codecs"][0]
    codec = codec_from_json(cfg)
    assert codec.to_json() == cfg
    s = spec(shard, "float32", np.nan)
    seen = 0
    for coords in itertools.product(range(3), range(2)):
        file = _shard_file(tmp_path, coords)
        if not file.exists():
            continue
        seen += 1
        got = codec.decode(file.read_bytes(), s).array
        region = tuple(slice(c * n, min((c + 1) * n, m)) for c, n, m in zip(coords, shard, shape))
        expected = np.full(shard, np.nan, "float32")
        expected[tuple(slice(0, r.stop - r.start) for r in region)] = ref[region]
        assert_identical(got, expected)
    assert seen == 3  # shards (i, 1) hold only column 6, never written


@pytest.mark.integration
def test_decode_string_shard_written_by_zarr_python(tmp_path):
    from zarr.storage import LocalStore

    z = zarr.create_array(store=LocalStore(str(tmp_path)), shape=(5,), chunks=(2,), shards=(4,), dtype=str, compressors=None)
    z[:] = ["a", "", "ccc", "ünï", "e"]
    codec = codec_from_json(json.loads((tmp_path / "zarr.json").read_text())["codecs"][0])
    s = ChunkSpec((4,), STRING, "")
    assert as_strings(codec.decode(_shard_file(tmp_path, (0,)).read_bytes(), s)).tolist() == ["a", "", "ccc", "ünï"]
    assert as_strings(codec.decode(_shard_file(tmp_path, (1,)).read_bytes(), s)).tolist() == ["e", "", "", ""]


@pytest.mark.integration
@pytest.mark.parametrize("location", ["end", "start"])
def test_decode_shards_written_by_tensorstore(tmp_path, location):
    ts = pytest.importorskip("tensorstore")
    cfg = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [LE, ZSTD], "index_codecs": [LE, CRC], "index_location": location}}
    t = ts.open({
        "driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path) + "/"},
        "metadata": {"shape": [6, 4], "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
                     "data_type": "int32", "fill_value": -1, "codecs": [cfg]},
        "create": True,
    }).result()
    ref = np.full((6, 4), -1, "int32")
    ref[0:5, 1:3] = np.arange(10, dtype="int32").reshape(5, 2)
    t[0:5, 1:3] = ref[0:5, 1:3]
    codec = codec_from_json(json.loads((tmp_path / "zarr.json").read_text())["codecs"][0])
    s = spec((4, 4), "int32", -1)
    assert_identical(codec.decode(_shard_file(tmp_path, (0, 0)).read_bytes(), s).array, ref[0:4])
    second = codec.decode(_shard_file(tmp_path, (1, 0)).read_bytes(), s).array
    assert_identical(second[:2], ref[4:6])
    assert (second[2:] == -1).all()


@pytest.mark.integration
@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("codecs", [[LE], [LE, ZSTD], [{"name": "transpose", "configuration": {"order": [1, 0]}}, LE, CRC]])
def test_zarr_python_decodes_our_shards(tmp_path, location, codecs):
    from zarr.storage import LocalStore

    codec = sharding([2, 3], codecs, index_location=location)
    shape = (4, 6)
    z = zarr.create_array(store=LocalStore(str(tmp_path)), shape=shape, chunks=shape, serializer=codec.to_json(),
                          compressors=None, dtype="int16", fill_value=7)
    ref = np.full(shape, 7, "int16")
    ref[0:2, 3:6] = [[1, 2, 3], [4, 5, 6]]
    ref[3, 0] = -3
    _shard_file(tmp_path, (0, 0)).parent.mkdir(parents=True, exist_ok=True)
    _shard_file(tmp_path, (0, 0)).write_bytes(codec.encode(fixed(ref), spec(shape, "int16", 7)))
    np.testing.assert_array_equal(zarr.open_array(LocalStore(str(tmp_path)))[:], ref)
    assert_identical(z[:], ref)


@pytest.mark.integration
def test_zarr_python_decodes_our_nested_and_string_shards(tmp_path):
    from zarr.storage import LocalStore

    nested = sharding([4], [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}])
    z = zarr.create_array(store=LocalStore(str(tmp_path / "n")), shape=(8,), chunks=(8,), serializer=nested.to_json(),
                          compressors=None, dtype="uint8", fill_value=0)
    ref = np.array([0, 0, 0, 0, 0, 9, 0, 0], "uint8")
    _shard_file(tmp_path / "n", (0,)).parent.mkdir(parents=True)
    _shard_file(tmp_path / "n", (0,)).write_bytes(nested.encode(fixed(ref), spec((8,), "uint8")))
    np.testing.assert_array_equal(z[:], ref)

    text = sharding([2], [{"name": "vlen-utf8"}])
    z = zarr.create_array(store=LocalStore(str(tmp_path / "s")), shape=(4,), chunks=(4,), serializer=text.to_json(),
                          compressors=None, dtype=str, fill_value="")
    items = ["", "", "ünï", "x"]
    _shard_file(tmp_path / "s", (0,)).parent.mkdir(parents=True)
    _shard_file(tmp_path / "s", (0,)).write_bytes(text.encode(strings(items, (4,)), ChunkSpec((4,), STRING, "")))
    assert list(z[:]) == items


@pytest.mark.integration
def test_one_dimensional_shard_is_byte_identical_to_zarr_python(tmp_path):
    # In 1-D, zarr-python's morton order is C order, so the bytes must agree.
    z = _zarr_array(tmp_path, (12,), (3,), (12,), "uint32", 0)
    ref = np.array([1, 2, 3, 0, 0, 0, 7, 0, 0, 0, 0, 5], "uint32")
    z[:] = ref
    ours = sharding([3]).encode(fixed(ref), spec((12,), "uint32", 0))
    assert ours == _shard_file(tmp_path, (0,)).read_bytes()


# -- corrupt shards ------------------------------------------------------------


def _good_shard(location="end"):
    codec = sharding([2], index_location=location)
    s = spec((4,), "uint16")
    return codec, s, codec.encode(fixed(np.array([1, 2, 3, 4], "uint16")), s)


@pytest.mark.parametrize("location", ["end", "start"])
def test_truncated_shard(location):
    codec, s, shard = _good_shard(location)
    for n in (len(shard) - 1, 36, 10, 0):
        with pytest.raises(ChunkDecodeError):
            codec.decode(shard[:n], s)


def test_shard_shorter_than_index():
    codec, s, shard = _good_shard()
    with pytest.raises(ChunkDecodeError, match="shard of 35 bytes is shorter than its 36-byte index"):
        codec.decode(shard[-35:], s)


def test_index_crc_mismatch():
    codec, s, shard = _good_shard()
    bad = bytearray(shard)
    bad[-10] ^= 1
    with pytest.raises(ChecksumError, match="sharding_indexed.*checksum mismatch"):
        codec.decode(bytes(bad), s)


def test_inner_chunk_errors_name_the_inner_chunk():
    codec = sharding([2], [LE, CRC])
    s = spec((4,), "uint16")
    shard = bytearray(codec.encode(fixed(np.array([1, 2, 3, 4], "uint16")), s))
    shard[9] ^= 1  # inner chunk 1's data
    with pytest.raises(ChecksumError, match=r"sharding_indexed.*inner chunk \(1,\).*checksum"):
        codec.decode(bytes(shard), s)
    wrong_size = b"\x00" * 3 + raw_index([(0, 3), (EMPTY, EMPTY)])
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(0,\).*expected 4 bytes"):
        sharding([2]).decode(wrong_size, s)


@pytest.mark.parametrize(
    "entries, match",
    [
        ([(0, 4), (4, 100)], "past the end"),
        ([(0, 4), (2, 4)], "overlap"),
        ([(0, 4), (EMPTY, 4)], "half empty"),
        ([(0, 4), (4, EMPTY)], "half empty"),
        ([(0, 4), (6, 4)], "overlaps the index"),
    ],
)
def test_bad_index_entries(entries, match):
    shard = b"\x01" * 8 + raw_index(entries)
    with pytest.raises(ChunkDecodeError, match=match):
        sharding([2]).decode(shard, spec((4,), "uint16"))


def test_reads_gaps_and_any_order():
    # Inner chunks stored out of order with a gap between them decode fine.
    a, b = struct.pack("<2H", 1, 2), struct.pack("<2H", 3, 4)
    shard = b + b"\xee" * 5 + a + raw_index([(9, 4), (0, 4)])
    out = sharding([2]).decode(shard, spec((4,), "uint16")).array
    assert out.tolist() == [1, 2, 3, 4]
    assert read_entries(shard, 2) == [(9, 4), (0, 4)]
