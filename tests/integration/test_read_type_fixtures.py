"""Read every data-type golden store in ``spec-fixtures/types/`` with zarrpy,
and write the same data back with zarrpy for its producer to read.

The stores come from ``spec-fixtures/generate_types.py`` (layout in
``spec-fixtures/README.md``): zarr-python's struct / raw_bytes /
null_terminated_bytes / fixed_length_utf32 types (V3 and V2), tensorstore's
ml_dtypes types (bfloat16, float8_*, float4_e2m1fn, int2, int4; V3 and its V2
names) and the zarrs pipeline's extension types (the same plus float8_e4m3,
float6_*, uint2, uint4, complex_*, and the packbits codec).

Reading compares bit for bit: numpy-typed fixtures by their raw bytes in the
dtype of ``expected.npy`` (byte-order-only differences allowed for V2 and
struct fields); the ml_dtypes / complex_* fixtures by lane bit patterns
against ``expected_bits.npy`` (canonical: only the low ``bit_size`` bits of
sub-byte lanes), so NaN payloads, -0.0 and NaN patterns compare exactly. The
fill value is checked the same way against ``fixture.json["fill_value_check"]``.

Writing back (zarrpy writes, the producer reads) needs the producer:
zarr-python for its fixtures, tensorstore for the ml_dtypes types it accepts
(also for zarrs fixtures of those types). zarrs itself is not a test
dependency, so zarrs-only types (uint2/uint4, float6_*, float8_e4m3,
complex_*) are skipped there, as are packbits stores (tensorstore 0.1.86 has no
packbits codec).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrpy
from tests.integration.oracles import zarr_python_has_struct

pytestmark = pytest.mark.integration

TYPES_ROOT = Path(__file__).resolve().parents[2] / "spec-fixtures" / "types"
FIXTURE_FILES = sorted(TYPES_ROOT.glob("*/*/fixture.json"))
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# The ml_dtypes types tensorstore 0.1.86 reads and writes (zarr3 and zarr drivers).
TENSORSTORE_TYPES = {
    "bfloat16", "float8_e3m4", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int2", "int4",
}  # fmt: skip


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _params() -> list[Any]:
    return [pytest.param(f, id=f"{f.parent.parent.name}/{f.parent.name}") for f in FIXTURE_FILES] or [
        pytest.param(None, id="no-type-fixtures")
    ]


FIXTURES = _params()


def _fixture(fixture_json: Path | None) -> tuple[dict[str, Any], Path]:
    assert fixture_json is not None, f"no fixtures under {TYPES_ROOT}"
    doc = _load(fixture_json)
    assert doc["path"] == "data.zarr"
    return doc, fixture_json.parent / "data.zarr"


def _meta(store: Path) -> dict[str, Any]:
    return _load(store / ("zarr.json" if (store / "zarr.json").is_file() else ".zarray"))


# -- the extension types: lanes and canonical bits --------------------------


def _ml_dtypes() -> Any:
    return pytest.importorskip("ml_dtypes")


def _lane_name(doc: dict[str, Any]) -> str:
    """The element (complex: component) type name of an extension fixture."""
    dtype_json = doc["data_type"]
    name = dtype_json if isinstance(dtype_json, str) else dtype_json["name"]
    return name.removeprefix("complex_")


def _lane_size(lane: str) -> int:
    if lane in ("bfloat16", "float16"):
        return 2
    if lane in ("float32", "float64"):
        return int(lane[5:]) // 8
    return 1


def _is_complex(doc: dict[str, Any]) -> bool:
    name = doc["data_type"] if isinstance(doc["data_type"], str) else doc["data_type"]["name"]
    return name.startswith("complex_")


def _canonical_bits(a: np.ndarray, doc: dict[str, Any]) -> np.ndarray:
    """An array zarrpy returned -> lane bits (+ trailing axis 2 for complex_*),
    only the low ``bit_size`` bits kept."""
    lane = _lane_name(doc)
    size = _lane_size(lane)
    lanes = 2 if _is_complex(doc) else 1
    a = np.ascontiguousarray(a)
    assert a.dtype.itemsize == size * lanes, (
        f"element size {a.dtype.itemsize} of {a.dtype}, expected {size * lanes} ({doc['data_type']})"
    )
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("="))
    bits = np.frombuffer(a.tobytes(), dtype=np.dtype(_UINT[size]).newbyteorder("<")).astype(_UINT[size])
    bits = bits.reshape(a.shape + ((2,) if lanes == 2 else ()))
    if doc["bit_size"] < 8 * size:
        bits = bits & _UINT[size]((1 << doc["bit_size"]) - 1)
    return bits


def _expected_dtype(doc: dict[str, Any]) -> np.dtype | None:
    name = doc["numpy_dtype"]
    if name is None:
        return None
    if name in ("complex64", "complex128"):
        return np.dtype(name)
    return np.dtype(getattr(_ml_dtypes(), name))


def _bits_to_array(bits: np.ndarray, doc: dict[str, Any]) -> np.ndarray:
    """expected_bits -> the array of ``numpy_dtype`` (for writing it back)."""
    dtype = _expected_dtype(doc)
    if dtype is None:  # complex_<small float>: zarrpy's (real, imag) struct of the lane type
        from zarrpy.core.dtypes import DataType

        dtype = DataType.from_json(doc["data_type"]).numpy
    raw = np.ascontiguousarray(bits)
    if _is_complex(doc):
        return raw.view(dtype).reshape(bits.shape[:-1])
    return raw.view(dtype)


def _assert_bits_equal(got: np.ndarray, expected: np.ndarray, what: str) -> None:
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    if not np.array_equal(got, expected):
        bad = np.argwhere(got != expected)
        first = "; ".join(
            f"{tuple(int(i) for i in idx)}: got {int(got[tuple(idx)]):#x} expected "
            f"{int(expected[tuple(idx)]):#x}"
            for idx in bad[:5]
        )
        raise AssertionError(f"{what}: {len(bad)} of {expected.size} lanes differ: {first}")


# -- numpy-typed fixtures ----------------------------------------------------


def _same_numpy_data(got: np.ndarray, expected: np.ndarray, what: str) -> None:
    """Same dtype up to byte order (V2 and struct fields), then the same bytes
    in expected's dtype."""
    got = np.asarray(got)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    assert got.dtype == expected.dtype or np.can_cast(got.dtype, expected.dtype, "equiv"), (
        f"{what}: dtype {got.dtype} != {expected.dtype}"
    )
    got = got.astype(expected.dtype)
    if got.tobytes() != np.ascontiguousarray(expected).tobytes():
        g = got.reshape(-1)
        e = expected.reshape(-1)
        bad = [i for i in range(e.size) if g[i : i + 1].tobytes() != e[i : i + 1].tobytes()]
        raise AssertionError(
            f"{what}: {len(bad)} of {e.size} elements differ: "
            + "; ".join(f"[{i}] got {g[i]!r} expected {e[i]!r}" for i in bad[:5])
        )


