"""Golden stores of the ``n5_default`` codec: N5 blocks by tensorstore, and the registry's example.

Writes ``spec-fixtures/n5-default/<name>/`` (``data.zarr/``, ``expected.npy``,
``fixture.json``):

- ``tensorstore_*``: tensorstore 0.1.86's ``n5`` driver writes an N5 dataset
  (``attributes.json`` and the blocks, boundary blocks padded); the
  generator adds the ``zarr.json`` the registry's mapping gives (shape =
  ``dimensions``, chunk shape = ``blockSize``, ``v2`` keys with ``/``, fill
  0, ``n5_default`` over ``transpose`` reversing every dimension, ``bytes``
  big-endian and the compression's codec: raw none, gzip ``gzip``, zstd
  ``zstd``, blosc ``blosc``). ``expected.npy`` is what tensorstore reads back.
- ``spec_truncated_blocks``: the ``tensorstore_raw_int16`` blocks with each
  boundary block cut to the array's edge and its header rewritten (what
  Java's N5 writes), by hand from the N5 block format.
- ``registry_zstd_array``: the registry's ``codecs/n5_default/examples/
  zstd_array`` (``zarr.json`` and ``attributes.json``, no blocks), copied
  verbatim from zarr-extensions; every element reads as the fill value 0.

Run: ``pip install tensorstore==0.1.86`` then ``python spec-fixtures/generate_n5.py``.
Deterministic: a second run leaves ``git status`` clean.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import struct
from pathlib import Path
from typing import Any

import numpy as np
import tensorstore as ts

ROOT = Path(__file__).resolve().parent / "n5-default"
OWN_TEST = "tests/codecs/test_new_codec_fixtures.py"
TS_VERSION = "0.1.86"

# zarr-extensions codecs/n5_default/examples/zstd_array (zarr.json at 01c5d90, attributes.json at 0cfffc7)
REGISTRY_ZARR_JSON = """{
  "zarr_format": 3,
  "node_type": "array",
  "shape": [
    256,
    128
  ],
  "data_type": "float32",
  "chunk_grid": {
    "name": "regular",
    "configuration": {
      "chunk_shape": [
        256,
        128
      ]
    }
  },
  "chunk_key_encoding": {
    "name": "v2",
    "configuration": {
      "separator": "/"
    }
  },
  "fill_value": 0,
  "codecs": [
    {
      "name": "n5_default",
      "configuration": {
        "codecs": [
          {
            "name": "transpose",
            "configuration": {
              "order": [
                1,
                0
              ]
            }
          },
          {
            "name": "bytes",
            "configuration": {
              "endian": "big"
            }
          },
          {
            "name": "zstd",
            "configuration": {
              "level": 0,
              "checksum": false
            }
          }
        ]
      }
    }
  ]
}"""
REGISTRY_ATTRIBUTES_JSON = """{
  "blockSize": [
    256,
    128
  ],
  "compression": {
    "level": 0,
    "type": "zstd"
  },
  "dataType": "float32",
  "dimensions": [
    256,
    128
  ]
}"""


def zarr_codec(compression: dict[str, Any]) -> dict[str, Any] | None:
    """The registry's table: the Zarr codec equal to an N5 compression."""
    kind = compression["type"]
    if kind == "raw":
        return None
    if kind == "gzip":
        assert not compression.get("useZlib"), "N5 gzip with useZlib is a zlib stream, not the gzip codec"
        return {"name": "gzip", "configuration": {"level": 6 if compression["level"] < 0 else compression["level"]}}
    if kind == "zstd":
        return {"name": "zstd", "configuration": {"level": compression["level"], "checksum": False}}
    if kind == "blosc":
        shuffle = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}[compression["shuffle"]]
        return {"name": "blosc", "configuration": {"cname": compression["cname"], "clevel": compression["clevel"],
                                                    "shuffle": shuffle, "typesize": compression["typesize"],
                                                    "blocksize": compression["blocksize"]}}
    raise AssertionError(kind)


def zarr_json(attrs: dict[str, Any], typesize: int) -> dict[str, Any]:
    ndim = len(attrs["dimensions"])
    compression = dict(attrs["compression"])
    compression.setdefault("typesize", typesize)
    bytes_codec: dict[str, Any] = {"name": "bytes"}
    if typesize > 1:
        bytes_codec["configuration"] = {"endian": "big"}
    inner = [{"name": "transpose", "configuration": {"order": list(range(ndim - 1, -1, -1))}}, bytes_codec]
    extra = zarr_codec(compression)
    if extra is not None:
        inner.append(extra)
    return {"zarr_format": 3, "node_type": "array", "shape": attrs["dimensions"], "data_type": attrs["dataType"],
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": attrs["blockSize"]}},
            "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "/"}}, "fill_value": 0,
            "codecs": [{"name": "n5_default", "configuration": {"codecs": inner}}]}


def fixture_doc(producer: str, description: str) -> dict[str, Any]:
    return {"producer": producer, "path": "data.zarr", "description": description, "node_type": "array",
            "own_test": OWN_TEST}


