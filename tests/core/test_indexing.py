"""OrthogonalIndexer on its own: selections -> ChunkProjection, with numpy as the oracle.

The indexer is only exercised through Array elsewhere; here the projections
are replayed over plain numpy arrays split into (padded) chunks, both ways:

- read: ``out[p.out_selection] = chunk[p.chunk_selection].reshape(p.out_block_shape)``
  (as ``Array._read``) must give numpy's orthogonal selection (``np.ix_`` of
  the per-dimension indices), and numpy's own ``src[sel]`` wherever numpy's
  semantics are the orthogonal ones;
- write: ``chunk[p.chunk_selection] = value[p.out_selection].reshape(p.chunk_block_shape)``
  (as ``Array._write``) must change exactly what numpy's ``dst[ix] = value`` does.

Plus the bookkeeping the array layer relies on (each chunk once, coordinates
in the grid, block shapes, ``is_complete``) and the errors for bad selections.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrpy.core.indexing import ChunkProjection, OrthogonalIndexer
from zarrpy.errors import BoundsCheckError, SelectionError, ZarrpyError

PAD = -1  # value of the padding beyond the array's edge in the last chunks (src holds 0..size-1)


# -- strategies ----------------------------------------------------------------------


def _dim_selection(n: int, family: str):
    """One dimension's selection for a dimension of length ``n``: (kind, selection).

    ``family`` "basic": slices and integers; "arrays": index arrays, masks and
    slices; "any": everything (the families keep each kind frequent).
    """
    # Forward slices inside the dimension (they start and stop on and off chunk
    # edges), and any slice at all: negative bounds and steps, bounds past the ends.
    inside = st.none() | st.integers(0, n)
    anywhere = st.none() | st.integers(-n - 2, n + 2)
    forward = st.builds(slice, inside, inside, st.sampled_from([None, 1, 1, 2, 3])).map(lambda s: ("slice", s))
    general = st.builds(slice, anywhere, anywhere, st.sampled_from([None, 1, 2, 3, -1, -2, -3]))
    basic = [st.just(("full", slice(None))), forward, forward, general.map(lambda s: ("slice", s))]
    if n:
        basic.append(st.integers(-n, n - 1).map(lambda i: ("int", i)))
        basic.append(st.integers(-n, n - 1).map(lambda i: ("int", np.int64(i))))
    entries = st.lists(st.integers(-n, n - 1), max_size=7) if n else st.just([])
    unique_sorted = st.lists(st.integers(0, n - 1), unique=True, max_size=n).map(sorted) if n else st.just([])
    arrays = [
        forward,
        entries.map(lambda xs: ("array", np.array(xs, dtype=np.int64))),
        entries.map(lambda xs: ("array", list(xs))),  # a list, as users pass them
        unique_sorted.map(lambda xs: ("array", np.array(xs, dtype=np.uint32))),
        st.lists(st.booleans(), min_size=n, max_size=n).map(lambda m: ("mask", np.array(m, bool))),
    ]
    return st.one_of({"basic": basic, "arrays": arrays, "any": basic + arrays[1:]}[family])


@st.composite
def cases(draw):
    """(shape, chunks, per-dimension (kind, sel) list, user selection, max_arrays)."""
    ndim = draw(st.sampled_from([0, 1, 1, 2, 2, 3, 4]))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim)))
    chunks = tuple(draw(st.integers(1, max(n, 1) + 1)) for n in shape)
    max_arrays = draw(st.sampled_from([0, 1, None]))
    family = draw(st.sampled_from(["basic", "arrays", "any"]))
    dims = []
    n_arrays = 0
    for n in shape:
        allow = max_arrays is None or n_arrays < max_arrays
        kind, sel = draw(_dim_selection(n, family if allow else "basic"))
        n_arrays += kind in ("array", "mask")
        dims.append((kind, sel))
    # Spell the same selection in one of the ways users do: all dimensions,
    # trailing full slices left out, or a run of full slices as `...`.
    user = [sel for _, sel in dims]
    form = draw(st.sampled_from(["tuple", "short", "ellipsis", "bare"]))
    if form == "short":
        while user and dims[len(user) - 1][0] == "full":
            user.pop()
    elif form == "ellipsis":
        i = draw(st.integers(0, ndim))
        j = i
        while j < ndim and dims[j][0] == "full" and draw(st.booleans()):
            j += 1
        user = user[:i] + [Ellipsis] + user[j:]
    selection = user[0] if form == "bare" and len(user) == 1 else tuple(user)
    return shape, chunks, dims, selection, max_arrays


# -- the reference and the replay ---------------------------------------------------------


def _dim_index(kind: str, sel, n: int) -> np.ndarray:
    """The elements a dimension selection picks, in order (numpy semantics)."""
    if kind == "int":
        return np.array([int(sel) % n])
    if kind in ("full", "slice"):
        return np.arange(*sel.indices(n))
    if kind == "mask":
        return np.flatnonzero(sel)
    arr = np.asarray(sel, dtype=np.int64)
    return np.where(arr < 0, arr + n, arr)


def _orthogonal(src: np.ndarray, dims) -> tuple[np.ndarray, tuple]:
    """numpy's orthogonal selection (np.ix_), integer dimensions dropped; and the ix tuple."""
    idx = [_dim_index(kind, sel, n) for (kind, sel), n in zip(dims, src.shape)]
    ix = np.ix_(*idx) if idx else ()
    kept = tuple(len(i) for (kind, _), i in zip(dims, idx) if kind != "int")
    return np.asarray(src[ix]).reshape(kept), ix


