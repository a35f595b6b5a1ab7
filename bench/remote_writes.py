"""Remote writes at a latency floor: requests by method and round trips per engine (issue 29).

    python bench/remote_writes.py               # moto S3, 20 ms before every answer, 3 rounds
    python bench/remote_writes.py --quick       # small arrays, 1 round: a smoke run (seconds)
    python bench/remote_writes.py --markdown --latency 0.05 --only write fill-plain --json out.json

On an object store a write costs its requests (PUTs, and whatever is asked
before them: node checks, listings, reads of the shards it updates) and its
sequential round trips. This benchmark runs zarrpy, tensorstore and
zarr-python against moto's S3 server in its own process, sleeping
``--latency`` before every answer (the server, the engines' S3 clients and
the request log are ``remote.py``'s: ``remote_servers.py``). Workloads
(default sizes; ``--quick`` shrinks them), uint16 with zstd level 3 and
fill value 0, on ``_harness.make_data``'s image:

* ``write``: create a 2048² array in 256² chunks under a fresh prefix and
  write all of it;
* ``sharded-write``: the same in 1024² shards of 256² inner chunks;
* ``partial-sharded``: open an existing sharded array and write
  ``[0:256, 768:1280]``: one inner chunk in each of two shards;
* ``fill-plain``, ``fill-sharded``: open an existing array (chunked,
  sharded) and write the fill value everywhere, so that every chunk
  (shard) is deleted.

The existing arrays are written once by zarr-python into a local directory
and copied under a fresh prefix before each timing (at no latency, outside
the timing), so every engine updates the very same bytes. One untimed
warm-up round checks every engine: what it stored must read back equal
through zarr-python and zarrpy, and a creating write must leave
zarr-python's keys; the keys a fill write leaves are reported. Then
``--rounds`` rounds in a rotating engine order. The server's log gives each
operation's requests (by kind: ``GET``, ``HEAD``, ``PUT``, ``DELETE``,
``LIST``, ``DeleteObjects``, multipart steps; with the failed ones, e.g.
404 for a GET of a missing key) and its round-trip depth
(``http_server.round_trip_depth``). The table shows medians.
"""

from __future__ import annotations

import collections
import gc
import shutil
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence
from urllib.parse import parse_qs

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: the shared harness and scripts
import _harness as H  # noqa: E402  (also puts the repository root on sys.path)
import remote  # noqa: E402
import run as bench_run  # noqa: E402
import zarrpy  # noqa: E402
from _harness import SEED, ZSTD_JSON, check_equal  # noqa: E402
from http_server import LoggedRequest, round_trip_depth  # noqa: E402

WORKLOADS = ("write", "sharded-write", "partial-sharded", "fill-plain", "fill-sharded")
PEER_DISTS = ("numpy", "zarr", "tensorstore", "fsspec", "s3fs", "moto")


@dataclass(frozen=True)
class Config:
    """Every size and setting of one run (``DEFAULT``, ``QUICK``; tests use a tiny one)."""

    size: int = 2048  # side of the square arrays
    chunk: int = 256  # chunk side of the chunked array, inner-chunk side of the sharded one
    shard: int = 1024
    latency: float = 0.020  # seconds slept before every answer
    rounds: int = 3


DEFAULT = Config()
QUICK = Config(size=512, chunk=64, shard=256, rounds=1)


# -- engines: remote.py's creating writes, plus a write into an existing array --------
class ZarrpyWrites(remote.ZarrpyRemote):
    def update(self, url: str, sel: tuple[slice, ...], value: np.ndarray) -> None:
        zarrpy.open_array(url, mode="r+")[sel] = value


class ZarrPythonWrites(remote.ZarrPythonRemote):
    def update(self, url: str, sel: tuple[slice, ...], value: np.ndarray) -> None:
        with self._config():
            self.zarr.open_array(url, mode="r+")[sel] = value


class TensorstoreWrites(remote.TensorstoreRemote):
    def update(self, url: str, sel: tuple[slice, ...], value: np.ndarray) -> None:
        t = self.ts.open(self._spec(url), open=True, read=True, write=True).result()
        t[sel].write(value).result()


def make_engines(wanted: Sequence[str] | None = None) -> list[Any]:
    """zarrpy, then every wanted peer (all when None), as :func:`remote.make_engines` names them."""
    classes = {"zarrpy": ZarrpyWrites, "tensorstore": TensorstoreWrites, "zarr-python": ZarrPythonWrites}
    out = []
    for e in remote.make_engines(wanted):
        out.append(e if isinstance(e, remote.Missing) else classes[e.name]())
    return out


