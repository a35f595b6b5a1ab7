"""Every selection form on arrays with ``rectilinear`` and ``zarrs.regular_bounded``
chunk grids, sharded and not, against numpy (hypothesis).

A layout draws, per dimension, either one chunk length or explicit edge
lengths (summing to the length: as ``create_array(chunks=[[...], ...])``
takes them), and, sharded, rectilinear shard edges that are multiples of a
regular inner chunk. Reads: basic, orthogonal, pointwise (``vindex``),
coordinate and mask selections, block selections over the real chunk
boundaries, and the block API (every read unit). Writes: each form writes
what numpy's assignment writes, and the array stays equal to a numpy model.
"""

from __future__ import annotations

import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zarrpy
from zarrpy.cache import Cache
from zarrpy.errors import IrregularChunksError
from tests.api.test_orthogonal_props import dim_selections, orthogonal_numpy

PROPS = settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def edges(draw, n: int):
    """Edge lengths summing to ``n`` (as create_array takes them)."""
    out: list[int] = []
    while sum(out) < n:
        out.append(draw(st.integers(1, n - sum(out))))
    return out


@st.composite
def layouts(draw):
    """``(shape, chunks, shards)`` in create_array's terms, one dimension or more irregular.

    Sharded: regular inner chunks, and shard edges that are multiples of them
    (so they sum to the length only where the inner chunk divides it; other
    dimensions get a regular shard length)."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 9)) for _ in range(ndim))
    if draw(st.booleans()):
        inner = [draw(st.integers(1, 3)) for _ in shape]
        if all(n % c for n, c in zip(shape, inner)):
            inner[0] = 1
        shards: list = []
        for n, c in zip(shape, inner):
            if n % c == 0 and (draw(st.booleans()) or not any(isinstance(x, list) for x in shards)):
                shards.append([e * c for e in draw(edges(n // c))])
            else:
                shards.append(c * draw(st.integers(1, 3)))
        if not any(isinstance(x, list) for x in shards):
            d = next(i for i, (n, c) in enumerate(zip(shape, inner)) if n % c == 0)
            shards[d] = [e * inner[d] for e in draw(edges(shape[d] // inner[d]))]
        return shape, tuple(inner), shards
    chunks = [draw(edges(n)) if draw(st.booleans()) else draw(st.integers(1, n + 1)) for n in shape]
    if all(isinstance(c, int) for c in chunks):
        chunks[-1] = draw(edges(shape[-1]))
    return shape, chunks, None


def _array(shape, chunks, shards, seed, *, bounded=False, where="memory"):
    """A filled array in memory, in a directory (the read path of local files)
    or in memory read through a chunk cache (indexers on the read unit's grid)."""
    if bounded:
        chunks = {"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": [
            c if isinstance(c, int) else max(c) for c in chunks]}}
    store: object = {} if where != "local" else tempfile.mkdtemp(prefix="rectilinear-", dir=_LOCAL[0])
    a = zarrpy.create_array(store, shape=shape, dtype="int32", chunks=chunks, shards=shards, fill_value=-7,
                            overwrite=True)
    data = np.random.default_rng(seed).integers(-1000, 1000, size=shape).astype("int32")
    a[...] = data
    if where == "cached":
        a = zarrpy.open_array(a.store, mode="r+", cache=Cache(1 << 20))
    return a, data


WHERE = st.sampled_from(["memory", "local", "cached"])
_LOCAL: list[str] = []


@pytest.fixture(autouse=True, scope="module")
def _local_stores():
    """One directory for this module's local stores, removed after it."""
    with tempfile.TemporaryDirectory(prefix="rectilinear-tests-") as root:
        _LOCAL[:] = [root]
        yield


def _boundaries(sizes):
    return [np.concatenate(([0], np.cumsum(s))).astype(int) for s in sizes]


def _drawn_array(data):
    """A layout drawn (sharded or not, maybe zarrs.regular_bounded), and its
    filled array on a drawn store: ``(shape, chunks, shards, array, numpy copy)``."""
    shape, chunks, shards = data.draw(layouts(), label="layout")
    bounded = shards is None and data.draw(st.booleans(), label="regular_bounded")
    a, arr = _array(shape, chunks, shards, data.draw(st.integers(0, 99)), bounded=bounded, where=data.draw(WHERE))
    return shape, chunks, shards, a, arr


