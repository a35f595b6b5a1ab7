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
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: the shared harness
import _harness as H  # noqa: E402  (also puts the repository root on sys.path)
import zarrpy  # noqa: E402
from _harness import SEED, ZSTD_JSON, ZSTD_LEVEL, check_equal, make_data  # noqa: E402

DTYPE = H.IMAGE_DTYPE
OPERATIONS = ("write", "read", "region")
PEER_DISTS = ("numpy", "zarr", "numcodecs", "zstandard", "tensorstore", "zarrs")


def region_for(size: int) -> tuple[slice, slice]:
    """``[123:2345, 77:3001]`` at size 4096, scaled to other sizes."""
    def s(v: int) -> int:
        return max(0, min(size, round(v * size / 4096)))

    return (slice(s(123), max(s(123) + 1, s(2345))), slice(s(77), max(s(77) + 1, s(3001))))


# -- implementations ----------------------------------------------------------
# Each writes a whole array (``write(path, data, chunk)``), reads all of it
# (``read(path)``) and reads a region (``read_region(path, sel)``).
class ZarrpyImpl:
    name = "zarrpy"

    def write(self, path, data, chunk):
        a = zarrpy.create_array(path, shape=data.shape, dtype=data.dtype, chunks=(chunk, chunk),
                                compressors=[ZSTD_JSON], fill_value=0, overwrite=True)
        a[...] = data

    def read(self, path):
        return zarrpy.open_array(path, mode="r")[...]

    def read_region(self, path, sel):
        return zarrpy.open_array(path, mode="r")[sel]


class ZarrPythonImpl(H.ZarrPythonPeer):
    def write(self, path, data, chunk):
        with self._config():
            a = self.zarr.create_array(path, shape=data.shape, dtype=data.dtype, chunks=(chunk, chunk),
                                       compressors=[ZSTD_JSON], fill_value=0, overwrite=True)
            a[...] = data

    def read_region(self, path, sel):
        with self._config():
            return self.zarr.open_array(path, mode="r")[sel]


class ZarrsImpl(H.ZarrsPipeline, ZarrPythonImpl):
    """zarr-python with the zarrs (Rust) codec pipeline; strict, so no silent fallback."""


class TensorstoreImpl(H.TensorstorePeer):
    def write(self, path, data, chunk):
        self._create(path, {
            "shape": list(data.shape),
            "data_type": data.dtype.name,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk, chunk]}},
            "chunk_key_encoding": {"name": "default"},
            "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, ZSTD_JSON],
        }, data)

    def read_region(self, path, sel):
        return self._open(path)[sel].read().result()


PEERS = (ZarrPythonImpl, TensorstoreImpl, ZarrsImpl)


# -- the run ------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict[str, Any]:
    size, chunk, repeats = args.size, args.chunk, args.repeats
    impls, skipped = H.available_impls(ZarrpyImpl(), PEERS, args.only)
    data = make_data(size)
    sel = region_for(size)
    expected_region = data[sel]
    with H.Comparison("zarrpy-bench-", args.tmpdir) as c:
        print(f"array {size}x{size} uint16, chunks {chunk}x{chunk}, zstd level {ZSTD_LEVEL}; "
              f"region [{sel[0].start}:{sel[0].stop}, {sel[1].start}:{sel[1].stop}]; "
              f"{repeats} repeats; in {c.work}")
        if skipped:
            print("skipped: " + "; ".join(skipped))
        zarr_ref = H.reference_peer(impls, ZarrPythonImpl)
        readers = [("zarr-python", zarr_ref.read), ("zarrpy", ZarrpyImpl().read)]
        ref = c.reference(lambda path: zarr_ref.write(path, data, chunk), data.nbytes)
        H.check_zarrs_in_use(impls, ref)

        def verify_write(impl):
            return lambda path: c.check_written(impl.name, path, readers, data, check_equal)

        def measure(op: str, impl, rnd: int, verify: bool) -> float:
            if op == "write":
                return c.timed_write(impl, rnd, lambda path: impl.write(path, data, chunk),
                                     verify_write(impl) if verify else None)
            if op == "read":
                return c.timed_read(lambda: impl.read(ref), lambda got: check_equal(f"{impl.name} read", got, data))
            return c.timed_read(lambda: impl.read_region(ref, sel),
                                lambda got: check_equal(f"{impl.name} region read", got, expected_region))

        times = H.run_rounds(impls, OPERATIONS, repeats, measure)
    return c.record(
        times, OPERATIONS, versions=H.versions(*PEER_DISTS), skipped=skipped,
        settings={"size": size, "chunk": chunk, "repeats": repeats, "dtype": DTYPE.name,
                  "codec": ZSTD_JSON, "region": [[sel[0].start, sel[0].stop], [sel[1].start, sel[1].stop]],
                  "seed": SEED, "raw_bytes": int(data.nbytes)})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=4096, help="array side length (default 4096)")
    p.add_argument("--chunk", type=int, default=256, help="chunk side length (default 256)")
    p.add_argument("--repeats", type=int, default=9, help="timed repetitions (default 9)")
    p.add_argument("--quick", action="store_true", help="tiny smoke run: size 512, chunk 64, 2 repeats")
    H.add_only_option(p)
    H.add_output_options(p)
    args = p.parse_args(argv)
    if args.quick:
        args.size, args.chunk, args.repeats = 512, 64, 2
    if args.size < 1 or args.chunk < 1 or args.repeats < 1:
        p.error("--size, --chunk and --repeats must be positive")
    return H.run_and_report(args, run, OPERATIONS)


if __name__ == "__main__":
    sys.exit(main())
