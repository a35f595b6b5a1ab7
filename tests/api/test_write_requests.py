"""What creating nodes and writing metadata asks of a store (issue 29).

A store that behaves like a remote one (:class:`~tests.wave_store.WaveStore`:
a latency per call, calls from threads overlapping, ``reads_in_place`` False)
logs every request, so these tests pin, for each way of creating an array or
a group and for metadata writes, the requests sent and the sequential round
trips (*waves*) they take, and that the checks of each mode still hold:

* ``w-`` (``create_array``'s default) refuses an existing node of either
  format: the node's documents are read in one batch, then its ``zarr.json``
  written; on a store with conditional writes ``zarr.json`` is not read, its
  write "only if absent" is the check, sent beside the reads of the V2
  documents when there is no parent to read (one round trip);
* ``w`` deletes everything under the node (one listing, one batched delete),
  then writes: no node check first, the listing is it;
* ``a`` opens an existing V3 array with one request and creates a missing
  one without reading its documents twice;
* parents are read in the same batch as the node and missing ones written in
  the same batch as it; a group already open is not read again;
* attribute writes and a resize that grows are one write of the metadata,
  with nothing read before it.

:class:`BatchingWaveStore` runs each test with and without conditional writes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest

import zarrpy
from zarrpy.errors import NodeExistsError, StoreError
from zarrpy.stores.memory import MemoryStore
from zarrpy.stores.writes import ABSENT, ConditionalWrite

from tests.wave_store import HEAD_KINDS, Request, WaveStore

DOCS = ["zarr.json", ".zarray", ".zgroup"]


class BatchingWaveStore(WaveStore):
    """A WaveStore (``delete_many`` and ``set_conditional`` one call, one
    round trip, each, as on S3) whose conditional writes ``conditional``
    turns on or off, and whose log keeps each conditional write's expected
    version (as ``Request.if_match``)."""

    def __init__(self, inner: MemoryStore | None = None, *, conditional: bool = False, latency: float = 0.002):
        super().__init__(inner, latency=latency)
        self.conditional = conditional

    @property
    def supports_conditional_writes(self) -> bool:  # type: ignore[override]
        return self.conditional

    def set_conditional(self, writes: Sequence[ConditionalWrite]) -> list[bool]:
        writes = list(writes)
        return self._call("set_conditional", [Request("set", w.key, None, w.expected) for w in writes],
                          lambda: self.inner.set_conditional(writes))

    def waves_of(self) -> list[list[tuple[str, str]]]:
        """The (kind, key) requests of each wave, sorted within a wave."""
        return [sorted((r.kind, r.key) for r in wave) for wave in self.wave_list()]


def store(conditional: bool = False) -> BatchingWaveStore:
    s = BatchingWaveStore(conditional=conditional)
    assert s.reads_in_place is False
    return s


def gets(path: str, names: Sequence[str] = DOCS) -> list[tuple[str, str]]:
    return [("get", f"{path}/{n}" if path else n) for n in names]


def create(s, **kwargs):
    kwargs.setdefault("shape", (8,))
    kwargs.setdefault("chunks", (2,))
    kwargs.setdefault("dtype", "i4")
    return zarrpy.create_array(s, **kwargs)


def existing_array(s, name=None) -> zarrpy.Array:
    a = create(s, name=name)
    a[...] = np.arange(8)
    s.reset()
    return a


def stored(s) -> dict[str, bytes]:
    return {k: s.raw(k) for k in s.inner.list()}


# -- mode w- ------------------------------------------------------------------
def test_w_minus_new_array_reads_the_three_documents_at_once_then_writes_zarr_json():
    s = store()
    create(s)
    assert s.waves_of() == [sorted(gets("")), [("set", "zarr.json")]]
    assert s.requests == 4 and s.waves == 2


def test_w_minus_on_a_conditional_store_reads_the_v2_documents_then_writes_zarr_json_only_if_absent():
    """Not one round trip: writing zarr.json beside the reads would shadow a
    V2 node found there until it was taken back (forever, if the writer died)."""
    s = store(conditional=True)
    create(s)
    assert s.waves_of() == [sorted(gets("", [".zarray", ".zgroup"])), [("set", "zarr.json")]]
    assert [r.if_match for r in s.requests_of("set")] == [ABSENT]
    assert s.requests == 3 and s.waves == 2


@pytest.mark.parametrize("conditional", [False, True])
def test_w_minus_refuses_an_existing_v3_array_and_leaves_it_alone(conditional):
    s = store(conditional)
    existing_array(s)
    before = stored(s)
    with pytest.raises(NodeExistsError, match="a node already exists"):
        create(s, shape=(3,), dtype="f8")
    assert stored(s) == before
    assert s.requests_of("delete", "list") == []
    assert [r.key for r in s.requests_of("set")] == (["zarr.json"] if conditional else [])  # refused
    np.testing.assert_array_equal(zarrpy.open_array(s)[...], np.arange(8))


def test_w_minus_refuses_an_existing_v2_node_before_writing_anything():
    s = store()
    zarrpy.create_group(s, zarr_format=2, attributes={"a": 1})
    before = stored(s)
    s.reset()
    with pytest.raises(NodeExistsError):
        create(s)
    assert s.requests_of("set") == [] and s.waves == 1
    assert stored(s) == before


def test_w_minus_on_a_conditional_store_refuses_a_v2_node_before_writing_anything():
    s = store(conditional=True)
    zarrpy.create_group(s, zarr_format=2, attributes={"a": 1})
    before = stored(s)
    s.reset()
    with pytest.raises(NodeExistsError, match="a node already exists"):
        create(s)
    assert s.waves_of() == [sorted(gets("", [".zarray", ".zgroup"]))]
    assert stored(s) == before
    assert zarrpy.open_group(s, mode="r").attrs["a"] == 1


# -- mode w --------------------------------------------------------------------
def test_w_new_array_is_a_listing_then_the_write():
    s = store()
    create(s, overwrite=True)
    assert s.waves_of() == [[("list", "")], [("set", "zarr.json")]]


@pytest.mark.parametrize("conditional", [False, True])
def test_w_deletes_the_old_array_in_one_batch_then_writes(conditional):
    s = store(conditional)
    existing_array(s)
    stray = "c/9"  # beyond the old shape, no node claims it: deleted too
    s.put(stray, b"x")
    a = create(s, overwrite=True, shape=(4,), dtype="u1", fill_value=7)
    old_keys = sorted(["zarr.json", stray] + [f"c/{i}" for i in range(4)])
    assert s.waves_of() == [[("list", "")], [("delete", k) for k in old_keys], [("set", "zarr.json")]]
    assert s.inner.list() and sorted(s.inner.list()) == ["zarr.json"]
    np.testing.assert_array_equal(a[...], np.full(4, 7, "u1"))
    assert json.loads(s.raw("zarr.json"))["data_type"] == "uint8"


def test_w_nested_reads_the_parents_beside_the_listing():
    s = store()
    zarrpy.create_group(s, path="g")
    existing_array(s, name="g/x")
    create(s, name="g/x", overwrite=True)
    waves = s.waves_of()
    assert waves[0] == sorted(gets("") + gets("g") + [("list", "g/x/")])
    assert waves[1] == [("delete", k) for k in ["g/x/c/0", "g/x/c/1", "g/x/c/2", "g/x/c/3", "g/x/zarr.json"]]
    assert waves[2] == [("set", "g/x/zarr.json")]
    assert len(waves) == 3


# -- mode a ----------------------------------------------------------------------
def test_a_opens_an_existing_array_with_one_request():
    s = store()
    existing_array(s)
    a = zarrpy.open_array(s, mode="a", shape=(8,), dtype="i4")
    assert s.waves_of() == [[("get", "zarr.json")]]
    np.testing.assert_array_equal(a[...], np.arange(8))
    assert not a.read_only


def test_a_creates_a_missing_array_reading_each_document_once():
    s = store()
    zarrpy.open_array(s, mode="a", shape=(8,), chunks=(2,), dtype="i4")
    assert s.waves_of() == [[("get", "zarr.json")], sorted(gets("", [".zarray", ".zgroup", ".zattrs"])),
                            [("set", "zarr.json")]]


def test_a_missing_group_is_created_reading_each_document_once():
    s = store()
    zarrpy.open_group(s, mode="a", path="g")
    keys = s.keys("get")
    assert len(keys) == len(set(keys)), keys
    assert s.waves_of() == [[("get", "g/zarr.json")],  # open_group: zarr.json, then the V2 documents
                            sorted(gets("g", [".zarray", ".zgroup", ".zattrs", ".zmetadata"])),
                            sorted(gets("")),  # the create: the parent only
                            sorted([("set", "g/zarr.json"), ("set", "zarr.json")])]  # the root group too


# -- parents -------------------------------------------------------------------------
def test_nested_array_reads_every_parent_in_one_batch_and_writes_in_one():
    s = store()
    create(s, name="a/b/x")
    assert s.waves_of() == [sorted(gets("") + gets("a") + gets("a/b") + gets("a/b/x")),
                            sorted(("set", k) for k in ["zarr.json", "a/zarr.json", "a/b/zarr.json",
                                                        "a/b/x/zarr.json"])]
    assert zarrpy.open_group(s, mode="r")["a/b"].nmembers() == 1


def test_a_node_inside_an_array_is_refused_in_the_first_wave():
    s = store()
    existing_array(s, name="arr")
    with pytest.raises(NodeExistsError, match="is an array"):
        create(s, name="arr/inner/x")
    assert s.requests_of("set", "delete", "list") == [] and s.waves == 1


@pytest.mark.parametrize("conditional", [False, True])
def test_an_open_group_creates_members_without_reading_itself_or_its_parents(conditional):
    s = store(conditional)
    g = zarrpy.create_group(s, path="g")
    s.reset()
    g.create_array("x", shape=(4,), dtype="i4")
    own = [".zarray", ".zgroup"] if conditional else DOCS  # conditional: the write checks zarr.json
    assert s.waves_of() == [sorted(gets("g/x", own)), [("set", "g/x/zarr.json")]]
    s.reset()
    g.create_group("sub/deeper")  # a parent to read: the node's documents go in the same batch
    own = [".zarray", ".zgroup"] if conditional else DOCS
    assert s.waves_of()[0] == sorted(gets("g/sub") + gets("g/sub/deeper", own))
    assert s.waves_of()[1] == sorted([("set", "g/sub/zarr.json"), ("set", "g/sub/deeper/zarr.json")])
    assert sorted(zarrpy.open_group(s, path="g", mode="r").group_keys()) == ["sub"]


# -- metadata writes ------------------------------------------------------------------------
def test_open_then_attrs_is_one_read_and_one_write():
    s = store()
    existing_array(s)
    a = zarrpy.open_array(s, mode="r+")
    a.attrs["units"] = "m"
    assert s.waves_of() == [[("get", "zarr.json")], [("set", "zarr.json")]]
    s.reset()
    a.attrs.update({"a": 1, "b": 2})
    assert s.waves_of() == [[("set", "zarr.json")]]
    assert json.loads(s.raw("zarr.json"))["attributes"] == {"units": "m", "a": 1, "b": 2}
    g = zarrpy.open_group(zarrpy.create_group(store(), attributes={"x": 1}).store, mode="r+")
    g.store.reset()
    g.attrs["y"] = 2
    assert g.store.waves_of() == [[("set", "zarr.json")]]


def test_v2_metadata_documents_are_written_side_by_side():
    s = store()
    a = create(s, zarr_format=2)
    s.reset()
    a.attrs["k"] = "v"
    assert s.waves_of() == [[("set", ".zarray"), ("set", ".zattrs")]]
    s.reset()
    a.resize(10)
    assert s.waves_of() == [[("set", ".zarray"), ("set", ".zattrs")]]
    assert json.loads(s.raw(".zarray"))["shape"] == [10]


def test_resize_that_grows_is_one_write_of_zarr_json():
    s = store()
    a = existing_array(s)
    a.resize(20)
    assert s.waves_of() == [[("set", "zarr.json")]]
    np.testing.assert_array_equal(zarrpy.open_array(s)[...], np.r_[np.arange(8), np.zeros(12, "i4")])


def test_resize_that_shrinks_writes_the_metadata_once_last_and_asks_no_sizes():
    s = store()
    a = existing_array(s)
    a.resize(3)  # c/2 and c/3 go, c/1 is cut (refilled past 3)
    waves = s.waves_of()
    assert waves[0] == [("list", "")]
    assert waves[-1] == [("set", "zarr.json")]
    assert s.keys("set").count("zarr.json") == 1
    assert s.reads_of("zarr.json") == 0 and s.requests_of(*HEAD_KINDS) == []
    assert sorted(s.keys("delete")) == ["c/2", "c/3"]
    a.resize(8)
    np.testing.assert_array_equal(zarrpy.open_array(s)[...], np.r_[np.arange(3), np.zeros(5, "i4")])


@pytest.mark.parametrize("conditional", [False, True])
def test_no_listing_or_size_request_before_creating(conditional):
    """Across modes w-, a and group creation: no listing, no HEAD, nothing read twice."""
    s = store(conditional)
    create(s, name="x")
    zarrpy.open_array(s, mode="a", path="y", shape=(2,), dtype="i1")
    zarrpy.open_group(s, mode="a", path="z")
    assert s.requests_of("list", *HEAD_KINDS) == []


def test_a_failed_read_beside_the_conditional_write_leaves_no_node():
    class FailingReads(BatchingWaveStore):
        def get_partial_values(self, requests):
            raise StoreError("cannot read: the network is down")

    s = FailingReads(conditional=True)
    with pytest.raises(StoreError, match="network is down"):
        create(s)
    assert list(s.inner.list()) == []  # the zarr.json that went out is taken back
