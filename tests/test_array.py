"""Unit tests of Array and Group behaviour (no other implementation involved).

Most tests use a plain ``dict`` as the store: zarrpy wraps it in a
MemoryStore without copying, so the test can look at the exact keys written.
"""

from __future__ import annotations

import copy
import multiprocessing
import operator
import pickle
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from zarrpy.stores.memory import MemoryStore

RAW = {"serializer": {"name": "bytes", "configuration": {"endian": "little"}}, "compressors": None}


def chunk_keys(store: dict, prefix: str = "") -> set[str]:
    p = f"{prefix}/" if prefix else ""
    return {k[len(p):] for k in store if k.startswith(p) and not k.endswith("zarr.json")}


def snapshot(store: dict) -> dict:
    return {k: bytes(v) for k, v in store.items()}


# --------------------------------------------------------------------------
# fill values and missing chunks


@pytest.mark.parametrize(
    "dtype,fill",
    [("int16", -3), ("uint8", 255), ("float32", np.nan), ("float64", -np.inf), ("bool", True),
     ("complex64", complex(1, -1))],
)
def test_missing_chunks_read_as_fill(dtype, fill):
    store: dict = {}
    a = zarrpy.create_array(store, shape=(5, 7), dtype=dtype, chunks=(2, 3), fill_value=fill)
    assert chunk_keys(store) == set()
    expected = np.full((5, 7), fill, dtype=dtype)
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(a[1:4, 2:6], expected[1:4, 2:6])
    assert a[4, 6] == expected[4, 6] or (np.isnan(expected[4, 6]) and np.isnan(a[4, 6]))
    # write one chunk: the others still read as fill
    a[0:2, 0:3] = np.zeros((2, 3), dtype=dtype)
    assert chunk_keys(store) == {"c/0/0"}
    expected[0:2, 0:3] = 0
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(zarrpy.open_array(store)[...], expected)


def test_read_chunk_of_missing_chunk_is_fill():
    a = zarrpy.create_array({}, shape=(5,), dtype="int32", chunks=(3,), fill_value=4)
    # read_chunk returns the chunk's region of the array: the edge chunk is clipped
    np.testing.assert_array_equal(a.read_chunk((1,)), np.full(2, 4, dtype="int32"))
    np.testing.assert_array_equal(a.read_chunk((0,)), np.full(3, 4, dtype="int32"))


def test_default_fill_value_is_zero():
    a = zarrpy.create_array({}, shape=(3,), dtype="float64", chunks=(2,))
    np.testing.assert_array_equal(a[...], np.zeros(3))
    assert a.fill_value == 0


@pytest.mark.parametrize("fill", [0, 7, np.nan, -0.0, np.inf])
def test_write_empty_chunks_false_stores_no_fill_chunk(fill):
    store: dict = {}
    a = zarrpy.create_array(store, shape=(6,), dtype="float32", chunks=(2,), fill_value=fill, **RAW)
    assert a.write_empty_chunks is False
    a[...] = np.float32(fill)
    assert chunk_keys(store) == set()
    # a chunk with one non-fill element is stored
    a[3] = 1.0
    assert chunk_keys(store) == {"c/1"}
    # overwriting it with fill deletes the stored chunk
    a[2:4] = np.float32(fill)
    assert chunk_keys(store) == set()
    expected = np.full(6, fill, dtype="float32")
    np.testing.assert_array_equal(a[...], expected)


def test_write_empty_chunks_nan_fill_is_bitwise():
    """A chunk of NaNs with another payload, or of -0.0 for a 0.0 fill, is not
    the fill value bit for bit and must be kept."""
    store: dict = {}
    a = zarrpy.create_array(store, shape=(4,), dtype="float32", chunks=(2,), fill_value=0.0, **RAW)
    a[0:2] = -0.0
    assert chunk_keys(store) == {"c/0"}
    assert np.signbit(a[0:2]).all()
    b_store: dict = {}
    b = zarrpy.create_array(b_store, shape=(4,), dtype="float32", chunks=(2,), fill_value=np.nan, **RAW)
    payload = np.array([0x7FC00001, 0x7FC00001], dtype="u4").view("f4")
    b[0:2] = payload
    assert chunk_keys(b_store) == {"c/0"}
    assert b[0:2].view("u4").tolist() == [0x7FC00001, 0x7FC00001]


