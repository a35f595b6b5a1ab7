"""Consolidated metadata: V2 ``.zmetadata`` and V3 inline ``consolidated_metadata``.

Reading (a group opened from the snapshot answers for the whole hierarchy
with ONE store request), writing (:func:`zarrpy.consolidate_metadata`, in the
forms zarr-python 3.4.2 writes), snapshot semantics, malformed snapshots, and
interop with zarr-python both ways.
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

import zarrpy
from zarrpy.metadata.consolidated import ConsolidatedMetadata
from zarrpy.errors import MetadataError, NodeNotFoundError, ReadOnlyError
from zarrpy.stores import LocalStore, MemoryStore

zarr = pytest.importorskip("zarr")


class CountingStore(MemoryStore):
    """A MemoryStore that records every request; a batched call counts once."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.requests: list[tuple[str, object]] = []
        self._depth = 0

    def __setstate__(self, state):
        super().__setstate__(state)
        self.requests, self._depth = [], 0

    def _record(self, kind, what):
        if self._depth == 0:
            self.requests.append((kind, what))

    def _nested(self, kind, what, call):
        self._record(kind, what)
        self._depth += 1
        try:
            return call()
        finally:
            self._depth -= 1

    def get(self, key, byte_range=None):
        return self._nested("get", key, lambda: super(CountingStore, self).get(key, byte_range))

    def get_partial_values(self, requests):
        keys = [k for k, _ in requests]
        return self._nested("get_partial_values", keys,
                            lambda: super(CountingStore, self).get_partial_values(requests))

    def list_prefix(self, prefix):
        return self._nested("list_prefix", prefix, lambda: list(super(CountingStore, self).list_prefix(prefix)))

    def list_dir(self, prefix):
        return self._nested("list_dir", prefix, lambda: list(super(CountingStore, self).list_dir(prefix)))


def _build_100(store, zarr_format: int) -> list[str]:
    """5 groups x 2 subgroups x 10 arrays = 100 arrays (plus 15 groups); returns every member path."""
    root = zarrpy.create_group(store, zarr_format=zarr_format, attributes={"root": True})
    paths = []
    for i in range(5):
        g = root.create_group(f"g{i}", attributes={"i": i})
        paths.append(f"g{i}")
        for j in range(2):
            s = g.create_group(f"s{j}")
            paths.append(f"g{i}/s{j}")
            for k in range(10):
                s.create_array(f"a{k}", shape=(k + 1, 3), dtype="int16", chunks=(2, 3), attributes={"k": k})
                paths.append(f"g{i}/s{j}/a{k}")
    return sorted(paths)


V2_ROOT = ("get_partial_values", [".zarray", ".zgroup", ".zattrs", ".zmetadata"])


@pytest.mark.parametrize(("zarr_format", "open_format", "expected"), [
    (3, None, [("get", "zarr.json")]),  # the snapshot is inside zarr.json: one request
    (2, 2, [V2_ROOT]),  # zarr_format=2 asks only the V2 documents, .zmetadata with them
    (2, None, [("get", "zarr.json"), V2_ROOT]),  # V2 documents only once zarr.json is missing
])
def test_a_consolidated_hierarchy_of_100_arrays_costs_its_root_documents(zarr_format, open_format, expected):
    store = CountingStore()
    paths = _build_100(store, zarr_format)
    zarrpy.consolidate_metadata(store)

    store.requests.clear()
    g = zarrpy.open_group(store, mode="r", zarr_format=open_format)
    members = g.members(max_depth=None)
    assert [name for name, _ in members] == paths
    assert sum(isinstance(node, zarrpy.Array) for _, node in members) == 100
    assert g["g3/s1/a7"].shape == (8, 3) and g["g3/s1/a7"].attrs["k"] == 7
    assert "g4/s0/a9" in g and "g4/s0/a10" not in g and "g9" not in g
    assert g["g2"]["s1"]["a0"].path == "g2/s1/a0"
    assert [n for n, _ in g["g1"].members()] == ["s0", "s1"]
    assert len(g["g1/s0"].members(max_depth=None)) == 10
    assert g.keys() == [f"g{i}" for i in range(5)] and g.group_keys() == g.keys() and g.array_keys() == []
    assert "a9 (10, 3) int16" in g.tree()
    with pytest.raises(KeyError):
        g["nope"]

    assert store.requests == expected  # and none for the members


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_live_reads_see_the_same_hierarchy_with_more_requests(zarr_format):
    store = CountingStore()
    paths = _build_100(store, zarr_format)
    zarrpy.consolidate_metadata(store)
    store.requests.clear()
    g = zarrpy.open_group(store, mode="r", use_consolidated=False)
    assert g.consolidated_metadata is None
    assert [name for name, _ in g.members(max_depth=None)] == paths
    assert all(".zmetadata" not in json.dumps(what) for _, what in store.requests)
    assert len(store.requests) > 1


