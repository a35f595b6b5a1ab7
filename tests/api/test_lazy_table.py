"""VirtualTable (issue 12): a group of equal-length arrays as a table of fields.

Building a table over 50 arrays and selecting rows reads no chunk; one row
selection is one node shared by every field; materialising a field after a
mask reads only that field's chunks holding selected rows; with a cache
(``open_group(store, cache=c)``) repeating it reads nothing, and
``cache.clear()`` frees the data so the next access reads again.
"""

from __future__ import annotations

import gc
import pickle
import re
import weakref
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from tests.test_array_sharding import CountingStore
from zarrpy.cache import Cache
from zarrpy.lazy import VirtualArray, VirtualTable, virtual

N, CHUNK, FIELDS = 100, 10, 50


def chunk_reads(store: CountingStore) -> set[str]:
    """Keys of chunks (V3's default encoding: under ``c/``) the store was asked for."""
    return {k for k in set(store.gets) | set(store.batch_keys) if "/c/" in k}


def field_data(i: int) -> np.ndarray:
    return np.arange(N, dtype="float64") + 1000 * i


@pytest.fixture
def events():
    """A group of 50 arrays of 100 rows in chunks of 10 (f00 … f49), in a counting store."""
    store = CountingStore()
    g = zarrpy.create_group(store)
    for i in range(FIELDS):
        g.create_array(f"f{i:02d}", shape=(N,), dtype="float64", chunks=(CHUNK,), data=field_data(i))
    store.reset()
    return store


def selected_rows():
    mask = np.zeros(N, dtype=bool)
    mask[[12, 18, 64]] = True
    return mask


def test_building_and_slicing_a_table_of_50_arrays_reads_no_chunk(events):
    table = virtual(zarrpy.open_group(events, mode="r"))
    assert table.fields == [f"f{i:02d}" for i in range(FIELDS)] and len(table) == N
    sel = table[selected_rows()][1:][np.array([1, 0])]
    fields = [sel[name] for name in sel.fields]
    assert len(sel) == 2 and all(f.shape == (2,) for f in fields)
    assert chunk_reads(events) == set()


def test_one_field_after_a_mask_reads_only_its_chunks_of_selected_rows(events):
    table = virtual(zarrpy.open_group(events, mode="r"))
    sel = table[selected_rows()]
    np.testing.assert_array_equal(sel["f07"].materialize(), field_data(7)[[12, 18, 64]])
    assert chunk_reads(events) == {"f07/c/1", "f07/c/6"}


def test_a_cache_makes_the_repeat_read_nothing_and_clear_frees_it(events):
    cache = Cache(1 << 20)
    table = virtual(zarrpy.open_group(events, mode="r", cache=cache))
    sel = table[selected_rows()]
    expected = field_data(7)[[12, 18, 64]]
    np.testing.assert_array_equal(sel["f07"].materialize(), expected)
    assert chunk_reads(events) == {"f07/c/1", "f07/c/6"}
    events.reset()
    np.testing.assert_array_equal(sel["f07"].materialize(), expected)
    np.testing.assert_array_equal(table["f07"][10:20].materialize(), field_data(7)[10:20])
    assert events.requests == 0
    assert len(cache) == 2 and cache.nbytes >= 2 * CHUNK * 8

    refs = [weakref.ref(cache[key]) for key in list(cache)]
    cache.clear()
    gc.collect()
    assert cache.nbytes == 0 and all(ref() is None for ref in refs)  # nothing else held the data
    np.testing.assert_array_equal(sel["f07"].materialize(), expected)
    assert chunk_reads(events) == {"f07/c/1", "f07/c/6"}


def test_virtual_with_a_cache_reopens_the_group_through_it(events):
    cache = Cache(1 << 20)
    table = virtual(zarrpy.open_group(events, mode="r"), cache=cache)
    table["f03"][5:15].materialize()
    events.reset()
    table["f03"][5:15].materialize()
    assert events.requests == 0 and len(cache) == 2


def test_a_row_selection_is_one_node_shared_by_every_field():
    x = np.arange(8)
    table = VirtualTable({"a": VirtualArray(lambda: x, (8,), x.dtype), "b": VirtualArray(lambda: -x, (8,), x.dtype)})
    mask = x % 3 == 0
    sel = table[mask]
    a, b = sel["a"], sel["b"]
    assert a.steps[-1] is b.steps[-1] is sel.steps[0]  # the mask is kept once
    assert a.closure.step is b.closure.step
    assert np.array_equal(sel.slices[0], mask) and a.slices[0] is b.slices[0]
    np.testing.assert_array_equal(b.materialize(), [0, -3, -6])
    np.testing.assert_array_equal(sel[1:]["a"][None].materialize(), [[3, 6]])


