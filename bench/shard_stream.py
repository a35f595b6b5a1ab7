"""Peak memory and time of ``zarrpy cp`` into one shard of 1 GiB (issue 29).

The source is a 16384 x 32768 ``uint16`` array (1 GiB of elements) in
chunks of 1024 x 2048 (zstd level 1), from a low-entropy pattern so the
disk use stays small: one row of chunks is written with zarrpy and its
chunk files are copied to the other rows. It is copied with

    python -m zarrpy cp SRC DST --chunks 256,256 --shards 16384,32768 --max-memory 64MB

so the destination is one shard holding the whole array, which ``cp``
writes inner chunk by inner chunk (:mod:`zarrpy.pipeline.shard_stream`),
reading the source in bands of inner chunks. The copy runs in a child
process whose peak resident memory (``ru_maxrss``) is reported, with that of
a child that only imports numpy and zarrpy and opens the source (the
baseline), and the copy's wall time. The copy is then read back band by
band and compared with the source (``--no-check`` skips that).

    python bench/shard_stream.py
    python bench/shard_stream.py --max-memory 32MB --threads 2 --dir /var/tmp/bench
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's zarrpy
import zarrpy  # noqa: E402

SHAPE, CHUNKS = (16384, 32768), (1024, 2048)
ZSTD1 = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
RSS_WRAPPER = textwrap.dedent("""
    import resource, subprocess, sys
    subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(peak if sys.platform == "darwin" else peak * 1024)  # bytes on macOS, KiB elsewhere
""")


def make_source(root: Path) -> zarrpy.Array:
    """The 1 GiB source: one row of chunks written, its files copied to the other rows."""
    a = zarrpy.create_array(str(root), shape=SHAPE, dtype="uint16", chunks=CHUNKS, compressors=ZSTD1)
    rows = (np.arange(CHUNKS[0], dtype=np.uint16) // 3 % 11)[:, None]
    cols = (np.arange(SHAPE[1], dtype=np.uint16) // 5 % 11)[None, :]
    a[: CHUNKS[0]] = (rows * 7 + cols) % 37
    for i in range(1, SHAPE[0] // CHUNKS[0]):
        shutil.copytree(root / "c" / "0", root / "c" / str(i))
    return a


def peak_rss(command: list[str], env: dict[str, str]) -> tuple[int, float]:
    """Peak resident bytes of ``command`` (a wrapper process waits for it alone), and its wall time."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", RSS_WRAPPER, *command], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return int(proc.stdout.strip()), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-memory", default="64MB")
    parser.add_argument("--threads", type=int, default=None, help="ZARRPY_THREADS for the copy (default: zarrpy's)")
    parser.add_argument("--dir", default=None, help="where the stores go (default: a temporary directory)")
    parser.add_argument("--no-check", action="store_true", help="skip reading the copy back")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="shard-stream-", dir=args.dir))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    if args.threads:
        env["ZARRPY_THREADS"] = str(args.threads)
    try:
        src, dst = work / "src.zarr", work / "dst.zarr"
        t0 = time.perf_counter()
        source = make_source(src)
        print(f"source: {SHAPE} uint16 ({source.nbytes / 2**30:.0f} GiB), chunks {CHUNKS}, "
              f"{source.nbytes_stored() / 2**20:.1f} MB stored, made in {time.perf_counter() - t0:.1f} s")
        baseline, _ = peak_rss([sys.executable, "-c", f"import numpy, zarrpy; zarrpy.open_array({str(src)!r})"], env)
        peak, elapsed = peak_rss([sys.executable, "-m", "zarrpy", "cp", str(src), str(dst), "--chunks", "256,256",
                                  "--shards", f"{SHAPE[0]},{SHAPE[1]}", "--max-memory", args.max_memory,
                                  "--quiet"], env)
        copy = zarrpy.open_array(str(dst))
        assert copy.shards == SHAPE and len(copy.stored_chunk_keys()) == 1
        print(f"cp into one shard of {SHAPE} (1 GiB), inner chunks (256, 256), --max-memory {args.max_memory}, "
              f"ZARRPY_THREADS={env.get('ZARRPY_THREADS', 'default')}:")
        print(f"  peak RSS {peak / 2**20:.0f} MB: {(peak - baseline) / 2**20:.0f} MB over the baseline "
              f"({baseline / 2**20:.0f} MB: numpy and zarrpy imported, the source opened)")
        print(f"  wall time {elapsed:.1f} s ({source.nbytes / 2**20 / elapsed:.0f} MB/s); "
              f"shard stored in {copy.nbytes_stored() / 2**20:.1f} MB")
        if not args.no_check:
            t0 = time.perf_counter()
            for start in range(0, SHAPE[0], CHUNKS[0]):
                rows = slice(start, start + CHUNKS[0])
                if not np.array_equal(copy[rows], source[rows]):
                    raise SystemExit(f"the copy differs from the source in rows {rows.start}:{rows.stop}")
            print(f"  read back equal ({time.perf_counter() - t0:.1f} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