def tensorstore_fixture(name: str, data: np.ndarray, block: list[int], compression: dict[str, Any],
                        description: str, region: Any = ...) -> Path:
    fdir = ROOT / name
    shutil.rmtree(fdir, ignore_errors=True)
    store = fdir / "data.zarr"
    store.mkdir(parents=True)
    meta = {"dimensions": list(data.shape), "blockSize": block, "dataType": data.dtype.name, "compression": compression}
    arr = ts.open({"driver": "n5", "kvstore": {"driver": "file", "path": str(store)}, "metadata": meta,
                   "create": True}).result()
    arr[region] = data[region]
    back = arr.read().result()
    expected = np.zeros_like(data)
    expected[region] = data[region]
    assert back.tobytes() == expected.tobytes(), name
    attrs = json.loads((store / "attributes.json").read_text())
    (store / "zarr.json").write_text(json.dumps(zarr_json(attrs, data.dtype.itemsize), indent=2) + "\n")
    np.save(fdir / "expected.npy", back, allow_pickle=False)
    doc = fixture_doc(f"tensorstore {TS_VERSION} (n5 driver); zarr.json by hand from the registry", description)
    (fdir / "fixture.json").write_text(json.dumps(doc, indent=2) + "\n")
    return fdir


def truncate_blocks(source: Path, name: str) -> None:
    """Copy ``source`` (raw int16 blocks) with every boundary block cut to the array's edge."""
    fdir = ROOT / name
    shutil.rmtree(fdir, ignore_errors=True)
    shutil.copytree(source, fdir)
    store = fdir / "data.zarr"
    attrs = json.loads((store / "attributes.json").read_text())
    shape, block = attrs["dimensions"], attrs["blockSize"]
    for key in sorted(p for p in store.rglob("*") if p.is_file() and p.name[0].isdigit()):
        coords = [int(part) for part in key.relative_to(store).parts]
        raw = key.read_bytes()
        ndim = len(shape)
        values = np.frombuffer(raw[4 + 4 * ndim:], dtype=">i2").reshape(block[::-1])  # F order: last N5 dim outermost
        cut = [min(b, n - c * b) for n, b, c in zip(shape, block, coords)]
        if cut == block:
            continue
        kept = values[tuple(slice(0, k) for k in cut[::-1])]
        key.write_bytes(struct.pack(f">HH{ndim}I", 0, ndim, *cut) + np.ascontiguousarray(kept).tobytes())
    doc = fixture_doc("spec (blocks of tensorstore_raw_int16 cut by hand to the N5 block format)",
                      "int16 (5, 7), blocks (4, 4), raw: each boundary block truncated to the array's edge with its "
                      "header saying so, as Java's N5 writes them; readers pad them with the fill value")
    (fdir / "fixture.json").write_text(json.dumps(doc, indent=2) + "\n")


def registry_example() -> None:
    fdir = ROOT / "registry_zstd_array"
    shutil.rmtree(fdir, ignore_errors=True)
    (fdir / "data.zarr").mkdir(parents=True)
    (fdir / "data.zarr" / "zarr.json").write_text(REGISTRY_ZARR_JSON)
    (fdir / "data.zarr" / "attributes.json").write_text(REGISTRY_ATTRIBUTES_JSON)
    np.save(fdir / "expected.npy", np.zeros((256, 128), dtype="float32"), allow_pickle=False)
    doc = fixture_doc("zarr-extensions (codecs/n5_default/examples/zstd_array, copied verbatim)",
                      "the registry's example: float32 (256, 128), one block (256, 128), zstd level 0, no block "
                      "stored (every element is the fill value 0)")
    (fdir / "fixture.json").write_text(json.dumps(doc, indent=2) + "\n")


def main() -> None:
    assert importlib.metadata.version("tensorstore") == TS_VERSION
    raw = tensorstore_fixture("tensorstore_raw_int16", np.arange(35, dtype="int16").reshape(5, 7) - 17, [4, 4],
                              {"type": "raw"}, "int16 (5, 7), blocks (4, 4), raw; boundary blocks padded")
    tensorstore_fixture("tensorstore_gzip_uint8_3d", (np.arange(60) * 7 % 251).astype("uint8").reshape(3, 4, 5),
                        [2, 3, 2], {"type": "gzip"}, "uint8 (3, 4, 5), blocks (2, 3, 2), gzip (default level)")
    tensorstore_fixture("tensorstore_zstd_float64", np.linspace(-5, 5, 30).reshape(6, 5), [4, 2],
                        {"type": "zstd", "level": 3}, "float64 (6, 5), blocks (4, 2), zstd level 3; partly written",
                        region=(slice(0, 4), slice(None)))
    tensorstore_fixture("tensorstore_blosc_uint32", (np.arange(48, dtype="uint64") * 2654435761 % 2**32).astype("uint32").reshape(8, 6),
                        [3, 4], {"type": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
                        "uint32 (8, 6), blocks (3, 4), blosc lz4 clevel 5 shuffle")
    truncate_blocks(raw, "spec_truncated_blocks")
    registry_example()
    print(f"wrote fixtures to {ROOT}")


if __name__ == "__main__":
    main()
