"""Sharded arrays exchanged with zarr-python and tensorstore, both directions.

Every case is written by one implementation and read by another, through the
public API of each (local directories):

* zarrpy writes with ``zarrpy.create_array(..., chunks=inner, shards=shard)``
  when the index is at the end with crc32c (what ``shards=`` builds), and with
  the full ``sharding_indexed`` JSON as ``serializer=`` (``chunks=`` the shard
  shape) otherwise: index at the start, index without crc32c, nested shards;
* zarr-python writes with ``zarr.create_array(..., chunks=inner,
  shards={"shape": shard, "index_location": ...})``, or with an explicit
  ``serializer=`` where ``shards=`` cannot say it (no crc32c, nesting);
* tensorstore writes with the ``zarr3`` driver and the ``sharding_indexed``
  codec in its metadata.

The writes leave shards missing (never touched), inner chunks missing (only
fill values; every writer must leave them out of the index), edge shards cut
by the array's shape, and a second, unaligned write on top of the first (a
read-modify-write of stored shards). Readers must return identical data for
the whole array and for an unaligned selection, and report dtype, shape,
inner chunk shape (``chunks``) and shard shape (``shards``) as expected. What
each writer stored is checked too: the shard keys, the index location, and
which inner chunks the index marks as stored.

zarr-python 3.4.2 and tensorstore 0.1.86 support every case here, nested
sharding included; strings are exchanged with zarr-python only (tensorstore
has no ``string`` data type).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import zarrpy
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.sharding import ShardingCodec
from zarrpy.core.dtypes import DataType

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")

pytestmark = pytest.mark.integration

LE = {"name": "bytes", "configuration": {"endian": "little"}}
CRC = {"name": "crc32c"}


def _zstd(level: int = 3) -> dict:
    return {"name": "zstd", "configuration": {"level": level, "checksum": False}}


def _blosc(itemsize: int) -> dict:
    return {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": itemsize, "blocksize": 0}}


# --------------------------------------------------------------------------
# cases


@dataclass(frozen=True)
class Case:
    id: str
    shape: tuple[int, ...]
    inner: tuple[int, ...]  # arr.chunks
    shard: tuple[int, ...]  # arr.shards
    dtype: str
    compressor: str | None  # "zstd", "blosc" or None
    location: str = "end"
    crc: bool = True
    # Nested: the inner codec is itself sharding_indexed with this chunk shape.
    nested: tuple[int, ...] | None = None
    seed: int = 0

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    def compressors(self) -> list[dict]:
        if self.compressor == "zstd":
            return [_zstd()]
        if self.compressor == "blosc":
            return [_blosc(self.np_dtype.itemsize)]
        return []

    def bytes_codec(self) -> dict:
        return {"name": "bytes"} if self.np_dtype.itemsize == 1 else LE

    def index_codecs(self) -> list[dict]:
        return [LE, CRC] if self.crc else [LE]

    def inner_codecs(self) -> list[dict]:
        """The codecs inside the (outer) shard: the chunk's codecs, or a nested shard."""
        chain = [self.bytes_codec(), *self.compressors()]
        if self.nested is None:
            return chain
        return [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(self.nested), "codecs": chain,
            "index_codecs": [LE, CRC], "index_location": "start"}}]

    def sharding_json(self) -> dict:
        return {"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(self.inner), "codecs": self.inner_codecs(),
            "index_codecs": self.index_codecs(), "index_location": self.location}}

    @property
    def via_shards_argument(self) -> bool:
        """Can ``create_array(chunks=inner, shards=shard, compressors=...)`` say it (zarrpy)?"""
        return self.location == "end" and self.crc and self.nested is None

    @property
    def innermost(self) -> tuple[int, ...]:
        return self.nested or self.inner


