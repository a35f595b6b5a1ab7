"""Zarr V3 interoperability with zarr-python and tensorstore, both directions.

Direction ``peer_to_zarrpy``: the peer creates and writes an array in a
temporary directory, zarrpy opens it and must see identical data (bitwise for
floats, NaN payloads included), shape, dtype, chunk shape and fill value.
Direction ``zarrpy_to_peer``: the other way round.

The full cross product (14 data types x 11 codec chains x 6 shapes x fill
values x 2 peers x 2 directions) would be thousands of cases, so the matrix is
built from overlapping slices instead:

* every data type x a representative set of chains (2-D, partial write);
* every chain x two data types (3-D, so ``transpose`` uses a permutation that
  is not its own inverse);
* every shape (0-d .. 4-D, edges that are not multiples of the chunk shape,
  a zero-length dimension) x two chains;
* NaN / Infinity / -Infinity fill values for every float and complex type,
  with chunks left unwritten so that the fill value is what gets read.

Arrays are tiny (tens to a couple of hundred elements). Both peers support
every data type and codec of this matrix (tried: tensorstore 0.1.86 handles
bool, float16, complex and every blosc option here; zarr-python 3.4.2 too), so
no combination is left out.
"""

from __future__ import annotations

import json
import math
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import zarrpy

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")

pytestmark = pytest.mark.integration

# --------------------------------------------------------------------------
# data types, codec chains, shapes

DTYPES = [
    "bool",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
    "complex64", "complex128",
]


def _bytes(endian: str | None, dtype: np.dtype) -> dict:
    if endian is None:
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": endian}}


def _bytes_le(dtype: np.dtype) -> dict:
    # 1-byte types: the bare form, which is what both peers write themselves.
    return _bytes(None if dtype.itemsize == 1 else "little", dtype)


def _transpose(ndim: int) -> dict:
    # For 3-D and more a rotation, which is not its own inverse: an
    # implementation that confuses `order` with its inverse fails.
    if ndim <= 1:
        order = list(range(ndim))
    elif ndim == 2:
        order = [1, 0]
    else:
        order = [ndim - 1, *range(ndim - 1)]
    return {"name": "transpose", "configuration": {"order": order}}


def _zstd(checksum: bool) -> dict:
    return {"name": "zstd", "configuration": {"level": 3, "checksum": checksum}}


def _blosc(cname: str, shuffle: str, typesize: int | None) -> dict:
    conf: dict[str, Any] = {"cname": cname, "clevel": 5, "shuffle": shuffle}
    if typesize is not None:
        conf["typesize"] = typesize
    conf["blocksize"] = 0
    return {"name": "blosc", "configuration": conf}


ChainFn = Callable[[int, np.dtype], list]

CHAINS: dict[str, ChainFn] = {
    "bytes-le": lambda nd, dt: [_bytes_le(dt)],
    # for 1-byte types `endian` is meaningless but allowed; kept to check it is accepted
    "bytes-be": lambda nd, dt: [_bytes("big", dt)],
    "transpose-bytes": lambda nd, dt: [_transpose(nd), _bytes("little", dt)],
    "gzip": lambda nd, dt: [_bytes_le(dt), {"name": "gzip", "configuration": {"level": 5}}],
    "zstd-checksum": lambda nd, dt: [_bytes_le(dt), _zstd(True)],
    "zstd-nochecksum": lambda nd, dt: [_bytes("big", dt), _zstd(False)],
    # typesize = element size
    "blosc-lz4-shuffle": lambda nd, dt: [_bytes_le(dt), _blosc("lz4", "shuffle", dt.itemsize)],
    # typesize 4 whatever the element size (legal: it is only a shuffle hint)
    "blosc-zstd-bitshuffle": lambda nd, dt: [_bytes_le(dt), _blosc("zstd", "bitshuffle", 4)],
    # typesize omitted: allowed with noshuffle
    "blosc-blosclz-noshuffle": lambda nd, dt: [_bytes_le(dt), _blosc("blosclz", "noshuffle", None)],
    "crc32c": lambda nd, dt: [_bytes_le(dt), {"name": "crc32c"}],
    "transpose-zstd-crc32c": lambda nd, dt: [_transpose(nd), _bytes("little", dt), _zstd(False), {"name": "crc32c"}],
}

