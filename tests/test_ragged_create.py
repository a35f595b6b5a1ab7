"""Creating ragged arrays (numcodecs vlen-array) and np.asarray of a RaggedArray (issue #8)."""

from __future__ import annotations

import json

import numcodecs
import numpy as np
import pytest

import zarrpy
from zarrpy import RaggedArray
from zarrpy.errors import CodecError

VECTORS = [np.array([1, 2]), np.array([3]), np.array([], dtype=int), np.array([4, 5, 6]), np.array([7])]
FORMATS = [3, 2]
SERIALIZERS = [
    "numcodecs.vlen-array",
    {"name": "numcodecs.vlen-array"},
    {"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i4"}},
    numcodecs.VLenArray("<i4"),
    {"id": "vlen-array", "dtype": "<i4"},
]


def assert_vectors(got, want, dtype) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, np.ndarray) and g.ndim == 1 and g.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(g, w)


def create(store: dict, zarr_format: int, serializer="numcodecs.vlen-array", dtype="int32", **kwargs):
    return zarrpy.create_array(store, shape=(5,), dtype=dtype, chunks=(2,), serializer=serializer,
                               zarr_format=zarr_format, **kwargs)


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("serializer", SERIALIZERS,
                         ids=["name", "bare-object", "object", "numcodecs", "numcodecs-dict"])
def test_create_write_read(serializer, zarr_format):
    store: dict = {}
    a = create(store, zarr_format, serializer)
    a[...] = VECTORS
    a[4] = np.array([8, 8, 8, 8])
    want = [*VECTORS[:4], np.array([8, 8, 8, 8])]
    for arr in (a, zarrpy.open_array(store, mode="r")):
        out = arr[...]
        assert isinstance(out, RaggedArray) and out.shape == (5,)
        assert_vectors(out.to_list(), want, "int32")
    np.testing.assert_array_equal(a[3], [4, 5, 6])
    assert_vectors(a[1:4].to_list(), want[1:4], "int32")


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_what_is_stored(zarr_format):
    """V3: the variable_length_bytes stand-in and the vlen-array serializer; V2: zarr-python 2's form."""
    store: dict = {}
    create(store, zarr_format, compressors=None)
    if zarr_format == 3:
        doc = json.loads(store["zarr.json"])
        assert doc["data_type"] == "variable_length_bytes"
        assert doc["codecs"] == [{"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i4"}}]
    else:
        doc = json.loads(store[".zarray"])
        assert doc["dtype"] == "|O"
        assert doc["filters"] == [{"id": "vlen-array", "dtype": "<i4"}]
        assert doc["compressor"] is None
        assert doc["fill_value"] is None


def test_v2_chunks_decode_as_zarr_python_2_decodes_them():
    """zarr-python 2 reads a chunk as: compressor.decode, then the filters' decode in reverse.

    (zarr-python 3.4.2 does not read V2 vlen-array arrays at all, whoever wrote them.)
    """
    store: dict = {}
    a = create(store, 2, compressors=[numcodecs.Zstd(level=1)])
    a[...] = VECTORS
    meta = json.loads(store[".zarray"])
    compressor = numcodecs.get_codec(meta["compressor"])
    filters = [numcodecs.get_codec(f) for f in meta["filters"]]
    got = []
    for key in ("0", "1", "2"):
        buf = compressor.decode(store[key])
        for f in reversed(filters):
            buf = f.decode(buf)
        got.extend(buf)
    assert_vectors(got[:5], VECTORS, "int32")
    assert_vectors(got[5:], [np.array([], "i4")], "int32")  # the edge chunk's padding