# -- what the server saw ---------------------------------------------------------------
def request_kind(entry: LoggedRequest) -> str:
    """What an S3 request was: ``LIST``, ``DeleteObjects``, a multipart step
    (``upload-start``, ``upload-part``, ``upload-complete``, ``upload-abort``)
    or its HTTP method."""
    _, _, query = entry.path.partition("?")
    q = parse_qs(query, keep_blank_values=True)
    if entry.method == "GET" and ("list-type" in q or "prefix" in q or "delimiter" in q):
        return "LIST"
    if entry.method == "POST" and "delete" in q:
        return "DeleteObjects"
    if entry.method == "POST" and "uploads" in q:
        return "upload-start"
    if entry.method == "PUT" and "partNumber" in q:
        return "upload-part"
    if entry.method == "POST" and "uploadId" in q:
        return "upload-complete"
    if entry.method == "DELETE" and "uploadId" in q:
        return "upload-abort"
    return entry.method


@dataclass
class Sample:
    seconds: float
    requests: int
    depth: int
    kinds: dict[str, int] = field(default_factory=dict)
    """Requests by :func:`request_kind`; a failed one (status >= 400) also
    counts under ``"<kind> <status>"``."""


def sample_of(seconds: float, entries: list[LoggedRequest]) -> Sample:
    kinds: collections.Counter[str] = collections.Counter()
    for e in entries:
        kind = request_kind(e)
        kinds[kind] += 1
        if e.status >= 400:
            kinds[f"{kind} {e.status}"] += 1
    return Sample(seconds, len(entries), round_trip_depth(entries), dict(kinds))


# -- workloads -------------------------------------------------------------------------
class Data:
    """The image, the patch of ``partial-sharded`` and the existing arrays
    (written by zarr-python into ``root``)."""

    PLAIN, SHARDED = "plain.zarr", "sharded.zarr"

    def __init__(self, cfg: Config, root: Path) -> None:
        import zarr

        self.cfg, self.root = cfg, root
        self.image = H.make_data(cfg.size)
        c, s = cfg.chunk, cfg.shard
        # inner chunk (0, s/c - 1) of shard (0, 0) and inner chunk (0, s/c) of shard (0, 1)
        self.patch_sel = (slice(0, c), slice(s - c, s + c))
        self.patch = H.make_data(cfg.size, SEED + 7)[self.patch_sel]
        self.patched = self.image.copy()
        self.patched[self.patch_sel] = self.patch
        for name, shards in ((self.PLAIN, None), (self.SHARDED, (s, s))):
            a = zarr.create_array(str(root / name), shape=self.image.shape, dtype=self.image.dtype, chunks=(c, c),
                                  shards=shards, compressors=[ZSTD_JSON], fill_value=0)
            a[...] = self.image
        self.keys = {name: H.chunk_keys(H.stored_files(str(root / name))) for name in (self.PLAIN, self.SHARDED)}

    def files(self, name: str) -> dict[str, bytes]:
        """The existing array ``name``'s objects: relative key -> bytes."""
        base = self.root / name
        return {p.relative_to(base).as_posix(): p.read_bytes() for p in base.rglob("*") if p.is_file()}


@dataclass
class Workload:
    """One row group of the table: ``run(engine, url)`` is the timed call;
    ``source`` the existing array copied to ``url`` first (None: a fresh
    prefix); ``expected`` what the array holds afterwards; ``keys`` the
    chunk keys it must have (None: reported, not checked)."""

    key: str
    title: str
    run: Callable[[Any, str], None]
    source: str | None
    expected: np.ndarray
    keys: set[str] | None


def make_workloads(data: Data, keys: Sequence[str]) -> list[Workload]:
    cfg, img = data.cfg, data.image
    c, s = cfg.chunk, cfg.shard
    zeros = np.zeros_like(img)
    sel = data.patch_sel
    all_w = {
        "write": Workload("write", f"create + write {cfg.size}², {c}² chunks",
                          lambda e, url: e.write(url, img, c), None, img, data.keys[Data.PLAIN]),
        "sharded-write": Workload("sharded-write", f"create + write {cfg.size}², {s}² shards of {c}²",
                                  lambda e, url: e.write(url, img, c, s), None, img, data.keys[Data.SHARDED]),
        "partial-sharded": Workload("partial-sharded", f"open the sharded array, write `[{sel[0].start}:{sel[0].stop}, "
                                    f"{sel[1].start}:{sel[1].stop}]` (an inner chunk of two shards)",
                                    lambda e, url: e.update(url, sel, data.patch), Data.SHARDED, data.patched,
                                    data.keys[Data.SHARDED]),
        "fill-plain": Workload("fill-plain", f"open the {c}²-chunk array, write fill everywhere (chunks deleted)",
                               lambda e, url: e.update(url, (slice(None),) * 2, zeros), Data.PLAIN, zeros, None),
        "fill-sharded": Workload("fill-sharded", "open the sharded array, write fill everywhere (shards deleted)",
                                 lambda e, url: e.update(url, (slice(None),) * 2, zeros), Data.SHARDED, zeros, None),
    }
    return [all_w[k] for k in keys]


