"""Calls zarr-python users make out of habit, each checked against zarr-python 3 where it has an answer."""

from __future__ import annotations

import numpy as np
import pytest

import zarrpy

zarr = pytest.importorskip("zarr")  # zarr-python: the oracle (a test extra)


def test_open_array_mode_a_opens_or_creates(tmp_path):
    """The same call creates the array, then opens it (creation arguments unused), as zarr-python."""
    path = str(tmp_path / "a.zarr")
    first = zarrpy.open_array(path, mode="a", shape=(10,), chunks=(5,), dtype="i4")
    first[...] = np.arange(10)
    again = zarrpy.open_array(path, mode="a", shape=(10,), chunks=(5,), dtype="i4")
    assert again[...].tolist() == list(range(10))
    theirs = zarr.open_array(path, mode="a", shape=(10,), chunks=(5,), dtype="i4")
    assert theirs[...].tolist() == list(range(10))
    with pytest.raises(TypeError, match="mode='r'"):
        zarrpy.open_array(path, mode="r", shape=(10,))


def test_open_with_shape_only_defaults_to_float64(tmp_path):
    ours = zarrpy.open(str(tmp_path / "o.zarr"), mode="w", shape=(4,))
    theirs = zarr.open(str(tmp_path / "t.zarr"), mode="w", shape=(4,))
    assert ours.dtype == theirs.dtype == np.float64


@pytest.mark.parametrize("shape", [np.int64(4), (np.int64(2), 3), np.array([2, 3]), [np.int32(1)]])
def test_numpy_integers_as_shape(shape):
    ours = zarrpy.zeros(shape)
    assert ours.shape == zarr.zeros(shape).shape
    assert zarrpy.create_array({}, shape=shape, dtype="i4").shape == ours.shape
    g = zarrpy.group()
    g.create_array("r", shape=shape, dtype="i4")
    assert g.require_array("r", shape=shape, dtype="i4").shape == ours.shape


@pytest.mark.parametrize("shape", [True, "ab", (1.5,), None, (2, -1)])
def test_bad_shapes_are_refused(shape):
    store = {}
    with pytest.raises((zarrpy.MetadataError, TypeError), match="shape"):
        zarrpy.create_array(store, shape=shape, dtype="i4")
    assert store == {}


@pytest.mark.parametrize("chunks", [True, False])
def test_boolean_chunks_are_refused(chunks):
    with pytest.raises(zarrpy.MetadataError, match="chunks"):
        zarrpy.create_array({}, shape=(1000, 1000), chunks=chunks, dtype="f8")


def test_object_arrays_of_numbers_write_as_numpy_assigns_them():
    """pandas object columns: numbers in an object array are assigned element by element."""
    a = zarrpy.zeros((4,), dtype="i4", chunks=(2,))
    z = zarr.zeros((4,), dtype="i4", chunks=(2,))
    a[0:2] = z[0:2] = np.array([1, 2], dtype=object)
    assert a[...].tolist() == z[...].tolist() == [1, 2, 0, 0]
    store = a.store
    before = dict(store._data) if hasattr(store, "_data") else None
    with pytest.raises(OverflowError):
        a[0:2] = np.array([1, 2**40], dtype=object)
    with pytest.raises(TypeError):
        a[0:2] = np.array([1, "x"], dtype=object)
    assert a[...].tolist() == [1, 2, 0, 0]
    if before is not None:
        assert dict(store._data) == before
    assert zarrpy.array(np.array([1, 2], dtype=object), dtype="i8")[...].tolist() == [1, 2]


def test_group_setitem_refuses_groups_and_mappings():
    g = zarrpy.group()
    for value in (zarrpy.group(), {"a": 1}):
        with pytest.raises(TypeError, match="create_group"):
            g["x"] = value
    assert list(g) == []


def test_contains_is_false_for_names_that_are_no_member():
    g = zarrpy.group()
    g["x"] = np.arange(3)
    assert "" not in g and "/" not in g and 1 not in g
    assert "x" in g


def test_like_with_another_dtype_drops_what_only_fits_the_source():
    strings = zarrpy.array(["a", "b"])
    ones = zarrpy.ones_like(strings, dtype="i4")
    assert ones.dtype == np.int32 and ones[...].tolist() == [1, 1]
    assert zarr.ones_like(zarr.array(np.array(["a", "b"])), dtype="i4")[...].tolist() == [1, 1]
    src = zarrpy.full((3,), 9, dtype="i2", compressors=["gzip"])
    same = zarrpy.full_like(src)
    assert same[...].tolist() == [9, 9, 9] and [c.name for c in same.compressors] == ["gzip"]
    floats = zarrpy.zeros_like(src, dtype="f4")
    assert floats.dtype == np.float32 and floats[...].tolist() == [0, 0, 0]


def test_create_accepts_chunk_shape():
    assert zarrpy.create((4,), chunk_shape=(2,)).chunks == zarr.create((4,), chunk_shape=(2,)).chunks == (2,)
    with pytest.raises(TypeError):
        zarrpy.create((4,), chunks=(2,), chunk_shape=(2,))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_delete_from_a_consolidated_group_updates_its_snapshot(tmp_path, zarr_format):
    """As zarr-python: the stored consolidated metadata forgets a deleted member."""
    path = str(tmp_path / "c.zarr")
    g = zarrpy.group(path, zarr_format=zarr_format)
    g.create_array("x", shape=(3,), dtype="i4")[...] = 5
    g.create_group("s").create_array("y", shape=(2,), dtype="i4")
    zarrpy.consolidate_metadata(path)
    del zarrpy.open_group(path)["x"]
    reopened = zarrpy.open_group(path)
    assert reopened.consolidated_metadata is not None
    assert list(reopened) == ["s"] and "x" not in reopened
    assert sorted(name for name, _ in reopened.members(max_depth=None)) == ["s", "s/y"]
    assert sorted(zarr.open_group(path, mode="r")) == ["s"]


def test_a_group_without_consolidated_metadata_gets_none_on_delete(tmp_path):
    path = str(tmp_path / "g.zarr")
    g = zarrpy.group(path)
    g["x"] = np.arange(3)
    del g["x"]
    assert "consolidated_metadata" not in (tmp_path / "g.zarr" / "zarr.json").read_text()


@pytest.mark.parametrize("opener", [zarrpy.open_group, zarrpy.open, zarrpy.open_consolidated])
def test_mode_a_with_the_other_format_says_so_and_writes_nothing(tmp_path, opener):
    path = tmp_path / "v3.zarr"
    zarrpy.group(str(path))
    before = sorted(p.name for p in path.iterdir())
    with pytest.raises(zarrpy.NodeExistsError, match="holds a Zarr V3 node, not V2") as info:
        opener(str(path), zarr_format=2)
    assert "overwrite" not in str(info.value)
    assert sorted(p.name for p in path.iterdir()) == before