@PROPS
@given(st.data())
def test_reads_match_numpy(data):
    shape, chunks, shards, a, arr = _drawn_array(data)
    # basic
    basic = tuple(data.draw(st.builds(slice, st.none() | st.integers(-n - 1, n + 1), st.none() | st.integers(-n - 1, n + 1),
                                      st.sampled_from([None, 1, 2, 3])) | st.integers(-n, n - 1)) for n in shape)
    np.testing.assert_array_equal(a[basic], arr[basic])
    # orthogonal
    sel = tuple(data.draw(dim_selections(n), label=f"dim {i}") for i, n in enumerate(shape))
    ix, drop = orthogonal_numpy(arr, sel)
    np.testing.assert_array_equal(a.oindex[sel], arr[ix][drop])
    # pointwise and coordinates
    npts = data.draw(st.integers(0, 8))
    points = tuple(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=npts, max_size=npts)), dtype=np.int64)
                   for n in shape)
    np.testing.assert_array_equal(a.vindex[points], arr[points])
    np.testing.assert_array_equal(a.get_coordinate_selection(points), arr[points])
    # masks (N-D, through vindex and get_mask_selection)
    mask = data.draw(hnp.arrays(np.bool_, shape))
    np.testing.assert_array_equal(a.vindex[mask], arr[mask])
    np.testing.assert_array_equal(a.get_mask_selection(mask), arr[mask])
    # blocks: the real chunk (shard) boundaries
    sizes = a.write_chunk_sizes
    bounds = _boundaries(sizes)
    picks = tuple(data.draw(st.integers(-len(s), len(s) - 1)) for s in sizes)
    region = tuple(slice(b[p % len(s)], b[p % len(s) + 1]) for p, s, b in zip(picks, sizes, bounds))
    np.testing.assert_array_equal(a.blocks[picks], arr[region])
    np.testing.assert_array_equal(a.blocks[tuple(slice(0, 2) for _ in shape)],
                                  arr[tuple(slice(0, b[min(2, len(b) - 1)]) for b in bounds)])
    # every read unit through the block API
    units = list(np.ndindex(*a.cdata_shape))
    rbounds = _boundaries(a.read_chunk_sizes)
    for coords, chunk in zip(units, a.read_chunks(units)):
        np.testing.assert_array_equal(chunk, arr[tuple(slice(b[c], b[c + 1]) for c, b in zip(coords, rbounds))])


@PROPS
@given(st.data())
def test_writes_match_numpy(data):
    shape, chunks, shards, a, model = _drawn_array(data)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    for step in range(3):
        kind = data.draw(st.sampled_from(["basic", "oindex", "vindex", "mask", "block"]), label=f"write {step}")
        if kind == "basic":
            sel = tuple(data.draw(st.builds(slice, st.none() | st.integers(0, n), st.none() | st.integers(0, n),
                                            st.sampled_from([None, 1, 2]))) for n in shape)
            value = rng.integers(-99, 99, size=model[sel].shape).astype("int32")
            a[sel] = value
            model[sel] = value
        elif kind == "oindex":
            sel = tuple(data.draw(dim_selections(n)) for n in shape)
            ix, drop = orthogonal_numpy(model, sel)
            value = rng.integers(-99, 99, size=model[ix][drop].shape).astype("int32")
            a.oindex[sel] = value
            model[ix] = value.reshape(model[ix].shape)
        elif kind == "vindex":
            n = data.draw(st.integers(1, 6))
            pts = tuple(rng.integers(0, s, size=n) for s in shape)
            value = rng.integers(-99, 99, size=n).astype("int32")
            a.vindex[pts] = value
            for i in range(n):  # repeated points: the last write wins, as zarrpy documents
                model[tuple(p[i] for p in pts)] = value[i]
        elif kind == "mask":
            mask = data.draw(hnp.arrays(np.bool_, shape))
            value = rng.integers(-99, 99, size=int(mask.sum())).astype("int32")
            a.vindex[mask] = value
            model[mask] = value
        else:
            sizes = a.write_chunk_sizes
            bounds = _boundaries(sizes)
            pick = tuple(data.draw(st.integers(0, len(s) - 1)) for s in sizes)
            region = tuple(slice(b[p], b[p + 1]) for p, b in zip(pick, bounds))
            value = rng.integers(-99, 99, size=model[region].shape).astype("int32")
            a.blocks[pick] = value
            model[region] = value
        np.testing.assert_array_equal(a[...], model)