# -- reading -----------------------------------------------------------------


def _open(store: Path) -> Any:
    return zarrpy.open_array(str(store), mode="r")


@pytest.mark.parametrize("fixture_json", FIXTURES)
def test_read_type_fixture(fixture_json: Path | None) -> None:
    doc, store = _fixture(fixture_json)
    meta = _meta(store)
    arr = _open(store)
    assert tuple(arr.shape) == tuple(meta["shape"])
    got = np.asarray(arr[...])
    bits_file = fixture_json.parent / "expected_bits.npy"
    if bits_file.is_file():
        expected_bits = np.load(bits_file, allow_pickle=False)
        want = _expected_dtype(doc)
        if want is not None:
            assert got.dtype == want, f"dtype {got.dtype} != {want} for {doc['data_type']!r}"
        _assert_bits_equal(_canonical_bits(got, doc), expected_bits, "data")
    else:
        expected = np.load(fixture_json.parent / "expected.npy", allow_pickle=False)
        _same_numpy_data(got, expected, "data")


@pytest.mark.parametrize("fixture_json", FIXTURES)
def test_type_fixture_region(fixture_json: Path | None) -> None:
    """A region crossing chunk (and shard) boundaries, fill area included."""
    doc, store = _fixture(fixture_json)
    arr = _open(store)
    sel = tuple(slice(1, n) for n in arr.shape)
    got = np.asarray(arr[sel])
    bits_file = fixture_json.parent / "expected_bits.npy"
    if bits_file.is_file():
        expected_bits = np.load(bits_file, allow_pickle=False)
        _assert_bits_equal(_canonical_bits(got, doc), expected_bits[sel], "region")
    else:
        expected = np.load(fixture_json.parent / "expected.npy", allow_pickle=False)
        _same_numpy_data(got, expected[sel], "region")