def _padded_chunks(src: np.ndarray, chunks: tuple[int, ...]) -> np.ndarray:
    """``src`` in a buffer padded to whole chunks with PAD (decoded edge chunks are whole)."""
    grid = tuple(math.ceil(n / c) * c for n, c in zip(src.shape, chunks))
    buf = np.full(grid, PAD, dtype=src.dtype)
    buf[tuple(slice(0, n) for n in src.shape)] = src
    return buf


def _chunk(buf: np.ndarray, coords, chunks) -> np.ndarray:
    """A view of the chunk at ``coords`` in a padded buffer."""
    return buf[(*(slice(c * s, (c + 1) * s) for c, s in zip(coords, chunks)), Ellipsis)]


def _check_bookkeeping(projections: list[ChunkProjection], ix: OrthogonalIndexer, shape, chunks, dims) -> None:
    grid = tuple(math.ceil(n / c) for n, c in zip(shape, chunks))
    coords = [p.chunk_coords for p in projections]
    assert len(set(coords)) == len(coords), f"a chunk is visited twice: {coords}"
    # No chunk is touched for an empty selection, and some chunk for a non-empty one.
    assert (len(projections) == 0) == (math.prod(ix.shape) == 0)
    int_dims = [kind == "int" for kind, _ in dims]
    for p in projections:
        assert len(p.chunk_coords) == len(shape)
        assert all(0 <= c < g for c, g in zip(p.chunk_coords, grid)), (p.chunk_coords, grid)
        assert len(p.chunk_dim_selection) == len(shape)
        lengths = []
        covers = True
        exact = True  # slices of step 1 and increasing arrays: is_complete must be exact
        for d, (s, n, c, cc) in enumerate(zip(p.chunk_dim_selection, shape, chunks, p.chunk_coords)):
            region = min(c, n - cc * c)
            if isinstance(s, slice):
                picked = np.arange(*s.indices(c))
                exact &= s.step in (None, 1)
            else:
                assert isinstance(s, np.ndarray) and s.ndim == 1 and s.dtype.kind in "iu", s
                picked = s
                exact &= bool(np.all(np.diff(picked) > 0))
            assert picked.size > 0
            assert picked.min() >= 0 and picked.max() < region, f"dim {d} reads past the array edge"
            lengths.append(picked.size)
            covers &= set(picked.tolist()) == set(range(region))
        assert p.chunk_block_shape == tuple(lengths)
        assert p.out_block_shape == tuple(n for n, is_int in zip(lengths, int_dims) if not is_int)
        if p.is_complete:
            assert covers, f"{p} claims the whole chunk but does not cover it"
        elif exact:
            # Unordered or repeated picks, or a stepped slice that happens to hit every
            # element of a 1-long region, may cover a chunk and still say "incomplete"
            # (a harmless read-modify-write); otherwise the flag must be exact.
            assert not covers, f"{p} covers its chunk but is not marked complete"


