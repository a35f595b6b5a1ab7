"""VirtualArray (issue 12): nothing is read before it is needed.

A single-level getitem (slice, field, new axis, 1-D mask or index array)
builds a chain of SlicedClosures and calls no closure; everything else
materialises. The chain is inspectable (``.slices``, ``.root``) and rebuilds
from its root. Over a stored array the first step is pushed down to the
store read (only the chunks holding selected rows are read). Data lives only
in a cache: a VirtualArray holds none.
"""

from __future__ import annotations

import gc
import pickle
import subprocess
import sys
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy
from tests.test_array_sharding import CountingStore
from zarrpy.cache import Cache
from zarrpy.lazy import SlicedClosure, StoredClosure, VirtualArray, virtual
from zarrpy.stores.memory import MemoryStore


class Counted:
    """A closure returning ``data`` and counting its calls (picklable)."""

    def __init__(self, data):
        self.data = data
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return self.data


def lazy(data, **kwargs):
    closure = Counted(data)
    return VirtualArray(closure, data.shape, data.dtype, **kwargs), closure


def chunk_reads(store: CountingStore) -> set[str]:
    """Keys of chunks (not metadata) the store was asked for: V3's default
    encoding puts every chunk key under ``c/``."""
    keys = set(store.gets) | set(store.batch_keys)
    return {k for k in keys if k.startswith("c/") or "/c/" in k}


# -- the chain: property test -----------------------------------------------------------


@st.composite
def chains(draw, shape):
    """1-4 single-level selections valid one after the other, from ``shape``."""
    steps = []
    for _ in range(draw(st.integers(1, 4))):
        kinds = ["newaxis"] + (["slice", "mask", "index"] if shape else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "newaxis":
            steps.append(None)
            shape = (1, *shape)
            continue
        n = shape[0]
        if kind == "slice":
            bound = st.none() | st.integers(-n - 2, n + 2)
            key = slice(draw(bound), draw(bound), draw(st.none() | st.integers(-3, 3).filter(bool)))
            length = len(range(*key.indices(n)))
        elif kind == "mask":
            key = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
            length = int(key.sum())
        else:
            key = np.array(draw(st.lists(st.integers(-n, n - 1), max_size=6)) if n else [], dtype=np.int64)
            length = len(key)
        steps.append(key)
        shape = (length, *shape[1:])
    return steps


def numpy_chain(data, steps):
    for key in steps:
        data = data[key]
    return data


shapes = st.sampled_from([(0,), (1,), (7,), (12,), (6, 3), (5, 2, 2)])


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), shape=shapes)
def test_chain_over_a_closure_equals_numpy_and_reads_nothing_before_the_end(data, shape):
    base = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
    steps = data.draw(chains(shape))
    va, closure = lazy(base)
    node = va
    for key in steps:
        node = node[key]
    expected = numpy_chain(base, steps)
    assert closure.calls == 0
    assert node.shape == expected.shape and node.dtype == expected.dtype
    assert node.root is va and len(node.slices) == len(steps)
    assert isinstance(node.closure, SlicedClosure)
    np.testing.assert_array_equal(node.materialize(), expected)
    assert closure.calls == 1
    rebuilt = VirtualArray.from_slices(va, node.slices)
    assert closure.calls == 1
    np.testing.assert_array_equal(np.asarray(rebuilt), expected)
    np.testing.assert_array_equal(np.asarray(va.apply(node.slices)), expected)
    assert closure.calls == 3  # no hidden memoisation: each materialisation calls the closure


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data(), shape=st.sampled_from([(0,), (7,), (12,), (6, 3)]), chunk=st.integers(1, 5))
def test_chain_over_a_stored_array_equals_numpy_and_reads_nothing_before_the_end(data, shape, chunk):
    base = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
    store = CountingStore()
    a = zarrpy.create_array(store, shape=shape, dtype="int32", chunks=(chunk, *shape[1:]), data=base)
    steps = data.draw(chains(shape))
    store.reset()
    node = virtual(a)
    for key in steps:
        node = node[key]
    assert store.requests == 0
    expected = numpy_chain(base, steps)
    assert node.shape == expected.shape
    np.testing.assert_array_equal(node.materialize(), expected)
    np.testing.assert_array_equal(np.asarray(virtual(a).apply(node.slices)), expected)


# -- pushing the first step down to the store -----------------------------------------