def test_open_and_pickle_use_the_snapshot():
    store = CountingStore()
    _build_100(store, 3)
    zarrpy.consolidate_metadata(store)
    store.requests.clear()
    node = zarrpy.open(store, mode="r")
    assert isinstance(node, zarrpy.Group) and len(node.members(max_depth=None)) == 115
    assert len(store.requests) == 1
    again = pickle.loads(pickle.dumps(node))
    assert again.consolidated_metadata is not None and len(again.consolidated_metadata) == 115
    live = pickle.loads(pickle.dumps(zarrpy.open_group(store, mode="r", use_consolidated=False)))
    assert live.consolidated_metadata is None


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_the_snapshot_is_stale_until_consolidated_again(zarr_format):
    store = MemoryStore()
    root = zarrpy.create_group(store, zarr_format=zarr_format)
    root.create_array("old", shape=(2,), dtype="int8", chunks=(2,))
    root.create_array("gone", shape=(2,), dtype="int8", chunks=(2,))
    zarrpy.consolidate_metadata(store)
    live = zarrpy.open_group(store, use_consolidated=False)
    live.create_array("new", shape=(3,), dtype="int8", chunks=(3,))
    store.delete_prefix("gone/")
    zarrpy.open_array(store, path="old", mode="r+").attrs["changed"] = True

    snap = zarrpy.open_group(store, mode="r")
    assert snap.keys() == ["gone", "old"] and "new" not in snap and "gone" in snap
    assert "changed" not in snap["old"].attrs
    assert zarrpy.open_group(store, mode="r", use_consolidated=False).keys() == ["new", "old"]

    zarrpy.consolidate_metadata(store)
    snap = zarrpy.open_group(store, mode="r", use_consolidated=True)
    assert snap.keys() == ["new", "old"] and snap["old"].attrs["changed"] is True


def test_a_group_that_creates_a_member_reads_live_from_then_on():
    store = MemoryStore()
    zarrpy.create_group(store).create_array("a", shape=(2,), dtype="int8", chunks=(2,))
    zarrpy.consolidate_metadata(store)
    g = zarrpy.open_group(store, mode="r+")
    assert g.consolidated_metadata is not None
    g.create_group("b")
    assert g.consolidated_metadata is None and g.keys() == ["a", "b"] and "b" in g
    g.require_group("c")
    assert g.keys() == ["a", "b", "c"]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_use_consolidated_true_requires_a_snapshot(zarr_format):
    store = MemoryStore()
    zarrpy.create_group(store, zarr_format=zarr_format)
    with pytest.raises(MetadataError, match="no consolidated metadata"):
        zarrpy.open_group(store, use_consolidated=True)
    assert zarrpy.open_group(store).consolidated_metadata is None
    with pytest.raises(ValueError, match="use_consolidated"):
        zarrpy.open_group(store, use_consolidated="yes")


def test_consolidate_keeps_attributes_and_can_target_a_subgroup():
    store = MemoryStore()
    root = zarrpy.create_group(store, attributes={"x": 1})
    sub = root.create_group("sub", attributes={"y": 2})
    sub.create_group("deep").create_array("a", shape=(1,), dtype="f4", chunks=(1,))
    root.create_array("top", shape=(1,), dtype="f4", chunks=(1,))
    g = zarrpy.consolidate_metadata(root, path="sub")
    assert g.path == "sub" and sorted(g.consolidated_metadata) == ["deep", "deep/a"]
    assert zarrpy.open_group(store, path="sub").attrs["y"] == 2
    assert zarrpy.open_group(store).consolidated_metadata is None  # the root was not consolidated
    g = zarrpy.consolidate_metadata(store)
    assert sorted(g.consolidated_metadata) == ["sub", "sub/deep", "sub/deep/a", "top"]
    reopened = zarrpy.open_group(store)
    assert reopened.attrs.asdict() == {"x": 1}
    # the root's snapshot wins over the one the subgroup holds itself
    assert sorted(reopened["sub"].consolidated_metadata) == ["deep", "deep/a"]