def test_write_empty_chunks_true_stores_fill_chunks():
    store: dict = {}
    a = zarrpy.create_array(store, shape=(4,), dtype="int8", chunks=(2,), fill_value=1,
                            write_empty_chunks=True, **RAW)
    a[...] = 1
    assert chunk_keys(store) == {"c/0", "c/1"}
    np.testing.assert_array_equal(a[...], np.ones(4, dtype="int8"))


def test_partial_chunk_write_with_fill_elsewhere_deletes_when_all_fill():
    store: dict = {}
    a = zarrpy.create_array(store, shape=(4, 4), dtype="uint16", chunks=(2, 2), fill_value=9, **RAW)
    a[0, 0] = 1
    assert chunk_keys(store) == {"c/0/0"}
    a[0, 0] = 9  # read-modify-write makes the chunk all-fill again
    assert chunk_keys(store) == set()


# --------------------------------------------------------------------------
# edge chunks


def test_partial_edge_chunks_roundtrip_and_store_full_chunk_shape():
    store: dict = {}
    data = np.arange(7 * 5, dtype="int32").reshape(7, 5)
    a = zarrpy.create_array(store, shape=(7, 5), dtype="int32", chunks=(3, 2), fill_value=-1, **RAW)
    a[...] = data
    np.testing.assert_array_equal(a[...], data)
    assert chunk_keys(store) == {f"c/{i}/{j}" for i in range(3) for j in range(3)}
    # edge chunks are stored at the full chunk shape, padded with the fill value
    for key in ("c/2/2", "c/0/2", "c/2/0"):
        assert len(store[key]) == 3 * 2 * 4
    edge = np.frombuffer(store["c/2/2"], dtype="<i4").reshape(3, 2)
    assert edge[0, 0] == data[6, 4]
    assert (edge[1:, :] == -1).all() and edge[0, 1] == -1
    np.testing.assert_array_equal(a.read_chunk((2, 2)), edge[:1, :1])
    # partial writes into edge chunks
    a[5:, 3:] = [[100, 101], [102, 103]]
    data[5:, 3:] = [[100, 101], [102, 103]]
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[6, :], data[6, :])
    np.testing.assert_array_equal(a[:, 4], data[:, 4])


def test_writing_whole_edge_region_resets_padding():
    """An edge chunk written whole (its in-array region) is encoded with fill
    in the padding, not with stale bytes from before."""
    store: dict = {}
    a = zarrpy.create_array(store, shape=(5,), dtype="int16", chunks=(4,), fill_value=0, **RAW)
    a[4] = 3
    assert np.frombuffer(store["c/1"], "<i2").tolist() == [3, 0, 0, 0]


# --------------------------------------------------------------------------
# 0-d arrays


def test_zero_dimensional_array():
    store: dict = {}
    a = zarrpy.create_array(store, shape=(), dtype="float64", chunks=(), fill_value=2.5)
    assert a.shape == () and a.ndim == 0 and a.size == 1
    assert a[()] == 2.5
    r = a[...]
    # numpy gives a 0-d ndarray here, zarr-python 3.4 a numpy scalar; either is fine
    assert np.shape(r) == () and r[()] == 2.5 and np.asarray(r).dtype == np.dtype("float64")
    a[()] = 7.25
    assert a[()] == 7.25
    assert chunk_keys(store) == {"c"}
    a[...] = -1.0
    assert a[...].shape == () and float(a[...]) == -1.0
    assert zarrpy.open_array(store)[()] == -1.0
    a[()] = 2.5  # back to the fill: chunk removed
    assert chunk_keys(store) == set()
    with pytest.raises(TypeError):
        len(a)
    with pytest.raises(IndexError):
        a[0]


def test_zero_length_dimension():
    store: dict = {}
    a = zarrpy.create_array(store, shape=(0, 3), dtype="int8", chunks=(2, 2))
    assert a[...].shape == (0, 3)
    assert a[:, 1].shape == (0,)
    a[...] = np.zeros((0, 3), dtype="int8")
    assert chunk_keys(store) == set()