SHAPES: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "0d": ((), ()),
    "1d": ((17,), (5,)),
    "2d": ((7, 9), (3, 4)),
    "3d": ((5, 4, 3), (2, 3, 2)),
    "4d": ((3, 4, 2, 5), (2, 3, 2, 2)),
    "empty": ((0, 4), (2, 3)),
}


def _default_fill(dtype: str) -> Any:
    """A fill value that is not the type's zero, so a missing chunk read as
    zeros (instead of fill) is caught."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return True
    if dt.kind == "i":
        return int(np.iinfo(dt).min) if dt.itemsize == 8 else -7
    if dt.kind == "u":
        return int(np.iinfo(dt).max) if dt.itemsize == 8 else 7
    if dt.kind == "f":
        return -1.5
    return complex(1.5, -2.0)


@dataclass(frozen=True)
class Case:
    dtype: str
    chain: str
    shape_name: str
    fill: Any = "default"
    write: str = "partial"  # "full", "partial" (leaves chunks missing) or "none"

    @property
    def id(self) -> str:
        fill = "" if self.fill == "default" else f"-fill={self.fill}"
        return f"{self.dtype}-{self.chain}-{self.shape_name}-{self.write}{fill}"


def _cases() -> list[Case]:
    cases: list[Case] = []
    # every data type x representative chains
    for dt in DTYPES:
        for chain in ("bytes-le", "bytes-be", "transpose-zstd-crc32c", "blosc-lz4-shuffle"):
            cases.append(Case(dt, chain, "2d"))
    # every chain x two data types
    for chain in CHAINS:
        for dt in ("uint16", "float64"):
            cases.append(Case(dt, chain, "3d", write="full"))
        cases.append(Case("bool", chain, "1d"))
    # every shape x two chains
    for shape in SHAPES:
        for chain in ("bytes-le", "transpose-zstd-crc32c"):
            cases.append(Case("float32", chain, shape, write="full"))
            if shape == "0d":
                cases.append(Case("float32", chain, shape, write="none"))
            elif shape != "empty":
                cases.append(Case("int32", chain, shape, write="partial"))
    # special fill values, chunks left missing
    for dt in ("float16", "float32", "float64"):
        for fill in ("NaN", "Infinity", "-Infinity"):
            cases.append(Case(dt, "bytes-le", "2d", fill=fill))
        cases.append(Case(dt, "zstd-checksum", "4d", fill="NaN"))
    for dt in ("complex64", "complex128"):
        for fill in ("NaN,Infinity", "-Infinity,NaN", "NaN,NaN"):
            cases.append(Case(dt, "bytes-le", "2d", fill=fill))
    return list({c.id: c for c in cases}.values())  # the slices overlap: drop repeats


CASES = _cases()

_SPECIAL_FLOATS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _fill_value(case: Case) -> Any:
    if case.fill == "default":
        return _default_fill(case.dtype)
    parts = [_SPECIAL_FLOATS[p] for p in case.fill.split(",")]
    return parts[0] if len(parts) == 1 else complex(*parts)


def _fill_json(value: Any, dtype: np.dtype) -> Any:
    """The V3 JSON form of a fill value (for tensorstore's metadata)."""

    def flt(x: float) -> Any:
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return float(x)

    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        return int(value)
    if dtype.kind == "f":
        return flt(float(value))
    c = complex(value)
    return [flt(c.real), flt(c.imag)]


# --------------------------------------------------------------------------
# data


def _seed(text: str) -> int:
    return zlib.crc32(text.encode())


def make_data(dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random data; floats include NaN (several payloads), +-Inf, -0.0,
    subnormals and arbitrary bit patterns."""
    dt = np.dtype(dtype)
    n = math.prod(shape)
    if dt.kind == "b":
        flat = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    else:
        ftype = np.dtype(f"f{dt.itemsize // 2}") if dt.kind == "c" else dt
        m = n * (2 if dt.kind == "c" else 1)
        vals = (rng.standard_normal(m) * 1000).astype(ftype)
        utype = np.dtype(f"u{ftype.itemsize}")
        bits = rng.integers(0, np.iinfo(utype).max, m, dtype=utype, endpoint=True)
        mask = rng.random(m) < 0.3
        vals[mask] = bits[mask].view(ftype)
        finfo = np.finfo(ftype)
        nan_payload = (np.array([np.nan], ftype).view(utype) | utype.type(1)).view(ftype)[0]
        specials = np.array(
            [np.nan, np.inf, -np.inf, -0.0, finfo.smallest_subnormal, finfo.max, finfo.min, -np.nan],
            dtype=ftype,
        )
        specials = np.concatenate([specials, np.array([nan_payload], ftype)])
        k = min(m, len(specials))
        vals[:k] = specials[:k]
        flat = vals.view(dt) if dt.kind == "c" else vals
    return flat.reshape(shape)


def write_plan(case: Case) -> tuple[list[tuple[Any, np.ndarray]], np.ndarray]:
    """The writes to make (selection, value) and the expected final array."""
    shape, chunks = SHAPES[case.shape_name]
    dt = np.dtype(case.dtype)
    data = make_data(case.dtype, shape, np.random.default_rng(_seed(case.id)))
    expected = np.full(shape, _fill_value(case), dtype=dt)
    if case.write == "none" or 0 in shape:
        writes: list[tuple[Any, Any]] = []
    elif case.write == "full" or not shape:
        writes = [(Ellipsis, data)]
    else:
        first_chunk = tuple(slice(0, c) for c in chunks)  # whole first chunk
        last_elem = tuple(slice(s - 1, s) for s in shape)  # part of the last (edge) chunk
        strip = (slice(1, min(shape[0], chunks[0] + 2)),) + (0,) * (len(shape) - 1)  # crosses a boundary
        writes = [first_chunk, last_elem, strip]
        writes = [(sel, data[sel]) for sel in writes]
    for sel, value in writes:
        expected[sel] = value
    return writes, expected


def _chunk_files(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_file() and p.name != "zarr.json"]


def _n_chunks(shape, chunks) -> int:
    return math.prod(-(-s // c) for s, c in zip(shape, chunks))


def assert_identical(actual: Any, expected: np.ndarray, *, exact_dtype: bool = True) -> None:
    """Same shape, same dtype, same bits (NaN payloads and -0.0 included)."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    if exact_dtype:
        assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    else:
        assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), (
            f"dtype {actual.dtype} != {expected.dtype}"
        )
    a = np.ascontiguousarray(actual, dtype=expected.dtype)
    e = np.ascontiguousarray(expected)
    if a.tobytes() != e.tobytes():
        av = a.reshape(-1).view(np.uint8).reshape(-1, e.dtype.itemsize)
        ev = e.reshape(-1).view(np.uint8).reshape(-1, e.dtype.itemsize)
        bad = np.flatnonzero(np.any(av != ev, axis=1))
        idx = [np.unravel_index(i, e.shape) for i in bad[:5]]
        raise AssertionError(
            f"{len(bad)} of {e.size} elements differ; first at {idx}: "
            f"got {[a[i] for i in idx]} expected {[e[i] for i in idx]}"
        )


def assert_same_fill(actual: Any, expected: Any, dtype: np.dtype) -> None:
    a = np.asarray(actual).astype(dtype)
    e = np.asarray(expected).astype(dtype)
    assert a.shape == () and a.tobytes() == e.tobytes(), f"fill_value {actual!r} != {expected!r}"


# --------------------------------------------------------------------------
# peers


def _split_codecs(codecs: list[dict]) -> tuple[list[dict], dict, list[dict]]:
    i = next(i for i, c in enumerate(codecs) if c["name"] == "bytes")
    return codecs[:i], codecs[i], codecs[i + 1 :]


@dataclass
class ArraySpec:
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: np.dtype
    codecs: list[dict]
    fill: Any
    attributes: dict | None = None
    dimension_names: list | None = None
    chunk_key_encoding: dict | None = None
    extra: dict = field(default_factory=dict)


class ZarrPython:
    name = "zarr-python"

    @staticmethod
    def create(path: Path, spec: ArraySpec):
        filters, serializer, compressors = _split_codecs(spec.codecs)
        kwargs: dict[str, Any] = {}
        if spec.chunk_key_encoding is not None:
            kwargs["chunk_key_encoding"] = spec.chunk_key_encoding
        return zarr.create_array(
            store=str(path),
            shape=spec.shape,
            chunks=spec.chunks,
            dtype=spec.dtype,
            filters=filters,
            serializer=serializer,
            compressors=compressors,
            fill_value=spec.fill,
            attributes=spec.attributes,
            dimension_names=spec.dimension_names,
            zarr_format=3,
            **kwargs,
        )

    @staticmethod
    def write(handle, sel, value) -> None:
        handle[sel] = value

    @staticmethod
    def open(path: Path, mode: str = "r"):
        return zarr.open_array(str(path), mode=mode, zarr_format=3)

    @staticmethod
    def read(path: Path) -> tuple[np.ndarray, dict]:
        a = zarr.open_array(str(path), mode="r", zarr_format=3)
        data = np.asarray(a[...])
        return data, {"shape": a.shape, "chunks": a.chunks, "dtype": np.dtype(a.dtype), "fill": a.fill_value}


class TensorStore:
    name = "tensorstore"

    @staticmethod
    def _kvstore(path: Path) -> dict:
        return {"driver": "file", "path": str(path)}

    @staticmethod
    def create(path: Path, spec: ArraySpec):
        meta: dict[str, Any] = {
            "shape": list(spec.shape),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(spec.chunks)}},
            "data_type": spec.dtype.name,
            "fill_value": _fill_json(spec.fill, spec.dtype),
            "codecs": spec.codecs,
        }
        if spec.attributes is not None:
            meta["attributes"] = spec.attributes
        if spec.dimension_names is not None:
            meta["dimension_names"] = spec.dimension_names
        if spec.chunk_key_encoding is not None:
            meta["chunk_key_encoding"] = spec.chunk_key_encoding
        return ts.open(
            {"driver": "zarr3", "kvstore": TensorStore._kvstore(path), "metadata": meta}, create=True
        ).result()

    @staticmethod
    def write(handle, sel, value) -> None:
        handle[sel].write(value).result()

    @staticmethod
    def open(path: Path, mode: str = "r"):
        return ts.open({"driver": "zarr3", "kvstore": TensorStore._kvstore(path)}, open=True).result()

    @staticmethod
    def read(path: Path) -> tuple[np.ndarray, dict]:
        t = TensorStore.open(path)
        data = np.asarray(t.read().result())
        chunks = t.chunk_layout.read_chunk.shape  # None for a 0-d array
        return data, {
            "shape": tuple(t.shape),
            "chunks": () if chunks is None else tuple(chunks),
            "dtype": np.dtype(t.dtype.numpy_dtype),
            "fill": t.fill_value,
        }


