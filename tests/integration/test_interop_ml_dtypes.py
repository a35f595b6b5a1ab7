"""ml_dtypes extension types between zarrpy and tensorstore (both directions),
and what zarr-python makes of them.

- zarrpy writes each type tensorstore 0.1.86 accepts (V3: default codecs,
  zstd, sharding; V2 under tensorstore's names), tensorstore reads the same
  bits, fill regions included.
- tensorstore writes, zarrpy reads the same bits; zarrpy writing the same
  data with the same codec chain stores the same chunk bytes (int2/int4:
  zarrpy stores every element sign-extended, tensorstore copies ml_dtypes'
  in-memory byte, low bits only, for the elements it is handed and
  sign-extends the ones it makes itself; the low bits agree).
- zarr-python 3.4.2 knows none of these types: it refuses to open them
  (recorded so a change shows up here).

Bits are compared "canonical": only the information bits of each lane.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import zarrpy

ts = pytest.importorskip("tensorstore")

pytestmark = pytest.mark.integration

# What tensorstore 0.1.86's zarr3 driver takes (float8_e4m3, float6_*, uint2,
# uint4 and every complex_* name are refused: test_tensorstore_refuses).
TS_TYPES = (
    "bfloat16", "float8_e3m4", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int2", "int4",
)  # fmt: skip
TS_REFUSED = ("float8_e4m3", "float6_e2m3fn", "float6_e3m2fn", "uint2", "uint4",
              "complex_float16", "complex_bfloat16", "complex_float32", "complex_float8_e4m3fn")  # fmt: skip
_BITS = {"bfloat16": 16, "int2": 2, "int4": 4, "float4_e2m1fn": 4}


def bits_of(name: str) -> int:
    return _BITS.get(name, 8)


def canonical(arr: np.ndarray, name: str) -> list[int]:
    arr = np.ascontiguousarray(arr)
    lanes = arr.reshape(-1).view(np.uint16 if arr.dtype.itemsize == 2 else np.uint8)
    bits = bits_of(name)
    if bits < 8:
        lanes = lanes & np.uint8((1 << bits) - 1)
    return [int(x) for x in lanes]


def data_for(name: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Every bit pattern of the type (8 bits or fewer), then random ones; bfloat16 random
    patterns plus NaN payloads, -0.0 and infinities."""
    dt = np.dtype(getattr(ml_dtypes, name))
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    if dt.itemsize == 2:
        lanes = rng.integers(0, 1 << 16, n, dtype=np.uint16)
        lanes[:6] = [0x7FC1, 0xFFC0, 0x8000, 0x7F80, 0xFF80, 0x7F81][: min(6, n)]
        return lanes.view(dt).reshape(shape)
    count = 1 << bits_of(name)
    lanes = rng.integers(0, count, n, dtype=np.uint8)
    lanes[: min(n, count)] = np.arange(min(n, count), dtype=np.uint8)
    return lanes.view(dt).reshape(shape)


def fill_for(name: str) -> Any:
    """A fill that is not zero and survives every form (tensorstore reads e8m0fnu
    numbers with exponent bias 63, so e8m0fnu uses NaN, whose bits agree)."""
    dt = np.dtype(getattr(ml_dtypes, name))
    if name in ("int2", "int4"):
        return np.array(-1, dtype=np.int8).astype(dt)[()]
    if name == "float8_e8m0fnu":
        return np.array(np.nan).astype(dt)[()]
    return np.array(-1.5).astype(dt)[()]


def ts_open(path: Path, **kw: Any) -> Any:
    spec: dict[str, Any] = {"driver": kw.pop("driver", "zarr3"), "kvstore": {"driver": "file", "path": str(path)}}
    if "metadata" in kw:
        spec["metadata"] = kw.pop("metadata")
    return ts.open(spec, **kw).result()


SHAPE, CHUNKS, REGION = (9, 11), (4, 5), np.s_[0:7, 0:8]

CHAINS: dict[str, dict[str, Any]] = {
    "default": {},
    "zstd": {"compressors": [{"name": "zstd", "configuration": {"level": 3, "checksum": False}}]},
    "sharded": {"shards": (8, 10)},
    "big_endian": {"serializer": {"name": "bytes", "configuration": {"endian": "big"}}},
}


# big-endian bytes only differ from little-endian for the one multi-byte type tensorstore has
WRITE_CASES = [(name, chain) for name in TS_TYPES for chain in CHAINS if chain != "big_endian" or name == "bfloat16"]


