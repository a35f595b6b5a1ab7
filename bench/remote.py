"""Remote reads (and writes) at a latency floor: requests and round trips per engine.

    python bench/remote.py                    # HTTP, 20 ms before every answer, 5 rounds
    python bench/remote.py --s3               # also moto's S3 server: the reads and the writes
    python bench/remote.py --quick            # small arrays, 2 rounds: a smoke run (seconds)
    python bench/remote.py --markdown --latency 0.05 --only region inner-reads --json out.json

On an object store every request waits 10-100 ms, so what a read costs is its
number of *sequential round trips* and of requests. This benchmark serves the
same stores, written once by zarr-python (uint16, zstd level 3; the arrays
are ``_harness.make_data``'s smooth field plus noise), from a loopback HTTP
server (``http_server.py``) and, with ``--s3``, from moto's S3 server, both
sleeping ``--latency`` seconds before every answer and each in its own
process (``remote_servers.py``). Each engine reads them with its defaults:
zarrpy and zarr-python through fsspec (``http://`` and ``s3://`` URLs),
tensorstore through its ``http`` and ``s3`` kvstore drivers.

Workloads (default sizes; ``--quick`` shrinks them): a 2048² array in 256²
chunks, the same data in 1024² shards of 256² inner chunks, and 40 arrays of
128² in one chunk each:

* ``region``: open the chunked array and read ``[123:1123, 77:1077]``;
* ``sharded-read``: open the sharded array and read all of it;
* ``sharded-region``: open it and read the same window;
* ``inner-reads``: open it once, then read 40 distinct inner chunks (fixed
  seed) one after another; the time (the open included) is shown per read;
* ``small-one-by-one``: open and read the 40 small arrays one after another
  (time per array);
* ``small-batch``: the same 40 as one batch: ``zarrpy.concat(urls)``;
  tensorstore: every open issued as a future, then every read;
  zarr-python: ``asyncio.gather`` over its async API; then ``np.concatenate``;
* ``small-open-batch``: only open the 40 as a batch (``zarrpy.open_arrays``
  when zarrpy has it; the peers as above, without the reads);
* ``read``: open the chunked array and read all of it;
* ``write``, ``sharded-write`` (S3 only; the HTTP server is read-only):
  create the chunked (sharded) array under a fresh prefix and write all of it.

Each workload: one untimed warm-up round that checks every engine (a peer
that cannot run it is n/a, with the reason; written arrays must hold the
reference's keys and read back equal through zarr-python and zarrpy), then
``--rounds`` rounds in a rotating engine order. Every read, warm-up and timed,
is compared with the expected numpy data outside the timing; any mismatch
aborts the run. For every timing the server's log gives the operation's
requests and its round-trip depth (``http_server.round_trip_depth``: the
longest chain of requests each sent after the one before it was answered).
The table shows medians. fsspec's listing caches are emptied before every
timing, so no timing reuses what an earlier one listed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shutil
import statistics
import sys
import time
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: the shared harness and scripts
import _harness as H  # noqa: E402  (also puts the repository root on sys.path)
import bench_core  # noqa: E402
import bench_sharding  # noqa: E402
import run as bench_run  # noqa: E402
import zarrpy  # noqa: E402
from _harness import SEED, ZSTD_JSON, check_equal  # noqa: E402
from http_server import round_trip_depth  # noqa: E402
from remote_servers import S3_KEY, S3_REGION, S3_SECRET, ServerProcess  # noqa: E402

NotApplicable = bench_run.NotApplicable
BUCKET = "bench"
PEER_DISTS = ("numpy", "zarr", "tensorstore", "fsspec", "aiohttp", "s3fs", "moto")
ENGINE_NAMES = ("zarrpy", "tensorstore", "zarr-python")  # the table's column order
ENGINE_ALIASES = {"ts": "tensorstore", "zarr": "zarr-python"}


# -- configuration --------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    """Every size and setting of one run (``DEFAULT``, ``QUICK``; tests use a tiny one)."""

    size: int = 2048  # side of the square chunked and sharded arrays
    chunk: int = 256  # chunk side of the chunked array, inner-chunk side of the sharded one
    shard: int = 1024
    region: tuple[tuple[int, int], tuple[int, int]] = ((123, 1123), (77, 1077))
    n_inner: int = 40  # inner chunks read one by one on one opened array
    n_small: int = 40  # small arrays
    small: int = 128  # side of each small array (one chunk)
    latency: float = 0.020  # seconds slept before every answer
    rounds: int = 5


DEFAULT = Config()
QUICK = Config(size=512, chunk=64, shard=256, region=((31, 281), (19, 269)), n_inner=10, n_small=10, small=32,
               rounds=2)


def inner_selections(cfg: Config, seed: int = SEED) -> list[tuple[slice, slice]]:
    """``cfg.n_inner`` distinct inner chunks of the sharded array at random
    (fixed seed; repeats only when there are fewer inner chunks), as slices."""
    grid = cfg.size // cfg.chunk
    rng = np.random.default_rng(seed)
    picks = rng.choice(grid * grid, cfg.n_inner, replace=cfg.n_inner > grid * grid).tolist()
    c = cfg.chunk
    return [(slice(k // grid * c, (k // grid + 1) * c), slice(k % grid * c, (k % grid + 1) * c)) for k in picks]


# -- engines --------------------------------------------------------------------
# Each engine reads with the calls of bench_core / bench_sharding / run.py
# (``read``, ``read_region``, ``read_many``, ``read_all``), given URLs instead
# of paths, and adds the batches and the remote writes (no ``overwrite``: every
# write goes to a fresh prefix, so none pays for deleting an old array).
class ZarrpyRemote(bench_core.ZarrpyImpl, bench_sharding.ZarrpyImpl, bench_run.ZarrpySmall):
    name = "zarrpy"

    def batch(self, urls):
        buf = zarrpy.concat(urls)
        return getattr(buf, "nda", buf)

    def batch_open(self, urls):
        if not hasattr(zarrpy, "open_arrays"):
            raise NotApplicable("zarrpy has no open_arrays")
        return zarrpy.open_arrays(urls)

    def write(self, url, data, chunk, shard=None):
        a = zarrpy.create_array(url, shape=data.shape, dtype=data.dtype, chunks=(chunk, chunk),
                                shards=None if shard is None else (shard, shard), compressors=[ZSTD_JSON],
                                fill_value=0)
        a[...] = data


class ZarrPythonRemote(bench_core.ZarrPythonImpl, bench_sharding.ZarrPythonImpl, bench_run.ZarrPythonSmall):
    """zarr-python; its batches run on its own event loop (``zarr.core.sync.sync``)."""

    def _gather(self, urls, read: bool):
        from zarr.api import asynchronous as za
        from zarr.core.sync import sync

        async def one(url):
            a = await za.open_array(store=url, mode="r")
            return await a.getitem(Ellipsis) if read else a

        async def every():
            return await asyncio.gather(*(one(u) for u in urls))

        with self._config():
            return sync(every())

    def batch(self, urls):
        return np.concatenate(self._gather(urls, read=True))

    def batch_open(self, urls):
        return self._gather(urls, read=False)

    def write(self, url, data, chunk, shard=None):
        with self._config():
            a = self.zarr.create_array(url, shape=data.shape, dtype=data.dtype, chunks=(chunk, chunk),
                                       shards=None if shard is None else (shard, shard), compressors=[ZSTD_JSON],
                                       fill_value=0)
            a[...] = data


class TensorstoreRemote(bench_core.TensorstoreImpl, bench_sharding.TensorstoreImpl, bench_run.TensorstoreSmall):
    """tensorstore's zarr3 driver on the kvstore ``kvstore_of(url)`` gives
    (set by the backend that runs it)."""

    kvstore_of: Callable[[str], dict[str, Any]] | None = None

    def _spec(self, url):  # type: ignore[override]  (an instance method here: it needs the backend)
        if self.kvstore_of is None:
            raise RuntimeError("TensorstoreRemote.kvstore_of is not set")
        return {"driver": "zarr3", "kvstore": self.kvstore_of(url)}

    def _opened(self, urls):
        futures = [self.ts.open(self._spec(u), open=True, read=True) for u in urls]
        return [f.result() for f in futures]

    def batch(self, urls):
        reads = [t.read() for t in self._opened(urls)]
        return np.concatenate([r.result() for r in reads])

    def batch_open(self, urls):
        return self._opened(urls)

    def write(self, url, data, chunk, shard=None):
        grid = chunk if shard is None else shard
        codecs = [bench_sharding.sharding_json(chunk)] if shard else [bench_sharding.LE, ZSTD_JSON]
        spec = self._spec(url)
        spec["metadata"] = {
            "shape": list(data.shape), "data_type": data.dtype.name,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [grid, grid]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs,
        }
        self.ts.open(spec, create=True).result().write(data).result()


class Missing:
    """An engine that is not installed: every cell n/a with ``reason``."""

    def __init__(self, name: str, reason: str) -> None:
        self.name, self.missing = name, reason


def make_engines(wanted: Sequence[str] | None = None) -> list[Any]:
    """zarrpy, then every wanted peer (all when None) in the table's order;
    a peer that cannot be imported is a :class:`Missing`."""
    names = ENGINE_NAMES[1:] if wanted is None else [ENGINE_ALIASES.get(w, w) for w in wanted]
    unknown = set(names) - set(ENGINE_NAMES)
    if unknown:
        raise SystemExit(f"unknown engine(s) {sorted(unknown)}; choose from {', '.join(ENGINE_NAMES[1:])}")
    engines: list[Any] = [ZarrpyRemote()]
    for name, cls in (("tensorstore", TensorstoreRemote), ("zarr-python", ZarrPythonRemote)):
        if name in names:
            try:
                engines.append(cls())
            except ImportError as exc:
                engines.append(Missing(name, f"not installed ({exc})"))
    return engines


# -- backends ---------------------------------------------------------------------
def forget_listings() -> None:
    """Empty the listing cache of every fsspec filesystem instance (fsspec
    keeps instances between calls), so that no timing reuses what an
    earlier one listed."""
    from fsspec.spec import AbstractFileSystem

    todo: list[type] = [AbstractFileSystem]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        for fs in list(vars(cls).get("_cache", {}).values()):
            fs.invalidate_cache()


class HttpBackend:
    """The reference stores' directory served over HTTP (read-only)."""

    name = "http"
    label = "HTTP server"
    writable = False

    def __init__(self, root: Path, latency: float) -> None:
        self.server = ServerProcess("http", str(root), latency=latency)

    def url(self, name: str) -> str:
        return f"{self.server.url}/{name}"

    def kvstore(self, url: str) -> dict[str, Any]:
        return {"driver": "http", "base_url": url.rstrip("/") + "/"}

    @contextlib.contextmanager
    def clients(self) -> Iterator[None]:
        """The client settings this backend needs while it runs (none)."""
        yield

    def close(self) -> None:
        self.server.close()