CASES = [
    # edge shards on both sides (37 = 4*8 + 5, 45 = 4*10 + 5), zstd, index at the end
    Case("2d-zstd-end", (37, 45), (4, 5), (8, 10), "uint16", "zstd", "end"),
    Case("2d-zstd-start", (37, 45), (4, 5), (8, 10), "int32", "zstd", "start", seed=1),
    Case("2d-blosc-end", (30, 21), (5, 3), (10, 9), "float32", "blosc", "end", seed=2),
    Case("2d-blosc-start", (30, 21), (5, 3), (10, 9), "float64", "blosc", "start", seed=3),
    # shape a multiple of the shard (no edge shards), no compressor
    Case("2d-raw-exact", (16, 20), (4, 5), (8, 10), "int16", None, "end", seed=4),
    Case("3d-zstd-end", (9, 10, 11), (2, 3, 4), (4, 6, 8), "uint8", "zstd", "end", seed=5),
    Case("1d-blosc-start", (101,), (7,), (21,), "int64", "blosc", "start", seed=6),
    # index without crc32c
    Case("2d-zstd-end-nocrc", (37, 45), (4, 5), (8, 10), "uint16", "zstd", "end", crc=False, seed=7),
    Case("2d-raw-start-nocrc", (19, 13), (3, 4), (6, 8), "int32", None, "start", crc=False, seed=8),
    # nested: shards of (8, 10) hold (4, 5) chunks that are themselves shards of (2, 5)
    Case("nested-2d-zstd", (17, 23), (4, 5), (8, 10), "int16", "zstd", "end", nested=(2, 5), seed=9),
    Case("nested-2d-blosc-start", (17, 23), (4, 5), (8, 10), "uint32", "blosc", "start", nested=(2, 1), seed=10),
]
CASE_IDS = [c.id for c in CASES]


# --------------------------------------------------------------------------
# what gets written: two writes, the result in numpy


@dataclass
class Plan:
    """Writes to make (selection, values) in order, and the array they leave."""

    writes: list[tuple[tuple[slice, ...], np.ndarray]] = field(default_factory=list)
    expected: np.ndarray | None = None


def _values(rng: np.random.Generator, shape, dtype: np.dtype) -> np.ndarray:
    """Values that are never the fill value 0."""
    if dtype.kind == "f":
        return (rng.random(shape) * 100 + 1).astype(dtype)
    return rng.integers(1, min(100, np.iinfo(dtype).max), size=shape).astype(dtype)


