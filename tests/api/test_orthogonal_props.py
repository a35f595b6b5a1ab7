"""Orthogonal selections (``a.oindex[...]``, ``get/set_orthogonal_selection``)
against numpy, on random shapes, chunkings (sharded and not) and selections.

Each dimension takes an integer, a slice (any step), a 1-D integer array
(repeated, unsorted, negative and empty ones included) or a 1-D boolean array
of the dimension's length; the oracle is ``data[np.ix_(...)]`` with the
integer dimensions dropped. Writes must leave the array equal to numpy's
result (repeated indices: the last write wins) and must not change the stored
bytes of chunks, or inner chunks of a shard, that hold no written element.
"""

from __future__ import annotations

import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zarrpy
from tests.strategies import array_layouts
from tests.test_array_sharding import inner_chunks

PROPS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def dim_selections(draw, n: int):
    kind = draw(st.sampled_from(["int", "slice", "ints", "bools"]))
    if kind == "int":
        return draw(st.integers(-n, n - 1))
    if kind == "slice":
        bound = st.none() | st.integers(-n - 1, n + 1)
        return draw(st.builds(slice, bound, bound, st.sampled_from([None, 1, 2, 3, -1, -2])))
    if kind == "bools":
        return draw(hnp.arrays(np.bool_, (n,)))
    values = draw(st.lists(st.integers(-n, n - 1), max_size=6))  # repeats, any order, maybe empty
    return values if values and draw(st.booleans()) else np.array(values, dtype=np.int64)


def orthogonal_numpy(data: np.ndarray, sel: tuple) -> tuple[tuple, tuple]:
    """``(ix, drop)`` with ``data[ix][drop]`` numpy's orthogonal selection:
    ``ix`` from ``np.ix_`` over every dimension, ``drop`` removing the
    dimensions indexed by an integer."""
    full = []
    for s, n in zip(sel, data.shape):
        if isinstance(s, slice):
            full.append(np.arange(n)[s])
        elif isinstance(s, (list, np.ndarray)):
            s = np.asarray(s, dtype=bool if np.asarray(s).dtype == bool else np.intp)
            full.append(np.flatnonzero(s) if s.dtype == bool else s % n if s.size else s)
        else:
            full.append(np.array([s % n]))
    drop = tuple(slice(None) if isinstance(s, (slice, list, np.ndarray)) else 0 for s in sel)
    return np.ix_(*full), drop


def _make(shape, chunks, shards, seed):
    store: dict = {}
    a = zarrpy.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="int32", fill_value=0)
    data = np.random.default_rng(seed).integers(-1000, 1000, size=shape).astype("int32")
    a[...] = data
    return store, a, data


@PROPS
@given(st.data())
def test_orthogonal_reads_match_numpy(data):
    shape, chunks, shards = data.draw(array_layouts(max_side=9), label="layout")
    _, a, arr = _make(shape, chunks, shards, data.draw(st.integers(0, 99), label="seed"))
    sel = tuple(data.draw(dim_selections(n), label=f"dim {i}") for i, n in enumerate(shape))
    ix, drop = orthogonal_numpy(arr, sel)
    want = arr[ix][drop]
    for got in (a.oindex[sel], a.get_orthogonal_selection(sel)):
        assert np.shape(got) == want.shape
        np.testing.assert_array_equal(got, want)


