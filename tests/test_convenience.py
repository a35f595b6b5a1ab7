"""zarr-python's convenience API (zarrpy/_convenience.py), checked against zarr-python itself.

Each test runs the same call on zarr-python (the oracle) and on zarrpy and
compares shapes, dtypes, fill values, chunk shapes and values; for arrays
zarrpy writes to a directory, zarr-python must open them and read the same.
"""

import json
import math
import warnings

import numpy as np
import pytest

import zarrpy
import zarrpy.api._convenience as convenience
from zarrpy.stores.memory import MemoryStore

zarr = pytest.importorskip("zarr")  # zarr-python: the oracle (a test extra)

GZIP = {"name": "gzip", "configuration": {"level": 3}}


@pytest.fixture(autouse=True)
def _quiet_zarr():
    # zarr-python warns about its unstable fixed-length string types; irrelevant here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _assert_like(a, z, *, fill=True):
    """zarrpy array ``a`` has zarr-python array ``z``'s shape, dtype, fill value and chunks.

    ``fill=False`` where zarr-python versions disagree: ``from_array`` keeps
    the source's fill value in zarr-python 3.4, not in 3.1 (the newest on
    Python 3.11); those tests check zarrpy's fill value against the source.
    """
    assert a.shape == z.shape
    assert a.dtype == z.dtype
    assert a.chunks == z.chunks
    if fill:
        assert a.fill_value == z.fill_value
    np.testing.assert_array_equal(a[...], z[...])


def _zarr_reads(path, a):
    """zarr-python opens what zarrpy wrote at ``path`` and sees the same array."""
    z = zarr.open_array(path, mode="r")
    assert z.shape == a.shape
    assert z.chunks == a.chunks
    assert z.dtype == a.dtype
    assert z.fill_value == a.fill_value
    np.testing.assert_array_equal(z[...], a[...])
    return z


def test_array_and_group_are_callables_and_modules_are_private():
    import zarrpy.api._array
    import zarrpy.api._group

    for name in ("array", "group", "create", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
                 "full_like", "empty_like", "from_array", "open_consolidated"):
        f = getattr(zarrpy, name)
        assert callable(f) and not isinstance(f, type(zarrpy)), name
        assert name in zarrpy.__all__
    assert zarrpy.Array is zarrpy.api._array.Array
    assert zarrpy.Group is zarrpy.api._group.Group
    assert isinstance(zarrpy.array([1, 2]), zarrpy.Array)
    assert isinstance(zarrpy.group(), zarrpy.Group)


# -- zeros / ones / full / empty ---------------------------------------------

@pytest.mark.parametrize("func, fill", [("zeros", 0), ("ones", 1), ("empty", 0)])
def test_constructors_default_dtype_store_and_fill(func, fill):
    a = getattr(zarrpy, func)((30, 7))
    z = getattr(zarr, func)((30, 7))
    assert a.dtype == z.dtype == np.dtype("float64")
    assert isinstance(a.store, MemoryStore)
    assert a.zarr_format == 3 and a.path == ""
    assert a.fill_value == z.fill_value == fill
    np.testing.assert_array_equal(a[...], np.full((30, 7), fill, dtype="float64"))
    # Nothing but metadata is stored until written.
    assert list(a.store.list_prefix("")) == ["zarr.json"]


@pytest.mark.parametrize("func", ["zeros", "ones", "empty"])
def test_constructors_auto_chunks_cover_the_array_and_stay_small(func):
    a = getattr(zarrpy, func)((1000, 1000))
    assert a.shape == (1000, 1000) and a.dtype == np.dtype("float64")
    assert all(1 <= c <= s for c, s in zip(a.chunks, a.shape))
    assert math.prod(a.chunks) * 8 <= 1 << 20
    assert a.chunks != a.shape  # 8 MB of float64 is split
    # The same auto chunks as create_array gives.
    assert a.chunks == zarrpy.create_array({}, shape=(1000, 1000), dtype="float64").chunks


