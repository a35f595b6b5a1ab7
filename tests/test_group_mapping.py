"""Group as a mapping: g[name] = data, del g[name], get, require_array (zarr-python's semantics)."""

import warnings

import numpy as np
import pytest

import zarrpy

zarr = pytest.importorskip("zarr")  # zarr-python: the oracle (a test extra)

FORMATS = [2, 3]


@pytest.fixture(autouse=True)
def _quiet_zarr():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _group(zarr_format, store=None):
    store = {} if store is None else store
    return store, zarrpy.group(store, zarr_format=zarr_format)


def _under(store, name):
    return sorted(k for k in store if k == name or k.startswith(name + "/"))


# -- g[name] = data ----------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", FORMATS)
def test_setitem_creates_an_array(zarr_format):
    s, g = _group(zarr_format)
    data = np.arange(12, dtype="int16").reshape(3, 4)
    g["x"] = data
    a = g["x"]
    assert isinstance(a, zarrpy.Array)
    assert a.zarr_format == zarr_format
    assert a.shape == (3, 4) and a.dtype == np.dtype("int16")
    np.testing.assert_array_equal(a[...], data)
    assert "x" in g and g.keys() == ["x"]
    # zarr-python does the same.
    zg = zarr.group({}, zarr_format=zarr_format)
    zg["x"] = data
    assert zg["x"].shape == a.shape and zg["x"].dtype == a.dtype


def test_setitem_lists_and_zarrpy_arrays(tmp_path):
    g = zarrpy.group(tmp_path / "g")
    g["l"] = [1.5, 2.5]
    np.testing.assert_array_equal(g["l"][...], [1.5, 2.5])
    src = zarrpy.create_array({}, shape=(5,), dtype="uint8", chunks=(2,))
    src[...] = np.arange(5)
    g["copy"] = src
    assert g["copy"].dtype == np.dtype("uint8")
    np.testing.assert_array_equal(g["copy"][...], np.arange(5))
    zg = zarr.open_group(str(tmp_path / "g"), mode="r")
    assert sorted(zg.array_keys()) == ["copy", "l"]
    np.testing.assert_array_equal(zg["copy"][...], np.arange(5))


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_setitem_replaces_an_existing_array(zarr_format):
    s, g = _group(zarr_format)
    g["x"] = np.arange(10)
    g["x"] = np.ones((2, 2), dtype="float32")
    a = g["x"]
    assert a.shape == (2, 2) and a.dtype == np.dtype("float32")
    np.testing.assert_array_equal(a[...], np.ones((2, 2)))
    zg = zarr.group({}, zarr_format=zarr_format)
    zg["x"] = np.arange(10)
    zg["x"] = np.ones((2, 2), dtype="float32")
    assert zg["x"].shape == a.shape and zg["x"].dtype == a.dtype


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_setitem_replaces_a_group_with_everything_in_it(zarr_format):
    s, g = _group(zarr_format)
    sub = g.create_group("x")
    sub["deep"] = np.arange(3)
    g["x2"] = np.arange(2)
    g["x"] = np.arange(4)
    assert isinstance(g["x"], zarrpy.Array)
    assert not any(k.startswith("x/deep") for k in s)
    assert "x/deep" not in g
    np.testing.assert_array_equal(g["x2"][...], np.arange(2))  # the sibling is untouched


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_setitem_nested_path(zarr_format):
    s, g = _group(zarr_format)
    g["a/b"] = np.arange(6).reshape(2, 3)
    assert isinstance(g["a"], zarrpy.Group)
    assert isinstance(g["a/b"], zarrpy.Array)
    assert g["a"].keys() == ["b"]
    np.testing.assert_array_equal(g["a"]["b"][...], np.arange(6).reshape(2, 3))
    if zarr_format == 3:
        assert "a/zarr.json" in s and "a/b/zarr.json" in s
    else:
        assert "a/.zgroup" in s and "a/b/.zarray" in s


