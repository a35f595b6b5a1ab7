"""Group on its own, on a MemoryStore and on a LocalStore, in both formats.

Covers what tests/test_group_mapping.py (g[name] = data, del, get,
require_array matching), tests/test_group_info.py and tests/test_consolidated.py
do not: the Group/Store constructors, nested paths, membership and listing at
every depth, create/require errors, path validation, read-only groups, tree(),
V2 parity, consolidated snapshots against the live hierarchy (property test),
and zarr-python 3.4.2 as an oracle for the listings both ways.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.errors import (
    MetadataError,
    NodeExistsError,
    NodeNotFoundError,
    ReadOnlyError,
)
from zarrpy.stores import LocalStore, MemoryStore

FORMATS = [2, 3]


@pytest.fixture(params=["memory", "local"])
def store(request, tmp_path):
    return MemoryStore() if request.param == "memory" else LocalStore(str(tmp_path / "g.zarr"))


@pytest.fixture(params=FORMATS, ids=lambda f: f"v{f}")
def zarr_format(request):
    return request.param


def _contents(store) -> dict[str, bytes]:
    return {key: store.get(key) for key in store.list_prefix("")}


def _build(store, zarr_format):
    """root{r=1} / a{k=a} / b / c (2,3) int32 ; root / x (4,) float64 with chunk data ; root / e (empty group)."""
    root = zarrpy.Group.create(store, attributes={"r": 1}, zarr_format=zarr_format)
    a = root.create_group("a", attributes={"k": "a"})
    a.create_group("b").create_array("c", shape=(2, 3), dtype="int32", chunks=(1, 3))
    root.create_array("x", shape=(4,), dtype="float64", chunks=(2,), data=np.arange(4.0))
    root.create_group("e")
    return root


ALL = {"a": "group", "a/b": "group", "a/b/c": "array", "e": "group", "x": "array"}


def _kind(node) -> str:
    return "array" if isinstance(node, zarrpy.Array) else "group"


# -- constructors and identity ------------------------------------------------------------


def test_create_and_open_on_a_store(store, zarr_format, tmp_path):
    created = zarrpy.Group.create(store, attributes={"t": [1, "x"]}, zarr_format=zarr_format)
    opened = zarrpy.Group.open(store)
    for g in (created, opened):
        assert isinstance(g, zarrpy.Group)
        assert (g.path, g.name, g.basename) == ("", "/", "")
        assert g.zarr_format == zarr_format and not g.read_only
        assert g.attrs.asdict() == {"t": [1, "x"]}
        assert g.store is store
        assert list(g) == [] and len(g) == 0 and g.members() == ()
    where = (tmp_path / "g.zarr").as_uri() if isinstance(store, LocalStore) else f"memory://{store.identity[1]}"
    assert created == opened and repr(opened) == f"<zarrpy.Group {where}>"
    assert opened.metadata.zarr_format == zarr_format
    keys = set(_contents(store))
    assert keys == ({"zarr.json"} if zarr_format == 3 else {".zgroup", ".zattrs"})
    with pytest.raises(NodeExistsError):
        zarrpy.Group.create(store, zarr_format=zarr_format)
    with pytest.raises(ValueError, match="zarr_format"):
        zarrpy.Group.create(MemoryStore(), zarr_format=4)


def test_open_with_a_format_filter(zarr_format):
    store = MemoryStore()
    zarrpy.Group.create(store, zarr_format=zarr_format)
    assert zarrpy.Group.open(store, zarr_format=zarr_format).zarr_format == zarr_format
    with pytest.raises(NodeNotFoundError):
        zarrpy.Group.open(store, zarr_format=5 - zarr_format)
    with pytest.raises(NodeNotFoundError, match="node path '/nope'"):
        zarrpy.Group.open(store, "nope")


def test_groups_compare_by_store_and_path():
    store = MemoryStore()
    root = _build(store, 3)
    assert root["a"] == root["a"] == zarrpy.Group.open(store, "a")
    assert root["a"] != root["a/b"] and root["a"] != root
    assert root["a"] != zarrpy.Group.create(MemoryStore()).create_group("a")
    assert root["a"] != "a"


# -- nested paths -----------------------------------------------------------------------------


def test_getitem_nested_paths(store, zarr_format):
    root = _build(store, zarr_format)
    c = root["a/b/c"]
    assert isinstance(c, zarrpy.Array)
    assert (c.path, c.name, c.basename, c.shape, c.dtype) == ("a/b/c", "/a/b/c", "c", (2, 3), np.dtype("int32"))
    assert c.zarr_format == zarr_format
    b = root["a/b"]
    assert isinstance(b, zarrpy.Group) and (b.path, b.name, b.basename) == ("a/b", "/a/b", "b")
    assert root["a"]["b/c"].path == root["a"]["b"]["c"].path == "a/b/c"
    # Slashes are normalised, as zarr-python does: leading, trailing and doubled.
    for spelling in ("/a/b", "a/b/", "a//b", "/a//b/"):
        assert root[spelling] == b, spelling
    for missing in ("a/nope", "a/b/nope", "nope/b", "a/b/c/d", "x/0", "x/c", "x/c/0"):
        with pytest.raises(KeyError):
            root[missing]
    np.testing.assert_array_equal(root["x"][...], np.arange(4.0))


def test_contains_nested_paths(store, zarr_format):
    root = _build(store, zarr_format)
    for path in ALL:
        assert path in root and "/" + path in root
    assert "b" in root["a"] and "b/c" in root["a"] and "c" in root["a/b"]
    for missing in ("b", "c", "a/c", "a/b/c/d", "x/c/0", "x/0", "zz"):
        assert missing not in root, missing
    # The chunk keys of x are there in the store, yet no member.
    assert any(key.startswith("x/") and not key.endswith((".zarray", ".zattrs", "zarr.json"))
               for key in _contents(store))


def test_create_in_nested_paths_makes_parents_in_the_groups_format(zarr_format):
    store = MemoryStore()
    root = zarrpy.Group.create(store, zarr_format=zarr_format)
    arr = root.create_array("p/q/arr", shape=(3,), dtype="uint8")
    grp = root["p"].create_group("q/r/s")
    assert arr.path == "p/q/arr" and grp.path == "p/q/r/s"
    for path in ("p", "p/q", "p/q/r", "p/q/r/s", "p/q/arr"):
        assert root[path].zarr_format == zarr_format
    assert [n for n, _ in root.members(max_depth=None)] == ["p", "p/q", "p/q/arr", "p/q/r", "p/q/r/s"]
    expected = {"p/.zgroup", "p/q/.zgroup", "p/q/r/.zgroup"} if zarr_format == 2 else {"p/zarr.json", "p/q/zarr.json"}
    assert expected <= set(_contents(store))


# -- listing ------------------------------------------------------------------------------------


def test_listing_at_every_depth(store, zarr_format):
    root = _build(store, zarr_format)
    assert root.keys() == ["a", "e", "x"] and list(root) == ["a", "e", "x"] and len(root) == 3
    assert root.array_keys() == ["x"] and root.group_keys() == ["a", "e"]
    assert [(n, _kind(m)) for n, m in root.members()] == [("a", "group"), ("e", "group"), ("x", "array")]
    assert [(n, m.path) for n, m in root.arrays()] == [("x", "x")]
    assert [(n, m.path) for n, m in root.groups()] == [("a", "a"), ("e", "e")]
    assert all(isinstance(m, zarrpy.Array) for _, m in root.arrays())
    assert all(isinstance(m, zarrpy.Group) for _, m in root.groups())
    assert [n for n, _ in root.members(max_depth=1)] == ["a", "a/b", "e", "x"]
    everything = root.members(max_depth=None)
    assert {n: _kind(m) for n, m in everything} == ALL
    assert [n for n, _ in everything] == sorted(ALL)
    assert all(m.path == n for n, m in everything)  # names are relative to the root here
    # Relative to a subgroup, paths are relative to it.
    a = root["a"]
    assert a.keys() == ["b"] and [n for n, _ in a.members(max_depth=None)] == ["b", "b/c"]
    assert [m.path for _, m in a.members(max_depth=None)] == ["a/b", "a/b/c"]
    assert a.array_keys() == [] and root["a/b"].array_keys() == ["c"]
    assert root["e"].keys() == [] and len(root["e"]) == 0 and root["e"].members(max_depth=None) == ()


def test_listing_ignores_stray_keys_and_directories(store, zarr_format):
    root = _build(store, zarr_format)
    store.set("notes.txt", b"hello")
    store.set("implicit/readme", b"no metadata here")  # a directory without a node document
    store.set("a/extra.bin", b"\x00")
    assert root.keys() == ["a", "e", "x"]
    assert [n for n, _ in root.members(max_depth=None)] == sorted(ALL)
    assert "implicit" not in root and "notes.txt" not in root
    with pytest.raises(KeyError):
        root["implicit"]


def test_delitem_on_a_local_store_removes_the_directory(tmp_path, zarr_format):
    path = tmp_path / "d.zarr"
    root = _build(LocalStore(str(path)), zarr_format)
    root.create_group("a2").create_array("y", shape=(1,), dtype="int8", data=np.ones(1, "int8"))
    del root["a"]
    assert not (path / "a").exists() and (path / "a2" / "y").is_dir()
    del root["x"]
    assert not (path / "x").exists()
    assert zarrpy.Group.open(LocalStore(str(path))).keys() == ["a2", "e"]
    np.testing.assert_array_equal(root["a2/y"][...], [1])


# -- create / require errors ------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["group", "array"])
@pytest.mark.parametrize("where", ["a", "x", "a/b", "a/b/c"])
def test_create_over_an_existing_node_needs_overwrite(zarr_format, how, where):
    store = MemoryStore()
    root = _build(store, zarr_format)
    before = _contents(store)
    create = (lambda **kw: root.create_group(where, **kw)) if how == "group" else (
        lambda **kw: root.create_array(where, shape=(1,), dtype="int8", **kw))
    with pytest.raises(NodeExistsError, match=f"node path '/{where}'"):
        create()
    assert _contents(store) == before
    node = create(overwrite=True)
    assert _kind(node) == how and node.path == where
    assert _kind(root[where]) == how
    below = [n for n, _ in root.members(max_depth=None) if n.startswith(where + "/")]
    assert below == []  # everything below the replaced node is gone
    assert "e" in root and "x" in root


@pytest.mark.parametrize("how", ["group", "array"])
def test_nothing_can_be_created_inside_an_array(zarr_format, how):
    store = MemoryStore()
    root = _build(store, zarr_format)
    before = _contents(store)
    for path in ("x/y", "a/b/c/d", "a/b/c/d/e"):
        with pytest.raises(NodeExistsError, match="is an array"):
            if how == "group":
                root.create_group(path)
            else:
                root.create_array(path, shape=(1,), dtype="int8")
    with pytest.raises(NodeExistsError, match="is an array"):
        root["a/b"].require_group("c/d")
    assert _contents(store) == before


def test_require_group(store, zarr_format):
    root = _build(store, zarr_format)
    again = root.require_group("a", attributes={"ignored": True})
    assert again == root["a"] and again.attrs.asdict() == {"k": "a"}  # opened, not replaced
    assert again.keys() == ["b"]
    deep = root.require_group("a/b")
    assert deep.path == "a/b" and deep.keys() == ["c"]
    new = root.require_group("n/m", attributes={"v": 2})
    assert new.path == "n/m" and new.attrs["v"] == 2 and new.zarr_format == zarr_format
    assert isinstance(root["n"], zarrpy.Group) and root.keys() == ["a", "e", "n", "x"]
    assert root.require_group("n/m") == new
    before = _contents(store)
    for path in ("x", "a/b/c"):
        with pytest.raises(NodeExistsError, match="is an array, not a group"):
            root.require_group(path)
    assert _contents(store) == before


def test_require_array_nested_paths(store, zarr_format):
    root = _build(store, zarr_format)
    before = _contents(store)
    got = root.require_array("a/b/c", shape=(2, 3), dtype="int32")
    assert got.path == "a/b/c" and _contents(store) == before
    assert root["a"].require_array("b/c", shape=(2, 3)).path == "a/b/c"
    with pytest.raises(TypeError, match="incompatible shape"):
        root.require_array("a/b/c", shape=(3, 2), dtype="int32")
    with pytest.raises(TypeError, match="incompatible dtype"):
        root.require_array("a/b/c", shape=(2, 3), dtype="int8")
    with pytest.raises(TypeError, match="is a group"):
        root.require_array("a/b", shape=(2, 3), dtype="int32")
    assert _contents(store) == before
    new = root.require_array("e/f/g", shape=(5,), dtype="int16", chunks=(2,))
    assert new.path == "e/f/g" and new.zarr_format == zarr_format and new.chunks == (2,)
    assert root["e"].group_keys() == ["f"] and root["e/f"].array_keys() == ["g"]


# -- attributes ---------------------------------------------------------------------------------------


def test_attributes_persist_after_reopen(tmp_path, zarr_format):
    path = tmp_path / "attrs.zarr"
    root = zarrpy.Group.create(LocalStore(str(path)), attributes={"keep": 0, "drop": 1}, zarr_format=zarr_format)
    sub = root.create_group("s/t", attributes={"deep": True})
    root.attrs["list"] = [1, 2.5, "é", None, {"n": [True]}]
    root.attrs.update({"keep": 10}, extra="x")
    del root.attrs["drop"]
    sub.attrs.put({"replaced": 1})
    expected_root = {"keep": 10, "list": [1, 2.5, "é", None, {"n": [True]}], "extra": "x"}
    reopened = zarrpy.Group.open(LocalStore(str(path)))
    assert reopened.attrs.asdict() == expected_root
    assert reopened["s/t"].attrs.asdict() == {"replaced": 1}
    assert reopened["s"].attrs.asdict() == {}
    assert len(reopened.attrs) == 3 and set(reopened.attrs) == set(expected_root)
    with pytest.raises(KeyError):
        reopened.attrs["drop"]
    with pytest.raises(KeyError):
        del root.attrs["nope"]
    # Attribute writes leave the members alone.
    assert [n for n, _ in reopened.members(max_depth=None)] == ["s", "s/t"]
    zarr = pytest.importorskip("zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_group(str(path), mode="r")
        assert dict(z.attrs) == expected_root and dict(z["s/t"].attrs) == {"replaced": 1}


def test_attributes_that_are_not_json_are_refused_and_nothing_is_written(store, zarr_format):
    root = _build(store, zarr_format)
    before = _contents(store)
    for bad in (object(), {1, 2}, np.arange(2)):
        with pytest.raises(MetadataError, match="not JSON"):
            root["a"].attrs["bad"] = bad
    with pytest.raises(MetadataError):
        root.create_group("new", attributes={"bad": object()})
    assert _contents(store) == before
    assert root["a"].attrs.asdict() == {"k": "a"}


def test_attrs_of_a_node_object_stay_current_after_its_own_writes(zarr_format):
    store = MemoryStore()
    root = _build(store, zarr_format)
    a = root["a"]
    view = a.attrs
    a.attrs["n"] = 1
    assert view["n"] == 1 and dict(view) == {"k": "a", "n": 1}
    # another object for the same node sees the stored state when opened afterwards
    assert root["a"].attrs.asdict() == {"k": "a", "n": 1}


# -- open_group on an array -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["r", "r+", "a"])
def test_open_group_on_an_array_raises_node_not_found(store, zarr_format, mode):
    _build(store, zarr_format)
    before = _contents(store)
    for path in ("x", "a/b/c"):
        with pytest.raises(NodeNotFoundError, match=f"node path '/{path}'\\) holds an array, not a group"):
            zarrpy.open_group(store, path=path, mode=mode)
    with pytest.raises(NodeNotFoundError, match="holds an array"):
        zarrpy.Group.open(store, "x")
    with pytest.raises(NodeExistsError):
        zarrpy.open_group(store, path="x", mode="w-")
    assert _contents(store) == before  # mode 'a' did not turn the array into a group
    assert isinstance(zarrpy.open(store, path="x", mode="r"), zarrpy.Array)


# -- path validation -------------------------------------------------------------------------------------

BAD_NAMES = ["..", "a/..", "../a", "a/../x", ".", "./a", "a/./b", "zarr.json", "a/zarr.json", ".zarray",
             ".zgroup", ".zattrs", "__reserved", "a/__b"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_invalid_names_are_refused_before_anything_is_written(zarr_format, name):
    store = MemoryStore()
    root = _build(store, zarr_format)
    before = _contents(store)
    calls = {
        "create_group": lambda: root.create_group(name),
        "create_array": lambda: root.create_array(name, shape=(1,), dtype="int8"),
        "require_group": lambda: root.require_group(name),
        "require_array": lambda: root.require_array(name, shape=(1,), dtype="int8"),
        "setitem": lambda: root.__setitem__(name, np.arange(2)),
        "getitem": lambda: root[name],
        "delitem": lambda: root.__delitem__(name),
        "subgroup": lambda: root["a"].create_group(name),
    }
    bad_part = next(p for p in name.split("/") if p in ("..", ".") or p.startswith(("__", ".z", "zarr")))
    reserved = bad_part.startswith("__")
    for what, call in calls.items():
        if reserved and what in ("getitem", "delitem"):
            # Reserved names are never created, but one another implementation
            # wrote opens (zarr-python allows them): here there is none.
            with pytest.raises(KeyError):
                call()
            continue
        with pytest.raises(MetadataError, match=f"invalid node name {bad_part!r}") as info:
            call()
        assert isinstance(info.value, ValueError), what
    assert _contents(store) == before


def test_dot_dot_membership_is_a_value_error_as_in_zarr_python():
    root = _build(MemoryStore(), 3)
    for name in ("..", "a/../x"):
        with pytest.raises(ValueError):
            name in root  # noqa: B015


def test_reserved_names_are_simply_not_members():
    root = _build(MemoryStore(), 3)
    assert "zarr.json" not in root and "__x" not in root and ".zattrs" not in root
    assert root.get("zarr.json") is None


def test_empty_names_are_refused_and_nothing_is_written(zarr_format):
    store = MemoryStore()
    root = _build(store, zarr_format)
    before = _contents(store)
    for name in ("", "/", "//"):
        with pytest.raises(KeyError):
            root.create_group(name)
        with pytest.raises(KeyError):
            root.create_array(name, shape=(1,), dtype="int8")
        with pytest.raises(KeyError):
            root[name]
        assert name not in root
    assert _contents(store) == before


def test_empty_name_error_says_what_is_wrong():
    root = zarrpy.Group.create(MemoryStore())
    with pytest.raises((KeyError, ValueError), match="empty|name"):
        root.create_group("")


def test_leading_slash_is_relative_to_the_group_as_in_zarr_python(zarr_format):
    root = _build(MemoryStore(), zarr_format)
    made = root["a"].create_group("/lead")
    assert made.path == "a/lead" and "lead" in root["a"] and "lead" not in root
    zarr = pytest.importorskip("zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.group({}, zarr_format=zarr_format)
        assert z.create_group("a").create_group("/lead").path == "a/lead"


# -- read-only ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["flag", "store"])
def test_read_only_group_refuses_every_write(tmp_path, zarr_format, how):
    path = str(tmp_path / "ro.zarr")
    _build(LocalStore(path), zarr_format)
    ro = zarrpy.Group.open(LocalStore(path), read_only=True) if how == "flag" else zarrpy.Group.open(
        LocalStore(path, read_only=True))
    before = _contents(LocalStore(path))
    assert ro.read_only
    writes = [
        lambda: ro.create_group("n"),
        lambda: ro.create_group("a", overwrite=True),
        lambda: ro.create_array("n", shape=(1,), dtype="int8"),
        lambda: ro.require_group("n"),
        lambda: ro.require_array("n", shape=(1,), dtype="int8"),
        lambda: ro.__setitem__("x", np.zeros(4)),
        lambda: ro.__delitem__("x"),
        lambda: ro.attrs.__setitem__("r", 2),
        lambda: ro.attrs.__delitem__("r"),
        lambda: ro.attrs.update(r=3),
        lambda: ro.attrs.put({}),
        lambda: ro["a"].create_group("n"),
        lambda: ro["a"].attrs.__setitem__("k", "b"),
        lambda: ro["a/b"].__delitem__("c"),
        lambda: ro["x"].__setitem__(0, 5.0),
        lambda: zarrpy.consolidate_metadata(ro),
    ]
    for write in writes:
        with pytest.raises(ReadOnlyError):
            write()
    assert _contents(LocalStore(path)) == before
    # Reading, and requiring what exists, still work; what comes back is read-only too.
    assert ro.require_group("a").read_only and ro.require_array("x", shape=(4,)).read_only
    assert all(m.read_only for _, m in ro.members(max_depth=None))
    assert ro["a"].attrs["k"] == "a" and ro.keys() == ["a", "e", "x"]


def test_read_only_error_names_the_group():
    store = MemoryStore()
    _build(store, 3)
    ro = zarrpy.Group.open(store, read_only=True)
    with pytest.raises(ReadOnlyError, match="group '/a/b' .* is read-only"):
        ro["a/b"].create_group("n")
    assert isinstance(ReadOnlyError("x"), PermissionError)


# -- tree ---------------------------------------------------------------------------------------------------


def test_tree(store, zarr_format):
    root = _build(store, zarr_format)
    assert root.tree() == (
        "/\n"
        "  a\n"
        "    b\n"
        "      c (2, 3) int32\n"
        "  e\n"
        "  x (4,) float64"
    )
    assert root["a"].tree() == "/a\n  b\n    c (2, 3) int32"
    assert root["e"].tree() == "/e"


# -- V2 and V3 behave alike ----------------------------------------------------------------------------------


def test_v2_and_v3_hierarchies_answer_alike():
    v2, v3 = _build(MemoryStore(), 2), _build(MemoryStore(), 3)
    for path in ["", "a", "a/b", "e"]:
        g2, g3 = (v2[path], v3[path]) if path else (v2, v3)
        assert g2.zarr_format == 2 and g3.zarr_format == 3
        assert g2.keys() == g3.keys() and len(g2) == len(g3)
        assert g2.array_keys() == g3.array_keys() and g2.group_keys() == g3.group_keys()
        for depth in (0, 1, None):
            assert [(n, _kind(m)) for n, m in g2.members(max_depth=depth)] == [
                (n, _kind(m)) for n, m in g3.members(max_depth=depth)]
        assert g2.tree() == g3.tree()
        assert g2.attrs.asdict() == g3.attrs.asdict()
    assert all(m.zarr_format == 2 for _, m in v2.members(max_depth=None))


def test_a_v3_group_lists_v2_children():
    # A mixed store: members are read in whichever format they are stored in.
    store = MemoryStore()
    root = zarrpy.Group.create(store, zarr_format=3)
    zarrpy.Group.create(store, "old", zarr_format=2).create_array("arr", shape=(1,), dtype="int8")
    root.create_group("new")
    assert [(n, m.zarr_format) for n, m in root.members(max_depth=None)] == [("new", 3), ("old", 2), ("old/arr", 2)]
    assert root["old/arr"].zarr_format == 2


# -- consolidated snapshots list what the live hierarchy lists ----------------------------------------------


def _listing(group, depth):
    return [(n, _kind(m), m.path) for n, m in group.members(max_depth=depth)]


@pytest.mark.parametrize("where", ["", "a"])
def test_consolidated_group_lists_the_live_members(zarr_format, where):
    store = MemoryStore()
    _build(store, zarr_format)
    live = zarrpy.Group.open(store, where, use_consolidated=False)
    snap = zarrpy.consolidate_metadata(store, path=where or None)
    reopened = zarrpy.open_consolidated(store, path=where or None)
    for g in (snap, reopened):
        assert g.consolidated_metadata is not None
        for depth in (0, 1, 2, None):
            assert _listing(g, depth) == _listing(live, depth), depth
        assert g.keys() == live.keys() and list(g) == list(live) and len(g) == len(live)
        assert g.array_keys() == live.array_keys() and g.group_keys() == live.group_keys()
        assert [n for n, _ in g.arrays()] == [n for n, _ in live.arrays()]
        assert [n for n, _ in g.groups()] == [n for n, _ in live.groups()]
        assert g.tree() == live.tree()
        for name, node in live.members(max_depth=None):
            assert name in g and g[name].path == node.path and _kind(g[name]) == _kind(node)
            if isinstance(node, zarrpy.Group):
                # a child group answers from its part of the snapshot
                assert g[name].consolidated_metadata is not None
                assert _listing(g[name], None) == _listing(node, None)
        assert "nope" not in g and "a/nope" not in g


# A random hierarchy: each entry adds a node under an earlier group (0 is the root).
hierarchies = st.lists(
    st.tuples(st.integers(0, 7), st.sampled_from(["a", "b", "cd", "e1"]), st.sampled_from(["group", "array"])),
    max_size=9,
)


@settings(max_examples=40, deadline=None)
@given(hierarchies, st.sampled_from(FORMATS))
def test_random_hierarchies_list_the_same_live_and_consolidated(plan, zarr_format):
    store = MemoryStore()
    root = zarrpy.Group.create(store, zarr_format=zarr_format)
    groups = [root]
    model: dict[str, str] = {}
    for parent_index, name, kind in plan:
        parent = groups[parent_index % len(groups)]
        path = f"{parent.path}/{name}" if parent.path else name
        if path in model:
            continue
        if kind == "group":
            groups.append(parent.create_group(name))
        else:
            parent.create_array(name, shape=(2,), dtype="int8", chunks=(1,), data=np.arange(2, dtype="int8"))
        model[path] = kind
    assert {n: _kind(m) for n, m in root.members(max_depth=None)} == model
    for depth in (0, 1):
        expected = sorted(p for p in model if p.count("/") <= depth)
        assert [n for n, _ in root.members(max_depth=depth)] == expected
    for g in groups[1:]:
        prefix = g.path + "/"
        assert {n: _kind(m) for n, m in g.members(max_depth=None)} == {
            p[len(prefix):]: k for p, k in model.items() if p.startswith(prefix)}
    snap = zarrpy.consolidate_metadata(store)
    for depth in (0, 1, None):
        assert _listing(snap, depth) == _listing(root, depth)
    for path, kind in model.items():
        assert path in snap and _kind(snap[path]) == kind
        assert path + "/zz" not in snap


# -- zarr-python as the oracle ---------------------------------------------------------------------------------


def _zarr():
    zarr = pytest.importorskip("zarr")
    return zarr


def _zarr_listing(zgroup):
    return sorted((name, "array" if hasattr(node, "shape") else "group") for name, node in zgroup.members(max_depth=None))


def test_zarr_python_lists_what_zarrpy_wrote(tmp_path, zarr_format):
    zarr = _zarr()
    path = str(tmp_path / "ours.zarr")
    root = _build(LocalStore(path), zarr_format)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_group(path, mode="r", zarr_format=zarr_format)
        assert _zarr_listing(z) == sorted(ALL.items())
        assert sorted(z.group_keys()) == root.group_keys() and sorted(z.array_keys()) == root.array_keys()
        assert sorted(z["a"].members(max_depth=None)) and sorted(n for n, _ in z["a"].members(max_depth=None)) == [
            "b", "b/c"]
        assert dict(z.attrs) == {"r": 1} and dict(z["a"].attrs) == {"k": "a"}
        assert "a/b/c" in z and "a/b/c/d" not in z
        np.testing.assert_array_equal(z["x"][...], np.arange(4.0))


def test_zarrpy_lists_what_zarr_python_wrote(tmp_path, zarr_format):
    zarr = _zarr()
    path = str(tmp_path / "theirs.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_group(path, mode="w", zarr_format=zarr_format, attributes={"r": 1})
        a = z.create_group("a", attributes={"k": "a"})
        a.create_group("b").create_array("c", shape=(2, 3), dtype="int32", chunks=(1, 3))
        z.create_array("x", shape=(4,), dtype="float64", chunks=(2,))[...] = np.arange(4.0)
        z.create_group("e")
        expected = _zarr_listing(z)
    assert expected == sorted(ALL.items())
    g = zarrpy.Group.open(LocalStore(path))
    assert g.zarr_format == zarr_format
    assert sorted({n: _kind(m) for n, m in g.members(max_depth=None)}.items()) == expected
    assert g.keys() == ["a", "e", "x"] and g.array_keys() == ["x"] and g.group_keys() == ["a", "e"]
    assert g["a/b/c"].shape == (2, 3) and g.attrs.asdict() == {"r": 1} and g["a"].attrs["k"] == "a"
    np.testing.assert_array_equal(g["x"][...], np.arange(4.0))


def test_consolidated_listings_agree_with_zarr_python(tmp_path, zarr_format):
    zarr = _zarr()
    path = str(tmp_path / "c.zarr")
    _build(LocalStore(path), zarr_format)
    ours = zarrpy.consolidate_metadata(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_consolidated(path, zarr_format=zarr_format)
        assert _zarr_listing(theirs) == sorted((n, _kind(m)) for n, m in ours.members(max_depth=None))
        assert sorted(theirs.group_keys()) == ours.group_keys()


def test_every_listed_member_can_be_opened(tmp_path):
    zarr = _zarr()
    path = str(tmp_path / "dunder.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_group(path, mode="w")
        z.create_group("__x")
        z.create_group("ok")
    g = zarrpy.open_group(path, mode="r")
    assert g.keys() == ["__x", "ok"]  # listed ...
    for name in g:
        assert name in g and g[name].path == name  # ... so it must open