class S3Backend:
    """moto's S3 server with a copy of every reference store in bucket ``bench`` (writable)."""

    name = "s3"
    label = "moto S3 server"
    writable = True

    def __init__(self, root: Path, latency: float) -> None:
        self.server = ServerProcess("s3", latency=0.0)
        try:
            with self.clients():
                fs = self.filesystem()
                fs.call_s3("create_bucket", Bucket=BUCKET)
                files = [p for p in root.rglob("*") if p.is_file()]
                fs.pipe({f"{BUCKET}/{p.relative_to(root).as_posix()}": p.read_bytes() for p in files})
            self.server.set_latency(latency)
        except BaseException:
            self.server.close()
            raise

    def url(self, name: str) -> str:
        return f"s3://{BUCKET}/{name}"

    def kvstore(self, url: str) -> dict[str, Any]:
        bucket, _, path = url.removeprefix("s3://").partition("/")
        return {"driver": "s3", "bucket": bucket, "path": path.rstrip("/") + "/", "endpoint": self.server.url,
                "aws_region": S3_REGION, "aws_credentials": {"type": "environment"}}

    def filesystem(self):
        """An s3fs filesystem on the server (call inside ``clients()``)."""
        import fsspec

        return fsspec.filesystem("s3")

    @contextlib.contextmanager
    def clients(self) -> Iterator[None]:
        """fsspec's ``s3`` defaults (endpoint, credentials, region) and the AWS
        environment variables (for tensorstore) pointing at the server."""
        import fsspec.config

        conf = {"key": S3_KEY, "secret": S3_SECRET, "endpoint_url": self.server.url,
                "client_kwargs": {"region_name": S3_REGION}}
        env = {"AWS_ACCESS_KEY_ID": S3_KEY, "AWS_SECRET_ACCESS_KEY": S3_SECRET, "AWS_REGION": S3_REGION}
        old_conf = fsspec.config.conf.get("s3")
        old_env = {k: os.environ.get(k) for k in env}
        fsspec.config.conf["s3"] = conf
        os.environ.update(env)
        try:
            yield
        finally:
            if old_conf is None:
                fsspec.config.conf.pop("s3", None)
            else:
                fsspec.config.conf["s3"] = old_conf
            for k, v in old_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def keys(self, url: str) -> set[str]:
        """The keys below ``url`` other than ``zarr.json``."""
        prefix = url.removeprefix("s3://").rstrip("/") + "/"
        return H.chunk_keys(k.removeprefix(prefix) for k in self.filesystem().find(prefix))

    def remove(self, url: str) -> None:
        self.filesystem().rm(url.removeprefix("s3://"), recursive=True)

    def close(self) -> None:
        self.server.close()