def test_consolidate_refuses_read_only_and_arrays(tmp_path):
    store = MemoryStore()
    zarrpy.create_group(store).create_array("a", shape=(1,), dtype="u1", chunks=(1,))
    with pytest.raises(ReadOnlyError):
        zarrpy.consolidate_metadata(zarrpy.open_group(store, mode="r"))
    with pytest.raises(ReadOnlyError):
        zarrpy.consolidate_metadata(MemoryStore(store._data, read_only=True))
    with pytest.raises(NodeNotFoundError, match="array"):
        zarrpy.consolidate_metadata(store, path="a")
    with pytest.raises(NodeNotFoundError):
        zarrpy.consolidate_metadata(str(tmp_path / "none.zarr"))


def test_consolidated_mapping_views_share_one_dict():
    nodes = {k: object() for k in ["a", "a/b", "a/b/c", "a0", "a/x", "b"]}
    m = ConsolidatedMetadata(nodes)  # type: ignore[arg-type]
    assert list(m) == ["a", "a/b", "a/b/c", "a/x", "a0", "b"] and len(m) == 6
    a = m.below("a")
    assert list(a) == ["b", "b/c", "x"] and a["b/c"] is nodes["a/b/c"] and "x" in a and "a0" not in a
    assert list(a.below("b")) == ["c"] and len(m.below("b")) == 0
    assert "" not in m and 3 not in m


# -- malformed snapshots ------------------------------------------------------


def _v3_root_with(member) -> MemoryStore:
    store = MemoryStore()
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {}, "consolidated_metadata": member}
    store.set("zarr.json", json.dumps(doc).encode())
    return store


GROUP = {"zarr_format": 3, "node_type": "group", "attributes": {}}


@pytest.mark.parametrize("member, match", [
    ({"kind": "file", "must_understand": False, "metadata": {}}, "kind"),
    ({"kind": "inline", "must_understand": False, "metadata": []}, "'metadata' must be an object"),
    ({"kind": "inline", "must_understand": False, "metadata": {"../x": GROUP}}, "not a valid relative node path"),
    ({"kind": "inline", "must_understand": False, "metadata": {"a//b": GROUP}}, "not a valid"),
    ({"kind": "inline", "must_understand": False, "metadata": {"a/b": GROUP}}, "parent 'a' is missing"),
    ({"kind": "inline", "must_understand": False, "metadata": {"x": {"zarr_format": 3, "node_type": "thing"}}},
     "entry 'x'.*node_type"),
    ({"kind": "inline", "must_understand": False, "metadata": {"x": {**GROUP, "zarr_format": 2}}},
     "entry 'x'.*zarr_format"),
])
def test_malformed_v3_snapshots_are_clear_errors(member, match):
    store = _v3_root_with(member)
    with pytest.raises(MetadataError, match=match):
        zarrpy.open_group(store, mode="r")
    assert zarrpy.open_group(store, mode="r", use_consolidated=False).keys() == []


def test_malformed_v2_snapshots_are_clear_errors():
    store = MemoryStore()
    zarrpy.create_group(store, zarr_format=2)
    store.set(".zmetadata", b"{not json")
    with pytest.raises(MetadataError, match=r"\.zmetadata"):
        zarrpy.open_group(store, mode="r")
    store.set(".zmetadata", json.dumps({"zarr_consolidated_format": 1, "metadata": {
        "a/b/.zgroup": {"zarr_format": 2}}}).encode())
    with pytest.raises(MetadataError, match="parent 'a' is missing"):
        zarrpy.open_group(store, mode="r")
    store.set(".zmetadata", json.dumps({"zarr_consolidated_format": 1, "metadata": {
        "a/.zarray": {"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "<i2", "compressor": None,
                      "fill_value": 0, "order": "C", "filters": None},
        "a/b/.zgroup": {"zarr_format": 2}}}).encode())
    with pytest.raises(MetadataError, match="parent 'a' is an array"):
        zarrpy.open_group(store, mode="r")
    assert zarrpy.open_group(store, mode="r", use_consolidated=False).keys() == []


def test_nested_v3_form_is_read():
    arr = zarrpy.create_array({}, shape=(2,), dtype="u1", chunks=(2,)).metadata.to_json()
    member = {"kind": "inline", "must_understand": False, "metadata": {
        "a": {**GROUP, "consolidated_metadata": {"kind": "inline", "must_understand": False,
                                                 "metadata": {"x": arr}}}}}
    g = zarrpy.open_group(_v3_root_with(member), mode="r")
    assert sorted(g.consolidated_metadata) == ["a", "a/x"] and g["a/x"].shape == (2,)


# -- interop with zarr-python ---------------------------------------------------


