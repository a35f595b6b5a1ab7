"""Golden stores of integer ``bitround``, written by zarrs.

Writes ``spec-fixtures/zarrs-bitround/<name>/`` (``data.zarr/``,
``expected.npy``, ``fixture.json``): metadata and chunks by the Rust zarrs
crate through zarrista 0.1.0 (zarrs-python 0.2.3 leaves bitround out of its
build; see ``generate_zarrs_codecs.py``). Each array's metadata is the JSON
zarrs' ``ArrayBuilder`` makes with ``bitround`` put first in its codecs; the
data goes in with one ``store_array_subset`` call, and ``expected.npy`` is
what zarrs reads back.

``bitround_uint8`` is the registry's own sample (``codecs/bitround/
sample_data``, ``bitround_uint8.zarr``: keepbits 3 over ``0 1 10 11 100 123
200 208 209 255``); the sample's store files are not reachable from here, so
zarrs writes its "Original" column and the generator checks that zarrs reads
back the registry's "Rounded" column, value for value.

Run: ``pip install zarrista==0.1.0`` then ``python spec-fixtures/generate_zarrs_bitround.py``.
Deterministic: a second run leaves ``git status`` clean.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import zarrista as zt
from zarrista.store import FilesystemStore

ROOT = Path(__file__).resolve().parent / "zarrs-bitround"
PRODUCER = "zarrs 0.23.13 through zarrista 0.1.0"
OWN_TEST = "tests/codecs/test_new_codec_fixtures.py"
REGISTRY_ORIGINAL = [0, 1, 10, 11, 100, 123, 200, 208, 209, 255]
REGISTRY_ROUNDED = [0, 1, 10, 12, 96, 128, 192, 192, 224, 224]


def write(name: str, values: np.ndarray, chunks: tuple[int, ...], keepbits: int, fill: int, description: str,
          compressor: dict[str, Any] | None = None) -> np.ndarray:
    fdir = ROOT / name
    shutil.rmtree(fdir, ignore_errors=True)
    (fdir / "data.zarr").mkdir(parents=True)
    dtype = values.dtype
    grid = zt.ChunkGrid.regular(list(values.shape), chunk_shape=list(chunks))
    fill_bytes = np.array(fill, dtype=dtype).astype(dtype.newbyteorder("<")).tobytes()
    meta = dict(zt.ArrayBuilder(grid, zt.DataType.from_string(dtype.name), zt.FillValue(fill_bytes)).create_metadata())
    meta["codecs"] = [{"name": "bitround", "configuration": {"keepbits": keepbits}}, *meta["codecs"]]
    if compressor is not None:
        meta["codecs"].append(compressor)
    array = zt.Array.from_metadata(meta, FilesystemStore(str(fdir / "data.zarr")), "/")
    array.store_metadata()
    array.store_array_subset(array.subset_all, zt.ArrayBytes(np.ascontiguousarray(values).tobytes()))
    back = zt.Array.open(FilesystemStore(str(fdir / "data.zarr")), "/")[...]
    got = np.frombuffer(bytes(memoryview(back.buffer())), dtype=dtype).reshape(values.shape)
    np.save(fdir / "expected.npy", got, allow_pickle=False)
    doc = {"producer": PRODUCER, "path": "data.zarr", "description": description, "node_type": "array",
           "keepbits": keepbits, "own_test": OWN_TEST}
    (fdir / "fixture.json").write_text(json.dumps(doc, indent=2) + "\n")
    return got


def main() -> None:
    assert zt.__version__ == "0.1.0", zt.__version__
    rng = np.random.default_rng(20261202)
    got = write("bitround_uint8", np.array(REGISTRY_ORIGINAL, dtype="uint8"), (10,), 3, 0,
                "the registry's bitround_uint8 sample: uint8 (10,), one chunk, keepbits 3; zarrs wrote the "
                "sample's Original column and reads back its Rounded column")
    assert got.tolist() == REGISTRY_ROUNDED, got.tolist()
    write("int16_negative", rng.integers(-32768, 32767, (6, 9), endpoint=True).astype("int16"), (4, 4), 5, 0,
          "int16 (6, 9), chunks (4, 4), keepbits 5: negative values round as their two's complement bits "
          "(zarrs reads every element's bits as unsigned)")
    write("uint32_saturating", np.concatenate([np.array([0, 1, 2**32 - 1, 2**31 + 2**30 + 2**29 + 1], dtype="uint32"),
                                               rng.integers(0, 2**32, 20, dtype="uint64").astype("uint32")]),
          (8,), 2, 0, "uint32 (24,), chunks (8,), keepbits 2; includes 2**32 - 1, whose rounding saturates")
    write("int64_zstd_fill", rng.integers(-2**62, 2**62, (5, 5), dtype="int64"), (3, 3), 11, 1000,
          "int64 (5, 5), chunks (3, 3), fill 1000, keepbits 11, zstd level 3 after bytes",
          compressor={"name": "zstd", "configuration": {"level": 3, "checksum": False}})
    write("uint64_keepbits_64", rng.integers(0, 2**64, 7, dtype="uint64"), (4,), 64, 0,
          "uint64 (7,), chunks (4,), keepbits 64 (no bit dropped: the identity)")
    print(f"wrote fixtures to {ROOT}")


if __name__ == "__main__":
    main()