BACKENDS = {"http": HttpBackend, "s3": S3Backend}


# -- data and workloads ---------------------------------------------------------------
class Data:
    """The reference stores (written by zarr-python into ``root``) and what reading them must give."""

    PLAIN, SHARDED = "plain.zarr", "sharded.zarr"

    def __init__(self, cfg: Config, root: Path) -> None:
        import zarr

        self.cfg, self.root = cfg, root
        self.image = H.make_data(cfg.size)
        self.smalls = [H.make_data(cfg.small, SEED + 1 + k) for k in range(cfg.n_small)]
        self.small_names = [f"small/a{k:03d}.zarr" for k in range(cfg.n_small)]
        c = (cfg.chunk, cfg.chunk)
        self._write(zarr, self.PLAIN, self.image, chunks=c)
        self._write(zarr, self.SHARDED, self.image, chunks=c, shards=(cfg.shard, cfg.shard))
        for name, x in zip(self.small_names, self.smalls):
            self._write(zarr, name, x, chunks=x.shape)
        self.plain_keys = H.chunk_keys(H.stored_files(str(root / self.PLAIN)))
        self.sharded_keys = H.chunk_keys(H.stored_files(str(root / self.SHARDED)))

    def _write(self, zarr, name: str, x: np.ndarray, **kw) -> None:
        a = zarr.create_array(str(self.root / name), shape=x.shape, dtype=x.dtype, compressors=[ZSTD_JSON],
                              fill_value=0, **kw)
        a[...] = x

    @property
    def selection(self) -> tuple[slice, slice]:
        (r0, r1), (c0, c1) = self.cfg.region
        return slice(r0, r1), slice(c0, c1)