@pytest.mark.parametrize("fixture_json", FIXTURES)
def test_type_fixture_fill_value(fixture_json: Path | None) -> None:
    doc, store = _fixture(fixture_json)
    arr = _open(store)
    check = doc["fill_value_check"]
    if "raw_le_hex" in check:  # ml_dtypes / complex_*: lane bits, little-endian
        if check["raw_le_hex"] is None:
            assert arr.fill_value is None
            return
        value = np.asarray(arr.fill_value).reshape(1)
        bits = _canonical_bits(value, doc).reshape(-1)
        size = _lane_size(_lane_name(doc))
        got = b"".join(int(x).to_bytes(size, "little") for x in bits).hex()
        assert got == check["raw_le_hex"], f"fill {arr.fill_value!r}: {got} != {check['raw_le_hex']}"
    else:  # numpy types: the fill's bytes in expected.npy's dtype
        expected = np.load(fixture_json.parent / "expected.npy", allow_pickle=False)
        value = arr.fill_value
        if expected.dtype.kind in "SUV" and isinstance(value, (bytes, str, np.void)):
            # a bytes / str / void scalar: its own numpy type may be narrower (b"xy" is S2)
            assert len(np.asarray(value).tobytes()) <= expected.dtype.itemsize, repr(value)
            value = np.array(value, dtype=expected.dtype)
        value = np.asarray(value)
        assert value.dtype == expected.dtype or np.can_cast(value.dtype, expected.dtype, "equiv"), (
            f"fill dtype {value.dtype} != {expected.dtype}"
        )
        got = np.ascontiguousarray(value.astype(expected.dtype)).tobytes().hex()
        assert got == check["raw_hex"], f"fill {arr.fill_value!r}: {got} != {check['raw_hex']}"


@pytest.mark.parametrize("fixture_json", FIXTURES)
def test_type_fixture_grid(fixture_json: Path | None) -> None:
    doc, store = _fixture(fixture_json)
    arr = _open(store)
    assert list(arr.chunks) == doc["chunks"]
    if doc["shards"] is not None or getattr(arr, "shards", None) is not None:
        assert arr.shards is not None and list(arr.shards) == doc["shards"]


def test_type_fixture_documents_match() -> None:
    """fixture.json's data_type is the one in the store (guards the generator)."""
    assert FIXTURE_FILES, f"no fixtures under {TYPES_ROOT}"
    for f in FIXTURE_FILES:
        doc, store = _fixture(f)
        meta = _meta(store)
        assert doc["data_type"] == (meta["data_type"] if doc["zarr_format"] == 3 else meta["dtype"]), f
        assert doc["fill_value_check"]["json"] == meta["fill_value"], f


def test_type_fixtures_present() -> None:
    by_producer: dict[str, int] = {}
    for f in FIXTURE_FILES:
        by_producer[f.parent.parent.name] = by_producer.get(f.parent.parent.name, 0) + 1
    assert by_producer.get("zarr-python", 0) >= 12, by_producer
    assert by_producer.get("tensorstore", 0) >= 30, by_producer
    assert by_producer.get("zarrs", 0) >= 40, by_producer


# -- writing back: zarrpy writes, the producer reads ------------------------


def _grid_kwargs(doc: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"chunks": tuple(doc["chunks"])}
    if doc["shards"] is not None:
        kwargs["shards"] = tuple(doc["shards"])
    return kwargs


def _tensorstore_read(path: Path, zarr_format: int) -> tuple[np.ndarray, Any]:
    ts = pytest.importorskip("tensorstore")
    spec = {"driver": "zarr3" if zarr_format == 3 else "zarr",
            "kvstore": {"driver": "file", "path": str(path) + "/"}}  # fmt: skip
    t = ts.open(spec, open=True, read=True).result()
    return np.asarray(t.read().result()), t.fill_value