@pytest.mark.parametrize("func", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape, chunks", [(10, 3), ((10,), (3,)), ((9, 8), (4, 3)), ((5, 6, 7), 2)])
def test_constructors_given_chunks_and_dtype_match_zarr(func, shape, chunks):
    a = getattr(zarrpy, func)(shape, dtype="int16", chunks=chunks)
    z = getattr(zarr, func)(shape, dtype="int16", chunks=chunks)
    _assert_like(a, z)


@pytest.mark.parametrize("fill_value, dtype", [(3.5, None), (7, "int16"), (-1, "int8"), (True, "bool"),
                                               (np.nan, "float32")])
def test_full_matches_zarr(fill_value, dtype):
    kwargs = {} if dtype is None else {"dtype": dtype}
    a = zarrpy.full((6, 5), fill_value, chunks=(4, 2), **kwargs)
    z = zarr.full((6, 5), fill_value, chunks=(4, 2), **kwargs)
    assert a.shape == z.shape and a.dtype == z.dtype and a.chunks == z.chunks
    np.testing.assert_array_equal(a[...], z[...])
    np.testing.assert_array_equal(a.fill_value, z.fill_value)


def test_constructors_path_and_store_directory(tmp_path):
    store = tmp_path / "data.zarr"
    a = zarrpy.ones((8, 6), dtype="uint8", chunks=(3, 4), store=store, path="deep/x")
    assert a.path == "deep/x"
    assert (store / "deep" / "x" / "zarr.json").is_file()
    a[1:4, 2:5] = 9
    z = _zarr_reads(str(store / "deep" / "x"), a)
    assert z.fill_value == 1
    expected = np.ones((8, 6), dtype="uint8")
    expected[1:4, 2:5] = 9
    np.testing.assert_array_equal(z[...], expected)
    # name= is the same as path=; both at once is an error.
    b = zarrpy.zeros(4, store=store, name="other")
    assert b.path == "other"
    with pytest.raises(TypeError):
        zarrpy.zeros(4, store=store, path="p", name="n")


def test_constructors_zarr_format_2_match_zarr(tmp_path):
    a = zarrpy.full((10, 3), 5, dtype="<i4", chunks=(4, 2), store=tmp_path / "a", zarr_format=2)
    z = zarr.full((10, 3), 5, dtype="<i4", chunks=(4, 2), store=str(tmp_path / "z"), zarr_format=2)
    assert a.zarr_format == 2
    assert (tmp_path / "a" / ".zarray").is_file() and not (tmp_path / "a" / "zarr.json").exists()
    _assert_like(a, z)
    ours = json.loads((tmp_path / "a" / ".zarray").read_text())
    theirs = json.loads((tmp_path / "z" / ".zarray").read_text())
    for key in ("shape", "chunks", "dtype", "fill_value", "order", "zarr_format"):
        assert ours[key] == theirs[key], key
    a[...] = np.arange(30).reshape(10, 3)
    z2 = zarr.open_array(str(tmp_path / "a"), mode="r")
    assert z2.metadata.zarr_format == 2
    np.testing.assert_array_equal(z2[...], np.arange(30).reshape(10, 3))


# -- *_like ---------------------------------------------------------------------

@pytest.mark.parametrize("func, fill", [("zeros_like", 0), ("ones_like", 1), ("empty_like", 0)])
@pytest.mark.parametrize("dtype", ["int16", "float32", "uint8", "bool"])
def test_like_numpy_matches_zarr(func, fill, dtype):
    x = np.arange(12).reshape(3, 4).astype(dtype)
    a = getattr(zarrpy, func)(x)
    z = getattr(zarr, func)(x)
    _assert_like(a, z)
    assert a.dtype == x.dtype and a.shape == x.shape
    np.testing.assert_array_equal(a[...], np.full(x.shape, fill, dtype=dtype))


def test_full_like_numpy_needs_a_fill_value():
    x = np.arange(6, dtype="int16").reshape(2, 3)
    a = zarrpy.full_like(x, fill_value=5)
    z = zarr.full_like(x, fill_value=5)
    _assert_like(a, z)
    with pytest.raises(TypeError):
        zarrpy.full_like(x)  # a numpy array has no fill value to inherit


def test_like_overrides_win():
    x = np.zeros((6, 4), dtype="int16")
    a = zarrpy.zeros_like(x, dtype="float32", chunks=(2, 2), shape=(3, 3))
    assert (a.shape, a.dtype, a.chunks) == ((3, 3), np.dtype("float32"), (2, 2))


@pytest.fixture
def sharded_source():
    src = zarrpy.create_array(
        {}, shape=(20, 30), dtype="int32", chunks=(4, 5), shards=(8, 10), fill_value=-1,
        compressors=[GZIP], attributes={"a": 1}, dimension_names=["y", "x"],
    )
    src[...] = np.arange(600, dtype="int32").reshape(20, 30)
    return src


@pytest.mark.parametrize("func, fill", [("zeros_like", 0), ("ones_like", 1), ("empty_like", -1)])
def test_like_zarrpy_array_inherits_codecs_and_shards(sharded_source, func, fill):
    src = sharded_source
    a = getattr(zarrpy, func)(src)
    assert a.shape == src.shape and a.dtype == src.dtype
    assert a.chunks == (4, 5) and a.shards == (8, 10)
    assert [c.to_json() for c in a.compressors] == [c.to_json() for c in src.compressors]
    assert a.serializer.to_json() == src.serializer.to_json()
    assert a.fill_value == fill  # empty_like keeps the source's fill value, zeros/ones set their own
    np.testing.assert_array_equal(a[...], np.full(src.shape, fill, dtype="int32"))
    # Data is not copied.
    assert not any(k.startswith("c/") for k in a.store.list_prefix(""))


def test_full_like_zarrpy_array_inherits_fill_value(sharded_source):
    a = zarrpy.full_like(sharded_source)
    assert a.fill_value == -1
    np.testing.assert_array_equal(a[...], np.full((20, 30), -1, dtype="int32"))
    b = zarrpy.full_like(sharded_source, fill_value=9)
    assert b.fill_value == 9 and b.shards == (8, 10)
    np.testing.assert_array_equal(b[:2, :2], np.full((2, 2), 9))


def test_like_zarr_format_switch_drops_codecs(sharded_source):
    a = zarrpy.zeros_like(sharded_source, zarr_format=2)
    assert a.zarr_format == 2
    assert a.shards is None
    assert a.chunks == (4, 5)  # the inner chunks
    assert a.shape == (20, 30) and a.dtype == np.dtype("int32")
    assert [c.to_json() for c in a.compressors] != [GZIP]  # the default, not the source's gzip
    assert a.compressors == zarrpy.create_array({}, shape=(2,), dtype="int32", zarr_format=2).compressors
    assert a.fill_value == 0

    src2 = zarrpy.create_array({}, shape=(7, 9), dtype="<u2", chunks=(3, 4), fill_value=5, zarr_format=2,
                               order="F", compressors=[GZIP])
    b = zarrpy.empty_like(src2, zarr_format=3)
    assert b.zarr_format == 3 and b.chunks == (3, 4) and b.fill_value == 5
    assert not b.filters  # no transpose carried over from order="F"
    assert [c.to_json() for c in b.compressors] != [GZIP]
    c = zarrpy.empty_like(src2)  # same format: codecs and memory order kept
    assert c.zarr_format == 2 and c.metadata.order == "F"
    assert [x.to_json() for x in c.compressors] == [GZIP]


@pytest.mark.parametrize("func", ["zeros_like", "ones_like", "empty_like"])
def test_like_zarr_python_array_by_duck_typing(func):
    z = zarr.create_array({}, shape=(9, 10), dtype="uint16", chunks=(4, 3), fill_value=7)
    a = getattr(zarrpy, func)(z)
    zz = getattr(zarr, func)(z)
    assert a.shape == zz.shape == (9, 10)
    assert a.dtype == zz.dtype == np.dtype("uint16")
    assert a.chunks == zz.chunks == (4, 3)
    if func != "empty_like":
        assert a.fill_value == zz.fill_value
        np.testing.assert_array_equal(a[...], zz[...])
    else:
        assert a.fill_value == 0  # only shape, chunks and dtype come from a foreign array


# -- array -------------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    np.arange(10, dtype="uint16"),
    [1, 2, 3],
    [[1.5, 2.0], [3.0, 4.0]],
    np.arange(24, dtype="int8").reshape(2, 3, 4),
    np.array([True, False, True]),
    np.linspace(0, 1, 7, dtype="float32"),
])
def test_array_numeric_matches_zarr(data):
    a = zarrpy.array(data)
    z = zarr.array(data)
    _assert_like(a, z)
    np.testing.assert_array_equal(a[...], np.asarray(data))


