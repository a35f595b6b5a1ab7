"""zarr-python's indexing test cases (its ``tests/test_indexing.py``), run on zarrpy.

The arrays, selections and numpy expectations are zarr-python's; the calls
are zarrpy's (``zarrpy.create_array`` on a memory store, ``a[...]``,
``a.oindex``, ``a.vindex``, ``a.blocks``, ``get_*_selection`` /
``set_*_selection``, numpy arrays as ``out=``), and zarr-python's
``IndexError`` expectations are zarrpy's ``IndexError`` subclasses
(``BoundsCheckError``, ``SelectionError``).

Where zarr-python refuses a selection and zarrpy answers exactly as numpy
does (negative slice steps; slices and ``...`` in ``vindex``; mixes of index
arrays and implicit trailing slices in plain ``a[...]``; block slices past
the last block, which numpy cuts to nothing), the case asserts numpy's
answer, marked ``# numpy's answer``.

Block tests also run on a sharded layout: shards of zarr-python's chunk
shape (halved inner chunks), since ``blocks`` index shards, as in
zarr-python, and the expected regions stay the same.

Left out, as they test zarr-python internals: ``normalize_integer_selection``,
``replace_ellipsis``, ``make_slice_selection``, ``_iter_grid`` and
``_iter_chunk_regions`` (private helpers), the async API (``TestAsync``: its
oindex/vindex cases run here through the synchronous API), and the
``fields=`` tests (xfailed in zarr-python; zarrpy offers no ``fields=``,
see docs/from-zarr-python.md). ``test_accessed_chunks`` uses a counting
subclass of zarrpy's ``MemoryStore`` in place of zarr-python's.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import zarrpy
from zarrpy.errors import BoundsCheckError, SelectionError
from zarrpy.stores import MemoryStore


LAYOUTS = ["chunks", "shards"]


def _array(data: np.ndarray, chunks: tuple[int, ...] | None = None, layout: str = "chunks", store: Any = None):
    """A zarrpy array holding ``data``, stored in chunks of ``chunks`` (the
    whole array by default), or in shards of that shape (``layout="shards"``)
    holding inner chunks of half of it."""
    grid = tuple(chunks or data.shape)
    kw: dict[str, Any] = {"chunks": grid}
    if layout == "shards":
        inner = tuple(max(1, c // 2) if c % 2 == 0 else c for c in grid)
        kw = {"chunks": inner, "shards": grid}
    a = zarrpy.create_array(
        {} if store is None else store, shape=data.shape, dtype=data.dtype,
        chunk_key_encoding={"name": "v2", "separator": "."}, **kw,
    )
    a[()] = data
    return a


def _oindex_key(shape: tuple[int, ...], selection: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """numpy's orthogonal selection of a ``shape`` array: ``(ix, drop)`` with
    ``data[ix][drop]`` it (``np.ix_`` over every dimension, integer
    dimensions then dropped)."""
    items = selection if isinstance(selection, tuple) else (selection,)
    if any(s is Ellipsis for s in items):
        i = next(i for i, s in enumerate(items) if s is Ellipsis)
        items = items[:i] + (slice(None),) * (len(shape) - len(items) + 1) + items[i + 1:]
    items = items + (slice(None),) * (len(shape) - len(items))
    parts, drop = [], []
    for s, n in zip(items, shape):
        if isinstance(s, slice):
            parts.append(np.arange(n)[s])
            drop.append(slice(None))
        elif isinstance(s, (list, np.ndarray)):
            arr = np.asarray(s)
            parts.append(np.flatnonzero(arr) if arr.dtype == bool else arr)
            drop.append(slice(None))
        else:
            parts.append(np.array([s]))
            drop.append(0)
    return np.ix_(*parts), tuple(drop)


def oindex(a: np.ndarray, selection: Any) -> np.ndarray:
    ix, drop = _oindex_key(a.shape, selection)
    return a[ix][drop]


def oindex_set(a: np.ndarray, selection: Any, value: Any) -> None:
    ix, drop = _oindex_key(a.shape, selection)
    view = a[ix]
    view[drop] = value
    a[ix] = view


def _sparse(seed: int = 42) -> np.random.RandomState:
    return np.random.RandomState(seed)


# -- basic selections -------------------------------------------------------

@pytest.mark.parametrize(
    ("value", "dtype"), [(42, "uint8"), ((b"aaa", 1, 4.2), [("foo", "S3"), ("bar", "i4"), ("baz", "f8")])],
)
@pytest.mark.parametrize("use_out", [True, False])
def test_get_basic_selection_0d(use_out, value, dtype):
    # zarr-python xfails the structured case; zarrpy reads it.
    arr_np = np.array(value, dtype=dtype)
    arr_z = _array(arr_np)
    assert_array_equal(arr_np, arr_z.get_basic_selection(Ellipsis))
    assert_array_equal(arr_np, arr_z[...])
    assert arr_np[()] == arr_z.get_basic_selection(())
    assert arr_np[()] == arr_z[()]
    if use_out:
        out = np.zeros_like(arr_np)
        arr_z.get_basic_selection(Ellipsis, out=out)
        assert_array_equal(arr_np, out)


basic_selections_1d: list[Any] = [
    42, -1,
    slice(0, 1050), slice(50, 150), slice(0, 2000), slice(-150, -50), slice(-2000, 2000),
    slice(0, 0), slice(-1, 0),
    slice(None), Ellipsis, (), (Ellipsis, slice(None)),
    slice(None), slice(None, None), slice(None, None, 1), slice(None, None, 10), slice(None, None, 100),
    slice(None, None, 1000), slice(None, None, 10000),
    slice(0, 1050), slice(0, 1050, 1), slice(0, 1050, 10), slice(0, 1050, 100), slice(0, 1050, 1000),
    slice(0, 1050, 10000),
    slice(1, 31, 3), slice(1, 31, 30), slice(1, 31, 300), slice(81, 121, 3), slice(81, 121, 30),
    slice(81, 121, 300), slice(50, 150), slice(50, 150, 1), slice(50, 150, 10),
]

negative_step_selections_1d: list[Any] = [
    slice(None, None, -1), slice(None, None, -10), slice(None, None, -100), slice(None, None, -1000),
    slice(None, None, -10000),
    slice(1050, -1, -1), slice(1050, -1, -10), slice(1050, -1, -100), slice(1050, -1, -1000),
    slice(1050, -1, -10000),
    slice(1050, 0, -1), slice(1050, 0, -10), slice(1050, 0, -100), slice(1050, 0, -1000), slice(1050, 0, -10000),
    slice(150, 50, -1), slice(150, 50, -10), slice(31, 1, -3), slice(121, 81, -3), slice(-1, 0, -1),
]
"""zarr-python: "only positive step supported"; zarrpy answers as numpy."""

bad_selections_1d: list[Any] = [2.3, "foo", b"xxx", None, (0, 0), (slice(None), slice(None))]


def _check_basic(a: np.ndarray, z, selection: Any) -> None:
    expect = a[selection]
    assert_array_equal(expect, z.get_basic_selection(selection))
    assert_array_equal(expect, z[selection])
    out = np.empty(expect.shape, dtype=expect.dtype)
    z.get_basic_selection(selection, out=out)
    assert_array_equal(expect, out)


def test_get_basic_selection_1d():
    a = np.arange(1050, dtype=int)
    z = _array(a, (100,))
    for selection in basic_selections_1d:
        _check_basic(a, z, selection)
    for selection in negative_step_selections_1d:
        _check_basic(a, z, selection)  # numpy's answer
    for selection in bad_selections_1d:
        with pytest.raises(IndexError):
            z.get_basic_selection(selection)
        with pytest.raises(IndexError):
            z[selection]
    with pytest.raises(IndexError):
        z.get_basic_selection([1, 0])


basic_selections_2d: list[Any] = [
    42, -1, (42, slice(None)), (-1, slice(None)),
    (slice(None), 4), (slice(None), -1),
    slice(None), slice(0, 1000), slice(250, 350), slice(0, 2000), slice(-350, -250), slice(0, 0), slice(-1, 0),
    slice(-2000, 0), slice(-2000, 2000),
    (slice(None), slice(1, 5)), (slice(250, 350), slice(None)), (slice(250, 350), slice(1, 5)),
    (slice(250, 350), slice(-5, -1)), (slice(250, 350), slice(-50, 50)), (slice(250, 350, 10), slice(1, 5)),
    (slice(250, 350), slice(1, 5, 2)), (slice(250, 350, 33), slice(1, 5, 3)),
    (slice(None), slice(None)), Ellipsis, (), (Ellipsis, slice(None)), (Ellipsis, slice(None), slice(None)),
]

bad_selections_2d: list[Any] = [
    2.3, "foo", b"xxx", None, (2.3, slice(None)), (0, 0, 0), (slice(None), slice(None), slice(None)),
]

negative_step_selections_2d: list[Any] = [slice(None, None, -1), (slice(None, None, -1), slice(None))]


def test_get_basic_selection_2d():
    a = np.arange(10000, dtype=int).reshape(1000, 10)
    z = _array(a, (300, 3))
    for selection in basic_selections_2d:
        _check_basic(a, z, selection)
    for selection in negative_step_selections_2d:
        _check_basic(a, z, selection)  # numpy's answer
    for selection in bad_selections_2d + [[0, 1], (slice(None), [0, 1])]:
        with pytest.raises(IndexError):
            z.get_basic_selection(selection)
    assert_array_equal(z[[0, 1], [0, 1]], [0, 11])


def test_fancy_indexing_fallback_on_get_setitem():
    z = _array(np.zeros((20, 20)))
    z[[1, 2, 3], [1, 2, 3]] = 1
    assert_array_equal(z[:4, :4], [[0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    assert_array_equal(z[[1, 2, 3], [1, 2, 3]], 1)
    assert_array_equal(z[1, [1, 2, 3]], [1, 0, 0])
    z2 = _array(np.zeros(5))
    z2[[1, 2, 3]] = 1
    assert_array_equal(z2[:], [0, 1, 1, 1, 0])


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        ([0, 1], [[0, 1, 2], [3, 4, 5]]),
        (([0, 1], slice(None)), [[0, 1, 2], [3, 4, 5]]),
        (([0, 1], slice(1, None)), [[1, 2], [4, 5]]),
        ((slice(0, 2), [0, 2]), [[0, 2], [3, 5]]),
        ((slice(0, 2), slice(0, 2)), [[0, 1], [3, 4]]),
        (([1, 0, 1], slice(1, None)), [[4, 5], [1, 2], [4, 5]]),
        (([1, 0, 1]), [[3, 4, 5], [0, 1, 2], [3, 4, 5]]),
    ],
)
def test_orthogonal_indexing_fallback_on_getitem_2d(index, expected):
    a = np.arange(9).reshape(3, 3)
    z = _array(a)
    assert_array_equal(z[index], a[index])
    assert_array_equal(z[index], expected)


def test_setitem_repeated_index():
    # Skipped in zarr-python (fails on some platforms); zarrpy: the last value wins, as numpy.
    array = _array(np.zeros((4,)), (1,))
    array.oindex[(np.array([-1, -1, 0, 0]),)] = [0, 1, 2, 3]
    assert_array_equal(array[:], [3, 0, 0, 1])
    array.oindex[(np.array([-1, 0, 0, -1]),)] = [0, 1, 2, 3]
    assert_array_equal(array[:], [2, 0, 0, 3])


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        ([0, 1], [[[0, 1, 2], [3, 4, 5], [6, 7, 8]], [[9, 10, 11], [12, 13, 14], [15, 16, 17]]]),
        ((slice(0, 2), 1, 1), [4, 13]),
        ((slice(0, 2), 1, slice(0, 2)), [[3, 4], [12, 13]]),
        ((slice(0, 2), [1, 2], slice(0, 2)), [[[3, 4], [6, 7]], [[12, 13], [15, 16]]]),
    ],
)
def test_orthogonal_indexing_fallback_on_getitem_3d(index, expected):
    a = np.arange(27).reshape(3, 3, 3)
    z = _array(a)
    assert_array_equal(z[index], a[index])
    assert_array_equal(z[index], expected)


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        ([0, 1], [[1, 1, 1], [1, 1, 1], [0, 0, 0]]),
        (([0, 1], slice(1, 3)), [[0, 1, 1], [0, 1, 1], [0, 0, 0]]),
        (([0, 1, 1, 1, 1, 1, 1], slice(1, 3)), [[0, 1, 1], [0, 1, 1], [0, 0, 0]]),
        (([0, 2], slice(None, None, 2)), [[1, 0, 1], [0, 0, 0], [1, 0, 1]]),
    ],
)
def test_orthogonal_indexing_fallback_on_setitem_2d(index, expected):
    a = np.zeros((3, 3))
    z = _array(a)
    z[index] = 1
    a[index] = 1
    assert_array_equal(z[:], expected)
    assert_array_equal(z[:], a)


def test_fancy_indexing_with_implicit_slicing_answers_as_numpy():
    # zarr-python refuses index arrays mixed with implicit trailing slices; numpy's answer.
    a = np.zeros((5, 5, 5))
    z2 = _array(a)
    z2[[1, 2, 3], [1, 2, 3]] = 2
    a[[1, 2, 3], [1, 2, 3]] = 2
    assert_array_equal(z2[...], a)
    assert_array_equal(z2[[1, 2, 3], [1, 2, 3]], a[[1, 2, 3], [1, 2, 3]])
    z2[..., [1, 2, 3]] = 3
    a[..., [1, 2, 3]] = 3
    assert_array_equal(z2[...], a)
    assert_array_equal(z2[..., [1, 2, 3]], a[..., [1, 2, 3]])


@pytest.mark.parametrize(
    ("value", "dtype"), [(42, "uint8"), ((b"aaa", 1, 4.2), [("foo", "S3"), ("bar", "i4"), ("baz", "f8")])],
)
def test_set_basic_selection_0d(value, dtype):
    # zarr-python xfails the structured case; zarrpy writes it.
    arr_np = np.array(value, dtype=dtype)
    zeros = np.zeros_like(arr_np, dtype=dtype)
    arr_z = _array(zeros)
    assert_array_equal(zeros, arr_z)
    arr_z.set_basic_selection(Ellipsis, value)
    assert_array_equal(arr_np, arr_z)
    arr_z[...] = zeros[()]
    assert_array_equal(zeros, arr_z)
    arr_z[...] = value
    assert_array_equal(arr_np, arr_z)


# -- orthogonal selections --------------------------------------------------

def _check_orthogonal(a: np.ndarray, z, selection: Any) -> None:
    expect = oindex(a, selection)
    assert_array_equal(expect, z.get_orthogonal_selection(selection))
    assert_array_equal(expect, z.oindex[selection])


def test_get_orthogonal_selection_1d_bool():
    a = np.arange(1050, dtype=int)
    z = _array(a, (100,))
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        _check_orthogonal(a, z, rng.binomial(1, p, size=a.shape[0]).astype(bool))
    for bad in (np.zeros(50, dtype=bool), np.zeros(2000, dtype=bool), [[True, False], [False, True]]):
        with pytest.raises(SelectionError):  # an IndexError
            z.oindex[bad]


def test_get_orthogonal_selection_1d_int():
    a = np.arange(1050, dtype=int)
    z = _array(a, (100,))
    rng = _sparse()
    for p in 2, 0.5, 0.1, 0.01:
        ix = rng.choice(a.shape[0], size=int(a.shape[0] * p), replace=True)
        _check_orthogonal(a, z, ix)
        ix.sort()
        _check_orthogonal(a, z, ix)
        _check_orthogonal(a, z, ix[::-1])
    for selection in basic_selections_1d + [[0, 3, 10, -23, -12, -1], [3, 105, 23, 127]]:
        _check_orthogonal(a, z, selection)
    for selection in negative_step_selections_1d:
        _check_orthogonal(a, z, selection)  # numpy's answer
    for bad in bad_selections_1d + [[a.shape[0] + 1], [-(a.shape[0] + 1)], [[2, 4], [6, 8]]]:
        with pytest.raises(IndexError):
            z.get_orthogonal_selection(bad)
        with pytest.raises(IndexError):
            z.oindex[bad]


def _orthogonal_2d_selections(ix0, ix1) -> list[Any]:
    return [(ix0, ix1), (ix0, slice(1, 5)), (ix0, slice(1, 5, 2)), (slice(250, 350), ix1),
            (slice(250, 350, 10), ix1), (ix0, 4), (42, ix1)]


def test_get_orthogonal_selection_2d():
    a = np.arange(10000, dtype=int).reshape(1000, 10)
    z = _array(a, (300, 3))
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        ix0 = rng.binomial(1, p, size=a.shape[0]).astype(bool)
        ix1 = rng.binomial(1, 0.5, size=a.shape[1]).astype(bool)
        for selection in _orthogonal_2d_selections(ix0, ix1) + [(ix0, np.nonzero(ix1)[0]), (np.nonzero(ix0)[0], ix1)]:
            _check_orthogonal(a, z, selection)
        ix0 = rng.choice(a.shape[0], size=int(a.shape[0] * p), replace=True)
        ix1 = rng.choice(a.shape[1], size=int(a.shape[1] * 0.5), replace=True)
        for i0, i1 in ((ix0, ix1), (np.sort(ix0), np.sort(ix1)), (np.sort(ix0)[::-1], np.sort(ix1)[::-1])):
            for selection in _orthogonal_2d_selections(i0, i1):
                _check_orthogonal(a, z, selection)
    for selection in basic_selections_2d:
        _check_orthogonal(a, z, selection)
    for selection in negative_step_selections_2d:
        _check_orthogonal(a, z, selection)  # numpy's answer
    for bad in bad_selections_2d:
        with pytest.raises(IndexError):
            z.get_orthogonal_selection(bad)
        with pytest.raises(IndexError):
            z.oindex[bad]


def _orthogonal_3d_selections(ix0, ix1, ix2) -> list[Any]:
    return [
        (84, 42, 4), (-1, -1, -1), (ix0, ix1, ix2),
        (ix0, slice(15, 25), slice(1, 5)), (slice(50, 70), ix1, slice(1, 5)), (slice(50, 70), slice(15, 25), ix2),
        (ix0, slice(15, 25, 5), slice(1, 5, 2)), (slice(50, 70, 3), ix1, slice(1, 5, 2)),
        (slice(50, 70, 3), slice(15, 25, 5), ix2),
        (ix0, 42, 4), (84, ix1, 4), (84, 42, ix2),
        (ix0, slice(15, 25), 4), (42, ix1, slice(1, 5)), (slice(50, 70), 42, ix2),
        (ix0, ix1, slice(1, 5)), (slice(50, 70), ix1, ix2), (ix0, slice(15, 25), ix2),
        (ix0, ix1, 4), (42, ix1, ix2), (ix0, 42, ix2),
    ]


def _random_3d(rng, shape, p):
    bools = tuple(rng.binomial(1, q, size=n).astype(bool) for n, q in zip(shape, (p, 0.5, 0.5)))
    ints = tuple(rng.choice(n, size=int(n * q), replace=True) for n, q in zip(shape, (p, 0.5, 0.5)))
    return [bools, ints, tuple(np.sort(i) for i in ints), tuple(np.sort(i)[::-1] for i in ints)]


def test_get_orthogonal_selection_3d():
    a = np.arange(100000, dtype=int).reshape(200, 50, 10)
    z = _array(a, (60, 20, 3))
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        for ix in _random_3d(rng, a.shape, p):
            for selection in _orthogonal_3d_selections(*ix):
                _check_orthogonal(a, z, selection)


def test_orthogonal_indexing_edge_cases():
    a = np.arange(6).reshape(1, 2, 3)
    z = _array(a, (1, 2, 3))
    assert_array_equal(oindex(a, (0, slice(None), [0, 1, 2])), z.oindex[0, :, [0, 1, 2]])
    assert_array_equal(oindex(a, (0, slice(None), [True, True, True])), z.oindex[0, :, [True, True, True]])


def _assert_sets_like_numpy(a: np.ndarray, z, method: str, accessor: str, selection: Any, value: Any) -> None:
    """``z.<method>(selection, value)`` and ``z.<accessor>[selection] = value``,
    each on a zeroed ``z``, store what numpy stored in ``a``."""
    z[:] = 0
    getattr(z, method)(selection, value)
    assert_array_equal(a, z[:])
    z[:] = 0
    getattr(z, accessor)[selection] = value
    assert_array_equal(a, z[:])


def _check_set_orthogonal(v: np.ndarray, a: np.ndarray, z, selection: Any) -> None:
    for value in 42, oindex(v, selection), oindex(v, selection).tolist():
        if isinstance(value, list) and value == []:
            continue  # as in zarr-python: an empty list keeps no dimensions
        a[:] = 0
        oindex_set(a, selection, value)
        _assert_sets_like_numpy(a, z, "set_orthogonal_selection", "oindex", selection, value)


def test_set_orthogonal_selection_1d():
    v = np.arange(1050, dtype=int)
    a = np.empty(v.shape, dtype=int)
    z = _array(a, (100,))
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        _check_set_orthogonal(v, a, z, rng.binomial(1, p, size=a.shape[0]).astype(bool))
        ix = rng.choice(a.shape[0], size=int(a.shape[0] * p), replace=True)
        for i in (ix, np.sort(ix), np.sort(ix)[::-1]):
            _check_set_orthogonal(v, a, z, i)
    for selection in basic_selections_1d:
        _check_set_orthogonal(v, a, z, selection)


def test_set_item_1d_last_two_chunks():
    g = zarrpy.open_group({}, zarr_format=3, mode="w")
    a = g.create_array("bar", shape=(10,), chunks=(3,), dtype=int)
    a[slice(7, 10)] = np.array([7, 8, 9])
    assert_array_equal(a[slice(7, 10)], [7, 8, 9])
    for value in (np.array(1), 1):
        g = zarrpy.open_group({}, mode="w")
        g.create_array("zoo", dtype=float, shape=())
        g["zoo"][...] = value
        assert_array_equal(g["zoo"][()], np.array(1))


def test_set_orthogonal_selection_2d():
    v = np.arange(10000, dtype=int).reshape(1000, 10)
    a = np.empty_like(v)
    z = _array(a, (300, 3))
    rng = _sparse()

    def check(ix0, ix1):
        for selection in [(ix0, ix1), (ix0, slice(1, 5)), (slice(250, 350), ix1), (ix0, 4), (42, ix1)]:
            _check_set_orthogonal(v, a, z, selection)

    for p in 0.5, 0.1, 0.01:
        check(rng.binomial(1, p, size=a.shape[0]).astype(bool), rng.binomial(1, 0.5, size=a.shape[1]).astype(bool))
        ix0 = rng.choice(a.shape[0], size=int(a.shape[0] * p), replace=True)
        ix1 = rng.choice(a.shape[1], size=int(a.shape[1] * 0.5), replace=True)
        check(ix0, ix1)
        check(np.sort(ix0), np.sort(ix1))
        check(np.sort(ix0)[::-1], np.sort(ix1)[::-1])
    for selection in basic_selections_2d:
        _check_set_orthogonal(v, a, z, selection)


def test_set_orthogonal_selection_3d():
    v = np.arange(100000, dtype=int).reshape(200, 50, 10)
    a = np.empty_like(v)
    z = _array(a, (60, 20, 3))
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        for ix0, ix1, ix2 in _random_3d(rng, a.shape, p):
            for selection in [
                (84, 42, 4), (-1, -1, -1), (ix0, ix1, ix2),
                (ix0, slice(15, 25), slice(1, 5)), (slice(50, 70), ix1, slice(1, 5)),
                (slice(50, 70), slice(15, 25), ix2),
                (ix0, 42, 4), (84, ix1, 4), (84, 42, ix2), (ix0, slice(15, 25), 4), (slice(50, 70), ix1, 4),
                (slice(50, 70), 42, ix2), (ix0, ix1, slice(1, 5)), (ix0, ix1, 4),
            ]:
                _check_set_orthogonal(v, a, z, selection)


# -- coordinate selections --------------------------------------------------

def _check_coordinate(a: np.ndarray, z, selection: Any) -> None:
    expect = a[selection]
    assert_array_equal(expect, z.get_coordinate_selection(selection))
    assert_array_equal(expect, z.vindex[selection])


coordinate_selections_1d_bad: list[Any] = [2.3, "foo", b"xxx", None, (0, 0), (slice(None), slice(None))]
slice_selections_1d: list[Any] = [slice(5, 15), slice(None), Ellipsis]
"""Refused by zarr-python's coordinate and mask selections and ``vindex``; zarrpy's
``get_coordinate_selection`` / ``get_mask_selection`` refuse them too, its ``vindex``
answers as numpy."""


def test_get_coordinate_selection_1d():
    a = np.arange(1050, dtype=int)
    z = _array(a, (100,))
    rng = _sparse()
    for p in 2, 0.5, 0.1, 0.01:
        ix = rng.choice(a.shape[0], size=int(a.size * p), replace=True)
        for i in (ix, np.sort(ix), np.sort(ix)[::-1]):
            _check_coordinate(a, z, i)
    for selection in [42, -1, [0, 3, 10, -23, -12, -1], [3, 105, 23, 127], np.array([[2, 4], [6, 8]])]:
        _check_coordinate(a, z, selection)
    for bad in coordinate_selections_1d_bad + slice_selections_1d + [[a.shape[0] + 1], [-(a.shape[0] + 1)]]:
        with pytest.raises(IndexError):
            z.get_coordinate_selection(bad)
    for bad in coordinate_selections_1d_bad + [[a.shape[0] + 1], [-(a.shape[0] + 1)]]:
        with pytest.raises(IndexError):
            z.vindex[bad]
    for selection in slice_selections_1d:
        assert_array_equal(z.vindex[selection], a[selection])  # numpy's answer


def test_get_coordinate_selection_2d():
    a = np.arange(10000, dtype=int).reshape(1000, 10)
    z = _array(a, (300, 3))
    rng = _sparse()
    for p in 2, 0.5, 0.1, 0.01:
        n = int(a.size * p)
        ix0 = rng.choice(a.shape[0], size=n, replace=True)
        ix1 = rng.choice(a.shape[1], size=n, replace=True)
        for selection in [(42, 4), (-1, -1), (ix0, ix1), (ix0, 4), (42, ix1), (42, 4)]:
            _check_coordinate(a, z, selection)
    _check_coordinate(a, z, ([3, 3, 4, 2, 5], [1, 3, 5, 7, 9]))
    _check_coordinate(a, z, ([1, 1, 2, 2, 5], [1, 3, 2, 1, 0]))
    _check_coordinate(a, z, (np.array([[1, 1, 2], [2, 2, 5]]), np.array([[1, 3, 2], [1, 0, 0]])))
    for bad in [(slice(5, 15), [1, 2, 3]), ([1, 2, 3], slice(5, 15)), (Ellipsis, [1, 2, 3]), Ellipsis]:
        with pytest.raises(IndexError):
            z.get_coordinate_selection(bad)


def _check_set_coordinate(v: np.ndarray, a: np.ndarray, z, selection: Any) -> None:
    for value in 42, v[selection], v[selection].tolist():
        a[:] = 0
        a[selection] = value
        _assert_sets_like_numpy(a, z, "set_coordinate_selection", "vindex", selection, value)


def test_set_coordinate_selection_1d():
    v = np.arange(1050, dtype=int)
    a = np.empty(v.shape, dtype=v.dtype)
    z = _array(a, (100,))
    rng = _sparse()
    for p in 2, 0.5, 0.1, 0.01:
        _check_set_coordinate(v, a, z, rng.choice(a.shape[0], size=int(a.size * p), replace=True))
    _check_set_coordinate(v, a, z, np.array([[2, 4], [6, 8]]))
    for bad in coordinate_selections_1d_bad + slice_selections_1d:
        with pytest.raises(IndexError):
            z.set_coordinate_selection(bad, 42)
    for bad in coordinate_selections_1d_bad:
        with pytest.raises(IndexError):
            z.vindex[bad] = 42
    for selection in slice_selections_1d:  # numpy's answer
        a[:] = 0
        a[selection] = 42
        z[:] = 0
        z.vindex[selection] = 42
        assert_array_equal(a, z[:])


def test_set_coordinate_selection_2d():
    v = np.arange(10000, dtype=int).reshape(1000, 10)
    a = np.empty_like(v)
    z = _array(a, (300, 3))
    rng = _sparse()
    for p in 2, 0.5, 0.1, 0.01:
        n = int(a.size * p)
        ix0 = rng.choice(a.shape[0], size=n, replace=True)
        ix1 = rng.choice(a.shape[1], size=n, replace=True)
        for selection in [(42, 4), (-1, -1), (ix0, ix1), (ix0, 4), (42, ix1)]:
            _check_set_coordinate(v, a, z, selection)
    _check_set_coordinate(v, a, z, (np.array([[1, 2, 3], [4, 5, 6]]), np.array([[1, 3, 2], [2, 0, 5]])))


# -- block selections -------------------------------------------------------

block_selections_1d: list[Any] = [0, 5, -1, -4, slice(5), slice(None, 3), slice(5, 6), slice(-3, -1), slice(None)]
block_selections_1d_regions: list[Any] = [
    slice(100), slice(500, 600), slice(1000, None), slice(700, 800), slice(500), slice(None, 300), slice(500, 600),
    slice(800, 1000), slice(None),
]
block_selections_1d_bad: list[Any] = [
    slice(3, 8, 2), 2.3, "foo", b"xxx", None, (0, 0), (slice(None), slice(None)), [0, 5, 3],
]

block_selections_2d: list[Any] = [
    (0, 0), (1, 2), (-1, -1), (-3, -2), (slice(1), slice(2)), (slice(None, 2), slice(-2, -1)),
    (slice(2, 3), slice(-2, None)), (slice(-3, -1), slice(-3, -2)), (slice(None), slice(None)),
]
block_selections_2d_regions: list[Any] = [
    (slice(300), slice(3)), (slice(300, 600), slice(6, 9)), (slice(900, None), slice(9, None)),
    (slice(300, 600), slice(6, 9)), (slice(300), slice(6)), (slice(None, 600), slice(6, 9)),
    (slice(600, 900), slice(6, None)), (slice(300, 900), slice(3, 6)), (slice(None), slice(None)),
]


def _check_block(a: np.ndarray, z, selection: Any, region: Any) -> None:
    assert_array_equal(a[region], z.get_block_selection(selection))
    assert_array_equal(a[region], z.blocks[selection])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_get_block_selection_1d(layout):
    a = np.arange(1050, dtype=int)
    z = _array(a, (100,), layout)
    for selection, region in zip(block_selections_1d, block_selections_1d_regions, strict=True):
        _check_block(a, z, selection, region)
    nblocks = 11
    for bad in block_selections_1d_bad + [nblocks + 1, -(nblocks + 1)]:
        with pytest.raises(IndexError):
            z.get_block_selection(bad)
        with pytest.raises(IndexError):
            z.blocks[bad]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_get_block_selection_2d(layout):
    a = np.arange(10000, dtype=int).reshape(1000, 10)
    z = _array(a, (300, 3), layout)
    for selection, region in zip(block_selections_2d, block_selections_2d_regions, strict=True):
        _check_block(a, z, selection, region)
    for bad in [(slice(5, 15), [1, 2, 3]), (Ellipsis, [1, 2, 3])]:
        with pytest.raises(IndexError):
            z.get_block_selection(bad)
    # Blocks 15-19 of 4: zarr-python raises; numpy cuts the slice to nothing, as zarrpy.
    assert_array_equal(z.get_block_selection((slice(15, 20), slice(None))), a[4500:6000])  # numpy's answer


def _check_set_block(v: np.ndarray, a: np.ndarray, z, selection: Any, region: Any) -> None:
    for value in 42, v[region], v[region].tolist():
        a[:] = 0
        a[region] = value
        _assert_sets_like_numpy(a, z, "set_block_selection", "blocks", selection, value)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_set_block_selection_1d(layout):
    v = np.arange(1050, dtype=int)
    a = np.empty(v.shape, dtype=v.dtype)
    z = _array(a, (100,), layout)
    for selection, region in zip(block_selections_1d, block_selections_1d_regions, strict=True):
        _check_set_block(v, a, z, selection, region)
    for bad in block_selections_1d_bad:
        with pytest.raises(IndexError):
            z.set_block_selection(bad, 42)
        with pytest.raises(IndexError):
            z.blocks[bad] = 42


@pytest.mark.parametrize("layout", LAYOUTS)
def test_set_block_selection_2d(layout):
    v = np.arange(10000, dtype=int).reshape(1000, 10)
    a = np.empty(v.shape, dtype=v.dtype)
    z = _array(a, (300, 3), layout)
    for selection, region in zip(block_selections_2d, block_selections_2d_regions, strict=True):
        _check_set_block(v, a, z, selection, region)
    for bad in [(slice(5, 15), [1, 2, 3]), (Ellipsis, [1, 2, 3])]:
        with pytest.raises(IndexError):
            z.set_block_selection(bad, 42)
    z[:] = 0
    z.set_block_selection((slice(15, 20), slice(None)), 42)  # numpy's answer: an empty region, nothing written
    assert_array_equal(z[:], np.zeros_like(v))


# -- mask selections --------------------------------------------------------

def _check_mask(a: np.ndarray, z, selection: np.ndarray) -> None:
    expect = a[selection]
    assert_array_equal(expect, z.get_mask_selection(selection))
    assert_array_equal(expect, z.vindex[selection])
    assert_array_equal(expect, z[selection])


def test_get_mask_selection_1d():
    a = np.arange(1050, dtype=int)
    z = _array(a, (100,))
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        _check_mask(a, z, rng.binomial(1, p, size=a.shape[0]).astype(bool))
    wrong_shape = [np.zeros(50, dtype=bool), np.zeros(2000, dtype=bool), [[True, False], [False, True]]]
    for bad in coordinate_selections_1d_bad + slice_selections_1d + wrong_shape:
        with pytest.raises(IndexError):
            z.get_mask_selection(bad)
    for bad in coordinate_selections_1d_bad + wrong_shape:
        with pytest.raises(IndexError):
            z.vindex[bad]
    for selection in slice_selections_1d:
        assert_array_equal(z.vindex[selection], a[selection])  # numpy's answer


def test_get_mask_selection_2d():
    a = np.arange(10000, dtype=int).reshape(1000, 10)
    z = _array(a, (300, 3))
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        _check_mask(a, z, rng.binomial(1, p, size=a.size).astype(bool).reshape(a.shape))
    for bad in (np.zeros((1000, 5), dtype=bool), np.zeros((2000, 10), dtype=bool), [True, False]):
        with pytest.raises(SelectionError):  # an IndexError
            z.vindex[bad]


def _check_set_mask(v: np.ndarray, a: np.ndarray, z, selection: np.ndarray) -> None:
    a[:] = 0
    a[selection] = v[selection]
    _assert_sets_like_numpy(a, z, "set_mask_selection", "vindex", selection, v[selection])
    z[:] = 0
    z[selection] = v[selection]
    assert_array_equal(a, z[:])


def test_set_mask_selection_1d():
    v = np.arange(1050, dtype=int)
    a = np.empty_like(v)
    z = _array(a, (100,))
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        _check_set_mask(v, a, z, rng.binomial(1, p, size=a.shape[0]).astype(bool))
    for bad in coordinate_selections_1d_bad + slice_selections_1d:
        with pytest.raises(IndexError):
            z.set_mask_selection(bad, 42)
    for bad in coordinate_selections_1d_bad:
        with pytest.raises(IndexError):
            z.vindex[bad] = 42


def test_set_mask_selection_2d():
    v = np.arange(10000, dtype=int).reshape(1000, 10)
    a = np.empty_like(v)
    z = _array(a, (300, 3))
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        _check_set_mask(v, a, z, rng.binomial(1, p, size=a.size).astype(bool).reshape(a.shape))


# -- out=, numpy integers, numpy parity ---------------------------------------

def test_get_selection_out():
    a = np.arange(1050)
    z = _array(a, (100,))
    for selection in [slice(50, 150), slice(0, 1050), slice(1, 2)]:
        out = np.empty(a[selection].shape, dtype=a.dtype)
        z.get_basic_selection(selection, out=out)
        assert_array_equal(a[selection], out)
    with pytest.raises(TypeError):
        z.get_basic_selection(Ellipsis, out=[])

    a = np.arange(10000, dtype=int).reshape(1000, 10)
    z = _array(a, (300, 3))
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        ix0 = rng.binomial(1, p, size=a.shape[0]).astype(bool)
        ix1 = rng.binomial(1, 0.5, size=a.shape[1]).astype(bool)
        for selection in [(ix0, ix1), (ix0, slice(1, 5)), (slice(250, 350), ix1), (ix0, 4), (42, ix1),
                          (ix0, np.nonzero(ix1)[0]), (np.nonzero(ix0)[0], ix1)]:
            expect = oindex(a, selection)
            out = np.zeros(expect.shape, dtype=expect.dtype)
            z.get_orthogonal_selection(selection, out=out)
            assert_array_equal(expect, out)
    rng = _sparse()
    for p in 0.5, 0.1, 0.01:
        n = int(a.size * p)
        ix0 = rng.choice(a.shape[0], size=n, replace=True)
        ix1 = rng.choice(a.shape[1], size=n, replace=True)
        for selection in [(ix0, ix1), (ix0, 4), (42, ix1)]:
            out = np.zeros(a[selection].shape, dtype=a.dtype)
            z.get_coordinate_selection(selection, out=out)
            assert_array_equal(a[selection], out)


def test_slice_selection_uints():
    # zarr-python tests its make_slice_selection helper; here the same selection through a[...].
    arr = np.arange(24).reshape((4, 6))
    z = _array(arr, (2, 2))
    assert z[np.uint64(3)].shape == arr[np.uint64(3)].shape == (6,)
    assert z[np.uint64(3):np.uint64(4)].shape == (1, 6)


def test_numpy_int_indexing():
    a = np.arange(1050)
    z = _array(a, (100,))
    assert a[42] == z[42]
    assert a[np.int64(42)] == z[np.int64(42)]


class _CountingStore(MemoryStore):
    """A memory store that counts reads and writes per chunk key (batched
    reads, ``get_partial_values``, come through ``get``; versioned reads and
    conditional writes are counted as reads and writes)."""

    def __init__(self) -> None:
        super().__init__()
        self.counter: collections.Counter[tuple[str, str]] = collections.Counter()

    def get(self, key, byte_range=None):  # type: ignore[no-untyped-def]
        self.counter["__getitem__", key] += 1
        return super().get(key, byte_range)

    def set(self, key, value):  # type: ignore[no-untyped-def]
        self.counter["__setitem__", key] += 1
        return super().set(key, value)

    # A partial chunk write reads the chunk with its version and writes it back
    # only if unchanged (conditional writes): the same read and write, by other names.
    def get_versioned(self, requests):  # type: ignore[no-untyped-def]
        for r in requests:
            self.counter["__getitem__", r.key] += 1
        return super().get_versioned(requests)

    def set_conditional(self, writes):  # type: ignore[no-untyped-def]
        for w in writes:
            self.counter["__setitem__", w.key] += 1
        return super().set_conditional(writes)


@pytest.mark.parametrize(
    ("shape", "chunks", "ops"),
    [
        ((1070,), (50,), [("__getitem__", (slice(200, 400),))]),
        ((1070,), (50,), [("__getitem__", (slice(200, 400, 100),))]),
        ((1070,), (50,), [("__getitem__", (slice(200, 400),)), ("__setitem__", (slice(200, 400, 100),))]),
        ((40, 50), (5, 8), [("__getitem__", (slice(6, 37, 13), slice(4, 10))),
                            ("__setitem__", (slice(None), slice(None)))]),
    ],
)
def test_accessed_chunks(shape, chunks, ops):
    # Only the chunks a selection touches are read or written, each once.
    store = _CountingStore()
    z = _array(np.ones(shape), chunks, store=store)  # ones: zeros would store no chunk at all
    for i, (optype, slices) in enumerate(ops):
        per_dim = [np.unique(np.arange(n)[s] // c) for n, c, s in zip(shape, chunks, slices, strict=True)]
        keys = {".".join(map(str, comb)) for comb in np.stack(np.meshgrid(*per_dim, indexing="ij"), -1)
                .reshape(-1, len(shape)).tolist()}
        before = store.counter.copy()
        if optype == "__getitem__":
            z[slices]
        else:
            z[slices] = i + 2
        delta = store.counter - before
        for key in keys:
            assert delta.pop((optype, key)) == 1
            if optype == "__setitem__":
                assert delta.pop(("__getitem__", key), 1) == 1  # a partial chunk is read once
        assert not delta, delta


@pytest.mark.parametrize(
    "selection",
    [
        [...], [1, ...], [slice(None)], [1, 3], [[1, 2, 3], 9], [np.arange(1000)], [slice(5, 15)], [slice(2, 4), 4],
        [[1, 3]],
        [np.tile([True, False], (1000, 5))], [np.full((1000, 10), False)],
        [[1, 2, 3, 4], [5, 6, 7, 8]], [[100, 200, 300], [4, 5, 6]],
    ],
)
def test_indexing_equals_numpy(selection):
    a = np.arange(10000, dtype=int).reshape(1000, 10)
    z = _array(a, (300, 3))
    assert_array_equal(a[*selection,], z[*selection,], err_msg=f"selection: {selection}")


@pytest.mark.parametrize(
    "selection",
    [
        [np.tile([True, False], 500), np.tile([True, False], 5)],
        [np.full(1000, False), np.tile([True, False], 5)],
        [np.full(1000, True), np.full(10, True)],
        [np.full(1000, True), [True, False] * 5],
    ],
)
def test_orthogonal_bool_indexing_like_numpy_ix(selection):
    a = np.arange(10000, dtype=int).reshape(1000, 10)
    z = _array(a, (300, 3))
    assert_array_equal(a[np.ix_(*selection)], z[*selection,], err_msg=f"{selection=}")


def test_indexing_with_zarr_array():
    # zarr-python's issue 2133: arrays index with other (boolean or integer) arrays.
    a = np.arange(10)
    group = zarrpy.open_group({}, mode="w")
    za = group.create_array("a", shape=a.shape, chunks=(2,), dtype=a.dtype)
    za[...] = a
    ix = [False, True, False, True, False, True, False, True, False, True]
    ii = [0, 2, 4, 5]
    zix = group.create_array("ix", shape=(10,), chunks=(2,), dtype="bool")
    zix[...] = ix
    zii = group.create_array("ii", shape=(4,), chunks=(2,), dtype="i4")
    zii[...] = ii
    assert_array_equal(a[ix], za[zix])
    assert_array_equal(a[ix], za.oindex[zix])
    assert_array_equal(a[ix], za.vindex[zix])
    assert_array_equal(a[ii], za[zii])
    assert_array_equal(a[ii], za.oindex[zii])


@pytest.mark.parametrize("where", ["local", "memory"])
@pytest.mark.parametrize("shape", [(0, 2, 3), (0,), (3, 0)])
def test_zero_sized_chunks(where, shape, tmp_path):
    # The stored zarr-python test gives chunks=shape; zarr-python 3.4 (installed) refuses a chunk
    # length of 0 with a ValueError, as zarrpy does (MetadataError is one). An array with a
    # zero-length dimension is written and read with its default (whole-array) chunks.
    store = str(tmp_path / "z") if where == "local" else {}
    with pytest.raises(ValueError, match="chunks"):
        zarrpy.create_array(store, shape=shape, chunks=shape, zarr_format=3, dtype="f8")
    z = zarrpy.create_array(store, shape=shape, zarr_format=3, dtype="f8")
    z[...] = 42
    assert_array_equal(z[...], np.zeros(shape, dtype="f8"))


def test_vectorized_indexing_incompatible_shape():
    # zarr-python's issue 2469: a value that does not fit the points is refused (a ValueError there and here).
    arr = zarrpy.create_array({}, shape=(4, 4), chunks=(2, 2), dtype=np.int16, fill_value=32767,
                              serializer=zarrpy.codecs.BytesCodec(), compressors=[zarrpy.codecs.BloscCodec()])
    with pytest.raises(ValueError, match="cannot be broadcast"):
        arr[np.array([1, 2]), np.array([1, 2])] = np.array([[-1, -2], [-3, -4]])
    assert_array_equal(arr[...], np.full((4, 4), 32767))


@pytest.mark.parametrize(
    ("indexer", "expected"),
    [
        ((0,), [1, 2]), ((1,), [3, 4]), ((0, 1), 2),
        ((slice(None),), [[1, 2], [3, 4]]), ((slice(0, 1),), [[1, 2]]), ((slice(1, 2),), [[3, 4]]),
        ((slice(0, 2),), [[1, 2], [3, 4]]), ((slice(0, 0),), np.empty((0, 2), dtype="i8")),
        ((...,), [[1, 2], [3, 4]]), ((0, ...), [1, 2]), ((..., 0), [1, 3]), ((0, 1, ...), 2),
        ((0, slice(None)), [1, 2]), ((slice(None), 0), [1, 3]), ((slice(None), slice(None)), [[1, 2], [3, 4]]),
        (([0]), [[1, 2]]), (([1]), [[3, 4]]), (([0], [1]), 2), (([0, 1], [0]), [[1], [3]]),
        (([0, 1], [0, 1]), [[1, 2], [3, 4]]),
        (np.array([True, True]), [[1, 2], [3, 4]]), (np.array([True, False]), [[1, 2]]),
        (np.array([False, True]), [[3, 4]]), (np.array([False, False]), np.empty((0, 2), dtype="i8")),
    ],
)
def test_oindex_cases_of_the_async_api(indexer, expected):
    z = zarrpy.create_array({}, shape=(2, 2), chunks=(1, 1), zarr_format=3, dtype="i8")
    z[...] = np.array([[1, 2], [3, 4]])
    assert_array_equal(z.oindex[indexer], expected)


def test_oindex_with_a_zarr_array_of_the_async_api():
    z1 = zarrpy.create_array({}, shape=(2, 2), chunks=(1, 1), zarr_format=3, dtype="i8")
    z1[...] = np.array([[1, 2], [3, 4]])
    z2 = zarrpy.create_array({}, shape=(2,), chunks=(1,), zarr_format=3, dtype="?")
    z2[...] = np.array([True, False])
    assert_array_equal(z1.oindex[z2], [[1, 2]])


@pytest.mark.parametrize(("indexer", "expected"), [(([0], [0]), [1]), (([0, 1], [0, 1]), [1, 4])])
def test_vindex_cases_of_the_async_api(indexer, expected):
    z = zarrpy.create_array({}, shape=(2, 2), chunks=(1, 1), zarr_format=3, dtype="i8")
    z[...] = np.array([[1, 2], [3, 4]])
    assert_array_equal(z.vindex[indexer], expected)


def test_bounds_errors_are_index_errors():
    # zarr-python's BoundsCheckError is an IndexError; zarrpy's too, and a wrong-shaped mask is a SelectionError.
    z = _array(np.arange(10), (3,))
    with pytest.raises(BoundsCheckError):
        z[10]
    with pytest.raises(BoundsCheckError):
        z.blocks[4]
    with pytest.raises(SelectionError):
        z.get_mask_selection(np.ones(3, bool))