def _build_with_zarr_python(path, zarr_format):
    g = zarr.open_group(str(path), mode="w", zarr_format=zarr_format, attributes={"r": 1})
    sub = g.create_group("sub", attributes={"s": 2})
    sub.create_group("deeper")
    sub.create_array("y", shape=(4,), chunks=(2,), dtype="i4", attributes={"u": "m"})[:] = [1, 2, 3, 4]
    g.create_array("x", shape=(3, 3), chunks=(2, 2), dtype="f8", fill_value=np.nan)[:2, :2] = 1.5
    g.create_array("s", shape=(3,), chunks=(2,), dtype=str)[:] = ["a", "", "ccc"]
    return g


PATHS = ["s", "sub", "sub/deeper", "sub/y", "x"]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarrpy_reads_zarr_python_consolidated(tmp_path, zarr_format):
    root = tmp_path / "zp.zarr"
    _build_with_zarr_python(root, zarr_format)
    with pytest.warns(UserWarning) if zarr_format == 3 else _nothing():
        zarr.consolidate_metadata(str(root))
    shutil.rmtree(root / "sub" / "deeper")  # the snapshot still lists it
    g = zarrpy.open_group(str(root), mode="r", use_consolidated=True)
    assert g.zarr_format == zarr_format and sorted(g.consolidated_metadata) == PATHS
    assert [n for n, _ in g.members(max_depth=None)] == PATHS
    assert g.attrs["r"] == 1 and g["sub"].attrs["s"] == 2 and g["sub/y"].attrs["u"] == "m"
    assert g["sub/y"][...].tolist() == [1, 2, 3, 4] and g["s"][...].tolist() == ["a", "", "ccc"]
    assert np.isnan(g["x"].fill_value) and g["x"][0, 0] == 1.5
    assert "sub/deeper" not in zarrpy.open_group(str(root), mode="r", use_consolidated=False)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarrpy_writes_what_zarr_python_writes(tmp_path, zarr_format):
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    _build_with_zarr_python(ours, zarr_format)
    _build_with_zarr_python(theirs, zarr_format)
    zarrpy.consolidate_metadata(str(ours))
    with pytest.warns(UserWarning) if zarr_format == 3 else _nothing():
        zarr.consolidate_metadata(str(theirs))
    if zarr_format == 3:
        mine = json.loads((ours / "zarr.json").read_bytes())
        expected = json.loads((theirs / "zarr.json").read_bytes())
        assert mine == expected
    else:
        mine = json.loads((ours / ".zmetadata").read_bytes())
        expected = json.loads((theirs / ".zmetadata").read_bytes())
        for doc in expected["metadata"].values():
            doc.pop("consolidated_metadata", None)  # zarr-python's non-standard addition to .zgroup
        assert mine == expected


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_reads_zarrpy_consolidated(tmp_path, zarr_format):
    root = tmp_path / "ours.zarr"
    g = zarrpy.create_group(str(root), zarr_format=zarr_format, attributes={"r": 1})
    g.create_group("sub", attributes={"s": 2}).create_array("y", shape=(4,), dtype="int32", chunks=(2,),
                                                            data=np.arange(4, dtype="int32"))
    g.create_array("s", shape=(2,), dtype=str, chunks=(2,), data=np.array(["p", "qq"], dtype=object))
    zarrpy.consolidate_metadata(str(root))
    store = LocalStore(str(root))
    store.delete_prefix("sub/y/")  # gone from the store, still in the snapshot
    for opened in (zarr.open_consolidated(str(root), zarr_format=zarr_format),
                   zarr.open_group(str(root), mode="r", use_consolidated=True, zarr_format=zarr_format)):
        assert opened.attrs["r"] == 1
        assert sorted(k for k, _ in opened.members(max_depth=None)) == ["s", "sub", "sub/y"]
        assert opened["sub"].attrs["s"] == 2 and opened["sub/y"].shape == (4,)
        assert list(opened["s"][:]) == ["p", "qq"]


def test_cli_consolidate(tmp_path):
    root = tmp_path / "c.zarr"
    zarrpy.create_group(str(root), zarr_format=2).create_group("a").create_group("b")
    proc = subprocess.run([sys.executable, "-m", "zarrpy", "consolidate", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "consolidated 2 node(s)" in proc.stdout and ".zmetadata" in proc.stdout
    assert sorted(zarrpy.open_group(str(root), use_consolidated=True).consolidated_metadata) == ["a", "a/b"]


def test_module_doctest():
    import doctest

    import zarrpy.metadata.consolidated

    assert doctest.testmod(zarrpy.metadata.consolidated).failed == 0
