"""Processes writing disjoint inner chunks of shared shards lose nothing, with
no synchronizer (issue 29).

Four processes, started together behind a barrier, each own a fixed set of
inner chunks spread over every shard of one array (64x64 int32, inner
chunks 8x8, shards 32x32: four shards of 16 inner chunks, four of each
shard's per process) and write them in 6 rounds, each with values of its
own (the round and the chunk), meeting at the barrier between rounds so
that they contend: every round each process reads, merges and rewrites all
four shards while the three others do. Even rounds write the process's 16
inner chunks in one call (one update per shard), odd rounds one
``a.inner_blocks[i, j] = ...`` at a time (16 updates). Without protection,
the last of two overlapping updates of a shard drops the other's inner
chunk; nothing may be lost here:

* on S3 (moto's server) every update is a conditional write: a shard
  stored over another writer's version is refused (``412``), re-read,
  merged again and retried. ``zarrpy.pipeline.optimistic.conflict_count()``
  counts the refusals in each process; summed over the processes it must be
  above 0, which shows the writes did contend and were saved by the
  condition, not by luck;
* on a local directory (``LocalStore``) each update holds the shard's
  cross-process update lock (``Store.locked_for_update``): no conflict is
  expected there (none is counted), only nothing lost;
* a dask ``distributed`` cluster of two worker processes writes a dask
  array whose blocks are smaller than a shard and do not align to shards or
  inner chunks to S3 through ``zarrpy.dask.to_zarr``, with no lock: it must
  store exactly the numpy data.

**Why moto runs single-threaded here.** moto's ``put_object``
(``moto/s3/responses.py``) checks ``If-Match`` / ``If-None-Match`` against
the stored object and then stores the new one, without a lock between the
two. In a threaded server two conditional PUTs of one shard can both pass
the check before either stores, and one update is lost by the server itself
(real S3 makes the check and the write one atomic step). A server that
answers one request at a time makes moto's check atomic, so a lost update
here is zarrpy's. It still contends: a writer's read and its conditional
write are separate requests, and the other writers' requests fall between
them.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import threading
import time
import uuid
from typing import Any, Iterator

import numpy as np
import pytest

dask = pytest.importorskip("dask")  # the test extras have them; the minimum-versions smoke run has neither
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
Client, LocalCluster = distributed.Client, distributed.LocalCluster

import zarrpy
import zarrpy.dask as zd
from zarrpy.errors import ChunkAlignmentError
from zarrpy.stores.memory import MemoryStore

from tests.stores.s3_server import BUCKET, DUMMY_ENV, _make_bucket, _one_server_header

N_PROCS, ROUNDS = 4, 6
SHAPE, INNER, SHARD = (64, 64), (8, 8), (32, 32)
GRID = (SHAPE[0] // INNER[0], SHAPE[1] // INNER[1])  # 8 x 8 inner chunks
TIMEOUT = 60  # seconds: any one process, barrier wait or computation


# -- the workload -----------------------------------------------------------------
def owned(proc: int) -> list[tuple[int, int]]:
    """Process ``proc``'s inner chunks: every N_PROCS-th in row-major order,
    so each shard row holds one of each process's (4 per shard)."""
    return [(i, j) for i in range(GRID[0]) for j in range(GRID[1]) if (i * GRID[1] + j) % N_PROCS == proc]


def value(rnd: int, i: int, j: int) -> int:
    """What round ``rnd`` writes into inner chunk ``(i, j)``: never the fill value, never twice the same."""
    return 1 + rnd * 1000 + i * GRID[1] + j


def _writer(url: str, storage_options: dict[str, Any] | None, proc: int, barrier: Any, results: Any,
            synchronizer: Any = None, count_conflicts: bool = True) -> None:
    """One process: ROUNDS rounds over its own inner chunks; puts (proc,
    conflicts) on ``results`` (-1 when not counted), or (proc, error text)."""
    try:
        a = zarrpy.open_array(url, mode="r+", storage_options=storage_options, synchronizer=synchronizer)
        if count_conflicts:
            from zarrpy.pipeline.optimistic import conflict_count
            before = conflict_count()
        for rnd in range(ROUNDS):
            barrier.wait(TIMEOUT)
            mine = {(i, j): np.full(INNER, value(rnd, i, j), "int32") for i, j in owned(proc)}
            if rnd % 2 == 0:
                a.write_chunks(mine)  # one call: each shard read and written once
            else:
                for (i, j), block in mine.items():
                    a.inner_blocks[i, j] = block
        results.put((proc, conflict_count() - before if count_conflicts else -1))
    except BaseException as exc:  # noqa: BLE001 - reported to the test, which fails with it
        results.put((proc, f"{type(exc).__name__}: {exc}"))
        raise