PEERS = {"zarr-python": ZarrPython, "tensorstore": TensorStore}
PEER_IDS = list(PEERS)


def _spec(case: Case) -> ArraySpec:
    shape, chunks = SHAPES[case.shape_name]
    dt = np.dtype(case.dtype)
    return ArraySpec(shape, chunks, dt, CHAINS[case.chain](len(shape), dt), _fill_value(case))


def zarrpy_create(path: Path, spec: ArraySpec, **kwargs: Any) -> zarrpy.Array:
    filters, serializer, compressors = _split_codecs(spec.codecs)
    if spec.attributes is not None:
        kwargs["attributes"] = spec.attributes
    if spec.dimension_names is not None:
        kwargs["dimension_names"] = spec.dimension_names
    if spec.chunk_key_encoding is not None:
        kwargs["chunk_key_encoding"] = spec.chunk_key_encoding
    return zarrpy.create_array(
        str(path),
        shape=spec.shape,
        dtype=spec.dtype.name,
        chunks=spec.chunks,
        filters=filters or None,
        serializer=serializer,
        compressors=compressors or None,
        fill_value=spec.fill,
        **kwargs,
    )


# --------------------------------------------------------------------------
# the matrix


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize("peer", PEER_IDS)
def test_peer_to_zarrpy(peer: str, case: Case, tmp_path: Path) -> None:
    p = PEERS[peer]
    spec = _spec(case)
    writes, expected = write_plan(case)
    path = tmp_path / "a.zarr"
    handle = p.create(path, spec)
    for sel, value in writes:
        p.write(handle, sel, value)
    del handle
    if case.write == "partial" and spec.shape and 0 not in spec.shape:
        # precondition: the peer really left chunks missing
        assert len(_chunk_files(path)) < _n_chunks(spec.shape, spec.chunks)

    a = zarrpy.open_array(str(path))
    assert a.shape == spec.shape
    assert a.chunks == spec.chunks
    assert a.dtype == spec.dtype
    assert_same_fill(a.fill_value, spec.fill, spec.dtype)
    assert_identical(a[...], expected)
    if spec.shape and 0 not in spec.shape:
        # a single element, and the last element (in an edge chunk)
        idx = tuple(s - 1 for s in spec.shape)
        assert_identical(np.asarray(a[idx]), np.asarray(expected[idx]))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize("peer", PEER_IDS)