def test_v2_array_numcodecs_wrote_reads_and_takes_writes():
    """The reverse direction: chunks made by numcodecs' VLenArray, as zarr-python 2 stores them."""
    codec = numcodecs.VLenArray("<f8")
    zarray = {"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "|O", "fill_value": 0, "order": "C",
              "filters": [{"id": "vlen-array", "dtype": "<f8"}], "compressor": None}
    chunk = np.empty(3, dtype=object)
    chunk[:] = [np.array([0.5]), np.array([], "f8"), np.array([1.5, 2.5])]
    store = {".zarray": json.dumps(zarray).encode(), "0": codec.encode(chunk)}
    a = zarrpy.open_array(store, mode="a")
    assert_vectors(a[...].to_list(), list(chunk), "float64")
    a[1] = np.array([9.0, 9.0])
    assert_vectors(list(codec.decode(store["0"])), [chunk[0], np.array([9.0, 9.0]), chunk[2]], "float64")


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "complex128"])
def test_element_types(dtype, zarr_format):
    store: dict = {}
    a = create(store, zarr_format, dtype=dtype)
    values = [np.array([1, 0, 1], dtype), np.array([], dtype), np.array([0], dtype)]
    a[0:3] = values
    out = zarrpy.open_array(store, mode="r")[...]
    assert out.dtype == np.dtype(dtype)
    assert_vectors(out.to_list(), [*values, np.array([], dtype), np.array([], dtype)], dtype)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_sharded_and_2d(zarr_format):
    store: dict = {}
    extra = {"shards": (2, 4)} if zarr_format == 3 else {}
    a = zarrpy.create_array(store, shape=(2, 4), dtype="uint8", chunks=(1, 2), zarr_format=zarr_format,
                            serializer="numcodecs.vlen-array", **extra)
    a[1, 2] = np.array([1, 2, 3])
    a[0, :2] = [np.array([4]), np.array([5, 6])]
    out = zarrpy.open_array(store, mode="r")[...]
    assert out.shape == (2, 4)
    assert out[1, 2].tolist() == [1, 2, 3]
    assert [v.tolist() for v in out[0].to_list()] == [[4], [5, 6], [], []]


@pytest.mark.parametrize(
    "dtype, serializer, fragment",
    [
        ("int32", {"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i2"}}, "'<i2'"),
        ("float64", numcodecs.VLenArray("<i4"), "'<i4'"),
        ("datetime64[ns]", "numcodecs.vlen-array", "numeric"),
        ("int32", {"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i4", "x": 1}}, "'x'"),
    ],
)
@pytest.mark.parametrize("zarr_format", FORMATS)
def test_bad_ragged_arguments_refused_and_nothing_stored(dtype, serializer, fragment, zarr_format):
    store: dict = {}
    with pytest.raises(CodecError, match=fragment):
        create(store, zarr_format, serializer, dtype=dtype)
    assert store == {}


def test_bad_elements_refused_and_nothing_stored():
    store: dict = {}
    a = create(store, 3)
    a[...] = VECTORS
    before = dict(store)
    with pytest.raises(TypeError):
        a[0:2] = [np.array(["a"]), np.array([1])]
    with pytest.raises(TypeError):
        a[0:2] = [np.array([[1, 2]]), np.array([1])]  # 2-D element
    assert store == before


# -- np.asarray(RaggedArray) -----------------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (1, 5), (5, 1)])
def test_asarray_is_an_object_array_of_vectors(shape):
    r = RaggedArray.from_list(VECTORS, dtype="int16").reshape(shape)
    out = np.asarray(r)
    assert out.dtype == object and out.shape == shape
    assert_vectors(list(out.reshape(-1)), VECTORS, "int16")
    assert np.array(r, dtype=object).shape == shape
    same = np.asarray(RaggedArray.from_list([[1, 2], [3, 4]]))  # equal lengths stay vectors too
    assert same.dtype == object and same.shape == (2,)
    assert same[1].tolist() == [3, 4]


def test_asarray_of_what_an_array_reads():
    store: dict = {}
    a = create(store, 2)
    a[...] = VECTORS
    out = np.asarray(a[...])
    assert out.dtype == object and out.shape == (5,)
    assert_vectors(list(out), VECTORS, "int32")
    np.testing.assert_array_equal(np.asarray(a[1:3])[0], [3])


@pytest.mark.parametrize("dtype", ["int16", "float64", "int64"])
def test_asarray_refuses_a_numeric_dtype(dtype):
    r = RaggedArray.from_list(VECTORS, dtype="int16")
    with pytest.raises(TypeError, match="object"):
        np.asarray(r, dtype=dtype)


def test_asarray_without_a_copy_is_refused():
    r = RaggedArray.from_list(VECTORS)
    with pytest.raises(ValueError, match="copy"):
        np.array(r, copy=False)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_create_with_ragged_data(zarr_format):
    """data= works for ragged arrays: the shape comes from the list, values from the items."""
    store = {}
    r = zarrpy.create_array(store, dtype="int32", serializer="numcodecs.vlen-array",
                            zarr_format=zarr_format, data=[np.arange(3), [], [5, 6, 7, 8]])
    assert r.shape == (3,)
    back = zarrpy.open_array(store)[...]
    assert [list(x) for x in np.asarray(back)] == [[0, 1, 2], [], [5, 6, 7, 8]]


def test_create_with_ragged_data_out_of_range_stores_nothing():
    store = {}
    with pytest.raises(OverflowError):
        zarrpy.create_array(store, dtype="uint8", serializer="numcodecs.vlen-array", data=[[256], [1, 2]])
    assert store == {}
