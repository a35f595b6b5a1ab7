"""The chunk grid layer: fixed, varying and bounded dimensions, and the
``chunk_grid`` metadata member that makes them."""

from __future__ import annotations

import numpy as np
import pytest

import zarrpy
from zarrpy.core.chunk_grid import BoundedDimension, ChunkGrid, FixedDimension, VaryingDimension
from zarrpy.metadata.chunk_grid import ChunkGridSpec, expand_run_lengths, run_length_encode
from zarrpy.errors import MetadataError


def test_a_varying_dimension_answers_like_a_fixed_one():
    fixed, varying = FixedDimension(3, 10), VaryingDimension([3, 3, 3, 3], 10)
    assert fixed.nchunks == varying.nchunks == 4
    for i in range(4):
        assert fixed.offset(i) == varying.offset(i) and fixed.data_size(i) == varying.data_size(i)
        assert fixed.codec_size(i) == varying.codec_size(i) == 3
    positions = np.arange(10)
    assert np.array_equal(fixed.chunks_of(positions), varying.chunks_of(positions))
    assert np.array_equal(fixed.local_of(positions), varying.local_of(positions))
    assert [varying.index_to_chunk(p) for p in range(10)] == (positions // 3).tolist()
    assert fixed.spans(2, 7) == varying.spans(2, 7) == [(0, 0, 3), (1, 3, 6), (2, 6, 9)]


def test_edges_past_the_end():
    """Edges summing past the length (a shrunk array): the chunks that overlap
    the array count, the last one is stored at its full edge."""
    d = VaryingDimension([4, 4, 2], 5)
    assert d.nchunks == 2 and d.data_size(1) == 1 and d.codec_size(1) == 4 and d.edge_sum == 10
    assert VaryingDimension([4, 4, 2], 0).nchunks == 0
    assert VaryingDimension([4, 4], 5).resize(7).edges == (4, 4)  # inside the edges: kept
    assert VaryingDimension([4, 4], 5).resize(11).edges == (4, 4, 3)  # past them: one more edge


def test_bounded_dimension_stores_its_edge_chunk_clipped():
    d = BoundedDimension(4, 10)
    assert [d.codec_size(i) for i in range(d.nchunks)] == [4, 4, 2]
    assert d.codec_sizes() == (2, 4) and BoundedDimension(4, 3).codec_sizes() == (3,)
    grid = ChunkGrid([d, FixedDimension(3, 7)], "zarrs.regular_bounded")
    assert grid.is_regular and grid.chunk_shape == (4, 3) and grid.uniform_chunk_shape is None
    assert grid.chunk_shape_at((2, 2)) == (2, 3) and grid.data_shape_at((2, 2)) == (2, 1)


def test_grid_regions_and_sizes():
    grid = ChunkGrid([VaryingDimension([3, 3, 4], 10), FixedDimension(4, 6)], "rectilinear")
    assert grid.grid_shape == (3, 2) and grid.nchunks == 6 and not grid.is_regular
    assert grid.chunk_region((2, 1)) == (slice(6, 10), slice(4, 6))
    assert grid.chunk_sizes == ((3, 3, 4), (4, 2)) and grid.max_chunk_shape == (4, 4)
    assert grid.chunk_of((7, 5)) == (2, 1) and grid.contains((2, 1)) and not grid.contains((3, 0))
    with pytest.raises(ValueError, match="no single chunk shape"):
        grid.chunk_shape
    assert grid == ChunkGrid([VaryingDimension([3, 3, 4], 10), FixedDimension(4, 6)], "rectilinear")
    assert hash(grid) == hash(ChunkGrid([VaryingDimension([3, 3, 4], 10), FixedDimension(4, 6)], "rectilinear"))


def test_run_lengths_round_trip():
    assert expand_run_lengths([[3, 2], 4, [1, 3]], "f") == (3, 3, 4, 1, 1, 1)
    assert run_length_encode([10, 10, 10, 5]) == [[10, 3], 5]
    assert run_length_encode([1, 2, 3]) == [1, 2, 3]
    with pytest.raises(MetadataError, match=r"f\[1\]: a run must be \[edge length, count\], both positive"):
        expand_run_lengths([3, [3, 0]], "f")
    with pytest.raises(MetadataError, match="more than"):
        expand_run_lengths([[1, 10]], "f", budget=5)


@pytest.mark.parametrize("stored, written", [
    ({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[3, 3, 4], 6]}},
     {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[3, 2], 4], 6]}}),
    ({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[5, 2]], [[2, 3]]]}},
     {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[5, 2]], [[2, 3]]]}}),
    ({"name": "regular_bounded", "configuration": {"chunk_shape": [4, 4]}},  # zarrs' older name
     {"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": [4, 4]}}),
])
def test_grid_json_as_read_and_as_written(stored, written):
    spec = ChunkGridSpec.from_json(stored, (10, 6))
    assert spec.to_json() == written
    assert ChunkGridSpec.from_json(written, (10, 6)) == spec


def test_an_array_opened_with_each_grid(tmp_path):
    doc = {"zarr_format": 3, "node_type": "array", "shape": [10, 6], "data_type": "uint8",
           "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[4, 4, 4], 3]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 5, "codecs": [{"name": "bytes"}]}
    store = {"zarr.json": __import__("json").dumps(doc).encode()}
    a = zarrpy.open_array(store)
    assert a.write_chunk_sizes == ((4, 4, 2), (3, 3)) and (a[...] == 5).all()
    assert a.metadata.chunk_shape == (4, 3)  # the nominal shape: the largest edges