@dataclass
class Workload:
    """One row of a table: ``run(engine)`` is the timed call (for a write it
    takes the URL to write to); ``check(label, result)`` its read check."""

    key: str
    title: str
    run: Callable[[Any], Callable[..., Any]]
    check: Callable[[str, Any], None] | None = None
    items: int | None = None  # the time is shown per item: this many
    item_name: str = ""
    write: tuple[np.ndarray, int | None] | None = None  # (data, shard or None) for writes


WORKLOADS = ("region", "sharded-read", "sharded-region", "inner-reads", "small-one-by-one", "small-batch",
             "small-open-batch", "read", "write", "sharded-write")
WRITES = ("write", "sharded-write")


def _fmt_sel(sel: tuple[slice, slice]) -> str:
    return "[" + ", ".join(f"{s.start}:{s.stop}" for s in sel) + "]"


def make_workloads(data: Data, backend: Any, keys: Sequence[str]) -> list[Workload]:
    """The workloads ``keys`` (writes only on a writable backend), reading ``backend``'s copies of ``data``."""
    cfg, img, sel = data.cfg, data.image, data.selection
    plain, sharded = backend.url(Data.PLAIN), backend.url(Data.SHARDED)
    smalls = [backend.url(n) for n in data.small_names]
    sels = inner_selections(cfg)
    c, s, n = cfg.chunk, cfg.shard, cfg.n_small

    def equal(expected: np.ndarray) -> Callable[[str, Any], None]:
        return lambda label, got: check_equal(label, got, expected)

    def each_equal(expected: list[np.ndarray]) -> Callable[[str, Any], None]:
        def check(label: str, got: Any) -> None:
            if len(got) != len(expected):
                raise AssertionError(f"{label}: {len(got)} results, expected {len(expected)}")
            for k, (g, x) in enumerate(zip(got, expected)):
                check_equal(f"{label} [{k}]", g, x)
        return check

    def opened(label: str, got: Any) -> None:
        shapes = [tuple(int(d) for d in a.shape) for a in got]
        if shapes != [x.shape for x in data.smalls]:
            raise AssertionError(f"{label}: opened arrays of shapes {shapes[:3]}..., expected {data.smalls[0].shape}")

    all_w = {
        "region": Workload("region", f"region `{_fmt_sel(sel)}` of {cfg.size}², {c}² chunks",
                           lambda e: lambda: e.read_region(plain, sel), equal(img[sel])),
        "sharded-read": Workload("sharded-read", f"sharded full read ({s}² shards of {c}²)",
                                 lambda e: lambda: e.read(sharded), equal(img)),
        "sharded-region": Workload("sharded-region", "sharded region (same window)",
                                   lambda e: lambda: e.read_region(sharded, sel), equal(img[sel])),
        "inner-reads": Workload("inner-reads", f"{cfg.n_inner} separate reads of one inner chunk each, one opened array",
                                lambda e: lambda: e.read_many(sharded, sels), each_equal([img[x] for x in sels]),
                                items=cfg.n_inner, item_name="read"),
        "small-one-by-one": Workload("small-one-by-one", f"open + read {n} small arrays ({cfg.small}²) one by one",
                                     lambda e: lambda: e.read_all(smalls), each_equal(data.smalls),
                                     items=n, item_name="array"),
        "small-batch": Workload("small-batch", f"the same {n} arrays as a batch (zarrpy: `concat`; peers: all in flight)",
                                lambda e: lambda: e.batch(smalls), equal(np.concatenate(data.smalls))),
        "small-open-batch": Workload("small-open-batch", f"open the {n} arrays as a batch, no read (zarrpy: `open_arrays`)",
                                     lambda e: lambda: e.batch_open(smalls), opened),
        "read": Workload("read", f"plain full read ({cfg.size}², {c}² chunks)",
                         lambda e: lambda: e.read(plain), equal(img)),
        "write": Workload("write", f"write a plain array ({cfg.size}², {c}² chunks)",
                          lambda e: lambda url: e.write(url, img, c), write=(img, None)),
        "sharded-write": Workload("sharded-write", f"write a sharded array ({s}² shards of {c}²)",
                                  lambda e: lambda url: e.write(url, img, c, s), write=(img, s)),
    }
    return [all_w[k] for k in keys if k in all_w and (backend.writable or k not in WRITES)]