def test_array_with_chunks_dtype_and_directory(tmp_path):
    data = np.arange(35, dtype="int64").reshape(5, 7)
    a = zarrpy.array(data, chunks=(2, 3), dtype="int32", store=tmp_path / "s", path="p", fill_value=-3)
    z = zarr.array(data, chunks=(2, 3), dtype="int32", fill_value=-3)
    _assert_like(a, z)
    assert a.path == "p"
    _zarr_reads(str(tmp_path / "s" / "p"), a)


@pytest.mark.parametrize("data", [["a", "bc", "déf"], np.array(["x", "yy"]), [["a", "b"], ["cc", ""]]])
def test_array_strings(data, tmp_path):
    a = zarrpy.array(data, store=tmp_path / "s")
    z = zarr.array(data)
    assert a.shape == z.shape
    assert a.dtype.kind in "OT"  # variable-length text
    assert [str(v) for v in np.asarray(a[...]).ravel()] == [str(v) for v in np.asarray(z[...]).ravel()]
    back = zarr.open_array(str(tmp_path / "s"), mode="r")
    assert [str(v) for v in np.asarray(back[...]).ravel()] == [str(v) for v in np.asarray(data).ravel()]


@pytest.mark.parametrize("data", [[b"x", b"yz", b""], np.array([b"a", b"bb"])])
def test_array_bytes(data):
    a = zarrpy.array(data)
    z = zarr.array(data)
    assert a.shape == z.shape
    assert [bytes(v) for v in np.asarray(a[...]).ravel()] == [bytes(v) for v in np.asarray(z[...]).ravel()]
    assert a.fill_value == b""