# --------------------------------------------------------------------------
# bounds


@pytest.mark.parametrize(
    "sel",
    [5, -6, (0, 4), (0, -5), (5, slice(None)), (Ellipsis, 4), (1, 1, 1), [0, 5], [-6]],
    ids=repr,
)
def test_out_of_bounds_index_raises(sel):
    a = zarrpy.create_array({}, shape=(5, 4), dtype="int32", chunks=(2, 2))
    with pytest.raises(IndexError):
        a[sel]
    with pytest.raises(zarrpy.BoundsCheckError):
        a[sel]
    with pytest.raises(IndexError):
        a[sel] = 1


def test_out_of_bounds_write_changes_nothing():
    store: dict = {}
    a = zarrpy.create_array(store, shape=(5,), dtype="int32", chunks=(2,), **RAW)
    a[...] = np.arange(5)
    before = snapshot(store)
    with pytest.raises(IndexError):
        a[[0, 1, 9]] = 3
    assert snapshot(store) == before


def test_slices_past_the_end_are_clipped_like_numpy():
    data = np.arange(10, dtype="int64")
    a = zarrpy.create_array({}, shape=(10,), dtype="int64", chunks=(3,), data=data)
    np.testing.assert_array_equal(a[5:100], data[5:100])
    np.testing.assert_array_equal(a[-100:3], data[-100:3])
    assert a[20:30].shape == (0,)


# --------------------------------------------------------------------------
# read-only


def test_read_only_open_refuses_writes_and_writes_nothing(tmp_path: Path):
    path = tmp_path / "a.zarr"
    a = zarrpy.create_array(str(path), shape=(4,), dtype="int32", chunks=(2,), attributes={"k": 1})
    a[...] = [1, 2, 3, 4]

    def files():
        return {p.relative_to(path): p.read_bytes() for p in path.rglob("*") if p.is_file()}

    before = files()
    r = zarrpy.open_array(str(path), mode="r")
    assert r.read_only
    with pytest.raises(zarrpy.ReadOnlyError):
        r[0] = 9
    with pytest.raises(zarrpy.ReadOnlyError):
        r[...] = 0  # would delete chunks (all fill)
    with pytest.raises(zarrpy.ReadOnlyError):
        r.oindex[[0, 2]] = 5
    with pytest.raises(zarrpy.ReadOnlyError):
        r.attrs["k"] = 2
    with pytest.raises(zarrpy.ReadOnlyError):
        r.resize(2)
    with pytest.raises(zarrpy.ReadOnlyError):
        r.append(np.array([5]))
    assert files() == before
    np.testing.assert_array_equal(r[...], [1, 2, 3, 4])
    assert dict(r.attrs) == {"k": 1}


def test_read_only_group(tmp_path: Path):
    g = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="w")
    g.create_array("x", shape=(2,), dtype="int8", chunks=(2,))
    r = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="r")
    with pytest.raises(zarrpy.ReadOnlyError):
        r.create_group("sub")
    with pytest.raises(zarrpy.ReadOnlyError):
        r.create_array("y", shape=(2,), dtype="int8", chunks=(2,))
    with pytest.raises(zarrpy.ReadOnlyError):
        r.attrs["a"] = 1
    with pytest.raises(zarrpy.ReadOnlyError):
        r["x"][0] = 1  # members of a read-only group are read-only
    assert sorted(p.name for p in (tmp_path / "g.zarr").iterdir()) == ["x", "zarr.json"]


def test_read_only_memory_store():
    store: dict = {}
    zarrpy.create_array(store, shape=(2,), dtype="int8", chunks=(2,))
    with pytest.raises(zarrpy.ReadOnlyError, match="with mode='r\\+': the store is read-only"):
        zarrpy.open_array(MemoryStore(store, read_only=True), mode="r+")
    a = zarrpy.open_array(MemoryStore(store, read_only=True))
    assert a.read_only
    with pytest.raises(zarrpy.ReadOnlyError):
        a[0] = 1
    assert chunk_keys(store) == set()


