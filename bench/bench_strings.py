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
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the repository root: zarrpy from the checkout
sys.path.insert(0, str(HERE))  # bench_core's helpers

import zarrpy  # noqa: E402
from bench_core import _loadavg, git_commit, stored_files, timed  # noqa: E402

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


def versions() -> dict[str, str]:
    from importlib import metadata as importlib_metadata

    out = {"python": platform.python_version()}
    for dist in ("numpy", "zarr", "numcodecs", "zstandard"):
        try:
            out[dist] = importlib_metadata.version(dist)
        except importlib_metadata.PackageNotFoundError:
            pass
    return out


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
    work = Path(tempfile.mkdtemp(prefix="zarrpy-bench-strings-", dir=args.tmpdir))
    load_before = _loadavg()
    if load_before and load_before[0] > 0.5 * (os.cpu_count() or 1):
        print(f"warning: load average {load_before[0]:.2f} on {os.cpu_count()} CPUs; "
              "other work on the machine skews the times (ratios less so: runs are interleaved)")
    print(f"{n} strings ({utf8_nbytes / 1e6:.1f} MB of UTF-8), chunks of {chunk}, vlen-utf8 + zstd level 0; "
          f"region [{sel.start}:{sel.stop}]; {repeats} repeats; in {work}")
    zarr_ref = impls[1]
    times: dict[str, dict[str, list[float]]] = {i.name: {op: [] for op in OPERATIONS} for i in impls}
    stored: dict[str, int] = {}
    try:
        ref = str(work / "reference.zarr")
        zarr_ref.write(ref, data, chunk)
        ref_files = stored_files(ref)
        ref_chunks = {k for k in ref_files if k != "zarr.json"}
        print(f"reference store: {len(ref_files)} files, {sum(ref_files.values()) / 1e6:.2f} MB")

        def one_round(rnd: int, order: list, verify: bool) -> None:
            for op in OPERATIONS:
                for impl in order:
                    if op == "write":
                        path = str(work / f"w-{impl.name}-{rnd}.zarr")
                        dt, _ = timed(lambda: impl.write(path, data, chunk))
                        if verify:
                            files = stored_files(path)
                            if {k for k in files if k != "zarr.json"} != ref_chunks:
                                raise AssertionError(f"{impl.name} wrote other chunk keys than zarr-python")
                            stored[impl.name] = sum(files.values())
                            check_strings(f"{impl.name} write, read by zarr-python", zarr_ref.read(path), data)
                            check_strings(f"{impl.name} write, read by zarrpy", ZarrpyImpl().read(path), data)
                        shutil.rmtree(path)
                    elif op == "read":
                        dt, got = timed(lambda: impl.read(ref))
                        check_strings(f"{impl.name} read", got, data)
                    else:
                        dt, got = timed(lambda: impl.read_region(ref, sel))
                        check_strings(f"{impl.name} region read", got, expected_region)
                    got = None
                    if not verify:
                        times[impl.name][op].append(dt)

        t0 = time.perf_counter()
        one_round(-1, impls, verify=True)
        print(f"warm-up and verification done ({time.perf_counter() - t0:.1f} s)")
        for rep in range(repeats):
            k = rep % len(impls)
            one_round(rep, impls[k:] + impls[:k], verify=False)
            print(f"  repetition {rep + 1}/{repeats} done", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    medians = {name: {op: statistics.median(ts) for op, ts in per.items()} for name, per in times.items()}
    ratios = {name: {op: medians[name][op] / medians["zarrpy"][op] for op in OPERATIONS}
              for name in medians if name != "zarrpy"}
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count(), "loadavg_before": load_before, "loadavg_after": _loadavg()},
        "versions": versions(),
        "zarrpy_commit": git_commit(),
        "settings": {"n": n, "chunk": chunk, "repeats": repeats, "seed": SEED,
                     "region": [sel.start, sel.stop], "utf8_bytes": utf8_nbytes},
        "stored_bytes": stored,
        "times_s": times,
        "median_s": medians,
        "ratio_peer_over_zarrpy": ratios,
    }