def run_writers(url: str, storage_options: dict[str, Any] | None = None, *, synchronizer: Any = None,
                count_conflicts: bool = True) -> list[int]:
    """Create the array at ``url``, run the N_PROCS writers (spawned) on it,
    and return each one's conflict count; fails with a writer's error."""
    zarrpy.create_array(url, shape=SHAPE, chunks=INNER, shards=SHARD, dtype="int32", fill_value=0,
                        storage_options=storage_options)
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(N_PROCS), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(url, storage_options, p, barrier, results, synchronizer,
                                              count_conflicts), daemon=True) for p in range(N_PROCS)]
    for p in procs:
        p.start()
    reported: dict[int, Any] = {}
    deadline = time.monotonic() + 2 * TIMEOUT
    try:
        while len(reported) < N_PROCS and time.monotonic() < deadline:
            try:
                proc, result = results.get(timeout=0.5)
                reported[proc] = result
            except queue.Empty:
                if not any(p.is_alive() for p in procs) and results.empty():
                    break  # a writer died without a word
        for p in procs:
            p.join(TIMEOUT)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(5)
    errors = {proc: r for proc, r in reported.items() if isinstance(r, str)}
    assert not errors, errors
    assert [p.exitcode for p in procs] == [0] * N_PROCS and len(reported) == N_PROCS, reported
    return [reported[p] for p in range(N_PROCS)]


def lost_chunks(got: np.ndarray) -> list[tuple[int, int]]:
    """The inner chunks not holding their last round's value."""
    last = ROUNDS - 1
    return [(i, j) for i in range(GRID[0]) for j in range(GRID[1])
            if not (got[i * 8:(i + 1) * 8, j * 8:(j + 1) * 8] == value(last, i, j)).all()]


# -- moto's S3 server, one request at a time ----------------------------------------------
@pytest.fixture(scope="module")
def serial_s3() -> Iterator[dict[str, Any]]:
    """s3fs ``storage_options`` of a moto S3 server on 127.0.0.1 that answers
    one request at a time (see the module docstring), with bucket BUCKET."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    with pytest.MonkeyPatch.context() as monkey:
        for name, val in DUMMY_ENV.items():
            monkey.setenv(name, val)  # spawned writers inherit them
        monkey.delenv("AWS_PROFILE", raising=False)
        _one_server_header(monkey)
        class QuietHandler(MotoRequestHandler):
            def log(self, type: str, message: str, *args: Any) -> None:
                pass

        server = make_server("127.0.0.1", 0, DomainDispatcherApplication(create_backend_app), threaded=False,
                             request_handler=QuietHandler)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            endpoint = f"http://127.0.0.1:{server.server_address[1]}"
            _make_bucket(endpoint)
            yield {"endpoint_url": endpoint, "key": "testing", "secret": "testing",
                   "config_kwargs": {"connect_timeout": 5, "read_timeout": 20, "retries": {"max_attempts": 1}}}
        finally:
            server.shutdown()
            server.server_close()
            thread.join(10)


def fresh_url() -> str:
    return f"s3://{BUCKET}/concurrent/{uuid.uuid4().hex}.zarr"


def test_processes_updating_shared_shards_on_s3_lose_nothing_and_do_conflict(serial_s3):
    url = fresh_url()
    conflicts = run_writers(url, serial_s3)
    got = zarrpy.open_array(url, storage_options=serial_s3)[...]
    assert lost_chunks(got) == []
    assert sum(conflicts) > 0, conflicts  # they contended, and the conditions caught it


def test_processes_updating_shared_shards_in_a_directory_lose_nothing(tmp_path):
    url = str(tmp_path / "a.zarr")
    run_writers(url, count_conflicts=False)  # the update locks serialise the writers: nothing to count
    assert lost_chunks(zarrpy.open_array(url)[...]) == []


# -- dask ------------------------------------------------------------------------------------
def test_a_dask_cluster_writes_unaligned_blocks_to_s3_with_no_lock(serial_s3):
    expected = np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE)
    x = da.from_array(expected, chunks=(12, 20))  # smaller than a shard, aligned to neither shards nor inner chunks
    url = fresh_url()
    cluster = LocalCluster(n_workers=2, threads_per_worker=2, processes=True, host="127.0.0.1",
                           dashboard_address=None)
    try:
        with Client(cluster, timeout=TIMEOUT) as client:
            client.wait_for_workers(2, timeout=TIMEOUT)
            writes = zd.to_zarr(x, url, chunks=INNER, shards=SHARD, storage_options=serial_s3, compute=False)
            client.compute(writes).result(timeout=TIMEOUT)
    finally:
        cluster.close(timeout=TIMEOUT)
    np.testing.assert_array_equal(zarrpy.open_array(url, storage_options=serial_s3)[...], expected)


class UnconditionalMemoryStore(MemoryStore):
    """A MemoryStore without conditional writes (and, as every MemoryStore, without update locks)."""

    supports_conditional_writes = False


def test_to_zarr_checks_block_alignment_only_where_the_store_cannot_update_safely():
    expected = np.arange(np.prod(SHAPE), dtype="int32").reshape(SHAPE)
    x = da.from_array(expected, chunks=(12, 20))
    plain = UnconditionalMemoryStore()
    assert not plain.supports_concurrent_updates
    with pytest.raises(ChunkAlignmentError, match="cannot update parts of one object from several processes"):
        zd.to_zarr(x, plain, chunks=INNER, shards=SHARD)
    assert list(plain.list()) == []  # refused before anything was created
    safe = MemoryStore()
    assert safe.supports_concurrent_updates  # conditional writes
    with dask.config.set(scheduler="threads"):
        zd.to_zarr(x, safe, chunks=INNER, shards=SHARD)
    np.testing.assert_array_equal(zarrpy.open_array(safe)[...], expected)