def make_plan(case: Case) -> Plan:
    rng = np.random.default_rng(case.seed)
    dtype = case.np_dtype
    expected = np.zeros(case.shape, dtype=dtype)
    # First write: everything past the first shard along dimension 0 and past
    # one inner chunk inside the second shard, so the shards of the first
    # shard row stay missing and the second shard row misses its first inner
    # chunk row. Inside it, whole inner chunks of fill values (left out).
    start0 = min(case.shard[0] + case.inner[0], case.shape[0] - 1)
    region = (slice(start0, None), *(slice(None) for _ in case.shape[1:]))
    block = _values(rng, expected[region].shape, dtype)
    expected[region] = block
    grid = [range(-(-s // c)) for s, c in zip(case.shape, case.innermost)]
    for coords in itertools.product(*grid):
        if rng.random() < 0.3:
            sel = tuple(slice(i * c, (i + 1) * c) for i, c in zip(coords, case.innermost))
            expected[sel] = 0
    first = (region, expected[region].copy())
    # Second write: an unaligned box in the middle (read-modify-write).
    box = tuple(slice(s // 3 + 1, max(s // 3 + 2, 2 * s // 3 + 1)) for s in case.shape)
    expected[box] = _values(rng, expected[box].shape, dtype)
    second = (box, expected[box].copy())
    return Plan([first, second], expected)


def read_selection(case: Case) -> tuple[slice, ...]:
    """An unaligned selection that cuts shards and inner chunks."""
    return tuple(slice(1, max(2, s - 2), 2 if i == 0 else 1) for i, s in enumerate(case.shape))


# --------------------------------------------------------------------------
# writers and readers


def _zarrpy_create(path: str, case: Case):
    if case.via_shards_argument:
        a = zarrpy.create_array(path, shape=case.shape, dtype=case.dtype, chunks=case.inner, shards=case.shard,
                                compressors=case.compressors(), fill_value=0)
    else:
        a = zarrpy.create_array(path, shape=case.shape, dtype=case.dtype, chunks=case.shard,
                                serializer=case.sharding_json(), compressors=None, fill_value=0)
    assert (a.chunks, a.shards) == (case.inner, case.shard)
    return a


def write_zarrpy(path: str, case: Case, plan: Plan) -> None:
    a = _zarrpy_create(path, case)
    for sel, values in plan.writes:
        a[sel] = values


def write_zarr_python(path: str, case: Case, plan: Plan) -> None:
    if case.crc and case.nested is None:
        z = zarr.create_array(path, shape=case.shape, dtype=case.dtype, chunks=case.inner,
                              shards={"shape": case.shard, "index_location": case.location},
                              compressors=case.compressors() or None, fill_value=0)
    else:
        z = zarr.create_array(path, shape=case.shape, dtype=case.dtype, chunks=case.shard,
                              serializer=case.sharding_json(), compressors=None, fill_value=0)
    assert (z.chunks, z.shards) == (case.inner, case.shard)
    for sel, values in plan.writes:
        z[sel] = values


def _ts_spec(path: str) -> dict:
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}


def write_tensorstore(path: str, case: Case, plan: Plan) -> None:
    spec = _ts_spec(path)
    spec["metadata"] = {
        "shape": list(case.shape),
        "data_type": case.dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(case.shard)}},
        "chunk_key_encoding": {"name": "default"},
        "fill_value": 0,
        "codecs": [case.sharding_json()],
    }
    t = ts.open(spec, create=True).result()
    for sel, values in plan.writes:
        t[sel].write(values).result()


def read_zarrpy(path: str, case: Case, sel: Any) -> np.ndarray:
    a = zarrpy.open_array(path)
    assert a.shape == case.shape and a.dtype == case.np_dtype
    assert a.chunks == case.inner and a.shards == case.shard
    assert a.fill_value == 0
    return a[sel]


def read_zarr_python(path: str, case: Case, sel: Any) -> np.ndarray:
    z = zarr.open_array(path, mode="r")
    assert z.shape == case.shape and z.dtype == case.np_dtype
    assert z.chunks == case.inner and z.shards == case.shard
    return z[sel]


def read_tensorstore(path: str, case: Case, sel: Any) -> np.ndarray:
    t = ts.open(_ts_spec(path), open=True, read=True).result()
    assert tuple(t.shape) == case.shape and t.dtype.numpy_dtype == case.np_dtype
    layout = t.chunk_layout
    # tensorstore reports the innermost chunk as its read chunk.
    assert tuple(layout.read_chunk.shape) == case.innermost
    assert tuple(layout.write_chunk.shape) == case.shard
    return t[sel].read().result()


WRITERS: dict[str, Callable] = {
    "zarrpy": write_zarrpy, "zarr-python": write_zarr_python, "tensorstore": write_tensorstore,
}
READERS: dict[str, Callable] = {
    "zarrpy": read_zarrpy, "zarr-python": read_zarr_python, "tensorstore": read_tensorstore,
}


# --------------------------------------------------------------------------
# what a writer stored


def _shard_keys(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != "zarr.json"}


def _expected_layout(case: Case, expected: np.ndarray) -> dict[str, set[tuple[int, ...]]]:
    """shard key -> inner chunks (coords in the shard) that hold a non-fill value.

    Inner chunks here are those of the outer sharding codec (``case.inner``);
    shards with no such chunk are absent.
    """
    out = {}
    grid = [range(-(-s // c)) for s, c in zip(case.shape, case.shard)]
    inner_grid = [range(s // c) for s, c in zip(case.shard, case.inner)]
    for outer in itertools.product(*grid):
        stored = set()
        for inner in itertools.product(*inner_grid):
            start = [o * s + i * c for o, s, i, c in zip(outer, case.shard, inner, case.inner)]
            sel = tuple(slice(b, b + c) for b, c in zip(start, case.inner))
            if np.any(expected[sel] != 0):
                stored.add(inner)
        if stored:
            out["/".join(["c", *map(str, outer)])] = stored
    return out


def check_stored(path: str, case: Case, expected: np.ndarray) -> None:
    root = Path(path)
    meta = json.loads((root / "zarr.json").read_text())
    (codec,) = meta["codecs"]
    assert codec["name"] == "sharding_indexed"
    config = codec["configuration"]
    assert config.get("index_location", "end") == case.location
    assert config["chunk_shape"] == list(case.inner)
    assert [c["name"] for c in config["index_codecs"]] == [c["name"] for c in case.index_codecs()]
    if case.nested is not None:
        assert config["codecs"][0]["name"] == "sharding_indexed"
        assert config["codecs"][0]["configuration"]["chunk_shape"] == list(case.nested)
    layout = _expected_layout(case, expected)
    assert _shard_keys(root) == set(layout), "shard keys"
    sharding = ShardingCodec.from_config(config)
    data_type = DataType.from_numpy(case.np_dtype)
    spec = ChunkSpec(case.shard, data_type, data_type.coerce_fill(0))
    for key, stored in layout.items():
        raw = (root / key).read_bytes()
        index = sharding.read_index(raw, spec)
        present = {tuple(int(i) for i in np.unravel_index(p, index.grid_shape))
                   for p in np.flatnonzero(index.present())}
        assert present == stored, f"{key}: inner chunks in the index"
        if case.location == "start":
            # Offsets are absolute; the data follows the index.
            first = min(index.get(p)[0] for p in np.flatnonzero(index.present()))
            assert first >= sharding.index_nbytes(spec)


# --------------------------------------------------------------------------
# tests


def _assert_identical(got: Any, expected: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes()


def _round_trip(tmp_path: Path, case: Case, writer: str, reader: str) -> None:
    path = str(tmp_path / f"{writer}.zarr")
    plan = make_plan(case)
    WRITERS[writer](path, case, plan)
    check_stored(path, case, plan.expected)
    _assert_identical(READERS[reader](path, case, ...), plan.expected)
    sel = read_selection(case)
    _assert_identical(READERS[reader](path, case, sel), plan.expected[sel])


def test_the_plans_leave_missing_shards_missing_inner_chunks_and_edge_shards():
    """Guard for the cases above: each leaves some shards missing and some
    stored shards with missing inner chunks; those with edges store edge shards."""
    for case in CASES:
        layout = _expected_layout(case, make_plan(case).expected)
        nshards = int(np.prod([-(-s // c) for s, c in zip(case.shape, case.shard)]))
        ninner = int(np.prod([s // c for s, c in zip(case.shard, case.inner)]))
        assert 0 < len(layout), case.id
        assert any(len(v) < ninner for v in layout.values()), case.id
        if case.id != "2d-raw-exact":
            assert len(layout) < nshards, case.id
        if any(s % c for s, c in zip(case.shape, case.shard)):
            assert any(any((int(x) + 1) * c > s for x, c, s in zip(key.split("/")[1:], case.shard, case.shape))
                       for key in layout), case.id


@pytest.mark.parametrize("peer", ["zarr-python", "tensorstore"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_peer_writes_zarrpy_reads(tmp_path, case, peer):
    _round_trip(tmp_path, case, peer, "zarrpy")


@pytest.mark.parametrize("peer", ["zarr-python", "tensorstore"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_zarrpy_writes_peer_reads(tmp_path, case, peer):
    _round_trip(tmp_path, case, "zarrpy", peer)


@pytest.mark.parametrize("peer", ["zarr-python", "tensorstore"])
@pytest.mark.parametrize("case", [c for c in CASES if c.id in (
    "2d-zstd-end", "2d-zstd-start", "2d-blosc-start", "2d-raw-start-nocrc", "nested-2d-blosc-start")],
    ids=lambda c: c.id)
def test_zarrpy_updates_peer_written_shards(tmp_path, case, peer):
    """A peer writes, zarrpy writes an unaligned box over it (read-modify-write
    of the peer's shards, index location kept), the peer reads it back."""
    path = str(tmp_path / "a.zarr")
    plan = make_plan(case)
    WRITERS[peer](path, case, plan)
    box = tuple(slice(s // 4, s - s // 5) for s in case.shape)
    expected = plan.expected.copy()
    expected[box] = 0  # a box of fill values: inner chunks and shards may go
    inner_box = tuple(slice(b.start + 1, b.stop - 1) for b in box)
    expected[inner_box] = _values(np.random.default_rng(99), expected[inner_box].shape, case.np_dtype)
    a = zarrpy.open_array(path, mode="r+")
    a[box] = expected[box]
    check_stored(path, case, expected)
    _assert_identical(READERS[peer](path, case, ...), expected)


def test_zarrpy_shards_argument_builds_what_zarr_python_builds(tmp_path):
    """``shards=`` wraps the same codecs zarr-python's ``shards=`` wraps."""
    kw = dict(shape=(37, 45), dtype="uint16", chunks=(4, 5), shards=(8, 10), compressors=[_zstd()], fill_value=0)
    zarrpy.create_array(str(tmp_path / "ours"), **kw)
    zarr.create_array(str(tmp_path / "theirs"), **kw)
    ours = json.loads((tmp_path / "ours" / "zarr.json").read_text())
    theirs = json.loads((tmp_path / "theirs" / "zarr.json").read_text())
    assert ours["chunk_grid"] == theirs["chunk_grid"]
    assert ours["codecs"] == theirs["codecs"]


def test_shards_dict_index_location_is_honoured(tmp_path):
    shards = {"shape": (8, 10), "index_location": "start"}
    a = zarrpy.create_array(str(tmp_path / "a"), shape=(16, 20), dtype="int32", chunks=(4, 5), shards=shards)
    config = json.loads((tmp_path / "a" / "zarr.json").read_text())["codecs"][0]["configuration"]
    assert a.shards == (8, 10)
    assert config["index_location"] == "start"


# -- strings (zarr-python only) ---------------------------------------------

STR_SHAPE, STR_INNER, STR_SHARD = (23, 10), (3, 4), (6, 8)


def _string_data() -> np.ndarray:
    """Strings of varied lengths (some non-ASCII), whole inner chunks of the
    fill value "" (left out of the index), and untouched shards."""
    rng = np.random.default_rng(5)
    words = ["", "a", "zarr", "ünïcødé", "日本語", "x" * 40, "🙂 emoji", "tab\there"]
    flat = [words[i] for i in rng.integers(1, len(words), size=int(np.prod(STR_SHAPE)))]
    data = np.array(flat, dtype=np.dtypes.StringDType()).reshape(STR_SHAPE)
    data[:6, :] = ""  # first shard row: no shard stored
    data[6:9, 0:4] = ""  # one empty inner chunk
    data[12:15, 4:8] = ""
    data[7, 5] = ""  # a single fill element inside a stored chunk
    return data


def _string_layout(data: np.ndarray) -> dict[str, set]:
    out = {}
    for oi, oj in itertools.product(range(-(-STR_SHAPE[0] // 6)), range(-(-STR_SHAPE[1] // 8))):
        stored = set()
        for ii, ij in itertools.product(range(2), range(2)):
            r0, c0 = oi * 6 + ii * 3, oj * 8 + ij * 4
            if (data[r0:r0 + 3, c0:c0 + 4] != "").any():
                stored.add((ii, ij))
        if stored:
            out[f"c/{oi}/{oj}"] = stored
    return out


def _check_string_store(root: Path, data: np.ndarray) -> None:
    layout = _string_layout(data)
    assert _shard_keys(root) == set(layout)
    config = json.loads((root / "zarr.json").read_text())["codecs"][0]["configuration"]
    sharding = ShardingCodec.from_config(config)
    data_type = DataType.from_json("string")
    spec = ChunkSpec(STR_SHARD, data_type, data_type.coerce_fill(""))
    for key, stored in layout.items():
        index = sharding.read_index((root / key).read_bytes(), spec)
        present = {tuple(int(i) for i in np.unravel_index(p, index.grid_shape))
                   for p in np.flatnonzero(index.present())}
        assert present == stored, key


def _assert_strings(got: Any, expected: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.shape == expected.shape
    assert got.astype(object).tolist() == expected.astype(object).tolist()


def test_strings_zarr_python_writes_zarrpy_reads(tmp_path):
    data = _string_data()
    z = zarr.create_array(str(tmp_path / "s"), shape=STR_SHAPE, dtype=str, chunks=STR_INNER,
                          shards=STR_SHARD, fill_value="")
    z[6:, :] = data[6:, :]
    _check_string_store(tmp_path / "s", data)
    a = zarrpy.open_array(str(tmp_path / "s"))
    assert a.chunks == STR_INNER and a.shards == STR_SHARD and a.shape == STR_SHAPE
    out = a[...]
    assert out.dtype == np.dtypes.StringDType()
    _assert_strings(out, data)
    _assert_strings(a[5:20:3, 2:9], data[5:20:3, 2:9])
    assert a[8, 3] == data[8, 3]


def test_strings_zarrpy_writes_zarr_python_reads(tmp_path):
    data = _string_data()
    a = zarrpy.create_array(str(tmp_path / "s"), shape=STR_SHAPE, dtype="string", chunks=STR_INNER,
                            shards=STR_SHARD, fill_value="")
    a[6:, :] = data[6:, :]
    a[10:13, 1:7] = data[10:13, 1:7]  # rewrite across inner chunks and shards
    _check_string_store(tmp_path / "s", data)
    z = zarr.open_array(str(tmp_path / "s"), mode="r")
    assert z.chunks == STR_INNER and z.shards == STR_SHARD
    _assert_strings(z[...], data)
    _assert_strings(z[5:20:3, 2:9], data[5:20:3, 2:9])


def test_strings_zarrpy_updates_zarr_python_shards(tmp_path):
    data = _string_data()
    z = zarr.create_array(str(tmp_path / "s"), shape=STR_SHAPE, dtype=str, chunks=STR_INNER,
                          shards={"shape": STR_SHARD, "index_location": "start"}, fill_value="")
    z[...] = data
    a = zarrpy.open_array(str(tmp_path / "s"), mode="r+")
    data[2:14, 3:9] = np.array([[f"n{i}{j}ü" for j in range(6)] for i in range(12)], dtype=np.dtypes.StringDType())
    data[18:, :] = ""
    a[2:14, 3:9] = data[2:14, 3:9]
    a[18:, :] = ""
    _check_string_store(tmp_path / "s", data)
    _assert_strings(zarr.open_array(str(tmp_path / "s"), mode="r")[...], data)
