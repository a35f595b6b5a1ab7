"""Array.blocks / get_block_selection / set_block_selection, against zarr-python and numpy."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy

zarr = pytest.importorskip("zarr")  # zarr-python: the oracle (a test extra)


@pytest.fixture(autouse=True)
def _quiet_zarr():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _nchunks(shape, chunks):
    return tuple(-(-s // c) for s, c in zip(shape, chunks))


def _block_region(selection, shape, chunks):
    """The array region a block selection covers, worked out with numpy on
    the chunk indices of each axis (the reference for both libraries)."""
    items = selection if isinstance(selection, tuple) else (selection,)
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items = items[:i] + (slice(None),) * (len(shape) - len(items) + 1) + items[i + 1:]
    items = items + (slice(None),) * (len(shape) - len(items))
    region = []
    for item, s, c, n in zip(items, shape, chunks, _nchunks(shape, chunks)):
        picked = np.atleast_1d(np.arange(n)[item])
        if picked.size == 0:
            region.append(slice(0, 0))
        else:
            region.append(slice(int(picked[0]) * c, min((int(picked[-1]) + 1) * c, s)))
    return tuple(region)


@st.composite
def arrays_and_block_selections(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    nchunks = _nchunks(shape, chunks)

    def item(n):
        # zarr-python and numpy agree on ints in [-n, n) and slices whose start is
        # a chunk that exists (zarr-python raises for a start past the last chunk).
        index = st.integers(-n, n - 1)
        bound = st.one_of(st.none(), index)
        stop = st.one_of(st.none(), st.integers(-n, n + 2))
        return st.one_of(index, st.builds(slice, bound, stop, st.sampled_from([None, 1])))

    items = [draw(item(n)) for n in nchunks]
    # Leave out trailing items, or replace a run of them by an Ellipsis.
    form = draw(st.sampled_from(["full", "short", "ellipsis"]))
    if form == "short":
        items = items[:draw(st.integers(1, ndim))]
    elif form == "ellipsis":
        i = draw(st.integers(0, ndim))
        j = draw(st.integers(i, ndim))
        items = items[:i] + [Ellipsis] + items[j:]
    selection = items[0] if len(items) == 1 and draw(st.booleans()) else tuple(items)
    return shape, chunks, selection


def _pair(shape, chunks, data):
    z = zarr.create_array({}, shape=shape, chunks=chunks, dtype=data.dtype, fill_value=-1)
    z[...] = data
    a = zarrpy.create_array({}, shape=shape, chunks=chunks, dtype=data.dtype, fill_value=-1)
    a[...] = data
    return a, z


@settings(max_examples=80)
@given(arrays_and_block_selections())
def test_blocks_read_matches_zarr_and_numpy(case):
    shape, chunks, selection = case
    data = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
    a, z = _pair(shape, chunks, data)
    expected = data[_block_region(selection, shape, chunks)]
    got = a.blocks[selection]
    theirs = z.blocks[selection]
    assert got.shape == theirs.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(theirs, expected)
    np.testing.assert_array_equal(a.get_block_selection(selection), expected)


@settings(max_examples=60)
@given(arrays_and_block_selections(), st.integers(0, 2**16))
def test_blocks_write_matches_zarr_and_numpy(case, seed):
    shape, chunks, selection = case
    data = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
    a, z = _pair(shape, chunks, data)
    region = _block_region(selection, shape, chunks)
    value = np.random.default_rng(seed).integers(1000, 2000, size=data[region].shape, dtype="int32")
    expected = data.copy()
    expected[region] = value
    a.blocks[selection] = value
    z.blocks[selection] = value
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(z[...], expected)
    # set_block_selection is the same operation; a scalar broadcasts.
    b, _ = _pair(shape, chunks, data)
    b.set_block_selection(selection, 7)
    expected[...] = data
    expected[region] = 7
    np.testing.assert_array_equal(b[...], expected)


def test_blocks_examples():
    data = np.arange(7 * 5).reshape(7, 5)
    a, z = _pair((7, 5), (3, 2), data)
    assert a.cdata_shape == (3, 3)
    np.testing.assert_array_equal(a.blocks[0], data[0:3])
    np.testing.assert_array_equal(a.blocks[-1], data[6:7])  # the last, partial chunk
    np.testing.assert_array_equal(a.blocks[1, -1], data[3:6, 4:5])
    np.testing.assert_array_equal(a.blocks[..., 1], data[:, 2:4])
    np.testing.assert_array_equal(a.blocks[1:, :2], data[3:, :4])
    np.testing.assert_array_equal(a.blocks[np.int64(2), np.int8(0)], data[6:, 0:2])
    assert a.blocks[2:1].shape == z.blocks[2:1].shape == (0, 5)
    assert a.blocks[...].shape == (7, 5)


def test_blocks_step_other_than_one_is_an_error():
    a, z = _pair((8,), (2,), np.arange(8))
    for step in (2, -1):
        with pytest.raises(IndexError):
            z.blocks[::step]
        with pytest.raises(zarrpy.SelectionError) as info:
            a.blocks[::step]
        assert isinstance(info.value, IndexError)
    with pytest.raises(IndexError):
        a.set_block_selection(slice(0, 4, 2), 1)
    np.testing.assert_array_equal(a[...], np.arange(8))


@pytest.mark.parametrize("selection", [4, -5, 100, (0, 3), (0, -4), (-5, 0)])
def test_blocks_out_of_range_int(selection):
    shape, chunks = (8, 6), (2, 2)  # a 4 x 3 chunk grid
    a, z = _pair(shape, chunks, np.arange(48).reshape(shape))
    with pytest.raises(IndexError):
        z.blocks[selection]
    with pytest.raises(zarrpy.BoundsCheckError) as info:
        a.blocks[selection]
    assert isinstance(info.value, IndexError)
    with pytest.raises(zarrpy.BoundsCheckError):
        a.blocks[selection] = 0
    np.testing.assert_array_equal(a[...], np.arange(48).reshape(shape))  # nothing written


@pytest.mark.parametrize("selection", [(0, 0, 0), (0, slice(None), 1), (Ellipsis, 0, 0, 0), (Ellipsis, Ellipsis)])
def test_blocks_too_many_dims_or_ellipses(selection):
    a, z = _pair((4, 4), (2, 2), np.arange(16).reshape(4, 4))
    with pytest.raises(IndexError):
        z.blocks[selection]
    with pytest.raises(zarrpy.SelectionError):
        a.blocks[selection]
    with pytest.raises(zarrpy.SelectionError):
        a.blocks[selection] = 0


@pytest.mark.parametrize("selection", [1.5, "0", [0, 1], None, True])
def test_blocks_other_items_are_errors(selection):
    a, _ = _pair((4, 4), (2, 2), np.arange(16).reshape(4, 4))
    with pytest.raises(IndexError):
        a.blocks[selection]


def test_blocks_wrong_value_shape():
    a, _ = _pair((6,), (2,), np.arange(6))
    with pytest.raises((ValueError, IndexError)):
        a.blocks[0:2] = np.zeros(3)
    np.testing.assert_array_equal(a[...], np.arange(6))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_blocks_other_formats_and_dtypes(zarr_format):
    data = np.linspace(0, 1, 30, dtype="float32").reshape(5, 6)
    a = zarrpy.create_array({}, shape=data.shape, chunks=(2, 4), dtype="float32", zarr_format=zarr_format)
    a[...] = data
    np.testing.assert_array_equal(a.blocks[2, 1], data[4:, 4:])
    a.blocks[0] = 9
    data[:2] = 9
    np.testing.assert_array_equal(a[...], data)
    t = zarrpy.create_array({}, shape=(5,), chunks=(2,), dtype=str)
    t[...] = ["a", "bb", "c", "dd", "e"]
    assert list(t.blocks[1:]) == ["c", "dd", "e"]


def test_blocks_of_a_sharded_array_index_shards_as_zarr_python(tmp_path):
    # blocks address the shard grid, as zarr-python's do; inner_blocks the inner chunks.
    data = np.arange(12 * 10).reshape(12, 10)
    a = zarrpy.create_array(tmp_path / "s", shape=data.shape, chunks=(2, 5), shards=(4, 10), dtype=data.dtype)
    a[...] = data
    z = zarr.open_array(str(tmp_path / "s"), mode="r")
    for selection in [1, -1, (2, 0), (slice(1, 3),), (slice(None), 0), (..., -1), slice(-2, None), slice(2, 9)]:
        np.testing.assert_array_equal(a.blocks[selection], z.blocks[selection])
        np.testing.assert_array_equal(a.get_block_selection(selection), z.get_block_selection(selection))
    np.testing.assert_array_equal(a.blocks[1], data[4:8])
    np.testing.assert_array_equal(a.blocks[2, 0], data[8:12])
    for bad in (3, -4, (0, 1)):
        with pytest.raises(zarrpy.BoundsCheckError, match="shards"):
            a.blocks[bad]
    assert a.blocks[3:9].shape == (0, 10)  # past the last shard: empty, as numpy (zarr-python raises)
    a.blocks[1] = -1  # one whole shard
    data[4:8] = -1
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(z[...], data)


def test_inner_blocks_of_a_sharded_array_index_inner_chunks(tmp_path):
    data = np.arange(12 * 10).reshape(12, 10)
    a = zarrpy.create_array(tmp_path / "s", shape=data.shape, chunks=(2, 5), shards=(4, 10), dtype=data.dtype)
    a[...] = data
    assert a.cdata_shape == (6, 2)
    np.testing.assert_array_equal(a.inner_blocks[1], data[2:4])
    np.testing.assert_array_equal(a.get_inner_block_selection((5, 1)), data[10:12, 5:10])
    np.testing.assert_array_equal(a.inner_blocks[1:4, 0], data[2:8, 0:5])  # crosses a shard boundary
    with pytest.raises(zarrpy.BoundsCheckError, match="6 chunks"):
        a.inner_blocks[6]
    with pytest.raises(zarrpy.BoundsCheckError):
        a.inner_blocks[0, 2]
    a.inner_blocks[3, 1] = -1  # one inner chunk in the middle of shard 1
    a.set_inner_block_selection((0, 0), -2)
    data[6:8, 5:10] = -1
    data[0:2, 0:5] = -2
    np.testing.assert_array_equal(a[...], data)
    z = zarr.open_array(str(tmp_path / "s"), mode="r")
    np.testing.assert_array_equal(z[...], data)


def test_inner_blocks_of_an_unsharded_array_are_its_blocks():
    data = np.arange(7 * 5).reshape(7, 5)
    a, _ = _pair((7, 5), (3, 2), data)
    for selection in [0, -1, (1, slice(None)), (..., 2), slice(1, 9)]:
        np.testing.assert_array_equal(a.inner_blocks[selection], a.blocks[selection])


@st.composite
def sharded_arrays_and_block_selections(draw):
    """A sharded layout and a block selection over its shard grid."""
    ndim = draw(st.integers(1, 3))
    chunks = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    shape = tuple(draw(st.integers(1, 10)) for _ in range(ndim))
    nshards = _nchunks(shape, shards)
    items = []
    for n in nshards:  # ints in range, slices whose start is a shard that exists (zarr-python raises past it)
        index = st.integers(-n, n - 1)
        items.append(draw(st.one_of(index, st.builds(slice, st.none() | index, st.none() | st.integers(-n, n + 2)))))
    return shape, chunks, shards, tuple(items)


@settings(max_examples=40, deadline=None)
@given(sharded_arrays_and_block_selections(), st.booleans())
def test_blocks_of_sharded_arrays_match_zarr_python(case, write):
    shape, chunks, shards, selection = case
    data = np.arange(int(np.prod(shape)), dtype="int32").reshape(shape)
    a = zarrpy.create_array({}, shape=shape, chunks=chunks, shards=shards, dtype="int32", fill_value=-1)
    z = zarr.create_array({}, shape=shape, chunks=chunks, shards=shards, dtype="int32", fill_value=-1)
    a[...] = z[...] = data
    expected = data[_block_region(selection, shape, shards)]
    np.testing.assert_array_equal(z.blocks[selection], expected)
    np.testing.assert_array_equal(a.blocks[selection], expected)
    # The inner grid has at least as many blocks per axis, so the selection is in range there too.
    np.testing.assert_array_equal(a.inner_blocks[selection], data[_block_region(selection, shape, chunks)])
    if write:
        a.blocks[selection] = z.blocks[selection] = 7
        np.testing.assert_array_equal(a[...], z[...])