def stored_rows(n=100, chunk=10, store=None):
    store = CountingStore() if store is None else store
    data = np.arange(n, dtype="float64") * 1.5
    a = zarrpy.create_array(store, name="pt", shape=(n,), dtype="float64", chunks=(chunk,), data=data)
    store.reset()
    return store, a, data


def test_mask_reads_only_the_chunks_holding_selected_rows():
    store, a, data = stored_rows()
    mask = np.zeros(100, dtype=bool)
    mask[[23, 27, 71]] = True
    sel = virtual(a)[mask]
    assert chunk_reads(store) == set()
    np.testing.assert_array_equal(sel.materialize(), data[mask])
    assert chunk_reads(store) == {"pt/c/2", "pt/c/7"}


def test_slice_then_mask_reads_only_the_chunks_of_the_rows_both_keep():
    store, a, data = stored_rows()
    sel = virtual(a)[10:50]
    mask = np.zeros(40, dtype=bool)
    mask[[2, 4, 33]] = True  # rows 12, 14 and 43
    inner = sel[mask]
    np.testing.assert_array_equal(inner.materialize(), data[10:50][mask])
    assert chunk_reads(store) == {"pt/c/1", "pt/c/4"}  # not every chunk of 10:50
    assert len(inner.slices) == 2 and inner.slices[0] == slice(10, 50)  # still one node a step
    np.testing.assert_array_equal(inner.slices[1], mask)
    store.reset()
    steps = virtual(a)[90:5:-3][1:][np.array([0, -1, 0])]  # slices compose (a negative step too), then an index
    np.testing.assert_array_equal(steps.materialize(), data[90:5:-3][1:][np.array([0, -1, 0])])
    assert chunk_reads(store) == {"pt/c/8", "pt/c/0"}
    store.reset()
    after = virtual(a)[35:58][2:5]  # two slices: one slice read
    np.testing.assert_array_equal(after.materialize(), data[37:40])
    assert chunk_reads(store) == {"pt/c/3"}


def test_index_array_reads_only_its_chunks_in_its_order():
    store, a, data = stored_rows()
    idx = np.array([95, 3, 3, -1])
    np.testing.assert_array_equal(virtual(a)[idx].materialize(), data[idx])
    assert chunk_reads(store) == {"pt/c/9", "pt/c/0"}


def test_a_materialising_key_on_a_stored_root_reads_only_what_it_touches():
    store, a, data = stored_rows()
    va = virtual(a)
    assert va[42] == data[42]
    assert chunk_reads(store) == {"pt/c/4"}
    store.reset()
    np.testing.assert_array_equal(va[..., 5:7], data[5:7])
    assert chunk_reads(store) == {"pt/c/0"}


def test_virtual_with_a_cache_reopens_the_array_through_it():
    store, a, data = stored_rows()
    cache = Cache(1 << 20)
    va = virtual(a, cache=cache)
    assert isinstance(va.closure, StoredClosure) and va.closure.array.cache is cache
    sel = va[10:30]
    np.testing.assert_array_equal(sel.materialize(), data[10:30])
    assert chunk_reads(store) == {"pt/c/1", "pt/c/2"}
    store.reset()
    np.testing.assert_array_equal(sel.materialize(), data[10:30])
    assert store.requests == 0 and cache.hits >= 2


def test_persistent_key_is_the_store_url_and_path(tmp_path):
    g = zarrpy.create_group(str(tmp_path / "events.zarr"))
    a = g.create_array("muons/pt", shape=(4,), dtype="f4")
    va = virtual(a)
    assert va.parameters == {"__persistent_key__": a.store.url.rstrip("/") + "/muons/pt"}
    assert va[1:].parameters == {"__persistent_key__": None}  # a sliced array names no data of its own
    backing: dict[str, bytes] = {}
    mem = zarrpy.create_array(MemoryStore(backing), name="pt", shape=(3,), dtype="f4")
    key = virtual(mem).persistent_key
    assert key.startswith("<MemoryStore ") and key.endswith(">/pt")  # process-local: no URL reaches it
    assert virtual(zarrpy.open_array(MemoryStore(backing), path="pt")).persistent_key == key  # same data


# -- what materialises --------------------------------------------------------------------


