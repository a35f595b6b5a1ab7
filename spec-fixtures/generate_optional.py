"""Golden stores of zarrs' ``zarrs.optional`` (nullable) data type and codec.

Writes ``spec-fixtures/zarrs-optional/<name>/`` (``data.zarr/``,
``expected.npy``, ``expected_mask.npy``, ``fixture.json``). Every store --
metadata and chunks -- is written by the Rust zarrs crate (0.23.13) through
zarrista 0.1.0 (PyPI ``zarrista``, Python bindings of zarrs that take and
give chunks as data + validity mask). zarrs-python 0.2.3 cannot do it: its
zarrs (0.23.8) knows the type and codec, but its pipeline hands zarrs plain
numpy buffers, which zarrs refuses for an optional type ("Used non-optional
array bytes with an optional data type"), and zarr-python has no such type.

Each array's metadata is the JSON zarrs' own ``ArrayBuilder`` makes
(:func:`builder_metadata`), with the codecs changed where a fixture says so;
the data is stored with one ``Array.store_array_subset(ArrayBytes(values,
mask=...))`` call (zarrs pads edge chunks with the fill value and drops
chunks equal to it, as by default), and each store
is read back through zarrista and must equal the data.

``expected.npy`` holds the values (zero where missing; numpy ``U`` for
strings, ``S`` for bytes), ``expected_mask.npy`` the mask in numpy's masked
array convention (True = missing).
Nested optional types (zarrs writes them; see ``zarrpy.codecs.optional``)
have no fixture: zarrista takes one mask per chunk and so cannot hand zarrs
a nested chunk. ``plain_bytes`` is not optional: zarrs' ``bytes`` data type name for
variable-length bytes (values also in ``fixture.json["expected_values"]``,
hex).

Run: ``pip install zarrista==0.1.0`` then ``python spec-fixtures/generate_optional.py``.
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

ROOT = Path(__file__).resolve().parent / "zarrs-optional"
PRODUCER = "zarrs 0.23.13 through zarrista 0.1.0"
PACKBITS_BYTES = {"mask_codecs": [{"name": "packbits"}],
                  "data_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}


def optional(inner: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(inner, str):
        inner = {"name": inner, "configuration": {}}
    return {"name": "zarrs.optional", "configuration": inner}


def builder_metadata(shape: list[int], chunks: list[int], data_type: dict[str, Any], fill: bytes) -> dict[str, Any]:
    """The metadata zarrs' ArrayBuilder makes (default codecs), from the fill value's zarrs bytes."""
    grid = zt.ChunkGrid.regular(shape, chunk_shape=chunks)
    return dict(zt.ArrayBuilder(grid, zt.DataType.from_metadata(data_type), zt.FillValue(fill)).create_metadata())


def masks(rng: np.random.Generator, shape: tuple[int, ...], chunks: tuple[int, ...]) -> np.ndarray:
    """A random validity mask (True = present) with chunk 0 all missing and the last chunk all present."""
    valid = rng.random(shape) < 0.6
    first = tuple(slice(0, c) for c in chunks)
    last = tuple(slice((-(-n // c) - 1) * c, n) for n, c in zip(shape, chunks))
    valid[first] = False
    valid[last] = True
    return valid


def write(name: str, meta: dict[str, Any], values: np.ndarray, valid: np.ndarray, description: str,
          store: Any = None, extra: dict[str, Any] | None = None) -> None:
    fdir = ROOT / name
    shutil.rmtree(fdir, ignore_errors=True)
    (fdir / "data.zarr").mkdir(parents=True)
    array = zt.Array.from_metadata(meta, FilesystemStore(str(fdir / "data.zarr")), "/")
    array.store_metadata()
    # the whole array in one call: zarrs itself pads edge chunks (with the fill value) and drops fill chunks
    (store or store_fixed)(array, array.subset_all, values, valid)
    np.save(fdir / "expected_mask.npy", ~valid, allow_pickle=False)
    fixture = {"producer": PRODUCER, "path": "data.zarr", "description": description, "node_type": "array",
               "mask": "expected_mask.npy: True = missing (numpy.ma convention)",
               "own_test": "tests/integration/test_zarrs_optional.py", **(extra or {})}
    (fdir / "fixture.json").write_text(json.dumps(fixture, indent=2) + "\n")


def store_fixed(array: Any, region: Any, values: np.ndarray, valid: np.ndarray) -> None:
    data = np.where(valid, values, np.zeros((), values.dtype))
    array.store_array_subset(region, zt.ArrayBytes(np.ascontiguousarray(data).tobytes(), mask=valid.astype(np.uint8).tobytes()))


def store_variable(array: Any, region: Any, values: np.ndarray, valid: np.ndarray) -> None:
    items = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values.reshape(-1)]
    items = [v if ok else b"" for v, ok in zip(items, valid.reshape(-1))]
    offsets = np.concatenate([[0], np.cumsum([len(v) for v in items])]).tolist()
    array.store_array_subset(region, zt.ArrayBytes(b"".join(items), mask=valid.astype(np.uint8).tobytes(), offsets=offsets))


def read_back(name: str) -> Any:
    return zt.Array.open(FilesystemStore(str(ROOT / name / "data.zarr")), "/")[...]


def check_fixed(name: str, values: np.ndarray, valid: np.ndarray) -> None:
    got = read_back(name)
    assert np.array_equal(np.asarray(got.mask.buffer()).view(bool).reshape(valid.shape), valid), name
    data = np.frombuffer(got.data.buffer(), dtype=values.dtype).reshape(values.shape)
    assert np.array_equal(np.where(valid, values, 0), data, equal_nan=values.dtype.kind in "fc"), name
    np.save(ROOT / name / "expected.npy", np.where(valid, values, np.zeros((), values.dtype)), allow_pickle=False)


def main() -> None:
    rng = np.random.default_rng(20261130)

    # 1. optional int16, null fill, zarrs' default codecs: packbits mask, bytes data
    shape, chunks = (10,), (4,)
    valid = masks(rng, shape, chunks)
    values = rng.integers(-30000, 30000, shape).astype("<i2")
    meta = builder_metadata(list(shape), list(chunks), optional("int16"), b"\x00")
    write("int16_null_fill", meta, values, valid,
          "optional int16 (10,), chunks (4,), fill null, zarrs' default codecs (packbits mask, bytes data); "
          "chunk 0 all missing (not stored: equals the fill), chunk 2 all present",
          extra={"bytes_identical": True})
    check_fixed("int16_null_fill", values, valid)

    # 2. optional float64 2-D, fill [1.5], crc32c after the optional codec, gzip mask / bytes+crc32c data
    shape, chunks = (5, 7), (3, 4)
    valid = masks(rng, shape, chunks)
    values = rng.normal(size=shape)
    values[0, 1] = np.nan
    meta = builder_metadata(list(shape), list(chunks), optional("float64"), np.float64(1.5).tobytes() + b"\x01")
    meta["codecs"] = [{"name": "zarrs.optional", "configuration": {
        "mask_codecs": [{"name": "packbits"}],
        "data_codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "crc32c"}]}},
        {"name": "crc32c"}]
    write("float64_2d_fill_crc32c", meta, values, valid,
          "optional float64 (5, 7), chunks (3, 4), fill [1.5]; optional codec with big-endian bytes + crc32c "
          "data codecs, crc32c after it; chunk (0, 0) all missing, chunk (1, 1) all present",
          extra={"bytes_identical": True})
    check_fixed("float64_2d_fill_crc32c", values, valid)

    # 3. optional uint8, gzip on both parts (read-only: gzip bytes depend on the deflate library)
    shape, chunks = (20,), (8,)
    valid = masks(rng, shape, chunks)
    values = rng.integers(0, 256, shape).astype("u1")
    meta = builder_metadata(list(shape), list(chunks), optional("uint8"), b"\x07\x01")
    meta["codecs"] = [{"name": "zarrs.optional", "configuration": {
        "mask_codecs": [{"name": "packbits"}, {"name": "gzip", "configuration": {"level": 5}}],
        "data_codecs": [{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 5}}]}}]
    write("uint8_gzip_fill_7", meta, values, valid,
          "optional uint8 (20,), chunks (8,), fill [7]; gzip (level 5) after packbits and after bytes",
          extra={"bytes_identical": False})
    check_fixed("uint8_gzip_fill_7", values, valid)

    # 4. optional int32 in a shard
    shape, chunks = (4, 6), (4, 6)
    valid = np.ones(shape, dtype=bool)
    valid[:2, :3] = False
    valid[2:, 3:] = rng.random((2, 3)) < 0.5
    values = rng.integers(-1000, 1000, shape).astype("<i4")
    meta = builder_metadata(list(shape), list(chunks), optional("int32"), b"\x00")
    meta["codecs"] = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 3], "codecs": [{"name": "zarrs.optional", "configuration": PACKBITS_BYTES}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}]
    write("int32_sharded", meta, values, valid,
          "optional int32 (4, 6), one shard of inner chunks (2, 3) with the optional codec; inner chunk (0, 0) "
          "all missing (left out of the shard). zarrs 0.23.13 writes it but cannot read it back (\"Unsupported "
          "data type zarrs.optional for codec sharding_indexed\"), so it is checked against the data only",
          extra={"bytes_identical": True, "zarrs_reads_back": False})
    np.save(ROOT / "int32_sharded" / "expected.npy", np.where(valid, values, 0).astype("<i4"), allow_pickle=False)

    # 5. optional string: vlen-utf8 data codecs
    shape, chunks = (7,), (3,)
    valid = masks(rng, shape, chunks)
    words = np.array(["", "a", "héllo", "zarrs", "∅", "optional", "xyz"], dtype=object)
    meta = builder_metadata(list(shape), list(chunks), optional("string"), b"\x00")
    write("string_null_fill", meta, words, valid,
          "optional string (7,), chunks (3,), fill null, zarrs' default codecs (packbits mask, vlen-utf8 data); "
          "chunk 0 all missing, chunk 2 all present", store=store_variable,
          extra={"bytes_identical": True,
                 "expected_values": {"kind": "string", "values": [w if ok else None for w, ok in zip(words, valid)]}})
    # zarrista decodes it (an OptionalVariableLengthTensor) but exposes no values of one
    assert list(read_back("string_null_fill").shape) == list(shape)
    np.save(ROOT / "string_null_fill" / "expected.npy",
            np.array([w if ok else "" for w, ok in zip(words, valid)], dtype="U"), allow_pickle=False)

    # 6. optional bytes (zarrs' name `bytes` inside), fill ["AQI="]
    shape, chunks = (5,), (5,)
    valid = np.array([True, False, True, True, False])
    blobs = np.array([b"\x01\x02", b"", b"", b"abc\xff", b"zz"], dtype=object)
    meta = builder_metadata(list(shape), list(chunks), optional("bytes"), b"\x01\x02\x01")
    write("bytes_fill", meta, blobs, valid,
          "optional bytes (zarrs' `bytes` name) (5,), one chunk, fill [base64 AQI=]; default codecs "
          "(packbits mask, vlen-bytes data)", store=store_variable,
          extra={"bytes_identical": True,
                 "expected_values": {"kind": "bytes", "values": [b.hex() if ok else None for b, ok in zip(blobs, valid)]}})
    assert list(read_back("bytes_fill").shape) == list(shape)
    np.save(ROOT / "bytes_fill" / "expected.npy", np.array([b if ok else b"" for b, ok in zip(blobs, valid)], dtype="S"),
            allow_pickle=False)

    # 7. plain `bytes` (not optional): zarrs' name for variable-length bytes
    fdir = ROOT / "plain_bytes"
    shutil.rmtree(fdir, ignore_errors=True)
    (fdir / "data.zarr").mkdir(parents=True)
    meta = builder_metadata([4], [2], {"name": "bytes", "configuration": {}}, b"")
    array = zt.Array.from_metadata(meta, FilesystemStore(str(fdir / "data.zarr")), "/")
    array.store_metadata()
    items = [b"ab", b"", b"\x00\x01c", b"zarrs"]
    for i in range(2):
        part = items[2 * i : 2 * i + 2]
        offsets = np.concatenate([[0], np.cumsum([len(v) for v in part])]).tolist()
        array.store_chunk([i], zt.ArrayBytes(b"".join(part), offsets=offsets))
    np.save(fdir / "expected.npy", np.array(items, dtype="S"), allow_pickle=False)
    (fdir / "fixture.json").write_text(json.dumps({
        "producer": PRODUCER, "path": "data.zarr", "node_type": "array",
        "description": "zarrs' `bytes` data type (variable-length bytes, not optional) (4,), chunks (2,), "
                       "zarrs' default codecs (vlen-bytes)",
        "bytes_identical": True,
        "expected_values": {"kind": "bytes", "values": [v.hex() for v in items]}}, indent=2) + "\n")



if __name__ == "__main__":
    main()
