"""The harness the benchmark scripts share (``bench_core.py``,
``bench_sharding.py``, ``bench_strings.py``; ``vlen_efficiency.py`` uses
``versions``).

Each script keeps what it measures (its data, its implementations' write and
read calls, its checks); this module holds how it is measured and reported,
so the three comparisons time, check and print the same way:

* peers: zarr-python, zarr-python with the strict zarrs codec pipeline, and
  tensorstore, as bases the scripts complete with their own write/read;
* the run: a temporary work directory, a load-average warning, one untimed
  warm-up round that verifies, then interleaved repetitions in a rotating
  order, each timing taken after ``os.sync()`` and ``gc.collect()``;
* the result: medians, ``peer / zarrpy`` ratios, machine, versions and
  commit as one JSON-ready dict, printed as a Markdown table;
* ``--profile`` runs: a clock that collects phase times by name.

Importing this module puts the repository root first on ``sys.path``, so
every script times the checkout's zarrpy without installing it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

ZSTD_LEVEL = 3
ZSTD_JSON = {"name": "zstd", "configuration": {"level": ZSTD_LEVEL, "checksum": False}}
"""zstd as bench_core and bench_sharding configure it for every implementation."""

SEED = 20240611
IMAGE_DTYPE = np.dtype("uint16")
RATIO_LEGEND = "median seconds; ratio = peer median / zarrpy median (above 1: zarrpy is faster)"


# -- data -------------------------------------------------------------------
def make_data(size: int, seed: int = SEED) -> np.ndarray:
    """A ``size`` x ``size`` smooth field plus Gaussian noise, as uint16 (like
    a camera image): zstd level 3 shrinks it about 2x, so both compression
    and copying count. bench_core and bench_sharding time the same data."""
    rng = np.random.default_rng(seed)
    y = np.linspace(0.0, 6.0 * np.pi, size, dtype=np.float64)[:, None]
    x = np.linspace(0.0, 4.0 * np.pi, size, dtype=np.float64)[None, :]
    field = 2000.0 + 800.0 * np.sin(y) * np.cos(x) + 240.0 * np.sin(0.5 * x + 0.3 * y)
    field += rng.normal(0.0, 4.0, size=(size, size))
    return np.clip(np.rint(field), 0, 65535).astype(IMAGE_DTYPE)


# -- peers ------------------------------------------------------------------
class ZarrPythonPeer:
    """zarr-python with its default settings. A script subclasses it and adds
    its own ``write`` and partial reads, each inside ``with self._config()``
    so that subclasses (the zarrs pipeline) can change the configuration."""

    name = "zarr-python"

    def __init__(self) -> None:
        import zarr

        self.zarr = zarr

    def _config(self):
        """The zarr-python configuration every call of this peer runs under."""
        return self.zarr.config.set({})

    def read(self, path: str) -> np.ndarray:
        """Open the array at ``path`` and read all of it."""
        with self._config():
            return self.zarr.open_array(path, mode="r")[...]

    def pipeline_name(self, path: str) -> str:
        """The class name of the codec pipeline zarr-python uses for ``path``."""
        with self._config():
            return type(self.zarr.open_array(path, mode="r")._async_array.codec_pipeline).__name__


class ZarrsPipeline:
    """Mixin that turns a ``ZarrPythonPeer`` subclass into zarr-python with the
    zarrs (Rust) codec pipeline; strict, so that zarr-python cannot silently
    fall back to its own pipeline. Use as ``class X(ZarrsPipeline, MyZarrPython)``.
    Construction raises ImportError when zarrs is not installed."""

    name = "zarr-python+zarrs"

    def __init__(self) -> None:
        super().__init__()
        import zarrs  # noqa: F401  (fails here when not installed)

    def _config(self):
        return self.zarr.config.set(
            {"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "codec_pipeline.strict": True}
        )


class TensorstorePeer:
    """tensorstore's ``zarr3`` driver on a local directory. A script subclasses
    it and adds ``write`` (with its own metadata, via ``_create``) and its
    partial reads (via ``_open``)."""

    name = "tensorstore"

    def __init__(self) -> None:
        import tensorstore

        self.ts = tensorstore

    @staticmethod
    def _spec(path: str) -> dict[str, Any]:
        return {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}

    def _create(self, path: str, metadata: dict[str, Any], data: np.ndarray) -> None:
        """Create the array at ``path`` (replacing any) with ``metadata`` and write ``data``."""
        spec = self._spec(path)
        spec["metadata"] = metadata
        t = self.ts.open(spec, create=True, delete_existing=True).result()
        t.write(data).result()

    def _open(self, path: str):
        """Open the existing array at ``path`` for reading."""
        return self.ts.open(self._spec(path), open=True, read=True).result()

    def read(self, path: str) -> np.ndarray:
        """Open the array at ``path`` and read all of it."""
        return self._open(path).read().result()


def available_impls(first: Any, peer_classes: Iterable[type], wanted: Sequence[str] | None) -> tuple[list, list[str]]:
    """``first`` (zarrpy) followed by every peer in ``peer_classes`` that is
    wanted (all when ``wanted`` is empty) and importable; the rest are
    returned as "name (reason)" so the run can say what it skipped."""
    impls = [first]
    skipped = []
    for cls in peer_classes:
        if wanted and cls.name not in wanted:
            continue
        try:
            impls.append(cls())
        except ImportError as exc:
            skipped.append(f"{cls.name} ({exc})")
    return impls, skipped


def check_zarrs_in_use(impls: Iterable[Any], path: str) -> None:
    """Raise unless every zarrs peer really decodes ``path`` with the zarrs
    pipeline, so its times can never be zarr-python's own pipeline's."""
    for impl in impls:
        if isinstance(impl, ZarrsPipeline):
            pipe = impl.pipeline_name(path)
            if "Zarrs" not in pipe:
                raise AssertionError(f"zarrs pipeline not in use (got {pipe})")


# -- environment --------------------------------------------------------------
def versions(*dists: str) -> dict[str, str]:
    """Python's version and the installed version of each of ``dists`` (in
    that order; missing ones left out), recorded with every result."""
    out = {"python": platform.python_version()}
    for dist in dists:
        try:
            out[dist] = importlib_metadata.version(dist)
        except importlib_metadata.PackageNotFoundError:
            pass
    return out


def git_commit() -> str | None:
    """The checkout's short commit, so a result says which zarrpy it timed
    (None outside a git checkout)."""
    try:
        return subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return None


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def warn_if_loaded() -> list[float] | None:
    """Print a warning when the machine is busy (load above half the CPUs),
    since other work skews the times; return the load average for the record."""
    load = loadavg()
    if load and load[0] > 0.5 * (os.cpu_count() or 1):
        print(f"warning: load average {load[0]:.2f} on {os.cpu_count()} CPUs; "
              "other work on the machine skews the times (ratios less so: runs are interleaved)")
    return load


def machine(load_before: list[float] | None) -> dict[str, Any]:
    """Where the run happened: platform, CPU count, load before and now."""
    return {"platform": platform.platform(), "processor": platform.machine(),
            "cpu_count": os.cpu_count(), "loadavg_before": load_before, "loadavg_after": loadavg()}


# -- stores and checks --------------------------------------------------------
def make_workdir(prefix: str, parent: str | None) -> Path:
    """A fresh temporary directory for the stores (under ``parent`` when given)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))


