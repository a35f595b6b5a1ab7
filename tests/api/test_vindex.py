"""Vectorised (pointwise) selections: ``a.vindex[...]``, ``get/set_coordinate_selection``,
``get/set_mask_selection``, and ``a[...]`` with a full boolean mask or a tuple
of integer arrays.

numpy is the oracle: every read equals ``data[sel]`` in shape and values, and
every write leaves the array equal to ``data`` after ``data[sel] = value``
(repeated indices included: the last write wins, as numpy does it). On top of
zarr-python, ``vindex`` takes slices and Ellipsis between the index arrays
(numpy's rule: advanced indices broadcast together; when a slice separates
them, their dimensions come first).

Beyond equality with numpy, the tests hold zarrpy to its storage promises:
a write changes only the stored objects (and, in a shard, the inner chunks)
that hold written points; a read fetches each chunk it needs once and, in a
sharded array, only the index and the inner chunks that hold points.
zarr-python, reading the same store, returns the same results.
"""

from __future__ import annotations

import re
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zarrpy
from tests.strategies import array_layouts
from tests.test_array_sharding import (
    CountingStore,
    _codec_and_spec,
    index_nbytes,
    inner_chunks,
)
from zarrpy.errors import BoundsCheckError, SelectionError

ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
PROPS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------
# strategies


def _slices(n: int) -> st.SearchStrategy[slice]:
    bound = st.none() | st.integers(-n - 1, n + 1)
    return st.builds(slice, bound, bound, st.sampled_from([None, 1, 2, -1, -2]))


@st.composite
def index_arrays(draw, n: int, shape: tuple[int, ...]):
    """Integers in [-n, n) of ``shape``: repeated, unsorted and negative ones
    included; as a numpy array of some integer dtype, or as a nested list."""
    arr = draw(hnp.arrays(np.int64, shape, elements=st.integers(-n, n - 1)))
    form = draw(st.sampled_from(["int64", "int32", "intp", "list"]))
    if form == "list" and arr.size:  # numpy reads [] as float: empty lists are left out
        return arr.tolist()
    return arr.astype(np.int32 if form == "int32" else np.intp if form == "intp" else np.int64)


@st.composite
def pointwise_selections(draw, shape, *, slices: bool = True, scalars: bool = True):
    """A numpy advanced-index tuple for ``shape``: at least one integer array,
    the arrays' shapes broadcast together (e.g. (3, 1) with (4,), sides of 0
    too), other dimensions integers or (when ``slices``) slices; trailing or
    leading full slices are sometimes spelled as Ellipsis."""
    ndim = len(shape)
    kinds = ["array"] + (["int"] if scalars else []) + (["slice"] if slices else [])
    per_dim = [draw(st.sampled_from(kinds)) for _ in range(ndim)]
    if "array" not in per_dim:
        per_dim[draw(st.integers(0, ndim - 1))] = "array"
    n_arrays = per_dim.count("array")
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=n_arrays, min_dims=1, max_dims=2,
                                                    min_side=0, max_side=4)).input_shapes
    shapes = iter(shapes)
    sel = []
    for kind, n in zip(per_dim, shape):
        if kind == "array":
            sel.append(draw(index_arrays(n, next(shapes))))
        elif kind == "int":
            sel.append(draw(st.integers(-n, n - 1)))
        else:
            sel.append(draw(st.just(slice(None)) | _slices(n)))
    if slices and draw(st.booleans()):
        full = [isinstance(s, slice) and s == slice(None) for s in sel]
        if full[-1]:
            k = len(full) - next(i for i in range(len(full) - 1, -1, -1) if not full[i]) - 1
            sel = sel[: len(sel) - k] + [Ellipsis]
        elif full[0]:
            k = next(i for i, f in enumerate(full) if not f)
            sel = [Ellipsis] + sel[k:]
    return tuple(sel)


