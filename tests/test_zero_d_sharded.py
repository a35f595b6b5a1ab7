"""0-d sharded arrays (``shape=(), chunks=(), shards=()``) read and write as
numpy 0-d arrays do, for every 0-d selection form and every kind of element
type, and interoperate with zarr-python's 0-d sharded arrays."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import zarrpy
from zarrpy import RaggedArray

STRUCT = np.dtype([("x", "<i4"), ("y", "<f8")])
NESTED = np.dtype([("a", "<u2"), ("b", [("c", "<f4"), ("d", "i1")])])

# dtype, two different values (neither the fill value)
CASES = {
    "uint8": ("uint8", 42, 7),
    "float64": ("float64", 2.5, np.nan),
    "bool": ("bool", True, True),
    "complex128": ("complex128", 1 + 2j, -3j),
    "datetime64": ("datetime64[s]", np.datetime64("2024-01-02T03:04:05", "s"), np.datetime64("1999-12-31", "s")),
    "struct": (STRUCT, (3, 2.5), (-1, 0.25)),
    "nested struct": (NESTED, (1, (0.5, -2)), (9, (1.5, 4))),
    "string": ("string", "héllo", ""),
    "bytes": (bytes, b"\x00ab", b"z"),
}


def reference(dtype, value) -> np.ndarray:
    out = np.empty((), dtype=np.dtypes.StringDType() if dtype == "string" else (object if dtype is bytes else dtype))
    out[()] = value
    return out


def assert_same(got, want) -> None:
    """Equal values of one type and shape (NaN equals NaN)."""
    assert type(got) is type(want), (type(got), type(want))
    assert np.shape(got) == np.shape(want)
    if isinstance(want, (np.ndarray, np.generic)) and want.dtype.kind in "fc":
        np.testing.assert_array_equal(got, want)  # NaN-aware
    else:
        assert np.asarray(got).tolist() == np.asarray(want).tolist()


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_0d_form_reads_and_writes_like_numpy(name):
    dtype, first, second = CASES[name]
    store: dict = {}
    a = zarrpy.create_array(store, shape=(), dtype=dtype, chunks=(), shards=())
    plain = zarrpy.create_array({}, shape=(), dtype=dtype, chunks=())  # the unsharded oracle
    assert a.shards == () and a.chunks == ()
    assert_same(a[...], plain[...])  # the fill value, nothing stored
    assert_same(a[()], plain[()])
    for write, value in [("ellipsis", first), ("empty tuple", second), ("ellipsis", second), ("empty tuple", first)]:
        key = Ellipsis if write == "ellipsis" else ()
        a[key] = value
        plain[key] = value
        want = reference(dtype, value)
        for arr in (a, zarrpy.open_array(store)):
            assert_same(arr[...], want[...])
            assert_same(arr[()], want[()])
            assert_same(arr.read(), want[...])
            assert_same(arr.get_basic_selection(), want[...])
            assert_same(arr.oindex[()], plain.oindex[()])
            assert_same(arr.vindex[()], plain.vindex[()])
        assert_same(a[...], plain[...])
    assert list(store) == ["zarr.json", "c"]


@pytest.mark.parametrize("name", ["uint8", "struct", "float64"])
def test_read_into_out_and_chunks(name):
    dtype, first, _ = CASES[name]
    a = zarrpy.create_array({}, shape=(), dtype=dtype, chunks=(), shards=())
    a[...] = first
    out = np.zeros((), dtype=a.dtype)
    assert a.read(out=out) is out
    assert_same(out[()], reference(dtype, first)[()])
    assert_same(a.read_chunk(())[()], reference(dtype, first)[()])
    a.write_chunks({(): first})
    assert_same(a[()], reference(dtype, first)[()])


def test_writing_the_fill_value_deletes_the_shard():
    store: dict = {}
    a = zarrpy.create_array(store, shape=(), dtype="uint8", chunks=(), shards=(), fill_value=3)
    a[...] = 42
    assert "c" in store
    a[()] = 3
    assert "c" not in store
    assert a[()] == 3 and a[...].shape == ()


@pytest.mark.parametrize("shards", [None, ()])
def test_0d_ragged_arrays(shards):
    a = zarrpy.create_array({}, shape=(), dtype="int32", chunks=(), shards=shards,
                            serializer="numcodecs.vlen-array")
    assert a[()].tolist() == [] and isinstance(a[...], RaggedArray) and a[...].shape == ()
    a[...] = [1, 2]
    assert a[()].tolist() == [1, 2] and a[...].tolist() == [1, 2]
    a[()] = np.array([3])
    assert a.read().tolist() == [3]


def test_a_write_refused_stores_nothing():
    store: dict = {}
    a = zarrpy.create_array(store, shape=(), dtype="uint8", chunks=(), shards=())
    a[...] = 1
    before = dict(store)
    with pytest.raises((TypeError, ValueError, OverflowError)):
        a[...] = 256
    with pytest.raises((TypeError, ValueError, IndexError)):
        a[...] = [1, 2]
    assert store == before


# -- zarr-python is the oracle -------------------------------------------------

zarr = pytest.importorskip("zarr")

INTEROP = {
    "uint8": ("uint8", "uint8", 42),
    "float64": ("float64", "float64", -0.5),
    "complex128": ("complex128", "complex128", 1 + 2j),
    "struct": (STRUCT, STRUCT, (3, 2.5)),
    "string": ("string", str, "héllo"),
}


# zarr-python 3.1 (the newest for Python 3.11) has no struct type and fails
# writing 0-d sharded arrays (an IndexError in its shard index); 3.4 does both.
OLD_ORACLE = tuple(int(p) for p in zarr.__version__.split(".")[:2]) < (3, 4)
ORACLE_LACKS = "this zarr-python (older than 3.4, the newest for Python 3.11) "


@pytest.mark.parametrize("name", sorted(INTEROP))
def test_zarr_python_reads_what_zarrpy_writes(tmp_path, name):
    if OLD_ORACLE and name == "struct":
        pytest.skip(ORACLE_LACKS + "has no 'struct' data type")
    ours, theirs, value = INTEROP[name]
    path = str(tmp_path / "x.zarr")
    a = zarrpy.create_array(path, shape=(), dtype=ours, chunks=(), shards=())
    a[...] = value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(path, mode="r")
        assert z.shards == () and z.shape == ()
        assert_same(z[()], a[()])
        got = np.asarray(z[...])
    assert got.shape == () and got.tolist() == np.asarray(a[...]).tolist()


@pytest.mark.skipif(OLD_ORACLE, reason=ORACLE_LACKS + "cannot write 0-d sharded arrays")
@pytest.mark.parametrize("name", sorted(INTEROP))
def test_zarrpy_reads_and_rewrites_what_zarr_python_writes(tmp_path, name):
    ours, theirs, value = INTEROP[name]
    path = str(tmp_path / "x.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(path, shape=(), dtype=theirs, chunks=(), shards=(),
                              fill_value="" if theirs is str else None)
        z[...] = value
        want = z[()]
    a = zarrpy.open_array(path, mode="r+")
    assert a.shards == ()
    assert_same(a[()], want)
    assert np.asarray(a[...]).tolist() == np.asarray(want).tolist()
    a[()] = want  # rewritten by zarrpy, read back by zarr-python
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(zarr.open_array(path, mode="r")[()], want)


def test_requests_of_a_0d_shard():
    """A 0-d shard is one inner chunk: a write covers it whole (one set, no
    read first), a read is one request, and writing the fill value deletes it."""
    from tests.test_array_sharding import CountingStore

    store = CountingStore()
    a = zarrpy.create_array(store, shape=(), dtype="uint8", chunks=(), shards=())
    store.reset()
    a[...] = 42
    assert store.requests == 0 and dict(store.sets) == {"c": 1}
    store.reset()
    assert a[()] == 42
    assert store.requests == 1 and not store.sets
    store.reset()
    a[()] = 0
    assert store.requests == 0 and dict(store.deletes) == {"c": 1}