def test_zarrpy_to_peer(peer: str, case: Case, tmp_path: Path) -> None:
    spec = _spec(case)
    writes, expected = write_plan(case)
    path = tmp_path / "a.zarr"
    a = zarrpy_create(path, spec)
    for sel, value in writes:
        a[sel] = value
    if case.write == "partial" and spec.shape and 0 not in spec.shape:
        assert len(_chunk_files(path)) < _n_chunks(spec.shape, spec.chunks)

    stored = json.loads((path / "zarr.json").read_text())
    assert [c["name"] for c in stored["codecs"]] == [c["name"] for c in spec.codecs]

    data, meta = PEERS[peer].read(path)
    assert meta["shape"] == spec.shape
    assert meta["chunks"] == spec.chunks
    assert meta["dtype"].newbyteorder("=") == spec.dtype
    assert_same_fill(meta["fill"], spec.fill, spec.dtype)
    assert_identical(data, expected, exact_dtype=False)


# --------------------------------------------------------------------------
# zarrpy modifying arrays a peer created (read-modify-write of peer chunks)

RMW_CHAINS = ["bytes-be", "transpose-zstd-crc32c", "blosc-lz4-shuffle", "gzip"]


@pytest.mark.parametrize("chain", RMW_CHAINS)
@pytest.mark.parametrize("dtype", ["int16", "float32"])
@pytest.mark.parametrize("peer", PEER_IDS)
def test_zarrpy_partial_write_to_peer_array(peer: str, dtype: str, chain: str, tmp_path: Path) -> None:
    p = PEERS[peer]
    shape, chunks = (7, 9), (3, 4)
    dt = np.dtype(dtype)
    fill = float("nan") if dt.kind == "f" else -7
    spec = ArraySpec(shape, chunks, dt, CHAINS[chain](2, dt), fill)
    rng = np.random.default_rng(_seed(f"rmw-{peer}-{dtype}-{chain}"))
    path = tmp_path / "a.zarr"
    # peer writes everything except the rows 6: (chunk row 2 stays missing)
    expected = np.full(shape, fill, dtype=dt)
    expected[:6] = make_data(dtype, (6, 9), rng)
    handle = p.create(path, spec)
    p.write(handle, np.s_[:6], expected[:6])
    del handle
    before = {f.relative_to(path) for f in _chunk_files(path)}
    assert len(before) == 6

    a = zarrpy.open_array(str(path), mode="r+")
    # 1. a block crossing chunk boundaries: partial updates of 4 existing chunks
    v1 = make_data(dtype, (3, 4), rng)
    a[2:5, 3:7] = v1
    expected[2:5, 3:7] = v1
    # 2. a strided write
    v2 = make_data(dtype, (2, 5), rng)
    a[1:5:2, ::2] = v2
    expected[1:5:2, ::2] = v2
    # 3. one element of a missing edge chunk: the rest of it must read as fill
    a[6, 8] = 42
    expected[6, 8] = 42
    # 4. a whole chunk overwritten with the fill value (chunk (0, 1)): deleted
    a[0:3, 4:8] = fill
    expected[0:3, 4:8] = fill
    after = {f.relative_to(path) for f in _chunk_files(path)}
    assert Path("c/0/1") not in after
    assert Path("c/2/2") in after

    assert_identical(a[...], expected)
    data, _ = p.read(path)
    assert_identical(data, expected, exact_dtype=False)