# -- timing -----------------------------------------------------------------------------
@dataclass
class Sample:
    seconds: float
    requests: int
    depth: int


class Runner:
    """Times one backend's workloads: each call's seconds, and its requests and
    round-trip depth from the server's log."""

    def __init__(self, data: Data, backend: Any, log: Callable[[str], None]) -> None:
        self.data, self.backend, self.log = data, backend, log
        self.writes = 0

    def measure(self, w: Workload, e: Any, verify: bool) -> Sample:
        call = w.run(e)
        target = None
        if w.write is not None:
            self.writes += 1
            target = self.backend.url(f"w/{w.key}-{e.name}-{self.writes}.zarr")
        forget_listings()
        self.backend.server.take()  # whatever came before is not this call's
        gc.collect()
        t0 = time.perf_counter()
        got = call() if target is None else call(target)
        dt = time.perf_counter() - t0
        entries = self.backend.server.take()
        sample = Sample(dt, len(entries), round_trip_depth(entries))
        if target is None:
            w.check(f"{self.backend.name} {e.name} {w.key}", got)
        else:
            self._after_write(w, e, target, verify)
        return sample

    def _after_write(self, w: Workload, e: Any, url: str, verify: bool) -> None:
        """Check a write (warm-up only: keys and values, read by zarr-python
        and zarrpy), then remove it; both at no latency."""
        latency = self.backend.server.latency
        self.backend.server.set_latency(0.0)
        try:
            if verify:
                data, shard = w.write
                expected_keys = self.data.plain_keys if shard is None else self.data.sharded_keys
                forget_listings()
                if self.backend.keys(url) != expected_keys:
                    raise AssertionError(f"{self.backend.name} {e.name} {w.key}: other keys than zarr-python's")
                import zarr

                check_equal(f"{e.name} {w.key}, read by zarr-python", zarr.open_array(url, mode="r")[...], data)
                check_equal(f"{e.name} {w.key}, read by zarrpy", zarrpy.open_array(url, mode="r")[...], data)
            self.backend.remove(url)
        finally:
            self.backend.server.set_latency(latency)

    def workload(self, w: Workload, engines: Sequence[Any], rounds: int) -> dict[str, Any]:
        """Warm-up (checks; a peer that cannot run ``w`` becomes n/a), then
        ``rounds`` rounds in a rotating engine order."""
        t0 = time.perf_counter()
        na, checked, samples = rotating_rounds(engines, rounds, lambda e, verify: self.measure(w, e, verify=verify))
        checks = len(checked) + sum(len(ss) for ss in samples.values())
        res = {
            "key": w.key, "title": w.title, "items": w.items, "item_name": w.item_name, "na": na, "checks": checks,
            "times_s": {n: [x.seconds for x in ss] for n, ss in samples.items()},
            "requests_all": {n: [x.requests for x in ss] for n, ss in samples.items()},
            "depth_all": {n: [x.depth for x in ss] for n, ss in samples.items()},
        }
        res["median_s"] = {n: statistics.median(ts) for n, ts in res["times_s"].items()}
        res["requests"] = {n: statistics.median(v) for n, v in res["requests_all"].items()}
        res["depth"] = {n: statistics.median(v) for n, v in res["depth_all"].items()}
        self.log(f"{self.backend.name} {w.key}: " + ", ".join(
            f"{n} {res['median_s'][n] * 1e3:.0f} ms / {res['requests'][n]:g} req / {res['depth'][n]:g} rt"
            for n in samples) + f"  [{time.perf_counter() - t0:.1f} s]")
        return res


