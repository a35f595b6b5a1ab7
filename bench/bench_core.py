"""Time zarrpy against its peers on the same data, codecs and disk.

Peers: zarr-python, and, when importable, tensorstore and zarr-python with
the zarrs codec pipeline (zarrs-python). Each writes and reads a chunked 2-D
uint16 array (zstd level 3, no checksum) in a local temporary directory:

* ``write``  create the array and write all of it (fresh directory each time);
* ``read``   open the array and read all of it;
* ``region`` open the array and read an unaligned region that cuts chunks on
  every side (``[123:2345, 77:3001]`` for the default 4096 size, scaled
  for other sizes).

Reads use one shared store written by zarr-python, so every implementation
decodes the very same bytes. Runs are interleaved: each repetition runs every
implementation once, in a rotating order. One untimed warm-up round comes
first and also checks the results: every reader must return the expected
values, and what each writer stored must read back equal through zarr-python
and through zarrpy. Every timed read is compared to the expected values
again (outside the timing). The table shows the median time of each
implementation and ``peer / zarrpy`` (above 1: zarrpy is faster).

    PYENV_VERSION=3.12.1 python3 bench/bench_core.py            # default run
    PYENV_VERSION=3.12.1 python3 bench/bench_core.py --quick    # smoke run
    PYENV_VERSION=3.12.1 python3 bench/bench_core.py --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Callable

import numpy as np

# Run from a checkout without installing: make the repository root importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import zarrpy  # noqa: E402

DTYPE = np.dtype("uint16")
ZSTD_LEVEL = 3
ZSTD_JSON = {"name": "zstd", "configuration": {"level": ZSTD_LEVEL, "checksum": False}}
OPERATIONS = ("write", "read", "region")
SEED = 20240611


# -- data -------------------------------------------------------------------
def make_data(size: int, seed: int = SEED) -> np.ndarray:
    """A smooth field plus Gaussian noise, as uint16 (like a camera image):
    zstd level 3 shrinks it about 2x, so both compression and copying count."""
    rng = np.random.default_rng(seed)
    y = np.linspace(0.0, 6.0 * np.pi, size, dtype=np.float64)[:, None]
    x = np.linspace(0.0, 4.0 * np.pi, size, dtype=np.float64)[None, :]
    field = 2000.0 + 800.0 * np.sin(y) * np.cos(x) + 240.0 * np.sin(0.5 * x + 0.3 * y)
    field += rng.normal(0.0, 4.0, size=(size, size))
    return np.clip(np.rint(field), 0, 65535).astype(DTYPE)


def region_for(size: int) -> tuple[slice, slice]:
    """``[123:2345, 77:3001]`` at size 4096, scaled to other sizes."""
    def s(v: int) -> int:
        return max(0, min(size, round(v * size / 4096)))

    return (slice(s(123), max(s(123) + 1, s(2345))), slice(s(77), max(s(77) + 1, s(3001))))


# -- implementations ----------------------------------------------------------
class Impl:
    """One implementation under test: write a whole array, read all, read a region."""

    name = "?"

    def write(self, path: str, data: np.ndarray, chunk: int) -> None:
        raise NotImplementedError

    def read(self, path: str) -> np.ndarray:
        raise NotImplementedError

    def read_region(self, path: str, sel: tuple[slice, slice]) -> np.ndarray:
        raise NotImplementedError


class ZarrpyImpl(Impl):
    name = "zarrpy"

    def write(self, path, data, chunk):
        a = zarrpy.create_array(path, shape=data.shape, dtype=data.dtype, chunks=(chunk, chunk),
                                compressors=[ZSTD_JSON], fill_value=0, overwrite=True)
        a[...] = data

    def read(self, path):
        return zarrpy.open_array(path, mode="r")[...]

    def read_region(self, path, sel):
        return zarrpy.open_array(path, mode="r")[sel]


class ZarrPythonImpl(Impl):
    name = "zarr-python"

    def __init__(self) -> None:
        import zarr

        self.zarr = zarr

    def _config(self):
        return self.zarr.config.set({})

    def write(self, path, data, chunk):
        with self._config():
            a = self.zarr.create_array(path, shape=data.shape, dtype=data.dtype, chunks=(chunk, chunk),
                                       compressors=[ZSTD_JSON], fill_value=0, overwrite=True)
            a[...] = data

    def read(self, path):
        with self._config():
            return self.zarr.open_array(path, mode="r")[...]

    def read_region(self, path, sel):
        with self._config():
            return self.zarr.open_array(path, mode="r")[sel]

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

    def write(self, path, data, chunk):
        spec = self._spec(path)
        spec["metadata"] = {
            "shape": list(data.shape),
            "data_type": data.dtype.name,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk, chunk]}},
            "chunk_key_encoding": {"name": "default"},
            "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, ZSTD_JSON],
        }
        t = self.ts.open(spec, create=True, delete_existing=True).result()
        t.write(data).result()

    def read(self, path):
        return self.ts.open(self._spec(path), open=True, read=True).result().read().result()

    def read_region(self, path, sel):
        t = self.ts.open(self._spec(path), open=True, read=True).result()
        return t[sel].read().result()


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


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("numpy", "zarr", "numcodecs", "zstandard", "tensorstore", "zarrs"):
        try:
            out[dist] = importlib_metadata.version(dist)
        except importlib_metadata.PackageNotFoundError:
            pass
    return out


def git_commit() -> str | None:
    head = Path(__file__).resolve().parent.parent / ".git"
    try:
        import subprocess

        return subprocess.run(["git", "-C", str(head.parent), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return None


# -- checks -------------------------------------------------------------------
def check_equal(what: str, got: Any, expected: np.ndarray) -> None:
    got = np.asarray(got)
    if got.shape != expected.shape or got.dtype != expected.dtype:
        raise AssertionError(f"{what}: got {got.shape} {got.dtype}, expected {expected.shape} {expected.dtype}")
    if not np.array_equal(got, expected):
        raise AssertionError(f"{what}: {int(np.count_nonzero(got != expected))} values differ")


def stored_files(path: str) -> dict[str, int]:
    root = Path(path)
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


# -- the run ------------------------------------------------------------------
def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    # Flush dirty pages and finish pending deletes (and their discards) first,
    # so that no run pays for the files an earlier run wrote or removed.
    if hasattr(os, "sync"):
        os.sync()
    gc.collect()
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def run(args: argparse.Namespace) -> dict[str, Any]:
    size, chunk, repeats = args.size, args.chunk, args.repeats
    impls, skipped = available_impls(args.only)
    data = make_data(size)
    sel = region_for(size)
    expected_region = data[sel]
    work = Path(tempfile.mkdtemp(prefix="zarrpy-bench-", dir=args.tmpdir))
    load_before = _loadavg()
    if load_before and load_before[0] > 0.5 * (os.cpu_count() or 1):
        print(f"warning: load average {load_before[0]:.2f} on {os.cpu_count()} CPUs; "
              "other work on the machine skews the times (ratios less so: runs are interleaved)")
    print(f"array {size}x{size} uint16, chunks {chunk}x{chunk}, zstd level {ZSTD_LEVEL}; "
          f"region [{sel[0].start}:{sel[0].stop}, {sel[1].start}:{sel[1].stop}]; "
          f"{repeats} repeats; in {work}")
    if skipped:
        print("skipped: " + "; ".join(skipped))
    zarr_ref = next((i for i in impls if i.name == "zarr-python"), None) or ZarrPythonImpl()
    times: dict[str, dict[str, list[float]]] = {i.name: {op: [] for op in OPERATIONS} for i in impls}
    stored: dict[str, int] = {}
    try:
        # The shared read store, written by zarr-python (the reference format).
        ref = str(work / "reference.zarr")
        zarr_ref.write(ref, data, chunk)
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
                        dt, _ = timed(lambda: impl.write(path, data, chunk))
                        if verify:
                            files = stored_files(path)
                            chunk_keys = {k for k in files if k != "zarr.json"}
                            if chunk_keys != {k for k in ref_files if k != "zarr.json"}:
                                raise AssertionError(f"{impl.name} wrote other chunk keys than zarr-python")
                            stored[impl.name] = sum(files.values())
                            check_equal(f"{impl.name} write, read by zarr-python", zarr_ref.read(path), data)
                            check_equal(f"{impl.name} write, read by zarrpy", ZarrpyImpl().read(path), data)
                        shutil.rmtree(path)
                    elif op == "read":
                        dt, got = timed(lambda: impl.read(ref))
                        check_equal(f"{impl.name} read", got, data)
                    else:
                        dt, got = timed(lambda: impl.read_region(ref, sel))
                        check_equal(f"{impl.name} region read", got, expected_region)
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
        "settings": {"size": size, "chunk": chunk, "repeats": repeats, "dtype": DTYPE.name,
                     "codec": ZSTD_JSON, "region": [[sel[0].start, sel[0].stop], [sel[1].start, sel[1].stop]],
                     "seed": SEED, "raw_bytes": int(data.nbytes)},
        "skipped": skipped,
        "stored_bytes": stored,
        "times_s": times,
        "median_s": medians,
        "ratio_peer_over_zarrpy": ratios,
    }


def format_table(result: dict[str, Any]) -> str:
    med = result["median_s"]
    ratios = result["ratio_peer_over_zarrpy"]
    names = list(med)
    header = ["implementation"] + [f"{op} (s)" for op in OPERATIONS] + [f"{op} ratio" for op in OPERATIONS] + ["stored MB"]
    rows = []
    for name in names:
        row = [name] + [f"{med[name][op]:.3f}" for op in OPERATIONS]
        row += ["-" if name == "zarrpy" else f"{ratios[name][op]:.2f}" for op in OPERATIONS]
        nbytes = result["stored_bytes"].get(name)
        row.append(f"{nbytes / 1e6:.2f}" if nbytes else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) + " |"
    sep = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=4096, help="array side length (default 4096)")
    p.add_argument("--chunk", type=int, default=256, help="chunk side length (default 256)")
    p.add_argument("--repeats", type=int, default=9, help="timed repetitions (default 9)")
    p.add_argument("--quick", action="store_true", help="tiny smoke run: size 512, chunk 64, 2 repeats")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="peers to include besides zarrpy (zarr-python, tensorstore, zarr-python+zarrs)")
    p.add_argument("--tmpdir", default=None, help="parent directory of the temporary stores")
    p.add_argument("--json", metavar="PATH", help="also save the results as JSON")
    args = p.parse_args(argv)
    if args.quick:
        args.size, args.chunk, args.repeats = 512, 64, 2
    if args.size < 1 or args.chunk < 1 or args.repeats < 1:
        p.error("--size, --chunk and --repeats must be positive")
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