def test_everything_but_a_single_level_getitem_materialises():
    base = np.arange(12, dtype="int64").reshape(4, 3)
    va, closure = lazy(base)
    cases = [
        (lambda: va[1], base[1]),
        (lambda: va[...], base),
        (lambda: va[1:3, 0], base[1:3, 0]),
        (lambda: va[np.arange(4).reshape(2, 2)], base[np.arange(4).reshape(2, 2)]),
        (lambda: np.asarray(va), base),
        (lambda: va + 1, base + 1),
        (lambda: 2 * va, 2 * base),
        (lambda: va > 5, base > 5),
        (lambda: va == base, np.ones_like(base, dtype=bool)),
        (lambda: np.sqrt(va), np.sqrt(base)),
        (lambda: np.add.reduce(va, axis=0), base.sum(axis=0)),
        (lambda: np.sum(va), base.sum()),
        (lambda: np.mean(va, axis=1), base.mean(axis=1)),
        (lambda: np.concatenate([va, base]), np.concatenate([base, base])),
        (lambda: va.sum(), base.sum()),
        (lambda: va.max(), base.max()),
        (lambda: va.tolist(), base.tolist()),
        (lambda: list(va), list(base)),
    ]
    for i, (make, expected) in enumerate(cases, 1):
        got = make()
        assert not isinstance(got, VirtualArray)
        np.testing.assert_array_equal(got, expected)
        assert closure.calls == i, f"case {i} materialised {closure.calls - i + 1} times"
    assert len(va) == 4 and closure.calls == len(cases)  # the shape is known: no read


def test_len_of_a_0d_virtual_array_is_a_type_error():
    va, _ = lazy(np.array(3.0))
    with pytest.raises(TypeError, match="0-d"):
        len(va)
    assert va[None].shape == (1,)


def test_field_and_newaxis_steps():
    base = np.zeros(5, dtype=[("px", "f4"), ("hits", "i2", (3,))])
    base["px"] = np.arange(5)
    base["hits"] = np.arange(15).reshape(5, 3)
    va, closure = lazy(base)
    px = va["px"][None]
    hits = va[1:4]["hits"]
    assert px.shape == (1, 5) and px.dtype == np.float32
    assert hits.shape == (3, 3) and hits.dtype == np.int16
    assert closure.calls == 0
    np.testing.assert_array_equal(px.materialize(), base["px"][None])
    np.testing.assert_array_equal(hits.materialize(), base[1:4]["hits"])
    assert hits.slices == (slice(1, 4), "hits")


def test_a_list_index_is_an_index_array_and_the_mask_is_copied():
    va, _ = lazy(np.arange(6))
    mask = np.array([True, False] * 3)
    sel = va[mask]
    mask[:] = True  # changing the caller's mask afterwards changes nothing
    np.testing.assert_array_equal(sel.materialize(), [0, 2, 4])
    np.testing.assert_array_equal(va[[5, 0]].materialize(), [5, 0])
    assert not sel.slices[0].flags.writeable


def test_bad_single_level_keys_name_what_is_wrong():
    va, closure = lazy(np.arange(6))
    with pytest.raises(zarrpy.SelectionError, match="length 4 for a first axis of length 6"):
        va[np.ones(4, dtype=bool)]
    with pytest.raises(zarrpy.BoundsCheckError, match="index 6 is out of bounds"):
        va[np.array([0, 6])]
    with pytest.raises(zarrpy.SelectionError, match="field 'px'.*no fields"):
        va["px"]
    with pytest.raises(zarrpy.SelectionError, match="0-d"):
        lazy(np.array(1))[0][1:]
    with pytest.raises(zarrpy.SelectionError, match="step must not be 0"):
        va[::0]
    with pytest.raises(zarrpy.SelectionError, match="not a single-level selection"):
        va.apply([3])
    assert closure.calls == 0


def test_closure_returning_the_wrong_shape_is_named():
    va = VirtualArray(lambda: np.zeros(3), (4,), "f8", persistent_key="muon_pt")
    with pytest.raises(ValueError, match="muon_pt.*shape \\(3,\\)"):
        va.materialize()


# -- the cache: the one place data lives ------------------------------------------


def test_a_root_keeps_its_data_in_the_cache_under_its_persistent_key():
    cache = Cache(1 << 20)
    va, closure = lazy(np.arange(10.0), cache=cache, persistent_key="run1/pt")
    np.testing.assert_array_equal(va[2:5].materialize(), [2, 3, 4])
    np.testing.assert_array_equal(va[::3].materialize(), [0, 3, 6, 9])
    assert closure.calls == 1 and list(cache) == ["run1/pt"]
    assert va[2:5].cache is None  # a sliced array has no cache of its own
    # another object with the same key (another session, say) finds the data
    other = VirtualArray(Counted(None), (10,), "f8", cache=cache, persistent_key="run1/pt")
    assert other.materialize()[9] == 9.0
    cache.clear()
    va.materialize()
    assert closure.calls == 2