def run_benchmark(cfg: Config, *, backends: Sequence[str] = ("http",), workloads: Sequence[str] | None = None,
                  engines: Sequence[Any] | None = None, tmpdir: str | None = None,
                  log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run ``workloads`` (keys; all when None) with ``engines`` (``make_engines()``
    when None) on every backend of ``backends`` (``"http"``, ``"s3"``); return
    the JSON-ready result."""
    engines = list(engines) if engines is not None else make_engines()
    if engines[0].name != "zarrpy":
        raise ValueError("the first engine must be zarrpy")
    keys = list(workloads) if workloads is not None else list(WORKLOADS)
    work = H.make_workdir("zarrpy-bench-remote-", tmpdir)
    load_before = H.warn_if_loaded()
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    tables = []
    try:
        data = Data(cfg, work)
        log(f"reference stores written ({time.perf_counter() - t0:.1f} s); engines "
            f"{', '.join(e.name for e in engines)}; {cfg.rounds} rounds at {cfg.latency * 1e3:g} ms per request")
        for name in backends:
            backend = BACKENDS[name](work, cfg.latency)
            try:
                with backend.clients():
                    for e in engines:
                        if isinstance(e, TensorstoreRemote):
                            e.kvstore_of = backend.kvstore
                    runner = Runner(data, backend, log)
                    rows = [runner.workload(w, engines, cfg.rounds) for w in make_workloads(data, backend, keys)]
            finally:
                backend.close()
            tables.append({"backend": name, "label": backend.label, "workloads": rows})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "date": date, "machine": H.machine(load_before), "versions": H.versions(*PEER_DISTS),
        "zarrpy_commit": H.git_commit(), "zarrpy_dirty": bench_run.zarrpy_dirty(),
        "zarrpy_has": {f: hasattr(zarrpy, f) for f in ("concat", "open_arrays")},
        "engines": [e.name for e in engines], "config": asdict(cfg), "seconds": time.perf_counter() - t0,
        "tables": tables,
    }


# -- reporting ------------------------------------------------------------------------------
def _count(values: list[int], median: float) -> str:
    """A median count, with its range when the rounds disagree."""
    lo, hi = min(values), max(values)
    return f"{median:g}" if lo == hi else f"{median:g} ({lo}–{hi})"


def format_table(table: dict[str, Any], names: Sequence[str]) -> str:
    """One backend's Markdown table: median time per engine, then the
    requests and round trips per operation, engine by engine."""
    header = (["workload (uint16, zstd)"] + list(names)
              + [f"requests ({' / '.join(names)})", f"round trips ({' / '.join(names)})"])
    rows = []
    for r in table["workloads"]:
        cells = [r["title"]]
        for n in names:
            if n in r["median_s"]:
                t = r["median_s"][n]
                cells.append(f"{bench_run._ms(t / r['items'])} ms/{r['item_name']}" if r["items"]
                             else f"{bench_run._ms(t)} ms")
            else:
                cells.append("n/a")
        for what in ("requests", "depth"):
            cells.append(" / ".join(_count(r[f"{what}_all"][n], r[what][n]) if n in r[what] else "n/a"
                                    for n in names))
        rows.append(cells)
    sep = "|---|" + "|".join("--:" for _ in header[1:]) + "|"
    return "\n".join(["| " + " | ".join(header) + " |", sep, *("| " + " | ".join(c) + " |" for c in rows)])


def format_notes(result: dict[str, Any]) -> str:
    lines = []
    reasons: dict[str, list[str]] = {}
    for t in result["tables"]:
        for r in t["workloads"]:
            for n, why in r["na"].items():
                reasons.setdefault(f"{n}: {why}", []).append(f"{t['backend']} {r['key']}")
    for why, where in reasons.items():
        lines.append(f"* n/a, {why} ({', '.join(where)})")
    if not any(t["backend"] == "s3" for t in result["tables"]):
        lines.append("* writes: only on S3 (the HTTP server is read-only); run with `--s3`")
    return "\n".join(lines)


def format_header(result: dict[str, Any]) -> str:
    m, v, cfg = result["machine"], result["versions"], result["config"]
    (r0, r1), (c0, c1) = cfg["region"]
    return "\n".join([
        f"Run of {result['date']} (UTC), zarrpy commit `{result['zarrpy_commit']}`"
        + (" plus uncommitted changes in zarrpy/" if result.get("zarrpy_dirty") else "")
        + f", {cfg['rounds']} rounds, {result['seconds'] / 60:.1f} min in all; "
        f"{cfg['latency'] * 1e3:g} ms slept before every answer.",
        f"Machine: {m['platform']}, {m['cpu_count']} CPUs; load average {m['loadavg_before']} before, "
        f"{m['loadavg_after']} after. Versions: " + ", ".join(f"{k} {x}" for k, x in v.items()) + ".",
        f"Arrays: {cfg['size']}² uint16 in {cfg['chunk']}² chunks, the same in {cfg['shard']}² shards of "
        f"{cfg['chunk']}², {cfg['n_small']} arrays of {cfg['small']}² in one chunk; window "
        f"[{r0}:{r1}, {c0}:{c1}]; {cfg['n_inner']} inner chunks. zarrpy has "
        + ", ".join(f"{f}: {'yes' if has else 'no'}" for f, has in result["zarrpy_has"].items()) + ".",
        "",
        "Cells: median over the rounds (per item where it says so); requests and round trips per "
        "operation, as the server logged them (a range when the rounds differ).",
    ])


def report_markdown(result: dict[str, Any]) -> str:
    names = result["engines"]
    parts = [format_header(result)]
    for t in result["tables"]:
        parts += [f"**{t['label']}** (`{t['backend']}`)", format_table(t, names)]
    notes = format_notes(result)
    return "\n\n".join(parts + ([notes] if notes else []))


def expand_only(only: Sequence[str] | None) -> list[str]:
    """The workload keys ``--only`` names (all when empty)."""
    if not only:
        return list(WORKLOADS)
    unknown = [k for k in only if k not in WORKLOADS]
    if unknown:
        raise SystemExit(f"unknown workload(s) {unknown}; choose from {', '.join(WORKLOADS)}")
    return [k for k in WORKLOADS if k in only]


def rotating_rounds(engines: Sequence[Any], rounds: int, measure: Callable[[Any, bool], Any]
                    ) -> tuple[dict[str, str], dict[str, Any], dict[str, list[Any]]]:
    """Each engine measured once with ``verify=True`` (a peer that cannot run
    the workload becomes n/a; zarrpy failing is an error), then ``rounds``
    rounds with the engine order rotating each round:
    ``(n/a reasons, each engine's checked measure, samples per engine)``."""
    na: dict[str, str] = {}
    checked: dict[str, Any] = {}
    active = []
    for e in engines:
        if getattr(e, "missing", None):
            na[e.name] = e.missing
            continue
        try:
            checked[e.name] = measure(e, True)
        except AssertionError:
            raise
        except Exception as exc:
            if e.name == "zarrpy" and not isinstance(exc, NotApplicable):
                raise
            na[e.name] = bench_run._reason(exc)
            continue
        active.append(e)
    samples: dict[str, list[Any]] = {e.name: [] for e in active}
    for rnd in range(rounds if active else 0):
        k = rnd % len(active)
        for e in active[k:] + active[:k]:
            samples[e.name].append(measure(e, False))
    return na, checked, samples


def parse_command_line(argv: list[str] | None, doc: str, workloads: Sequence[str], quick: Any, default: Any,
                       *, add_arguments: Callable[[argparse.ArgumentParser], None] = lambda p: None,
                       only_choices: Sequence[str] | None = None) -> tuple[argparse.Namespace, Any, Callable[[str], None]]:
    """The remote benchmarks' common command line: ``(args, config, log)``
    (``config`` is ``quick`` or ``default`` with ``--rounds``/``--latency``;
    ``log`` prints progress, to stderr under ``--markdown``)."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="workloads: " + ", ".join(workloads))
    p.add_argument("--quick", action="store_true", help=f"small arrays, {quick.rounds} round(s) (a smoke run)")
    add_arguments(p)
    p.add_argument("--latency", type=float, help=f"seconds slept before every answer (default {default.latency})")
    p.add_argument("--rounds", type=int, help=f"timed rounds (default {default.rounds}; --quick {quick.rounds})")
    p.add_argument("--only", nargs="+", metavar="WORKLOAD", choices=only_choices, help="run only these workloads")
    p.add_argument("--engines", nargs="+", metavar="ENGINE", help="peers besides zarrpy: tensorstore, zarr-python")
    p.add_argument("--markdown", action="store_true",
                   help="print only the Markdown report (header, tables, notes); progress goes to stderr")
    p.add_argument("--json", metavar="PATH", help="also save every time, count and median as JSON")
    p.add_argument("--tmpdir", help="parent directory of the temporary stores")
    args = p.parse_args(argv)
    cfg = quick if args.quick else default
    if args.rounds is not None:
        if args.rounds < 1:
            p.error("--rounds must be positive")
        cfg = replace(cfg, rounds=args.rounds)
    if args.latency is not None:
        if args.latency < 0:
            p.error("--latency must not be negative")
        cfg = replace(cfg, latency=args.latency)
    log = (lambda s: print(s, file=sys.stderr, flush=True)) if args.markdown else (lambda s: print(s, flush=True))
    return args, cfg, log


def peers(args: argparse.Namespace) -> list[str] | None:
    """The ``--engines`` asked for besides zarrpy (None: every one)."""
    return None if args.engines is None else [e for e in args.engines if e != "zarrpy"]


def report(result: dict[str, Any], markdown: str, args: argparse.Namespace, log: Callable[[str], None]) -> int:
    """Print the Markdown report and save the JSON when asked."""
    if not args.markdown:
        print()
    print(markdown)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        log(f"saved {args.json}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args, cfg, log = parse_command_line(
        argv, __doc__, WORKLOADS, QUICK, DEFAULT,
        add_arguments=lambda p: p.add_argument("--s3", action="store_true",
                                               help="also run on moto's S3 server (reads and writes)"))
    result = run_benchmark(cfg, backends=("http", "s3") if args.s3 else ("http",), workloads=expand_only(args.only),
                           engines=make_engines(peers(args)), tmpdir=args.tmpdir, log=log)
    return report(result, report_markdown(result), args, log)


if __name__ == "__main__":
    sys.exit(main())