def _is_pure_coordinate(sel: tuple, ndim: int) -> bool:
    """One integer array (or list) per dimension: a coordinate selection."""
    return len(sel) == ndim and all(isinstance(s, (np.ndarray, list)) for s in sel)


# --------------------------------------------------------------------------
# helpers


def _random(shape, seed, dtype="int32") -> np.ndarray:
    return np.random.default_rng(seed).integers(-1000, 1000, size=shape).astype(dtype)


def _make(shape, chunks, shards, *, seed=0, fill_value=0, store=None, **kwargs):
    """A filled array: (store dict, array, its data in numpy)."""
    store = {} if store is None else store
    a = zarrpy.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="int32",
                            fill_value=fill_value, **kwargs)
    data = _random(shape, seed)
    a[...] = data
    return store, a, data


def _points(shape, select) -> np.ndarray:
    """The coordinates (n, ndim) of the elements that ``select(ndarray)`` picks."""
    grids = np.indices(shape)
    return np.stack([np.asarray(select(g)).reshape(-1) for g in grids], axis=1).reshape(-1, len(shape))


def _object_key(a, point) -> str:
    """The store key of the stored object (shard or chunk) holding ``point``."""
    obj = a.shards or a.chunks
    return a.chunk_key(tuple(int(p) // o for p, o in zip(point, obj)))


def _check_only_touched_objects_changed(store, a, before: dict, points: np.ndarray) -> None:
    """Keys of objects without written points keep their bytes; in a touched
    shard, inner chunks without written points keep their encoded bytes."""
    touched = {_object_key(a, p) for p in points}
    for key, value in before.items():
        if key.endswith((".json", ".zarray", ".zattrs")) or key in touched:
            continue
        assert store.get(key) == value, f"untouched {key} changed"
    if a.shards is None:
        return
    for key in touched:
        if before.get(key) is None or store.get(key) is None:
            continue
        old, new = inner_chunks(a, before[key]), inner_chunks(a, store[key])
        hit = {tuple(int(p) % s // c for p, s, c in zip(pt, a.shards, a.chunks))
               for pt in points if _object_key(a, pt) == key}
        for inner, value in old.items():
            if inner not in hit:
                assert new.get(inner) == value, f"untouched inner chunk {inner} of {key} changed"


def _value_for(draw, shape, seed):
    """A value to assign to a selection of ``shape``: full shape, a scalar,
    or a trailing row that broadcasts."""
    full = _random(shape, seed + 1)
    form = draw(st.sampled_from(["full", "scalar", "row"] if full.size else ["full", "scalar"]))
    if form == "scalar":
        return int(full.flat[0]) if full.size else 7
    if form == "row":
        return full[(0,) * (len(shape) - 1)]
    return full


# --------------------------------------------------------------------------
# reads and writes against numpy


@PROPS
@given(st.data())
def test_pointwise_reads_match_numpy(data):
    shape, chunks, shards = data.draw(array_layouts(max_side=8), label="layout")
    _, a, arr = _make(shape, chunks, shards, seed=data.draw(st.integers(0, 99), label="seed"))
    sel = data.draw(pointwise_selections(shape), label="sel")
    want = arr[sel]
    got = a.vindex[sel]
    assert np.shape(got) == want.shape
    np.testing.assert_array_equal(got, want)
    if _is_pure_coordinate(sel, len(shape)):
        np.testing.assert_array_equal(a.get_coordinate_selection(sel), want)
    if len(sel) == len(shape) and not any(isinstance(s, slice) or s is Ellipsis for s in sel):
        np.testing.assert_array_equal(a[sel], want)  # pure fancy indexing is pointwise, like numpy


@PROPS
@given(st.data())
def test_pointwise_writes_match_numpy_and_touch_only_their_chunks(data):
    shape, chunks, shards = data.draw(array_layouts(max_side=8), label="layout")
    seed = data.draw(st.integers(0, 99), label="seed")
    store, a, arr = _make(shape, chunks, shards, seed=seed)
    before = dict(store)
    sel = data.draw(pointwise_selections(shape), label="sel")
    value = _value_for(data.draw, arr[sel].shape, seed)
    how = data.draw(st.sampled_from(["vindex", "set_coordinate_selection", "setitem"]), label="how")
    if how == "set_coordinate_selection" and _is_pure_coordinate(sel, len(shape)):
        a.set_coordinate_selection(sel, value)
    elif how == "setitem" and len(sel) == len(shape) and not any(isinstance(s, slice) or s is Ellipsis
                                                                  for s in sel):
        a[sel] = value
    else:
        a.vindex[sel] = value
    arr[sel] = value  # repeated points: numpy's last write wins
    np.testing.assert_array_equal(a[...], arr)
    _check_only_touched_objects_changed(store, a, before, _points(shape, lambda g: g[sel]))


@PROPS
@given(st.data())
def test_mask_reads_and_writes_match_numpy(data):
    shape, chunks, shards = data.draw(array_layouts(max_side=8), label="layout")
    seed = data.draw(st.integers(0, 99), label="seed")
    store, a, arr = _make(shape, chunks, shards, seed=seed)
    mask = data.draw(hnp.arrays(np.bool_, shape), label="mask")
    want = arr[mask]
    for got in (a.get_mask_selection(mask), a.vindex[mask], a[mask]):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    before = dict(store)
    value = _value_for(data.draw, want.shape, seed)
    how = data.draw(st.sampled_from(["set_mask_selection", "vindex", "setitem"]), label="how")
    if how == "set_mask_selection":
        a.set_mask_selection(mask, value)
    elif how == "vindex":
        a.vindex[mask] = value
    else:
        a[mask] = value
    arr[mask] = value
    np.testing.assert_array_equal(a[...], arr)
    _check_only_touched_objects_changed(store, a, before, _points(shape, lambda g: g[mask]))


# --------------------------------------------------------------------------
# named cases: the shapes numpy's rules give


@pytest.mark.parametrize("shards", [None, (4, 6)], ids=["chunks", "shards"])
@pytest.mark.parametrize("sel", [
    (np.array([[0], [3], [7]]), np.array([1, 11, -1, 5])),  # (3, 1) with (4,): a 3 x 4 result
    (np.array([5, 5, 0, 5]), np.array([2, 2, 9, 2])),  # repeated and unsorted points
    (np.array([-1, -8]), np.array([-12, 11])),  # negative indices wrap
    (np.array([], dtype=np.intp), np.array([], dtype=np.intp)),  # no points
    (np.zeros((0, 3), dtype=np.intp), np.array([1, 2, 3])),  # (0, 3): empty, 2-D
    ([1, 2], 3),  # an integer broadcasts with the array
    (np.array([[1, 2], [3, 4]]), slice(None)),  # an array then a slice: (2, 2, 12)
    (slice(1, 7, 2), np.array([[0, 11]])),  # a slice first, one array after: (3, 1, 2)
    (Ellipsis, np.array([3, 0, 3])),
], ids=["broadcast", "repeated", "negative", "empty", "empty-2d", "int", "array-slice", "slice-array",
        "ellipsis"])
def test_named_2d_selections(sel, shards):
    store, a, arr = _make((8, 12), (2, 3), shards, seed=1)
    want = arr[sel]
    got = a.vindex[sel]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    before = dict(store)
    value = np.arange(want.size, dtype="int32").reshape(want.shape) + 5000
    a.vindex[sel] = value
    arr[sel] = value
    np.testing.assert_array_equal(a[...], arr)
    _check_only_touched_objects_changed(store, a, before, _points(arr.shape, lambda g: g[sel]))


@pytest.mark.parametrize("sel", [
    (np.array([0, 2]), slice(None), np.array([1, 3])),  # separated by a slice: broadcast dims first
    (slice(None), np.array([0, 2]), np.array([1, 3])),  # adjacent: in place of the first array
    (np.array([[0], [2]]), 1, slice(0, 4, 2)),  # an integer counts as an array
    (np.array([1, 1]), Ellipsis, np.array([0, 4])),
    (np.array([True, False, True]), slice(None), 2),  # a 1-D mask on one dimension
    (np.ones((3, 4), dtype=bool), slice(1, 3)),  # a mask over the leading dimensions
], ids=["separated", "adjacent", "int-separated", "ellipsis", "mask-1d", "mask-leading"])
def test_mixed_slices_follow_numpy_order_of_dimensions(sel):
    _, a, arr = _make((3, 4, 5), (2, 3, 2), None, seed=2)
    want = arr[sel]
    got = a.vindex[sel]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_repeated_points_last_write_wins():
    a = _make((6, 6), (4, 4), None, seed=3)[1]
    rows, cols = [1, 5, 1, 1, 5], [2, 0, 2, 2, 0]
    a.vindex[rows, cols] = [10, 20, 11, 12, 21]
    assert a[1, 2] == 12 and a[5, 0] == 21
    a.set_coordinate_selection((np.array([0, 0]), np.array([3, 3])), np.array([7, 8]))
    assert a[0, 3] == 8
    a.oindex[[4, 4], [1]] = np.array([[30], [31]])
    assert a[4, 1] == 31


def test_one_dimensional_index_array_and_list():
    _, a, arr = _make((20,), (6,), (12,), seed=4)
    idx = [19, 0, 7, 7, -20, 13]
    for sel in (idx, np.array(idx), (np.array(idx),)):
        np.testing.assert_array_equal(a.vindex[sel], arr[idx])
        np.testing.assert_array_equal(a[sel], arr[idx])
    np.testing.assert_array_equal(a.get_coordinate_selection((np.array(idx),)), arr[idx])


def test_an_array_with_a_zero_length_dimension():
    a = zarrpy.create_array({}, shape=(0, 5), chunks=(2, 2), dtype="int32")
    empty = np.array([], dtype=np.intp)
    assert a.vindex[empty, empty].shape == (0,)
    assert a.vindex[empty, np.array([[1], [4]])].shape == (2, 0)
    assert a.get_mask_selection(np.zeros((0, 5), dtype=bool)).shape == (0,)
    a.vindex[empty, empty] = 3  # nothing to write
    with pytest.raises(BoundsCheckError):
        a.vindex[[0], [0]]


def test_read_only_arrays_refuse_pointwise_writes():
    store, _, arr = _make((6, 6), (4, 4), None, seed=15)
    before = dict(store)
    r = zarrpy.open_array(store, mode="r")
    mask = arr > 0
    for write in (lambda: r.vindex.__setitem__(([0, 1], [2, 3]), 1),
                  lambda: r.set_coordinate_selection(([0, 1], [2, 3]), 1),
                  lambda: r.set_mask_selection(mask, 1), lambda: r.__setitem__(mask, 1)):
        with pytest.raises(zarrpy.ReadOnlyError):
            write()
    assert store == before


# --------------------------------------------------------------------------
# data types, formats, fill values, index arrays in zarr


def test_strings_vindex_read_and_write():
    data = np.array([[f"r{i}c{j}" + "é" * (i % 3) for j in range(5)] for i in range(7)],
                    dtype=np.dtypes.StringDType())
    a = zarrpy.create_array({}, shape=data.shape, chunks=(3, 2), dtype=str)
    a[...] = data
    rows, cols = np.array([6, 0, 6, 3]), np.array([4, 0, -1, 2])
    got = a.vindex[rows, cols]
    assert got.dtype == np.dtypes.StringDType()
    assert got.tolist() == data[rows, cols].tolist()
    mask = np.zeros(data.shape, dtype=bool)
    mask[1::2, ::3] = True
    assert a.get_mask_selection(mask).tolist() == data[mask].tolist()
    a.vindex[rows, cols] = ["x", "", "yy", "日本"]
    data[rows, cols] = ["x", "", "yy", "日本"]
    assert a[...].tolist() == data.tolist()
    a[mask] = "m"
    data[mask] = "m"
    assert a[...].tolist() == data.tolist()


def test_v2_vindex_read_and_write_changes_only_its_chunks():
    store, a, arr = _make((9, 10), (4, 3), None, seed=5, zarr_format=2)
    assert ".zarray" in store
    sel = (np.array([0, 8, 8, -1]), np.array([[9], [0]]))
    np.testing.assert_array_equal(a.vindex[sel], arr[sel])
    before = dict(store)
    a.vindex[sel] = -5
    arr[sel] = -5
    np.testing.assert_array_equal(a[...], arr)
    _check_only_touched_objects_changed(store, a, before, _points(arr.shape, lambda g: g[sel]))
    assert store["0.1"] == before["0.1"]
    reopened = zarrpy.open_array(store, mode="r")
    mask = arr > 0
    np.testing.assert_array_equal(reopened.get_mask_selection(mask), arr[mask])


@pytest.mark.parametrize("shards", [None, (8, 8)], ids=["chunks", "shards"])
def test_never_written_chunks_read_as_the_fill_value(shards):
    a = zarrpy.create_array({}, shape=(16, 16), chunks=(4, 4), shards=shards, dtype="int32", fill_value=42)
    rows, cols = np.array([0, 15, 3, 9]), np.array([0, 15, 12, 1])
    np.testing.assert_array_equal(a.vindex[rows, cols], [42, 42, 42, 42])
    a[0:4, 0:4] = 1  # one chunk written
    np.testing.assert_array_equal(a.vindex[rows, cols], [1, 42, 42, 42])
    mask = np.zeros((16, 16), dtype=bool)
    mask[2, 2] = mask[10, 10] = True
    np.testing.assert_array_equal(a.get_mask_selection(mask), [1, 42])
    a.vindex[[10], [10]] = 42  # writing the fill value into a missing chunk stores nothing new
    np.testing.assert_array_equal(a.get_mask_selection(mask), [1, 42])


def test_zarr_arrays_as_index_arrays():
    _, a, arr = _make((10, 8), (3, 3), None, seed=6)
    rows = zarrpy.create_array({}, shape=(5,), chunks=(2,), dtype="int64")
    rows[...] = [9, 0, 4, 4, -1]
    cols = zarrpy.create_array({}, shape=(5,), chunks=(5,), dtype="int32")
    cols[...] = [7, 0, 3, 3, 2]
    r, c = rows[...], cols[...]
    np.testing.assert_array_equal(a.vindex[rows, cols], arr[r, c])
    np.testing.assert_array_equal(a.get_coordinate_selection((rows, cols)), arr[r, c])
    np.testing.assert_array_equal(a.oindex[rows, :], arr[r, :])
    np.testing.assert_array_equal(a.oindex[rows, cols], arr[np.ix_(r, c)])
    a.vindex[rows, cols] = 0
    arr[r, c] = 0
    np.testing.assert_array_equal(a[...], arr)


# --------------------------------------------------------------------------
# out=


@pytest.mark.parametrize("shards", [None, (4, 6)], ids=["chunks", "shards"])
def test_out_for_coordinate_and_mask_selections(shards):
    _, a, arr = _make((8, 12), (2, 3), shards, seed=7)
    sel = (np.array([[7], [0]]), np.array([11, 0, 5]))
    out = np.full((2, 3), -99, dtype="int32")
    assert a.get_coordinate_selection(sel, out=out) is out
    np.testing.assert_array_equal(out, arr[sel])
    mask = arr % 3 == 0
    big = np.full(int(mask.sum()) + 2, -99, dtype="int32")
    view = big[1:-1]
    assert a.get_mask_selection(mask, out=view) is view
    np.testing.assert_array_equal(view, arr[mask])
    assert big[0] == big[-1] == -99
    with pytest.raises(SelectionError):
        a.get_coordinate_selection(sel, out=np.empty((3, 2), dtype="int32"))


# --------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("sel, bad", [
    ((np.array([0, 9]), np.array([1, 1])), "9"),
    ((np.array([0, 1]), np.array([-13, 0])), "-13"),
    ((np.array([[1], [2]]), np.array([0, 15])), "15"),
], ids=["past-end", "negative", "broadcast"])
def test_out_of_bounds_names_the_index_and_writes_nothing(sel, bad):
    store, a, _ = _make((8, 12), (2, 3), None, seed=8)
    before = dict(store)
    named = rf"(?<![\d-]){re.escape(bad)}(?!\d)"  # the index itself, not a dimension length
    for call in (lambda: a.vindex[sel], lambda: a.get_coordinate_selection(sel),
                 lambda: a.vindex.__setitem__(sel, 1), lambda: a.set_coordinate_selection(sel, 1)):
        with pytest.raises(BoundsCheckError, match=named):
            call()
    assert store == before


def test_bad_masks_and_index_arrays_are_refused():
    store, a, _ = _make((4, 4), (2, 2), None, seed=9)
    before = dict(store)
    for mask in (np.ones((3, 4), dtype=bool), np.ones((4, 4, 1), dtype=bool), np.ones(16, dtype=bool)):
        with pytest.raises((SelectionError, IndexError)):
            a.get_mask_selection(mask)
        with pytest.raises((SelectionError, IndexError)):
            a.set_mask_selection(mask, 1)
    with pytest.raises((SelectionError, IndexError)):
        a.get_mask_selection(np.ones((4, 4), dtype="int8"))  # not booleans
    for sel in ((np.array([1.0, 2.0]), np.array([0, 1])), (np.array(["a"]), np.array([0]))):
        with pytest.raises((SelectionError, IndexError)):
            a.vindex[sel]
        with pytest.raises((SelectionError, IndexError)):
            a.vindex[sel] = 1
    with pytest.raises((SelectionError, IndexError)):
        a.get_coordinate_selection((np.array([0, 1]),))  # one array for two dimensions
    with pytest.raises((SelectionError, IndexError)):
        a.vindex[np.array([0, 1, 2]), np.array([0, 1])]  # shapes that do not broadcast
    with pytest.raises((SelectionError, ValueError)):
        a.vindex[[0, 1], [0, 1]] = [1, 2, 3]  # a value that does not broadcast
    assert store == before


# --------------------------------------------------------------------------
# store traffic


def test_an_unsharded_read_fetches_each_touched_chunk_once():
    store = CountingStore()
    a = zarrpy.create_array(store, shape=(64, 64), chunks=(8, 8), dtype="uint16", compressors=[ZSTD])
    arr = np.random.default_rng(10).integers(1, 60000, size=(64, 64)).astype("uint16")
    a[...] = arr
    rng = np.random.default_rng(11)
    rows, cols = rng.integers(0, 64, 200), rng.integers(0, 32, 200)  # left half only, many points per chunk
    touched = {a.chunk_key((r // 8, c // 8)) for r, c in zip(rows, cols)}
    for read in (lambda: a.vindex[rows, cols], lambda: a.get_coordinate_selection((rows, cols))):
        store.reset()
        np.testing.assert_array_equal(read(), arr[rows, cols])
        for key in store.inner.list_prefix("c/"):
            assert store.reads_of(key) == (1 if key in touched else 0), key
        assert store.nbytes == sum(len(store.raw(k)) for k in touched)
        assert store.set_calls == 0
    mask = np.zeros((64, 64), dtype=bool)
    mask[rows, cols] = True
    store.reset()
    np.testing.assert_array_equal(a.get_mask_selection(mask), arr[mask])
    assert {k for k in store.inner.list_prefix("c/") if store.reads_of(k)} == touched
    assert all(store.reads_of(k) == 1 for k in touched)


def _inner_extent(a, raw: bytes, inner: set) -> tuple[int, int]:
    """(stored bytes of the ``inner`` chunks of a shard, bytes from the first
    of them to the end of the last): what a read of them costs at least, and
    at most when nearby ranges are coalesced."""
    codec, spec = _codec_and_spec(a)
    index = codec.read_index(raw, spec)
    entries = [index.get(int(np.ravel_multi_index(ic, index.grid_shape))) for ic in inner]
    return sum(n for _, n in entries), max(o + n for o, n in entries) - min(o for o, _ in entries)


def test_a_sharded_read_fetches_the_index_and_only_the_inner_chunks_with_points():
    store = CountingStore()
    a = zarrpy.create_array(store, shape=(64, 64), chunks=(8, 8), shards=(32, 32), dtype="uint16",
                            compressors=[ZSTD])
    arr = np.random.default_rng(12).integers(1, 60000, size=(64, 64)).astype("uint16")
    a[...] = arr
    # points in inner chunks (1, 1), (1, 2), (2, 1) of shard c/0/0 and (1, 3) of c/1/1; unsorted, repeated
    rows = np.array([12, 9, 17, 9, 40])
    cols = np.array([20, 9, 10, 9, 63])
    inner: dict[str, set] = {}
    for r, c in zip(rows, cols):
        inner.setdefault(a.chunk_key((r // 32, c // 32)), set()).add((r % 32 // 8, c % 32 // 8))
    assert inner == {"c/0/0": {(1, 1), (1, 2), (2, 1)}, "c/1/1": {(1, 3)}}
    extents = [_inner_extent(a, store.raw(k), ics) for k, ics in inner.items()]
    least = sum(index_nbytes(a) + needed for needed, _ in extents)
    most = sum(index_nbytes(a) + span for _, span in extents)
    assert most < len(store.raw("c/0/0"))  # the bound says something: not the whole shard
    indexes = 2 * index_nbytes(a)
    for first, read in enumerate((lambda: a.vindex[rows, cols], lambda: a.get_coordinate_selection((rows, cols)))):
        store.reset()
        np.testing.assert_array_equal(read(), arr[rows, cols])
        # the index and the inner chunks; the second read has the indexes already
        reads = 2 if first == 0 else 1
        assert store.reads_of("c/0/0") == reads and store.reads_of("c/1/1") == reads
        assert store.reads_of("c/0/1") == store.reads_of("c/1/0") == 0
        kept = 0 if first == 0 else indexes
        assert least - kept <= store.nbytes <= most - kept
        assert store.set_calls == 0


@pytest.mark.parametrize("shards", [None, (32, 32)], ids=["chunks", "shards"])
def test_a_pointwise_write_reads_and_writes_each_touched_object_once(shards):
    store = CountingStore()
    a = zarrpy.create_array(store, shape=(64, 64), chunks=(8, 8), shards=shards, dtype="uint16",
                            compressors=[ZSTD])
    arr = np.random.default_rng(13).integers(1, 60000, size=(64, 64)).astype("uint16")
    a[...] = arr
    rows, cols = np.array([0, 63, 0, 33, 63]), np.array([1, 62, 1, 2, 62])
    obj = shards or (8, 8)
    touched = {a.chunk_key((r // obj[0], c // obj[1])) for r, c in zip(rows, cols)}
    store.reset()
    a.vindex[rows, cols] = 7
    arr[rows, cols] = 7
    assert dict(store.sets) == {k: 1 for k in touched}
    assert all(store.reads_of(k) == 1 for k in touched)
    assert {k for k in store.inner.list_prefix("c/") if store.reads_of(k)} == touched
    np.testing.assert_array_equal(a[...], arr)


# --------------------------------------------------------------------------
# zarr-python reads the same store and agrees


@pytest.mark.integration
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_zarr_python_agrees(data):
    zarr = pytest.importorskip("zarr")
    shape, chunks, shards = data.draw(array_layouts(max_side=8), label="layout")
    sel = data.draw(pointwise_selections(shape, slices=False, scalars=False), label="coords")
    mask = data.draw(hnp.arrays(np.bool_, shape), label="mask")
    with tempfile.TemporaryDirectory() as tmp:
        a = zarrpy.create_array(tmp + "/a.zarr", shape=shape, chunks=chunks, shards=shards, dtype="int32")
        arr = _random(shape, 14)
        a[...] = arr
        z = zarr.open_array(tmp + "/a.zarr", mode="r")
        sel = tuple(np.asarray(s) for s in sel)
        np.testing.assert_array_equal(a.vindex[sel], z.vindex[sel])
        np.testing.assert_array_equal(a.get_coordinate_selection(sel), z.get_coordinate_selection(sel))
        np.testing.assert_array_equal(a.get_mask_selection(mask), z.get_mask_selection(mask))
        np.testing.assert_array_equal(a[mask], z[mask])
        np.testing.assert_array_equal(a.vindex[sel], arr[sel])


# -- element kinds the pipeline builds results for: ragged and optional ------------


def test_vindex_reads_and_writes_ragged_vectors():
    from zarrpy import RaggedArray

    r = zarrpy.create_array({}, shape=(6,), chunks=(2,), dtype="int32", serializer="numcodecs.vlen-array")
    r[...] = [np.arange(i) for i in range(6)]
    assert r.vindex[[5, 0, 3]].equals(RaggedArray.from_list([np.arange(5), [], np.arange(3)], "int32"))
    r.vindex[[1, 4, 1]] = [np.array([9, 9]), np.array([], "int32"), np.array([7])]  # repeated: the last wins
    want = [np.arange(i) for i in range(6)]
    want[1], want[4] = np.array([7]), np.array([], "int32")
    assert r[...].equals(RaggedArray.from_list(want, "int32"))
    m = zarrpy.create_array({}, shape=(3, 3), chunks=(2, 2), dtype="uint8", serializer="numcodecs.vlen-array")
    value = np.empty((3, 3), dtype=object)
    for i, j in np.ndindex(3, 3):
        value[i, j] = np.arange(i + j, dtype="u1")
    m[...] = value
    got = m[np.eye(3, dtype=bool)]
    assert [v.tolist() for v in got] == [[], [0, 1], [0, 1, 2, 3]]


def test_vindex_reads_and_writes_optional_elements():
    from zarrpy.core.dtypes.optional import optional_of

    a = zarrpy.create_array({}, shape=(4, 4), chunks=(2, 2), dtype=optional_of("int16"))
    data = np.ma.masked_array(np.arange(16, dtype="int16").reshape(4, 4), mask=np.eye(4, dtype=bool))
    a[...] = data
    got = a.vindex[[0, 1, 2], [0, 2, 3]]
    assert got.mask.tolist() == [True, False, False] and got.data[1:].tolist() == [6, 11]
    a.vindex[[0, 1], [1, 1]] = np.ma.masked
    a.set_mask_selection(np.fliplr(np.eye(4, dtype=bool)), 70)
    want = data.copy()
    want[[0, 1], [1, 1]] = np.ma.masked
    want[np.fliplr(np.eye(4, dtype=bool))] = 70
    got = a[...]
    assert got.mask.tolist() == want.mask.tolist()
    assert got.data[~got.mask].tolist() == want.data[~want.mask].tolist()
    with pytest.raises(SelectionError, match="reads into a new result"):
        a.get_coordinate_selection(([0], [0]), out=np.empty(1, dtype="int16"))


def test_a_mask_selection_of_a_0d_array_is_refused_clearly():
    a = zarrpy.create_array({}, shape=(), dtype="int32")
    with pytest.raises(SelectionError, match=r"0-d array: read it with a\[\(\)\]"):
        a.get_mask_selection(np.array(True))