def test_setitem_on_read_only_group_raises():
    s, g = _group(3)
    ro = zarrpy.open_group(s, mode="r")
    before = dict(s)
    with pytest.raises(zarrpy.ReadOnlyError):
        ro["x"] = np.arange(3)
    assert s == before


# -- del g[name] -------------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", FORMATS)
def test_delitem_array_removes_every_key(zarr_format):
    s, g = _group(zarr_format)
    a = g.create_array("x", shape=(10,), dtype="int32", chunks=(3,), attributes={"k": 1})
    a[...] = np.arange(10)
    g["x2"] = np.arange(3)
    g["y"] = np.arange(2)
    assert len(_under(s, "x")) >= 5  # metadata, attributes (V2) and 4 chunks
    before = set(s)
    del g["x"]
    assert set(s) == before - set(_under(dict.fromkeys(before), "x"))
    assert _under(s, "x") == []
    assert "x" not in g and g.keys() == ["x2", "y"]
    np.testing.assert_array_equal(g["x2"][...], np.arange(3))


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_delitem_group_removes_its_hierarchy_not_a_prefix_sibling(zarr_format):
    s, g = _group(zarr_format)
    h = g.create_group("h")
    h["y"] = np.arange(4)
    h.create_group("inner")["z"] = np.arange(2)
    h2 = g.create_group("h2")
    h2["w"] = np.arange(3)
    g["hx"] = np.arange(1)
    kept = {k: v for k, v in s.items() if not (k == "h" or k.startswith("h/"))}
    assert len(kept) < len(s)
    del g["h"]
    assert s == kept  # nothing else touched, values included
    assert g.keys() == ["h2", "hx"]
    np.testing.assert_array_equal(g["h2/w"][...], np.arange(3))
    # zarr-python removes the same keys.
    zs = {}
    zg = zarr.group(zs, zarr_format=zarr_format)
    zg.create_group("h").create_array("y", shape=(4,), dtype="int64")[...] = np.arange(4)
    zg.create_group("h2")
    del zg["h"]
    assert not any(k.startswith("h/") for k in zs) and any(k.startswith("h2/") for k in zs)


def test_delitem_nested_path():
    s, g = _group(3)
    g["a/b"] = np.arange(3)
    g["a/c"] = np.arange(3)
    del g["a/b"]
    assert g["a"].keys() == ["c"]
    assert not any(k.startswith("a/b/") for k in s)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_delitem_missing_raises_key_error(zarr_format):
    s, g = _group(zarr_format)
    g["x"] = np.arange(3)
    before = dict(s)
    with pytest.raises(KeyError):
        del g["nope"]
    with pytest.raises(KeyError):
        del g["x/sub"]  # a path below an array
    assert s == before


def test_delitem_on_read_only_group_deletes_nothing(tmp_path):
    g = zarrpy.group(tmp_path / "g")
    g["x"] = np.arange(3)
    g.create_group("sub")["y"] = np.arange(2)
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    ro = zarrpy.open_group(tmp_path / "g", mode="r")
    for name in ("x", "sub", "sub/y"):
        with pytest.raises(zarrpy.ReadOnlyError):
            del ro[name]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == files
    # A member opened through a read-only group is read-only too.
    with pytest.raises(zarrpy.ReadOnlyError):
        del ro["sub"]["y"]
    assert ro.keys() == ["sub", "x"]


# -- get ----------------------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", FORMATS)
def test_get(zarr_format):
    s, g = _group(zarr_format)
    g["x"] = np.arange(3)
    g.create_group("sub")
    assert g.get("missing") is None
    sentinel = object()
    assert g.get("missing", sentinel) is sentinel
    assert g.get("x/deeper", sentinel) is sentinel
    assert isinstance(g.get("x"), zarrpy.Array)
    assert isinstance(g.get("sub"), zarrpy.Group)
    np.testing.assert_array_equal(g.get("x", sentinel)[...], np.arange(3))
    zg = zarr.group({}, zarr_format=zarr_format)
    assert zg.get("missing") is None and zg.get("missing", 5) == 5
    assert g.get("missing", 5) == 5


