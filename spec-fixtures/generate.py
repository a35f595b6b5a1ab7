#!/usr/bin/env python3
"""Regenerate the golden stores under ``spec-fixtures/``.

Run from anywhere with an interpreter that has zarr-python 3.4.2, tensorstore
0.1.86 and zarrs-python 0.2.3 (``pip install zarrs==0.2.3``; only the
generator needs it, the tests read the stored files with zarrpy alone)::

    python3 spec-fixtures/generate.py

Every fixture is a directory ``spec-fixtures/<producer>/<name>/`` holding

- ``data.zarr/``   the store exactly as the producer wrote it (V3, or V2 for
  the ``v2_*`` fixtures);
- ``expected.npy`` the data as the producer itself reads it back (native byte
  order; for strings / bytes the fixed-width ``U`` / ``S`` form, with the exact
  values in ``fixture.json["expected_values"]``); group fixtures instead list
  one ``.npy`` per array under ``expected/`` in ``fixture.json["arrays"]``;
- ``fixture.json`` ``producer``, ``path``, ``description``, ``node_type`` and,
  for arrays, ``fill_value_check`` (the ``fill_value`` JSON and the raw
  little-endian bytes of the value it denotes, as hex), plus
  ``cross_checks``: what the *other* installed implementations read
  ("equal" means bit-for-bit equal to ``expected.npy``). V2, sharded,
  variable-length and datetime64 / timedelta64 fixtures also record
  ``zarr_format`` and the ``chunks`` / ``shards`` zarr-python reports (see
  ``build_fixture``).

Producers (the versions are checked at start-up, so the labels cannot lie):

- ``zarr-python`` -- ``zarr.create_array(..., zarr_format=3)`` (``zarr_format=2``
  for the ``v2_*`` fixtures), ``shards=`` / ``ShardingCodec`` for sharding;
- ``tensorstore`` -- the ``zarr3`` driver, and the ``zarr`` (V2) driver for
  the ``v2_*`` fixtures;
- ``zarrs``       -- zarr-python's API with ``codec_pipeline.path`` set to
  ``zarrs.ZarrsCodecPipeline`` (strict, one thread: ``ZARRS_CONFIG``), so the
  Rust zarrs crate encodes every chunk and shard;
- ``spec``        -- metadata written by hand from the V3 spec and
  ``reference/ZARR-FORMAT-NOTES.md``, chunk bytes built by hand (``zlib``,
  ``gzip``, ``zstandard``, ``crc32c``); the expected data is the array the
  bytes were built from, and the generator checks that zarr-python and
  tensorstore read the same thing where they can read the store at all.

The script is deterministic (each fixture seeds its own generator from its
name, gzip headers get MTIME 0, see ``gzip_mtime_zero``, and zarrs runs on one
thread) and idempotent: it deletes the four producer directories and writes
them again.  Before saving, every fixture is read back by its producer and
compared bit-for-bit with the array the generator meant to store, fill regions
included; a mismatch aborts the run.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import importlib.metadata
import json
import re
import shutil
import struct
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import crc32c
import numcodecs
import numpy as np
import tensorstore as ts
import zarr
import zarr.codecs as zc
import zstandard
from zarr.dtype import VariableLengthBytes

ROOT = Path(__file__).resolve().parent
PRODUCER_DIRS = ("zarr-python", "tensorstore", "zarrs", "spec")
ZARR_VERSION = "3.4.2"
TENSORSTORE_VERSION = "0.1.86"
ZARRS_VERSION = "0.2.3"
ZARR_LABEL = f"zarr-python {ZARR_VERSION}"
TS_LABEL = f"tensorstore {TENSORSTORE_VERSION}"
ZARRS_LABEL = f"zarrs-python {ZARRS_VERSION} (zarrs pipeline)"
# The zarrs pipeline (zarrs-python: a zarr-python CodecPipeline backed by the
# Rust zarrs crate). "strict": an array the pipeline cannot handle raises
# instead of silently falling back to zarr-python's own pipeline, so a
# "zarrs" fixture really was encoded by zarrs. One thread and one chunk at a
# time: with more, zarrs writes a shard's inner chunks in completion order
# and the shard bytes change from run to run.
ZARRS_CONFIG = {
    "codec_pipeline.path": "zarrs.ZarrsCodecPipeline",
    "codec_pipeline.strict": True,
    "threading.max_workers": 1,
    "codec_pipeline.chunk_concurrent_maximum": 1,
}

CORE_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)  # fmt: skip
_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# Bit patterns of the canonical quiet NaN ("NaN" in zarr.json), per float size.
_CANONICAL_NAN = {2: 0x7E00, 4: 0x7FC00000, 8: 0x7FF8000000000000}


# ---------------------------------------------------------------------------
# helpers shared by all producers
# ---------------------------------------------------------------------------


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded from the fixture name, so fixtures are independent."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def float_from_bits(bits: int, dtype: str) -> np.generic:
    dt = np.dtype(dtype)
    return np.array(bits, dtype=_UINT_OF_SIZE[dt.itemsize]).view(dt)[()]


def bit_view(a: np.ndarray) -> np.ndarray:
    """The array as unsigned integers of the float lane width (floats/complex),
    datetime64 / timedelta64 as int64 (so NaT equals NaT)."""
    a = np.ascontiguousarray(a).reshape(-1)
    if a.dtype.kind in "mM":
        return a.view(a.dtype.str[0] + "i8")
    if a.dtype.kind == "f":
        return a.view(_UINT_OF_SIZE[a.dtype.itemsize])
    if a.dtype.kind == "c":
        return a.view(_UINT_OF_SIZE[a.dtype.itemsize // 2])
    return a


def bitwise_equal(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "OT":  # variable-length: str (StringDType) or bytes (object)
        return _vlen_values(a) == _vlen_values(b)
    return bool(np.array_equal(bit_view(a), bit_view(b)))


def _vlen_values(a: np.ndarray) -> list[tuple[type, Any]]:
    return [(type(x), x) for x in a.reshape(-1).tolist()]


def native(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind in "OT":
        return np.array(a, order="C")
    # np.array, not np.ascontiguousarray: the latter turns 0-d into 1-d.
    return np.array(a, dtype=a.dtype.newbyteorder("="), order="C")


def random_data(dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random values covering the type's range, with float special values."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        flat = rng.random(n) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
        flat[: min(n, 2)] = [info.min, info.max][: min(n, 2)]
    elif dt.kind == "f":
        flat = _random_floats(dt, n, rng)
    elif dt.kind == "c":
        lane = np.dtype(f"f{dt.itemsize // 2}")
        flat = np.empty(n, dtype=dt)
        flat.real = _random_floats(lane, n, rng)
        flat.imag = rng.permutation(_random_floats(lane, n, rng))
    elif dt.kind in "mM":
        flat = _random_times(dt, n, rng)
    else:
        raise ValueError(dtype)
    return flat.astype(dt).reshape(shape)


def _random_floats(dt: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    flat = (rng.standard_normal(n) * 100).astype(dt)
    size = dt.itemsize
    specials = [
        np.inf,
        -np.inf,
        np.nan,
        -0.0,
        float_from_bits(_CANONICAL_NAN[size] | 1, dt.str),  # quiet NaN with payload
        float_from_bits(_CANONICAL_NAN[size] | (1 << (8 * size - 1)), dt.str),  # -NaN
        np.finfo(dt).smallest_subnormal,
        np.finfo(dt).max,
    ]
    k = min(n, len(specials))
    flat[:k] = np.array(specials[:k], dtype=dt)
    return flat


_NAT = -(2**63)  # the int64 that numpy reads as NaT


def _random_times(dt: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    """int64 counts of the unit: NaT, the extremes, 0, -1, then random values
    of either sign with about one NaT in eight."""
    ints = rng.integers(-(2**62), 2**62, size=n, dtype=np.int64)
    ints[rng.random(n) < 0.125] = _NAT
    specials = [_NAT, _NAT + 1, 2**63 - 1, 0, -1]
    k = min(n, len(specials))
    ints[:k] = specials[:k]
    return ints.view(dt.newbyteorder("="))


def fill_json_to_raw(fill: Any, dtype: str) -> bytes:
    """Independent reading of a V3 fill_value JSON (notes §5) -> raw LE bytes."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        lane = f"<f{dt.itemsize // 2}"
        return b"".join(fill_json_to_raw(part, lane) for part in fill)
    if dt.kind == "f":
        size = dt.itemsize
        if isinstance(fill, str):
            if fill.startswith("0x"):
                bits = int(fill, 16)
            else:
                bits = {
                    "NaN": _CANONICAL_NAN[size],
                    "Infinity": int(np.array(np.inf, dtype=dt).view(_UINT_OF_SIZE[size])),
                    "-Infinity": int(np.array(-np.inf, dtype=dt).view(_UINT_OF_SIZE[size])),
                }[fill]
            return np.array(bits, dtype=_UINT_OF_SIZE[size]).astype(f"<u{size}").tobytes()
        return np.array(fill, dtype=dt.newbyteorder("<")).tobytes()
    if dt.kind == "b":
        assert isinstance(fill, bool)
        return bytes([fill])
    assert isinstance(fill, int) and not isinstance(fill, bool)
    return np.array(fill, dtype=dt.newbyteorder("<")).tobytes()


def fill_scalar(fill: Any, dtype: str) -> np.generic:
    dt = np.dtype(dtype)
    return np.frombuffer(fill_json_to_raw(fill, dtype), dtype=dt.newbyteorder("<"))[0].astype(dt)


def with_fill(shape: tuple[int, ...], dtype: str, fill: Any) -> np.ndarray:
    return np.full(shape, fill_scalar(fill, dtype), dtype=dtype)


def read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def write_json(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n")


def edit_zarr_json(store: Path, **changes: Any) -> None:
    doc = read_json(store / "zarr.json")
    doc.update(changes)
    write_json(store / "zarr.json", doc)


# ---------------------------------------------------------------------------
# readers (for the producer's own read-back and for cross checks)
# ---------------------------------------------------------------------------


def read_zarr_python(store: Path, path: str | None = None) -> tuple[np.ndarray, Any]:
    arr = zarr.open_array(str(store), mode="r", path=path)
    return np.asarray(arr[...]), arr.fill_value


def read_tensorstore(store: Path) -> tuple[np.ndarray, Any]:
    driver = "zarr3" if store_format(store) == 3 else "zarr"
    t = ts.open(
        {"driver": driver, "kvstore": {"driver": "file", "path": str(store) + "/"}},
        open=True,
        read=True,
    ).result()
    return np.asarray(t.read().result()), t.fill_value


def read_zarrs(store: Path, path: str | None = None) -> tuple[np.ndarray, Any]:
    """zarr-python's API with the zarrs codec pipeline doing every chunk."""
    with zarr.config.set(ZARRS_CONFIG):
        arr = zarr.open_array(str(store), mode="r", path=path)
        return np.asarray(arr[...]), arr.fill_value


READERS: dict[str, Callable[[Path], tuple[np.ndarray, Any]]] = {
    ZARR_LABEL: read_zarr_python,
    TS_LABEL: read_tensorstore,
}
# V2, sharded, variable-length and datetime fixtures are also cross-checked with the
# zarrs pipeline (the older fixtures keep their two-reader cross_checks).
EXTENDED_READERS: dict[str, Callable[[Path], tuple[np.ndarray, Any]]] = {
    **READERS,
    ZARRS_LABEL: read_zarrs,
}


def cross_check(
    store: Path,
    expected: np.ndarray,
    skip: str | None,
    readers: dict[str, Callable[[Path], tuple[np.ndarray, Any]]] = READERS,
    *,
    reason: bool = False,
) -> dict[str, str]:
    """Outcome of reading the store with every other implementation.

    With ``reason`` (the datetime fixtures), a refusal also records what the
    peer said about the metadata, where it says anything (see ``refusal_reason``).
    """
    results = {}
    for label, reader in readers.items():
        if label == skip:
            continue
        try:
            got, _ = reader(store)
        except Exception as exc:  # recorded, not raised: a peer may reject the store
            results[label] = f"cannot read ({type(exc).__name__})"
            why = refusal_reason(exc) if reason else None
            if why:
                results[label] += f": {why}"
            continue
        got = native(got)
        if bitwise_equal(got, expected):
            results[label] = "equal"
        elif got.dtype == expected.dtype and got.shape == expected.shape and (
            np.array_equal(got, expected, equal_nan=expected.dtype.kind in "fc")
        ):
            results[label] = "equal values, different bits (NaN payload or signed zero)"
        else:
            results[label] = "different data"
    return results


def refusal_reason(exc: Exception) -> str | None:
    """The metadata complaint in a peer's error, without machine paths: for
    tensorstore the ``Error parsing object member ...`` clause (its list of
    supported data types cut off); None when the message has no such clause."""
    m = re.search(r'Error parsing object member "[^"]*": .*?(?= \[tensorstore_spec=|$)', str(exc))
    if m is None:
        return None
    text = m.group(0)
    cut = text.find("supported data types:")
    return text if cut < 0 else text[: cut + len("supported data types")]


# ---------------------------------------------------------------------------
# store inspection: V2 or V3, sharded, variable-length
# ---------------------------------------------------------------------------


_TIME_V3_NAMES = {"numpy.datetime64": "M8", "numpy.timedelta64": "m8"}


def v3_numpy_dtype(data_type: Any) -> str:
    """A V3 ``data_type`` as a numpy dtype string: the name for the core types,
    ``M8[<scale><unit>]`` / ``m8[...]`` for zarr-python's datetime types."""
    if isinstance(data_type, str):
        return data_type
    name = data_type["name"]
    if name in _TIME_V3_NAMES:
        config = data_type["configuration"]
        scale = config["scale_factor"]
        return f"{_TIME_V3_NAMES[name]}[{'' if scale == 1 else scale}{config['unit']}]"
    return name


def is_time(meta: dict[str, Any]) -> bool:
    """A datetime64 / timedelta64 array (V3 or V2 document)."""
    if meta.get("zarr_format") == 3:
        data_type = meta["data_type"]
        return isinstance(data_type, dict) and data_type["name"] in _TIME_V3_NAMES
    return isinstance(meta["dtype"], str) and np.dtype(meta["dtype"]).kind in "mM"


def store_format(store: Path) -> int:
    """3 for a store with ``zarr.json``, else 2 (``.zarray`` / ``.zgroup``)."""
    return 3 if (store / "zarr.json").is_file() else 2


def array_doc(store: Path) -> dict[str, Any]:
    return read_json(store / ("zarr.json" if store_format(store) == 3 else ".zarray"))


def vlen_kind(meta: dict[str, Any]) -> str | None:
    """"string", "bytes" or None, from a zarr.json or .zarray document."""
    if meta.get("zarr_format") == 3:
        dtype = meta["data_type"]
        dtype = dtype if isinstance(dtype, str) else dtype["name"]
        return {"string": "string", "variable_length_bytes": "bytes"}.get(dtype)
    if np.dtype(meta["dtype"]).kind != "O":
        return None
    ids = [f["id"] for f in meta.get("filters") or []]
    return "string" if "vlen-utf8" in ids else "bytes" if "vlen-bytes" in ids else None


def is_sharded(meta: dict[str, Any]) -> bool:
    return meta.get("zarr_format") == 3 and any(
        c.get("name") == "sharding_indexed" for c in meta["codecs"] if isinstance(c, dict)
    )


def vlen_json(a: np.ndarray, kind: str) -> Any:
    """Nested JSON list of the values: strings as they are, bytes as hex."""
    if kind == "string":
        return a.tolist()

    def conv(x: Any) -> Any:
        return [conv(y) for y in x] if isinstance(x, list) else bytes(x).hex()

    return conv(a.tolist())


def fixed_width(a: np.ndarray, kind: str) -> np.ndarray:
    """The fixed-width numpy form (``U`` / ``S``) saved as ``expected.npy``."""
    return np.array(a.tolist(), dtype="U" if kind == "string" else "S").reshape(a.shape)


def vlen_fill_value(fill: Any, kind: str) -> str:
    """A producer's fill scalar as fixture.json records it (bytes as hex)."""
    if kind == "string":
        check(isinstance(fill, str), f"string fill {fill!r}")
        return str(fill)
    check(isinstance(fill, bytes), f"bytes fill {fill!r}")
    return bytes(fill).hex()


def check_vlen_fill_json(fill_json: Any, value: str, kind: str, what: str) -> None:
    """The fill JSON means the producer's fill: the string itself, or base64 of the bytes."""
    meant = fill_json if kind == "string" else base64.b64decode(fill_json, validate=True).hex()
    check(meant == value, f"{what}: fill_value {fill_json!r} vs producer fill {value!r}")


# ---------------------------------------------------------------------------
# fixture registry and driver
# ---------------------------------------------------------------------------


@dataclass
class Built:
    """What a builder returns: the intended data and how to describe it."""

    intended: np.ndarray | None
    description: str
    # group fixtures: array path (relative to the root) -> intended data
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


Builder = Callable[[Path], Built]
FIXTURES: list[tuple[str, str, Builder]] = []


def fixture(producer: str, name: str) -> Callable[[Builder], Builder]:
    def register(fn: Builder) -> Builder:
        FIXTURES.append((producer, name, fn))
        return fn

    return register


def producer_label(producer: str) -> str:
    return {
        "zarr-python": ZARR_LABEL, "tensorstore": TS_LABEL, "zarrs": ZARRS_LABEL, "spec": "spec",
    }[producer]  # fmt: skip


def producer_reader(producer: str) -> Callable[[Path], tuple[np.ndarray, Any]]:
    return {"zarr-python": read_zarr_python, "tensorstore": read_tensorstore, "zarrs": read_zarrs}[
        producer
    ]


def build_fixture(producer: str, name: str, builder: Builder) -> None:
    fdir = ROOT / producer / name
    fdir.mkdir(parents=True)
    store = fdir / "data.zarr"
    built = builder(store)
    label = producer_label(producer)
    doc: dict[str, Any] = {"producer": label, "path": "data.zarr", "description": built.description}
    fmt = store_format(store)
    if built.intended is None:
        doc["node_type"] = "group"
        if fmt == 2:
            doc["zarr_format"] = 2
        doc["arrays"] = {}
        for apath, intended in sorted(built.arrays.items()):
            got, _ = read_zarr_python(store, apath)
            check(bitwise_equal(native(got), intended), f"{producer}/{name}:{apath} read-back")
            rel = f"expected/{apath}.npy"
            (fdir / rel).parent.mkdir(parents=True, exist_ok=True)
            np.save(fdir / rel, native(got), allow_pickle=False)
            doc["arrays"][apath] = rel
    else:
        doc["node_type"] = "array"
        meta = array_doc(store)
        vlen = vlen_kind(meta)
        extended = fmt == 2 or vlen is not None or is_sharded(meta) or is_time(meta)
        if fmt == 3:
            dtype = v3_numpy_dtype(meta["data_type"])
        else:
            dtype = meta["dtype"]
        fill_json = meta["fill_value"]
        if producer == "spec":
            got, producer_fill = built.intended, None
        else:
            got, producer_fill = producer_reader(producer)(store)
            got = native(got)
        check(bitwise_equal(got, built.intended), f"{producer}/{name}: read-back != intended")
        if vlen is not None:
            fill_check: dict[str, Any] = {
                "json": fill_json, "value": vlen_fill_value(producer_fill, vlen),
            }  # fmt: skip
            check_vlen_fill_json(fill_json, fill_check["value"], vlen, f"{producer}/{name}")
        elif fill_json is None:  # V2 "no fill value": nothing to compare bit for bit
            fill_check = {"json": None, "raw_le_hex": None}
        else:
            raw = fill_json_to_raw(fill_json, dtype)
            if producer != "spec":
                producer_raw = np.asarray(producer_fill, dtype=np.dtype(dtype)).astype(
                    np.dtype(dtype).newbyteorder("<")
                ).tobytes()
                check(producer_raw == raw, f"{producer}/{name}: producer fill {producer_fill!r}")
            fill_check = {"json": fill_json, "raw_le_hex": raw.hex()}
        if vlen is not None:
            fixed = fixed_width(got, vlen)
            if vlen == "string":  # numpy's U type drops trailing NULs: none in the data
                check(fixed.tolist() == got.tolist(), f"{producer}/{name}: U form loses data")
            np.save(fdir / "expected.npy", fixed, allow_pickle=False)
        else:
            np.save(fdir / "expected.npy", got, allow_pickle=False)
        if extended:
            zp = zarr.open_array(str(store), mode="r")
            doc["zarr_format"] = fmt
            doc["chunks"] = list(zp.chunks)
            doc["shards"] = None if zp.shards is None else list(zp.shards)
        doc["fill_value_check"] = fill_check
        if vlen is not None:
            doc["expected_values"] = {"kind": vlen, "values": vlen_json(got, vlen)}
        readers = EXTENDED_READERS if extended else READERS
        doc["cross_checks"] = cross_check(
            store, got, skip=label, readers=readers, reason=is_time(meta)
        )
    doc.update(built.extra)
    write_json(fdir / "fixture.json", doc)


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"generate.py: check failed: {what}")


# ---------------------------------------------------------------------------
# zarr-python fixtures
# ---------------------------------------------------------------------------


def zp_array(
    store: Path, data: np.ndarray | None, *, chunks, region=None, zarr_format: int = 3, **kwargs
) -> Any:
    """Create an array with zarr-python (V3 unless told) and write ``data`` (or a region)."""
    shape = kwargs.pop("shape", None if data is None else data.shape)
    dtype = kwargs.pop("dtype", None if data is None else data.dtype)
    arr = zarr.create_array(
        str(store), shape=shape, dtype=dtype, chunks=chunks, zarr_format=zarr_format, **kwargs
    )
    if data is not None:
        sel = region if region is not None else ...
        arr[sel] = data[sel]
    return arr


def _register_zarr_python_dtypes() -> None:
    for dtype in CORE_DTYPES:

        def build(store: Path, dtype: str = dtype) -> Built:
            data = random_data(dtype, (10, 6), rng_for(f"zp-dtype-{dtype}"))
            zp_array(store, data, chunks=(6, 4))
            return Built(
                data,
                f"{dtype}, shape (10, 6), chunks (6, 4) (edge chunks in both dimensions), "
                "zarr-python default codecs (bytes little + zstd level 0); float data "
                "includes +-Infinity, NaN, a NaN with payload, -NaN, -0.0, the smallest "
                "subnormal and the largest finite value",
            )

        fixture("zarr-python", f"dtype_{dtype}")(build)


_register_zarr_python_dtypes()

_CHAINS: dict[str, tuple[str, dict[str, Any], str]] = {
    "bytes_little": (
        "int16",
        {"serializer": zc.BytesCodec(endian="little"), "compressors": None},
        "bytes endian little, no compressor",
    ),
    "bytes_big": (
        "uint32",
        {"serializer": zc.BytesCodec(endian="big"), "compressors": None},
        "bytes endian big, no compressor",
    ),
    "bytes_big_float64": (
        "float64",
        {"serializer": zc.BytesCodec(endian="big"), "compressors": None},
        "bytes endian big, no compressor",
    ),
    "gzip": (
        "int32",
        {"compressors": [zc.GzipCodec(level=5)]},
        "bytes little + gzip level 5",
    ),
    "zstd_no_checksum": (
        "float32",
        {"compressors": [zc.ZstdCodec(level=3, checksum=False)]},
        "bytes little + zstd level 3, checksum false",
    ),
    "zstd_checksum": (
        "float32",
        {"compressors": [zc.ZstdCodec(level=3, checksum=True)]},
        "bytes little + zstd level 3, checksum true",
    ),
    "blosc_lz4_shuffle": (
        "int32",
        {"compressors": [zc.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")]},
        "bytes little + blosc lz4 clevel 5 shuffle (typesize 4)",
    ),
    "blosc_zstd_bitshuffle": (
        "uint16",
        {"compressors": [zc.BloscCodec(cname="zstd", clevel=5, shuffle="bitshuffle")]},
        "bytes little + blosc zstd clevel 5 bitshuffle (typesize 2)",
    ),
    "blosc_blosclz_noshuffle": (
        "float64",
        {"compressors": [zc.BloscCodec(cname="blosclz", clevel=9, shuffle="noshuffle")]},
        "bytes little + blosc blosclz clevel 9 noshuffle",
    ),
    "crc32c": (
        "uint16",
        {"compressors": [zc.Crc32cCodec()]},
        "bytes little + crc32c",
    ),
    "zstd_crc32c": (
        "int64",
        {"compressors": [zc.ZstdCodec(level=1), zc.Crc32cCodec()]},
        "bytes little + zstd level 1 + crc32c",
    ),
    "transpose_2d": (
        "int16",
        {"filters": [zc.TransposeCodec(order=(1, 0))], "compressors": None},
        "transpose order [1, 0] + bytes little",
    ),
    "transpose_big_gzip_crc32c": (
        "float32",
        {
            "filters": [zc.TransposeCodec(order=(1, 0))],
            "serializer": zc.BytesCodec(endian="big"),
            "compressors": [zc.GzipCodec(level=1), zc.Crc32cCodec()],
        },
        "transpose [1, 0] + bytes big + gzip level 1 + crc32c",
    ),
}


def _register_zarr_python_chains() -> None:
    for cname, (dtype, kwargs, text) in _CHAINS.items():

        def build(store: Path, dtype=dtype, kwargs=kwargs, text=text, cname=cname) -> Built:
            data = random_data(dtype, (9, 8), rng_for(f"zp-chain-{cname}"))
            zp_array(store, data, chunks=(5, 5), **kwargs)
            return Built(data, f"{dtype}, shape (9, 8), chunks (5, 5); codecs: {text}")

        fixture("zarr-python", f"chain_{cname}")(build)


_register_zarr_python_chains()


@fixture("zarr-python", "chain_transpose_3d")
def _(store: Path) -> Built:
    data = random_data("uint16", (4, 5, 6), rng_for("zp-transpose-3d"))
    zp_array(
        store, data, chunks=(2, 3, 4), filters=[zc.TransposeCodec(order=(2, 0, 1))]
    )
    return Built(
        data,
        "uint16, shape (4, 5, 6), chunks (2, 3, 4); codecs: transpose order [2, 0, 1] "
        "(not its own inverse: decoding must use argsort(order) = [1, 2, 0]) + bytes "
        "little + zstd",
    )


@fixture("zarr-python", "shape_0d")
def _(store: Path) -> Built:
    data = np.array(-12.625, dtype="float64")
    zp_array(store, data, chunks=())
    return Built(data, "0-d float64 holding -12.625; chunk key is 'c'")


@fixture("zarr-python", "shape_0d_missing_chunk")
def _(store: Path) -> Built:
    zp_array(store, None, shape=(), dtype="int32", chunks=(), fill_value=42)
    return Built(
        with_fill((), "int32", 42), "0-d int32 never written: no chunk key, reads fill 42"
    )


@fixture("zarr-python", "shape_1d")
def _(store: Path) -> Built:
    data = random_data("int32", (100,), rng_for("zp-1d"))
    zp_array(store, data, chunks=(30,))
    return Built(data, "1-D int32, shape (100,), chunks (30,): last chunk holds 10 of 30")


@fixture("zarr-python", "shape_3d")
def _(store: Path) -> Built:
    data = random_data("float32", (5, 6, 7), rng_for("zp-3d"))
    zp_array(store, data, chunks=(3, 4, 4))
    return Built(data, "3-D float32, shape (5, 6, 7), chunks (3, 4, 4)")


@fixture("zarr-python", "shape_4d")
def _(store: Path) -> Built:
    data = random_data("int8", (3, 4, 2, 5), rng_for("zp-4d"))
    zp_array(store, data, chunks=(2, 2, 2, 3))
    return Built(data, "4-D int8, shape (3, 4, 2, 5), chunks (2, 2, 2, 3)")


@fixture("zarr-python", "shape_chunk_larger_than_array")
def _(store: Path) -> Built:
    data = random_data("uint8", (3, 5), rng_for("zp-big-chunk"))
    zp_array(store, data, chunks=(10, 10), compressors=None)
    return Built(data, "uint8, shape (3, 5), one chunk of (10, 10) (mostly outside the array)")


@fixture("zarr-python", "shape_unit_chunks")
def _(store: Path) -> Built:
    data = random_data("int16", (2, 3), rng_for("zp-unit"))
    zp_array(store, data, chunks=(1, 1), compressors=None)
    return Built(data, "int16, shape (2, 3), chunks (1, 1): six one-element chunks")


@fixture("zarr-python", "shape_zero_extent")
def _(store: Path) -> Built:
    zp_array(store, None, shape=(0, 5), dtype="float32", chunks=(2, 2))
    return Built(np.zeros((0, 5), "float32"), "float32, shape (0, 5), chunks (2, 2): no elements")


@fixture("zarr-python", "missing_chunks_int32")
def _(store: Path) -> Built:
    data = random_data("int32", (10, 10), rng_for("zp-missing"))
    region = np.s_[0:3, 0:6]
    zp_array(store, data, chunks=(3, 3), fill_value=7, region=region)
    arr = zarr.open_array(str(store), mode="r+")
    arr[7:10, 9:10] = data[7:10, 9:10]
    arr[3:6, 3:6] = 7  # a whole chunk equal to the fill value: zarr-python stores nothing
    intended = with_fill((10, 10), "int32", 7)
    intended[0:3, 0:6] = data[0:3, 0:6]
    intended[7:10, 9:10] = data[7:10, 9:10]
    return Built(
        intended,
        "int32, shape (10, 10), chunks (3, 3), fill 7; only [0:3, 0:6] and [7:10, 9:10] "
        "written (the latter is the edge chunk c/3/3), so 13 of 16 chunk keys are absent",
    )


@fixture("zarr-python", "missing_chunks_partial_edge")
def _(store: Path) -> Built:
    data = random_data("uint16", (7, 9), rng_for("zp-partial-edge"))
    zp_array(store, data, chunks=(4, 4), fill_value=500, region=np.s_[5:7, 1:9])
    intended = with_fill((7, 9), "uint16", 500)
    intended[5:7, 1:9] = data[5:7, 1:9]
    return Built(
        intended,
        "uint16, shape (7, 9), chunks (4, 4), fill 500; only [5:7, 1:9] written: partly "
        "written edge chunks hold fill around the data, the first chunk row is absent",
    )


def _fill_fixture(name: str, dtype: str, fill_json: Any, text: str, *, edit: bool = False):
    """A (6, 6) array, chunks (3, 3), only chunk (0, 0) and (1, 1) written.

    With ``edit``, zarr-python is given a NaN and ``zarr.json`` is rewritten to
    hold ``fill_json`` afterwards (zarr-python writes every NaN as "NaN").
    Only whole chunks are written, so no stored chunk holds fill elements.
    """

    @fixture("zarr-python", name)
    def build(store: Path) -> Built:
        data = random_data(dtype, (6, 6), rng_for(f"zp-{name}"))
        given = np.nan if edit else fill_scalar(fill_json, dtype)
        if np.dtype(dtype).kind == "c" and edit:
            given = complex(np.nan, np.nan)
        arr = zp_array(store, None, shape=(6, 6), dtype=dtype, chunks=(3, 3), fill_value=given)
        arr[0:3, 0:3] = data[0:3, 0:3]
        arr[3:6, 3:6] = data[3:6, 3:6]
        if edit:
            edit_zarr_json(store, fill_value=fill_json)
        else:
            check(read_json(store / "zarr.json")["fill_value"] == fill_json, f"{name} fill json")
        intended = with_fill((6, 6), dtype, fill_json)
        intended[0:3, 0:3] = data[0:3, 0:3]
        intended[3:6, 3:6] = data[3:6, 3:6]
        how = (
            "zarr-python wrote \"NaN\"; generate.py then replaced fill_value in zarr.json "
            f"with {json.dumps(fill_json)} (zarr-python reads hex fills and keeps the payload)"
            if edit
            else f"zarr-python wrote fill_value {json.dumps(fill_json)} itself"
        )
        return Built(
            intended,
            f"{dtype}, shape (6, 6), chunks (3, 3), {text}; chunks (0, 0) and (1, 1) "
            f"written, the other two absent and read as the fill value. {how}",
        )

    return build


_fill_fixture("fill_nan_float32", "float32", "NaN", "fill NaN")
_fill_fixture("fill_infinity_float64", "float64", "Infinity", "fill +Infinity")
_fill_fixture("fill_neg_infinity_float32", "float32", "-Infinity", "fill -Infinity")
_fill_fixture("fill_neg_zero_float64", "float64", -0.0, "fill -0.0 (sign bit must survive)")
_fill_fixture(
    "fill_hex_nan_float32", "float32", "0x7fc00001", "fill NaN payload 0x7fc00001", edit=True
)
_fill_fixture(
    "fill_hex_nan_float64", "float64", "0x7ff8000000000001", "fill NaN payload", edit=True
)
_fill_fixture(
    "fill_hex_neg_nan_float32", "float32", "0xffc00000", "fill negative quiet NaN", edit=True
)
_fill_fixture("fill_complex64_nan_neg_inf", "complex64", ["NaN", "-Infinity"], "fill [NaN, -Inf]")
_fill_fixture("fill_complex128_numbers", "complex128", [1.5, -2.25], "fill [1.5, -2.25]")
_fill_fixture("fill_uint64_max", "uint64", 18446744073709551615, "fill 2**64-1 (exceeds int64)")
_fill_fixture("fill_int64_min", "int64", -9223372036854775808, "fill -2**63")
_fill_fixture("fill_bool_true", "bool", True, "fill true")
_fill_fixture("fill_float16_number", "float16", 0.333251953125, "fill a float16 number")


@fixture("zarr-python", "key_encoding_default_dot")
def _(store: Path) -> Built:
    data = random_data("int16", (5, 5), rng_for("zp-key-default-dot"))
    zp_array(store, data, chunks=(2, 3), chunk_key_encoding={"name": "default", "separator": "."})
    return Built(
        data, "int16, chunks (2, 3), chunk_key_encoding default with separator '.': keys c.0.1"
    )


@fixture("zarr-python", "key_encoding_v2_dot")
def _(store: Path) -> Built:
    data = random_data("int16", (5, 5), rng_for("zp-key-v2-dot"))
    zp_array(store, data, chunks=(2, 3), chunk_key_encoding={"name": "v2", "separator": "."})
    return Built(data, "int16, chunks (2, 3), chunk_key_encoding v2 with separator '.': keys 0.1")


@fixture("zarr-python", "key_encoding_v2_slash")
def _(store: Path) -> Built:
    data = random_data("int16", (5, 5), rng_for("zp-key-v2-slash"))
    zp_array(store, data, chunks=(2, 3), chunk_key_encoding={"name": "v2", "separator": "/"})
    return Built(data, "int16, chunks (2, 3), chunk_key_encoding v2 with separator '/': keys 0/1")


@fixture("zarr-python", "key_encoding_v2_0d")
def _(store: Path) -> Built:
    data = np.array(3, dtype="uint8")
    zp_array(store, data, chunks=(), chunk_key_encoding={"name": "v2", "separator": "."})
    return Built(data, "0-d uint8 with chunk_key_encoding v2: the chunk key is '0'")


@fixture("zarr-python", "dimension_names_attributes")
def _(store: Path) -> Built:
    data = random_data("float64", (4, 3, 2), rng_for("zp-dimnames"))
    zp_array(
        store,
        data,
        chunks=(2, 2, 2),
        dimension_names=["time", None, "x"],
        attributes={
            "units": "m/s",
            "scale": 0.5,
            "nested": {"list": [1, 2, 3], "flag": True, "none": None},
            "unicode": "ĉu ĝi funkcias? ✓",
        },
    )
    return Built(data, "float64 with dimension_names ['time', null, 'x'] and nested attributes")


@fixture("zarr-python", "group_hierarchy")
def _(store: Path) -> Built:
    rng = rng_for("zp-group")
    root = zarr.create_group(
        str(store), zarr_format=3, attributes={"title": "golden group", "version": 3}
    )
    a = random_data("int32", (6,), rng)
    root.create_array("a", shape=a.shape, dtype=a.dtype, chunks=(4,), attributes={"role": "leaf"})[
        ...
    ] = a
    sub = root.create_group("sub", attributes={"level": 1})
    b = random_data("float32", (3, 4), rng)
    sub.create_array("b", shape=b.shape, dtype=b.dtype, chunks=(2, 2), fill_value=-1.0)[0:2, :] = b[
        0:2, :
    ]
    b_intended = b.copy()
    b_intended[2:, :] = -1.0
    deeper = sub.create_group("deeper")
    c = np.array(True)
    deeper.create_array("c", shape=(), dtype="bool", chunks=())[()] = c
    root.create_group("empty")
    return Built(
        None,
        "root group (attributes) with array 'a', subgroup 'sub' (attributes) holding array "
        "'b' (second chunk row absent, fill -1.0) and group 'deeper' holding 0-d bool 'c', "
        "and an empty group 'empty'",
        arrays={"a": a, "sub/b": b_intended, "sub/deeper/c": c},
        extra={"groups": ["", "empty", "sub", "sub/deeper"]},
    )


# ---------------------------------------------------------------------------
# tensorstore fixtures
# ---------------------------------------------------------------------------


def ts_array(
    store: Path,
    *,
    shape,
    chunks,
    dtype: str,
    fill_value: Any = None,
    codecs: list | None = None,
    chunk_key_encoding: dict | None = None,
    **metadata: Any,
) -> Any:
    meta: dict[str, Any] = {
        "shape": list(shape),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": chunk_key_encoding or {"name": "default"},
        "data_type": dtype,
        **metadata,
    }
    if fill_value is not None:
        meta["fill_value"] = fill_value
    if codecs is not None:
        meta["codecs"] = codecs
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": str(store) + "/"},
        "metadata": meta,
    }
    return ts.open(spec, create=True, delete_existing=True).result()


def _bytes(endian: str | None = "little") -> dict[str, Any]:
    if endian is None:
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": endian}}


_TS_CHAINS: dict[str, tuple[str, list[dict[str, Any]] | None, str]] = {
    "default_codecs_int32": ("int32", None, "codecs not given: tensorstore's default"),
    "bytes_little_int16": ("int16", [_bytes("little")], "bytes little"),
    "bytes_big_uint64": ("uint64", [_bytes("big")], "bytes big"),
    "bytes_big_complex64": ("complex64", [_bytes("big")], "bytes big"),
    "bytes_float16": ("float16", [_bytes("little")], "bytes little"),
    "bool_bytes": ("bool", [_bytes(None)], "bytes with no configuration (1-byte type)"),
    "gzip_float64": (
        "float64",
        [_bytes("little"), {"name": "gzip", "configuration": {"level": 6}}],
        "bytes little + gzip level 6",
    ),
    "zstd_int8": (
        "int8",
        [_bytes(None), {"name": "zstd", "configuration": {"level": 5, "checksum": True}}],
        "bytes + zstd level 5 checksum true",
    ),
    "blosc_lz4_shuffle_float32": (
        "float32",
        [
            _bytes("little"),
            {
                "name": "blosc",
                "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4},
            },
        ],
        "bytes little + blosc lz4 shuffle typesize 4",
    ),
    "blosc_zstd_bitshuffle_uint32": (
        "uint32",
        [
            _bytes("big"),
            {
                "name": "blosc",
                "configuration": {
                    "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4,
                },
            },
        ],
        "bytes big + blosc zstd bitshuffle typesize 4",
    ),  # fmt: skip
    "crc32c_uint16": ("uint16", [_bytes("little"), {"name": "crc32c"}], "bytes little + crc32c"),
    "transpose_gzip_crc32c_complex128": (
        "complex128",
        [
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            _bytes("big"),
            {"name": "gzip", "configuration": {"level": 1}},
            {"name": "crc32c"},
        ],
        "transpose [1, 0] + bytes big + gzip level 1 + crc32c",
    ),
}


def _register_tensorstore_chains() -> None:
    for cname, (dtype, codecs, text) in _TS_CHAINS.items():

        def build(store: Path, dtype=dtype, codecs=codecs, text=text, cname=cname) -> Built:
            data = random_data(dtype, (7, 5), rng_for(f"ts-{cname}"))
            t = ts_array(store, shape=data.shape, chunks=(4, 3), dtype=dtype, codecs=codecs)
            t.write(data).result()
            return Built(
                data,
                f"{dtype}, shape (7, 5), chunks (4, 3) (edge chunks in both dimensions); "
                f"codecs: {text}; chunk_key_encoding written as {{\"name\": \"default\"}}",
            )

        fixture("tensorstore", cname)(build)


_register_tensorstore_chains()


@fixture("tensorstore", "transpose_3d_uint8")
def _(store: Path) -> Built:
    data = random_data("uint8", (4, 5, 6), rng_for("ts-transpose-3d"))
    codecs = [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, _bytes(None)]
    t = ts_array(store, shape=data.shape, chunks=(3, 3, 4), dtype="uint8", codecs=codecs)
    t.write(data).result()
    return Built(
        data, "uint8, shape (4, 5, 6), chunks (3, 3, 4); codecs: transpose [2, 0, 1] + bytes"
    )


@fixture("tensorstore", "missing_chunks_float64_nan")
def _(store: Path) -> Built:
    data = random_data("float64", (8, 8), rng_for("ts-missing"))
    codecs = [_bytes("little"), {"name": "zstd", "configuration": {"level": 1}}]
    t = ts_array(
        store, shape=(8, 8), chunks=(3, 3), dtype="float64", fill_value="NaN", codecs=codecs
    )
    t[1:4, 6:8].write(data[1:4, 6:8]).result()
    intended = with_fill((8, 8), "float64", "NaN")
    intended[1:4, 6:8] = data[1:4, 6:8]
    return Built(
        intended,
        "float64, shape (8, 8), chunks (3, 3), fill NaN, bytes + zstd; only [1:4, 6:8] "
        "written (touching chunks (0, 2) and (1, 2), the edge column); the rest is absent",
    )


@fixture("tensorstore", "missing_chunks_int16_fill")
def _(store: Path) -> Built:
    data = random_data("int16", (5, 7), rng_for("ts-missing-int"))
    t = ts_array(store, shape=(5, 7), chunks=(2, 3), dtype="int16", fill_value=-300)
    t[4:5, 0:3].write(data[4:5, 0:3]).result()
    intended = with_fill((5, 7), "int16", -300)
    intended[4:5, 0:3] = data[4:5, 0:3]
    return Built(intended, "int16, shape (5, 7), chunks (2, 3), fill -300; only [4:5, 0:3] written")


@fixture("tensorstore", "shape_0d_float32")
def _(store: Path) -> Built:
    data = np.array(2.5, dtype="float32")
    t = ts_array(store, shape=(), chunks=(), dtype="float32", fill_value=1.0)
    t.write(data).result()
    return Built(data, "0-d float32 holding 2.5 (fill 1.0); chunk key 'c'")


@fixture("tensorstore", "key_encoding_v2_dot")
def _(store: Path) -> Built:
    data = random_data("int32", (5, 4), rng_for("ts-v2-keys"))
    t = ts_array(
        store,
        shape=data.shape,
        chunks=(2, 3),
        dtype="int32",
        chunk_key_encoding={"name": "v2", "configuration": {"separator": "."}},
    )
    t.write(data).result()
    return Built(
        data,
        "int32, chunks (2, 3), chunk_key_encoding v2 '.' (tensorstore omits the default "
        "configuration and writes {\"name\": \"v2\"})",
    )


@fixture("tensorstore", "dimension_names_attributes")
def _(store: Path) -> Built:
    data = random_data("int64", (3, 4), rng_for("ts-dimnames"))
    t = ts_array(
        store,
        shape=data.shape,
        chunks=(2, 2),
        dtype="int64",
        dimension_names=["y", "x"],
        attributes={"source": "tensorstore", "values": [1.5, 2.5]},
    )
    t.write(data).result()
    return Built(data, "int64 with dimension_names ['y', 'x'] and attributes")


# ---------------------------------------------------------------------------
# variable-length values (strings and bytes) shared by the V2 and V3 fixtures
# ---------------------------------------------------------------------------

# Edge cases first; random ones fill the rest. No string ends in NUL, so the
# fixed-width numpy U form saved as expected.npy is exact (build_fixture
# checks); bytes values do end in NUL, so their exact values live in
# fixture.json["expected_values"] (hex) and expected.npy is only the S form.
_STRING_CASES = (
    "", "a", "héllo", "✓ check", "日本語テキスト", "🦀 crab", "x\x00y", " lead", "trail ",
    "line\nbreak", "q" * 300,
)  # fmt: skip
_BYTES_CASES = (
    b"", b"\x00", b"a\x00", b"\x00\x01\x02", b"\xff\xfe", bytes(range(256)), b"zz\x00\x00",
)  # fmt: skip
_ALPHABET = list("abcdefghijklmnopqrstuvwxyzäöüßéñ€✓日本") + [" ", "-"]


def random_strings(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    values = list(_STRING_CASES[:n])
    while len(values) < n:
        k = int(rng.integers(0, 12))
        values.append("".join(rng.choice(_ALPHABET, size=k).tolist()))
    return np.array(values, dtype=np.dtypes.StringDType()).reshape(shape)


def random_bytes(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    values = list(_BYTES_CASES[:n])
    while len(values) < n:
        values.append(rng.integers(0, 256, size=int(rng.integers(0, 10)), dtype=np.uint8).tobytes())
    out = np.empty(n, dtype=object)
    out[:] = values
    return out.reshape(shape)


def with_vlen_fill(shape: tuple[int, ...], kind: str, fill: str | bytes) -> np.ndarray:
    if kind == "string":
        return np.full(shape, fill, dtype=np.dtypes.StringDType())
    out = np.empty(shape, dtype=object)
    out[...] = fill
    return out


# ---------------------------------------------------------------------------
# zarr-python V2 fixtures (zarr_format=2: .zarray / .zgroup / .zattrs)
# ---------------------------------------------------------------------------


@fixture("zarr-python", "v2_blosc_lz4_shuffle")
def _(store: Path) -> Built:
    data = random_data("int32", (9, 8), rng_for("zp-v2-blosc"))
    compressor = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    zp_array(store, data, chunks=(5, 5), zarr_format=2, compressors=compressor)
    return Built(
        data,
        "V2 int32 ('<i4'), shape (9, 8), chunks (5, 5) (edge chunks in both dimensions), "
        "compressor blosc lz4 clevel 5 shuffle 1 (byte shuffle), blocksize 0; no filters",
    )


@fixture("zarr-python", "v2_zlib_delta")
def _(store: Path) -> Built:
    data = random_data("int32", (9, 8), rng_for("zp-v2-delta"))
    zp_array(
        store,
        data,
        chunks=(5, 5),
        zarr_format=2,
        filters=[numcodecs.Delta(dtype="<i4")],
        compressors=numcodecs.Zlib(level=3),
    )
    return Built(
        data,
        "V2 int32, shape (9, 8), chunks (5, 5), filters [delta dtype '<i4' astype '<i4'], "
        "compressor zlib level 3; the data spans the whole int32 range, so the stored "
        "differences wrap around",
    )


@fixture("zarr-python", "v2_gzip_fixedscaleoffset")
def _(store: Path) -> Built:
    ks = rng_for("zp-v2-fso").integers(-100000, 100000, size=(11,)).astype("int32")
    # Exactly what the filter decodes to: int -> float64, / scale, + offset.
    data = ks.astype("float64") / 100 + 10
    fso = numcodecs.FixedScaleOffset(offset=10, scale=100, dtype="<f8", astype="<i4")
    zp_array(
        store, data, chunks=(4,), zarr_format=2, filters=[fso], compressors=numcodecs.GZip(level=5)
    )
    return Built(
        data,
        "V2 float64, shape (11,), chunks (4,), filters [fixedscaleoffset offset 10 scale 100 "
        "astype '<i4'] (lossy: the data is chosen as 10 + k/100, computed as the filter "
        "decodes it, so the read-back is exact), compressor gzip level 5 (header MTIME 0)",
    )


@fixture("zarr-python", "v2_order_F_fill_nan")
def _(store: Path) -> Built:
    data = random_data("float32", (7, 9), rng_for("zp-v2-order-f"))
    region = np.s_[1:6, 2:7]
    zp_array(
        store,
        data,
        chunks=(4, 4),
        zarr_format=2,
        order="F",
        fill_value=np.nan,
        region=region,
    )
    intended = with_fill((7, 9), "float32", "NaN")
    intended[region] = data[region]
    return Built(
        intended,
        "V2 float32, shape (7, 9), chunks (4, 4), order \"F\" (chunk bytes are column-major), "
        "fill_value \"NaN\", compressor zstd (zarr-python's default); only [1:6, 2:7] "
        "written: the four stored chunks hold NaN fill around the data, the third chunk "
        "column is absent. The data has NaN payloads, -NaN and -0.0",
    )


@fixture("zarr-python", "v2_dimension_separator_slash")
def _(store: Path) -> Built:
    data = random_data("uint16", (5, 7), rng_for("zp-v2-slash"))
    zp_array(
        store,
        data,
        chunks=(3, 4),
        zarr_format=2,
        chunk_key_encoding={"name": "v2", "separator": "/"},
    )
    return Built(data, "V2 uint16, shape (5, 7), chunks (3, 4), dimension_separator \"/\": keys 0/1")


@fixture("zarr-python", "v2_big_endian_no_compressor")
def _(store: Path) -> Built:
    data = random_data(">f8", (6, 5), rng_for("zp-v2-big"))
    zp_array(
        store, data, chunks=(4, 4), zarr_format=2, compressors=None, fill_value=0.5,
        region=np.s_[0:4, 0:5],
    )  # fmt: skip
    intended = native(with_fill((6, 5), ">f8", 0.5))
    intended[0:4, 0:5] = data[0:4, 0:5]
    return Built(
        intended,
        "V2 dtype '>f8' (big-endian float64), shape (6, 5), chunks (4, 4), compressor null "
        "(chunks are the raw big-endian elements), fill_value 0.5; only the first chunk row "
        "written, the second reads as 0.5. expected.npy is native-endian",
    )


@fixture("zarr-python", "v2_vlen_utf8")
def _(store: Path) -> Built:
    data = random_strings((5, 4), rng_for("zp-v2-vlen-utf8"))
    region = np.s_[0:4, 0:3]
    zp_array(store, data, chunks=(2, 3), zarr_format=2, dtype=str, region=region)
    intended = with_vlen_fill((5, 4), "string", "")
    intended[region] = data[region]
    return Built(
        intended,
        "V2 strings: dtype '|O' with filters [vlen-utf8], compressor zstd, shape (5, 4), "
        "chunks (2, 3), fill_value \"\"; only [0:4, 0:3] written, so the second chunk column "
        "and the last chunk row are absent and read as \"\"; values include \"\", non-ASCII, "
        "an emoji, an embedded NUL and a 300-character string",
    )


@fixture("zarr-python", "v2_vlen_bytes")
def _(store: Path) -> Built:
    data = random_bytes((9,), rng_for("zp-v2-vlen-bytes"))
    zp_array(
        store, data, chunks=(4,), zarr_format=2, dtype=VariableLengthBytes(),
        fill_value=b"\x00\xffz", region=np.s_[0:6],
    )  # fmt: skip
    intended = with_vlen_fill((9,), "bytes", b"\x00\xffz")
    intended[0:6] = data[0:6]
    return Built(
        intended,
        "V2 variable-length bytes: dtype '|O' with filters [vlen-bytes], compressor zstd, "
        "shape (9,), chunks (4,), fill_value \"AP96\" (base64 of b'\\x00\\xffz'); [0:6] "
        "written: chunk 1 holds two fill elements, chunk 2 is absent; values include b'', "
        "NUL bytes (leading, inner and trailing) and all 256 byte values",
    )


def _v2_group(store: Path, consolidated: bool) -> Built:
    rng = rng_for("zp-v2-group-consolidated" if consolidated else "zp-v2-group")
    root = zarr.create_group(
        str(store), zarr_format=2, attributes={"title": "golden V2 group", "n": [1, 2]}
    )
    a = random_data("int16", (7,), rng)
    root.create_array(
        "a", shape=a.shape, dtype=a.dtype, chunks=(3,), attributes={"units": "K"},
        compressors=numcodecs.Zlib(level=1),
    )[...] = a  # fmt: skip
    sub = root.create_group("sub", attributes={"level": 1})
    b = random_data("float64", (3, 4), rng)
    sub.create_array("b", shape=b.shape, dtype=b.dtype, chunks=(2, 2), fill_value=-1.0)[
        0:2, :
    ] = b[0:2, :]
    b_intended = b.copy()
    b_intended[2:, :] = -1.0
    deeper = sub.create_group("deeper")
    c = random_data("uint8", (2, 2, 2), rng)
    deeper.create_array("c", shape=c.shape, dtype=c.dtype, chunks=(1, 2, 2))[...] = c
    root.create_group("empty")
    text = (
        "V2 hierarchy: root .zgroup + .zattrs, array 'a' (.zattrs units, zlib), group 'sub' "
        "(.zattrs) holding array 'b' (second chunk row absent, fill -1.0) and group 'deeper' "
        "holding 3-D uint8 'c', and an empty group 'empty'"
    )
    if consolidated:
        zarr.consolidate_metadata(str(store))
        text += (
            "; zarr.consolidate_metadata wrote .zmetadata at the root (zarr-python's "
            "\"sub/.zgroup\" entry there also carries an empty inline "
            "\"consolidated_metadata\" member that the sub/.zgroup file lacks)"
        )
    return Built(
        None,
        text,
        arrays={"a": a, "sub/b": b_intended, "sub/deeper/c": c},
        extra={"groups": ["", "empty", "sub", "sub/deeper"], "consolidated": consolidated},
    )


fixture("zarr-python", "v2_group_hierarchy")(lambda store: _v2_group(store, False))
fixture("zarr-python", "v2_group_consolidated")(lambda store: _v2_group(store, True))


# ---------------------------------------------------------------------------
# zarr-python sharded and variable-length V3 fixtures
# ---------------------------------------------------------------------------


@fixture("zarr-python", "sharded_gzip")
def _(store: Path) -> Built:
    data = random_data("uint16", (10, 9), rng_for("zp-sharded-gzip"))
    zp_array(store, data, chunks=(2, 3), shards=(4, 6), compressors=[zc.GzipCodec(level=1)])
    return Built(
        data,
        "uint16, shape (10, 9), shards (4, 6), inner chunks (2, 3), inner codecs bytes "
        "little + gzip level 1, index bytes + crc32c at the end; the edge shards hang over "
        "the array in both dimensions",
    )


@fixture("zarr-python", "sharded_partial_zstd")
def _(store: Path) -> Built:
    data = random_data("float32", (8, 12), rng_for("zp-sharded-partial"))
    zp_array(
        store, data, chunks=(2, 3), shards=(4, 6), fill_value=-1.0,
        compressors=[zc.ZstdCodec(level=3)], region=np.s_[0:3, 0:2],
    )  # fmt: skip
    arr = zarr.open_array(str(store), mode="r+")
    arr[5:6, 9:12] = data[5:6, 9:12]
    arr[6:8, 0:3] = -1.0  # an inner chunk equal to the fill value: not stored
    intended = with_fill((8, 12), "float32", -1.0)
    intended[0:3, 0:2] = data[0:3, 0:2]
    intended[5:6, 9:12] = data[5:6, 9:12]
    return Built(
        intended,
        "float32, shape (8, 12), shards (4, 6), inner chunks (2, 3), fill -1.0, inner bytes "
        "+ zstd level 3; only [0:3, 0:2] and [5:6, 9:12] written: shard c/0/0 holds 2 of its "
        "4 inner chunks (the other index entries are the empty marker 2**64-1, the first "
        "inner chunk row is partly fill), c/1/1 holds one, c/0/1 is absent, and c/1/0 is "
        "absent because the only chunk written there equals the fill value",
    )


@fixture("zarr-python", "sharded_index_start")
def _(store: Path) -> Built:
    data = random_data("int64", (6, 8), rng_for("zp-sharded-start"))
    sharding = zc.ShardingCodec(
        chunk_shape=(3, 2),
        codecs=[zc.BytesCodec(endian="big"), zc.Crc32cCodec()],
        index_location="start",
    )
    zp_array(store, data, chunks=(6, 4), serializer=sharding, compressors=None)
    return Built(
        data,
        "int64, shape (6, 8), shards (6, 4), inner chunks (3, 2), index_location \"start\" "
        "(the index precedes the chunks), inner codecs bytes big + crc32c",
    )


@fixture("zarr-python", "vlen_string")
def _(store: Path) -> Built:
    data = random_strings((5, 4), rng_for("zp-vlen-string"))
    region = np.s_[0:4, 0:3]
    zp_array(store, data, chunks=(2, 3), dtype=str, region=region)
    intended = with_vlen_fill((5, 4), "string", "")
    intended[region] = data[region]
    return Built(
        intended,
        "data_type \"string\" (zarr-python dtype=str), codecs vlen-utf8 + zstd, shape (5, 4), "
        "chunks (2, 3), fill_value \"\"; only [0:4, 0:3] written (the second chunk column and "
        "the last chunk row are absent); values include \"\", non-ASCII, an emoji, an embedded "
        "NUL and a 300-character string",
    )


@fixture("zarr-python", "vlen_string_fill")
def _(store: Path) -> Built:
    data = random_strings((7,), rng_for("zp-vlen-string-fill"))
    zp_array(store, data, chunks=(3,), dtype=str, fill_value="n/a ✓", region=np.s_[0:4])
    intended = with_vlen_fill((7,), "string", "n/a ✓")
    intended[0:4] = data[0:4]
    return Built(
        intended,
        "data_type \"string\", shape (7,), chunks (3,), non-empty fill_value \"n/a ✓\"; only "
        "[0:4] written: chunk 1 holds one value and two fill elements, chunk 2 is absent",
    )


@fixture("zarr-python", "vlen_bytes")
def _(store: Path) -> Built:
    data = random_bytes((9,), rng_for("zp-vlen-bytes"))
    zp_array(
        store, data, chunks=(4,), dtype=VariableLengthBytes(), fill_value=b"\x00\xffz",
        region=np.s_[0:7],
    )  # fmt: skip
    intended = with_vlen_fill((9,), "bytes", b"\x00\xffz")
    intended[0:7] = data[0:7]
    return Built(
        intended,
        "data_type \"variable_length_bytes\", codecs vlen-bytes + zstd, shape (9,), chunks "
        "(4,), fill_value \"AP96\" (base64 of b'\\x00\\xffz'); [0:7] written, the rest is "
        "fill; values include b'', NUL bytes (leading, inner and trailing) and all 256 byte "
        "values",
    )


@fixture("zarr-python", "sharded_vlen_string")
def _(store: Path) -> Built:
    data = random_strings((10,), rng_for("zp-sharded-vlen-string"))
    zp_array(store, data, chunks=(2,), shards=(4,), dtype=str, region=np.s_[0:3])
    arr = zarr.open_array(str(store), mode="r+")
    arr[8:10] = data[8:10]
    intended = with_vlen_fill((10,), "string", "")
    intended[0:3] = data[0:3]
    intended[8:10] = data[8:10]
    return Built(
        intended,
        "strings in shards: data_type \"string\", shape (10,), shards (4,), inner chunks (2,), "
        "inner codecs vlen-utf8 + zstd; [0:3] and [8:10] written: shard c/0 holds a full and "
        "a half-filled inner chunk, c/1 is absent, c/2 (the edge shard) holds one inner chunk",
    )


@fixture("zarr-python", "sharded_vlen_bytes")
def _(store: Path) -> Built:
    data = random_bytes((4, 6), rng_for("zp-sharded-vlen-bytes"))
    zp_array(
        store, data, chunks=(2, 2), shards=(4, 4), dtype=VariableLengthBytes(),
        compressors=[zc.GzipCodec(level=1)],
    )  # fmt: skip
    return Built(
        data,
        "variable-length bytes in shards: shape (4, 6), shards (4, 4), inner chunks (2, 2), "
        "inner codecs vlen-bytes + gzip level 1; the second shard hangs over the array",
    )


# ---------------------------------------------------------------------------
# zarr-python datetime64 / timedelta64 fixtures (V3 and V2)
# ---------------------------------------------------------------------------
# zarr-python 3.4.2 writes V3 data_type {"name": "numpy.datetime64" |
# "numpy.timedelta64", "configuration": {"unit", "scale_factor"}} and the fill
# as the raw int64 (NaT = -2**63, the default); V2 keeps numpy's "<M8[ns]".
# Neither tensorstore nor the zarrs pipeline has these types (their refusals
# are the cross_checks; zarrs_refuses_time_dtypes checks the write side too).


def time_fill(dtype: str, count: int) -> np.generic:
    """The scalar of ``dtype`` that is ``count`` units (JSON fill ``count``)."""
    return np.array(count, dtype=np.int64).view(np.dtype(dtype).newbyteorder("="))[()]


def zarrs_refuses_time_dtypes() -> None:
    """The zarrs pipeline (strict) must refuse to write datetime/timedelta arrays,
    V3 and V2, or the README's claim and the missing zarrs fixtures are wrong."""
    import tempfile

    for zarr_format, dtype in ((3, "M8[ns]"), (3, "m8[ms]"), (2, "<M8[ns]"), (2, ">m8[us]")):
        with tempfile.TemporaryDirectory() as tmp, zarr.config.set(ZARRS_CONFIG):
            try:
                arr = zarr.create_array(
                    f"{tmp}/t.zarr", shape=(2,), dtype=dtype, chunks=(2,), zarr_format=zarr_format
                )
                arr[...] = np.array([1, _NAT], dtype=np.int64).view(np.dtype(dtype))
            except Exception as exc:  # the expected outcome: recorded below
                check("Unsupported" in type(exc).__name__, f"zarrs {dtype} V{zarr_format}: {exc!r}")
            else:
                check(False, f"the zarrs pipeline wrote {dtype} (V{zarr_format}): add zarrs fixtures")


_NAT_TEXT = "the data holds NaT (-2**63), -2**63+1, 2**63-1, 0, -1 and random int64 counts"


@fixture("zarr-python", "datetime64_ns_nat_fill")
def _(store: Path) -> Built:
    data = random_data("M8[ns]", (9, 8), rng_for("zp-datetime64-ns"))
    region = np.s_[0:6, 0:5]
    zp_array(store, data, chunks=(4, 3), region=region)
    intended = with_fill((9, 8), "M8[ns]", _NAT)
    intended[region] = data[region]
    return Built(
        intended,
        "data_type numpy.datetime64 {unit \"ns\", scale_factor 1}, shape (9, 8), chunks (4, 3), "
        "default fill_value -9223372036854775808 (NaT), bytes little + zstd; only [0:6, 0:5] "
        "written: stored chunks in the second chunk row/column hold NaT fill around the "
        f"data, the third chunk row and column are absent; {_NAT_TEXT}",
    )


@fixture("zarr-python", "datetime64_D_fill")
def _(store: Path) -> Built:
    data = random_data("M8[D]", (7, 6), rng_for("zp-datetime64-D"))
    fill = 10957  # 2000-01-01
    region = np.s_[0:5, 0:4]
    zp_array(store, data, chunks=(3, 4), fill_value=time_fill("M8[D]", fill), region=region)
    check(read_json(store / "zarr.json")["fill_value"] == fill, "datetime64_D_fill fill json")
    intended = with_fill((7, 6), "M8[D]", fill)
    intended[region] = data[region]
    return Built(
        intended,
        "data_type numpy.datetime64 {unit \"D\", scale_factor 1}, shape (7, 6), chunks (3, 4), "
        "explicit fill_value 10957 (2000-01-01), bytes little + zstd; only [0:5, 0:4] written: "
        "chunk c/1/0 holds fill in its last row, the third chunk row and the second chunk "
        "column are absent; "
        f"{_NAT_TEXT}",
    )


@fixture("zarr-python", "datetime64_10s_big_endian")
def _(store: Path) -> Built:
    data = random_data("M8[10s]", (6, 5), rng_for("zp-datetime64-10s"))
    zp_array(
        store, data, chunks=(4, 4), serializer=zc.BytesCodec(endian="big"), compressors=None
    )
    return Built(
        data,
        "data_type numpy.datetime64 {unit \"s\", scale_factor 10} (numpy datetime64[10s]), "
        "shape (6, 5), chunks (4, 4), default fill NaT, bytes endian big and no compressor "
        f"(chunks are the raw big-endian int64 counts); every chunk written; {_NAT_TEXT}",
    )


@fixture("zarr-python", "timedelta64_ms_sharded")
def _(store: Path) -> Built:
    data = random_data("m8[ms]", (10, 9), rng_for("zp-timedelta64-ms"))
    fill = -1500
    zp_array(
        store, data, chunks=(2, 3), shards=(4, 6), fill_value=time_fill("m8[ms]", fill),
        compressors=[zc.ZstdCodec(level=3)], region=np.s_[0:3, 0:4],
    )  # fmt: skip
    arr = zarr.open_array(str(store), mode="r+")
    arr[8:10, 6:9] = data[8:10, 6:9]
    check(read_json(store / "zarr.json")["fill_value"] == fill, "timedelta64_ms_sharded fill json")
    intended = with_fill((10, 9), "m8[ms]", fill)
    intended[0:3, 0:4] = data[0:3, 0:4]
    intended[8:10, 6:9] = data[8:10, 6:9]
    return Built(
        intended,
        "data_type numpy.timedelta64 {unit \"ms\", scale_factor 1}, shape (10, 9), shards "
        "(4, 6), inner chunks (2, 3), explicit fill_value -1500, inner bytes little + zstd "
        "level 3, index at the end; [0:3, 0:4] and [8:10, 6:9] written: shard c/0/0 holds 4 "
        "of its 4 inner chunks (partly fill), the edge shard c/2/1 one, the rest is absent; "
        f"{_NAT_TEXT}",
    )


@fixture("zarr-python", "v2_datetime64_ns")
def _(store: Path) -> Built:
    data = random_data("<M8[ns]", (7, 6), rng_for("zp-v2-datetime64-ns"))
    region = np.s_[0:5, 0:6]
    zp_array(store, data, chunks=(4, 4), zarr_format=2, region=region)
    intended = with_fill((7, 6), "<M8[ns]", _NAT)
    intended[region] = data[region]
    return Built(
        intended,
        "V2 dtype '<M8[ns]', shape (7, 6), chunks (4, 4), default fill_value "
        "-9223372036854775808 (NaT), compressor zstd (zarr-python's default); only [0:5, 0:6] "
        f"written: the second chunk row holds NaT fill below the data; {_NAT_TEXT}",
    )


@fixture("zarr-python", "v2_timedelta64_us_big_endian")
def _(store: Path) -> Built:
    data = random_data(">m8[us]", (9,), rng_for("zp-v2-timedelta64-us"))
    fill = 250
    zp_array(
        store, data, chunks=(4,), zarr_format=2, compressors=None,
        fill_value=time_fill(">m8[us]", fill), region=np.s_[0:6],
    )  # fmt: skip
    check(read_json(store / ".zarray")["fill_value"] == fill, "v2_timedelta64 fill json")
    intended = native(with_fill((9,), ">m8[us]", fill))
    intended[0:6] = data[0:6]
    return Built(
        intended,
        "V2 dtype '>m8[us]' (big-endian timedelta64), shape (9,), chunks (4,), compressor "
        "null (chunks are the raw big-endian int64 counts), explicit fill_value 250; [0:6] "
        "written: chunk 1 holds two fill elements, chunk 2 is absent; expected.npy is "
        f"native-endian; {_NAT_TEXT}",
    )


# ---------------------------------------------------------------------------
# tensorstore V2 (driver "zarr") and sharded V3 fixtures
# ---------------------------------------------------------------------------


def ts_v2_array(store: Path, **metadata: Any) -> Any:
    spec = {
        "driver": "zarr",
        "kvstore": {"driver": "file", "path": str(store) + "/"},
        "metadata": metadata,
    }
    return ts.open(spec, create=True, delete_existing=True).result()


@fixture("tensorstore", "v2_blosc_lz4_int32")
def _(store: Path) -> Built:
    data = random_data("int32", (7, 5), rng_for("ts-v2-blosc"))
    compressor = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}
    t = ts_v2_array(store, shape=[7, 5], chunks=[4, 3], dtype="<i4", compressor=compressor)
    t.write(data).result()
    return Built(
        data,
        "V2 (tensorstore driver \"zarr\") int32, shape (7, 5), chunks (4, 3), compressor "
        "blosc lz4 clevel 5 shuffle 1; fill_value null (tensorstore's default: no fill "
        "value), every chunk written",
    )


@fixture("tensorstore", "v2_zlib_big_endian_F_nan_slash")
def _(store: Path) -> Built:
    data = random_data("float64", (7, 5), rng_for("ts-v2-zlib"))
    t = ts_v2_array(
        store, shape=[7, 5], chunks=[4, 3], dtype=">f8", compressor={"id": "zlib", "level": 4},
        fill_value="NaN", order="F", dimension_separator="/",
    )  # fmt: skip
    region = np.s_[1:4, 0:4]
    t[region].write(data[region]).result()
    intended = with_fill((7, 5), "float64", "NaN")
    intended[region] = data[region]
    return Built(
        intended,
        "V2 (tensorstore driver \"zarr\") dtype '>f8', shape (7, 5), chunks (4, 3), compressor "
        "zlib level 4, order \"F\", fill_value \"NaN\", dimension_separator \"/\"; only "
        "[1:4, 0:4] written: chunks 0/0 and 0/1 hold NaN fill around the data, the second "
        "chunk row is absent; expected.npy is native-endian",
    )


@fixture("tensorstore", "v2_no_compressor_uint16")
def _(store: Path) -> Built:
    data = random_data("uint16", (7, 5), rng_for("ts-v2-raw"))
    t = ts_v2_array(store, shape=[7, 5], chunks=[4, 3], dtype="<u2", compressor=None)
    t.write(data).result()
    return Built(
        data,
        "V2 (tensorstore driver \"zarr\") uint16, shape (7, 5), chunks (4, 3), compressor "
        "null (raw chunks, edge chunks stored at full size), fill_value null; every chunk "
        "written",
    )


def _sharding(
    inner: list[int], codecs: list[dict[str, Any]], *, location: str | None = None
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "chunk_shape": inner,
        "codecs": codecs,
        "index_codecs": [_bytes("little"), {"name": "crc32c"}],
    }
    if location is not None:
        config["index_location"] = location
    return {"name": "sharding_indexed", "configuration": config}


@fixture("tensorstore", "sharded_crc32c_partial")
def _(store: Path) -> Built:
    data = random_data("uint16", (10, 9), rng_for("ts-sharded-crc32c"))
    codecs = [_sharding([2, 3], [_bytes("little"), {"name": "crc32c"}])]
    t = ts_array(store, shape=(10, 9), chunks=(4, 6), dtype="uint16", fill_value=7, codecs=codecs)
    t[1:2, 2:4].write(data[1:2, 2:4]).result()
    t[8:10, 6:9].write(data[8:10, 6:9]).result()
    intended = with_fill((10, 9), "uint16", 7)
    intended[1:2, 2:4] = data[1:2, 2:4]
    intended[8:10, 6:9] = data[8:10, 6:9]
    return Built(
        intended,
        "uint16, shape (10, 9), shards (4, 6), inner chunks (2, 3), fill 7, inner codecs "
        "bytes little + crc32c, index bytes + crc32c (index_location omitted: \"end\"); "
        "[1:2, 2:4] and [8:10, 6:9] written: shard c/0/0 holds 2 of its 4 inner chunks, the "
        "edge shard c/2/1 holds one (two of its inner chunks lie wholly outside the array), "
        "the other shards are absent",
    )


@fixture("tensorstore", "sharded_nested_index_start")
def _(store: Path) -> Built:
    data = random_data("int32", (12, 10), rng_for("ts-sharded-nested"))
    inner = _sharding([2, 2], [_bytes("little"), {"name": "gzip", "configuration": {"level": 1}}])
    codecs = [_sharding([4, 4], [inner], location="start")]
    t = ts_array(store, shape=(12, 10), chunks=(8, 8), dtype="int32", codecs=codecs)
    region = np.s_[0:10, 0:7]
    t[region].write(data[region]).result()
    intended = with_fill((12, 10), "int32", 0)
    intended[region] = data[region]
    return Built(
        intended,
        "nested sharding: int32, shape (12, 10), shards (8, 8) with index_location \"start\", "
        "whose inner chunks (4, 4) are themselves shards of (2, 2) chunks (bytes little + "
        "gzip level 1, index at the end); only [0:10, 0:7] written, so shards and sub-shards "
        "hold empty entries",
    )


# ---------------------------------------------------------------------------
# zarrs pipeline fixtures (zarr-python API, chunks encoded by the zarrs crate)
# ---------------------------------------------------------------------------


@fixture("zarrs", "sharded_zstd_partial")
def _(store: Path) -> Built:
    data = random_data("float32", (16, 12), rng_for("zarrs-sharded-zstd"))
    with zarr.config.set(ZARRS_CONFIG):
        arr = zp_array(
            store, data, chunks=(2, 3), shards=(8, 6), fill_value=-1.0,
            compressors=[zc.ZstdCodec(level=3)], region=np.s_[0:5, 0:4],
        )  # fmt: skip
        arr[8:16, 6:12] = data[8:16, 6:12]
    intended = with_fill((16, 12), "float32", -1.0)
    intended[0:5, 0:4] = data[0:5, 0:4]
    intended[8:16, 6:12] = data[8:16, 6:12]
    return Built(
        intended,
        "float32, shape (16, 12), shards (8, 6), inner chunks (2, 3), fill -1.0, inner bytes "
        "little + zstd level 3, index at the end; [0:5, 0:4] and [8:16, 6:12] written: shard "
        "c/0/0 holds 6 of its 8 inner chunks, c/1/1 all 8, the other two are absent",
    )


@fixture("zarrs", "sharded_index_start_gzip")
def _(store: Path) -> Built:
    data = random_data("uint32", (8, 6), rng_for("zarrs-sharded-start"))
    sharding = zc.ShardingCodec(
        chunk_shape=(2, 3),
        codecs=[zc.BytesCodec(endian="big"), zc.GzipCodec(level=2)],
        index_location="start",
    )
    with zarr.config.set(ZARRS_CONFIG):
        zp_array(store, data, chunks=(4, 6), serializer=sharding, compressors=None)
    return Built(
        data,
        "uint32, shape (8, 6), shards (4, 6), inner chunks (2, 3), index_location \"start\", "
        "inner codecs bytes big + gzip level 2 (gzip written by the Rust flate2 crate)",
    )


@fixture("zarrs", "v2_blosc_zstd_bitshuffle")
def _(store: Path) -> Built:
    data = random_data("float32", (7, 6), rng_for("zarrs-v2-blosc"))
    compressor = numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE)
    with zarr.config.set(ZARRS_CONFIG):
        zp_array(store, data, chunks=(4, 4), zarr_format=2, compressors=compressor)
    return Built(
        data,
        "V2 float32, shape (7, 6), chunks (4, 4), compressor blosc zstd clevel 3 bitshuffle "
        "(shuffle 2); metadata by zarr-python, chunks encoded by zarrs",
    )


# ---------------------------------------------------------------------------
# spec fixtures: metadata and chunk bytes by hand
# ---------------------------------------------------------------------------


def spec_meta(
    shape, chunks, dtype: Any, fill: Any, codecs: list, *, separator: str | None = "/", **more
) -> dict[str, Any]:
    cke: dict[str, Any] = {"name": "default"}
    if separator is not None:
        cke["configuration"] = {"separator": separator}
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape),
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": cke,
        "fill_value": fill,
        "codecs": codecs,
    }
    doc.update(more)
    return doc