def test_array_of_a_zarrpy_array_copies_its_settings(sharded_source, tmp_path):
    a = zarrpy.array(sharded_source, store=tmp_path / "copy", path="c")
    assert a.path == "c"
    assert (a.chunks, a.shards, a.fill_value) == ((4, 5), (8, 10), -1)
    assert [c.to_json() for c in a.compressors] == [GZIP]
    assert a.attrs.asdict() == {"a": 1}
    assert a.dimension_names == ("y", "x")
    np.testing.assert_array_equal(a[...], sharded_source[...])
    z = zarr.open_array(str(tmp_path / "copy" / "c"), mode="r")
    assert z.shards == (8, 10) and z.chunks == (4, 5)
    np.testing.assert_array_equal(z[...], sharded_source[...])
    # In memory by default, independent of the source.
    b = zarrpy.array(sharded_source)
    b[0, 0] = 12345
    assert sharded_source[0, 0] == 0


# -- from_array -----------------------------------------------------------------

def _zarr_twin(zarrpy_source):
    """The zarr-python array built with the same settings and data as the fixture."""
    zs = zarr.create_array(
        {}, shape=(20, 30), dtype="int32", chunks=(4, 5), shards=(8, 10), fill_value=-1,
        compressors=[zarr.codecs.GzipCodec(level=3)], attributes={"a": 1}, dimension_names=["y", "x"],
    )
    zs[...] = zarrpy_source[...]
    return zs


def test_from_array_keep_matches_zarr(sharded_source, tmp_path):
    a = zarrpy.from_array(tmp_path / "k", data=sharded_source)
    zk = zarr.from_array({}, data=_zarr_twin(sharded_source))
    _assert_like(a, zk, fill=False)
    assert a.fill_value == sharded_source.fill_value == -1
    assert a.shards == zk.shards == (8, 10)
    assert a.attrs.asdict() == {"a": 1}  # zarr-python 3.4 keeps them too; 3.1 does not
    assert a.dimension_names == tuple(zk.metadata.dimension_names) == ("y", "x")
    assert [c.to_json() for c in a.compressors] == [GZIP]
    z = _zarr_reads(str(tmp_path / "k"), a)
    assert z.shards == (8, 10)
    assert [c.to_dict() for c in z.compressors] == [c.to_dict() for c in zk.compressors]
    assert dict(z.attrs) == {"a": 1}