# -- require_array -------------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", FORMATS)
def test_require_array_returns_existing(zarr_format):
    s, g = _group(zarr_format)
    a = g.create_array("r", shape=(5,), dtype="int16", chunks=(2,))
    a[...] = np.arange(5)
    before = dict(s)
    got = g.require_array("r", shape=(5,), dtype="int16")
    assert isinstance(got, zarrpy.Array) and got.path == "r"
    np.testing.assert_array_equal(got[...], np.arange(5))
    assert g.require_array("r", shape=5).dtype == np.dtype("int16")  # int shape, no dtype
    assert s == before  # nothing rewritten


# (requested shape, requested dtype, exact) against an existing int16 array of shape (5,).
REQUIRE_CASES = [
    ((5,), "int16", False),
    ((5,), "int16", True),
    ((5,), "int32", False),   # int16 casts to int32: accepted
    ((5,), "float64", False),
    (5, "f8", False),
    ((5,), "int32", True),    # exact: rejected
    ((5,), "int8", False),    # int16 does not cast to int8
    ((5,), "uint16", False),
    ((5,), "bool", False),
    ((6,), "int16", False),   # shape
    ((5, 1), "int16", False),
]


@pytest.mark.parametrize("shape, dtype, exact", REQUIRE_CASES)
@pytest.mark.parametrize("zarr_format", FORMATS)
def test_require_array_matches_zarr(zarr_format, shape, dtype, exact):
    zg = zarr.group({}, zarr_format=zarr_format)
    zg.create_array("r", shape=(5,), dtype="int16")
    s, g = _group(zarr_format)
    g.create_array("r", shape=(5,), dtype="int16")
    try:
        expected = zg.require_array("r", shape=shape, dtype=dtype, exact=exact)
    except TypeError:
        expected = TypeError
    if expected is TypeError:
        before = dict(s)
        with pytest.raises(TypeError):
            g.require_array("r", shape=shape, dtype=dtype, exact=exact)
        assert s == before
    else:
        got = g.require_array("r", shape=shape, dtype=dtype, exact=exact)
        assert got.shape == expected.shape and got.dtype == expected.dtype == np.dtype("int16")


def test_require_array_outcomes_are_the_expected_ones():
    # Pin the oracle's answers too, so a change in either side shows.
    s, g = _group(3)
    g.create_array("r", shape=(5,), dtype="int16")
    ok = [(shape, dtype, exact) for shape, dtype, exact in REQUIRE_CASES[:5]]
    bad = [(shape, dtype, exact) for shape, dtype, exact in REQUIRE_CASES[5:]]
    for shape, dtype, exact in ok:
        assert g.require_array("r", shape=shape, dtype=dtype, exact=exact).dtype == np.dtype("int16")
    for shape, dtype, exact in bad:
        with pytest.raises(TypeError):
            g.require_array("r", shape=shape, dtype=dtype, exact=exact)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_require_array_on_a_group_raises_type_error(zarr_format):
    s, g = _group(zarr_format)
    g.create_group("gg")
    with pytest.raises(TypeError):
        g.require_array("gg", shape=(5,), dtype="int16")
    zg = zarr.group({}, zarr_format=zarr_format)
    zg.create_group("gg")
    with pytest.raises(TypeError):
        zg.require_array("gg", shape=(5,), dtype="int16")


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_require_array_creates_when_missing(zarr_format, tmp_path):
    g = zarrpy.group(tmp_path / "g", zarr_format=zarr_format)
    n = g.require_array("new", shape=(3,), dtype="uint8", chunks=(2,), fill_value=4)
    z = zarr.group({}, zarr_format=zarr_format).require_array("new", shape=(3,), dtype="uint8", chunks=(2,),
                                                               fill_value=4)
    assert "new" in g and n.zarr_format == zarr_format
    assert (n.shape, n.dtype, n.chunks, n.fill_value) == (z.shape, z.dtype, z.chunks, z.fill_value)
    np.testing.assert_array_equal(n[...], z[...])
    back = zarr.open_array(str(tmp_path / "g" / "new"), mode="r")
    assert back.shape == (3,) and back.chunks == (2,) and back.fill_value == 4
    # Asked again, it is the same array, not a new one.
    n[...] = [1, 2, 3]
    np.testing.assert_array_equal(g.require_array("new", shape=(3,), dtype="uint8")[...], [1, 2, 3])