def _zarrs_write_back(fixture_json: Path, doc: dict[str, Any], store: Path, out: Path) -> None:
    """zarrpy writes the fixture's data under the fixture's own metadata (its
    codecs, packbits included, and fill value); zarrs (through zarrista, the
    zarrs crate's Python binding) reads the same bits back."""
    zt = pytest.importorskip("zarrista")
    from zarrista.store import FilesystemStore

    expected_bits = np.load(fixture_json.parent / "expected_bits.npy", allow_pickle=False)
    data = _bits_to_array(expected_bits, doc)
    out.mkdir()
    shutil.copy(store / "zarr.json", out / "zarr.json")
    zarrpy.open_array(str(out), mode="r+")[...] = data
    got = zt.Array.open(FilesystemStore(str(out)), "/")[...]
    lane = _UINT[_lane_size(_lane_name(doc))]
    bits = np.frombuffer(got.buffer(), dtype=np.dtype(lane).newbyteorder("<")).astype(lane)
    bits = bits.reshape(expected_bits.shape)
    if doc["bit_size"] < 8 * np.dtype(lane).itemsize:
        bits = bits & lane((1 << doc["bit_size"]) - 1)
    _assert_bits_equal(bits, expected_bits, "zarrs reading zarrpy's store")


@pytest.mark.parametrize("fixture_json", FIXTURES)
def test_type_fixture_write_back(fixture_json: Path | None, tmp_path: Path) -> None:
    doc, store = _fixture(fixture_json)
    producer = fixture_json.parent.parent.name
    fmt = doc["zarr_format"]
    out = tmp_path / "w.zarr"
    source = _open(store)  # zarrpy must read the type before it can write it
    fill = source.fill_value
    if producer == "zarr-python":
        zarr = pytest.importorskip("zarr")
        if "struct" in json.dumps(doc["data_type"]) or isinstance(doc["data_type"], list):
            if not zarr_python_has_struct():
                pytest.skip("this zarr-python has no 'struct' data type (3.1, the newest for Python 3.11)")
        expected = np.load(fixture_json.parent / "expected.npy", allow_pickle=False)
        arr = zarrpy.create_array(str(out), shape=expected.shape, dtype=expected.dtype,
                                  fill_value=fill, zarr_format=fmt, **_grid_kwargs(doc))  # fmt: skip
        arr[...] = expected
        back = zarr.open_array(str(out), mode="r")
        _same_numpy_data(np.asarray(back[...]), expected, "zarr-python reading zarrpy's store")
        want_fill = bytes.fromhex(doc["fill_value_check"]["raw_hex"])
        got_fill = np.asarray(back.fill_value).astype(expected.dtype).tobytes()
        assert got_fill == want_fill, f"zarr-python reads fill {back.fill_value!r}"
        return
    if producer == "zarrs":
        _zarrs_write_back(fixture_json, doc, store, out)
        return
    name = doc["data_type"] if isinstance(doc["data_type"], str) else doc["data_type"]["name"]
    assert name in TENSORSTORE_TYPES, name
    expected_bits = np.load(fixture_json.parent / "expected_bits.npy", allow_pickle=False)
    data = _bits_to_array(expected_bits, doc)
    arr = zarrpy.create_array(str(out), shape=data.shape, dtype=data.dtype, fill_value=fill,
                              zarr_format=fmt, **_grid_kwargs(doc))  # fmt: skip
    arr[...] = data
    got, ts_fill = _tensorstore_read(out, fmt)
    _assert_bits_equal(_canonical_bits(got, doc), expected_bits, "tensorstore reading zarrpy's store")
    if doc["fill_value_check"]["raw_le_hex"] is not None:
        bits = _canonical_bits(np.asarray(ts_fill).reshape(1), doc).reshape(-1)
        size = _lane_size(_lane_name(doc))
        got_hex = b"".join(int(x).to_bytes(size, "little") for x in bits).hex()
        assert got_hex == doc["fill_value_check"]["raw_le_hex"], f"tensorstore reads fill {ts_fill!r}"