# --------------------------------------------------------------------------
# attributes


def test_attrs_persisted_on_update(tmp_path: Path):
    path = str(tmp_path / "a.zarr")
    a = zarrpy.create_array(path, shape=(2,), dtype="int8", chunks=(2,), attributes={"a": 1})
    a.attrs["b"] = [1, 2, {"c": None}]
    a.attrs.update({"d": "é", "a": 2})
    assert dict(zarrpy.open_array(path).attrs) == {"a": 2, "b": [1, 2, {"c": None}], "d": "é"}
    del a.attrs["b"]
    assert dict(zarrpy.open_array(path).attrs) == {"a": 2, "d": "é"}
    a.attrs.put({"only": True})
    assert dict(zarrpy.open_array(path).attrs) == {"only": True}
    # the data and other metadata survive attribute updates
    a[...] = [3, 4]
    a.attrs["x"] = 0
    b = zarrpy.open_array(path)
    np.testing.assert_array_equal(b[...], [3, 4])
    assert b.shape == (2,) and b.dtype == np.dtype("int8")


def test_group_attrs_persisted(tmp_path: Path):
    path = str(tmp_path / "g.zarr")
    g = zarrpy.create_group(path, attributes={"t": "x"})
    g.attrs["n"] = 3
    assert dict(zarrpy.open_group(path, mode="r").attrs) == {"t": "x", "n": 3}


def test_attrs_not_json_serialisable_rejected_and_nothing_written():
    store: dict = {}
    a = zarrpy.create_array(store, shape=(2,), dtype="int8", chunks=(2,), attributes={"a": 1})
    before = snapshot(store)
    with pytest.raises((zarrpy.MetadataError, TypeError, ValueError)):
        a.attrs["bad"] = object()
    assert snapshot(store) == before
    assert dict(zarrpy.open_array(store).attrs) == {"a": 1}


# --------------------------------------------------------------------------
# groups


def test_group_hierarchy():
    store: dict = {}
    root = zarrpy.create_group(store, attributes={"root": True})
    sub = root.create_group("sub", attributes={"level": 1})
    x = root.create_array("x", shape=(3,), dtype="int8", chunks=(2,), fill_value=1)
    y = sub.create_array("y", shape=(2, 2), dtype="float32", chunks=(1, 2))
    deep = root.create_group("a/b/c")  # intermediate groups are created
    assert isinstance(deep, zarrpy.Group)

    assert "x" in root and "sub" in root and "sub/y" in root and "a/b" in root and "a/b/c" in root
    assert "nope" not in root and "sub/nope" not in root
    assert sorted(root.keys()) == ["a", "sub", "x"]
    assert len(root) == 3
    assert sorted(root) == ["a", "sub", "x"]
    names = [n for n, _ in root.members()]
    assert names == sorted(names) == ["a", "sub", "x"]
    assert root.array_keys() == ["x"]
    assert root.group_keys() == ["a", "sub"]
    all_names = [n for n, _ in root.members(max_depth=None)]
    assert set(all_names) == {"a", "a/b", "a/b/c", "sub", "sub/y", "x"}

    assert isinstance(root["x"], zarrpy.Array) and root["x"].shape == (3,)
    assert isinstance(root["sub"], zarrpy.Group)
    assert dict(root["sub"].attrs) == {"level": 1}
    assert root["sub/y"].path == "sub/y" == y.path
    assert root["sub"]["y"] == y
    np.testing.assert_array_equal(root["x"][...], [1, 1, 1])
    x[0] = 5
    np.testing.assert_array_equal(root["x"][...], [5, 1, 1])
    with pytest.raises(KeyError):
        root["missing"]

    tree = root.tree()
    for name in ("sub", "x", "y", "a", "b", "c"):
        assert name in tree
    lines = tree.splitlines()
    y_line = next(line for line in lines if line.strip().startswith("y"))
    sub_line = next(line for line in lines if line.strip() == "sub")
    assert len(y_line) - len(y_line.lstrip()) > len(sub_line) - len(sub_line.lstrip())

    # reopened from the store, everything is still there
    again = zarrpy.open_group(store, mode="r")
    assert sorted(again.keys()) == ["a", "sub", "x"]
    assert dict(again.attrs) == {"root": True}