def _replay_read(ix: OrthogonalIndexer, src: np.ndarray, chunks) -> tuple[np.ndarray, list[ChunkProjection]]:
    buf = _padded_chunks(src, chunks)
    out = np.full(ix.shape, -2, dtype=src.dtype)
    hits = np.zeros(ix.shape, dtype=np.int64)
    projections = list(ix)
    for p in projections:
        chunk = _chunk(buf, p.chunk_coords, chunks)
        block = chunk[p.chunk_selection]
        assert block.shape == p.chunk_block_shape
        # The per-dimension form selects the same elements (what partial decoders use).
        per_dim = chunk[np.ix_(*[np.arange(*s.indices(c)) if isinstance(s, slice) else s
                                 for s, c in zip(p.chunk_dim_selection, chunks)])]
        np.testing.assert_array_equal(per_dim, block)
        out[p.out_selection] = block.reshape(p.out_block_shape)
        hits[p.out_selection] += 1
    assert np.all(hits == 1), "every output element is written exactly once"
    return out, projections


# -- property tests -------------------------------------------------------------------------


@settings(max_examples=250, deadline=None)
@given(cases())
def test_projections_assemble_numpys_orthogonal_selection(case):
    shape, chunks, dims, selection, max_arrays = case
    src = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    ix = OrthogonalIndexer(selection, shape, chunks, max_arrays=max_arrays)
    expected, _ = _orthogonal(src, dims)
    assert ix.shape == expected.shape
    out, projections = _replay_read(ix, src, chunks)
    np.testing.assert_array_equal(out, expected)
    _check_bookkeeping(projections, ix, shape, chunks, dims)

    # Basic selections, and one index array with no integer beside it, mean the
    # same in numpy and orthogonally: compare with ``src[selection]`` itself.
    kinds = [kind for kind, _ in dims]
    n_arrays = sum(k in ("array", "mask") for k in kinds)
    has_ellipsis = any(s is Ellipsis for s in (selection if isinstance(selection, tuple) else (selection,)))
    if n_arrays == 0 or (n_arrays == 1 and "int" not in kinds):
        expected = src[selection]
        np.testing.assert_array_equal(out, expected)
        assert ix.shape == np.shape(expected)
        numpy_scalar = not isinstance(expected, np.ndarray)
        if has_ellipsis and shape:
            # numpy: a[0, 0, ...] is a 0-d array; zarrpy (as zarr-python) answers a scalar.
            assert ix.is_scalar == (kinds.count("int") == len(shape))
        else:
            assert ix.is_scalar == numpy_scalar
    else:
        assert not ix.is_scalar  # an index array always keeps a dimension

    # The same selection under a stricter max_arrays: refused exactly when it has too many arrays.
    for limit in (0, 1):
        if n_arrays > limit:
            with pytest.raises(SelectionError):
                OrthogonalIndexer(selection, shape, chunks, max_arrays=limit)
        else:
            assert OrthogonalIndexer(selection, shape, chunks, max_arrays=limit).shape == ix.shape


@settings(max_examples=120, deadline=None)
@given(cases())
def test_writes_through_projections_match_numpy_assignment(case):
    shape, chunks, dims, selection, max_arrays = case
    idx = [_dim_index(kind, sel, n) for (kind, sel), n in zip(dims, shape)]
    if any(len(np.unique(i)) != len(i) for i in idx):
        return  # repeated targets: numpy does not define which value wins
    ix = OrthogonalIndexer(selection, shape, chunks, max_arrays=max_arrays)
    dst = np.zeros(shape, dtype=np.int64)
    value = np.arange(1, math.prod(ix.shape) + 1, dtype=np.int64).reshape(ix.shape)
    buf = _padded_chunks(dst, chunks)
    for p in ix:
        block = value[p.out_selection].reshape(p.chunk_block_shape)
        _chunk(buf, p.chunk_coords, chunks)[p.chunk_selection] = block
    expected = dst.copy()
    _, ixsel = _orthogonal(dst, dims)
    expected[ixsel] = value.reshape(expected[ixsel].shape)
    np.testing.assert_array_equal(buf[tuple(slice(0, n) for n in shape)], expected)
    # nothing was written into the padding beyond the array's edge
    pad = buf.copy()
    pad[tuple(slice(0, n) for n in shape)] = PAD
    assert np.all(pad == PAD)