def format_table(result: dict[str, Any]) -> str:
    med, ratios = result["median_s"], result["ratio_peer_over_zarrpy"]
    header = ["implementation"] + [f"{op} (s)" for op in OPERATIONS] + [f"{op} ratio" for op in OPERATIONS] + ["stored MB"]
    rows = []
    for name in med:
        row = [name] + [f"{med[name][op]:.3f}" for op in OPERATIONS]
        row += ["-" if name == "zarrpy" else f"{ratios[name][op]:.2f}" for op in OPERATIONS]
        nbytes = result["stored_bytes"].get(name)
        row.append(f"{nbytes / 1e6:.2f}" if nbytes else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


# -- profile: zarrpy's phases, timed one by one ---------------------------------
def profile(args: argparse.Namespace) -> None:
    """Time the phases of zarrpy's string write and read on one thread, chunk
    by chunk, with the pieces zarrpy itself uses (median of ``--repeats``)."""
    import numcodecs

    from zarrpy.array_bytes import ArrayBytes
    from zarrpy.codecs.vlen_v2 import decode_interleaved, encode_interleaved
    from zarrpy.codecs.zstd import ZstdCodec
    from zarrpy.stores.local import LocalStore

    data = make_strings(args.n)
    chunks = [data[i:i + args.chunk] for i in range(0, args.n, args.chunk)]
    zstd = ZstdCodec(level=0)
    work = Path(tempfile.mkdtemp(prefix="zarrpy-profile-strings-", dir=args.tmpdir))
    phases: dict[str, list[float]] = {}

    def clock(name: str, fn):
        t0 = time.perf_counter()
        out = fn()
        phases.setdefault(name, []).append(time.perf_counter() - t0)
        return out

    try:
        for rep in range(args.repeats):
            store = LocalStore(str(work / f"r{rep}"))
            zarrpy.create_array(store, shape=data.shape, dtype=str, chunks=(args.chunk,), overwrite=True)
            ab = clock("write 1 str -> ArrayBytes (from_strings)", lambda: [ArrayBytes.from_strings(c) for c in chunks])
            enc = clock("write 2 vlen-utf8 encode", lambda: [encode_interleaved(a.offsets, a.data) for a in ab])
            z = clock("write 3 zstd compress", lambda: [zstd.encode(e, None) for e in enc])
            clock("write 4 store.set", lambda: [store.set(f"c/{i}", b) for i, b in enumerate(z)])
            raw = clock("read 1 store.get", lambda: [store.get(f"c/{i}") for i in range(len(z))])
            dec = clock("read 2 zstd decompress", lambda: [zstd.decode(r, _Spec(len(c))) for r, c in zip(raw, chunks)])
            parts = clock("read 3 vlen-utf8 decode", lambda: [decode_interleaved(d, len(c)) for d, c in zip(dec, chunks)])
            out = clock("read 4 ArrayBytes -> str (to_strings)",
                        lambda: [ArrayBytes(c.shape, offsets=o, data=p).to_strings() for (o, p), c in zip(parts, chunks)])
            check_strings("profile round trip", np.concatenate(out), data)
            a = zarrpy.open_array(store, mode="r+")
            clock("write (whole a[...] = data)", lambda: a.__setitem__(Ellipsis, data))
            got = clock("read (whole a[...])", lambda: a[...])
            check_strings("profile read", got, data)
            # Inside phase 1 (what from_strings does, step by step).
            items = clock("write 1a StringDType -> list of str", lambda: [c.reshape(-1).tolist() for c in chunks])
            clock("write 1b ''.join + isascii", lambda: ["".join(i).isascii() for i in items])
            enc_items = clock("write 1c str.encode per element", lambda: [[x.encode("utf-8") for x in i] for i in items])
            clock("write 1d lengths + b''.join", lambda: [ArrayBytes.from_bytes_list(e, (len(e),)) for e in enc_items])
            # Inside phase 3 and 4.
            clock("read 3a length walk (Python loop)", lambda: [_walk(d, len(c)) for d, c in zip(dec, chunks)])
            pieces = clock("read 4a bytes.decode per element", lambda: [_split_decode(o, p) for o, p in parts])
            clock("read 4b list of str -> StringDType", lambda: [np.array(x, dtype=STRING_DTYPE) for x in pieces])
            # What zarr-python runs instead (numcodecs' Cython VLenUTF8).
            nc = numcodecs.VLenUTF8()
            clock("peer: numcodecs VLenUTF8.encode(chunk)", lambda: [nc.encode(c) for c in chunks])
            clock("peer: VLenUTF8.decode + astype(StringDType)", lambda: [nc.decode(d).astype(STRING_DTYPE) for d in dec])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"zarrpy phases, {args.n} strings in chunks of {args.chunk}, median of {args.repeats} "
          "(phases on one thread, summed over all chunks; the whole operations use zarrpy's pool):")
    for name, ts in phases.items():
        print(f"  {name:45s} {statistics.median(ts) * 1e3:8.1f} ms")


def _walk(buf: bytes, n: int) -> list[int]:
    """The element lengths of an interleaved buffer, found as vlen_v2 finds them."""
    import struct

    unpack = struct.Struct("<I").unpack_from
    lengths = [0] * n
    pos = 4
    for i in range(n):
        (length,) = unpack(buf, pos)
        lengths[i] = length
        pos += 4 + length
    return lengths


def _split_decode(offsets: np.ndarray, data: bytes) -> list[str]:
    o = offsets.tolist()
    return [data[a:b].decode("utf-8") for a, b in zip(o[:-1], o[1:])]


class _Spec:
    """Just enough of a ChunkSpec for zstd's decode size limit."""

    def __init__(self, n: int) -> None:
        from zarrpy.dtypes import DataType

        self.shape = (n,)
        self.dtype = DataType.from_json("string")
        self.size = n


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1_000_000, help="number of strings (default 1,000,000)")
    p.add_argument("--chunk", type=int, default=100_000, help="chunk length (default 100,000)")
    p.add_argument("--repeats", type=int, default=7, help="timed repetitions (default 7)")
    p.add_argument("--quick", action="store_true", help="smoke run: 50,000 strings, chunks of 5,000, 2 repeats")
    p.add_argument("--profile", action="store_true", help="time zarrpy's phases instead of comparing")
    p.add_argument("--tmpdir", default=None, help="parent directory of the temporary stores")
    p.add_argument("--json", metavar="PATH", help="also save the results as JSON")
    args = p.parse_args(argv)
    if args.quick:
        args.n, args.chunk, args.repeats = 50_000, 5_000, 2
    if args.n < 1 or args.chunk < 1 or args.repeats < 1:
        p.error("--n, --chunk and --repeats must be positive")
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