def test_from_array_overrides_match_zarr(sharded_source):
    kw = dict(chunks=(5, 5), shards=None, compressors=None, fill_value=3, attributes={"b": 2})
    a = zarrpy.from_array({}, data=sharded_source, **kw)
    zk = zarr.from_array({}, data=_zarr_twin(sharded_source), **kw)
    _assert_like(a, zk)
    assert a.shards is zk.shards is None
    assert list(a.compressors) == [] and list(zk.compressors) == []
    assert a.attrs.asdict() == dict(zk.attrs) == {"b": 2}


def test_from_array_numpy_matches_zarr(tmp_path):
    x = np.arange(24, dtype="f4").reshape(4, 6)
    a = zarrpy.from_array(tmp_path / "n", data=x)
    zk = zarr.from_array({}, data=x)
    _assert_like(a, zk)
    _zarr_reads(str(tmp_path / "n"), a)
    b = zarrpy.from_array({}, data=x, chunks=(2, 3), zarr_format=2)
    zb = zarr.from_array({}, data=x, chunks=(2, 3), zarr_format=2)
    assert b.zarr_format == 2
    _assert_like(b, zb)


def test_from_array_v3_to_v2(sharded_source, tmp_path):
    a = zarrpy.from_array(tmp_path / "v2", data=sharded_source, zarr_format=2)
    assert a.zarr_format == 2
    assert a.shards is None and a.chunks == (4, 5)  # shards dropped, inner chunks kept
    assert a.fill_value == -1 and a.attrs.asdict() == {"a": 1}
    np.testing.assert_array_equal(a[...], sharded_source[...])
    z = zarr.open_array(str(tmp_path / "v2"), mode="r")
    assert z.metadata.zarr_format == 2 and z.chunks == (4, 5) and z.fill_value == -1
    np.testing.assert_array_equal(z[...], sharded_source[...])
    # zarr-python does the same for an unsharded source.
    zs = zarr.create_array({}, shape=(20, 30), dtype="int32", chunks=(4, 5), fill_value=-1)
    zs[...] = sharded_source[...]
    _assert_like(a, zarr.from_array({}, data=zs, zarr_format=2), fill=False)


def test_from_array_v2_to_v3_and_v2_to_v2(tmp_path):
    src = zarrpy.create_array({}, shape=(7, 9), dtype="<u2", chunks=(3, 4), fill_value=5, zarr_format=2,
                              order="F", compressors=[GZIP], attributes={"b": 2})
    data = np.arange(63, dtype="uint16").reshape(7, 9)
    src[...] = data
    a = zarrpy.from_array(tmp_path / "v3", data=src, zarr_format=3)
    assert a.zarr_format == 3 and a.chunks == (3, 4) and a.fill_value == 5
    assert a.attrs.asdict() == {"b": 2}
    assert [c.to_json() for c in a.compressors] != [GZIP]  # format switch: default codecs
    np.testing.assert_array_equal(a[...], data)
    z = _zarr_reads(str(tmp_path / "v3"), a)
    assert z.metadata.zarr_format == 3

    s = {}
    b = zarrpy.from_array(s, data=src)
    assert b.zarr_format == 2 and b.metadata.order == "F"
    assert [c.to_json() for c in b.compressors] == [GZIP]
    stored = json.loads(s[".zarray"])
    assert stored["order"] == "F" and stored["filters"] is None and stored["compressor"]["id"] == "gzip"
    np.testing.assert_array_equal(b[...], data)
    # The copy's chunks are byte for byte the source's (same settings).
    assert {k: v for k, v in s.items() if not k.startswith(".")} == {
        k: src.store.get(k) for k in src.store.list_prefix("") if not k.startswith(".")}


def test_from_array_write_data_false_stores_only_metadata(sharded_source):
    s = {}
    a = zarrpy.from_array(s, data=sharded_source, write_data=False)
    assert sorted(s) == ["zarr.json"]
    assert a.shards == (8, 10)
    np.testing.assert_array_equal(a[...], np.full((20, 30), -1, dtype="int32"))
    s2 = {}
    zarrpy.from_array(s2, data=np.arange(10), write_data=False, zarr_format=2)
    assert sorted(s2) == [".zarray", ".zattrs"]