@pytest.mark.parametrize("peer", PEER_IDS)
def test_peer_partial_write_to_zarrpy_array(peer: str, tmp_path: Path) -> None:
    """The converse: the peer updates chunks zarrpy wrote; zarrpy reads the result."""
    shape, chunks, dt = (10, 6), (4, 4), np.dtype("float64")
    spec = ArraySpec(shape, chunks, dt, CHAINS["transpose-zstd-crc32c"](2, dt), float("nan"))
    rng = np.random.default_rng(_seed(f"rev-rmw-{peer}"))
    path = tmp_path / "a.zarr"
    expected = make_data("float64", shape, rng)
    a = zarrpy_create(path, spec)
    a[...] = expected
    handle = PEERS[peer].open(path, mode="r+")
    v = make_data("float64", (5, 3), rng)
    PEERS[peer].write(handle, np.s_[3:8, 2:5], v)
    expected[3:8, 2:5] = v
    del handle
    assert_identical(zarrpy.open_array(str(path))[...], expected)


# --------------------------------------------------------------------------
# attributes, dimension names, chunk key encodings

ATTRS = {
    "units": "m/s",
    "nested": {"list": [1, 2.5, None, True], "empty": {}},
    "unicode": "Ωmega – ünïcode ✓",
    "big": 2**60,
    "neg": -1.25e-300,
}