def test_require_group():
    store: dict = {}
    root = zarrpy.create_group(store)
    g1 = root.require_group("g", attributes={"v": 1})
    g1.create_array("arr", shape=(1,), dtype="int8", chunks=(1,))
    g2 = root.require_group("g")  # opens, does not replace
    assert g2 == g1
    assert "arr" in g2
    assert dict(g2.attrs) == {"v": 1}
    root.create_array("an_array", shape=(1,), dtype="int8", chunks=(1,))
    with pytest.raises((zarrpy.NodeExistsError, TypeError)):
        root.require_group("an_array")


def test_open_group_modes(tmp_path: Path):
    path = str(tmp_path / "g.zarr")
    with pytest.raises(zarrpy.NodeNotFoundError):
        zarrpy.open_group(path, mode="r")
    g = zarrpy.open_group(path, mode="a")
    g.create_group("s")
    assert "s" in zarrpy.open_group(path, mode="a")
    with pytest.raises(zarrpy.NodeExistsError):
        zarrpy.open_group(path, mode="w-")
    assert "s" not in zarrpy.open_group(path, mode="w")


def test_open_dispatches_on_node_type():
    store: dict = {}
    root = zarrpy.create_group(store)
    root.create_array("x", shape=(1,), dtype="int8", chunks=(1,))
    assert isinstance(zarrpy.open(store, mode="r"), zarrpy.Group)
    assert isinstance(zarrpy.open(store, mode="r", path="x"), zarrpy.Array)
    with pytest.raises(zarrpy.NodeNotFoundError):
        zarrpy.open_array(store, path="nope")
    with pytest.raises((zarrpy.NodeNotFoundError, zarrpy.ZarrpyError)):
        zarrpy.open_array(store)  # the root is a group


@pytest.mark.parametrize("existing", ["array", "group"])
@pytest.mark.parametrize("new", ["array", "group"])
def test_create_over_existing_node_raises_and_changes_nothing(existing, new):
    store: dict = {}
    root = zarrpy.create_group(store)
    if existing == "array":
        a = root.create_array("n", shape=(3,), dtype="int16", chunks=(2,), attributes={"old": 1})
        a[...] = [1, 2, 3]
    else:
        g = root.create_group("n", attributes={"old": 1})
        g.create_array("inner", shape=(1,), dtype="int8", chunks=(1,), fill_value=3)[0] = 4
    before = snapshot(store)
    with pytest.raises(zarrpy.NodeExistsError):
        if new == "array":
            root.create_array("n", shape=(5,), dtype="float64", chunks=(5,))
        else:
            root.create_group("n")
    with pytest.raises(zarrpy.NodeExistsError):
        if new == "array":
            zarrpy.create_array(store, name="n", shape=(5,), dtype="float64", chunks=(5,))
        else:
            zarrpy.create_group(store, path="n")
    assert snapshot(store) == before


def test_create_with_overwrite_replaces_node_and_its_chunks():
    store: dict = {}
    a = zarrpy.create_array(store, name="n", shape=(4,), dtype="int16", chunks=(2,), **RAW)
    a[...] = [1, 2, 3, 4]
    b = zarrpy.create_array(store, name="n", shape=(2,), dtype="int16", chunks=(2,), fill_value=7,
                            overwrite=True, **RAW)
    np.testing.assert_array_equal(b[...], [7, 7])  # the old chunk c/0 is gone, not reused
    assert chunk_keys(store, "n") == set()


def test_no_node_inside_an_array():
    store: dict = {}
    zarrpy.create_array(store, name="arr", shape=(2,), dtype="int8", chunks=(2,))
    before = snapshot(store)
    with pytest.raises(zarrpy.NodeExistsError):
        zarrpy.create_array(store, name="arr/inner", shape=(2,), dtype="int8", chunks=(2,))
    with pytest.raises(zarrpy.NodeExistsError):
        zarrpy.create_group(store, path="arr/g")
    assert snapshot(store) == before