@pytest.mark.parametrize(("name", "chain"), WRITE_CASES)
def test_zarrpy_writes_tensorstore_reads(tmp_path: Path, name: str, chain: str) -> None:
    dt = np.dtype(getattr(ml_dtypes, name))
    data = data_for(name, SHAPE, 1)
    fill = fill_for(name)
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=SHAPE, chunks=CHUNKS, dtype=dt, fill_value=fill,
                            **CHAINS[chain])  # fmt: skip
    a[REGION] = data[REGION]
    got = ts_open(tmp_path / "a.zarr").read().result()
    expected = np.full(SHAPE, fill, dtype=dt)
    expected[REGION] = data[REGION]
    assert got.dtype == dt
    assert canonical(got, name) == canonical(expected, name)


@pytest.mark.parametrize("name", TS_TYPES)
def test_zarrpy_writes_v2_tensorstore_reads(tmp_path: Path, name: str) -> None:
    dt = np.dtype(getattr(ml_dtypes, name))
    data = data_for(name, SHAPE, 2)
    fill = fill_for(name)
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=SHAPE, chunks=CHUNKS, dtype=dt, fill_value=fill,
                            zarr_format=2)  # fmt: skip
    a[REGION] = data[REGION]
    meta = json.loads((tmp_path / "a.zarr" / ".zarray").read_text())
    assert meta["dtype"] == name
    got = ts_open(tmp_path / "a.zarr", driver="zarr").read().result()
    expected = np.full(SHAPE, fill, dtype=dt)
    expected[REGION] = data[REGION]
    assert canonical(got, name) == canonical(expected, name)


@pytest.mark.parametrize("v2", [False, True], ids=["v3", "v2"])
@pytest.mark.parametrize("name", TS_TYPES)
def test_tensorstore_writes_zarrpy_reads_same_chunk_bytes(tmp_path: Path, name: str, v2: bool) -> None:
    dt = np.dtype(getattr(ml_dtypes, name))
    data = data_for(name, SHAPE, 3)
    fill = fill_for(name)
    if v2:
        fill_json: Any = "Cw==" if name == "float4_e2m1fn" else (
            int(np.asarray(fill).astype(np.int8)) if name in ("int2", "int4") else
            ("NaN" if name == "float8_e8m0fnu" else -1.5))  # fmt: skip
        metadata: dict[str, Any] = {"shape": list(SHAPE), "chunks": list(CHUNKS), "dtype": name,
                                    "fill_value": fill_json, "compressor": None}  # fmt: skip
        t = ts_open(tmp_path / "t.zarr", driver="zarr", metadata=metadata, create=True)
    else:
        fill_json = "NaN" if name == "float8_e8m0fnu" else (
            int(np.asarray(fill).astype(np.int8)) if name in ("int2", "int4") else -1.5)  # fmt: skip
        metadata = {"shape": list(SHAPE), "data_type": name, "fill_value": fill_json,
                    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(CHUNKS)}}}  # fmt: skip
        t = ts_open(tmp_path / "t.zarr", metadata=metadata, create=True)
    t[REGION].write(data[REGION]).result()
    z = zarrpy.open_array(str(tmp_path / "t.zarr"))
    assert z.dtype == dt
    expected = np.full(SHAPE, fill, dtype=dt)
    expected[REGION] = data[REGION]
    assert canonical(z[...], name) == canonical(expected, name)
    assert canonical(np.asarray(z.fill_value), name) == canonical(np.asarray(fill), name)

    # zarrpy writes the same data with the same chain: the same chunk bytes.
    z2 = zarrpy.create_array(str(tmp_path / "z.zarr"), shape=SHAPE, chunks=CHUNKS, dtype=dt, fill_value=z.fill_value,
                             compressors=None, zarr_format=2 if v2 else 3)  # fmt: skip
    z2[REGION] = data[REGION]
    keys = sorted(p.name if v2 else "/".join(p.relative_to(tmp_path / "t.zarr").parts)
                  for p in (tmp_path / "t.zarr").rglob("*") if p.is_file() and not p.name.startswith((".z", "zarr.json")))  # fmt: skip
    assert keys
    for key in keys:
        theirs = (tmp_path / "t.zarr" / key).read_bytes()
        ours = (tmp_path / "z.zarr" / key).read_bytes()
        if name in ("int2", "int4"):
            bits = bits_of(name)
            mask = (1 << bits) - 1
            assert [b & mask for b in ours] == [b & mask for b in theirs]
            sign = 1 << (bits - 1)
            assert all(b == ((b & mask) | (0xFF ^ mask if b & sign else 0)) for b in ours)  # sign-extended
        else:
            assert ours == theirs, key


