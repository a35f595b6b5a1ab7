"""Time zarrpy against zarr-python on a 1-D array of a million strings.

Both write and read the same 1,000,000 strings (lengths 0..40, about one in
ten containing non-ASCII characters, fixed seed) as a 1-D string array with
chunks of 100,000 and each library's default string codecs, which are the
same: ``vlen-utf8`` + ``zstd`` level 0 without checksum, fill value ``""``
(zarrpy: ``create_array(..., dtype=str)``, zarr-python 3:
``zarr.create_array(..., dtype=str)``). Stores are local directories.

* ``write``  create the array and write all of it (fresh directory each time),
  from a ``numpy.dtypes.StringDType`` array;
* ``read``   open the array and read all of it (both return StringDType);
* ``region`` open the array and read ``[123_456:345_678]``, which cuts two
  chunks and covers one whole.

Reads use one shared store written by zarr-python. Runs are interleaved, in
a rotating order, after one untimed warm-up round that also checks every
result: what each writer stored must hold the same chunk keys as
zarr-python's and read back equal through both libraries, and every read
(warm-up and timed) is compared with the source strings outside the timing.
The table shows medians and ``peer / zarrpy`` (above 1: zarrpy is faster).

    PYENV_VERSION=3.12.1 python3 bench/bench_strings.py             # default run
    PYENV_VERSION=3.12.1 python3 bench/bench_strings.py --quick     # smoke run
    PYENV_VERSION=3.12.1 python3 bench/bench_strings.py --profile   # zarrpy's phases only
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: the shared harness
import _harness as H  # noqa: E402  (also puts the repository root on sys.path)
import zarrpy  # noqa: E402

SEED = 20261130
STRING_DTYPE = np.dtypes.StringDType()
OPERATIONS = ("write", "read", "region")
# Non-ASCII characters of 2, 3 and 4 UTF-8 bytes.
NON_ASCII = "éüßñçøåĉŏŭαβγΩЖжשع日本語中文한글€…😀🚀"


# -- data -------------------------------------------------------------------
def make_strings(n: int, seed: int = SEED) -> np.ndarray:
    """``n`` strings of 0..40 characters: printable ASCII, except that about
    10 % of the strings have each character replaced, with probability 1/4,
    by a character of ``NON_ASCII``."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 41, n)
    total = int(lengths.sum())
    codes = rng.integers(32, 127, total, dtype=np.uint32)
    owner = np.repeat(np.arange(n), lengths)
    special = (rng.random(n) < 0.1)[owner] & (rng.random(total) < 0.25)
    alphabet = np.array([ord(c) for c in NON_ASCII], dtype=np.uint32)
    codes[special] = alphabet[rng.integers(0, alphabet.size, int(special.sum()))]
    text = codes.astype("<u4").tobytes().decode("utf-32-le")
    ends = np.cumsum(lengths).tolist()
    starts = [0, *ends[:-1]]
    return np.array([text[a:b] for a, b in zip(starts, ends)], dtype=STRING_DTYPE)


def region_for(n: int) -> slice:
    """``[123_456:345_678]`` for a million strings, scaled for other sizes."""
    return slice(round(123_456 * n / 1_000_000), max(round(345_678 * n / 1_000_000), 1))


# -- implementations ----------------------------------------------------------
class ZarrpyImpl:
    name = "zarrpy"

    def write(self, path: str, data: np.ndarray, chunk: int) -> None:
        a = zarrpy.create_array(path, shape=data.shape, dtype=str, chunks=(chunk,), overwrite=True)
        a[...] = data

    def read(self, path: str) -> np.ndarray:
        return zarrpy.open_array(path, mode="r")[...]

    def read_region(self, path: str, sel: slice) -> np.ndarray:
        return zarrpy.open_array(path, mode="r")[sel]


class ZarrPythonImpl:
    name = "zarr-python"

    def __init__(self) -> None:
        import zarr

        self.zarr = zarr

    def write(self, path: str, data: np.ndarray, chunk: int) -> None:
        a = self.zarr.create_array(path, shape=data.shape, dtype=str, chunks=(chunk,), overwrite=True)
        a[...] = data

    def read(self, path: str) -> np.ndarray:
        return self.zarr.open_array(path, mode="r")[...]

    def read_region(self, path: str, sel: slice) -> np.ndarray:
        return self.zarr.open_array(path, mode="r")[sel]