def test_cached_data_is_read_only_and_the_closures_array_is_untouched():
    data = np.arange(4.0)
    va = VirtualArray(lambda: data, (4,), "f8", cache=Cache(1 << 10), persistent_key="k")
    got = np.asarray(va)
    with pytest.raises(ValueError, match="read-only"):
        got[0] = 1
    assert data.flags.writeable
    with pytest.raises(TypeError, match="no data to write into"):
        np.add(data, 1, out=va)


def test_without_a_cache_nothing_is_kept():
    va, closure = lazy(np.arange(4))
    sel = va[1:]
    before = dict(vars(va)), dict(vars(sel))
    ref = weakref.ref(sel.materialize())
    sel.materialize()
    gc.collect()
    assert closure.calls == 2 and ref() is None
    assert (dict(vars(va)), dict(vars(sel))) == before  # no hidden memoisation


def test_a_cache_without_a_key_gets_a_unique_one():
    cache = Cache(1 << 10)
    a, _ = lazy(np.arange(3), cache=cache)
    b, _ = lazy(np.arange(3), cache=cache)
    assert a.persistent_key != b.persistent_key and a.persistent_key.startswith("virtual-")


# -- strings, ragged, pickling --------------------------------------------------------


def test_string_and_ragged_stored_arrays():
    g = zarrpy.create_group({})
    names = g.create_array("name", shape=(6,), dtype=str, chunks=(4,))
    names[...] = ["e", "mu", "tau", "", "nu_e", "gamma"]
    hits = g.create_array("hits", shape=(6,), dtype="int16", chunks=(4,), serializer="numcodecs.vlen-array")
    rows = [[1], [2, 3], [], [4, 5, 6], [7], [8, 9]]
    hits[...] = zarrpy.RaggedArray.from_list(rows, dtype="int16")
    mask = np.array([False, True, True, False, False, True])
    np.testing.assert_array_equal(virtual(names)[mask][::-1].materialize(), ["gamma", "tau", "mu"])
    got = virtual(hits)[mask][1:]
    assert got.shape == (2,)
    assert got.materialize().equals([[], [8, 9]])
    assert virtual(hits)[np.array([3, 0])][None].materialize().shape == (1, 2)


def test_virtual_arrays_over_stored_arrays_pickle_with_their_chain(tmp_path):
    a = zarrpy.create_array(str(tmp_path / "x.zarr"), shape=(20,), dtype="i4", chunks=(5,), data=np.arange(20))
    sel = virtual(a)[np.arange(20) % 3 == 0][1:]
    back = pickle.loads(pickle.dumps(sel))
    assert back.slices[0].tolist() == sel.slices[0].tolist() and back.slices[1] == slice(1, None)
    assert back.root.persistent_key == sel.root.persistent_key
    np.testing.assert_array_equal(back.materialize(), [3, 6, 9, 12, 15, 18])


def test_closures_pickle_only_if_they_do():
    va, _ = lazy(np.arange(5))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(va[2:])).materialize(), [2, 3, 4])
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(VirtualArray(lambda: np.arange(5), (5,), "i8"))


def test_virtual_refuses_what_is_not_a_node():
    with pytest.raises(TypeError, match="Array or zarrpy.Group, got ndarray"):
        virtual(np.arange(3))


def test_a_pickled_chain_materialises_in_another_process(tmp_path):
    """What a dask worker does: unpickle, read only what the chain selects."""
    a = zarrpy.create_array(str(tmp_path / "x.zarr"), shape=(30,), dtype="i4", chunks=(10,), data=np.arange(30))
    (tmp_path / "sel.pkl").write_bytes(pickle.dumps(virtual(a)[12:30][np.arange(18) % 5 == 0]))
    code = "import pickle, sys; print(pickle.loads(open(sys.argv[1], 'rb').read()).tolist())"
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "sel.pkl")], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[12, 17, 22, 27]"


def test_the_public_module():
    import zarrpy.lazy

    assert zarrpy.virtual is zarrpy.lazy.virtual
    assert zarrpy.VirtualArray is zarrpy.lazy.VirtualArray and zarrpy.VirtualTable is zarrpy.lazy.VirtualTable
    assert zarrpy.lazy.PERSISTENT_KEY == "__persistent_key__"
