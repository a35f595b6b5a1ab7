"""Golden stores of zarrs' ``zarrs.default_suffix`` chunk key encoding.

Writes ``spec-fixtures/zarrs-key-encodings/<name>/`` (``data.zarr/``,
``expected.npy``, ``fixture.json``). Every store -- metadata and chunks -- is
written by the Rust zarrs crate (0.23.13) through zarrista 0.1.0 (PyPI
``zarrista``): the metadata zarrs' own ``ArrayBuilder`` makes, with the chunk
key encoding set to ``{"name": "zarrs.default_suffix", "configuration":
{"separator": ..., "suffix": ...}}`` (zarrs' definition: the ``default``
encoding with ``suffix`` after every key, ``c<suffix>`` for a 0-d array;
``separator`` defaults to ``/``), and the data stored with one
``Array.store_array_subset`` call (zarrs drops chunks equal to the fill
value). Each store is read back through zarrista and must equal the data.

``fixture.json["keys"]`` lists the chunk keys zarrs stored (sorted), and
``fixture.json["bytes_identical"]`` says the chunks are deterministic
(``bytes`` and ``crc32c`` only), so a writer given the same metadata and
data must store the same bytes under the same keys.

Run: ``pip install zarrista==0.1.0`` then
``python spec-fixtures/generate_zarrs_key_encodings.py``. Deterministic: a
second run leaves ``git status`` clean.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import zarrista as zt
from zarrista.store import FilesystemStore

ROOT = Path(__file__).resolve().parent / "zarrs-key-encodings"
PRODUCER = "zarrs 0.23.13 through zarrista 0.1.0"
NAME = "zarrs.default_suffix"


def metadata(shape: tuple[int, ...], chunks: tuple[int, ...], dtype: str, fill: bytes,
             encoding: dict[str, Any], shards_of: tuple[int, ...] | None = None) -> dict[str, Any]:
    """zarrs' ArrayBuilder metadata (default codecs), with ``encoding`` as the
    chunk key encoding; with ``shards_of``, the chunks are shards of inner
    chunks of that shape (bytes inside, bytes + crc32c index at the end)."""
    grid = zt.ChunkGrid.regular(list(shape), chunk_shape=list(chunks))
    meta = dict(zt.ArrayBuilder(grid, zt.DataType.from_metadata(dtype), zt.FillValue(fill)).create_metadata())
    meta["chunk_key_encoding"] = encoding
    if shards_of is not None:
        meta["codecs"] = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(shards_of), "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]
    return meta


def write(name: str, meta: dict[str, Any], values: np.ndarray, description: str,
          extra: dict[str, Any] | None = None) -> None:
    fdir = ROOT / name
    shutil.rmtree(fdir, ignore_errors=True)
    store = fdir / "data.zarr"
    store.mkdir(parents=True)
    array = zt.Array.from_metadata(meta, FilesystemStore(str(store)), "/")
    array.store_metadata()
    array.store_array_subset(array.subset_all, zt.ArrayBytes(np.ascontiguousarray(values).tobytes()))
    back = zt.Array.open(FilesystemStore(str(store)), "/")[...]
    got = np.frombuffer(back.buffer(), dtype=values.dtype).reshape(values.shape)
    assert np.array_equal(got, values), f"{name}: zarrs reads back other data"
    keys = sorted(
        str(Path(root, f).relative_to(store)).replace(os.sep, "/")
        for root, _, files in os.walk(store) for f in files if f != "zarr.json"
    )
    stored = json.loads((store / "zarr.json").read_text())
    np.save(fdir / "expected.npy", values, allow_pickle=False)
    fixture = {
        "producer": PRODUCER, "path": "data.zarr", "description": description, "node_type": "array",
        "zarr_format": 3, "keys": keys, "bytes_identical": True,
        "fill_value_check": {"json": stored["fill_value"],
                             "raw_le_hex": np.asarray(stored["fill_value"], values.dtype).astype(
                                 values.dtype.newbyteorder("<")).tobytes().hex()},
        **(extra or {}),
    }
    (fdir / "fixture.json").write_text(json.dumps(fixture, indent=2) + "\n")


def main() -> None:
    # 1. separator left out (zarrs' default "/"), a fill chunk that zarrs leaves out, edge chunks
    values = (np.arange(35, dtype="<i2").reshape(5, 7) - 17) * 3
    values[:2, :3] = 0
    write("default_suffix_slash_int16",
          metadata((5, 7), (2, 3), "int16", b"\x00\x00", {"name": NAME, "configuration": {"suffix": ".bin"}}),
          values, "int16 (5, 7), chunks (2, 3), zarrs.default_suffix with suffix '.bin' and no separator given "
          "(zarrs' default '/'): keys c/i/j.bin; chunk (0, 0) holds only the fill value and is not stored",
          extra={"chunks": [2, 3], "shards": None})

    # 2. separator "." (the suffix then reads like one more part), float32, fill 1.5
    values = np.linspace(-2, 2, 24, dtype="<f4").reshape(4, 6)
    write("default_suffix_dot_float32",
          metadata((4, 6), (3, 4), "float32", np.float32(1.5).tobytes(),
                   {"name": NAME, "configuration": {"separator": ".", "suffix": ".tif"}}),
          values, "float32 (4, 6), chunks (3, 4), zarrs.default_suffix with separator '.' and suffix '.tif': "
          "keys c.i.j.tif", extra={"chunks": [3, 4], "shards": None})

    # 3. a 0-d array: the key is "c" and the suffix
    values = np.array(201, dtype="u1")
    write("default_suffix_0d_uint8",
          metadata((), (), "uint8", b"\x00", {"name": NAME, "configuration": {"separator": "/", "suffix": ".raw"}}),
          values, "uint8 0-d, zarrs.default_suffix with suffix '.raw': its one chunk's key is c.raw",
          extra={"chunks": [], "shards": None})

    # 4. shards under suffixed keys
    values = (np.arange(70, dtype="<u2").reshape(7, 10) * 11) % 97
    values[:4, :6] = 0  # shard (0, 0) all fill: not stored
    values[4:6, 6:9] = 0  # an inner chunk all fill: left out of its shard
    write("default_suffix_sharded_uint16",
          metadata((7, 10), (4, 6), "uint16", b"\x00\x00",
                   {"name": NAME, "configuration": {"separator": "/", "suffix": ".shard"}}, shards_of=(2, 3)),
          values, "uint16 (7, 10), shards (4, 6) of inner chunks (2, 3), zarrs.default_suffix with suffix "
          "'.shard': keys c/i/j.shard; shard (0, 0) all fill (not stored), one inner chunk all fill",
          extra={"chunks": [2, 3], "shards": [4, 6]})


if __name__ == "__main__":
    main()