PEER_DISTS = ("numpy", "zarr", "numcodecs", "zstandard")


def check_strings(what: str, got: Any, expected: np.ndarray) -> None:
    got = np.asarray(got)
    if got.shape != expected.shape:
        raise AssertionError(f"{what}: shape {got.shape}, expected {expected.shape}")
    if got.dtype != STRING_DTYPE:
        raise AssertionError(f"{what}: dtype {got.dtype}, expected StringDType")
    if not np.array_equal(got, expected):
        raise AssertionError(f"{what}: {int(np.count_nonzero(got != expected))} strings differ")


# -- the run ------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict[str, Any]:
    n, chunk, repeats = args.n, args.chunk, args.repeats
    data = make_strings(n)
    sel = region_for(n)
    expected_region = data[sel]
    utf8_nbytes = sum(len(s.encode("utf-8")) for s in data.tolist())
    impls = [ZarrpyImpl(), ZarrPythonImpl()]
    with H.Comparison("zarrpy-bench-strings-", args.tmpdir) as c:
        print(f"{n} strings ({utf8_nbytes / 1e6:.1f} MB of UTF-8), chunks of {chunk}, vlen-utf8 + zstd level 0; "
              f"region [{sel.start}:{sel.stop}]; {repeats} repeats; in {c.work}")
        zarr_ref = impls[1]
        readers = [("zarr-python", zarr_ref.read), ("zarrpy", ZarrpyImpl().read)]
        ref = c.reference(lambda path: zarr_ref.write(path, data, chunk), digits=2)

        def measure(op: str, impl, rnd: int, verify: bool) -> float:
            if op == "write":
                verify_write = lambda path: c.check_written(impl.name, path, readers, data, check_strings)  # noqa: E731
                return c.timed_write(impl, rnd, lambda path: impl.write(path, data, chunk),
                                     verify_write if verify else None)
            if op == "read":
                return c.timed_read(lambda: impl.read(ref), lambda got: check_strings(f"{impl.name} read", got, data))
            return c.timed_read(lambda: impl.read_region(ref, sel),
                                lambda got: check_strings(f"{impl.name} region read", got, expected_region))

        times = H.run_rounds(impls, OPERATIONS, repeats, measure)
    return c.record(
        times, OPERATIONS, versions=H.versions(*PEER_DISTS),
        settings={"n": n, "chunk": chunk, "repeats": repeats, "seed": SEED,
                  "region": [sel.start, sel.stop], "utf8_bytes": utf8_nbytes})