def test_attributes_and_dimension_names_from_zarr_python(tmp_path: Path) -> None:
    path = tmp_path / "a.zarr"
    za = zarr.create_array(
        store=str(path), shape=(4, 6), chunks=(2, 3), dtype="int32", attributes=ATTRS,
        dimension_names=["y", None], fill_value=3,
    )
    za[...] = np.arange(24, dtype="int32").reshape(4, 6)
    a = zarrpy.open_array(str(path))
    assert dict(a.attrs) == ATTRS
    assert tuple(a.dimension_names) == ("y", None)
    assert_identical(a[...], np.arange(24, dtype="int32").reshape(4, 6))
    # zarrpy updates the attributes; zarr-python sees the update and the rest intact
    a = zarrpy.open_array(str(path), mode="r+")
    a.attrs["added"] = [1, "two"]
    za2 = zarr.open_array(str(path), mode="r")
    assert dict(za2.attrs) == {**ATTRS, "added": [1, "two"]}
    assert za2.metadata.dimension_names == ("y", None)
    assert_identical(za2[...], np.arange(24, dtype="int32").reshape(4, 6))


def test_attributes_and_dimension_names_to_zarr_python(tmp_path: Path) -> None:
    path = tmp_path / "a.zarr"
    a = zarrpy.create_array(
        str(path), shape=(3, 2, 5), chunks=(2, 2, 2), dtype="float32", attributes=ATTRS,
        dimension_names=[None, "x", "t"], fill_value=float("nan"),
    )
    a[1] = 1.5
    za = zarr.open_array(str(path), mode="r")
    assert dict(za.attrs) == ATTRS
    assert za.metadata.dimension_names == (None, "x", "t")
    expected = np.full((3, 2, 5), np.nan, dtype="float32")
    expected[1] = 1.5
    assert_identical(za[...], expected)
    # zarr-python updates them; zarrpy sees it
    za = zarr.open_array(str(path), mode="r+")
    za.attrs["units"] = "km"
    assert zarrpy.open_array(str(path)).attrs["units"] == "km"