@PROPS
@given(st.data())
def test_resize_and_append_match_numpy(data):
    shape, chunks, shards = data.draw(layouts(), label="layout")
    bounded = shards is None and data.draw(st.booleans(), label="regular_bounded")
    a, model = _array(shape, chunks, shards, data.draw(st.integers(0, 99)), bounded=bounded)
    for step in range(2):
        if shards is None:
            new = tuple(data.draw(st.integers(0, 11), label=f"resize {step} dim {i}") for i in range(a.ndim))
        else:  # a rectilinear shard dimension grown past its edges gains one edge: whole inner chunks
            new = tuple(c * data.draw(st.integers(0, 11 // c), label=f"resize {step} dim {i}")
                        for i, c in enumerate(a.chunks))
        a.resize(new)
        grown = np.full(new, -7, dtype="int32")
        keep = tuple(slice(0, min(o, n)) for o, n in zip(model.shape, new))
        grown[keep] = model[keep]
        model = grown
        np.testing.assert_array_equal(a[...], model)
    if a.ndim and shards is None:
        extra = np.arange(2 * int(np.prod(a.shape[1:])), dtype="int32").reshape((2, *a.shape[1:]))
        a.append(extra)
        model = np.concatenate([model, extra])
        np.testing.assert_array_equal(a[...], model)


def test_grid_properties_say_what_they_are():
    a = zarrpy.create_array({}, shape=(10, 6), dtype="uint8", chunks=[[3, 3, 4], 2])
    assert a.read_chunk_sizes == a.write_chunk_sizes == ((3, 3, 4), (2, 2, 2))
    assert a.cdata_shape == (3, 3) and a.nchunks == 9 and not a.is_sharded and a.shards is None
    with pytest.raises(IrregularChunksError, match="read_chunk_sizes") as info:
        a.chunks
    assert isinstance(info.value, NotImplementedError)  # as zarr-python raises
    info_text = str(a.info)
    assert "rectilinear [[[3, 2], 4], 2]" in info_text and "<variable>" in info_text
    s = zarrpy.create_array({}, shape=(12, 8), dtype="uint8", chunks=(2, 4), shards=[[4, 6, 2], 8])
    assert s.chunks == (2, 4) and s.write_chunk_sizes == ((4, 6, 2), (8,)) and s.cdata_shape == (6, 2)
    with pytest.raises(IrregularChunksError, match="write_chunk_sizes"):
        s.shards
    s[...] = 1
    assert s.nchunks_initialized == 12 and s.nshards_initialized == 3
    b = zarrpy.create_array({}, shape=(10, 7), dtype="uint8",
                            chunks={"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": [4, 3]}})
    assert b.chunks == (4, 3) and b.write_chunk_sizes == ((4, 4, 2), (3, 3, 1))
    assert b.chunk_grid == {"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": [4, 3]}}


def test_resize_grows_a_rectilinear_dimension_as_zarr_python():
    """Growing past the edges appends one edge of the growth; shrinking keeps every edge."""
    a = zarrpy.create_array({}, shape=(10,), dtype="int16", chunks=[[3, 3, 4]], fill_value=0)
    a[...] = np.arange(1, 11)
    a.resize(7)
    assert a.chunk_grid["configuration"]["chunk_shapes"] == [[[3, 2], 4]] and a.write_chunk_sizes == ((3, 3, 1),)
    a.resize(15)
    assert a.chunk_grid["configuration"]["chunk_shapes"] == [[[3, 2], 4, 5]]
    np.testing.assert_array_equal(a[...], [1, 2, 3, 4, 5, 6, 7] + [0] * 8)  # the cut part reads as fill
    a.append(np.arange(3))
    assert a.write_chunk_sizes == ((3, 3, 4, 5, 3),)


@pytest.mark.parametrize("chunks, message", [
    ([[3, 3, 3], 2], r"chunks\[0\]: the edge lengths \[3, 3, 3\] sum to 9, not to the array's length 10"),
    ([[3, 0, 7], 2], r"chunks\[0\]\[1\]"),
    ([[[3, 2, 1], 4], 2], r"chunks\[0\]\[0\]: a run must be \[edge length, count\]"),
])
def test_bad_rectilinear_chunks_name_the_field(chunks, message):
    with pytest.raises(zarrpy.MetadataError, match=message):
        zarrpy.create_array({}, shape=(10, 6), dtype="uint8", chunks=chunks)


def test_run_length_chunks_are_taken_and_written_as_zarr_python_writes_them():
    a = zarrpy.create_array({}, shape=(10, 6), dtype="uint8", chunks=[[[3, 2], 4], [[2, 3]]])
    assert a.write_chunk_sizes == ((3, 3, 4), (2, 2, 2))
    assert a.chunk_grid["configuration"]["chunk_shapes"] == [[[3, 2], 4], [[2, 3]]]
    b = zarrpy.create_array({}, shape=(9,), dtype="uint8", chunks=[[4, 5]])
    assert b.chunk_grid["configuration"]["chunk_shapes"] == [[4, 5]]  # no run: kept as the lengths


def test_sharded_rectilinear_checks_the_inner_chunks():
    with pytest.raises(zarrpy.MetadataError, match=r"shards\[0\]: shard edge length 5 is not a multiple of the chunk length 2"):
        zarrpy.create_array({}, shape=(12, 8), dtype="uint8", chunks=(2, 4), shards=[[4, 5, 3], 8])
    with pytest.raises(zarrpy.MetadataError, match="inner chunks of a sharded array have one shape"):
        zarrpy.create_array({}, shape=(12, 8), dtype="uint8", chunks=[[4, 8], 4], shards=(12, 8))


def test_v2_has_no_rectilinear_grid():
    with pytest.raises(zarrpy.MetadataError, match="Zarr V2 has regular chunks only"):
        zarrpy.create_array({}, shape=(10,), dtype="uint8", chunks=[[3, 7]], zarr_format=2)