@PROPS
@given(st.data())
def test_orthogonal_writes_match_numpy_and_touch_only_their_chunks(data):
    shape, chunks, shards = data.draw(array_layouts(max_side=9), label="layout")
    seed = data.draw(st.integers(0, 99), label="seed")
    store, a, arr = _make(shape, chunks, shards, seed)
    before = dict(store)
    sel = tuple(data.draw(dim_selections(n), label=f"dim {i}") for i, n in enumerate(shape))
    ix, drop = orthogonal_numpy(arr, sel)
    target = arr[ix][drop].shape
    value = np.random.default_rng(seed + 1).integers(-1000, 1000, size=target).astype("int32")
    if data.draw(st.booleans(), label="scalar"):
        value = int(value.flat[0]) if value.size else 5
    if data.draw(st.booleans(), label="oindex"):
        a.oindex[sel] = value
    else:
        a.set_orthogonal_selection(sel, value)
    view = arr[ix]
    view[drop] = value
    arr[ix] = view  # repeated indices: numpy's last write wins
    np.testing.assert_array_equal(a[...], arr)

    points = np.stack([g.reshape(-1) for g in np.meshgrid(*[np.asarray(i).reshape(-1) for i in ix],
                                                          indexing="ij")], axis=1)
    obj = a.shards or a.chunks
    touched = {a.chunk_key(tuple(int(p) // o for p, o in zip(pt, obj))) for pt in points}
    for key, old in before.items():
        if key != "zarr.json" and key not in touched:
            assert store.get(key) == old, f"untouched {key} changed"
    if a.shards is not None:
        for key in touched:
            if before.get(key) is None or store.get(key) is None:
                continue
            hit = {tuple(int(p) % s // c for p, s, c in zip(pt, a.shards, a.chunks)) for pt in points
                   if a.chunk_key(tuple(int(p) // o for p, o in zip(pt, obj))) == key}
            new = inner_chunks(a, store[key])
            for inner, old in inner_chunks(a, before[key]).items():
                if inner not in hit:
                    assert new.get(inner) == old, f"untouched inner chunk {inner} of {key} changed"


@pytest.mark.integration
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_zarr_python_agrees_on_orthogonal_reads(data):
    zarr = pytest.importorskip("zarr")
    shape, chunks, shards = data.draw(array_layouts(max_side=9), label="layout")
    sel = tuple(data.draw(dim_selections(n), label=f"dim {i}") for i, n in enumerate(shape))
    # zarr-python reads a list as integers; numpy arrays keep their dtype
    sel = tuple(np.asarray(s) if isinstance(s, list) else s for s in sel)
    # zarr-python refuses negative slice steps in orthogonal selections
    sel = tuple(slice(s.start, s.stop, abs(s.step)) if isinstance(s, slice) and s.step and s.step < 0 else s
                for s in sel)
    with tempfile.TemporaryDirectory() as tmp:
        a = zarrpy.create_array(tmp + "/a.zarr", shape=shape, chunks=chunks, shards=shards, dtype="int32")
        arr = np.random.default_rng(3).integers(-1000, 1000, size=shape).astype("int32")
        a[...] = arr
        z = zarr.open_array(tmp + "/a.zarr", mode="r")
        np.testing.assert_array_equal(a.oindex[sel], z.oindex[sel])
        np.testing.assert_array_equal(a.get_orthogonal_selection(sel), z.get_orthogonal_selection(sel))


@st.composite
def plain_orthogonal_arrays(draw, shape):
    """One 1-D index array per dimension with a boolean mask among them: what
    plain ``a[...]`` selects orthogonally (zarr-python's rule), as ``np.ix_``."""
    masked = draw(st.integers(0, len(shape) - 1))
    sel = []
    for i, n in enumerate(shape):
        if i == masked or draw(st.booleans()):
            sel.append(draw(hnp.arrays(np.bool_, (n,))))
        else:
            sel.append(np.array(draw(st.lists(st.integers(-n, n - 1), max_size=5)), dtype=np.int64))
    return tuple(sel)


@PROPS
@given(st.data())
def test_plain_getitem_with_a_mask_among_1d_arrays_is_orthogonal(data):
    shape, chunks, shards = data.draw(array_layouts(max_side=9).filter(lambda lay: len(lay[0]) > 1), label="layout")
    seed = data.draw(st.integers(0, 99), label="seed")
    _, a, arr = _make(shape, chunks, shards, seed)
    sel = data.draw(plain_orthogonal_arrays(shape), label="selection")
    ix, _ = orthogonal_numpy(arr, sel)
    np.testing.assert_array_equal(a[sel], arr[ix])
    value = np.random.default_rng(seed).integers(-1000, 1000, size=arr[ix].shape).astype("int32")
    a[sel] = value
    arr[ix] = value
    np.testing.assert_array_equal(a[...], arr)


def test_plain_getitem_with_two_masks_matches_zarr_python():
    zarr = pytest.importorskip("zarr")
    data = np.arange(60).reshape(6, 10)
    m0, m1 = np.array([True, False] * 3), np.array([False, True] * 5)
    a = zarrpy.create_array({}, shape=data.shape, chunks=(4, 3), dtype=data.dtype)
    z = zarr.create_array({}, shape=data.shape, chunks=(4, 3), dtype=data.dtype)
    a[...] = z[...] = data
    for sel in [(m0, m1), (m0, [1, 7]), ([5, 0], m1)]:
        np.testing.assert_array_equal(a[sel], z[sel])
    a[m0, m1] = z[m0, m1] = -1
    np.testing.assert_array_equal(a[...], z[...])
