"""Read the golden stores of cast_value, scale_offset, integer bitround,
n5_default and conditional bit for bit, and write their chunks again.

Fixtures (each with its generator in ``spec-fixtures/``):

- ``zarr-python-codecs/``: written by zarr-python 3.4.2 (``generate_cast_scale.py``);
- ``zarrs-bitround/``: written by zarrs through zarrista (``generate_zarrs_bitround.py``),
  ``bitround_uint8`` being the registry's own sample;
- ``n5-default/``: N5 blocks by tensorstore's n5 driver, one truncated by
  hand, and the registry's example (``generate_n5.py``);
- ``conditional/``: made by hand from the specification (``generate_conditional.py``).

zarrpy must read every ``expected.npy`` bit for bit, whole and by regions
(partial decoders included); encoding each chunk of that data with the
codecs in ``zarr.json`` must give the producer's bytes (after undoing a
compressor, whose bytes depend on the library build).
"""

from __future__ import annotations

import itertools
import json
import zlib
from pathlib import Path

import numpy as np
import pytest
import zstandard

import zarrpy
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.conditional import ConditionalCodec
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.dtypes import DataType

ROOT = Path(__file__).resolve().parents[2] / "spec-fixtures"
DIRS = ("zarr-python-codecs", "zarrs-bitround", "n5-default", "conditional")
EXPECTED = {
    "zarr-python-codecs": {"cast_value_float64_uint8_clamp_map", "cast_value_int32_int8_wrap",
                           "cast_value_float32_float16_nearest_even", "cast_value_uint16_float32_sharded",
                           "scale_offset_cast_value_float32_int16", "scale_offset_int32", "scale_offset_float64_default"},
    "zarrs-bitround": {"bitround_uint8", "int16_negative", "uint32_saturating", "int64_zstd_fill", "uint64_keepbits_64"},
    "n5-default": {"tensorstore_raw_int16", "tensorstore_gzip_uint8_3d", "tensorstore_zstd_float64",
                   "tensorstore_blosc_uint32", "spec_truncated_blocks", "registry_zstd_array"},
    "conditional": {"gzip_crc32c_masks", "crc32c_header_16"},
}  # fmt: skip
FIXTURES = sorted(p.parent for d in DIRS for p in (ROOT / d).glob("*/fixture.json"))


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


def test_every_fixture_is_there_with_its_generator():
    for d, names in EXPECTED.items():
        assert {p.name for p in (ROOT / d).iterdir()} == names, d
    for script in ("generate_cast_scale.py", "generate_zarrs_bitround.py", "generate_n5.py", "generate_conditional.py"):
        assert (ROOT / script).is_file()
    for fdir in FIXTURES:
        doc = json.loads((fdir / "fixture.json").read_text())
        assert doc["own_test"] == "tests/codecs/test_new_codec_fixtures.py"


@pytest.mark.parametrize("fdir", FIXTURES, ids=_id)
def test_zarrpy_reads_the_fixture_bit_for_bit(fdir: Path):
    expected = np.load(fdir / "expected.npy", allow_pickle=False)
    arr = zarrpy.open_array(str(fdir / "data.zarr"), mode="r")
    got = arr[...]
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()
    # regions across chunk boundaries, and single elements (the partial decoders)
    if expected.ndim and expected.size:
        region = tuple(slice(n // 3, max(n // 3 + 1, n - 1)) for n in expected.shape)
        assert arr[region].tobytes() == np.ascontiguousarray(expected[region]).tobytes()
        last = tuple(n - 1 for n in expected.shape)
        assert arr[last].tobytes() == expected[last].tobytes()


def test_the_registry_bitround_uint8_sample_reads_as_its_table():
    got = zarrpy.open_array(str(ROOT / "zarrs-bitround" / "bitround_uint8" / "data.zarr"))[...]
    assert got.tolist() == [0, 1, 10, 12, 96, 128, 192, 192, 224, 224]


def _chunks(meta: dict) -> tuple[int, ...]:
    return tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])


def _key(meta: dict, coords: tuple[int, ...]) -> str:
    enc = meta["chunk_key_encoding"]
    sep = enc.get("configuration", {}).get("separator", "/" if enc["name"] == "default" else ".")
    parts = [str(c) for c in coords] or ["0"]
    return ("c" + sep if enc["name"] == "default" else "") + sep.join(parts)


def _strip(data: bytes, codecs: list[dict]) -> bytes:
    """Undo a trailing compressor (its bytes depend on the build), keep everything else."""
    name = codecs[-1]["name"] if codecs else None
    if name == "zstd":
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    if name == "gzip":
        return zlib.decompress(data, 31)
    return data


def _unsharded(fdir: Path) -> bool:
    meta = json.loads((fdir / "data.zarr" / "zarr.json").read_text())
    return meta["codecs"][0]["name"] != "sharding_indexed"  # shard layouts are the sharding tests' concern