# -- timing ----------------------------------------------------------------------------
class Runner:
    """Times the workloads on one S3 backend."""

    def __init__(self, data: Data, backend: remote.S3Backend, log: Callable[[str], None]) -> None:
        self.data, self.backend, self.log = data, backend, log
        self.count = 0

    def _at_no_latency(self, fn: Callable[[], Any]) -> Any:
        latency = self.backend.server.latency
        self.backend.server.set_latency(0.0)
        try:
            return fn()
        finally:
            self.backend.server.set_latency(latency)

    def measure(self, w: Workload, e: Any, verify: bool) -> tuple[Sample, int]:
        """One timed call; (its sample, the chunk keys it left when ``verify``, else -1)."""
        self.count += 1
        url = self.backend.url(f"w/{w.key}-{e.name}-{self.count}.zarr")
        if w.source is not None:
            prefix = url.removeprefix("s3://")
            files = {f"{prefix}/{k}": v for k, v in self.data.files(w.source).items()}
            self._at_no_latency(lambda: self.backend.filesystem().pipe(files))
        remote.forget_listings()
        self.backend.server.take()  # whatever came before is not this call's
        gc.collect()
        t0 = time.perf_counter()
        w.run(e, url)
        dt = time.perf_counter() - t0
        sample = sample_of(dt, self.backend.server.take())
        left = self._at_no_latency(lambda: self._check_and_remove(w, e, url, verify))
        return sample, left

    def _check_and_remove(self, w: Workload, e: Any, url: str, verify: bool) -> int:
        left = -1
        if verify:
            import zarr

            remote.forget_listings()
            keys = self.backend.keys(url)
            if w.keys is not None and keys != w.keys:
                raise AssertionError(f"{e.name} {w.key}: other keys than zarr-python's "
                                     f"({len(keys)} against {len(w.keys)})")
            left = len(keys)
            check_equal(f"{e.name} {w.key}, read by zarr-python", zarr.open_array(url, mode="r")[...], w.expected)
            check_equal(f"{e.name} {w.key}, read by zarrpy", zarrpy.open_array(url, mode="r")[...], w.expected)
        self.backend.remove(url)
        return left

    def workload(self, w: Workload, engines: Sequence[Any], rounds: int) -> dict[str, Any]:
        """Warm-up (checks; a peer that cannot run ``w`` becomes n/a), then
        ``rounds`` rounds in a rotating engine order."""
        t0 = time.perf_counter()
        na, checked, measured = remote.rotating_rounds(engines, rounds,
                                                       lambda e, verify: self.measure(w, e, verify=verify))
        left: dict[str, int] = {n: keys_left for n, (_, keys_left) in checked.items()}
        samples: dict[str, list[Sample]] = {n: [s for s, _ in ss] for n, ss in measured.items()}
        res: dict[str, Any] = {"key": w.key, "title": w.title, "na": na, "keys_left": left,
                               "samples": {n: [asdict(x) for x in ss] for n, ss in samples.items()}}
        res["median_s"] = {n: statistics.median(x.seconds for x in ss) for n, ss in samples.items()}
        res["requests"] = {n: statistics.median(x.requests for x in ss) for n, ss in samples.items()}
        res["depth"] = {n: statistics.median(x.depth for x in ss) for n, ss in samples.items()}
        res["kinds"] = {n: {k: statistics.median(x.kinds.get(k, 0) for x in ss)
                            for k in sorted({k for x in ss for k in x.kinds})} for n, ss in samples.items()}
        self.log(f"{w.key}: " + ", ".join(
            f"{n} {res['median_s'][n] * 1e3:.0f} ms / {res['requests'][n]:g} req / {res['depth'][n]:g} rt"
            for n in samples) + f"  [{time.perf_counter() - t0:.1f} s]")
        return res


