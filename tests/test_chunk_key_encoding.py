"""Chunk keys for the default and v2 encodings, both ways."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zarrpy.core.chunk_grid import RegularChunkGrid
from zarrpy.metadata.chunk_key_encoding import decode_chunk_key, encode_chunk_key
from zarrpy.metadata.v3 import ChunkKeyEncodingSpec


@pytest.mark.parametrize(
    "name, sep, coords, key",
    [
        ("default", "/", (1, 23, 45), "c/1/23/45"),
        ("default", ".", (1, 23, 45), "c.1.23.45"),
        ("default", "/", (), "c"),
        ("v2", ".", (1, 23, 45), "1.23.45"),
        ("v2", "/", (1, 23, 45), "1/23/45"),
        ("v2", ".", (), "0"),
    ],
)
def test_known_keys(name, sep, coords, key):
    spec = ChunkKeyEncodingSpec(name, sep)
    assert encode_chunk_key(spec, coords) == key
    assert decode_chunk_key(spec, key, len(coords)) == coords


@pytest.mark.parametrize("key", ["zarr.json", "c/1", "c/x/1", "c/1/2/3", "1.2", "c.1.2"])
def test_foreign_keys_decode_to_none(key):
    assert decode_chunk_key(ChunkKeyEncodingSpec("default", "/"), key, 2) is None


@given(
    st.sampled_from([("default", "/"), ("default", "."), ("v2", "."), ("v2", "/")]),
    st.lists(st.integers(0, 10**6), max_size=5),
)
def test_round_trip(enc, coords):
    spec = ChunkKeyEncodingSpec(*enc)
    assert decode_chunk_key(spec, encode_chunk_key(spec, tuple(coords)), len(coords)) == tuple(coords)


def test_regular_grid():
    grid = RegularChunkGrid((10, 7), (3, 4))
    assert grid.grid_shape == (4, 2) and grid.nchunks == 8
    assert grid.chunk_region((3, 1)) == (slice(9, 10), slice(4, 7))
    assert grid.contains((3, 1)) and not grid.contains((4, 0))
    assert RegularChunkGrid((0, 5), (2, 2)).nchunks == 0
    assert RegularChunkGrid((), ()).nchunks == 1