def test_dimension_names_tensorstore_both_ways(tmp_path: Path) -> None:
    dt = np.dtype("uint8")
    spec = ArraySpec((3, 4), (2, 2), dt, [_bytes_le(dt)], 0, dimension_names=["row", "col"])
    TensorStore.create(tmp_path / "t.zarr", spec)
    assert tuple(zarrpy.open_array(str(tmp_path / "t.zarr")).dimension_names) == ("row", "col")
    zarrpy_create(tmp_path / "z.zarr", spec)
    assert TensorStore.open(tmp_path / "z.zarr").domain.labels == ("row", "col")


GROUP_ATTRS = {"title": "group ✓", "n": [1, 2, 3]}


def test_group_hierarchy_with_zarr_python(tmp_path: Path) -> None:
    root = zarr.open_group(str(tmp_path / "g.zarr"), mode="w", attributes=GROUP_ATTRS)
    sub = root.create_group("sub", attributes={"k": 1})
    arr = sub.create_array("x", shape=(5,), chunks=(2,), dtype="int64", fill_value=-1)
    arr[1:4] = [10, 20, 30]
    g = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="r")
    assert dict(g.attrs) == GROUP_ATTRS
    assert "sub" in g and "sub/x" in g
    assert dict(g["sub"].attrs) == {"k": 1}
    assert_identical(g["sub/x"][...], np.array([-1, 10, 20, 30, -1], dtype="int64"))

    # and zarrpy-made hierarchies open in zarr-python
    zg = zarrpy.open_group(str(tmp_path / "h.zarr"), mode="w", attributes=GROUP_ATTRS)
    zs = zg.create_group("a/b", attributes={"deep": True})
    x = zs.create_array("y", shape=(2, 3), chunks=(1, 3), dtype="uint16", fill_value=9, compressors=None)
    x[1] = [1, 2, 3]
    pg = zarr.open_group(str(tmp_path / "h.zarr"), mode="r")
    assert dict(pg.attrs) == GROUP_ATTRS
    assert dict(pg["a/b"].attrs) == {"deep": True}
    assert_identical(pg["a/b/y"][...], np.array([[9, 9, 9], [1, 2, 3]], dtype="uint16"))


KEY_ENCODINGS = {
    "default-dot": {"name": "default", "configuration": {"separator": "."}},
    "default-slash": {"name": "default", "configuration": {"separator": "/"}},
    "v2-dot": {"name": "v2", "configuration": {"separator": "."}},
    "v2-slash": {"name": "v2", "configuration": {"separator": "/"}},
}


