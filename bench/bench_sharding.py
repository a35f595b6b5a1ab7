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
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: the shared harness
import _harness as H  # noqa: E402  (also puts the repository root on sys.path)
import zarrpy  # noqa: E402
from _harness import ZSTD_JSON, check_equal, make_data  # noqa: E402

OPERATIONS = ("write", "read", "random")
SEED = 20261201
LE = {"name": "bytes", "configuration": {"endian": "little"}}
INDEX_CODECS = [LE, {"name": "crc32c"}]
PEER_DISTS = ("numpy", "zarr", "numcodecs", "zstandard", "tensorstore", "zarrs")


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
# Each writes a whole sharded array (``write(path, data, chunk, shard)``),
# reads all of it (``read(path)``) and reads a list of selections from one
# opened array (``read_many(path, sels)``).
class ZarrpyImpl:
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


class ZarrPythonImpl(H.ZarrPythonPeer):
    def write(self, path, data, chunk, shard):
        with self._config():
            a = self.zarr.create_array(path, shape=data.shape, dtype=data.dtype, chunks=(chunk, chunk),
                                       shards=(shard, shard), compressors=[ZSTD_JSON], fill_value=0,
                                       overwrite=True)
            a[...] = data

    def read_many(self, path, sels):
        with self._config():
            a = self.zarr.open_array(path, mode="r")
            return [a[s] for s in sels]


class ZarrsImpl(H.ZarrsPipeline, ZarrPythonImpl):
    """zarr-python with the zarrs (Rust) codec pipeline; strict, so no silent fallback."""


class TensorstoreImpl(H.TensorstorePeer):
    def write(self, path, data, chunk, shard):
        self._create(path, {
            "shape": list(data.shape),
            "data_type": data.dtype.name,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [shard, shard]}},
            "chunk_key_encoding": {"name": "default"},
            "fill_value": 0,
            "codecs": [sharding_json(chunk)],
        }, data)

    def read_many(self, path, sels):
        t = self._open(path)
        return [t[s].read().result() for s in sels]


PEERS = (ZarrPythonImpl, TensorstoreImpl, ZarrsImpl)


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
    impls, skipped = H.available_impls(ZarrpyImpl(), PEERS, args.only)
    data = make_data(size)
    sels = random_chunks(size, chunk, args.reads)
    expected_random = [data[s] for s in sels]
    with H.Comparison("zarrpy-bench-sharding-", args.tmpdir) as c:
        print(f"array {size}x{size} uint16, inner chunks {chunk}x{chunk}, shards {shard}x{shard}, "
              f"zstd level {ZSTD_JSON['configuration']['level']}; {args.reads} random inner-chunk reads; "
              f"{repeats} repeats; in {c.work}")
        if skipped:
            print("skipped: " + "; ".join(skipped))
        zarr_ref = H.reference_peer(impls, ZarrPythonImpl)
        readers = [("zarr-python", zarr_ref.read), ("zarrpy", ZarrpyImpl().read)]

        def write_reference(path: str) -> None:
            zarr_ref.write(path, data, chunk, shard)
            _check_sharded(path, chunk, shard)

        ref = c.reference(write_reference, data.nbytes)
        H.check_zarrs_in_use(impls, ref)

        def verify_write(impl, path: str) -> None:
            _check_sharded(path, chunk, shard)
            c.check_written(impl.name, path, readers, data, check_equal, what="shard")

        def check_random(name: str, got: list) -> None:
            if len(got) != len(sels):
                raise AssertionError(f"{name}: {len(got)} results for {len(sels)} reads")
            for i, (g, e) in enumerate(zip(got, expected_random)):
                check_equal(f"{name} random read {i}", g, e)

        def measure(op: str, impl, rnd: int, verify: bool) -> float:
            if op == "write":
                return c.timed_write(impl, rnd, lambda path: impl.write(path, data, chunk, shard),
                                     (lambda path: verify_write(impl, path)) if verify else None)
            if op == "read":
                return c.timed_read(lambda: impl.read(ref), lambda got: check_equal(f"{impl.name} read", got, data))
            return c.timed_read(lambda: impl.read_many(ref, sels), lambda got: check_random(impl.name, got))

        times = H.run_rounds(impls, OPERATIONS, repeats, measure)
    return c.record(
        times, OPERATIONS, versions=H.versions(*PEER_DISTS), skipped=skipped,
        settings={"size": size, "chunk": chunk, "shard": shard, "repeats": repeats, "reads": args.reads,
                  "dtype": data.dtype.name, "codecs": sharding_json(chunk), "seed": SEED,
                  "raw_bytes": int(data.nbytes)})


# -- profile: zarrpy's phases, timed one by one ---------------------------------
def profile(args: argparse.Namespace) -> None:
    """Time zarrpy's pieces separately on one thread (medians of --repeats)."""
    from zarrpy.core.array_bytes import ArrayBytes
    from zarrpy.core.byte_range import RangeRequest, SuffixRequest
    from zarrpy.codecs.abc import ChunkSpec
    from zarrpy.stores.local import LocalStore

    size, chunk, shard = args.size, args.chunk, args.shard
    data = make_data(size)
    sels = random_chunks(size, chunk, args.reads)
    work = H.make_workdir("zarrpy-profile-sharding-", args.tmpdir)
    clock = H.PhaseClock()

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
            clock.add("random: index read + decode", t_index)
            clock.add("random: inner chunk range read", t_data)
            clock.add("random: inner chunk decode", t_decode)
            arr = clock("random: open_array", lambda: zarrpy.open_array(path, mode="r"))
            clock(f"random: {len(sels)} x a[sel] through the array", lambda: [arr[s] for s in sels])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"zarrpy phases, {size}x{size} uint16, inner {chunk}, shards {shard}, one thread unless "
          f"'through the array'; medians of {args.repeats} (ms)")
    width = max(len(k) for k in clock.phases)
    for name, ts in clock.phases.items():
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
    H.add_only_option(p)
    p.add_argument("--profile", action="store_true", help="time zarrpy's phases instead of comparing")
    H.add_output_options(p)
    args = p.parse_args(argv)
    if args.quick:
        args.size, args.chunk, args.shard, args.repeats, args.reads = 512, 64, 128, 2, 50
    if min(args.size, args.chunk, args.shard, args.repeats, args.reads) < 1:
        p.error("--size, --chunk, --shard, --reads and --repeats must be positive")
    if args.shard % args.chunk or args.size % args.shard:
        p.error("--shard must be a multiple of --chunk and --size a multiple of --shard")
    return H.run_and_report(args, run, OPERATIONS, profile)


if __name__ == "__main__":
    sys.exit(main())