# -- examples worth pinning --------------------------------------------------------------


def test_projection_fields_for_a_simple_2d_selection():
    ix = OrthogonalIndexer((1, slice(1, 5)), (4, 6), (2, 3))
    assert ix.shape == (4,) and not ix.is_scalar
    projections = list(ix)
    assert [p.chunk_coords for p in projections] == [(0, 0), (0, 1)]
    first, second = projections
    assert first.chunk_selection == (slice(1, 2), slice(1, 3, 1))
    assert first.out_selection == (slice(0, 2),)
    assert first.chunk_block_shape == (1, 2) and first.out_block_shape == (2,)
    assert second.chunk_selection == (slice(1, 2), slice(0, 2, 1))
    assert second.out_selection == (slice(2, 4),)
    assert not first.is_complete and not second.is_complete


def test_complete_chunks_including_the_short_edge_chunk():
    # shape 5, chunk 2: chunks cover [0,2) [2,4) [4,5); the edge chunk's region is 1 long.
    flags = {p.chunk_coords: p.is_complete for p in OrthogonalIndexer(slice(1, 5), (5,), (2,))}
    assert flags == {(0,): False, (1,): True, (2,): True}
    flags = {p.chunk_coords: p.is_complete for p in OrthogonalIndexer(4, (5,), (2,))}
    assert flags == {(2,): True}  # one int fills a 1-long edge chunk
    flags = {p.chunk_coords: p.is_complete for p in OrthogonalIndexer(([0, 1, 3],), (5,), (2,))}
    assert flags == {(0,): True, (1,): False}
    # As many picks as the chunk is long is not enough: repeats leave a gap.
    flags = {p.chunk_coords: p.is_complete for p in OrthogonalIndexer(np.array([0, 0, 3, 2]), (4,), (2,))}
    assert flags == {(0,): False, (1,): False}  # [3, 2] covers chunk 1, out of order: conservative
    flags = {p.chunk_coords: p.is_complete for p in OrthogonalIndexer(np.array([1, 1, 2, 3]), (4,), (2,))}
    assert flags == {(0,): False, (1,): True}
    # A mask selecting everything is complete; a stepped slice never is.
    assert all(p.is_complete for p in OrthogonalIndexer(np.ones(5, bool), (5,), (2,)))
    assert not any(p.is_complete for p in OrthogonalIndexer(slice(None, None, 2), (4,), (2,)))


def test_unsorted_array_visits_each_chunk_once_and_keeps_output_order():
    ix = OrthogonalIndexer(np.array([5, 0, 4, 1, 5]), (6,), (2,))
    projections = list(ix)
    assert sorted(p.chunk_coords for p in projections) == [(0,), (2,)]
    src = np.arange(6) * 10
    out, _ = _replay_read(ix, src, (2,))
    np.testing.assert_array_equal(out, [50, 0, 40, 10, 50])


@pytest.mark.parametrize("max_arrays", [0, 1, None])
def test_negative_steps_are_slices_not_user_arrays(max_arrays):
    # They become integer arrays inside, but never count against max_arrays.
    ix = OrthogonalIndexer((slice(None, None, -1), slice(4, 0, -2)), (3, 5), (2, 2), max_arrays=max_arrays)
    src = np.arange(15).reshape(3, 5)
    out, _ = _replay_read(ix, src, (2, 2))
    np.testing.assert_array_equal(out, src[::-1, 4:0:-2])


def test_zero_dim_array():
    scalar = OrthogonalIndexer((), (), ())
    assert scalar.shape == () and scalar.is_scalar
    ellipsis = OrthogonalIndexer(Ellipsis, (), ())
    assert ellipsis.shape == () and not ellipsis.is_scalar  # numpy: a[...] is a 0-d array
    for ix in (scalar, ellipsis):
        [p] = list(ix)
        assert p.chunk_coords == () and p.out_selection == () and p.is_complete