@pytest.mark.parametrize(
    "fdir", [f for f in FIXTURES if f.parent.name in ("zarr-python-codecs", "zarrs-bitround") and _unsharded(f)], ids=_id
)
def test_zarrpy_writes_the_producers_chunks(fdir: Path):
    meta = json.loads((fdir / "data.zarr" / "zarr.json").read_text())
    expected = np.load(fdir / "expected.npy", allow_pickle=False)
    dtype = DataType.from_json(meta["data_type"])
    chunks = _chunks(meta)
    spec = ChunkSpec(chunks, dtype, dtype.fill_from_json(meta["fill_value"]))
    bound = CodecChain([codec_from_json(c) for c in meta["codecs"]]).bind(spec)
    fill = np.asarray(spec.fill_value, dtype=dtype.numpy)
    for coords in itertools.product(*(range(-(-n // c)) for n, c in zip(expected.shape, chunks))):
        path = fdir / "data.zarr" / _key(meta, coords)
        if not path.is_file():
            continue
        block = np.full(chunks, fill, dtype=dtype.numpy)
        region = tuple(slice(c * s, min((c + 1) * s, n)) for c, s, n in zip(coords, chunks, expected.shape))
        block[tuple(slice(0, r.stop - r.start) for r in region)] = expected[region]
        ours = bound.encode(ArrayBytes.from_array(block))
        codecs = meta["codecs"]
        # (zarrs rounds the fill elements of an edge chunk too, as data: so does zarrpy)
        assert _strip(ours, codecs) == _strip(path.read_bytes(), codecs), coords


@pytest.mark.parametrize("fdir", [f for f in FIXTURES if f.parent.name == "n5-default" and "tensorstore" in f.name], ids=_id)
def test_zarrpy_writes_tensorstores_n5_blocks(fdir: Path):
    meta = json.loads((fdir / "data.zarr" / "zarr.json").read_text())
    expected = np.load(fdir / "expected.npy", allow_pickle=False)
    dtype = DataType.from_json(meta["data_type"])
    chunks = _chunks(meta)
    n5 = meta["codecs"][0]["configuration"]["codecs"]
    bound = CodecChain([codec_from_json(c) for c in meta["codecs"]]).bind(ChunkSpec(chunks, dtype, dtype.default_fill()))
    for coords in itertools.product(*(range(-(-n // c)) for n, c in zip(expected.shape, chunks))):
        path = fdir / "data.zarr" / "/".join(map(str, coords))
        if not path.is_file():
            continue
        block = np.zeros(chunks, dtype=dtype.numpy)
        region = tuple(slice(c * s, min((c + 1) * s, n)) for c, s, n in zip(coords, chunks, expected.shape))
        block[tuple(slice(0, r.stop - r.start) for r in region)] = expected[region]
        ours, theirs = bound.encode(ArrayBytes.from_array(block)), path.read_bytes()
        header = 4 + 4 * len(chunks)
        assert ours[:header] == theirs[:header]
        if n5[-1]["name"] == "blosc":  # blosc frames differ by build: compare what they hold
            assert bound.decode(ours).array.tobytes() == bound.decode(theirs).array.tobytes()
        else:
            assert _strip(ours[header:], n5) == _strip(theirs[header:], n5)


@pytest.mark.parametrize("fdir", [f for f in FIXTURES if f.parent.name == "conditional"], ids=_id)
def test_zarrpy_writes_the_conditional_chunks_given_their_masks(fdir: Path):
    doc = json.loads((fdir / "fixture.json").read_text())
    meta = json.loads((fdir / "data.zarr" / "zarr.json").read_text())
    expected = np.load(fdir / "expected.npy", allow_pickle=False)
    dtype = DataType.from_json(meta["data_type"])
    chunks = _chunks(meta)
    cond = codec_from_json(meta["codecs"][1])
    assert isinstance(cond, ConditionalCodec)
    for key, mask in doc["masks"].items():
        coords = tuple(int(p) for p in key.split("/")[1:])
        codec = cond.with_decision(lambda i, c, data, enc, mask=mask: bool(mask >> i & 1))
        bound = CodecChain([codec_from_json(meta["codecs"][0]), codec]).bind(ChunkSpec(chunks, dtype, dtype.default_fill()))
        block = np.zeros(chunks, dtype=dtype.numpy)
        region = tuple(slice(c * s, min((c + 1) * s, n)) for c, s, n in zip(coords, chunks, expected.shape))
        block[tuple(slice(0, r.stop - r.start) for r in region)] = expected[region]
        ours, theirs = bound.encode(ArrayBytes.from_array(block)), (fdir / "data.zarr" / key).read_bytes()
        if mask & 1 and cond.codecs[0].name == "gzip":  # gzip bytes depend on the deflate build
            assert ours[0] == theirs[0] and bound.decode(ours).array.tobytes() == bound.decode(theirs).array.tobytes()
        else:
            assert ours == theirs, key