def write_chunks(
    store: Path,
    data: np.ndarray,
    chunks: tuple[int, ...],
    fill: Any,
    encode: Callable[[np.ndarray], bytes],
    *,
    skip: set[tuple[int, ...]] = frozenset(),
    pad: Any = None,
) -> None:
    """Write every chunk of ``data`` (except ``skip``) under ``c/i/j`` keys.

    Edge chunks are padded to the full chunk shape with ``pad`` (default: the
    fill value) -- readers must ignore whatever lies outside the array.
    """
    grid = [-(-s // c) for s, c in zip(data.shape, chunks)]
    for coords in np.ndindex(*grid):
        if coords in skip:
            continue
        sel = tuple(
            slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(coords, chunks, data.shape)
        )
        pad_value = fill_scalar(fill, data.dtype.str) if pad is None else pad
        block = np.full(chunks, pad_value, data.dtype)
        part = data[sel]
        block[tuple(slice(0, n) for n in part.shape)] = part
        key = store.joinpath("c", *map(str, coords)) if coords else store / "c"
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(encode(block))


def with_crc(payload: bytes) -> bytes:
    return payload + struct.pack("<I", crc32c.crc32c(payload))


@fixture("spec", "uint8_bytes_only")
def _(store: Path) -> Built:
    data = np.arange(1, 21, dtype="uint8").reshape(5, 4)
    store.mkdir()
    write_json(store / "zarr.json", spec_meta((5, 4), (2, 4), "uint8", 255, [{"name": "bytes"}]))
    write_chunks(store, data, (2, 4), 255, lambda b: b.tobytes(), skip={(1, 0)}, pad=0xAA)
    intended = data.copy()
    intended[2:4] = 255
    return Built(
        intended,
        "uint8 [5, 4], chunks [2, 4], codecs [{\"name\": \"bytes\"}] (no endian: 1-byte type), "
        "chunk bytes are the raw elements; c/1/0 is absent (fill 255); the edge chunk c/2/0 "
        "is padded with 0xAA bytes that readers must drop",
    )


@fixture("spec", "core_example_float64_gzip")
def _(store: Path) -> Built:
    data = np.arange(200, dtype="float64").reshape(20, 10) / 8
    store.mkdir()
    meta = spec_meta(
        (20, 10),
        (10, 5),
        "float64",
        "NaN",
        [_bytes("little"), {"name": "gzip", "configuration": {"level": 1}}],
        dimension_names=["rows", "columns"],
        attributes={"foo": 42, "bar": "apples", "baz": [1, 2, 3, 4]},
    )
    write_json(store / "zarr.json", meta)

    def enc(b: np.ndarray) -> bytes:
        return gzip.compress(b.astype("<f8").tobytes(), compresslevel=1, mtime=0)

    write_chunks(store, data, (10, 5), "NaN", enc, skip={(1, 1)})
    intended = data.copy()
    intended[10:, 5:] = np.nan
    return Built(
        intended,
        "the array example from the V3 core spec (float64, dimension_names rows/columns, "
        "fill NaN, attributes foo/bar/baz, bytes little + gzip level 1) scaled down from "
        "[10000, 1000] / [1000, 100] to shape [20, 10], chunks [10, 5]; chunks gzipped with "
        "Python's gzip module (mtime 0); c/1/1 absent",
    )


@fixture("spec", "notes_float32_nan_zstd")
def _(store: Path) -> Built:
    data = (np.arange(100, dtype="float32").reshape(10, 10) - 50) / 4
    store.mkdir()
    # Notes §2 verbatim, member order included.
    doc = {
        "shape": [10, 10],
        "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 5]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "NaN",
        "codecs": [
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
        ],
        "attributes": {},
        "zarr_format": 3,
        "node_type": "array",
        "storage_transformers": [],
    }
    write_json(store / "zarr.json", doc)
    cctx = zstandard.ZstdCompressor(level=3)
    write_chunks(store, data, (5, 5), "NaN", lambda b: cctx.compress(b.tobytes()), skip={(0, 1)})
    intended = data.copy()
    intended[0:5, 5:10] = np.nan
    return Built(
        intended,
        "the float32 NaN-fill example of ZARR-FORMAT-NOTES §2 verbatim (bytes little + zstd "
        "level 0, checksum false); chunks compressed with the zstandard package; c/0/1 absent",
    )


@fixture("spec", "zstd_frame_without_content_size")
def _(store: Path) -> Built:
    data = np.arange(24, dtype="int32").reshape(4, 6) * -1000
    store.mkdir()
    meta = spec_meta(
        (4, 6),
        (4, 3),
        "int32",
        0,
        [_bytes("little"), {"name": "zstd", "configuration": {"level": 1}}],
    )
    write_json(store / "zarr.json", meta)
    cctx = zstandard.ZstdCompressor(level=1, write_content_size=False)

    def enc(b: np.ndarray) -> bytes:
        # compressobj never knows the size up front, so the frame has no
        # Frame_Content_Size field.
        out = cctx.compressobj()
        return out.compress(b.tobytes()) + out.flush()

    write_chunks(store, data, (4, 3), 0, enc)
    return Built(
        data,
        "int32 with zstd configuration {\"level\": 1} (no checksum key: the spec says omit "
        "it when false); frames made without the content-size field",
    )


@fixture("spec", "crc32c_uint16")
def _(store: Path) -> Built:
    data = np.arange(0, 60000, 2500, dtype="uint16").reshape(4, 6)
    store.mkdir()
    meta = spec_meta(
        (4, 6), (3, 3), "uint16", 9, [_bytes("little"), {"name": "crc32c", "configuration": {}}]
    )
    write_json(store / "zarr.json", meta)
    write_chunks(store, data, (3, 3), 9, lambda b: with_crc(b.astype("<u2").tobytes()))
    return Built(
        data,
        "uint16, bytes little + crc32c written as {\"name\": \"crc32c\", \"configuration\": {}}; "
        "each chunk is the raw elements followed by their CRC-32C, little-endian",
    )


@fixture("spec", "shorthand_codec_bytes")
def _(store: Path) -> Built:
    data = np.array([[0, 1, 2], [253, 254, 255]], dtype="uint8")
    store.mkdir()
    write_json(store / "zarr.json", spec_meta((2, 3), (2, 2), "uint8", 0, ["bytes"]))
    write_chunks(store, data, (2, 2), 0, lambda b: b.tobytes())
    return Built(
        data,
        "uint8 with short-hand codecs [\"bytes\"] (V3.1 bare-string extension object); "
        "zarr-python rejects this form, readers should accept it",
    )


@fixture("spec", "shorthand_codec_bytes_crc32c")
def _(store: Path) -> Built:
    data = np.array([7, 8, 9, 10, 11], dtype="uint8")
    store.mkdir()
    write_json(store / "zarr.json", spec_meta((5,), (3,), "uint8", 0, ["bytes", "crc32c"]))
    write_chunks(store, data, (3,), 0, lambda b: with_crc(b.tobytes()))
    return Built(data, "uint8 with short-hand codecs [\"bytes\", \"crc32c\"]")


@fixture("spec", "must_understand_false_member")
def _(store: Path) -> Built:
    data = np.array([[1, 2], [3, 4], [5, 6]], dtype="int8")
    store.mkdir()
    meta = spec_meta((3, 2), (2, 2), "int8", -1, [{"name": "bytes"}], attributes={"k": "v"})
    meta["https://example.org/zarrpy-fixtures/provenance"] = {
        "must_understand": False,
        "configuration": {"tool": "generate.py"},
    }
    write_json(store / "zarr.json", meta)
    write_chunks(store, data, (2, 2), -1, lambda b: b.tobytes())
    return Built(
        data,
        "int8 whose zarr.json carries an unknown extension member with \"must_understand\": "
        "false, which readers must ignore",
    )


@fixture("spec", "transpose_uint8")
def _(store: Path) -> Built:
    data = np.arange(12, dtype="uint8").reshape(3, 4)
    store.mkdir()
    codecs = [{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes"}]
    write_json(store / "zarr.json", spec_meta((3, 4), (3, 4), "uint8", 0, codecs))
    write_chunks(store, data, (3, 4), 0, lambda b: np.ascontiguousarray(b.T).tobytes())
    return Built(
        data,
        "uint8 [3, 4], one chunk, transpose [1, 0] + bytes: the chunk is the C-order bytes "
        "of data.T = 00 04 08 01 05 09 02 06 0a 03 07 0b",
    )


@fixture("spec", "zero_d_int16_big_endian")
def _(store: Path) -> Built:
    data = np.array(-2, dtype="int16")
    store.mkdir()
    write_json(store / "zarr.json", spec_meta((), (), "int16", 0, [_bytes("big")]))
    (store / "c").write_bytes(b"\xff\xfe")
    return Built(data, "0-d int16, bytes big: the single chunk key 'c' holds ff fe (= -2)")


@fixture("spec", "default_key_encoding_no_configuration")
def _(store: Path) -> Built:
    data = np.arange(6, dtype="uint16").reshape(2, 3) * 257
    store.mkdir()
    write_json(
        store / "zarr.json",
        spec_meta((2, 3), (1, 3), "uint16", 0, [_bytes("big")], separator=None),
    )
    write_chunks(store, data, (1, 3), 0, lambda b: b.astype(">u2").tobytes())
    return Built(
        data,
        "uint16, chunk_key_encoding {\"name\": \"default\"} without configuration (separator "
        "'/' by default), bytes big",
    )


@fixture("spec", "data_type_object_form")
def _(store: Path) -> Built:
    data = np.array([1.0, -1.0, 0.5], dtype="float32")
    store.mkdir()
    meta = spec_meta((3,), (3,), {"name": "float32"}, 0.0, [_bytes("little")])
    write_json(store / "zarr.json", meta)
    write_chunks(store, data, (3,), 0.0, lambda b: b.astype("<f4").tobytes())
    return Built(data, "float32 with data_type written as the object {\"name\": \"float32\"}")


@fixture("spec", "fill_hex_nan_float16")
def _(store: Path) -> Built:
    # Not a zarr-python fixture: zarr-python 3.4.2 reads "0x7e01" as float16
    # 0x7e00 (payload lost; float32/float64 payloads survive), so its read-back
    # cannot serve as the expected data.
    data = np.array([1.0, -2.0, 0.5, 65504.0, -0.0, 6.1e-05], dtype="float16")
    store.mkdir()
    write_json(store / "zarr.json", spec_meta((6,), (2,), "float16", "0x7e01", [_bytes("little")]))
    write_chunks(store, data, (2,), "0x7e01", lambda b: b.astype("<f2").tobytes(), skip={(1,)})
    intended = data.copy()
    intended[2:4] = fill_scalar("0x7e01", "float16")
    return Built(
        intended,
        "float16 [6], chunks [2], fill_value \"0x7e01\" (a NaN with payload 1), bytes little; "
        "c/1 absent, so elements 2 and 3 must read as bits 0x7e01. zarr-python 3.4.2 "
        "returns 0x7e00 there (it drops float16 NaN payloads), hence a spec fixture",
    )


@fixture("spec", "minimal_group")
def _(store: Path) -> Built:
    store.mkdir()
    write_json(store / "zarr.json", {"zarr_format": 3, "node_type": "group"})
    (store / "x").mkdir()
    x = np.array([10, 20, 30, 40], dtype="int32")
    write_json(store / "x" / "zarr.json", spec_meta((4,), (2,), "int32", 0, [_bytes("little")]))
    write_chunks(store / "x", x, (2,), 0, lambda b: b.astype("<i4").tobytes())
    return Built(
        None,
        "group zarr.json with only the two required members (no attributes: attrs are {}), "
        "holding array 'x' whose zarr.json also has no attributes or storage_transformers",
        arrays={"x": x},
        extra={"groups": [""]},
    )


# ---------------------------------------------------------------------------


@contextlib.contextmanager
def gzip_mtime_zero() -> Iterator[None]:
    """Make gzip headers carry MTIME 0 instead of the current time.

    numcodecs' GZip (used by zarr-python's ``gzip`` codec) builds a
    ``gzip.GzipFile`` without ``mtime``, so the 4-byte header field would hold
    the wall clock and every run would differ.  Only that field changes.
    """
    original = gzip.GzipFile.__init__

    def init(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("mtime", 0)
        original(self, *args, **kwargs)

    gzip.GzipFile.__init__ = init  # type: ignore[method-assign]
    try:
        yield
    finally:
        gzip.GzipFile.__init__ = original  # type: ignore[method-assign]


def main() -> None:
    check(zarr.__version__ == ZARR_VERSION, f"zarr {zarr.__version__} != {ZARR_VERSION}")
    ts_version = importlib.metadata.version("tensorstore")
    check(ts_version == TENSORSTORE_VERSION, f"tensorstore {ts_version} != {TENSORSTORE_VERSION}")
    try:
        zarrs_version = importlib.metadata.version("zarrs")
    except importlib.metadata.PackageNotFoundError:
        zarrs_version = "not installed"
    check(zarrs_version == ZARRS_VERSION, f"zarrs {zarrs_version} != {ZARRS_VERSION}")
    zarrs_refuses_time_dtypes()
    for producer in PRODUCER_DIRS:
        shutil.rmtree(ROOT / producer, ignore_errors=True)
    with gzip_mtime_zero():
        for producer, name, builder in FIXTURES:
            build_fixture(producer, name, builder)
    files = [p for p in ROOT.rglob("*") if p.is_file()]
    nbytes = sum(p.stat().st_size for p in files)
    print(f"{len(FIXTURES)} fixtures, {len(files)} files, {nbytes} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
