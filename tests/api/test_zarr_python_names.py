"""zarr-python 3.4's Array and Group methods, checked against zarr-python
itself on the same hierarchy: update_attributes, order, nmembers, get_array,
get_group, array_values, group_values, require_groups, move, and the reprs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.errors import NodeExistsError, NodeNotFoundError, ReadOnlyError, StoreError
from zarrpy.stores import MemoryStore, ZipStore


def _build(lib: Any, store: Any, zarr_format: int = 3) -> Any:
    """The same hierarchy through either library: arrays a, b/x; groups b, b/c, d."""
    root = lib.open_group(str(store) if isinstance(store, Path) else store, mode="w", zarr_format=zarr_format)
    root.create_array("a", shape=(4,), dtype="int32", chunks=(2,))
    root.create_group("b").create_array("x", shape=(2, 3), dtype="float64", chunks=(1, 3))
    root.create_group("b/c")
    root.create_group("d")
    return root


def _names(nodes: Any) -> list[str]:
    return [n.path for n in nodes]


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def both(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Any, Any]:
    return _build(zarrpy, tmp_path / "p.zarr", request.param), _build(zarr, tmp_path / "z.zarr", request.param)


def test_nmembers_matches_zarr_python(both: tuple[Any, Any]) -> None:
    ours, theirs = both
    for depth in (0, 1, 2, None):
        assert ours.nmembers(max_depth=depth) == theirs.nmembers(max_depth=depth)
    assert ours.nmembers() == theirs.nmembers() == 3
    with pytest.raises(ValueError, match="max_depth"):
        ours.nmembers(max_depth=-1)
    with pytest.raises(ValueError):
        theirs.nmembers(max_depth=-1)


def test_nmembers_from_consolidated_metadata(tmp_path: Path) -> None:
    _build(zarrpy, tmp_path / "p.zarr")
    zarrpy.consolidate_metadata(str(tmp_path / "p.zarr"))
    g = zarrpy.open_consolidated(tmp_path / "p.zarr", mode="r")
    assert g.consolidated_metadata is not None
    assert (g.nmembers(), g.nmembers(max_depth=None)) == (3, 5)


def test_array_values_and_group_values_match_zarr_python(both: tuple[Any, Any]) -> None:
    ours, theirs = both
    assert _names(ours.array_values()) == _names(theirs.array_values()) == ["a"]
    assert sorted(_names(ours.group_values())) == sorted(_names(theirs.group_values())) == ["b", "d"]
    assert all(isinstance(v, zarrpy.Array) for v in ours.array_values())
    assert all(isinstance(v, zarrpy.Group) for v in ours["b"].group_values())


def test_get_array_and_get_group_match_zarr_python(both: tuple[Any, Any]) -> None:
    ours, theirs = both
    assert ours.get_array("b/x").path == "b/x"
    assert ours.get_group("b/c").path == "b/c"
    oracle_has_them = hasattr(theirs, "get_array")  # zarr-python 3.4 does; 3.1 (the newest on Python 3.11) not
    if oracle_has_them:
        assert theirs.get_array("b/x").path == "b/x" and theirs.get_group("b/c").path == "b/c"
    for get, wrong in ((ours.get_array, "b"), (ours.get_group, "a"), (ours.get_array, "nope"),
                       (ours.get_group, "nope/deeper")):
        with pytest.raises(NodeNotFoundError):
            get(wrong)
    with pytest.raises(NodeNotFoundError, match=r"holds a group, not an array; use get_group"):
        ours.get_array("b")
    with pytest.raises(NodeNotFoundError, match=r"holds an array, not a group; use get_array"):
        ours.get_group("a")
    with pytest.raises(FileNotFoundError):  # zarr-python's ArrayNotFoundError is one too
        (theirs if oracle_has_them else ours).get_array("nope")


def test_require_groups_matches_zarr_python(both: tuple[Any, Any]) -> None:
    ours, theirs = both
    got = ours.require_groups("b", "e", "f/g")
    assert _names(got) == _names(theirs.require_groups("b", "e", "f/g")) == ["b", "e", "f/g"]
    assert ours.require_groups() == theirs.require_groups() == ()
    assert sorted(ours.group_keys()) == sorted(theirs.group_keys())
    with pytest.raises(NodeExistsError):
        ours.require_groups("e", "a")  # "a" is an array


def test_update_attributes_merges_as_zarr_python_does(both: tuple[Any, Any]) -> None:
    ours, theirs = both
    for lib_root in (ours, theirs):
        lib_root.attrs["keep"] = 1
        lib_root["a"].attrs["keep"] = 1
    assert ours.update_attributes({"new": [1, 2], "keep": 2}) is ours
    theirs.update_attributes({"new": [1, 2], "keep": 2})
    assert ours.attrs.asdict() == theirs.attrs.asdict() == {"keep": 2, "new": [1, 2]}
    a = ours["a"]
    assert a.update_attributes({"units": "m"}) is a
    theirs["a"].update_attributes({"units": "m"})
    assert a.attrs.asdict() == theirs["a"].attrs.asdict() == {"keep": 1, "units": "m"}
    assert zarrpy.open_array(ours.store, path="a").attrs.asdict() == {"keep": 1, "units": "m"}  # stored
    with pytest.raises(ReadOnlyError):
        zarrpy.open_group(ours.store, mode="r").update_attributes({"x": 1})


@pytest.mark.parametrize("order", ["C", "F"])
def test_order_matches_zarr_python(tmp_path: Path, order: str) -> None:
    ours = zarrpy.create_array(tmp_path / "p", shape=(2, 3), dtype="i2", zarr_format=2, order=order)
    theirs = zarr.create_array(str(tmp_path / "z"), shape=(2, 3), dtype="i2", zarr_format=2, order=order)
    assert ours.order == theirs.order == order
    assert zarrpy.open_array(tmp_path / "z").order == order  # reads zarr-python's .zarray
    v3 = zarrpy.create_array({}, shape=(2,), dtype="i2")
    assert v3.order == zarr.create_array({}, shape=(2,), dtype="i2").order == "C"


# -- move --------------------------------------------------------------------------------------

def _listing(store: Any) -> dict[str, bytes]:
    return {k: store.get(k) for k in store.list_prefix("")}


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_move_carries_a_whole_subtree(tmp_path: Path, zarr_format: int, kind: str) -> None:
    store_like: Any = MemoryStore() if kind == "memory" else tmp_path / "m.zarr"
    root = _build(zarrpy, store_like, zarr_format)
    data = np.arange(6.0).reshape(2, 3)
    root["b/x"][...] = data
    root["b"].attrs["title"] = "b"
    before = {k[len("b/"):]: v for k, v in _listing(root.store).items() if k.startswith("b/")}
    root.move("b", "e/f")
    after = _listing(root.store)
    assert not any(k.startswith("b/") for k in after)
    assert {k[len("e/f/"):]: v for k, v in after.items() if k.startswith("e/f/")} == before  # bytes unchanged
    assert "b" not in root and root.get_group("e").zarr_format == zarr_format  # a new parent group
    np.testing.assert_array_equal(root["e/f/x"][...], data)
    assert root["e/f"].attrs["title"] == "b" and "c" in root["e/f"]
    z = zarr.open_group(str(store_like), mode="r") if kind == "local" else None
    if z is not None:  # zarr-python reads the moved hierarchy
        np.testing.assert_array_equal(z["e/f/x"][...], data)


def test_move_an_array_within_a_subgroup(tmp_path: Path) -> None:
    root = _build(zarrpy, tmp_path / "m.zarr")
    root["a"][...] = [1, 2, 3, 4]
    sub = root["b"]
    sub.move("x", "y")
    root.move("a", "b/c/a")
    assert sub.array_keys() == ["y"]
    assert root["b/c/a"][...].tolist() == [1, 2, 3, 4] and "a" not in root


def test_move_refusals_change_nothing(tmp_path: Path) -> None:
    root = _build(zarrpy, tmp_path / "m.zarr")
    (tmp_path / "m.zarr" / "stray").mkdir()
    (tmp_path / "m.zarr" / "stray" / "junk").write_bytes(b"x")
    before = _listing(root.store)
    cases = [("nope", "z", NodeNotFoundError, "no array or group"),
             ("b", "d", NodeExistsError, "something is there already"),
             ("b", "stray", NodeExistsError, "something is there already"),
             ("b", "b/c/inner", NodeExistsError, "inside the source"),
             ("b", "b", NodeExistsError, "inside the source"),
             ("d", "a/inside", NodeExistsError, "is an array")]
    for source, dest, error, words in cases:
        with pytest.raises(error, match=words):
            root.move(source, dest)
        assert _listing(root.store) == before, (source, dest)
    with pytest.raises(ReadOnlyError):
        zarrpy.open_group(tmp_path / "m.zarr", mode="r").move("a", "z")
    assert _listing(root.store) == before


def test_move_refuses_a_store_that_cannot_delete(tmp_path: Path) -> None:
    with ZipStore(tmp_path / "m.zip", mode="w") as store:
        root = zarrpy.open_group(store, mode="w")
        root.create_array("a", shape=(2,), dtype="i1")
        with pytest.raises(StoreError, match="cannot delete"):
            root.move("a", "b")
        assert "a" in root and "b" not in root


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_move_keeps_consolidated_metadata_right(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "m.zarr"
    _build(zarrpy, path, zarr_format)
    root = zarrpy.consolidate_metadata(str(path))
    root = zarrpy.open_group(path, mode="r+")
    assert root.consolidated_metadata is not None
    root.move("b", "moved")
    for g in (zarrpy.open_consolidated(path), root):  # the stored snapshot and the live group agree
        assert sorted(g.keys()) == ["a", "d", "moved"]
        assert g.nmembers(max_depth=None) == 5 and "moved/x" in g and "b/x" not in g
    z = zarr.open_consolidated(str(path), zarr_format=zarr_format)
    assert sorted(z.group_keys()) == ["d", "moved"] and z["moved/x"].shape == (2, 3)


@settings(max_examples=25)
@given(names=st.lists(st.sampled_from(["p", "q", "r", "s"]), min_size=2, max_size=4, unique=True),
       depth=st.integers(1, 3))
def test_move_then_move_back_restores_every_byte(names: list[str], depth: int) -> None:
    root = zarrpy.group()
    src = "/".join(names[:depth][:max(1, depth - 1)])
    target = root.create_array(f"{src}/arr", shape=(5,), dtype="u1", chunks=(2,))
    target[...] = np.arange(5, dtype="u1")
    before = _listing(root.store)
    dest = f"elsewhere/{names[-1]}"
    root.move(src, dest)
    assert root[f"{dest}/arr"][...].tolist() == [0, 1, 2, 3, 4]
    root.move(dest, src)
    after = _listing(root.store)
    assert {k: v for k, v in after.items() if not k.startswith("elsewhere")} == before


# -- reprs -------------------------------------------------------------------------------------

def test_array_and_group_reprs_show_where_they_live(tmp_path: Path) -> None:
    a = zarrpy.create_array(tmp_path / "x.zarr", shape=(6, 4), dtype="int32")
    z = zarr.open_array(str(tmp_path / "x.zarr"))
    assert repr(a) == f"<zarrpy.Array {(tmp_path / 'x.zarr').as_uri()} shape=(6, 4) dtype=int32>"
    assert repr(a)[len("<zarrpy."):] == repr(z)[1:]  # zarr-python's repr, with our prefix
    g = zarrpy.open_group(tmp_path / "g.zarr", mode="w")
    s = g.create_array("sub/s", shape=(3,), dtype="string")
    assert repr(g) == f"<zarrpy.Group {(tmp_path / 'g.zarr').as_uri()}>"
    assert repr(s) == f"<zarrpy.Array {(tmp_path / 'g.zarr').as_uri()}/sub/s shape=(3,) dtype=string>"
    assert repr(g["sub"]) == f"<zarrpy.Group {(tmp_path / 'g.zarr').as_uri()}/sub>"


def test_memory_reprs_name_the_store_like_zarr_python() -> None:
    g = zarrpy.group()
    a = g.create_array("a", shape=(2,), dtype="bytes")
    r = zarrpy.create_array({}, shape=(2,), dtype="int16", serializer="numcodecs.vlen-array")
    match = re.fullmatch(r"<zarrpy\.Group memory://(\d+)>", repr(g))
    assert match is not None
    assert repr(a) == f"<zarrpy.Array memory://{match.group(1)}/a shape=(2,) dtype=bytes>"
    assert re.fullmatch(r"<zarrpy\.Array memory://\d+ shape=\(2,\) dtype=ragged int16>", repr(r))
    assert re.fullmatch(r"<Group memory://\d+>", repr(zarr.group()))  # the oracle's form
    other = zarrpy.group()
    assert repr(other) != repr(g)  # two stores, two names


def test_group_tree_prints_zarr_dtype_names() -> None:
    g = zarrpy.group()
    g.create_array("s", shape=(2,), dtype="string")
    assert "s (2,) string" in g.tree() and "StringDType" not in g.tree()