def reference_peer(impls: Iterable[Any], fallback: type) -> Any:
    """The zarr-python peer among ``impls`` (else a new ``fallback()``): it
    writes the shared read store and reads back what every writer stored."""
    return next((i for i in impls if i.name == "zarr-python"), None) or fallback()


def stored_files(path: str) -> dict[str, int]:
    """Every file below ``path`` (relative name) with its size in bytes."""
    root = Path(path)
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def chunk_keys(files: Iterable[str]) -> set[str]:
    """The stored keys other than the array metadata ``zarr.json``."""
    return {k for k in files if k != "zarr.json"}


def check_equal(what: str, got: Any, expected: np.ndarray) -> None:
    """Raise unless ``got`` has ``expected``'s shape, dtype and values."""
    got = np.asarray(got)
    if got.shape != expected.shape or got.dtype != expected.dtype:
        raise AssertionError(f"{what}: got {got.shape} {got.dtype}, expected {expected.shape} {expected.dtype}")
    if not np.array_equal(got, expected):
        raise AssertionError(f"{what}: {int(np.count_nonzero(got != expected))} values differ")


# -- timing -------------------------------------------------------------------
def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Wall-clock seconds of ``fn()`` and its result."""
    # Flush dirty pages and finish pending deletes (and their discards) first,
    # so that no run pays for the files an earlier run wrote or removed.
    if hasattr(os, "sync"):
        os.sync()
    gc.collect()
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def run_rounds(impls: Sequence[Any], operations: Sequence[str], repeats: int,
               measure: Callable[[str, Any, int, bool], float]) -> dict[str, dict[str, list[float]]]:
    """Run ``measure(op, impl, round, verify)`` (which returns seconds) for
    every operation and implementation: first one untimed warm-up round
    (round -1, ``verify=True``: the place for the expensive checks), then
    ``repeats`` timed rounds. Within a round each operation runs for every
    implementation before the next operation starts, and the implementation
    order rotates from round to round, so that no implementation always runs
    first or right after another's write. Returns every time, by name and
    operation."""
    times: dict[str, dict[str, list[float]]] = {i.name: {op: [] for op in operations} for i in impls}

    def one_round(rnd: int, order: Sequence[Any], verify: bool) -> None:
        for op in operations:
            for impl in order:
                dt = measure(op, impl, rnd, verify)
                if not verify:
                    times[impl.name][op].append(dt)

    t_start = time.perf_counter()
    one_round(-1, impls, verify=True)
    print(f"warm-up and verification done ({time.perf_counter() - t_start:.1f} s)")
    for rep in range(repeats):
        k = rep % len(impls)
        one_round(rep, list(impls[k:]) + list(impls[:k]), verify=False)
        print(f"  repetition {rep + 1}/{repeats} done", flush=True)
    return times


class Comparison:
    """The state of one comparison run, used as ``with Comparison(...) as c``:
    a fresh work directory (removed at the end, also on failure), the load
    average when it started (warned about when high), the shared reference
    store and the bytes each writer stored."""

    def __init__(self, prefix: str, parent: str | None) -> None:
        self.work = make_workdir(prefix, parent)
        self.load_before = warn_if_loaded()
        self.ref_keys: set[str] = set()
        self.stored: dict[str, int] = {}

    def __enter__(self) -> "Comparison":
        return self

    def __exit__(self, *exc: Any) -> None:
        shutil.rmtree(self.work, ignore_errors=True)

    def reference(self, write: Callable[[str], Any], raw_nbytes: int | None = None, digits: int = 1) -> str:
        """Write the shared read store with ``write(path)`` (zarr-python: the
        reference format), so every reader decodes the very same bytes;
        print what it holds and return its path."""
        ref = str(self.work / "reference.zarr")
        write(ref)
        files = stored_files(ref)
        self.ref_keys = chunk_keys(files)
        line = f"reference store: {len(files)} files, {sum(files.values()) / 1e6:.{digits}f} MB"
        print(line + (f" (raw {raw_nbytes / 1e6:.1f} MB)" if raw_nbytes is not None else ""))
        return ref

    def timed_write(self, impl: Any, rnd: int, write: Callable[[str], Any],
                    verify: Callable[[str], Any] | None = None) -> float:
        """Time ``write(path)`` into a fresh directory for ``impl`` and round
        ``rnd``, run ``verify(path)`` (untimed) when given, then delete the
        directory so the next write starts from nothing."""
        path = str(self.work / f"w-{impl.name}-{rnd}.zarr")
        dt, _ = timed(lambda: write(path))
        if verify is not None:
            verify(path)
        shutil.rmtree(path)
        return dt

    def check_written(self, name: str, path: str, readers: Sequence[tuple[str, Callable[[str], Any]]],
                      expected: np.ndarray, check: Callable[[str, Any, np.ndarray], None], what: str = "chunk") -> None:
        """Verify what implementation ``name`` wrote at ``path``: the same
        keys as the reference store, and equal to ``expected`` when read by
        each of ``readers`` (label, read function). Keeps the stored bytes,
        so the table shows a writer that compressed differently."""
        files = stored_files(path)
        if chunk_keys(files) != self.ref_keys:
            raise AssertionError(f"{name} wrote other {what} keys than zarr-python")
        self.stored[name] = sum(files.values())
        for reader, read in readers:
            check(f"{name} write, read by {reader}", read(path), expected)

    @staticmethod
    def timed_read(read: Callable[[], Any], check: Callable[[Any], None]) -> float:
        """Time ``read()``, then ``check`` its result outside the timing."""
        dt, got = timed(read)
        check(got)
        return dt

    def record(self, times: dict[str, dict[str, list[float]]], operations: Sequence[str], *,
               versions: dict[str, str], settings: dict[str, Any], skipped: list[str] | None = None) -> dict[str, Any]:
        """The JSON-ready result (see ``result_record``) of this run."""
        return result_record(times, operations, load_before=self.load_before, versions=versions,
                             settings=settings, stored=self.stored, skipped=skipped)


# -- results ------------------------------------------------------------------
def result_record(times: dict[str, dict[str, list[float]]], operations: Sequence[str], *,
                  load_before: list[float] | None, versions: dict[str, str], settings: dict[str, Any],
                  stored: dict[str, int], skipped: list[str] | None = None) -> dict[str, Any]:
    """The JSON-ready result of a run: date, machine, versions, commit,
    settings, what was skipped (when the script has optional peers), stored
    bytes, every time, the medians and the ``peer / zarrpy`` ratios."""
    medians = {name: {op: statistics.median(ts) for op, ts in per.items()} for name, per in times.items()}
    ratios = {
        name: {op: medians[name][op] / medians["zarrpy"][op] for op in operations}
        for name in medians if name != "zarrpy"
    }
    out: dict[str, Any] = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(load_before),
        "versions": versions,
        "zarrpy_commit": git_commit(),
        "settings": settings,
    }
    if skipped is not None:
        out["skipped"] = skipped
    out.update({"stored_bytes": stored, "times_s": times, "median_s": medians, "ratio_peer_over_zarrpy": ratios})
    return out


def format_table(result: dict[str, Any], operations: Sequence[str]) -> str:
    """The result as a Markdown table: median seconds per operation, then
    the ratios (``-`` for zarrpy itself), then the stored MB per writer."""
    med = result["median_s"]
    ratios = result["ratio_peer_over_zarrpy"]
    header = (["implementation"] + [f"{op} (s)" for op in operations] + [f"{op} ratio" for op in operations]
              + ["stored MB"])
    rows = []
    for name in med:
        row = [name] + [f"{med[name][op]:.3f}" for op in operations]
        row += ["-" if name == "zarrpy" else f"{ratios[name][op]:.2f}" for op in operations]
        nbytes = result["stored_bytes"].get(name)
        row.append(f"{nbytes / 1e6:.2f}" if nbytes else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) + " |"

    sep = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def report(result: dict[str, Any], operations: Sequence[str], json_path: str | None) -> None:
    """Print the table and its legend; also save ``result`` as JSON when asked."""
    print()
    print(format_table(result, operations))
    print("\n" + RATIO_LEGEND)
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=2) + "\n")
        print(f"saved {json_path}")


def run_and_report(args: argparse.Namespace, run: Callable[[argparse.Namespace], dict[str, Any]],
                   operations: Sequence[str], profile: Callable[[argparse.Namespace], None] | None = None) -> int:
    """What a script's ``main`` does once its options are checked: with
    ``--profile`` only ``profile(args)``; otherwise the comparison ``run(args)``,
    reported. Returns the exit status."""
    if profile is not None and args.profile:
        profile(args)
    else:
        report(run(args), operations, args.json)
    return 0


# -- command line ---------------------------------------------------------------
def add_only_option(p: argparse.ArgumentParser) -> None:
    """``--only NAME...``: the optional peers to include besides zarrpy."""
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="peers to include besides zarrpy (zarr-python, tensorstore, zarr-python+zarrs)")


def add_output_options(p: argparse.ArgumentParser) -> None:
    """``--tmpdir`` (where the stores go) and ``--json`` (save the result)."""
    p.add_argument("--tmpdir", default=None, help="parent directory of the temporary stores")
    p.add_argument("--json", metavar="PATH", help="also save the results as JSON")


# -- profiles -----------------------------------------------------------------
class PhaseClock:
    """Collects the wall-clock times of named phases for ``--profile`` runs
    (no sync, no gc: the phases are short and timed back to back)."""

    def __init__(self) -> None:
        self.phases: dict[str, list[float]] = {}

    def add(self, name: str, seconds: float) -> None:
        """Record ``seconds`` for the phase ``name`` (timed by the caller)."""
        self.phases.setdefault(name, []).append(seconds)

    def __call__(self, name: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn()``, record its time under ``name`` and return its result."""
        t0 = time.perf_counter()
        out = fn()
        self.add(name, time.perf_counter() - t0)
        return out