@pytest.mark.parametrize("encoding", list(KEY_ENCODINGS))
@pytest.mark.parametrize("shape_name", ["0d", "3d"])
@pytest.mark.parametrize("peer", PEER_IDS)
def test_chunk_key_encodings_both_ways(peer: str, shape_name: str, encoding: str, tmp_path: Path) -> None:
    shape, chunks = SHAPES[shape_name]
    dt = np.dtype("int16")
    spec = ArraySpec(shape, chunks, dt, [_bytes_le(dt)], -1, chunk_key_encoding=KEY_ENCODINGS[encoding])
    data = make_data("int16", shape, np.random.default_rng(_seed(f"cke-{encoding}-{shape_name}")))
    # peer -> zarrpy
    p = PEERS[peer]
    handle = p.create(tmp_path / "p.zarr", spec)
    p.write(handle, Ellipsis, data)
    del handle
    assert_identical(zarrpy.open_array(str(tmp_path / "p.zarr"))[...], data)
    # zarrpy -> peer, and zarrpy wrote the same chunk keys as the peer
    a = zarrpy_create(tmp_path / "z.zarr", spec)
    a[...] = data
    got, _ = p.read(tmp_path / "z.zarr")
    assert_identical(got, data, exact_dtype=False)
    keys_p = sorted(str(f.relative_to(tmp_path / "p.zarr")) for f in _chunk_files(tmp_path / "p.zarr"))
    keys_z = sorted(str(f.relative_to(tmp_path / "z.zarr")) for f in _chunk_files(tmp_path / "z.zarr"))
    assert keys_z == keys_p


# --------------------------------------------------------------------------
# byte-identical chunks for the deterministic chains

DETERMINISTIC_CHAINS = ["bytes-le", "bytes-be", "transpose-bytes", "crc32c"]


@pytest.mark.parametrize("chain", DETERMINISTIC_CHAINS)
@pytest.mark.parametrize("dtype", ["bool", "uint16", "float64", "complex64"])
@pytest.mark.parametrize("peer", PEER_IDS)
def test_same_chunk_bytes_as_peer(peer: str, dtype: str, chain: str, tmp_path: Path) -> None:
    """Without compression the encoded chunk is fully determined by the spec
    (edge chunks padded with the fill value), so zarrpy's chunk files must be
    byte-for-byte the peer's."""
    shape, chunks = SHAPES["3d"]
    dt = np.dtype(dtype)
    spec = ArraySpec(shape, chunks, dt, CHAINS[chain](len(shape), dt), _default_fill(dtype))
    data = make_data(dtype, shape, np.random.default_rng(_seed(f"bytes-{dtype}-{chain}")))
    handle = PEERS[peer].create(tmp_path / "p.zarr", spec)
    PEERS[peer].write(handle, Ellipsis, data)
    del handle
    zarrpy_create(tmp_path / "z.zarr", spec)[...] = data

    def chunks_of(root: Path) -> dict[str, bytes]:
        return {str(f.relative_to(root)): f.read_bytes() for f in _chunk_files(root)}

    got, want = chunks_of(tmp_path / "z.zarr"), chunks_of(tmp_path / "p.zarr")
    assert sorted(got) == sorted(want)
    differ = [k for k in want if got[k] != want[k]]
    assert not differ, f"chunks {differ} differ from {peer}'s"


@pytest.mark.parametrize("dtype", ["int8", "float32", "complex128"])
def test_defaults_both_ways_with_zarr_python(dtype: str, tmp_path: Path) -> None:
    """Arrays created with each library's default chunks, codecs and fill value."""
    data = make_data(dtype, (40, 30), np.random.default_rng(_seed(f"defaults-{dtype}")))
    za = zarr.create_array(store=str(tmp_path / "p.zarr"), shape=data.shape, dtype=dtype)
    za[...] = data
    a = zarrpy.open_array(str(tmp_path / "p.zarr"))
    assert a.chunks == za.chunks
    assert_same_fill(a.fill_value, za.fill_value, np.dtype(dtype))
    assert_identical(a[...], data)

    b = zarrpy.create_array(str(tmp_path / "z.zarr"), shape=data.shape, dtype=dtype)
    b[...] = data
    zb = zarr.open_array(str(tmp_path / "z.zarr"), mode="r")
    assert zb.chunks == b.chunks
    assert_same_fill(zb.fill_value, b.fill_value, np.dtype(dtype))
    assert_identical(zb[...], data, exact_dtype=False)
