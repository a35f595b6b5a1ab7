"""Golden stores of the ``conditional`` codec, made by hand from its specification.

No implementation of ``conditional`` (zarr-extensions #27) exists besides
zarrpy's, so this script builds the stores itself, without zarrpy: chunks
are ``bytes`` (little-endian) elements, then the conditional header
(``header_bits / 8`` bytes, bit ``i`` = nested codec ``i`` applied, bit 0
the lowest bit of the first byte) and the data after the chosen codecs
(``crc32c`` appends the little-endian CRC32C of what it gets; ``gzip`` is a
gzip member with MTIME 0). Each chunk picks its own mask, so one array holds
chunks with no codec, each one alone, and both.

Writes ``spec-fixtures/conditional/<name>/`` (``data.zarr/``, ``expected.npy``,
``fixture.json`` with ``masks``: chunk key -> header mask).
Run: ``python spec-fixtures/generate_conditional.py`` (needs google-crc32c).
Deterministic: a second run leaves ``git status`` clean.
"""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
from pathlib import Path
from typing import Any, Callable

import google_crc32c
import numpy as np

ROOT = Path(__file__).resolve().parent / "conditional"
OWN_TEST = "tests/codecs/test_new_codec_fixtures.py"


def crc32c(data: bytes) -> bytes:
    return data + google_crc32c.value(data).to_bytes(4, "little")


def gzip5(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=5, mtime=0)


NESTED: dict[str, tuple[dict[str, Any], Callable[[bytes], bytes]]] = {
    "gzip": ({"name": "gzip", "configuration": {"level": 5}}, gzip5),
    "crc32c": ({"name": "crc32c"}, crc32c),
}


def build(name: str, data: np.ndarray, chunks: tuple[int, ...], nested: list[str], header_bits: int | None,
          masks: list[int], description: str) -> None:
    fdir = ROOT / name
    shutil.rmtree(fdir, ignore_errors=True)
    store = fdir / "data.zarr"
    store.mkdir(parents=True)
    config: dict[str, Any] = {"codecs": [NESTED[n][0] for n in nested]}
    if header_bits is not None:
        config["header_bits"] = header_bits
    nbytes = (header_bits if header_bits is not None else -(-len(nested) // 8) * 8) // 8
    meta = {"zarr_format": 3, "node_type": "array", "shape": list(data.shape), "data_type": data.dtype.name,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "conditional", "configuration": config}],
            "attributes": {}}
    (store / "zarr.json").write_text(json.dumps(meta, indent=2) + "\n")
    grid = [range(-(-n // c)) for n, c in zip(data.shape, chunks)]
    used = {}
    for i, coords in enumerate(itertools.product(*grid)):
        block = np.zeros(chunks, dtype=data.dtype)
        region = tuple(slice(c * s, min((c + 1) * s, n)) for c, s, n in zip(coords, chunks, data.shape))
        part = data[region]
        block[tuple(slice(0, k) for k in part.shape)] = part
        raw = block.astype(data.dtype.newbyteorder("<")).tobytes()
        mask = masks[i % len(masks)]
        for bit, nested_name in enumerate(nested):
            if mask >> bit & 1:
                raw = NESTED[nested_name][1](raw)
        key = "c/" + "/".join(map(str, coords))
        path = store / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(mask.to_bytes(nbytes, "little") + raw)
        used[key] = mask
    np.save(fdir / "expected.npy", data, allow_pickle=False)
    doc = {"producer": "spec (by hand from zarr-extensions #27)", "path": "data.zarr", "description": description,
           "node_type": "array", "masks": used, "own_test": OWN_TEST}
    (fdir / "fixture.json").write_text(json.dumps(doc, indent=2) + "\n")


def main() -> None:
    build("gzip_crc32c_masks", (np.arange(48, dtype="int32") * 37 - 500).reshape(6, 8), (3, 4), ["gzip", "crc32c"], None,
          [0, 1, 2, 3], "int32 (6, 8), chunks (3, 4); conditional over gzip (bit 0) and crc32c (bit 1), default "
          "header_bits (8); the four chunks have masks 0 (raw), 1 (gzip), 2 (crc32c), 3 (gzip then crc32c)")
    build("crc32c_header_16", np.linspace(-1, 1, 10).astype("float32"), (4,), ["crc32c"], 16, [1, 0],
          "float32 (10,), chunks (4,); conditional over crc32c with header_bits 16 (two header bytes, the "
          "reserved bits 0); masks alternate 1, 0")
    print(f"wrote fixtures to {ROOT}")


if __name__ == "__main__":
    main()