def test_from_array_existing_node_needs_overwrite(sharded_source):
    s = {}
    zarrpy.from_array(s, data=np.arange(3))
    with pytest.raises(zarrpy.NodeExistsError):
        zarrpy.from_array(s, data=sharded_source)
    a = zarrpy.from_array(s, data=sharded_source, overwrite=True)
    np.testing.assert_array_equal(a[...], sharded_source[...])


@pytest.mark.parametrize("shards", [None, (8, 6)])
def test_from_array_copies_in_steps(monkeypatch, shards):
    monkeypatch.setattr(convenience, "_COPY_STEP_NBYTES", 256)
    src = zarrpy.create_array({}, shape=(37, 23), dtype="int64", chunks=(4, 3), shards=shards, fill_value=-1)
    data = np.arange(37 * 23, dtype="int64").reshape(37, 23)
    src[...] = data

    seen = []
    real_getitem = zarrpy.Array.__getitem__

    def spy(self, selection):
        if self is src:
            seen.append(selection)
        return real_getitem(self, selection)

    monkeypatch.setattr(zarrpy.Array, "__getitem__", spy)
    out = zarrpy.from_array({}, data=src)
    monkeypatch.undo()

    np.testing.assert_array_equal(out[...], data)
    assert len(seen) > 1  # more than one step
    covered = np.zeros(data.shape, dtype=int)
    stored = shards or (4, 3)
    for region in seen:
        assert all(isinstance(r, slice) for r in region)
        # Aligned to stored chunks (or the array's end); each within the budget or one stored chunk.
        for r, c, s in zip(region, stored, data.shape):
            assert r.start % c == 0 and (r.stop % c == 0 or r.stop == s)
        n = math.prod(r.stop - r.start for r in region)
        assert n * 8 <= 256 or n <= math.prod(stored)
        covered[region] += 1
    assert (covered == 1).all()  # every element copied exactly once


def test_from_array_copy_steps_over_a_zarr_python_source(monkeypatch):
    monkeypatch.setattr(convenience, "_COPY_STEP_NBYTES", 128)
    z = zarr.create_array({}, shape=(11, 13), dtype="int16", chunks=(3, 4))
    data = np.arange(143, dtype="int16").reshape(11, 13)
    z[...] = data
    out = zarrpy.from_array({}, data=z, chunks=(3, 4))
    assert len(convenience._copy_regions(out)) > 1
    assert out.chunks == (3, 4) and out.dtype == np.dtype("int16")
    np.testing.assert_array_equal(out[...], data)


# -- create ------------------------------------------------------------------------

def test_create_with_codecs_chain_matches_zarr(tmp_path):
    chain = [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 2}}]
    a = zarrpy.create((10,), dtype="i4", chunks=(4,), codecs=chain, store=tmp_path / "c")
    z = zarr.create((10,), dtype="i4", chunks=(4,), codecs=chain)
    _assert_like(a, z)
    assert a.serializer.to_json() == {"name": "bytes", "configuration": {"endian": "big"}}
    assert [c.to_json() for c in a.compressors] == [{"name": "gzip", "configuration": {"level": 2}}]
    assert not a.filters
    a[...] = np.arange(10)
    back = zarr.open_array(str(tmp_path / "c"), mode="r")
    assert back.serializer.to_dict() == z.serializer.to_dict()
    np.testing.assert_array_equal(back[...], np.arange(10))