def test_fields_of_different_lengths_are_refused_by_name():
    g = zarrpy.create_group({})
    g.create_array("pt", shape=(5,), dtype="f4")
    g.create_array("eta", shape=(6,), dtype="f4")
    g.create_array("run", shape=(), dtype="i4")  # 0-d: not a field
    with pytest.raises(zarrpy.SelectionError, match="'eta': 6.*'pt': 5"):
        virtual(g)
    del g["eta"]
    assert virtual(g).fields == ["pt"]


def test_strings_ragged_and_multidimensional_fields():
    g = zarrpy.create_group({})
    g.create_array("name", shape=(4,), dtype=str, chunks=(3,), data=np.array(["e", "mu", "tau", "nu"], dtype="T"))
    g.create_array("pos", shape=(4, 2), dtype="i2", chunks=(2, 2), data=np.arange(8).reshape(4, 2))
    hits = g.create_array("hits", shape=(4,), dtype="int16", chunks=(3,), serializer="numcodecs.vlen-array")
    hits[...] = zarrpy.RaggedArray.from_list([[1], [], [2, 3], [4]], dtype="int16")
    sel = virtual(g)[np.array([False, True, True, False])]
    d = sel.to_dict()
    assert list(d) == ["hits", "name", "pos"]
    assert d["hits"].equals([[], [2, 3]])
    np.testing.assert_array_equal(d["name"], ["mu", "tau"])
    np.testing.assert_array_equal(d["pos"], [[2, 3], [4, 5]])
    with pytest.raises(TypeError, match=r"fields \['hits'\] hold variable-length elements"):
        sel.to_numpy()
    del g["hits"]
    rec = virtual(g)[2:].to_numpy()
    assert rec.dtype == np.dtype([("name", "U3"), ("pos", "i2", (2,))])
    assert rec["name"].tolist() == ["tau", "nu"] and rec["pos"].tolist() == [[4, 5], [6, 7]]


def test_table_selections_by_slice_index_and_virtual_mask():
    g = zarrpy.create_group({})
    g.create_array("pt", shape=(6,), dtype="f8", chunks=(4,), data=np.array([5.0, 40, 12, 60, 3, 25]))
    g.create_array("q", shape=(6,), dtype="i1", chunks=(4,), data=np.array([1, -1, 1, 1, -1, -1]))
    table = virtual(g)
    hard = table[table["pt"] > 20]  # the comparison materialises pt; the mask then selects rows
    assert len(hard) == 3 and hard["q"].tolist() == [-1, 1, -1]
    assert table[np.array([5, 0])]["pt"].tolist() == [25.0, 5.0]
    assert table[::-2]["q"].tolist() == [-1, 1, -1]
    assert "pt" in table and list(table) == ["pt", "q"]
    some = hard[["q"]]
    assert some.fields == ["q"] and some.steps == hard.steps and some.to_dict()["q"].tolist() == [-1, 1, -1]
    with pytest.raises(KeyError, match=r"no fields \['eta'\]"):
        table[["pt", "eta"]]
    with pytest.raises(KeyError, match="no field 'eta'"):
        table["eta"]
    for bad in (3, None, (slice(None), 0), np.ones(5, dtype=bool)):
        with pytest.raises(zarrpy.SelectionError):
            table[bad]


def test_a_table_over_stored_arrays_pickles_with_its_shared_selection(tmp_path):
    g = zarrpy.create_group(str(tmp_path / "events.zarr"))
    for name in ("a", "b"):
        g.create_array(name, shape=(10,), dtype="i4", chunks=(4,), data=np.arange(10) * (2 if name == "b" else 1))
    sel = virtual(g)[np.arange(10) > 6]
    back = pickle.loads(pickle.dumps(sel))
    assert back["a"].steps[-1] is back["b"].steps[-1]
    assert back.to_dict()["b"].tolist() == [14, 16, 18]


def test_the_event_selection_example_in_docs_prints_what_it_says(capsys):
    """docs/guide/lazy-arrays.md's numbers (chunks read, bytes held) are what its code prints."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "lazy-arrays.md").read_text(encoding="utf-8")
    code, printed = re.search(r"```python\n([^`]*)```\n\nprints\n\n```\n(.*?)```", text, re.DOTALL).groups()
    exec(compile(code, "docs/guide/lazy-arrays.md", "exec"), {})  # noqa: S102 -- the docs example, as written
    assert capsys.readouterr().out == printed