def run_benchmark(cfg: Config, *, workloads: Sequence[str] | None = None, engines: Sequence[Any] | None = None,
                  tmpdir: str | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run ``workloads`` (keys; all when None) with ``engines`` (``make_engines()``
    when None) on moto's S3 server; return the JSON-ready result."""
    engines = list(engines) if engines is not None else make_engines()
    if engines[0].name != "zarrpy":
        raise ValueError("the first engine must be zarrpy")
    keys = list(workloads) if workloads is not None else list(WORKLOADS)
    work = H.make_workdir("zarrpy-bench-writes-", tmpdir)
    load_before = H.warn_if_loaded()
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    try:
        data = Data(cfg, work / "ref")
        (work / "bucket").mkdir()  # the bucket starts empty: every workload copies what it needs
        backend = remote.S3Backend(work / "bucket", cfg.latency)
        try:
            with backend.clients():
                for e in engines:
                    if isinstance(e, remote.TensorstoreRemote):
                        e.kvstore_of = backend.kvstore
                runner = Runner(data, backend, log)
                rows = [runner.workload(w, engines, cfg.rounds) for w in make_workloads(data, keys)]
        finally:
            backend.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "date": date, "machine": H.machine(load_before), "versions": H.versions(*PEER_DISTS),
        "zarrpy_commit": H.git_commit(), "zarrpy_dirty": bench_run.zarrpy_dirty(),
        "engines": [e.name for e in engines], "config": asdict(cfg), "seconds": time.perf_counter() - t0,
        "workloads": rows,
    }


# -- reporting ---------------------------------------------------------------------------
def _kinds(kinds: dict[str, float]) -> str:
    """``PUT 64, GET 3 (404: 3)``: requests by kind, most first, failures in brackets."""
    plain = sorted(((k, n) for k, n in kinds.items() if " " not in k and n), key=lambda kn: (-kn[1], kn[0]))
    out = []
    for k, n in plain:
        failed = ", ".join(f"{f.split(' ', 1)[1]}: {m:g}" for f, m in kinds.items() if f.startswith(k + " ") and m)
        out.append(f"{k} {n:g}" + (f" ({failed})" if failed else ""))
    return ", ".join(out)


def format_table(result: dict[str, Any]) -> str:
    rows = ["| workload | engine | time | requests | round trips | requests by kind (failed: status) |",
            "|---|---|--:|--:|--:|---|"]
    for r in result["workloads"]:
        for n in result["engines"]:
            if n not in r["median_s"]:
                rows.append(f"| {r['title']} | {n} | n/a | | | |")
                continue
            rows.append(f"| {r['title']} | {n} | {bench_run._ms(r['median_s'][n])} ms | {r['requests'][n]:g} | "
                        f"{r['depth'][n]:g} | {_kinds(r['kinds'][n])} |")
    return "\n".join(rows)


def format_notes(result: dict[str, Any]) -> str:
    lines = []
    for r in result["workloads"]:
        for n, why in r["na"].items():
            lines.append(f"* n/a, {n} {r['key']}: {why}")
        if r["key"].startswith("fill-"):
            left = ", ".join(f"{n} {k}" for n, k in r["keys_left"].items())
            lines.append(f"* {r['key']}: chunk keys left after writing fill: {left}")
    return "\n".join(lines)


def report_markdown(result: dict[str, Any]) -> str:
    m, v, cfg = result["machine"], result["versions"], result["config"]
    header = "\n".join([
        f"Run of {result['date']} (UTC), zarrpy commit `{result['zarrpy_commit']}`"
        + (" plus uncommitted changes in zarrpy/" if result.get("zarrpy_dirty") else "")
        + f", moto S3 server, {cfg['latency'] * 1e3:g} ms slept before every answer, {cfg['rounds']} rounds, "
        f"{result['seconds'] / 60:.1f} min in all.",
        f"Machine: {m['platform']}, {m['cpu_count']} CPUs; load average {m['loadavg_before']} before, "
        f"{m['loadavg_after']} after. Versions: " + ", ".join(f"{k} {x}" for k, x in v.items()) + ".",
        "Cells: medians over the rounds; requests and round trips per operation, as the server logged them.",
    ])
    notes = format_notes(result)
    return "\n\n".join([header, format_table(result)] + ([notes] if notes else []))


def main(argv: list[str] | None = None) -> int:
    args, cfg, log = remote.parse_command_line(argv, __doc__, WORKLOADS, QUICK, DEFAULT, only_choices=WORKLOADS)
    only = [k for k in WORKLOADS if args.only is None or k in args.only]
    result = run_benchmark(cfg, workloads=only, engines=make_engines(remote.peers(args)), tmpdir=args.tmpdir, log=log)
    return remote.report(result, report_markdown(result), args, log)


if __name__ == "__main__":
    sys.exit(main())