def test_zero_length_dimension_touches_no_chunk():
    for sel in (slice(None), [], np.zeros(0, bool), Ellipsis, (slice(None), 1)):
        ix = OrthogonalIndexer(sel, (0, 3), (2, 2))
        assert list(ix) == []
        assert ix.shape[0] == 0


def test_numpy_integer_types_are_accepted():
    for t in (np.int8, np.uint16, np.int64, np.uint64):
        ix = OrthogonalIndexer((t(2), slice(t(1), t(4))), (4, 4), (3, 3))
        assert ix.shape == (3,) and {p.chunk_coords for p in ix} == {(0, 0), (0, 1)}
    for t in (np.int32, np.uint8, np.uint64):
        ix = OrthogonalIndexer(np.array([3, 0], dtype=t), (4,), (3,))
        out, _ = _replay_read(ix, np.arange(4), (3,))
        np.testing.assert_array_equal(out, [3, 0])


# -- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "selection, shape, bad",
    [
        (5, (5,), "5"),
        (-6, (5,), "-6"),
        (np.int64(9), (5,), "9"),
        ((0, 5), (5, 5), "5"),
        (0, (0,), "0"),  # nothing to index in a zero-length dimension
        ([0, 5], (5,), "5"),
        (np.array([1, -6, 2]), (5,), "-6"),
        ((slice(None), [4, 0, 7]), (5, 5), "7"),
        (np.array([0], dtype=np.uint8), (0,), "0"),
    ],
)
def test_out_of_bounds_raise_bounds_check_error_naming_the_index(selection, shape, bad):
    with pytest.raises(BoundsCheckError, match=rf"index {bad} is out of bounds .*length {shape[-1]}\b") as info:
        OrthogonalIndexer(selection, shape, (2,) * len(shape))
    assert isinstance(info.value, IndexError) and isinstance(info.value, ZarrpyError)


def test_out_of_bounds_is_checked_before_any_projection():
    # The error comes from the constructor, so no chunk is read or written first.
    with pytest.raises(BoundsCheckError):
        OrthogonalIndexer((slice(None), [0, 1, 99]), (4, 4), (2, 2))


def test_bounds_messages_name_the_axis():
    with pytest.raises(BoundsCheckError, match="axis 1|dimension 1"):
        OrthogonalIndexer((0, 7), (5, 5), (2, 2))


def test_too_many_indices():
    with pytest.raises(BoundsCheckError, match=r"too many indices: array is 2-dimensional, selection has 3"):
        OrthogonalIndexer((0, 0, 0), (3, 3), (2, 2))
    with pytest.raises(IndexError, match="too many indices"):
        OrthogonalIndexer((0, Ellipsis, 0, 0), (3, 3), (2, 2))
    with pytest.raises(IndexError, match="too many indices"):
        OrthogonalIndexer(0, (), ())
    # `...` may stand for no dimension at all
    assert OrthogonalIndexer((0, Ellipsis, 1), (3, 3), (2, 2)).is_scalar


def test_boolean_mask_of_the_wrong_length():
    for mask in (np.ones(4, bool), np.ones(6, bool), [True, False]):
        with pytest.raises(IndexError, match=rf"boolean index of length {len(mask)} does not match .*length 5"):
            OrthogonalIndexer(mask, (5,), (2,))
    with pytest.raises(IndexError, match="length 3 does not match a dimension of length 4"):
        OrthogonalIndexer((slice(None), np.ones(3, bool)), (2, 4), (2, 2), max_arrays=None)