def test_tensorstore_sign_extends_the_int4_elements_it_makes(tmp_path: Path) -> None:
    """What zarrpy's int2/int4 byte follows: tensorstore's own encoding of its fill."""
    metadata = {"shape": [4], "data_type": "int4", "fill_value": -3,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}}}  # fmt: skip
    t = ts_open(tmp_path / "t.zarr", metadata=metadata, create=True)
    t[0:1].write(np.array([2], dtype=ml_dtypes.int4)).result()
    assert (tmp_path / "t.zarr" / "c" / "0").read_bytes().hex() == "02fdfdfd"
    z = zarrpy.create_array(str(tmp_path / "z.zarr"), shape=(4,), chunks=(4,), dtype=ml_dtypes.int4, fill_value=-3,
                            compressors=None)  # fmt: skip
    z[0:1] = np.array([2], dtype=ml_dtypes.int4)
    assert (tmp_path / "z.zarr" / "c" / "0").read_bytes().hex() == "02fdfdfd"


@pytest.mark.parametrize(
    ("name", "fill", "written"),
    [
        ("bfloat16", "0x7fc1", "0x7fc1"),  # tensorstore keeps a NaN payload as hex
        ("bfloat16", -0.0, -0.0),
        ("float8_e4m3fn", "0x41", 2.25),  # hex read as bits, written back as a number
        ("float8_e5m2", "Infinity", "Infinity"),
        ("float4_e2m1fn", 6.0, 6.0),
        ("int4", -8, -8),
    ],
)
def test_tensorstore_fill_json_reads_in_zarrpy(tmp_path: Path, name: str, fill: Any, written: Any) -> None:
    metadata = {"shape": [3], "data_type": name, "fill_value": fill,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}}}  # fmt: skip
    t = ts_open(tmp_path / "t.zarr", metadata=metadata, create=True)
    assert json.loads((tmp_path / "t.zarr" / "zarr.json").read_text())["fill_value"] == written
    z = zarrpy.open_array(str(tmp_path / "t.zarr"))
    assert np.asarray(z.fill_value).tobytes() == np.asarray(t.fill_value).tobytes()[: z.dtype.itemsize] or name == "int4"
    assert canonical(z[...], name) == canonical(t.read().result(), name)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e8m0fnu", "float4_e2m1fn", "bfloat16"])
def test_zarrpy_fill_json_reads_in_tensorstore(tmp_path: Path, name: str) -> None:
    """zarrpy writes 8/6/4-bit float fills as hex bits (what zarrs writes and reads):
    tensorstore reads them as the same bits, e8m0fnu included."""
    dt = np.dtype(getattr(ml_dtypes, name))
    fill = np.array(0.5 if name != "float4_e2m1fn" else -0.0).astype(dt)[()]
    zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(3,), chunks=(3,), dtype=dt, fill_value=fill)
    meta = json.loads((tmp_path / "a.zarr" / "zarr.json").read_text())
    if dt.itemsize == 1:
        assert meta["fill_value"] == "0x" + format(int(np.asarray(fill).view(np.uint8)), "02x")
    got = ts_open(tmp_path / "a.zarr").read().result()
    assert canonical(got, name) == canonical(np.full(3, fill, dtype=dt), name)


@pytest.mark.parametrize("name", TS_REFUSED)
def test_tensorstore_refuses(tmp_path: Path, name: str) -> None:
    """The zarrs-only names: tensorstore 0.1.86 has none of them (zarrpy reads and writes them)."""
    metadata = {"shape": [3], "data_type": name,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}}}  # fmt: skip
    with pytest.raises(ValueError, match="data_type"):
        ts_open(tmp_path / "t.zarr", metadata=metadata, create=True)


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "int4", "complex_float8_e5m2"])
def test_zarr_python_cannot_read(tmp_path: Path, name: str) -> None:
    """zarr-python 3.4.2 has none of these data types (recorded, not wanted)."""
    zarr = pytest.importorskip("zarr")
    dtype: Any = name if name.startswith("complex_") else getattr(ml_dtypes, name)
    zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(3,), chunks=(3,), dtype=dtype)
    with pytest.raises(Exception, match=name):  # noqa: B017 - whatever zarr-python raises
        zarr.open_array(str(tmp_path / "a.zarr"), mode="r")