def test_invalid_create_arguments_write_nothing():
    store: dict = {}
    with pytest.raises((zarrpy.ZarrpyError, ValueError, TypeError)):
        zarrpy.create_array(store, shape=(4,), dtype="int8", chunks=(0,))
    with pytest.raises((zarrpy.ZarrpyError, ValueError, TypeError)):
        zarrpy.create_array(store, shape=(4,), dtype="uint8", chunks=(2,), fill_value=300)
    with pytest.raises(zarrpy.UnknownCodecError):
        zarrpy.create_array(store, shape=(4,), dtype="int8", chunks=(2,), compressors=[{"name": "nope"}])
    with pytest.raises(zarrpy.CodecError):
        zarrpy.create_array(store, shape=(4, 4), dtype="int8", chunks=(2, 2),
                            filters=[{"name": "transpose", "configuration": {"order": [0, 1, 2]}}])
    assert store == {}


# --------------------------------------------------------------------------
# pickling


def test_pickle_array_local_store(tmp_path: Path):
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(6, 4), dtype="float32", chunks=(4, 3),
                            fill_value=np.nan)
    data = np.arange(24, dtype="float32").reshape(6, 4)
    a[...] = data
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b, zarrpy.Array)
    assert b.shape == a.shape and b.chunks == a.chunks and b.dtype == a.dtype
    np.testing.assert_array_equal(b[...], data)
    # it is the same on-disk array: writes through one are seen by the other
    b[0, 0] = -1
    assert a[0, 0] == -1


def test_array_equality_survives_pickling_and_reopening(tmp_path: Path):
    for fill in (0, np.nan):  # a NaN fill value must not make an array unequal to itself
        path = str(tmp_path / f"a{fill}.zarr")
        a = zarrpy.create_array(path, shape=(3,), dtype="float32", chunks=(2,), fill_value=fill)
        assert pickle.loads(pickle.dumps(a)) == a
        assert zarrpy.open_array(path) == zarrpy.open_array(path)


def test_pickle_read_only_array_stays_read_only(tmp_path: Path):
    zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(2,), dtype="int8", chunks=(2,))
    r = zarrpy.open_array(str(tmp_path / "a.zarr"), mode="r")
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.read_only
    with pytest.raises(zarrpy.ReadOnlyError):
        r2[0] = 1


def test_pickle_group_local_store(tmp_path: Path):
    g = zarrpy.open_group(str(tmp_path / "g.zarr"), mode="w", attributes={"a": 1})
    g.create_group("sub").create_array("x", shape=(3,), dtype="int64", chunks=(2,))[...] = [1, 2, 3]
    h = pickle.loads(pickle.dumps(g))
    assert isinstance(h, zarrpy.Group)
    assert dict(h.attrs) == {"a": 1}
    np.testing.assert_array_equal(h["sub/x"][...], [1, 2, 3])
    sub = pickle.loads(pickle.dumps(g["sub"]))
    assert sub.path == "sub"
    np.testing.assert_array_equal(sub["x"][...], [1, 2, 3])


@pytest.mark.parametrize("store", [{}, "memory://pickle-refused/a.zarr"], ids=["MemoryStore", "fsspec-memory"])
def test_pickling_an_array_on_process_memory_is_refused(store):
    """Another process would see another store (a copy, or an empty memory
    filesystem) and lose its writes: refused with the remedy named."""
    a = zarrpy.create_array(store, shape=(3,), dtype="int8", chunks=(2,), overwrite=True)
    a[...] = [1, 2, 3]
    with pytest.raises(zarrpy.ProcessLocalError, match="lives in this process's memory") as info:
        pickle.dumps(a)
    assert isinstance(info.value, pickle.PicklingError)
    assert a.store.display_name in str(info.value) and "directory" in str(info.value)
    with pytest.raises(zarrpy.ProcessLocalError):
        pickle.dumps(a.read_chunk)  # a bound method pickles its array
    pickle.loads(pickle.dumps(a.store))  # the store itself still pickles (by value / by URL)


