"""Time zarrpy's scattered reads and multi-array iteration against its peers.

Peers: zarr-python, and tensorstore when importable. (zarr-python with the
zarrs pipeline is left out: in strict mode it refuses unsorted index arrays
with ``DiscontiguousArrayError``; without it, it may fall back to
zarr-python's own pipeline.) Every store is a local directory written once
by zarr-python (``bytes`` + ``zstd`` level 3, no checksum), so every reader
decodes the very same bytes. Four operations, each timed from opening the
array(s) to the finished numpy result:

* ``oindex``  1,000 scattered rows of a 100,000 x 64 ``uint16`` array
  (chunks 1,000 x 64): ``a.oindex[rows, :]`` with distinct, unsorted rows;
* ``vindex``  10,000 scattered points of a 4,096 x 4,096 ``uint16`` array
  (chunks 256 x 256): ``a.vindex[rows, cols]``, random coordinates;
* ``iter``    every row of 100 arrays of 2,000 x 64 ``uint16`` (chunks
  500 x 64), in blocks of 4,096 rows: zarrpy with ``zarrpy.iter_rows(arrays,
  rows=4096)`` (``prefetch=True`` with ``--prefetch``), the peers by
  reading each array whole (``a[:]``), ``np.concatenate`` and slicing the
  blocks;
* ``concat``  the same 100 arrays read whole and concatenated, by everyone
  (zarrpy's own ``a[:]`` route, the baseline for ``iter``).

An operation zarrpy does not provide yet (``Array.vindex``,
``zarrpy.iter_rows``) is left out with a printed note. Runs are interleaved
after one untimed warm-up round that checks every result against numpy;
every timed result is checked again outside the timing. The table shows
medians and ``peer / zarrpy`` (above 1: zarrpy is faster).

    PYENV_VERSION=3.12.1 python3 bench/bench_indexing.py            # default run
    PYENV_VERSION=3.12.1 python3 bench/bench_indexing.py --quick    # smoke run (seconds)
    PYENV_VERSION=3.12.1 python3 bench/bench_indexing.py --prefetch # iter_rows double-buffered
    PYENV_VERSION=3.12.1 python3 bench/bench_indexing.py --json out.json
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: the shared harness
import _harness as H  # noqa: E402  (also puts the repository root on sys.path)
import zarrpy  # noqa: E402
from _harness import SEED, ZSTD_JSON, ZSTD_LEVEL, check_equal, make_data  # noqa: E402

DTYPE = H.IMAGE_DTYPE
ALL_OPERATIONS = ("oindex", "vindex", "iter", "concat")
PEER_DISTS = ("numpy", "zarr", "numcodecs", "zstandard", "tensorstore")


@dataclass(frozen=True)
class Sizes:
    """The three data sets and selections (see the module docstring)."""

    table_rows: int = 100_000
    table_cols: int = 64
    table_chunk: int = 1_000
    n_rows: int = 1_000  # scattered rows read by ``oindex``
    image: int = 4_096
    image_chunk: int = 256
    n_points: int = 10_000  # scattered points read by ``vindex``
    n_arrays: int = 100
    array_rows: int = 2_000
    array_chunk: int = 500
    block_rows: int = 4_096  # rows per block of ``iter``


QUICK = Sizes(table_rows=10_000, table_cols=16, table_chunk=500, n_rows=200, image=512, image_chunk=64,
              n_points=1_000, n_arrays=20, array_rows=500, array_chunk=100, block_rows=256)


def table_data(nrows: int, ncols: int, seed: int = SEED) -> np.ndarray:
    """``nrows`` x ``ncols`` uint16 rows: a slow wave along the rows plus
    Gaussian noise (zstd shrinks it about 2x, like ``make_data``)."""
    rng = np.random.default_rng(seed)
    wave = 2000.0 + 800.0 * np.sin(np.arange(nrows) / 500.0)[:, None] + 30.0 * np.arange(ncols)[None, :]
    return np.clip(np.rint(wave + rng.normal(0.0, 4.0, size=(nrows, ncols))), 0, 65535).astype(DTYPE)


@dataclass
class Cases:
    """Stores, selections and expected results of one run."""

    table: str
    rows: np.ndarray
    rows_expected: np.ndarray
    image: str
    points: tuple[np.ndarray, np.ndarray]
    points_expected: np.ndarray
    arrays: list[str]
    all_rows: np.ndarray
    block_rows: int


def make_cases(work: Path, s: Sizes, write) -> Cases:
    """Write the stores with ``write(path, data, chunks)`` and draw the selections."""
    rng = np.random.default_rng(SEED + 1)
    table = table_data(s.table_rows, s.table_cols)
    rows = rng.choice(s.table_rows, size=s.n_rows, replace=False)  # distinct, unsorted
    image = make_data(s.image)
    points = (rng.integers(0, s.image, s.n_points), rng.integers(0, s.image, s.n_points))
    all_rows = table_data(s.n_arrays * s.array_rows, s.table_cols, SEED + 2)
    cases = Cases(str(work / "table.zarr"), rows, table[rows], str(work / "image.zarr"), points, image[points],
                  [str(work / "many" / f"a{i:03d}.zarr") for i in range(s.n_arrays)], all_rows, s.block_rows)
    write(cases.table, table, (s.table_chunk, s.table_cols))
    write(cases.image, image, (s.image_chunk, s.image_chunk))
    for i, path in enumerate(cases.arrays):
        write(path, all_rows[i * s.array_rows:(i + 1) * s.array_rows], (s.array_chunk, s.table_cols))
    return cases


def _blocks(data: np.ndarray, n: int) -> Iterator[np.ndarray]:
    for start in range(0, len(data), n):
        yield data[start:start + n]


# -- implementations ----------------------------------------------------------
# Each reads scattered rows (``oindex(path, rows)``), scattered points
# (``vindex(path, points)``), yields the rows of many arrays in blocks
# (``iterate(paths, n)``) and reads them whole, concatenated (``concat(paths)``).
class ZarrpyImpl:
    name = "zarrpy"

    def __init__(self, prefetch: bool = False) -> None:
        self.prefetch = prefetch

    def oindex(self, path, rows):
        return zarrpy.open_array(path, mode="r").oindex[rows, :]

    def vindex(self, path, points):
        return zarrpy.open_array(path, mode="r").vindex[points]

    def iterate(self, paths, n):
        # iter_rows yields one reused buffer; its numpy view is the block
        return (buf.nda for buf in zarrpy.iter_rows(paths, rows=n, prefetch=self.prefetch))

    def concat(self, paths):
        return np.concatenate([zarrpy.open_array(p, mode="r")[:] for p in paths])


class ZarrPythonImpl(H.ZarrPythonPeer):
    def write(self, path, data, chunks):
        with self._config():
            a = self.zarr.create_array(path, shape=data.shape, dtype=data.dtype, chunks=chunks,
                                       compressors=[ZSTD_JSON], fill_value=0, overwrite=True)
            a[...] = data

    def oindex(self, path, rows):
        with self._config():
            return self.zarr.open_array(path, mode="r").oindex[rows, :]

    def vindex(self, path, points):
        with self._config():
            return self.zarr.open_array(path, mode="r").vindex[points]

    def iterate(self, paths, n):
        return _blocks(self.concat(paths), n)

    def concat(self, paths):
        with self._config():
            return np.concatenate([self.zarr.open_array(p, mode="r")[:] for p in paths])


class TensorstoreImpl(H.TensorstorePeer):
    def oindex(self, path, rows):
        return self._open(path).oindex[rows, :].read().result()

    def vindex(self, path, points):
        return self._open(path).vindex[points].read().result()

    def iterate(self, paths, n):
        return _blocks(self.concat(paths), n)

    def concat(self, paths):
        return np.concatenate([self._open(p).read().result() for p in paths])


PEERS = (ZarrPythonImpl, TensorstoreImpl)


def available_operations() -> tuple[tuple[str, ...], list[str]]:
    """The operations this checkout of zarrpy provides, and notes on the rest."""
    missing = {"vindex": (hasattr(zarrpy.Array, "vindex"), "zarrpy.Array.vindex"),
               "iter": (hasattr(zarrpy, "iter_rows"), "zarrpy.iter_rows")}
    ops = tuple(op for op in ALL_OPERATIONS if missing.get(op, (True,))[0])
    notes = [f"{op}: left out, {name} does not exist in this checkout"
             for op, (ok, name) in missing.items() if not ok]
    return ops, notes


# -- the run ------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes: Sizes = args.sizes
    operations, notes = available_operations()
    impls, skipped = H.available_impls(ZarrpyImpl(args.prefetch), PEERS, args.only)
    with H.Comparison("zarrpy-bench-indexing-", args.tmpdir) as c:
        print(f"oindex: {sizes.n_rows} of {sizes.table_rows} rows x {sizes.table_cols}, chunks {sizes.table_chunk}; "
              f"vindex: {sizes.n_points} points of {sizes.image}², chunks {sizes.image_chunk}²; "
              f"iter/concat: {sizes.n_arrays} arrays of {sizes.array_rows} x {sizes.table_cols}, "
              f"chunks {sizes.array_chunk}, blocks of {sizes.block_rows}{' (prefetch)' if args.prefetch else ''}; "
              f"uint16, zstd level {ZSTD_LEVEL}; "
              f"{args.repeats} repeats; in {c.work}")
        for note in notes:
            print(note)
        if skipped:
            print("skipped: " + "; ".join(skipped))
        zarr_ref = H.reference_peer(impls, ZarrPythonImpl)
        cases = make_cases(c.work, sizes, zarr_ref.write)
        files = H.stored_files(str(c.work))
        print(f"reference stores: {len(files)} files, {sum(files.values()) / 1e6:.1f} MB")

        def consume(impl, verify: bool):
            """Run ``iterate``; keep copies of the blocks when verifying (an
            iterator may reuse its buffer), else only the row count and the
            last block."""
            def go():
                kept, nrows, last = [], 0, None
                for block in impl.iterate(cases.arrays, cases.block_rows):
                    nrows += len(block)
                    last = block
                    if verify:
                        kept.append(np.array(block))
                return kept, nrows, None if last is None else np.array(last)
            return go

        def check_iter(name: str, verify: bool):
            def check(got):
                kept, nrows, last = got
                if nrows != len(cases.all_rows):
                    raise AssertionError(f"{name} iter: {nrows} rows, expected {len(cases.all_rows)}")
                tail = len(cases.all_rows) - len(last)
                check_equal(f"{name} iter, last block", last, cases.all_rows[tail:])
                if verify:
                    if any(len(b) != cases.block_rows for b in kept[:-1]):
                        raise AssertionError(f"{name} iter: blocks of {[len(b) for b in kept]} rows")
                    check_equal(f"{name} iter", np.concatenate(kept), cases.all_rows)
            return check

        def measure(op: str, impl, rnd: int, verify: bool) -> float:
            if op == "oindex":
                return c.timed_read(lambda: impl.oindex(cases.table, cases.rows),
                                    lambda got: check_equal(f"{impl.name} oindex", got, cases.rows_expected))
            if op == "vindex":
                return c.timed_read(lambda: impl.vindex(cases.image, cases.points),
                                    lambda got: check_equal(f"{impl.name} vindex", got, cases.points_expected))
            if op == "iter":
                return c.timed_read(consume(impl, verify), check_iter(impl.name, verify))
            return c.timed_read(lambda: impl.concat(cases.arrays),
                                lambda got: check_equal(f"{impl.name} concat", got, cases.all_rows))

        times = H.run_rounds(impls, operations, args.repeats, measure)
    result = c.record(times, operations, versions=H.versions(*PEER_DISTS), skipped=skipped + notes,
                      settings={**asdict(sizes), "repeats": args.repeats, "prefetch": args.prefetch,
                                "dtype": DTYPE.name, "codec": ZSTD_JSON, "seed": SEED})
    result["operations"] = list(operations)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=9, help="timed repetitions (default 9)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 10,000-row table, 512² image, 20 small arrays, 2 repeats")
    p.add_argument("--prefetch", action="store_true", help="zarrpy's iter_rows reads the next block ahead")
    H.add_only_option(p)
    H.add_output_options(p)
    args = p.parse_args(argv)
    args.sizes = QUICK if args.quick else Sizes()
    if args.quick:
        args.repeats = 2
    if args.repeats < 1:
        p.error("--repeats must be positive")
    result = run(args)
    H.report(result, result["operations"], args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