def test_require_array_variable_length_strings():
    s, g = _group(3)
    g.create_array("t", shape=(2,), dtype=str)
    assert g.require_array("t", shape=(2,), dtype=str).shape == (2,)
    with pytest.raises(TypeError):
        g.require_array("t", shape=(2,), dtype=bytes)
    with pytest.raises(TypeError):
        g.require_array("t", shape=(2,), dtype="int32")


# -- consolidated groups ----------------------------------------------------------------

@pytest.mark.parametrize("zarr_format", FORMATS)
def test_consolidated_group_sees_delitem(zarr_format):
    s, g = _group(zarr_format)
    g["x"] = np.arange(3)
    g["y"] = np.arange(4)
    g.create_group("sub")["z"] = np.arange(2)
    zarrpy.consolidate_metadata(s)
    c = zarrpy.open_consolidated(s)
    assert c.consolidated_metadata is not None
    del c["x"]
    assert c.consolidated_metadata is None  # snapshot dropped: it reads live
    assert "x" not in c and c.keys() == ["sub", "y"]
    with pytest.raises(KeyError):
        c["x"]
    assert c.get("x") is None
    del c["sub"]
    assert "sub/z" not in c and c.keys() == ["y"]
    assert not any(k.startswith("sub/") for k in s)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_consolidated_group_sees_setitem(zarr_format):
    s, g = _group(zarr_format)
    g["x"] = np.arange(3)
    zarrpy.consolidate_metadata(s)
    c = zarrpy.open_consolidated(s)
    c["new"] = np.arange(5)
    c["x"] = np.ones(7)
    assert c.consolidated_metadata is None
    assert c.keys() == ["new", "x"]
    assert c["x"].shape == (7,)
    np.testing.assert_array_equal(c["new"][...], np.arange(5))


def test_consolidated_group_require_array_creates_and_sees_it():
    s, g = _group(3)
    zarrpy.consolidate_metadata(s)
    c = zarrpy.open_consolidated(s)
    a = c.require_array("r", shape=(2,), dtype="int8")
    assert c.consolidated_metadata is None
    assert c["r"] == a and "r" in c


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_delitem_checks_the_live_hierarchy_not_a_stale_snapshot(zarr_format):
    s, g = _group(zarr_format)
    g["x"] = np.arange(3)
    g["gone"] = np.arange(3)
    zarrpy.consolidate_metadata(s)
    # Changed behind the snapshot's back: one member added, one removed.
    zarrpy.create_array(s, name="late", shape=(2,), dtype="int8", zarr_format=zarr_format)
    for key in [k for k in s if k.startswith("gone/")]:
        del s[key]  # removed behind zarrpy's back (a del would rewrite the snapshot)
    c = zarrpy.open_group(s)  # answers from the (stale) snapshot
    assert c.consolidated_metadata is not None and "late" not in c and "gone" in c
    del c["late"]  # exists in the store: deleted, although the snapshot does not list it
    assert not any(k.startswith("late/") for k in s)
    c2 = zarrpy.open_group(s)
    with pytest.raises(KeyError):
        del c2["gone"]  # listed by the snapshot, but not in the store
    assert c2.consolidated_metadata is not None  # a failed delete keeps the snapshot
    with pytest.raises(KeyError):
        del c2[""]