def test_copies_of_an_array_on_process_memory_work():
    """copy.copy and copy.deepcopy do not pickle: a copy shares the store,
    a deep copy reads a deep copy of it (as before)."""
    a = zarrpy.create_array({}, shape=(3,), dtype="int8", chunks=(2,))
    a[...] = [1, 2, 3]
    shallow, deep = copy.copy(a), copy.deepcopy(a)
    assert shallow.store is a.store and shallow == a
    a[0] = 9
    np.testing.assert_array_equal(shallow[...], [9, 2, 3])
    np.testing.assert_array_equal(deep[...], [1, 2, 3])


def test_pickle_in_spawned_processes(tmp_path: Path):
    """Arrays travel to spawned workers by store URL and path; the workers
    read and write chunks of the same on-disk array."""
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(4, 6), dtype="int32", chunks=(2, 3),
                            fill_value=-1)
    a[0:2, 0:3] = np.arange(6, dtype="int32").reshape(2, 3)
    ctx = multiprocessing.get_context("spawn")
    # builtin functions as workers: nothing from this test module has to be importable
    with ctx.Pool(2) as pool:
        read = pool.starmap(operator.getitem, [(a, np.s_[0:2, 0:3]), (a, np.s_[2:, 3:])])
        pool.starmap(operator.setitem, [(a, np.s_[2:4, 3:6], 7), (a, np.s_[0:2, 3:6], 8)])
        chunk = pool.apply(a.read_chunk, ((0, 0),))  # a bound method pickles its array too
    np.testing.assert_array_equal(chunk, np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(read[0], np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(read[1], np.full((2, 3), -1))
    expected = np.full((4, 6), -1, dtype="int32")
    expected[0:2, 0:3] = np.arange(6).reshape(2, 3)
    expected[2:4, 3:6] = 7
    expected[0:2, 3:6] = 8
    np.testing.assert_array_equal(a[...], expected)


# --------------------------------------------------------------------------
# misc Array behaviour


def test_array_properties():
    a = zarrpy.create_array({}, name="grp/arr", shape=(10, 7), dtype="uint16", chunks=(4, 3),
                            dimension_names=["y", "x"], fill_value=3)
    assert a.shape == (10, 7) and a.chunks == (4, 3) and a.ndim == 2 and a.size == 70
    assert a.dtype == np.dtype("uint16") and a.nbytes == 140
    assert a.path == "grp/arr" and a.name == "/grp/arr" and a.basename == "arr"
    assert a.cdata_shape == (3, 3) and a.nchunks == 9
    assert a.nchunks_initialized == 0
    assert tuple(a.dimension_names) == ("y", "x")
    assert len(a) == 10
    a[0] = 1
    assert a.nchunks_initialized == 3
    np.testing.assert_array_equal(np.asarray(a), a[...])


def test_value_broadcast_and_shape_mismatch():
    a = zarrpy.create_array({}, shape=(3, 4), dtype="int32", chunks=(2, 2))
    a[1] = [1, 2, 3, 4]
    a[:, 0] = 9
    np.testing.assert_array_equal(a[...], [[9, 0, 0, 0], [9, 2, 3, 4], [9, 0, 0, 0]])
    with pytest.raises((ValueError, IndexError)):
        a[0:2, 0:2] = np.ones((3, 3))


def test_resize_shrink_then_grow_shows_fill():
    store: dict = {}
    a = zarrpy.create_array(store, shape=(7,), dtype="int8", chunks=(3,), fill_value=-1, **RAW)
    a[...] = np.arange(7)
    a.resize(4)
    assert a.shape == (4,)
    assert chunk_keys(store) == {"c/0", "c/1"}
    a.resize(8)
    np.testing.assert_array_equal(a[...], [0, 1, 2, 3, -1, -1, -1, -1])
    assert zarrpy.open_array(store).shape == (8,)


def test_append():
    a = zarrpy.create_array({}, shape=(2, 3), dtype="int16", chunks=(2, 2),
                            data=np.arange(6, dtype="int16").reshape(2, 3))
    a.append(np.full((1, 3), 7, dtype="int16"))
    a.append(np.full((3, 1), 8, dtype="int16"), axis=1)
    np.testing.assert_array_equal(a[...], [[0, 1, 2, 8], [3, 4, 5, 8], [7, 7, 7, 8]])
