"""Opening many arrays in one round trip (issue 28): ``zarrpy.open_arrays``,
open = one request, members fetched in one batch, and the many-array reads
(``concat``, ``iter_rows``, ``virtual(group)``) with every array's requests
in flight at once.

Request counts come from :class:`~tests.test_array_sharding.CountingStore`
(a batched call is one request). That requests really are in flight together
is shown with a :class:`Rendezvous`: the armed reads wait until all of them
have arrived, so reads made one after another fail (in bounded time) instead
of passing slowly. An HTTP server on 127.0.0.1 shows the same over the network.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from zarrpy.cache import Cache
from zarrpy.errors import MetadataError, NodeNotFoundError, ReadOnlyError
from zarrpy.stores import LocalStore, MemoryStore

from tests.test_array_sharding import CountingStore

N = 40


def _values(i: int, n: int = 10) -> np.ndarray:
    return (np.arange(n, dtype="int32") * 7 + 1000 * i).astype("int32")


def _fill_store(store, n: int = N, *, zarr_format: int = 3, sharded: bool = False) -> list[str]:
    """``n`` arrays ``a0`` ... below the root group of ``store``; their paths."""
    root = zarrpy.create_group(store, zarr_format=zarr_format, overwrite=True)
    for i in range(n):
        shards = {"shards": (10,)} if sharded else {}
        a = root.create_array(f"a{i}", shape=(10,), dtype="int32", chunks=(5,), fill_value=-1, **shards)
        a[...] = _values(i)
    return [f"a{i}" for i in range(n)]


class Rendezvous:
    """Holds each armed read until ``n`` of them wait together (a barrier of
    ``n``): reads made one at a time break it after ``timeout`` seconds."""

    def __init__(self, n: int, timeout: float = 10.0):
        self.barrier = threading.Barrier(n, timeout=timeout)
        self.met = 0
        self._lock = threading.Lock()

    def wait(self) -> None:
        self.barrier.wait()  # BrokenBarrierError when the n never meet
        with self._lock:
            self.met += 1


class MeetingStore(MemoryStore):
    """A MemoryStore that acts remote (no cheap whole reads) and whose reads
    of keys ``armed(key)`` selects wait at a shared :class:`Rendezvous`, once
    per top-level read call."""

    whole_read_nbytes = 0

    def __init__(self, rendezvous: Rendezvous | None = None, armed=lambda key: False):
        super().__init__()
        self.rendezvous, self.armed = rendezvous, armed
        self._local = threading.local()

    def _meet(self, keys, call):
        if getattr(self._local, "inside", False) or self.rendezvous is None or not any(map(self.armed, keys)):
            return call()
        self._local.inside = True
        try:
            self.rendezvous.wait()
            return call()
        finally:
            self._local.inside = False

    def get(self, key, byte_range=None):
        return self._meet([key], lambda: super(MeetingStore, self).get(key, byte_range))

    def get_partial_values(self, requests):
        requests = list(requests)
        return self._meet([k for k, _ in requests], lambda: super(MeetingStore, self).get_partial_values(requests))

    def get_versioned(self, requests):
        requests = list(requests)
        return self._meet([r[0] for r in requests], lambda: super(MeetingStore, self).get_versioned(requests))


def _is_chunk(key: str) -> bool:
    return key.rsplit("/", 1)[-1] not in ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")


# -- correctness and order ------------------------------------------------------
@pytest.mark.parametrize(("zarr_format", "sharded"), [(2, False), (3, False), (3, True)])
def test_arrays_in_one_store_match_numpy_in_the_order_given(zarr_format, sharded):
    store = MemoryStore()
    paths = _fill_store(store, 12, zarr_format=zarr_format, sharded=sharded)
    order = [7, 0, 11, 3, 3, 5]  # any order, repeats allowed
    arrays = zarrpy.open_arrays([paths[i] for i in order], store=store)
    assert [a.path for a in arrays] == [paths[i] for i in order]
    for i, a in zip(order, arrays):
        assert a.zarr_format == zarr_format and a.read_only
        assert (a.shards is not None) == sharded
        np.testing.assert_array_equal(a[...], _values(i))


def test_arrays_in_mixed_stores_match_numpy(tmp_path):
    """A Store object, local paths (V2; sharded) and an fsspec URL, in one call."""
    memory = MemoryStore()
    zarrpy.create_array(memory, shape=(10,), dtype="int32", chunks=(4,))[...] = _values(0)
    zarrpy.create_array(str(tmp_path / "v2"), shape=(10,), dtype="int32", chunks=(3,), zarr_format=2)[...] = _values(1)
    zarrpy.create_array(str(tmp_path / "sh"), shape=(10,), dtype="int32", chunks=(2,), shards=(10,))[...] = _values(2)
    url = "memory://open-arrays-mixed/x.zarr"
    zarrpy.create_array(url, shape=(10,), dtype="int32", chunks=(5,), overwrite=True)[...] = _values(3)
    arrays = zarrpy.open_arrays([url, str(tmp_path / "sh"), memory, tmp_path / "v2"])
    assert [a.zarr_format for a in arrays] == [3, 3, 3, 2]
    assert arrays[2].store is memory and arrays[1].shards == (10,)
    for i, a in zip([3, 2, 0, 1], arrays):
        np.testing.assert_array_equal(a[...], _values(i))


def test_mode_r_plus_gives_writable_arrays():
    store = MemoryStore()
    paths = _fill_store(store, 3)
    with pytest.raises(ReadOnlyError):
        zarrpy.open_arrays(paths, store=store)[0][0] = 5
    a, b, c = zarrpy.open_arrays(paths, store=store, mode="r+")
    b[0] = 5
    assert zarrpy.open_array(store, path="a1")[0] == 5
    assert zarrpy.open_arrays([], store=store) == []


def test_options_reach_every_array():
    store = MemoryStore()
    paths = _fill_store(store, 3)
    cache = Cache(1 << 20)
    arrays = zarrpy.open_arrays(paths, store=store, cache=cache)
    assert all(a.cache is cache for a in arrays)
    assert zarrpy.open_arrays(paths, store=store, zarr_format=3)[2].zarr_format == 3


# -- errors ---------------------------------------------------------------------
def test_missing_array_is_named_by_index_store_and_path():
    store = MemoryStore()
    paths = _fill_store(store, 4)
    with pytest.raises(NodeNotFoundError, match=r"paths_or_urls\[2\]: no array or group at .*node path '/nope'"):
        zarrpy.open_arrays([paths[0], paths[1], "nope", paths[3]], store=store)


def test_group_where_an_array_was_expected():
    store = MemoryStore()
    _fill_store(store, 2)
    zarrpy.open_group(store, mode="a").create_group("sub")
    with pytest.raises(NodeNotFoundError, match=r"paths_or_urls\[1\]: .*node path '/sub'.* holds a group, not an array"):
        zarrpy.open_arrays(["a0", "sub"], store=store)


def test_the_first_failing_item_is_reported(tmp_path):
    good = str(tmp_path / "good")
    zarrpy.create_array(good, shape=(2,), dtype="int8")
    with pytest.raises(NodeNotFoundError, match=r"paths_or_urls\[1\]") as info:
        zarrpy.open_arrays([good, str(tmp_path / "missing1"), str(tmp_path / "missing2")])
    assert "missing1" in str(info.value)


def test_format_asked_for_is_the_only_one_looked_for():
    store = MemoryStore()
    _fill_store(store, 2, zarr_format=2)
    with pytest.raises(NodeNotFoundError, match=r"paths_or_urls\[0\]: .*no zarr.json there"):
        zarrpy.open_arrays(["a0", "a1"], store=store, zarr_format=3)


def test_invalid_metadata_names_store_and_path():
    store = MemoryStore()
    _fill_store(store, 2)
    store.set("a1/zarr.json", b"{not json")
    with pytest.raises(MetadataError, match=r"node path '/a1'"):
        zarrpy.open_arrays(["a0", "a1"], store=store)


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda s: zarrpy.open_arrays("a0", store=s), TypeError, r"takes a list .*pass \['a0'\]"),
    (lambda s: zarrpy.open_arrays([0], store=s), TypeError, r"paths_or_urls\[0\]: with store= the items are paths"),
    (lambda s: zarrpy.open_arrays(["a0"], store=s, mode="w"), ValueError, r"mode must be 'r' or 'r\+'"),
    (lambda s: zarrpy.open_arrays(["a0"], store=s, zarr_format=4), ValueError, r"zarr_format must be 2, 3"),
])
def test_bad_arguments(call, error, match):
    store = MemoryStore()
    _fill_store(store, 1)
    with pytest.raises(error, match=match):
        call(store)


# -- requests -------------------------------------------------------------------
def test_forty_arrays_in_one_store_are_one_batch():
    store = CountingStore()
    paths = _fill_store(store)
    store.reset()
    arrays = zarrpy.open_arrays(paths, store=store)
    assert store.requests == store.batches == 1
    assert set(store.batch_keys) == {f"{p}/zarr.json" for p in paths}
    for i in (0, 17, 39):
        np.testing.assert_array_equal(arrays[i][...], _values(i))


def test_v2_documents_are_asked_only_for_the_paths_without_zarr_json():
    store = CountingStore()
    _fill_store(store, 6)
    v2 = zarrpy.create_group(store, path="old", zarr_format=2)
    for i in range(3):
        v2.create_array(f"b{i}", shape=(4,), dtype="int16", chunks=(2,))[...] = np.arange(4) + i
    store.reset()
    paths = ["a0", "old/b0", "a5", "old/b2"]
    arrays = zarrpy.open_arrays(paths, store=store)
    assert [a.zarr_format for a in arrays] == [3, 2, 3, 2]
    assert store.requests == store.batches == 2
    assert set(store.batch_keys) == {f"{p}/zarr.json" for p in paths} | {
        f"old/b{i}/{name}" for i in (0, 2) for name in (".zarray", ".zgroup", ".zattrs")}
    np.testing.assert_array_equal(arrays[3][...], np.arange(4) + 2)
    store.reset()
    zarrpy.open_arrays(["old/b0", "old/b1"], store=store, zarr_format=2)
    assert store.requests == 1 and not any(k.endswith("zarr.json") for k in store.batch_keys)


def test_open_of_a_v3_node_is_one_request_for_exactly_zarr_json():
    store = CountingStore()
    _fill_store(store, 2)
    opens = [
        lambda: zarrpy.open_array(store, path="a1"),
        lambda: zarrpy.open(store, path="a1", mode="r"),
        lambda: zarrpy.open_group(store, mode="r"),  # consolidated metadata would be inside zarr.json
        lambda: zarrpy.open(store, mode="r"),
        lambda: zarrpy.open_arrays(["a1"], store=store),
    ]
    for open_, key in zip(opens, ["a1/zarr.json", "a1/zarr.json", "zarr.json", "zarr.json", "a1/zarr.json"]):
        store.reset()
        open_()
        assert store.requests == 1 and dict(store.gets) == {key: 1}
    group = zarrpy.open_group(store, mode="r")
    store.reset()
    assert isinstance(group["a1"], zarrpy.Array)
    assert store.requests == 1 and list(store.gets) == ["a1/zarr.json"]


def test_v2_open_asks_zarr_json_then_the_v2_documents():
    store = CountingStore()
    _fill_store(store, 1, zarr_format=2)
    store.reset()
    zarrpy.open_array(store, path="a0")
    assert store.requests == 2
    assert list(store.gets) == ["a0/zarr.json"]
    assert set(store.batch_keys) == {"a0/.zarray", "a0/.zgroup", "a0/.zattrs"}
    store.reset()
    zarrpy.open_group(store, mode="r")  # a group asks for .zmetadata with its V2 documents
    assert store.requests == 2 and "zarr.json" in store.gets and store.batch_keys[".zmetadata"] == 1
    store.reset()
    zarrpy.open_array(store, path="a0", zarr_format=2)
    assert store.requests == 1 and not store.gets


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_group_members_are_one_batch_after_the_listing(zarr_format):
    store = CountingStore()
    paths = _fill_store(store, N, zarr_format=zarr_format)
    group = zarrpy.open_group(store, mode="r", use_consolidated=False)
    store.reset()
    arrays = group.arrays()
    assert [name for name, _ in arrays] == sorted(paths)
    assert store.requests == store.batches == (1 if zarr_format == 3 else 2)
    assert store.batch_keys["a7/zarr.json"] == 1
    store.reset()
    values = group.array_values()
    assert store.requests == (1 if zarr_format == 3 else 2)
    np.testing.assert_array_equal(values[sorted(paths).index("a9")][...], _values(9))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_metadata_answers_members_without_a_request(zarr_format):
    store = CountingStore()
    paths = _fill_store(store, N, zarr_format=zarr_format)
    zarrpy.consolidate_metadata(store)
    group = zarrpy.open_group(store, mode="r")
    store.reset()
    assert [name for name, _ in group.members()] == sorted(paths)
    assert len(group.arrays()) == N and group["a3"].shape == (10,) and "a4" in group
    assert store.requests == 0


def test_a_walk_lists_the_groups_of_a_level_side_by_side():
    """Every group of one level is listed at once: four listings meet."""
    rendezvous = Rendezvous(4)
    store = MeetingStore()
    root = zarrpy.create_group(store)
    for i in range(4):
        root.create_group(f"g{i}").create_array("x", shape=(2,), dtype="int8")
    listed = []

    def list_dir(prefix, real=store.list_dir):
        if prefix:  # the four subgroups
            rendezvous.wait()
        listed.append(prefix)
        return real(prefix)

    store.list_dir = list_dir
    members = zarrpy.open_group(store, mode="r").members(max_depth=None)
    assert [name for name, _ in members] == [f"g{i}{rest}" for i in range(4) for rest in ("", "/x")]
    assert rendezvous.met == 4 and sorted(listed) == ["", "g0/", "g1/", "g2/", "g3/"]


# -- requests in flight at once -------------------------------------------------
def test_separate_stores_are_asked_at_once():
    rendezvous = Rendezvous(8)
    stores = [MeetingStore() for _ in range(8)]
    for i, s in enumerate(stores):
        zarrpy.create_array(s, shape=(10,), dtype="int32", chunks=(5,))[...] = _values(i)
        s.rendezvous, s.armed = rendezvous, lambda key: key == "zarr.json"
    arrays = zarrpy.open_arrays(stores)
    assert rendezvous.met == 8
    assert [a.store for a in arrays] == stores
    np.testing.assert_array_equal(arrays[5][...], _values(5))


def _meeting_arrays(n: int, armed) -> tuple[Rendezvous, list[zarrpy.Array]]:
    rendezvous = Rendezvous(n)
    arrays = []
    for i in range(n):
        s = MeetingStore()
        a = zarrpy.create_array(s, shape=(10,), dtype="int32", chunks=(10,))
        a[...] = _values(i)
        s.rendezvous, s.armed = rendezvous, armed
        arrays.append(zarrpy.open_array(s))
    return rendezvous, arrays


def test_concat_reads_every_array_at_once():
    rendezvous, arrays = _meeting_arrays(8, _is_chunk)
    out = zarrpy.concat(arrays)
    assert rendezvous.met == 8
    np.testing.assert_array_equal(out.nda, np.concatenate([_values(i) for i in range(8)]))


@pytest.mark.parametrize("prefetch", [False, True])
def test_iter_rows_reads_the_arrays_of_a_block_at_once(prefetch):
    rendezvous, arrays = _meeting_arrays(4, _is_chunk)
    blocks = [buf.nda.copy() for buf in zarrpy.iter_rows(arrays, 40, prefetch=prefetch)]
    assert rendezvous.met == 4
    np.testing.assert_array_equal(np.concatenate(blocks), np.concatenate([_values(i) for i in range(4)]))


@pytest.mark.parametrize("prefetch", [False, True])
def test_iter_rows_over_remote_stores_matches_numpy(prefetch):
    """Blocks that cut chunks, across array boundaries, strings too."""
    store = CountingStore()
    expected = []
    arrays = []
    for i in range(7):
        a = zarrpy.create_array(store, name=f"a{i}", shape=(9 + i, 2), dtype="int16", chunks=(4, 2))
        a[...] = values = np.arange((9 + i) * 2, dtype="int16").reshape(-1, 2) + 100 * i
        arrays.append(a)
        expected.append(values)
    blocks = [buf.nda.copy() for buf in zarrpy.iter_rows(arrays, 5, prefetch=prefetch)]
    assert all(len(b) == 5 for b in blocks[:-1])
    np.testing.assert_array_equal(np.concatenate(blocks), np.concatenate(expected))
    words = [zarrpy.create_array(store, name=f"s{i}", shape=(3,), dtype=str, chunks=(2,)) for i in range(4)]
    for i, w in enumerate(words):
        w[...] = np.array([f"{i}-{j}" for j in range(3)], dtype=np.dtypes.StringDType())
    out = zarrpy.concat(words)
    assert out.to_numpy().tolist() == [f"{i}-{j}" for i in range(4) for j in range(3)]


def test_virtual_group_reads_its_fields_at_once():
    rendezvous = Rendezvous(5)
    store = MeetingStore()
    root = zarrpy.create_group(store)
    for i in range(5):
        root.create_array(f"f{i}", shape=(10,), dtype="int32", chunks=(10,))[...] = _values(i)
    store.rendezvous, store.armed = rendezvous, _is_chunk
    table = zarrpy.virtual(zarrpy.open_group(store, mode="r"))
    columns = table.to_dict()
    assert rendezvous.met == 5
    assert list(columns) == [f"f{i}" for i in range(5)]
    for i in range(5):
        np.testing.assert_array_equal(columns[f"f{i}"], _values(i))


# -- over HTTP ------------------------------------------------------------------
class _MeetingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the directory, logs every request and holds the GETs of
    ``zarr.json`` at the server's rendezvous."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send_head(self):  # type: ignore[no-untyped-def]
        server = self.server
        server.log.append((self.command, self.path))  # type: ignore[attr-defined]
        if self.path.endswith("/zarr.json"):
            server.rendezvous.wait()  # type: ignore[attr-defined]
        return super().send_head()


@pytest.fixture
def http_site(tmp_path: Path) -> Iterator[tuple[str, http.server.ThreadingHTTPServer]]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_MeetingHandler,
                                                                                 directory=str(tmp_path)))
    server.daemon_threads = True
    server.log = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}", server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_arrays_over_http_are_one_get_each_all_at_once(tmp_path, http_site):
    pytest.importorskip("aiohttp")
    base, server = http_site
    _fill_store(LocalStore(tmp_path / "g.zarr"), 10)
    for i in range(3):
        zarrpy.create_array(str(tmp_path / f"x{i}.zarr"), shape=(10,), dtype="int32", chunks=(5,))[...] = _values(i)

    server.rendezvous = Rendezvous(3)  # three stores: their GETs meet
    arrays = zarrpy.open_arrays([f"{base}/x{i}.zarr" for i in range(3)])
    assert sorted(server.log) == [("GET", f"/x{i}.zarr/zarr.json") for i in range(3)]
    assert server.rendezvous.met == 3
    np.testing.assert_array_equal(arrays[2][...], _values(2))

    server.log.clear()
    server.rendezvous = Rendezvous(10)  # one store: the batch's GETs meet
    arrays = zarrpy.open_arrays([f"a{i}" for i in range(10)], store=f"{base}/g.zarr")
    assert sorted(server.log) == sorted(("GET", f"/g.zarr/a{i}/zarr.json") for i in range(10))
    assert server.rendezvous.met == 10
    np.testing.assert_array_equal(arrays[4][...], _values(4))


def test_concat_of_urls_opens_every_array_at_once(tmp_path, http_site):
    pytest.importorskip("aiohttp")
    base, server = http_site
    for i in range(6):
        zarrpy.create_array(str(tmp_path / f"a{i}.zarr"), shape=(10,), dtype="int32", chunks=(4,))[...] = _values(i)
    server.rendezvous = Rendezvous(6)
    out = zarrpy.concat([f"{base}/a{i}.zarr" for i in range(6)])
    assert server.rendezvous.met == 6
    np.testing.assert_array_equal(out.nda, np.concatenate([_values(i) for i in range(6)]))
    assert sum(path.endswith("/zarr.json") for _, path in server.log) == 6
    assert not any(path.endswith((".zarray", ".zattrs", ".zgroup")) for _, path in server.log)
