"""Time zarrpy against its peers on a sharded array.

Peers: zarr-python, and, when importable, tensorstore and zarr-python with
the zarrs codec pipeline (zarrs-python). Each writes and reads a 2-D uint16
array (the data of ``bench_core.py``) stored with ``sharding_indexed``:
inner chunks 256 x 256 with ``bytes`` + ``zstd`` level 3 (no checksum), index
at the end with ``bytes`` + ``crc32c`` (what ``shards=`` gives in zarr-python
and zarrpy), shards 1024 x 1024 by default, in a local temporary directory:

* ``write``   create the array and write all of it (fresh directory each time);
* ``read``    open the array and read all of it;
* ``random``  open the array once and read ``--reads`` (300) single inner
  chunks, one ``a[r:r+256, c:c+256]`` each, at random (fixed seed; the same
  list for everybody). Every read goes through the shard index.

Reads use one shared store written by zarr-python, so every implementation
decodes the very same bytes. Runs are interleaved: each repetition runs every
implementation once, in a rotating order. One untimed warm-up round comes
first and also checks the results: every reader must return the expected
values, and what each writer stored must have zarr-python's shard keys and
read back equal through zarr-python and through zarrpy. Every timed read is
compared to the expected values again (outside the timing). The table shows
the median time of each implementation and ``peer / zarrpy`` (above 1: zarrpy
is faster).

``--profile`` times zarrpy's phases one after the other on one thread instead
(no peers): for whole shards, splitting into inner chunks, encoding, building,
storing, reading, index decoding, inner decoding and assembling; for single
inner chunks, opening, index reads, data reads, decoding and the array
layer around them.

    PYENV_VERSION=3.12.1 python3 bench/bench_sharding.py               # default run
    PYENV_VERSION=3.12.1 python3 bench/bench_sharding.py --shard 2048  # 4 big shards
    PYENV_VERSION=3.12.1 python3 bench/bench_sharding.py --quick       # smoke run
    PYENV_VERSION=3.12.1 python3 bench/bench_sharding.py --profile     # zarrpy's phases
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the repository root: zarrpy from the checkout
sys.path.insert(0, str(HERE))  # bench_core's helpers

import zarrpy  # noqa: E402
from bench_core import (  # noqa: E402
    ZSTD_JSON,
    _loadavg,
    check_equal,
    git_commit,
    make_data,
    stored_files,
    timed,
    versions,
)

OPERATIONS = ("write", "read", "random")
SEED = 20261201
LE = {"name": "bytes", "configuration": {"endian": "little"}}
INDEX_CODECS = [LE, {"name": "crc32c"}]


def sharding_json(chunk: int) -> dict[str, Any]:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [chunk, chunk], "codecs": [LE, ZSTD_JSON],
        "index_codecs": INDEX_CODECS, "index_location": "end"}}


def random_chunks(size: int, chunk: int, n: int, seed: int = SEED) -> list[tuple[slice, slice]]:
    """``n`` inner-chunk selections at random (with repeats), as slices."""
    grid = -(-size // chunk)
    rng = np.random.default_rng(seed)
    out = []
    for i, j in rng.integers(0, grid, size=(n, 2)).tolist():
        out.append((slice(i * chunk, min((i + 1) * chunk, size)), slice(j * chunk, min((j + 1) * chunk, size))))
    return out


# -- implementations ----------------------------------------------------------
class Impl:
    name = "?"

    def write(self, path: str, data: np.ndarray, chunk: int, shard: int) -> None:
        raise NotImplementedError

    def read(self, path: str) -> np.ndarray:
        raise NotImplementedError

    def read_many(self, path: str, sels: list[tuple[slice, slice]]) -> list[np.ndarray]:
        raise NotImplementedError


class ZarrpyImpl(Impl):
    name = "zarrpy"

    def write(self, path, data, chunk, shard):
        a = zarrpy.create_array(path, shape=data.shape, dtype=data.dtype, chunks=(chunk, chunk),
                                shards=(shard, shard), compressors=[ZSTD_JSON], fill_value=0, overwrite=True)
        a[...] = data

    def read(self, path):
        return zarrpy.open_array(path, mode="r")[...]

    def read_many(self, path, sels):
        a = zarrpy.open_array(path, mode="r")
        return [a[s] for s in sels]


class ZarrPythonImpl(Impl):
    name = "zarr-python"

    def __init__(self) -> None:
        import zarr

        self.zarr = zarr

    def _config(self):
        return self.zarr.config.set({})

    def write(self, path, data, chunk, shard):
        with self._config():
            a = self.zarr.create_array(path, shape=data.shape, dtype=data.dtype, chunks=(chunk, chunk),
                                       shards=(shard, shard), compressors=[ZSTD_JSON], fill_value=0,
                                       overwrite=True)
            a[...] = data

    def read(self, path):
        with self._config():
            return self.zarr.open_array(path, mode="r")[...]

    def read_many(self, path, sels):
        with self._config():
            a = self.zarr.open_array(path, mode="r")
            return [a[s] for s in sels]

    def pipeline_name(self, path: str) -> str:
        with self._config():
            return type(self.zarr.open_array(path, mode="r")._async_array.codec_pipeline).__name__


class ZarrsImpl(ZarrPythonImpl):
    """zarr-python with the zarrs (Rust) codec pipeline; strict, so no silent fallback."""

    name = "zarr-python+zarrs"

    def __init__(self) -> None:
        super().__init__()
        import zarrs  # noqa: F401  (fails here when not installed)

    def _config(self):
        return self.zarr.config.set(
            {"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "codec_pipeline.strict": True}
        )


class TensorstoreImpl(Impl):
    name = "tensorstore"

    def __init__(self) -> None:
        import tensorstore

        self.ts = tensorstore

    @staticmethod
    def _spec(path: str) -> dict[str, Any]:
        return {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}

    def write(self, path, data, chunk, shard):
        spec = self._spec(path)
        spec["metadata"] = {
            "shape": list(data.shape),
            "data_type": data.dtype.name,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [shard, shard]}},
            "chunk_key_encoding": {"name": "default"},
            "fill_value": 0,
            "codecs": [sharding_json(chunk)],
        }
        t = self.ts.open(spec, create=True, delete_existing=True).result()
        t.write(data).result()

    def read(self, path):
        return self.ts.open(self._spec(path), open=True, read=True).result().read().result()

    def read_many(self, path, sels):
        t = self.ts.open(self._spec(path), open=True, read=True).result()
        return [t[s].read().result() for s in sels]


def available_impls(wanted: list[str] | None) -> tuple[list[Impl], list[str]]:
    impls: list[Impl] = [ZarrpyImpl()]
    skipped = []
    for cls in (ZarrPythonImpl, TensorstoreImpl, ZarrsImpl):
        if wanted and cls.name not in wanted:
            continue
        try:
            impls.append(cls())
        except ImportError as exc:
            skipped.append(f"{cls.name} ({exc})")
    return impls, skipped


# -- the run ------------------------------------------------------------------
def _check_sharded(path: str, chunk: int, shard: int) -> None:
    meta = json.loads((Path(path) / "zarr.json").read_text())
    (codec,) = meta["codecs"]
    if codec["name"] != "sharding_indexed" or meta["chunk_grid"]["configuration"]["chunk_shape"] != [shard, shard]:
        raise AssertionError(f"{path}: not sharded as asked: {meta['codecs']}")
    if codec["configuration"]["chunk_shape"] != [chunk, chunk]:
        raise AssertionError(f"{path}: inner chunks {codec['configuration']['chunk_shape']}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    size, chunk, shard, repeats = args.size, args.chunk, args.shard, args.repeats
    impls, skipped = available_impls(args.only)
    data = make_data(size)
    sels = random_chunks(size, chunk, args.reads)
    expected_random = [data[s] for s in sels]
    work = Path(tempfile.mkdtemp(prefix="zarrpy-bench-sharding-", dir=args.tmpdir))
    load_before = _loadavg()
    if load_before and load_before[0] > 0.5 * (os.cpu_count() or 1):
        print(f"warning: load average {load_before[0]:.2f} on {os.cpu_count()} CPUs; "
              "other work on the machine skews the times (ratios less so: runs are interleaved)")
    print(f"array {size}x{size} uint16, inner chunks {chunk}x{chunk}, shards {shard}x{shard}, "
          f"zstd level {ZSTD_JSON['configuration']['level']}; {args.reads} random inner-chunk reads; "
          f"{repeats} repeats; in {work}")
    if skipped:
        print("skipped: " + "; ".join(skipped))
    zarr_ref = next((i for i in impls if i.name == "zarr-python"), None) or ZarrPythonImpl()
    times: dict[str, dict[str, list[float]]] = {i.name: {op: [] for op in OPERATIONS} for i in impls}
    stored: dict[str, int] = {}
    try:
        ref = str(work / "reference.zarr")
        zarr_ref.write(ref, data, chunk, shard)
        _check_sharded(ref, chunk, shard)
        ref_files = stored_files(ref)
        print(f"reference store: {len(ref_files)} files, {sum(ref_files.values()) / 1e6:.1f} MB "
              f"(raw {data.nbytes / 1e6:.1f} MB)")
        for impl in impls:
            if isinstance(impl, ZarrsImpl):
                pipe = impl.pipeline_name(ref)
                if "Zarrs" not in pipe:
                    raise AssertionError(f"zarrs pipeline not in use (got {pipe})")

        def one_round(rnd: int, order: list[Impl], verify: bool) -> None:
            for op in OPERATIONS:
                for impl in order:
                    if op == "write":
                        path = str(work / f"w-{impl.name}-{rnd}.zarr")
                        dt, _ = timed(lambda: impl.write(path, data, chunk, shard))
                        if verify:
                            _check_sharded(path, chunk, shard)
                            files = stored_files(path)
                            if {k for k in files if k != "zarr.json"} != {k for k in ref_files if k != "zarr.json"}:
                                raise AssertionError(f"{impl.name} wrote other shard keys than zarr-python")
                            stored[impl.name] = sum(files.values())
                            check_equal(f"{impl.name} write, read by zarr-python", zarr_ref.read(path), data)
                            check_equal(f"{impl.name} write, read by zarrpy", ZarrpyImpl().read(path), data)
                        shutil.rmtree(path)
                    elif op == "read":
                        dt, got = timed(lambda: impl.read(ref))
                        check_equal(f"{impl.name} read", got, data)
                    else:
                        dt, got = timed(lambda: impl.read_many(ref, sels))
                        if len(got) != len(sels):
                            raise AssertionError(f"{impl.name}: {len(got)} results for {len(sels)} reads")
                        for i, (g, e) in enumerate(zip(got, expected_random)):
                            check_equal(f"{impl.name} random read {i}", g, e)
                    got = None  # keep no result alive into the next timing
                    if not verify:
                        times[impl.name][op].append(dt)

        t_start = time.perf_counter()
        one_round(-1, impls, verify=True)
        print(f"warm-up and verification done ({time.perf_counter() - t_start:.1f} s)")
        for rep in range(repeats):
            k = rep % len(impls)
            one_round(rep, impls[k:] + impls[:k], verify=False)
            print(f"  repetition {rep + 1}/{repeats} done", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    medians = {name: {op: statistics.median(ts) for op, ts in per.items()} for name, per in times.items()}
    ratios = {
        name: {op: medians[name][op] / medians["zarrpy"][op] for op in OPERATIONS}
        for name in medians if name != "zarrpy"
    }
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count(), "loadavg_before": load_before, "loadavg_after": _loadavg()},
        "versions": versions(),
        "zarrpy_commit": git_commit(),
        "settings": {"size": size, "chunk": chunk, "shard": shard, "repeats": repeats, "reads": args.reads,
                     "dtype": data.dtype.name, "codecs": sharding_json(chunk), "seed": SEED,
                     "raw_bytes": int(data.nbytes)},
        "skipped": skipped,
        "stored_bytes": stored,
        "times_s": times,
        "median_s": medians,
        "ratio_peer_over_zarrpy": ratios,
    }


def format_table(result: dict[str, Any]) -> str:
    med = result["median_s"]
    ratios = result["ratio_peer_over_zarrpy"]
    header = (["implementation"] + [f"{op} (s)" for op in OPERATIONS] + [f"{op} ratio" for op in OPERATIONS]
              + ["stored MB"])
    rows = []
    for name in med:
        row = [name] + [f"{med[name][op]:.3f}" for op in OPERATIONS]
        row += ["-" if name == "zarrpy" else f"{ratios[name][op]:.2f}" for op in OPERATIONS]
        nbytes = result["stored_bytes"].get(name)
        row.append(f"{nbytes / 1e6:.2f}" if nbytes else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r):
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) + " |"

    sep = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


# -- profile: zarrpy's phases, timed one by one ---------------------------------
def profile(args: argparse.Namespace) -> None:
    """Time zarrpy's pieces separately on one thread (medians of --repeats)."""
    from zarrpy.array_bytes import ArrayBytes
    from zarrpy.byte_range import RangeRequest, SuffixRequest
    from zarrpy.codecs.abc import ChunkSpec
    from zarrpy.stores.local import LocalStore

    size, chunk, shard = args.size, args.chunk, args.shard
    data = make_data(size)
    sels = random_chunks(size, chunk, args.reads)
    work = Path(tempfile.mkdtemp(prefix="zarrpy-profile-sharding-", dir=args.tmpdir))
    phases: dict[str, list[float]] = {}

    def clock(name: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        out = fn()
        phases.setdefault(name, []).append(time.perf_counter() - t0)
        return out

    try:
        path = str(work / "p.zarr")
        ZarrPythonImpl().write(path, data, chunk, shard)  # the read side decodes zarr-python's bytes
        a = zarrpy.open_array(path, mode="r")
        (codec,) = a.codecs
        spec = ChunkSpec(a.shards, a.metadata.data_type, a.metadata.fill_value)
        layout = codec.layout(spec)
        store = LocalStore(path)
        grid = size // shard
        shard_keys = [(i, j, f"c/{i}/{j}") for i in range(grid) for j in range(grid)]
        for rep in range(args.repeats):
            # -- whole-array write, piece by piece (one thread)
            out_dir = work / f"w{rep}"
            wstore = LocalStore(str(out_dir))
            for i, j, key in shard_keys:
                block = data[i * shard:(i + 1) * shard, j * shard:(j + 1) * shard]
                ab = ArrayBytes.from_array(np.ascontiguousarray(block))
                pieces = clock("write: split into inner chunks (ShardLayout.split)", lambda: layout.split(ab))
                enc = clock("write: encode inner chunks (bytes + zstd)",
                            lambda: [(p, layout.encode_inner(x)) for p, x in pieces])
                raw = clock("write: build shard (index + join)", lambda: layout.build(enc))
                clock("write: store.set", lambda: wstore.set(key, raw))
            shutil.rmtree(out_dir, ignore_errors=True)
            # -- whole-array read, piece by piece (one thread)
            for i, j, key in shard_keys:
                raw = clock("read: store.get (whole shard)", lambda: store.get(key))
                index = clock("read: decode + check index", lambda: layout.read_index(raw))
                view = memoryview(raw)

                def decode_all():
                    out = {}
                    for pos in np.flatnonzero(index.present()).tolist():
                        off, n = index.get(pos)
                        out[pos] = layout.decode_inner(pos, bytes(view[off:off + n]))
                    return out

                dec = clock("read: decode inner chunks (zstd + bytes)", decode_all)
                clock("read: assemble shard (ShardLayout.assemble)", lambda: layout.assemble(dec))
            clock("read: whole a[...] through the array", lambda: a[...])
            clock("write: whole a[...] = data through the array",
                  lambda: zarrpy.create_array(str(work / f"x{rep}"), shape=data.shape, dtype=data.dtype,
                                              chunks=(chunk, chunk), shards=(shard, shard),
                                              compressors=[ZSTD_JSON], fill_value=0).__setitem__(Ellipsis, data))
            shutil.rmtree(work / f"x{rep}", ignore_errors=True)
            # -- random single inner chunks, piece by piece
            k = layout.index_nbytes
            t_index = t_data = t_decode = 0.0
            for r, c in sels:
                key = f"c/{r.start // shard}/{c.start // shard}"
                t0 = time.perf_counter()
                enc_index = store.get(key, SuffixRequest(k))
                index = layout.decode_index(enc_index, None, None)
                t1 = time.perf_counter()
                pos = layout.position(((r.start % shard) // chunk, (c.start % shard) // chunk))
                off, n = index.get(pos)
                (raw,) = store.get_partial_values([(key, RangeRequest(off, off + n))])
                t2 = time.perf_counter()
                layout.decode_inner(pos, raw)
                t3 = time.perf_counter()
                t_index += t1 - t0
                t_data += t2 - t1
                t_decode += t3 - t2
            phases.setdefault("random: index read + decode", []).append(t_index)
            phases.setdefault("random: inner chunk range read", []).append(t_data)
            phases.setdefault("random: inner chunk decode", []).append(t_decode)
            arr = clock("random: open_array", lambda: zarrpy.open_array(path, mode="r"))
            clock(f"random: {len(sels)} x a[sel] through the array", lambda: [arr[s] for s in sels])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"zarrpy phases, {size}x{size} uint16, inner {chunk}, shards {shard}, one thread unless "
          f"'through the array'; medians of {args.repeats} (ms)")
    width = max(len(k) for k in phases)
    for name, ts in phases.items():
        total = statistics.median(_sum_per_rep(ts, args.repeats))
        print(f"  {name.ljust(width)}  {total * 1e3:9.1f}")


def _sum_per_rep(ts: list[float], repeats: int) -> list[float]:
    """Per-repetition totals of a phase timed once per shard (or once per repetition)."""
    per = len(ts) // repeats
    return [sum(ts[i * per:(i + 1) * per]) for i in range(repeats)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=4096, help="array side length (default 4096)")
    p.add_argument("--chunk", type=int, default=256, help="inner chunk side length (default 256)")
    p.add_argument("--shard", type=int, default=1024, help="shard side length (default 1024)")
    p.add_argument("--reads", type=int, default=300, help="random inner-chunk reads (default 300)")
    p.add_argument("--repeats", type=int, default=9, help="timed repetitions (default 9)")
    p.add_argument("--quick", action="store_true", help="tiny smoke run: size 512, chunk 64, shard 128, 2 repeats")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="peers to include besides zarrpy (zarr-python, tensorstore, zarr-python+zarrs)")
    p.add_argument("--profile", action="store_true", help="time zarrpy's phases instead of comparing")
    p.add_argument("--tmpdir", default=None, help="parent directory of the temporary stores")
    p.add_argument("--json", metavar="PATH", help="also save the results as JSON")
    args = p.parse_args(argv)
    if args.quick:
        args.size, args.chunk, args.shard, args.repeats, args.reads = 512, 64, 128, 2, 50
    if min(args.size, args.chunk, args.shard, args.repeats, args.reads) < 1:
        p.error("--size, --chunk, --shard, --reads and --repeats must be positive")
    if args.shard % args.chunk or args.size % args.shard:
        p.error("--shard must be a multiple of --chunk and --size a multiple of --shard")
    if args.profile:
        profile(args)
        return 0
    result = run(args)
    print()
    print(format_table(result))
    print("\nmedian seconds; ratio = peer median / zarrpy median (above 1: zarrpy is faster)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"saved {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
