"""The one benchmark command: every workload, every engine, with bounds.

    python bench/run.py                      # the default run (several minutes)
    python bench/run.py --quick              # everything shrunk: well under a minute
    python bench/run.py --only read sharded-read --engines zarr-python tensorstore
    python bench/run.py --repeats 5 --json out.json --no-docs

Engines: zarrpy (always), zarr-python, zarr-python with the strict zarrs codec
pipeline (checked to be really in use), tensorstore. An engine that is not
installed, or cannot do a workload, shows ``n/a`` with the reason.

Each workload: one untimed warm-up round that checks every result (writes are
read back by zarr-python and zarrpy and must hold the reference's keys), then
``--repeats`` interleaved rounds in a rotating engine order; every read, warm-up
and timed, is compared with the source outside the timing, and any mismatch
aborts the run. Reads use one shared reference store written by zarr-python,
so every engine decodes the same bytes. After each workload the run measures
its bound (decode/encode of the very chunks on one thread, page-cache reads,
memory copies; see docs/performance.md for the formulas) and reports zarrpy's
time as a percentage of it.

The table is printed, and (unless ``--no-docs``) written into
``docs/performance.md`` between ``<!-- bench:begin -->`` and ``<!-- bench:end -->``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import sys
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: the shared harness and scripts
import _harness as H  # noqa: E402  (also puts the repository root on sys.path)
import bench_core  # noqa: E402
import bench_indexing  # noqa: E402
import bench_sharding  # noqa: E402
import bench_strings  # noqa: E402
import zarrpy  # noqa: E402
from _harness import SEED, ZSTD_JSON, check_equal  # noqa: E402

DOC_PATH = H.REPO_ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
CORES = os.cpu_count() or 1
BLOSC_JSON = {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "shuffle",
                                                  "typesize": 2, "blocksize": 0}}
SMALL_ZSTD = ZSTD_JSON
PEER_DISTS = ("numpy", "zarr", "zarrs", "tensorstore", "numcodecs", "zstandard")


# -- configuration --------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    """Every size of one run (``DEFAULT``, ``QUICK``; tests use a tiny one)."""

    rows: int = 16384
    cols: int = 8192
    chunk: int = 512
    region: tuple[tuple[int, int], tuple[int, int]] = ((123, 3123), (77, 3077))
    shard: int = 4096
    inner: int = 256
    n_random: int = 300
    n_strings: int = 1_000_000
    string_chunk: int = 100_000
    n_oindex: int = 1_000
    n_small: int = 200
    small_len: int = 10_000
    indexing: bench_indexing.Sizes = field(default_factory=bench_indexing.Sizes)
    repeats: int = 5
    bound_repeats: int = 3
    sync: bool = True  # os.sync() and gc.collect() before every timing (tests turn them off)
    memcpy_nbytes: int = 256 * 2**20  # the memcpy bandwidth the header shows


DEFAULT = Config()
QUICK = Config(rows=1024, cols=512, chunk=128, region=((12, 312), (7, 307)), shard=256, inner=64, n_random=50,
               n_strings=50_000, string_chunk=5_000, n_oindex=100, n_small=20, small_len=1_000,
               indexing=bench_indexing.QUICK, repeats=2, bound_repeats=1)


class NotApplicable(Exception):
    """An engine cannot run a workload (the message says why)."""


# -- engines --------------------------------------------------------------------
# An engine is made of the old scripts' implementations (``core``: bench_core,
# ``shard``: bench_sharding, ``strings``: bench_strings, ``idx``: bench_indexing)
# plus ``small`` (many small arrays) defined here. A part that is None is n/a.
class ZarrpySmall:
    def read_all(self, paths):
        return [zarrpy.open_array(p, mode="r")[...] for p in paths]


class ZarrPythonSmall(H.ZarrPythonPeer):
    def read_all(self, paths):
        with self._config():
            return [self.zarr.open_array(p, mode="r")[...] for p in paths]


class TensorstoreSmall(H.TensorstorePeer):
    def read_all(self, paths):
        return [self._open(p).read().result() for p in paths]


class ZarrPythonStrings(H.ZarrPythonPeer):
    """bench_strings' zarr-python, under this peer's configuration."""

    def write(self, path, data, chunk):
        with self._config():
            a = self.zarr.create_array(path, shape=data.shape, dtype=str, chunks=(chunk,), overwrite=True)
            a[...] = data

    def read(self, path):
        with self._config():
            return self.zarr.open_array(path, mode="r")[...]


class TensorstoreStrings(H.TensorstorePeer):
    def _probe(self) -> None:
        """Raise NotApplicable when tensorstore's zarr3 driver has no string data type."""
        try:
            self.ts.open({"driver": "zarr3", "kvstore": {"driver": "memory"}, "metadata": {
                "shape": [1], "data_type": "string", "chunk_grid": {"name": "regular",
                "configuration": {"chunk_shape": [1]}}, "chunk_key_encoding": {"name": "default"},
                "fill_value": "", "codecs": [{"name": "vlen-utf8"}]}}, create=True).result()
        except ValueError as exc:
            if "data_type" in str(exc):
                raise NotApplicable("tensorstore's zarr3 driver has no string data type") from None
            raise

    def write(self, path, data, chunk):
        self._probe()
        self._create(path, {
            "shape": list(data.shape), "data_type": "string",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": "",
            "codecs": [{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
        }, data.astype(object))

    def read(self, path):
        self._probe()
        return self._open(path).read().result().astype(bench_strings.STRING_DTYPE)


class ZarrsSmall(H.ZarrsPipeline, ZarrPythonSmall):
    pass


class ZarrsStrings(H.ZarrsPipeline, ZarrPythonStrings):
    pass


class ZarrsIndexing(H.ZarrsPipeline, bench_indexing.ZarrPythonImpl):
    pass


class Engine:
    """One engine: its name, its parts, and why a part (or all) is n/a."""

    PARTS = ("core", "shard", "strings", "idx", "small")

    def __init__(self, name: str, missing: str | None = None, **parts: Any) -> None:
        self.name = name
        self.missing = missing
        self.parts = parts

    def part(self, name: str) -> Any:
        obj = self.parts.get(name)
        if obj is None:
            raise NotApplicable(f"{self.name} has no {name} implementation")
        return obj

    def check_pipeline(self, path: str) -> None:
        """For the zarrs engine: raise unless zarr-python really uses zarrs on ``path``."""
        core = self.parts.get("core")
        if isinstance(core, H.ZarrsPipeline):
            H.check_zarrs_in_use([core], path)


ENGINE_NAMES = ("zarrpy", "zarr-python", "zarr-python+zarrs", "tensorstore")
ENGINE_ALIASES = {"zarrs": "zarr-python+zarrs", "ts": "tensorstore", "zarr": "zarr-python"}


def make_engines(wanted: Sequence[str] | None = None) -> list[Engine]:
    """zarrpy and every wanted peer; a peer that cannot be imported stays in
    the list with ``missing`` set (its cells show n/a and the reason)."""
    wanted = set(ENGINE_NAMES) if wanted is None else {ENGINE_ALIASES.get(w, w) for w in wanted}
    engines = [Engine("zarrpy", core=bench_core.ZarrpyImpl(), shard=bench_sharding.ZarrpyImpl(),
                      strings=bench_strings.ZarrpyImpl(), idx=bench_indexing.ZarrpyImpl(), small=ZarrpySmall())]
    makers = {
        "zarr-python": lambda: dict(core=bench_core.ZarrPythonImpl(), shard=bench_sharding.ZarrPythonImpl(),
                                    strings=ZarrPythonStrings(), idx=bench_indexing.ZarrPythonImpl(),
                                    small=ZarrPythonSmall()),
        "zarr-python+zarrs": lambda: dict(core=bench_core.ZarrsImpl(), shard=bench_sharding.ZarrsImpl(),
                                          strings=ZarrsStrings(), idx=ZarrsIndexing(), small=ZarrsSmall()),
        "tensorstore": lambda: dict(core=bench_core.TensorstoreImpl(), shard=bench_sharding.TensorstoreImpl(),
                                    strings=TensorstoreStrings(), idx=bench_indexing.TensorstoreImpl(),
                                    small=TensorstoreSmall()),
    }
    for name in ENGINE_NAMES[1:]:
        if name not in wanted:
            continue
        try:
            engines.append(Engine(name, **makers[name]()))
        except ImportError as exc:
            engines.append(Engine(name, missing=f"not installed ({exc})"))
    return engines


# -- data -----------------------------------------------------------------------
def make_image(rows: int, cols: int, seed: int = SEED) -> np.ndarray:
    """``rows`` x ``cols`` uint16: ``H.make_data(cols)`` tiles (smooth field
    plus noise; seeds ``seed``, ``seed + 1``, ...) stacked along the rows."""
    tiles = [H.make_data(cols, seed + i) for i in range(-(-rows // cols))]
    return np.ascontiguousarray(np.concatenate(tiles)[:rows])


def random_inner(rows: int, cols: int, inner: int, n: int, seed: int = bench_sharding.SEED) -> list[tuple[slice, slice]]:
    """``n`` inner-chunk selections at random (fixed seed, repeats allowed)."""
    rng = np.random.default_rng(seed)
    gi, gj = rng.integers(0, rows // inner, n).tolist(), rng.integers(0, cols // inner, n).tolist()
    return [(slice(i * inner, (i + 1) * inner), slice(j * inner, (j + 1) * inner)) for i, j in zip(gi, gj)]


# -- bounds: the measured pieces ----------------------------------------------------
def _median_time(fn: Callable[[], Any], reps: int) -> float:
    ts = []
    for _ in range(max(1, reps)):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def copy_times(nbytes: int, reps: int) -> tuple[float, float]:
    """One-thread seconds to copy ``nbytes`` into a pre-faulted array, and into a
    fresh ``np.empty`` (page faults included)."""
    src = np.ones(max(nbytes, 1), np.uint8)
    dst = np.ones_like(src)
    pre = _median_time(lambda: np.copyto(dst, src), reps)
    fresh = _median_time(lambda: np.copyto(np.empty_like(src), src), reps)
    return pre, fresh


def _placed_buffer(offset: int, nbytes: int) -> np.ndarray:
    """An ``nbytes`` buffer starting ``offset % 4096`` bytes into a page."""
    raw = np.empty(nbytes + 8192, dtype=np.uint8)
    start = (-raw.ctypes.data) % 4096 + offset % 4096
    return raw[start : start + nbytes]


def read_ranges_time(ranges: Sequence[tuple[str, int, int]], reps: int, threads: int = CORES) -> float:
    """Seconds to read every ``(file, offset, length)`` from the page cache with
    ``threads`` threads into pre-allocated buffers (``readinto``), each file
    opened once per pass. Each buffer starts at the same place in a page as
    its bytes in the file, so the bound never pays for 4K aliasing: a buffer
    8 to 31 bytes past its bytes' place (an mmap'ed block from malloc starts
    16 bytes into a page) makes the kernel's copy about twice as slow here."""
    by_file: dict[str, list[tuple[int, np.ndarray]]] = {}
    for path, off, n in ranges:
        by_file.setdefault(path, []).append((off, _placed_buffer(off, n)))
    files = sorted(by_file.items(), key=lambda kv: -sum(len(b) for _, b in kv[1]))
    shares: list[list] = [[] for _ in range(max(1, threads))]
    loads = [0] * len(shares)
    for item in files:  # largest first onto the least loaded thread
        k = loads.index(min(loads))
        shares[k].append(item)
        loads[k] += sum(len(b) for _, b in item[1])

    def work(share):
        for path, parts in share:
            with open(path, "rb", buffering=0) as f:
                for off, buf in parts:
                    f.seek(off)
                    f.readinto(buf)

    def once():
        ts = [threading.Thread(target=work, args=(s,)) for s in shares if s]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    once()  # into the page cache
    return _median_time(once, reps)


def _decoder(kind: str) -> Callable[[bytes, int], Any]:
    if kind == "zstd":
        import zstandard

        d = zstandard.ZstdDecompressor()
        return lambda b, n: d.decompress(b, max_output_size=n)
    if kind == "blosc":
        from numcodecs import blosc

        return lambda b, n: blosc.decompress(b)
    raise ValueError(kind)


def decode_time(blobs: Sequence[tuple[bytes, int]], kind: str, reps: int) -> float:
    """One-thread seconds to decompress every ``(compressed, decoded size)``."""
    dec = _decoder(kind)
    if kind == "blosc":
        from numcodecs import blosc

        old_threads, old_use = blosc.set_nthreads(1), blosc.use_threads
        blosc.use_threads = False
        try:
            return _median_time(lambda: [dec(b, n) for b, n in blobs], reps)
        finally:
            blosc.set_nthreads(old_threads)
            blosc.use_threads = old_use
    return _median_time(lambda: [dec(b, n) for b, n in blobs], reps)


def write_files_time(files: Sequence[tuple[str, bytes]], root: Path, reps: int, threads: int = CORES,
                     sync: bool = True) -> float:
    """Seconds to create every ``(relative path, bytes)`` under a fresh ``root``
    (directories included) with ``threads`` threads."""
    dirs = sorted({str(Path(p).parent) for p, _ in files})
    shares = [files[k::threads] for k in range(threads)]
    ts = []
    for rep in range(max(1, reps)):
        base = root / f"bound-write-{rep}"
        timed(lambda: None, sync)  # sync and collect, as before every engine's timing

        def work(share):
            for rel, data in share:
                with open(base / rel, "wb") as f:
                    f.write(data)

        t0 = time.perf_counter()
        for d in dirs:
            (base / d).mkdir(parents=True, exist_ok=True)
        th = [threading.Thread(target=work, args=(s,)) for s in shares if s]
        for t in th:
            t.start()
        for t in th:
            t.join()
        ts.append(time.perf_counter() - t0)
        shutil.rmtree(base)
    return statistics.median(ts)


# -- bounds: what a store holds -------------------------------------------------------
def _zstd_conf(path: str) -> dict[str, Any]:
    meta = json.loads((Path(path) / "zarr.json").read_text())
    codecs = meta["codecs"]
    if codecs[0]["name"] == "sharding_indexed":
        codecs = codecs[0]["configuration"]["codecs"]
    return next(c["configuration"] for c in codecs if c["name"] == "zstd")


def _grid_cells(shape, chunks, sel) -> list[tuple[int, ...]]:
    """Chunk coordinates that a tuple of slices touches (C order)."""
    ranges = [range(s.start // c, -(-s.stop // c)) for s, c in zip(sel, chunks)]
    return [tuple(x) for x in np.stack(np.meshgrid(*ranges, indexing="ij"), -1).reshape(-1, len(chunks)).tolist()]


def regular_units(path: str, cells: Sequence[tuple[int, ...]], chunk_nbytes: int):
    """Read ranges (whole chunk files) and decode blobs of ``cells`` of a regular store."""
    ranges, blobs = [], []
    for cell in cells:
        f = str(Path(path, "c", *map(str, cell)))
        data = Path(f).read_bytes()
        ranges.append((f, 0, len(data)))
        blobs.append((data, chunk_nbytes))
    return ranges, blobs


def sharded_units(path: str, cells: Sequence[tuple[int, int]], shard: int, inner: int, inner_nbytes: int,
                  whole: bool = False):
    """Read ranges and decode blobs of the inner chunks ``cells`` (inner-grid
    coordinates, repeats counted) of a sharded store, index at the end
    (``bytes`` + ``crc32c``). ``whole``: read whole shard files instead of
    the index and the inner chunks' ranges."""
    per = shard // inner
    nidx = per * per * 16 + 4
    ranges, blobs, seen = [], [], set()
    cache: dict[str, tuple[bytes, np.ndarray]] = {}
    for i, j in cells:
        f = str(Path(path, "c", str(i // per), str(j // per)))
        if f not in cache:
            raw = Path(f).read_bytes()
            cache[f] = (raw, np.frombuffer(raw[-nidx:-4], "<u8").reshape(-1, 2))
        raw, index = cache[f]
        off, n = index[(i % per) * per + (j % per)].tolist()
        blobs.append((raw[off:off + n], inner_nbytes))
        if f not in seen:  # the whole shard, or its index once (an optimistic bound)
            ranges.append((f, 0, len(raw)) if whole else (f, len(raw) - nidx, nidx))
            seen.add(f)
        if not whole:
            ranges.append((f, off, n))
    return ranges, blobs


def read_bound(units, kind: str, out_nbytes: int, reps: int) -> dict[str, float]:
    """``max(decode_1 / cores, read_par) + copy_fresh / cores`` (see docs/performance.md)."""
    ranges, blobs = units
    dec = decode_time(blobs, kind, reps)
    rd = read_ranges_time(ranges, reps)
    _, copy = copy_times(out_nbytes, reps)
    return {"decode_1thread_s": dec, "read_par_s": rd, "copy_fresh_s": copy,
            "bound_s": max(dec / CORES, rd) + copy / CORES,
            "formula": "max(decode/cores, read) + copy/cores"}


def write_bound(data: np.ndarray, cells_of: Callable[[], list], encode: Callable[[list], list[tuple[str, bytes]]],
                root: Path, reps: int, sync: bool = True) -> dict[str, float]:
    """``encode_1 / cores + write_par`` (see docs/performance.md)."""
    cells = cells_of()
    enc = _median_time(lambda: encode(cells), reps)
    files = encode(cells)
    wr = write_files_time(files, root, reps, sync=sync)
    return {"encode_1thread_s": enc, "write_files_par_s": wr, "bound_s": enc / CORES + wr,
            "formula": "encode/cores + write files"}


def _zstd_compressor(conf: dict[str, Any]):
    import zstandard

    return zstandard.ZstdCompressor(level=conf["level"], write_checksum=conf["checksum"])


def encode_regular(data: np.ndarray, chunk: int, conf: dict[str, Any]) -> Callable[[list], list[tuple[str, bytes]]]:
    comp = _zstd_compressor(conf)

    def encode(cells):
        return [(f"c/{i}/{j}", comp.compress(np.ascontiguousarray(data[i * chunk:(i + 1) * chunk,
                                                                       j * chunk:(j + 1) * chunk])))
                for i, j in cells]
    return encode


def encode_sharded(data: np.ndarray, shard: int, inner: int, conf: dict[str, Any]) -> Callable[[list], list]:
    import google_crc32c

    comp = _zstd_compressor(conf)
    per = shard // inner

    def encode(cells):
        out = []
        for si, sj in cells:
            parts, index, off = [], np.empty((per * per, 2), "<u8"), 0
            for k in range(per * per):
                r, c = si * shard + (k // per) * inner, sj * shard + (k % per) * inner
                b = comp.compress(np.ascontiguousarray(data[r:r + inner, c:c + inner]))
                parts.append(b)
                index[k] = (off, len(b))
                off += len(b)
            ib = index.tobytes()
            parts += [ib, google_crc32c.value(ib).to_bytes(4, "little")]
            out.append((f"c/{si}/{sj}", b"".join(parts)))
        return out
    return encode


# -- the run --------------------------------------------------------------------
@dataclass
class Workload:
    """One row of the table."""

    key: str
    number: int
    title: str
    part: str
    run: Callable[[Engine], Callable[[], Any]]  # engine -> the timed call
    check: Callable[[str, Any], None] | None = None  # (label, result): reads
    write_verify: Callable[[str, str], None] | None = None  # (engine name, path): writes (warm-up)
    bound: Callable[[], dict[str, Any]] | None = None
    items: int | None = None  # per-item times: this many items
    item_name: str = ""
    store: str | None = None  # the reference store (the zarrs pipeline is checked on it)
    is_write: bool = False


GROUPS = {
    "write": 1, "read": 2, "region": 3, "blosc-read": 4, "sharded-write": 5, "sharded-read": 6,
    "sharded-region": 7, "random-inner": 8, "strings-write": 9, "strings-read": 9, "strings-optional-read": 9, "oindex": 10,
    "small-arrays": 11, "vindex": 12, "iter": 12, "concat": 12,
}
ALIASES = {"strings": ["strings-write", "strings-read", "strings-optional-read"], "indexing": ["vindex", "iter", "concat"],
           **{str(n): [k for k, v in GROUPS.items() if v == n] for n in set(GROUPS.values())}}


def expand_only(only: Sequence[str] | None) -> list[str]:
    """Workload keys selected by ``--only`` (names, numbers or aliases); all when empty."""
    if not only:
        return list(GROUPS)
    out = []
    for name in only:
        keys = ALIASES.get(name, [name] if name in GROUPS else None)
        if keys is None:
            raise SystemExit(f"unknown workload {name!r}; choose from {', '.join([*GROUPS, *ALIASES])}")
        out += [k for k in keys if k not in out]
    return [k for k in GROUPS if k in out]


class Run:
    """Stores, data and workloads of one run (built lazily, so ``--only``
    writes only what the chosen workloads read)."""

    def __init__(self, cfg: Config, work: Path, log: Callable[[str], None] = print) -> None:
        self.cfg, self.work, self.log = cfg, work, log
        self._cache: dict[str, Any] = {}
        import zarr

        self.zarr = zarr

    def once(self, key: str, make: Callable[[], Any]) -> Any:
        if key not in self._cache:
            t0 = time.perf_counter()
            self._cache[key] = make()
            self.log(f"  prepared {key} ({time.perf_counter() - t0:.1f} s)")
        return self._cache[key]

    # data and reference stores (zarr-python writes every reference)
    def image(self) -> np.ndarray:
        return self.once("image data", lambda: make_image(self.cfg.rows, self.cfg.cols))

    def _ref(self, name: str, **kw) -> str:
        def make():
            path = str(self.work / name)
            a = self.zarr.create_array(path, shape=self.image().shape, dtype=self.image().dtype, fill_value=0, **kw)
            a[...] = self.image()
            return path
        return self.once(f"reference store {name}", make)

    def plain(self) -> str:
        c = self.cfg.chunk
        return self._ref("plain.zarr", chunks=(c, c), compressors=[ZSTD_JSON])

    def blosc(self) -> str:
        c = self.cfg.chunk
        return self._ref("blosc.zarr", chunks=(c, c), compressors=[BLOSC_JSON])

    def sharded(self) -> str:
        s, i = self.cfg.shard, self.cfg.inner
        return self._ref("sharded.zarr", chunks=(i, i), shards=(s, s), compressors=[ZSTD_JSON])

    def strings(self) -> np.ndarray:
        return self.once("strings data", lambda: bench_strings.make_strings(self.cfg.n_strings))

    def strings_ref(self) -> str:
        def make():
            path = str(self.work / "strings.zarr")
            ZarrPythonStrings().write(path, self.strings(), self.cfg.string_chunk)
            return path
        return self.once("reference store strings.zarr", make)

    def optional_strings(self) -> np.ma.MaskedArray:
        """The strings with one in ten missing (fixed seed)."""
        def make():
            missing = np.random.default_rng(SEED + 5).random(self.cfg.n_strings) < 0.1
            return np.ma.MaskedArray(self.strings(), mask=missing)
        return self.once("optional strings data", make)

    def optional_strings_ref(self) -> str:
        """zarrs' optional string type (zarrs.optional + vlen-utf8 + zstd),
        written by zarrpy: zarr-python has no such type."""
        def make():
            path = str(self.work / "optional-strings.zarr")
            data = self.optional_strings()
            a = zarrpy.create_array(path, shape=data.shape, chunks=(self.cfg.string_chunk,), dtype={
                "name": "zarrs.optional", "configuration": {"name": "string", "configuration": {}}})
            a[...] = data
            return path
        return self.once("reference store optional-strings.zarr", make)

    def small(self) -> tuple[list[str], list[np.ndarray]]:
        def make():
            root = self.work / "small"
            self.zarr.open_group(str(root), mode="w")
            rng = np.random.default_rng(SEED + 3)
            paths, arrays = [], []
            for k in range(self.cfg.n_small):
                x = np.cumsum(rng.normal(0.0, 1.0, self.cfg.small_len)).round(3)  # a random walk, 3 decimals
                path = str(root / f"a{k:03d}")
                a = self.zarr.create_array(path, shape=x.shape, dtype=x.dtype, chunks=x.shape,
                                           compressors=[SMALL_ZSTD], fill_value=0.0)
                a[...] = x
                paths.append(path)
                arrays.append(x)
            return paths, arrays
        return self.once("200 small arrays" if self.cfg.n_small == 200 else "small arrays", make)

    def indexing(self) -> bench_indexing.Cases:
        def make():
            (self.work / "indexing").mkdir(exist_ok=True)
            return bench_indexing.make_cases(self.work / "indexing", self.cfg.indexing,
                                             bench_indexing.ZarrPythonImpl().write)
        return self.once("indexing stores (bench_indexing)", make)

    # the readers that check what a writer stored
    def readback(self, name: str, path: str, ref: str, expected: np.ndarray, check=check_equal) -> None:
        keys, ref_keys = H.chunk_keys(H.stored_files(path)), H.chunk_keys(H.stored_files(ref))
        if keys != ref_keys:
            raise AssertionError(f"{name} wrote other keys than zarr-python ({len(keys)} vs {len(ref_keys)})")
        readers = (("zarr-python", lambda p: self.zarr.open_array(p, mode="r")[...]),
                   ("zarrpy", lambda p: zarrpy.open_array(p, mode="r")[...]))
        for reader, read in readers:
            check(f"{name} write, read by {reader}", read(path), expected)

    # -- the workloads
    def workloads(self, keys: Sequence[str]) -> list[Workload]:
        cfg, reps = self.cfg, self.cfg.bound_repeats
        (r0, r1), (c0, c1) = cfg.region
        region = (slice(r0, r1), slice(c0, c1))
        shape = (cfg.rows, cfg.cols)
        img_nbytes = cfg.rows * cfg.cols * 2
        chunk_nb = cfg.chunk * cfg.chunk * 2
        inner_nb = cfg.inner * cfg.inner * 2
        MiB = img_nbytes / 2**20
        size_s = f"{cfg.rows}×{cfg.cols} uint16 ({MiB:.0f} MiB)"
        region_s = f"[{r0}:{r1}, {c0}:{c1}]"
        full = (slice(0, cfg.rows), slice(0, cfg.cols))
        out: list[Workload] = []
        eq = check_equal

        def add(w: Workload) -> None:
            if w.key in keys:
                out.append(w)

        img = self.image
        if "write" in keys:
            add(Workload(
                "write", 1, f"write {size_s}, chunks {cfg.chunk}², zstd 3", "core", is_write=True, store="plain",
                run=lambda e: lambda path: e.part("core").write(path, img(), cfg.chunk),
                write_verify=lambda name, path: self.readback(name, path, self.plain(), img()),
                bound=lambda: write_bound(img(), lambda: _grid_cells(shape, (cfg.chunk,) * 2, full),
                                          encode_regular(img(), cfg.chunk, _zstd_conf(self.plain())), self.work, reps,
                                          cfg.sync)))
        if "read" in keys:
            add(Workload(
                "read", 2, "full read (same store)", "core", store="plain",
                run=lambda e: lambda: e.part("core").read(self.plain()),
                check=lambda what, got: eq(what, got, img()),
                bound=lambda: read_bound(regular_units(self.plain(), _grid_cells(shape, (cfg.chunk,) * 2, full),
                                                       chunk_nb), "zstd", img_nbytes, reps)))
        if "region" in keys:
            add(Workload(
                "region", 3, f"region read {region_s}", "core", store="plain",
                run=lambda e: lambda: e.part("core").read_region(self.plain(), region),
                check=lambda what, got: eq(what, got, img()[region]),
                bound=lambda: read_bound(regular_units(self.plain(), _grid_cells(shape, (cfg.chunk,) * 2, region),
                                                       chunk_nb), "zstd", (r1 - r0) * (c1 - c0) * 2, reps)))
        if "blosc-read" in keys:
            add(Workload(
                "blosc-read", 4, f"full read, blosc zstd 3 shuffle, chunks {cfg.chunk}²", "core", store="blosc",
                run=lambda e: lambda: e.part("core").read(self.blosc()),
                check=lambda what, got: eq(what, got, img()),
                bound=lambda: read_bound(regular_units(self.blosc(), _grid_cells(shape, (cfg.chunk,) * 2, full),
                                                       chunk_nb), "blosc", img_nbytes, reps)))
        sh_desc = f"shards {cfg.shard}², inner {cfg.inner}²"
        inner_cells_full = lambda: _grid_cells(shape, (cfg.inner,) * 2, full)  # noqa: E731
        if "sharded-write" in keys:
            add(Workload(
                "sharded-write", 5, f"sharded write, {sh_desc}, zstd 3", "shard", is_write=True, store="sharded",
                run=lambda e: lambda path: e.part("shard").write(path, img(), cfg.inner, cfg.shard),
                write_verify=lambda name, path: self.readback(name, path, self.sharded(), img()),
                bound=lambda: write_bound(img(), lambda: _grid_cells(shape, (cfg.shard,) * 2, full),
                                          encode_sharded(img(), cfg.shard, cfg.inner, _zstd_conf(self.sharded())),
                                          self.work, reps, cfg.sync)))
        if "sharded-read" in keys:
            add(Workload(
                "sharded-read", 6, "sharded full read", "shard", store="sharded",
                run=lambda e: lambda: e.part("shard").read(self.sharded()),
                check=lambda what, got: eq(what, got, img()),
                bound=lambda: read_bound(sharded_units(self.sharded(), inner_cells_full(), cfg.shard, cfg.inner,
                                                       inner_nb, whole=True), "zstd", img_nbytes, reps)))
        if "sharded-region" in keys:
            add(Workload(
                "sharded-region", 7, f"sharded region read {region_s}", "shard", store="sharded",
                run=lambda e: lambda: e.part("shard").read_many(self.sharded(), [region])[0],
                check=lambda what, got: eq(what, got, img()[region]),
                bound=lambda: read_bound(sharded_units(self.sharded(), _grid_cells(shape, (cfg.inner,) * 2, region),
                                                       cfg.shard, cfg.inner, inner_nb), "zstd",
                                         (r1 - r0) * (c1 - c0) * 2, reps)))
        if "random-inner" in keys:
            sels = random_inner(cfg.rows, cfg.cols, cfg.inner, cfg.n_random)
            cells = [(s[0].start // cfg.inner, s[1].start // cfg.inner) for s in sels]

            def check_random(what, got):
                if len(got) != len(sels):
                    raise AssertionError(f"{what}: {len(got)} results for {len(sels)} reads")
                for k, (g, s) in enumerate(zip(got, sels)):
                    eq(f"{what} {k}", g, img()[s])
            add(Workload(
                "random-inner", 8, f"{cfg.n_random} random inner chunks, one a[sel] each", "shard", store="sharded",
                run=lambda e: lambda: e.part("shard").read_many(self.sharded(), sels), check=check_random,
                items=cfg.n_random, item_name="chunk",
                bound=lambda: read_bound(sharded_units(self.sharded(), cells, cfg.shard, cfg.inner, inner_nb),
                                         "zstd", cfg.n_random * inner_nb, reps)))
        n_s = f"{cfg.n_strings:,} strings, vlen-utf8 + zstd, chunks {cfg.string_chunk:,}"
        if "strings-write" in keys:
            add(Workload(
                "strings-write", 9, f"strings write, {n_s}", "strings", is_write=True, store="strings",
                run=lambda e: lambda path: e.part("strings").write(path, self.strings(), cfg.string_chunk),
                write_verify=lambda name, path: self.readback(name, path, self.strings_ref(), self.strings(),
                                                              bench_strings.check_strings),
                bound=lambda: strings_write_bound(self, reps)))
        if "strings-read" in keys:
            add(Workload(
                "strings-read", 9, "strings full read", "strings", store="strings",
                run=lambda e: lambda: e.part("strings").read(self.strings_ref()),
                check=lambda what, got: bench_strings.check_strings(what, got, self.strings()),
                bound=lambda: strings_read_bound(self, reps)))
        if "strings-optional-read" in keys:
            def read_optional(e):
                if e.name != "zarrpy":
                    raise NotApplicable(f"{e.name} has no zarrs.optional data type")
                return lambda: zarrpy.open_array(self.optional_strings_ref(), mode="r")[...]

            def check_optional(what, got):
                want = self.optional_strings()
                if not np.array_equal(np.ma.getmaskarray(got), want.mask):
                    raise AssertionError(f"{what}: the mask differs")
                bench_strings.check_strings(what, np.asarray(got.data)[~want.mask], want.data[~want.mask])
            add(Workload(
                "strings-optional-read", 9, "optional strings full read (1 in 10 missing; compare with strings full read)",
                "strings", run=read_optional, check=check_optional))
        if "oindex" in keys:
            rows = np.random.default_rng(SEED + 4).choice(cfg.rows, size=cfg.n_oindex, replace=False)
            cells = [(i, j) for i in sorted(set((rows // cfg.chunk).tolist())) for j in range(-(-cfg.cols // cfg.chunk))]
            add(Workload(
                "oindex", 10, f"{cfg.n_oindex:,} scattered rows, oindex (full-read store)", "idx", store="plain",
                run=lambda e: lambda: e.part("idx").oindex(self.plain(), rows),
                check=lambda what, got: eq(what, got, img()[rows]),
                bound=lambda: read_bound(regular_units(self.plain(), cells, chunk_nb), "zstd",
                                         cfg.n_oindex * cfg.cols * 2, reps)))
        if "small-arrays" in keys:
            def check_small(what, got):
                _, arrays = self.small()
                if len(got) != len(arrays):
                    raise AssertionError(f"{what}: {len(got)} arrays, expected {len(arrays)}")
                for k, (g, x) in enumerate(zip(got, arrays)):
                    eq(f"{what} array {k}", g, x)
            add(Workload(
                "small-arrays", 11, f"{cfg.n_small} small arrays ({cfg.small_len:,} float64), open + read each",
                "small", run=lambda e: lambda: e.part("small").read_all(self.small()[0]), check=check_small,
                items=cfg.n_small, item_name="array", store="small",
                bound=lambda: small_bound(self, reps)))
        s = cfg.indexing
        if "vindex" in keys:
            add(Workload(
                "vindex", 12, f"vindex {s.n_points:,} points of {s.image}², chunks {s.image_chunk}²", "idx",
                store="image",
                run=lambda e: lambda: e.part("idx").vindex(self.indexing().image, self.indexing().points),
                check=lambda what, got: eq(what, got, self.indexing().points_expected),
                bound=lambda: indexing_bound(self, "vindex", reps)))
        if "iter" in keys:
            add(Workload(
                "iter", 12, f"iter_rows over {s.n_arrays} arrays of {s.array_rows}×{s.table_cols}, "
                f"blocks of {s.block_rows}", "idx", store="arrays",
                run=lambda e: lambda: consume_iter(e.part("idx"), self.indexing()),
                check=lambda what, got: check_iter(what, got, self.indexing()),
                bound=lambda: indexing_bound(self, "iter", reps)))
        if "concat" in keys:
            add(Workload(
                "concat", 12, f"the same {s.n_arrays} arrays read whole + np.concatenate", "idx", store="arrays",
                run=lambda e: lambda: e.part("idx").concat(self.indexing().arrays),
                check=lambda what, got: eq(what, got, self.indexing().all_rows),
                bound=lambda: indexing_bound(self, "concat", reps)))
        return out

    def store_path(self, store: str | None) -> str | None:
        """The path the zarrs pipeline check opens for a workload's store."""
        return {None: None, "plain": self.plain, "blosc": self.blosc, "sharded": self.sharded,
                "strings": self.strings_ref, "small": lambda: self.small()[0][0],
                "image": lambda: self.indexing().image, "arrays": lambda: self.indexing().arrays[0]}[store]()


def consume_iter(impl, cases: bench_indexing.Cases):
    """Every block of ``iterate``; keeps a copy of each (an iterator may reuse its buffer)."""
    return [np.array(b) for b in impl.iterate(cases.arrays, cases.block_rows)]


def check_iter(what: str, got: list, cases: bench_indexing.Cases) -> None:
    if any(len(b) != cases.block_rows for b in got[:-1]):
        raise AssertionError(f"{what}: blocks of {[len(b) for b in got]} rows")
    check_equal(what, np.concatenate(got) if got else np.empty((0,)), cases.all_rows)


def strings_read_bound(run: Run, reps: int) -> dict[str, Any]:
    """``max(zstd decode_1 / cores, read) + fill_1``, fill being numpy's own
    copy of the same strings from a StringDType array into a new one (each
    element packed once: what any reader into StringDType must at least do;
    one thread, since the chunks of one result share its allocator's lock)."""
    import numcodecs
    import zstandard

    path, n, chunk = run.strings_ref(), run.cfg.n_strings, run.cfg.string_chunk
    cells = [(k,) for k in range(-(-n // chunk))]
    ranges, blobs = regular_units(path, cells, 1 << 30)
    raws = [zstandard.ZstdDecompressor().decompress(b) for b, _ in blobs]
    blobs = [(b, len(r)) for (b, _), r in zip(blobs, raws)]
    dec = decode_time(blobs, "zstd", reps)
    rd = read_ranges_time(ranges, reps)
    vl = numcodecs.VLenUTF8()
    sources = [vl.decode(r).astype(bench_strings.STRING_DTYPE) for r in raws]

    def fill():
        out = np.empty(n, dtype=bench_strings.STRING_DTYPE)
        for k, src in enumerate(sources):
            out[k * chunk:(k + 1) * chunk] = src
    parse = _median_time(fill, reps)
    return {"decode_1thread_s": dec, "read_par_s": rd, "parse_1thread_s": parse,
            "bound_s": max(dec / CORES, rd) + parse, "formula": "max(decode/cores, read) + StringDType fill"}


def strings_write_bound(run: Run, reps: int) -> dict[str, Any]:
    """``vlen copy_1 + zstd encode_1 / cores + write files`` (vlen copy: one
    memcpy of each chunk's vlen-utf8 bytes, the least a serialiser writes)."""
    import numcodecs

    data, chunk = run.strings(), run.cfg.string_chunk
    conf = _zstd_conf(run.strings_ref())
    comp = _zstd_compressor(conf)
    vl = numcodecs.VLenUTF8()
    pieces = [data[k:k + chunk] for k in range(0, len(data), chunk)]
    raws = [vl.encode(p.astype(object)) for p in pieces]
    venc = _median_time(lambda: [bytearray(r) for r in raws], reps)
    zenc = _median_time(lambda: [comp.compress(r) for r in raws], reps)
    files = [(f"c/{k}", comp.compress(r)) for k, r in enumerate(raws)]
    wr = write_files_time(files, run.work, reps, sync=run.cfg.sync)
    return {"encode_1thread_s": venc + zenc, "vlen_encode_1thread_s": venc, "write_files_par_s": wr,
            "bound_s": venc + zenc / CORES + wr, "formula": "memcpy of the vlen bytes + zstd encode/cores + write files"}


def small_bound(run: Run, reps: int) -> dict[str, Any]:
    """The minimal Python loop: for each array, read its one chunk file,
    zstd-decompress it, ``np.frombuffer`` (no metadata, one thread)."""
    import zstandard

    paths, arrays = run.small()
    d = zstandard.ZstdDecompressor()

    def loop():
        out = []
        for p in paths:
            with open(os.path.join(p, "c", "0"), "rb") as f:
                out.append(np.frombuffer(d.decompress(f.read()), np.float64))
        return out
    got = loop()
    for k, (g, x) in enumerate(zip(got, arrays)):
        check_equal(f"minimal loop array {k}", g, x)
    t = _median_time(loop, max(reps, 3))
    return {"minimal_loop_s": t, "bound_s": t, "formula": "minimal Python loop (open, zstd, frombuffer)"}


def indexing_bound(run: Run, op: str, reps: int) -> dict[str, Any]:
    cases, s = run.indexing(), run.cfg.indexing
    if op == "vindex":
        rows, cols = cases.points
        cells = sorted({(int(r) // s.image_chunk, int(c) // s.image_chunk) for r, c in zip(rows, cols)})
        units = regular_units(cases.image, cells, s.image_chunk ** 2 * 2)
        return read_bound(units, "zstd", cases.points_expected.nbytes, reps)
    ranges, blobs = [], []
    nchunks = -(-s.array_rows // s.array_chunk)
    for path in cases.arrays:
        r, b = regular_units(path, [(k, 0) for k in range(nchunks)], s.array_chunk * s.table_cols * 2)
        ranges += r
        blobs += b
    return read_bound((ranges, blobs), "zstd", cases.all_rows.nbytes, reps)


# -- timing -----------------------------------------------------------------------------
def _reason(exc: BaseException) -> str:
    if isinstance(exc, NotApplicable):
        return str(exc)
    if type(exc).__name__ == "DiscontiguousArrayError":
        return "DiscontiguousArrayError: the strict zarrs pipeline refuses unsorted index arrays"
    if type(exc).__name__ == "UnsupportedDataTypeError" and not str(exc).strip():
        return "UnsupportedDataTypeError: the zarrs pipeline does not support this data type"
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    msg = "" if msg.startswith("[") else msg  # a dump of values says nothing
    msg = msg if len(msg) <= 100 else msg[:97] + "..."
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def timed(fn: Callable[[], Any], sync: bool = True) -> tuple[float, Any]:
    """``H.timed`` (sync, collect, time), sync and collect optional."""
    if not sync:
        t0 = time.perf_counter()
        out = fn()
        return time.perf_counter() - t0, out
    return H.timed(fn)


def measure(run: Run, w: Workload, e: Engine, rnd: int, verify: bool) -> float:
    """Seconds of one timed call of ``w`` by ``e``; its result checked outside the timing."""
    call = w.run(e)
    if w.is_write:
        path = str(run.work / f"w-{w.key}-{e.name}-{rnd}.zarr")
        dt, _ = timed(lambda: call(path), run.cfg.sync)
        if verify:
            w.write_verify(e.name, path)
        shutil.rmtree(path, ignore_errors=True)
        return dt
    dt, got = timed(call, run.cfg.sync)
    w.check(f"{e.name} {w.key}", got)
    return dt


def run_workload(run: Run, w: Workload, engines: Sequence[Engine], repeats: int) -> dict[str, Any]:
    """Warm-up (checks; a peer that cannot run the workload becomes n/a),
    then ``repeats`` rounds in a rotating order, then the bound."""
    na: dict[str, str] = {}
    times: dict[str, list[float]] = {}
    checks = 0
    t0 = time.perf_counter()
    active = []
    for e in engines:
        if e.missing:
            na[e.name] = e.missing
            continue
        try:
            e.part(w.part)
            if w.store is not None:
                e.check_pipeline(run.store_path(w.store))
            measure(run, w, e, -1, verify=True)
            checks += 1
        except AssertionError:
            raise
        except Exception as exc:
            if e.name == "zarrpy":
                raise
            na[e.name] = _reason(exc)
            continue
        active.append(e)
        times[e.name] = []
    for rep in range(repeats):
        k = rep % len(active)
        for e in active[k:] + active[:k]:
            times[e.name].append(measure(run, w, e, rep, verify=False))
            checks += 0 if w.is_write else 1
    t_rounds = time.perf_counter() - t0
    bound = w.bound() if w.bound else None
    res = {"key": w.key, "number": w.number, "title": w.title, "times_s": times, "na": na, "checks": checks,
           "median_s": {n: statistics.median(ts) for n, ts in times.items()},
           "min_s": {n: min(ts) for n, ts in times.items()}, "max_s": {n: max(ts) for n, ts in times.items()},
           "bound": bound, "items": w.items, "item_name": w.item_name, "write": w.is_write}
    zp = res["median_s"]["zarrpy"]
    res["pct_of_bound"] = None if not bound else 100.0 * bound["bound_s"] / zp
    run.log(f"{w.number:>2} {w.key}: zarrpy {zp * 1e3:.1f} ms"
            + "".join(f", {n} {m * 1e3:.1f} ms" for n, m in res["median_s"].items() if n != "zarrpy")
            + (f", bound {bound['bound_s'] * 1e3:.1f} ms" if bound else "")
            + f"  [{t_rounds:.1f} s + bound {time.perf_counter() - t0 - t_rounds:.1f} s]")
    return res


def run_benchmark(cfg: Config, *, workloads: Sequence[str] | None = None, engines: Sequence[Engine] | None = None,
                  tmpdir: str | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run ``workloads`` (keys; all when None) with ``engines`` (``make_engines()``
    when None) at the sizes of ``cfg``; return the JSON-ready result."""
    engines = list(engines) if engines is not None else make_engines()
    if engines[0].name != "zarrpy":
        raise ValueError("the first engine must be zarrpy")
    keys = list(workloads) if workloads is not None else list(GROUPS)
    work = H.make_workdir("zarrpy-bench-run-", tmpdir)
    load_before = H.warn_if_loaded()
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    try:
        run = Run(cfg, work, log)
        log(f"{len(keys)} workloads, engines {', '.join(e.name for e in engines)}, {cfg.repeats} repeats; in {work}")
        results = [run_workload(run, w, engines, cfg.repeats) for w in run.workloads(keys)]
        pre, fresh = copy_times(cfg.memcpy_nbytes, 3)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "date": date, "machine": H.machine(load_before), "versions": H.versions(*PEER_DISTS),
        "zarrpy_commit": H.git_commit(), "zarrpy_dirty": zarrpy_dirty(), "engines": [e.name for e in engines],
        "config": {**{k: v for k, v in asdict(cfg).items() if k != "indexing"}, "indexing": asdict(cfg.indexing)},
        "memcpy_GBps": {"prefaulted": cfg.memcpy_nbytes / pre / 1e9, "fresh": cfg.memcpy_nbytes / fresh / 1e9},
        "cores": CORES, "seconds": time.perf_counter() - t0, "workloads": results,
    }


def zarrpy_dirty() -> bool | None:
    """Whether the checkout's zarrpy/ has uncommitted changes (then the commit
    alone does not say what was timed); None outside a git checkout."""
    import subprocess

    try:
        out = subprocess.run(["git", "-C", str(H.REPO_ROOT), "status", "--porcelain", "--", "zarrpy"],
                             capture_output=True, text=True, check=True).stdout
    except Exception:
        return None
    return bool(out.strip())


# -- reporting ------------------------------------------------------------------------------
def _ms(x: float | None) -> str:
    if x is None:
        return "—"
    ms = x * 1e3
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"


def _item(x: float) -> str:
    return f"{x * 1e6:.0f} µs" if x < 1e-3 else f"{x * 1e3:.2f} ms"


def format_table(result: dict[str, Any]) -> str:
    """The Markdown table of a run (see docs/performance.md for how to read it)."""
    names = result["engines"]
    fast_peers = [n for n in ("zarr-python+zarrs", "tensorstore") if n in names]
    short = {"zarr-python+zarrs": "zarrs", "tensorstore": "ts"}
    header = (["#", "workload"] + [f"{n} (ms)" if n == "zarrpy" else n for n in names]
              + ["vs best of zarrs/ts", "vs zarr-python", "bound (ms)", "% of bound"])
    rows = []
    for r in result["workloads"]:
        med = r["median_s"]
        cells = [str(r["number"]), r["title"]]
        for n in names:
            if n in med:
                cells.append(f"{_ms(med[n])} ({_ms(r['min_s'][n])}–{_ms(r['max_s'][n])})")
            else:
                cells.append("n/a")
        zp = med["zarrpy"]
        peers = [(med[n], n) for n in fast_peers if n in med]
        if peers:
            t, n = min(peers)
            cells.append(f"{t / zp:.2f} ({short[n]})")
        else:
            cells.append("n/a")
        cells.append(f"{med['zarr-python'] / zp:.2f}" if "zarr-python" in med else "n/a")
        b = r["bound"]
        cells.append(_ms(b["bound_s"]) if b else "—")
        cells.append(f"{r['pct_of_bound']:.0f} %" if r["pct_of_bound"] is not None else "—")
        rows.append(cells)
    right = set(range(2, len(header)))

    def line(cells):
        return "| " + " | ".join(cells) + " |"
    sep = "|" + "|".join("--:" if i in right else "---" for i in range(len(header))) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def format_notes(result: dict[str, Any]) -> str:
    """Per-item times, n/a reasons and the bound components, as Markdown."""
    lines = []
    for r in result["workloads"]:
        if r["items"]:
            per = ", ".join(f"{n} {_item(m / r['items'])}" for n, m in r["median_s"].items())
            if r["bound"]:
                label = "minimal Python loop" if "minimal_loop_s" in r["bound"] else "bound"
                per += f", {label} {_item(r['bound']['bound_s'] / r['items'])}"
            lines.append(f"* {r['number']} {r['key']}, per {r['item_name']}: {per}")
    reasons: dict[str, list[str]] = {}
    for r in result["workloads"]:
        for n, why in r["na"].items():
            reasons.setdefault(f"{n}: {why}", []).append(r["key"])
    for why, keys in reasons.items():
        lines.append(f"* n/a, {why} ({', '.join(keys)})")
    comp = ["", "Bound components (ms; one thread unless marked par, "
            f"which uses {result['cores']} threads):", "",
            "| # | workload | decode | encode | read par | copy fresh | parse | write files par | bound | formula |",
            "|---|---|--:|--:|--:|--:|--:|--:|--:|---|"]
    for r in result["workloads"]:
        b = r["bound"]
        if not b:
            continue
        g = lambda k: _ms(b.get(k)) if k in b else "—"  # noqa: E731
        parse = b.get("parse_1thread_s", b.get("vlen_encode_1thread_s", b.get("minimal_loop_s")))
        comp.append(f"| {r['number']} | {r['key']} | {g('decode_1thread_s')} | {g('encode_1thread_s')} | "
                    f"{g('read_par_s')} | {g('copy_fresh_s')} | {_ms(parse) if parse is not None else '—'} | "
                    f"{g('write_files_par_s')} | {_ms(b['bound_s'])} | {b['formula']} |")
    return "\n".join(lines + comp)


def format_header(result: dict[str, Any]) -> str:
    m, v = result["machine"], result["versions"]
    bw = result["memcpy_GBps"]
    cfg = result["config"]
    return "\n".join([
        f"Run of {result['date']} (UTC), zarrpy commit `{result['zarrpy_commit']}`"
        + (" plus uncommitted changes in zarrpy/" if result.get("zarrpy_dirty") else "") + ", "
        f"{cfg['repeats']} repeats, {result['seconds'] / 60:.1f} min in all.",
        f"Machine: {m['platform']}, {m['processor']}, {m['cpu_count']} CPUs; load average "
        f"{m['loadavg_before']} before, {m['loadavg_after']} after. "
        f"memcpy of {cfg['memcpy_nbytes'] / 2**20:.0f} MiB, one thread: {bw['prefaulted']:.1f} GB/s pre-faulted, {bw['fresh']:.1f} GB/s into "
        "a fresh np.empty.",
        "Versions: " + ", ".join(f"{k} {x}" for k, x in v.items()) + ".",
        "",
        "Cells: median ms (min–max). Ratios: peer median / zarrpy median (above 1: zarrpy is faster). "
        "% of bound: bound / zarrpy median × 100.",
    ])


def report_markdown(result: dict[str, Any]) -> str:
    return "\n\n".join([format_header(result), format_table(result), format_notes(result)])


def write_doc(markdown: str, path: Path = DOC_PATH) -> None:
    """Put ``markdown`` between the markers of ``path``."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{markdown}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="workloads: " + ", ".join(GROUPS) + "; aliases: strings, indexing, 1..12")
    p.add_argument("--quick", action="store_true", help="shrink every workload (well under a minute)")
    p.add_argument("--only", nargs="+", metavar="WORKLOAD", help="run only these workloads")
    p.add_argument("--engines", nargs="+", metavar="ENGINE",
                   help="peers besides zarrpy: zarr-python, zarrs (zarr-python+zarrs), tensorstore")
    p.add_argument("--repeats", type=int, help="timed rounds (default 5; --quick 2)")
    p.add_argument("--json", metavar="PATH", help="also save every time, median and bound as JSON")
    p.add_argument("--no-docs", action="store_true", help="do not write the table into docs/performance.md")
    p.add_argument("--tmpdir", help="parent directory of the temporary stores")
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the temporary stores are removed
    cfg = QUICK if args.quick else DEFAULT
    if args.repeats is not None:
        if args.repeats < 1:
            p.error("--repeats must be positive")
        cfg = replace(cfg, repeats=args.repeats)
    engines = make_engines(None if args.engines is None else [e for e in args.engines if e != "zarrpy"])
    result = run_benchmark(cfg, workloads=expand_only(args.only), engines=engines, tmpdir=args.tmpdir)
    md = report_markdown(result)
    print()
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"saved {args.json}")
    if not args.no_docs:
        write_doc(md)
        print(f"wrote {DOC_PATH.relative_to(H.REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
