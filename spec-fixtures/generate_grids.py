"""Golden stores of the chunk grids beyond ``regular``: ``rectilinear`` and ``zarrs.regular_bounded``.

Writes ``spec-fixtures/grids/<producer>/<name>/`` (``data.zarr/``,
``expected.npy``, ``fixture.json``):

- ``grids/zarr-python/``: zarr-python 3.4.2 with ``array.rectilinear_chunks``
  on (``create_array(chunks=[[...], ...])``, rectilinear shards, a resize that
  leaves edges past the array's end), metadata and chunks alike;
- ``grids/zarrs/``: the Rust zarrs crate (0.23.13) through zarrista 0.1.0
  (``ChunkGrid.rectilinear`` / ``ChunkGrid.regular_bounded`` and zarrs' own
  ``ArrayBuilder``, sharded with ``subchunk_shape``), metadata and chunks alike.

Every store is read back by its producer and must equal the data; each
fixture's ``cross_checks`` say what the other producer reads
(``"equal"`` or ``"cannot read (...)"``). ``fixture.json`` also records
``chunk_grid`` (the member as stored), ``read_chunk_sizes`` and
``write_chunk_sizes`` (zarr-python's names: per dimension the size of each
chunk, inner chunk when sharded, and of each stored object, clipped to the
array) and ``bytes_identical`` (stores without a compressor, written as a
plain write of the data writes them): a writer given the same metadata and
data must write the same chunk files.

Run with an interpreter that has zarr-python 3.4.2 and zarrista 0.1.0:
``python spec-fixtures/generate_grids.py``. Deterministic: a second run
leaves ``git status`` clean.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
from pathlib import Path
from typing import Any, Callable

import numpy as np
import zarr
import zarrista as zt
from zarrista.store import FilesystemStore

ROOT = Path(__file__).resolve().parent / "grids"
ZARR_VERSION, ZARRISTA_VERSION = "3.4.2", "0.1.0"
ZARR_LABEL = f"zarr-python {ZARR_VERSION}"
ZARRS_LABEL = f"zarrs 0.23.13 through zarrista {ZARRISTA_VERSION}"
FLAG = {"array.rectilinear_chunks": True}


def wave(dtype: str, shape: tuple[int, ...], modulo: int, offset: int = 0) -> np.ndarray:
    """Deterministic data: no two neighbours equal, every chunk different."""
    return ((np.arange(int(np.prod(shape))) * 7 + 3) % modulo + offset).astype(dtype).reshape(shape)


def sizes(starts_and_edges: list[Any], extent: int) -> tuple[int, ...]:
    """Per-chunk sizes along one dimension, clipped to ``extent``."""
    out, pos = [], 0
    for e in starts_and_edges:
        if pos >= extent:
            break
        out.append(min(e, extent - pos))
        pos += e
    return tuple(out)


def dim_sizes(spec: int | list[int], extent: int) -> tuple[int, ...]:
    edges = [spec] * (-(-extent // spec)) if isinstance(spec, int) else spec
    return sizes(edges, extent)


# -- readers --------------------------------------------------------------------
def read_zarr_python(store: Path) -> np.ndarray:
    with zarr.config.set(FLAG):
        return np.asarray(zarr.open_array(str(store), mode="r")[...])


def read_zarrs(store: Path) -> np.ndarray:
    a = zt.Array.open(FilesystemStore(str(store)), "/")
    return np.asarray(a[...].to_numpy())


def cross(reader: Callable[[Path], np.ndarray], store: Path, data: np.ndarray) -> str:
    try:
        got = reader(store)
    except Exception as exc:  # the peer's own refusal, recorded as a fact
        text = " ".join(str(exc).split())
        return f"cannot read ({type(exc).__name__}: {text[:160]})"
    if got.dtype == data.dtype and got.shape == data.shape and got.tobytes() == data.tobytes():
        return "equal"
    return "different data"


def save(fdir: Path, data: np.ndarray, producer: str, description: str, reread: Callable[[Path], np.ndarray],
         other: tuple[str, Callable[[Path], np.ndarray]], **extra: Any) -> None:
    store = fdir / "data.zarr"
    back = reread(store)
    assert back.dtype == data.dtype and back.tobytes() == data.tobytes(), f"{fdir.name}: the producer read back other data"
    np.save(fdir / "expected.npy", data, allow_pickle=False)
    meta = json.loads((store / "zarr.json").read_text())
    doc = {"producer": producer, "path": "data.zarr", "description": description, "node_type": "array",
           "chunk_grid": meta["chunk_grid"], **extra,
           "cross_checks": {other[0]: cross(other[1], store, data)}}
    (fdir / "fixture.json").write_text(json.dumps(doc, indent=2) + "\n")


def fresh(producer: str, name: str) -> Path:
    fdir = ROOT / producer / name
    shutil.rmtree(fdir, ignore_errors=True)
    fdir.mkdir(parents=True)
    return fdir


# -- zarr-python ------------------------------------------------------------------
def zarr_python(name: str, data: np.ndarray, description: str, *, write: Callable[[Any], None] | None = None,
                after: Callable[[Any], None] | None = None, bytes_identical: bool = False, **create: Any) -> None:
    fdir = fresh("zarr-python", name)
    with zarr.config.set(FLAG):
        shape = create.pop("shape", data.shape)  # created at another shape, then resized (``after``)
        a = zarr.create_array(str(fdir / "data.zarr"), shape=shape, dtype=data.dtype, **create)
        if write is None:
            a[...] = data
        else:
            write(a)
        if after is not None:
            after(a)
        a = zarr.open_array(str(fdir / "data.zarr"), mode="r")
        read_sizes, write_sizes = a.read_chunk_sizes, a.write_chunk_sizes
    save(fdir, data, ZARR_LABEL, description, read_zarr_python, (ZARRS_LABEL, read_zarrs),
         read_chunk_sizes=read_sizes, write_chunk_sizes=write_sizes, bytes_identical=bytes_identical)


def zarr_python_fixtures() -> None:
    data = wave("int32", (10, 6), 1000, -500)
    zarr_python("rectilinear_2d", data, "int32 (10, 6), chunks [[3, 3, 4], [2, 2, 2]] (stored run-length "
                "encoded), zstd (zarr-python's default), fill -1", chunks=[[3, 3, 4], [2, 2, 2]], fill_value=-1)

    data = wave("float32", (30, 7), 97) / np.float32(4)
    part = np.full(data.shape, np.float32(np.nan))
    part[:15] = data[:15]
    part[20:, :3] = data[20:, :3]

    def write_part(a: Any) -> None:
        a[:15] = data[:15]
        a[20:, :3] = data[20:, :3]

    zarr_python("rectilinear_mixed_partial", part, "float32 (30, 7), chunks [[5, 5, 5, 15], 3] (a regular "
                "dimension as one integer: its edge chunk clipped), no compressor, fill NaN; written in part "
                "(rows 0-14; rows 20-29 of columns 0-2), so missing chunks read as the fill",
                write=write_part, chunks=[[5, 5, 5, 15], 3], compressors=None, fill_value=np.nan, bytes_identical=True)

    full = wave("uint8", (10,), 250)
    data = full[:7].copy()

    def shrink(a: Any) -> None:
        a.resize((7,))

    zarr_python("rectilinear_shrunk", data, "uint8 (10,), chunks [[4, 4, 2]], written whole, then resized to "
                "(7,): zarr-python keeps the edges [4, 4, 2] (summing past the array's length) and deletes "
                "the chunk wholly outside; chunk 1 still stores element 7 past the end",
                write=lambda a: a.__setitem__(Ellipsis, full), after=shrink, shape=(10,), chunks=[[4, 4, 2]],
                compressors=None, fill_value=0)

    data = wave("uint16", (12, 8), 60000)
    zarr_python("rectilinear_sharded", data, "uint16 (12, 8), rectilinear shards [[4, 6, 2], 8] of inner "
                "chunks (2, 4) (zarr-python #3802: shard edges multiples of the inner chunks), inner codecs "
                "bytes + zstd, index bytes + crc32c at the end", chunks=(2, 4), shards=[[4, 6, 2], 8])

    edges = [1, 2, 3, 5, 8, 13, 21, 47]
    data = wave("int64", (100,), 10**9, -(10**8))
    zarr_python("rectilinear_1d_varied", data, f"int64 (100,), chunks {edges} (no run-length encoding), "
                "no compressor", chunks=[edges], compressors=None, bytes_identical=True)


# -- zarrs (through zarrista) -------------------------------------------------------
def zarrs(name: str, grid: Any, data: np.ndarray, data_type: str, fill: bytes, description: str, *,
          subchunks: list[int] | None = None, region: tuple[slice, ...] | None = None,
          expected: np.ndarray | None = None) -> None:
    fdir = fresh("zarrs", name)
    builder = zt.ArrayBuilder(grid, zt.DataType.from_metadata(data_type), zt.FillValue(fill))
    if subchunks is not None:
        builder = builder.subchunk_shape(subchunks)
    meta = dict(builder.create_metadata())
    array = zt.Array.from_metadata(meta, FilesystemStore(str(fdir / "data.zarr")), "/")
    array.store_metadata()
    part = data if region is None else np.ascontiguousarray(data[region])
    array.store_array_subset(array.subset_all if region is None else region, zt.ArrayBytes(part.tobytes()))
    want = data if expected is None else expected
    shape = list(data.shape)
    read_sizes = tuple(dim_sizes(s, n) for s, n in zip(_read_specs(meta), shape))
    write_sizes = tuple(dim_sizes(s, n) for s, n in zip(_write_specs(meta), shape))
    save(fdir, want, ZARRS_LABEL, description, read_zarrs, (ZARR_LABEL, read_zarr_python),
         read_chunk_sizes=read_sizes, write_chunk_sizes=write_sizes, bytes_identical=True)


def _write_specs(meta: dict[str, Any]) -> list[Any]:
    config = meta["chunk_grid"]["configuration"]
    if "chunk_shape" in config:
        return list(config["chunk_shape"])
    return [d if isinstance(d, int) else [e for item in d for e in ([item[0]] * item[1] if isinstance(item, list)
                                                                  else [item])]
            for d in config["chunk_shapes"]]


def _read_specs(meta: dict[str, Any]) -> list[Any]:
    codec = meta["codecs"][0]
    if codec["name"] == "sharding_indexed":
        return list(codec["configuration"]["chunk_shape"])
    return _write_specs(meta)


def zarrs_fixtures() -> None:
    data = wave("int16", (10, 6), 30000, -15000)
    zarrs("rectilinear_2d", zt.ChunkGrid.rectilinear([10, 6], chunk_shapes=[[(3, 2), 4], 2]), data, "int16",
          b"\x00\x00", "int16 (10, 6), chunk_shapes [[[3, 2], 4], 2] (a run, and a regular dimension as one "
          "integer), zarrs' default codecs (bytes little)")

    data = wave("uint8", (10, 7), 251)
    zarrs("regular_bounded_2d", zt.ChunkGrid.regular_bounded([10, 7], chunk_shape=[4, 3]), data, "uint8",
          b"\x00", "uint8 (10, 7), zarrs.regular_bounded chunk_shape [4, 3]: the edge chunks are stored "
          "clipped ((2, 3), (4, 1), (2, 1)), bytes only")

    data = wave("int16", (12, 9), 30000)
    zarrs("regular_bounded_sharded", zt.ChunkGrid.regular_bounded([12, 9], chunk_shape=[8, 6]), data, "int16",
          b"\x00\x00", "int16 (12, 9), zarrs.regular_bounded shards [8, 6] of inner chunks [4, 3]: the edge "
          "shards are (4, 6), (8, 3) and (4, 3), each whole inner chunks", subchunks=[4, 3])

    data = wave("uint16", (12, 8), 60000)
    expected = np.zeros_like(data)
    region = (slice(0, 10), slice(0, 8))
    expected[region] = data[region]
    zarrs("rectilinear_sharded_partial", zt.ChunkGrid.rectilinear([12, 8], chunk_shapes=[[4, 6, 2], 8]), data,
          "uint16", b"\x00\x00", "uint16 (12, 8), rectilinear shards [[4, 6, 2], 8] of inner chunks [2, 4]; "
          "rows 0-9 written (the last shard is not stored: fill 0)", subchunks=[2, 4], region=region,
          expected=expected)

    data = wave("float64", (50,), 1000) / 8
    zarrs("rectilinear_runs_1d", zt.ChunkGrid.rectilinear([50], chunk_shapes=[[(4, 5), (10, 4)]]), data,
          "float64", np.float64(0).tobytes(), "float64 (50,), chunk_shapes [[[4, 5], [10, 4]]]: runs "
          "summing past the array's length (60 > 50): the last chunk lies wholly outside the array (zarrs "
          "counts it in its grid shape, zarr-python and zarrpy do not)")


def main() -> None:
    assert zarr.__version__ == ZARR_VERSION, zarr.__version__
    assert importlib.metadata.version("zarrista") == ZARRISTA_VERSION
    zarr_python_fixtures()
    zarrs_fixtures()
    print(f"wrote {sum(1 for _ in ROOT.glob('*/*/fixture.json'))} fixtures to {ROOT}")


if __name__ == "__main__":
    main()