# -- profile: zarrpy's phases, timed one by one ---------------------------------
def profile(args: argparse.Namespace) -> None:
    """Time the phases of zarrpy's string write and read on one thread, chunk
    by chunk, with the calls zarrpy's pipeline makes (median of ``--repeats``),
    then some primitives a vectorised string path would be built from."""
    import numcodecs

    from zarrpy.codecs.abc import ChunkSpec
    from zarrpy.codecs.fill import is_fill
    from zarrpy.codecs.vlen_v2 import VlenUtf8Codec
    from zarrpy.core import _vlen_python
    from zarrpy.codecs.zstd import ZstdCodec
    from zarrpy.core.array_bytes import ArrayBytes
    from zarrpy.core.dtypes import DataType
    from zarrpy.stores.local import LocalStore

    data = make_strings(args.n)
    chunks = [data[i:i + args.chunk] for i in range(0, args.n, args.chunk)]
    string = DataType.from_json("string")
    specs = [ChunkSpec(c.shape, string, "") for c in chunks]
    vlen, zstd, nc = VlenUtf8Codec(), ZstdCodec(level=0), numcodecs.VLenUTF8()
    work = H.make_workdir("zarrpy-profile-strings-", args.tmpdir)
    clock = H.PhaseClock()

    try:
        for rep in range(args.repeats):
            store = LocalStore(str(work / f"r{rep}"))
            zarrpy.create_array(store, shape=data.shape, dtype=str, chunks=(args.chunk,), overwrite=True)
            ab = [ArrayBytes.from_elements(c) for c in chunks]
            clock("write 1 is_fill check", lambda: [is_fill(a, s) for a, s in zip(ab, specs)])
            enc = clock("write 2 vlen-utf8 encode", lambda: [vlen.encode(a, s) for a, s in zip(ab, specs)])
            objs = clock("write 2a   StringDType -> str objects", lambda: [c.astype(object) for c in chunks])
            clock("write 2b   numcodecs VLenUTF8.encode(objects)", lambda: [nc.encode(o) for o in objs])
            z = clock("write 3 zstd compress", lambda: [zstd.encode(e, s) for e, s in zip(enc, specs)])
            clock("write 4 store.set", lambda: [store.set(f"c/{i}", b) for i, b in enumerate(z)])
            raw = clock("read 1 store.get", lambda: [store.get(f"c/{i}") for i in range(len(z))])
            dec = clock("read 2 zstd decompress", lambda: [zstd.decode(r, s) for r, s in zip(raw, specs)])
            out = np.empty(data.shape, dtype=STRING_DTYPE)
            dests = [out[i:i + args.chunk] for i in range(0, args.n, args.chunk)]
            clock("read 3 vlen-utf8 decode_into the result",
                  lambda: [vlen.decode_into(d, s, o) for d, s, o in zip(dec, specs, dests)])
            check_strings("profile round trip", out, data)
            strs = clock("read 3a   numcodecs VLenUTF8.decode -> str objects", lambda: [nc.decode(d) for d in dec])
            clock("read 3b   str objects -> StringDType (cast into result)",
                  lambda: [o.__setitem__(Ellipsis, x) for o, x in zip(dests, strs)])
            clock("read (3 as decode + copy into the result)",
                  lambda: [o.__setitem__(Ellipsis, vlen.decode(d, s).to_strings()) for d, s, o in zip(dec, specs, dests)])
            a = zarrpy.open_array(store, mode="r+")
            clock("write (whole a[...] = data)", lambda: a.__setitem__(Ellipsis, data))
            got = clock("read (whole a[...])", lambda: a[...])
            check_strings("profile read", got, data)
            # Primitives of a vectorised path (numpy casts, a Python header walk):
            # each costs about what numcodecs' whole step costs, see the report.
            width = max(len(x) for x in chunks[0].tolist())
            clock("alt: StringDType -> U{max} cast", lambda: [c.astype(f"U{width}") for c in chunks])
            fixed = [o.astype("S") for o in (numcodecs.VLenBytes().decode(d) for d in dec)]
            clock("alt: S{max} -> StringDType cast", lambda: [f.astype(STRING_DTYPE) for f in fixed])
            clock("alt: header walk (the pure-Python fallback's loop)",
                  lambda: [_vlen_python._walk(d, len(c), True) for d, c in zip(dec, chunks)])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"zarrpy phases, {args.n} strings in chunks of {args.chunk}, median of {args.repeats} "
          "(phases on one thread, summed over all chunks; the whole operations use zarrpy's pool):")
    for name, ts in clock.phases.items():
        print(f"  {name:55s} {statistics.median(ts) * 1e3:8.1f} ms")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1_000_000, help="number of strings (default 1,000,000)")
    p.add_argument("--chunk", type=int, default=100_000, help="chunk length (default 100,000)")
    p.add_argument("--repeats", type=int, default=7, help="timed repetitions (default 7)")
    p.add_argument("--quick", action="store_true", help="smoke run: 50,000 strings, chunks of 5,000, 2 repeats")
    p.add_argument("--profile", action="store_true", help="time zarrpy's phases instead of comparing")
    H.add_output_options(p)
    args = p.parse_args(argv)
    if args.quick:
        args.n, args.chunk, args.repeats = 50_000, 5_000, 2
    if args.n < 1 or args.chunk < 1 or args.repeats < 1:
        p.error("--n, --chunk and --repeats must be positive")
    return H.run_and_report(args, run, OPERATIONS, profile)


if __name__ == "__main__":
    sys.exit(main())