@pytest.mark.parametrize("form", ["getitem", "oindex", "vindex", "mask", "setitem", "set_oindex", "set_vindex"])
@pytest.mark.parametrize("mask", [np.ones(3, bool), np.ones(9, bool), np.ones((2, 4), bool), np.ones((4, 5), bool)])
def test_a_wrong_shaped_mask_is_a_selection_error_and_writes_nothing(form, mask):
    # A mask of the wrong shape is a malformed selection (SelectionError, an
    # IndexError as zarr-python's), not an index past the end (BoundsCheckError).
    import zarrpy

    store: dict = {}
    a = zarrpy.create_array(store, shape=(4, 4), chunks=(2, 2), dtype="int32")
    a[...] = np.arange(16).reshape(4, 4)
    before = dict(store)
    calls = {
        "getitem": lambda: a[mask], "oindex": lambda: a.oindex[mask], "vindex": lambda: a.vindex[mask],
        "mask": lambda: a.get_mask_selection(mask), "setitem": lambda: a.__setitem__(mask, 0),
        "set_oindex": lambda: a.oindex.__setitem__(mask, 0), "set_vindex": lambda: a.vindex.__setitem__(mask, 0),
    }
    if form in ("oindex", "set_oindex") and mask.ndim != 1:
        with pytest.raises(SelectionError):  # an orthogonal index must be 1-D
            calls[form]()
        return
    with pytest.raises(SelectionError, match="does not match|expected a boolean array of shape") as info:
        calls[form]()
    assert isinstance(info.value, IndexError) and not isinstance(info.value, BoundsCheckError)
    assert store == before


@pytest.mark.parametrize(
    "selection, match",
    [
        (slice(None, None, 0), "step cannot be zero"),
        ((Ellipsis, slice(1, 3, 0)), "step cannot be zero"),
        (1.0, "unsupported selection 1.0"),
        (np.float64(1), "unsupported selection"),
        ("a", "unsupported selection 'a'"),
        (True, "unsupported selection True"),  # numpy would add an axis: refused, not misread as 1
        ((0, 1), None),  # two indices on a 1-D array are "too many", not a pair
        ((slice(0.5, 2),), "slice bounds must be integers"),
        ((slice(0, 2, 1.0),), "slice bounds must be integers"),
        (np.array([0.0, 1.0]), "must hold integers or booleans, got dtype float64"),
        (np.array([[0, 1]]), r"must be 1-D, got shape \(1, 2\); use .vindex"),
        (np.zeros((1, 5), bool), r"must be 1-D, got shape \(1, 5\)"),
        (["a"], "must hold integers or booleans, got dtype <U1"),
        (None, "np.newaxis"),
        ((slice(None), None), "np.newaxis"),
        ((Ellipsis, 0, Ellipsis), "at most one '...'"),
    ],
)
def test_unsupported_selections_raise_index_errors(selection, match):
    with pytest.raises(IndexError, match=match) as info:
        OrthogonalIndexer(selection, (5,), (2,))
    assert isinstance(info.value, (SelectionError, BoundsCheckError))


def test_a_0d_integer_array_is_an_integer():
    # numpy: a[np.array(1)] is a[1]
    indexer = OrthogonalIndexer(np.array(1), (5,), (2,))
    assert indexer.shape == () and indexer.is_scalar


def test_max_arrays():
    two = ([0, 1], np.array([1, 2]))
    with pytest.raises(SelectionError, match=r"2 index arrays where at most 1 may be given; use .oindex \(orthogonal\) or .vindex"):
        OrthogonalIndexer(two, (3, 3), (2, 2), max_arrays=1)
    with pytest.raises(SelectionError, match="2 index arrays where at most 1"):
        OrthogonalIndexer((np.ones(3, bool), [0]), (3, 3), (2, 2), max_arrays=1)
    assert OrthogonalIndexer(two, (3, 3), (2, 2)).shape == (2, 2)
    with pytest.raises(SelectionError, match=r"basic selection takes integers, slices and '...', got list; for index arrays use .oindex"):
        OrthogonalIndexer([0], (3,), (2,), max_arrays=0)
    with pytest.raises(SelectionError, match="for index arrays use"):
        OrthogonalIndexer((0, np.ones(3, bool)), (3, 3), (2, 2), max_arrays=0)
    assert OrthogonalIndexer([0], (3,), (2,), max_arrays=1).shape == (1,)
    assert OrthogonalIndexer(slice(None, None, -1), (3,), (2,), max_arrays=0).shape == (3,)
