"""Read the stores zarrs wrote with codecs zarr-python does not know
(``spec-fixtures/zarrs-codecs/``, ``spec-fixtures/generate_zarrs_codecs.py``),
and write the same chunk bytes.

Each fixture's chunks were encoded by the Rust zarrs crate (zarrs-python's
pipeline); zarrpy must read ``expected.npy`` bit for bit, and encoding each
chunk of that data with the codecs named in ``zarr.json`` must give the bytes
zarrs stored (every codec here is deterministic; pcodec too, for the pcodec
version zarrs links and the one installed here).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.dtypes import DataType

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2] / "spec-fixtures" / "zarrs-codecs"
FIXTURES = sorted(p.parent for p in ROOT.glob("*/fixture.json"))
EXPECTED_NAMES = {
    "packbits_bool", "packbits_bool_first_byte", "packbits_complex64_last_byte", "packbits_float32",
    "packbits_int16_bits_2_12", "packbits_uint8_3bits", "pcodec_float64", "reshape_merge_int16",
    "reshape_split_auto_float32", "squeeze_uint16",
}  # fmt: skip


def test_every_fixture_is_there():
    assert {p.name for p in FIXTURES} == EXPECTED_NAMES


@pytest.mark.parametrize("fdir", FIXTURES, ids=lambda p: p.name)
def test_zarrpy_reads_what_zarrs_wrote(fdir: Path):
    expected = np.load(fdir / "expected.npy", allow_pickle=False)
    got = zarrpy.open_array(str(fdir / "data.zarr"))[...]
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("fdir", FIXTURES, ids=lambda p: p.name)
def test_zarrpy_encodes_the_bytes_zarrs_wrote(fdir: Path):
    meta = json.loads((fdir / "data.zarr" / "zarr.json").read_text())
    expected = np.load(fdir / "expected.npy", allow_pickle=False)
    chunk_shape = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    dtype = DataType.from_json(meta["data_type"])
    spec = ChunkSpec(chunk_shape, dtype, dtype.fill_from_json(meta["fill_value"]))
    bound = CodecChain([codec_from_json(c) for c in meta["codecs"]]).bind(spec)
    grid = [range(-(-n // c)) for n, c in zip(expected.shape, chunk_shape)]
    for coords in itertools.product(*grid):
        region = tuple(slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(coords, chunk_shape, expected.shape))
        chunk = np.full(chunk_shape, spec.fill_value, dtype=dtype.numpy)
        chunk[tuple(slice(0, r.stop - r.start) for r in region)] = expected[region]
        stored = (fdir / "data.zarr" / "c" / "/".join(map(str, coords))).read_bytes()
        assert bound.encode(ArrayBytes.from_array(chunk)) == stored, f"chunk {coords}"
        assert bound.decode(stored).array.tobytes() == chunk.tobytes(), f"chunk {coords}"
