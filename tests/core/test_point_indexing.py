"""PointIndexer against numpy's advanced indexing, without a store (issue 11).

The projections of a pointwise selection, applied to an in-memory array
chunk by chunk, must rebuild exactly ``data[selection]``; every chunk
appears once (grouped by unit chunk), and Points written through the
codecs' merge land where numpy's assignment puts them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.point_indexing import PointIndexer, is_vectorized, with_index_arrays
from zarrpy.core.selection import Points
from zarrpy.errors import BoundsCheckError, SelectionError


@st.composite
def selections(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 7)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    unit = tuple(draw(st.sampled_from([c for c in range(1, ch + 1) if ch % c == 0])) for ch in chunks)
    if draw(st.booleans()) and ndim > 1:
        return shape, chunks, unit, (draw(st.lists(st.booleans(), min_size=int(np.prod(shape)),
                                                    max_size=int(np.prod(shape)))),)
    items = []
    bshape = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(1, 2))))
    for n in shape:
        kind = draw(st.sampled_from(["array", "array", "slice", "int"]))
        if kind == "array":
            sub = bshape[draw(st.integers(0, len(bshape))):]  # broadcastable trailing part
            items.append(np.asarray(draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(sub)),
                                                  max_size=int(np.prod(sub))))).reshape(sub).astype(np.int64))
        elif kind == "slice":
            items.append(slice(draw(st.integers(-n, n)), draw(st.integers(-n, n)), draw(st.sampled_from([1, 2, -1]))))
        else:
            items.append(draw(st.integers(-n, n - 1)))
    if not any(isinstance(i, np.ndarray) for i in items):
        items[0] = np.array([0, shape[0] - 1, 0])
    return shape, chunks, unit, tuple(items)


def _rebuild(indexer: PointIndexer, data: np.ndarray) -> np.ndarray:
    out = np.full(int(np.prod(indexer.shape)), -1, dtype=data.dtype)
    seen = set()
    for p in indexer:
        assert (p.chunk_coords, tuple(int(c[0]) // u for c, u in zip(p.points, indexer.unit_shape))) not in seen
        seen.add((p.chunk_coords, tuple(int(c[0]) // u for c, u in zip(p.points, indexer.unit_shape))))
        region = tuple(slice(c * s, (c + 1) * s) for c, s in zip(p.chunk_coords, indexer.chunk_shape))
        chunk = np.zeros(indexer.chunk_shape, dtype=data.dtype)
        part = data[region]
        chunk[tuple(slice(0, n) for n in part.shape)] = part
        out[p.out_selection] = chunk[p.chunk_selection]
        # the box a partial decoder reads, and the points picked from it, give the same values
        box = chunk[np.ix_(*p.chunk_dim_selection)].reshape(-1)
        np.testing.assert_array_equal(box[p.pick], chunk[p.chunk_selection])
    return out.reshape(indexer.shape)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=selections())
def test_projections_rebuild_numpy_advanced_indexing(case):
    shape, chunks, unit, selection = case
    if len(selection) == 1 and isinstance(selection[0], list):
        selection = (np.asarray(selection[0]).reshape(shape),)
    data = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    want = data[selection]
    indexer = PointIndexer(selection, shape, chunks, unit)
    assert indexer.shape == want.shape
    np.testing.assert_array_equal(_rebuild(indexer, data), want)


@settings(max_examples=200, deadline=None)
@given(case=selections(), seed=st.integers(0, 2**16))
def test_points_written_through_merge_land_as_numpy_assigns(case, seed):
    from zarrpy.codecs.abc import ChunkSpec
    from zarrpy.codecs.merge import ChunkWrite, merge_writes
    from zarrpy.core.dtypes import DataType

    shape, _, _, selection = case
    if len(selection) == 1 and isinstance(selection[0], list):
        selection = (np.asarray(selection[0]).reshape(shape),)
    data = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    indexer = PointIndexer(selection, shape, shape)  # one chunk: the whole array
    values = np.random.default_rng(seed).integers(1000, 2000, size=indexer.shape)
    want = data.copy()
    flat = values.reshape(-1)
    writes = []
    for p in indexer:
        block = flat[p.out_selection]
        writes.append(ChunkWrite(p.write_selection, ArrayBytes.from_array(block)))
        want[p.chunk_selection] = block
    spec = ChunkSpec(shape, DataType.from_json("int64"), 0)
    got = merge_writes(lambda _: ArrayBytes.from_array(data), b"old", writes, spec, "test")
    np.testing.assert_array_equal(got.array, want)
    # numpy's own assignment gives the same (last repeated point wins)
    ref = data.copy()
    ref[selection] = values
    np.testing.assert_array_equal(got.array, ref)


def test_a_whole_array_mask_is_projected_chunk_by_chunk_in_c_order():
    rng = np.random.default_rng(3)
    for shape, chunks, unit in [((9, 7), (4, 3), (2, 3)), ((5, 4, 6), (2, 4, 3), (2, 2, 3)), ((13,), (4,), (4,))]:
        data = rng.integers(0, 100, shape)
        mask = rng.random(shape) < 0.4
        indexer = PointIndexer(mask, shape, chunks, unit)
        np.testing.assert_array_equal(_rebuild(indexer, data), data[mask])


def test_sharding_splits_points_among_inner_chunks():
    from zarrpy.codecs.sharding import ShardingCodec
    from zarrpy.codecs.abc import ChunkSpec
    from zarrpy.core.dtypes import DataType

    codec = ShardingCodec(chunk_shape=(2, 2))
    spec = ChunkSpec((4, 4), DataType.from_json("int32"), 0)
    old = codec.encode(ArrayBytes.from_array(np.arange(16, dtype="int32").reshape(4, 4)), spec)
    points = Points((np.array([0, 3, 0, 1]), np.array([1, 3, 1, 0])))
    new = codec.update_many(old, [(points, ArrayBytes.from_array(np.array([50, 60, 70, 80], dtype="int32")))], spec)
    want = np.arange(16, dtype="int32").reshape(4, 4)
    want[[0, 3, 0, 1], [1, 3, 1, 0]] = [50, 60, 70, 80]
    np.testing.assert_array_equal(codec.decode(new, spec).array, want)
    # inner chunks with no point keep their encoded bytes
    assert codec.read_index(new, spec).get(1) is not None
    layout_old, layout_new = codec.read_index(old, spec), codec.read_index(new, spec)
    for pos in (1, 2):  # inner chunks (0, 1) and (1, 0): untouched
        o, n = layout_old.get(pos), layout_new.get(pos)
        assert old[o[0]:o[0] + o[1]] == new[n[0]:n[0] + n[1]]


def test_routing_follows_zarr_python():
    def vec(sel, ndim):
        return is_vectorized(with_index_arrays(sel), ndim)

    assert vec(([0, 1], [2, 3]), 2)  # one int array per dimension: points
    assert vec((0, [2, 3]), 2) is False  # one array among integers: orthogonal
    assert vec(np.ones((2, 2), bool), 2)  # N-D mask
    assert vec(([True, False], [0, 1]), 2) is False  # a boolean among 1-D arrays: orthogonal (zarr-python)
    assert vec(([0, 1], slice(None), [0, 1]), 3)  # zarr-python refuses; numpy's result
    assert vec(np.zeros((2, 2), int), 1)  # N-D integer array


@pytest.mark.parametrize(
    "selection, error, match",
    [
        (([0, 5], [0, 0]), BoundsCheckError, "index 5 is out of bounds for axis 0 with size 5"),
        (([0, 1], [0, 1, 2]), SelectionError, r"shapes \[\(2,\), \(3,\)\] cannot be broadcast"),
        ((np.ones((2, 2), bool),), SelectionError, r"boolean index of shape \(2, 2\) does not match"),
        (([0.5], [0]), SelectionError, "integers or booleans, got dtype float64"),
        (([0], [0], [0]), BoundsCheckError, "too many indices"),
        (([0], None), SelectionError, "np.newaxis"),
    ],
)
def test_bad_point_selections_name_the_problem(selection, error, match):
    with pytest.raises(error, match=match):
        PointIndexer(with_index_arrays(selection), (5, 4), (2, 2))