def test_create_with_codecs_filters_split():
    chain = [{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes"}]
    a = zarrpy.create((3, 4), dtype="u1", codecs=chain)
    assert [c.to_json()["name"] for c in a.filters] == ["transpose"]
    assert not a.compressors
    a[...] = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(a[...], np.arange(12).reshape(3, 4))


def test_create_codecs_errors():
    with pytest.raises(TypeError):  # no serializer
        zarrpy.create((3,), codecs=[{"name": "gzip", "configuration": {"level": 1}}])
    with pytest.raises(TypeError):  # two serializers
        zarrpy.create((3,), codecs=[{"name": "bytes"}, {"name": "bytes"}])
    with pytest.raises(TypeError):  # a whole chain plus compressors
        zarrpy.create((3,), codecs=[{"name": "bytes"}], compressors=None)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_create_compressor_singular_is_compressors(zarr_format):
    a = zarrpy.create((10,), dtype="i4", compressor=GZIP, zarr_format=zarr_format)
    b = zarrpy.create((10,), dtype="i4", compressors=[GZIP], zarr_format=zarr_format)
    assert [c.to_json() for c in a.compressors] == [c.to_json() for c in b.compressors] == [GZIP]
    none = zarrpy.create((10,), dtype="i4", compressor=None, zarr_format=zarr_format)
    assert list(none.compressors) == []


def test_create_compressor_v2_matches_zarr(tmp_path):
    import numcodecs
    z = zarr.create((10,), dtype="i4", chunks=(5,), compressor=numcodecs.GZip(3), zarr_format=2)
    a = zarrpy.create((10,), dtype="i4", chunks=(5,), compressor=GZIP, zarr_format=2, store=tmp_path / "v2")
    _assert_like(a, z)
    stored = json.loads((tmp_path / "v2" / ".zarray").read_text())
    assert stored["compressor"] == {"id": "gzip", "level": 3}
    a[...] = np.arange(10)
    back = zarr.open_array(str(tmp_path / "v2"), mode="r")
    assert back.compressors == (numcodecs.GZip(3),)
    np.testing.assert_array_equal(back[...], np.arange(10))


def test_create_compressor_and_compressors_is_an_error():
    with pytest.raises(TypeError):
        zarrpy.create((10,), compressor=GZIP, compressors=None)
    with pytest.raises(TypeError):
        zarrpy.create((10,), compressor=None, compressors=[GZIP])


def test_create_defaults_match_zarr():
    a = zarrpy.create(12)
    z = zarr.create(12)
    assert a.shape == z.shape == (12,)
    assert a.dtype == z.dtype == np.dtype("float64")
    assert a.fill_value == z.fill_value == 0


# -- group / open_consolidated ---------------------------------------------------

def test_group_creates_then_opens(tmp_path):
    path = tmp_path / "g.zarr"
    g = zarrpy.group(path, attributes={"k": 1})
    assert isinstance(g, zarrpy.Group) and g.zarr_format == 3
    g.create_array("x", shape=(3,), dtype="i1")
    again = zarrpy.group(path)
    assert again.keys() == ["x"] and again.attrs.asdict() == {"k": 1}
    zg = zarr.open_group(str(path), mode="r")
    assert list(zg.array_keys()) == ["x"] and dict(zg.attrs) == {"k": 1}


def test_group_overwrite_replaces():
    s = {}
    g = zarrpy.group(s)
    g["x"] = np.arange(4)
    g.create_group("sub")
    assert len(s) > 1
    g2 = zarrpy.group(s, overwrite=True)
    assert g2.keys() == []
    assert sorted(s) == ["zarr.json"]


def test_group_path_format_and_default_store():
    s = {}
    g = zarrpy.group(s, path="a/b", zarr_format=2, attributes={"q": 1})
    assert g.path == "a/b" and g.zarr_format == 2
    assert "a/b/.zgroup" in s
    assert zarrpy.group(s, path="a/b").attrs.asdict() == {"q": 1}
    m = zarrpy.group()
    assert isinstance(m.store, MemoryStore) and m.keys() == []


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_open_consolidated(tmp_path, zarr_format):
    path = tmp_path / "c.zarr"
    g = zarrpy.group(path, zarr_format=zarr_format)
    g.create_group("sub").create_array("y", shape=(4,), dtype="int8", chunks=(2,))
    with pytest.raises(zarrpy.MetadataError):
        zarrpy.open_consolidated(path)
    zarrpy.consolidate_metadata(path)
    c = zarrpy.open_consolidated(path)
    assert c.consolidated_metadata is not None
    assert sorted(c.consolidated_metadata) == ["sub", "sub/y"]
    assert c["sub/y"].shape == (4,)
    # zarr-python agrees it is consolidated.
    zc = zarr.open_consolidated(str(path))
    assert sorted(k for k, _ in zc.members(max_depth=None)) == ["sub", "sub/y"]


def test_open_consolidated_rejects_use_consolidated_false():
    s = {}
    zarrpy.group(s)
    zarrpy.consolidate_metadata(s)
    for value in (False, None):
        with pytest.raises(TypeError):
            zarrpy.open_consolidated(s, use_consolidated=value)
    with pytest.raises(TypeError):
        zarr.open_consolidated({}, use_consolidated=False)
