"""xarray through zarrpy: ``engine="zarrpy"`` and ``zarrpy.xarray.to_zarrpy``.

The oracle is xarray's own zarr backend over zarr-python: what
``Dataset.to_zarr`` writes, ``engine="zarrpy"`` must read as ``xr.open_zarr``
does, and what ``to_zarrpy`` writes, ``xr.open_zarr`` must read as it reads
``to_zarr``'s output. Laziness is measured with a counting store: a real
zarrpy Store wrapped around the store holding the data, recording each key
(and byte range) read.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import dask
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from xarray.core import indexing

import zarrpy
from zarrpy.errors import MetadataError, NodeExistsError, NodeNotFoundError
from zarrpy.stores import LocalStore, MemoryStore
from zarrpy.stores.abc import Store
from zarrpy.xarray import ZarrpyBackendArray, open_dataset, to_zarrpy

pytestmark = [
    pytest.mark.integration,
    # zarr-python warns that V3 consolidated metadata is not in the spec yet
    pytest.mark.filterwarnings("ignore:Consolidated metadata:UserWarning"),
]


# -- helpers -----------------------------------------------------------------

class CountingStore(Store):
    """A Store over another one that records every read request: a ``get``
    or one batched ``get_partial_values`` call is one request, a list of
    ``(key, byte range or None)``. Writes and listings pass through."""

    whole_read_nbytes = 0  # as a remote store: partial reads are always worth it

    def __init__(self, inner: Store):
        self.inner = inner
        self.requests: list[list[tuple[str, object]]] = []
        self.nbytes = 0

    def get(self, key, byte_range=None):
        value = self.inner.get(key, byte_range)
        self._count([(key, byte_range)], [value])
        return value

    def get_partial_values(self, requests):
        values = self.inner.get_partial_values(requests)
        self._count(list(requests), values)
        return values

    def _count(self, requests, values):
        self.requests.append(requests)
        self.nbytes += sum(len(v) for v in values if v is not None)

    def _set(self, key, value):
        self.inner.set(key, value)

    def _delete(self, key):
        self.inner.delete(key)

    def list_prefix(self, prefix):
        return self.inner.list_prefix(prefix)

    def list_dir(self, prefix):
        return self.inner.list_dir(prefix)

    def getsize(self, key):
        return self.inner.getsize(key)

    @property
    def reads(self) -> list[tuple[str, object]]:
        return [read for request in self.requests for read in request]

    def chunk_reads(self, prefix=""):
        """Keys read under ``prefix`` that are not metadata documents."""
        return [k for k, _ in self.reads if k.startswith(prefix) and not is_document(k)]

    def reset(self):
        self.requests.clear()
        self.nbytes = 0


def is_document(key: str) -> bool:
    return key.rsplit("/", 1)[-1] in ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")


def example_dataset() -> xr.Dataset:
    """Coordinates with attributes, a CF time axis, a masked float variable
    with NaNs, a scale/offset-packed one, strings, integers with a zero."""
    time = pd.date_range("2000-01-01", periods=6, freq="D")
    temp = np.arange(24, dtype="f8").reshape(6, 4)
    temp[1, 2] = temp[4, 0] = np.nan
    packed = np.linspace(0, 10, 24).reshape(6, 4)
    packed[0, 0] = np.nan
    ds = xr.Dataset(
        {
            "temp": (("time", "x"), temp, {"units": "K", "long_name": "temperature"}),
            "packed": (("time", "x"), packed, {"units": "m"}),
            "name": ("x", np.array(["a", "bb", "", "dddd"])),
            "label": ("x", np.array(["p", "qq", "", "s"], dtype=object)),
            "count": ("x", np.array([0, 1, 2, 3], dtype="i4")),
            "flag": ("x", [True, False, True, True]),
        },
        coords={"time": time, "x": ("x", np.arange(4.0), {"units": "m", "axis": "X"})},
        attrs={"title": "test", "n": 3, "levels": [1, 2]},
    )
    ds["packed"].encoding = {"dtype": "int16", "scale_factor": 0.01, "add_offset": 5.0, "_FillValue": -999}
    ds["temp"].encoding = {"_FillValue": -9999.0}
    return ds


def assert_same(got: xr.Dataset, expected: xr.Dataset, *, cf_encoding: bool = True) -> None:
    """``assert_identical`` plus what it lets pass: dtypes, string values
    exactly (it counts NaN equal to "" in object arrays), and the encoding:
    chunks, shards and (``cf_encoding``) the CF keys."""
    got, expected = got.load(), expected.load()
    xr.testing.assert_identical(got, expected)
    cf_keys = ("units", "calendar", "scale_factor", "add_offset", "_FillValue", "dtype") if cf_encoding else ()
    for name, variable in expected.variables.items():
        other = got[name].variable
        assert other.dtype == variable.dtype, name
        assert other.values.tolist() == variable.values.tolist() or variable.dtype.kind in "fcmM", name
        for key in ("chunks", "shards", *cf_keys):
            assert str(other.encoding.get(key)) == str(variable.encoding.get(key)), (name, key)


def zarr_documents(path: Path) -> dict[str, dict]:
    """Every metadata document under ``path``, parsed, by relative key."""
    names = ("zarr.json", ".zarray", ".zattrs", ".zgroup")
    return {str(p.relative_to(path)): json.loads(p.read_text()) for p in sorted(path.rglob("*")) if p.name in names}


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def zarr_format(request):
    return request.param


# -- the engine ----------------------------------------------------------------

def test_the_engine_is_found_through_its_entry_point():
    assert "zarrpy" in xr.backends.list_engines()
    assert type(xr.backends.list_engines()["zarrpy"]).__name__ == "ZarrpyBackendEntrypoint"


def test_reading_what_to_zarr_wrote_equals_open_zarr(tmp_path, zarr_format):
    path = tmp_path / "ds.zarr"
    example_dataset().to_zarr(path, zarr_format=zarr_format)
    got = xr.open_dataset(path, engine="zarrpy")
    assert_same(got, xr.open_zarr(path))
    assert got["temp"].isnull().sum() == 2 and got["packed"].isnull().sum() == 1
    assert got["time"].dtype == np.dtype("datetime64[ns]")
    assert "_ARRAY_DIMENSIONS" not in got["temp"].attrs and "_ARRAY_DIMENSIONS" not in got["temp"].encoding


@pytest.mark.parametrize("kwargs", [
    {"mask_and_scale": False},
    {"decode_times": False},
    {"decode_cf": False},
    {"drop_variables": ["packed", "label"]},
    {"concat_characters": False, "decode_coords": False},
], ids=["no-mask-and-scale", "no-times", "no-cf", "drop-variables", "no-coords"])
def test_decoding_options_act_as_with_open_zarr(tmp_path, zarr_format, kwargs):
    path = tmp_path / "ds.zarr"
    example_dataset().to_zarr(path, zarr_format=zarr_format)
    assert_same(xr.open_dataset(path, engine="zarrpy", **kwargs), xr.open_zarr(path, **kwargs))


def test_use_zarr_fill_value_as_mask_overrides_the_default(tmp_path):
    # (xarray 2026.9's zarr engine takes this argument but does not use it: no oracle here)
    ds = example_dataset()
    ds.to_zarr(tmp_path / "v2.zarr", zarr_format=2)
    ds.to_zarr(tmp_path / "v3.zarr", zarr_format=3)
    v2 = xr.open_dataset(tmp_path / "v2.zarr", engine="zarrpy", use_zarr_fill_value_as_mask=False)
    assert v2["temp"][1, 2] == -9999.0 and v2["packed"][0, 0] == pytest.approx(-999 * 0.01 + 5)
    v3 = xr.open_dataset(tmp_path / "v3.zarr", engine="zarrpy", use_zarr_fill_value_as_mask=True)
    assert np.isnan(v3["count"][0]) and v3["count"][1] == 1  # V3 int fill 0 masks the zero


def test_strings_come_through_as_xarray_keeps_them(tmp_path, zarr_format):
    path = tmp_path / "s.zarr"
    ds = xr.Dataset({"vlen": ("x", np.array(["a", "bb", ""], dtype=object)),
                     "native": ("x", np.array(["a", "bb", "c"], dtype=np.dtypes.StringDType())),
                     "scalar": ((), "one value")}, coords={"x": ["u", "v", "w"]})
    ds.to_zarr(path, zarr_format=zarr_format)
    got = xr.open_dataset(path, engine="zarrpy")
    assert_same(got, xr.open_zarr(path))
    assert got["vlen"].values.tolist() == ["a", "bb", ""]
    assert got["scalar"].values[()] == "one value"


def test_the_group_argument_opens_a_group_inside_the_store(tmp_path, zarr_format):
    path = tmp_path / "groups.zarr"
    ds = example_dataset()
    ds[["temp"]].to_zarr(path, group="a", zarr_format=zarr_format)
    ds[["count"]].to_zarr(path, group="b/c", zarr_format=zarr_format, mode="a")
    for group, names in (("a", {"temp"}), ("b/c", {"count"}), ("/b/c", {"count"})):
        got = xr.open_dataset(path, engine="zarrpy", group=group)
        assert set(got.data_vars) == names
        assert_same(got, xr.open_zarr(path, group=group))


def test_consolidated_metadata_opens_with_one_request(tmp_path, zarr_format):
    path = tmp_path / "ds.zarr"
    example_dataset().to_zarr(path, zarr_format=zarr_format, consolidated=True)
    store = CountingStore(LocalStore(path))
    xr.open_dataset(store, engine="zarrpy", create_default_indexes=False)
    metadata = [r for r in store.requests if any(is_document(key) for key, _ in r)]
    # zarr.json alone; for V2, where it is missing, the V2 documents with .zmetadata in one request
    assert [("zarr.json", None)] == metadata[0] and len(metadata) == (1 if zarr_format == 3 else 2)
    assert zarr_format == 3 or ".zmetadata" in dict(metadata[1])
    # xarray's CF time decoding reads the first and last time to choose a dtype: nothing else is read
    assert set(store.chunk_reads()) == {"time/c/0" if zarr_format == 3 else "time/0"}
    store.reset()
    live = xr.open_dataset(store, engine="zarrpy", consolidated=False)
    assert len([r for r in store.requests if any(is_document(key) for key, _ in r)]) > 1
    assert_same(live, xr.open_zarr(path))


def test_consolidated_true_requires_consolidated_metadata(tmp_path):
    path = tmp_path / "ds.zarr"
    example_dataset().to_zarr(path, consolidated=False)
    with pytest.raises(MetadataError, match="no consolidated metadata"):
        xr.open_dataset(path, engine="zarrpy", consolidated=True)


def test_storage_options_reach_fsspec():
    url = "memory://zarrpy-xarray-test/ds.zarr"
    ds = example_dataset()
    to_zarrpy(ds, url, storage_options={"skip_instance_cache": True})
    got = xr.open_dataset(url, engine="zarrpy", storage_options={"skip_instance_cache": True})
    assert_same(got, xr.open_dataset(url, engine="zarr"))


def test_a_zarrpy_datetime64_array_reads_as_datetimes(tmp_path):
    times = np.array(["2001-01-01T00", "NaT", "2001-01-03T12"], dtype="datetime64[ns]")
    group = zarrpy.open_group(tmp_path / "t.zarr", mode="w")
    group.create_array("t", data=times, dimension_names=["t"])
    got = xr.open_dataset(tmp_path / "t.zarr", engine="zarrpy")
    assert got["t"].dtype == np.dtype("datetime64[ns]")
    np.testing.assert_array_equal(got["t"].values, times)
    assert_same(got, xr.open_zarr(tmp_path / "t.zarr", consolidated=False))


def test_a_migrated_v2_hierarchy_takes_its_dimensions_from_the_attribute(tmp_path):
    path = tmp_path / "m.zarr"
    example_dataset().to_zarr(path, zarr_format=2, consolidated=False)
    zarrpy.migrate_v3(str(path), remove_v2=True)  # V3 arrays without dimension_names
    got = xr.open_dataset(path, engine="zarrpy", use_zarr_fill_value_as_mask=True)
    assert got["temp"].dims == ("time", "x") and "_ARRAY_DIMENSIONS" not in got["temp"].attrs


def test_open_datatree_reads_every_group(tmp_path):
    path = tmp_path / "tree.zarr"
    ds = example_dataset()
    ds[["temp"]].to_zarr(path)
    ds[["count"]].to_zarr(path, group="sub", mode="a")
    tree = xr.open_datatree(path, engine="zarrpy")
    assert set(tree["sub"].data_vars) == {"count"} and "temp" in tree.data_vars
    xr.testing.assert_identical(tree, xr.open_datatree(path, engine="zarr"))


# -- laziness ------------------------------------------------------------------

def _long_dataset(n=100) -> xr.Dataset:
    return xr.Dataset({"v": (("time", "x"), np.arange(n * 3, dtype="f8").reshape(n, 3))},
                      coords={"time": np.arange(n), "x": [1, 2, 3]})


def test_opening_reads_no_chunk_and_a_slice_reads_only_its_chunks(tmp_path, zarr_format):
    path = tmp_path / "lazy.zarr"
    ds = _long_dataset()
    ds.to_zarr(path, zarr_format=zarr_format, encoding={"v": {"chunks": (10, 3)}})
    store = CountingStore(LocalStore(path))
    opened = xr.open_dataset(store, engine="zarrpy", create_default_indexes=False)
    assert store.chunk_reads() == []  # metadata only
    opened = xr.open_dataset(store, engine="zarrpy")  # the default pandas indexes load the coordinates only
    assert store.chunk_reads("v/") == []
    store.reset()
    np.testing.assert_array_equal(opened["v"][0:10].values, ds["v"][0:10].values)
    assert store.chunk_reads() == [zarrpy.open_array(path, path="v").chunk_key((0, 0))]
    store.reset()
    np.testing.assert_array_equal(opened["v"].isel(time=slice(15, 25)).values, ds["v"][15:25].values)
    assert len(store.chunk_reads()) == 2


def test_a_slice_of_a_sharded_array_reads_only_its_inner_chunks(tmp_path):
    path = tmp_path / "sharded.zarr"
    ds = _long_dataset(1000)
    ds["v"].values[:] = np.random.default_rng(0).random(ds["v"].shape)  # incompressible: chunks of 240 bytes
    ds.to_zarr(path, zarr_format=3, encoding={"v": {"chunks": (10, 3), "shards": (500, 3)}})
    store = CountingStore(LocalStore(path))
    opened = xr.open_dataset(store, engine="zarrpy")
    assert store.chunk_reads("v/") == []
    assert opened["v"].encoding["shards"] == (500, 3) and opened["v"].encoding["chunks"] == (10, 3)
    shard_nbytes = len(LocalStore(path).get("v/c/0/0"))
    index_nbytes = 50 * 16 + 4  # 50 inner chunks' (offset, length) and a crc32c
    for selection in ({"time": slice(0, 10)}, {"time": [3, 250, 260]}):
        store.reset()
        np.testing.assert_array_equal(opened["v"].isel(selection).values, ds["v"].isel(selection).values)
        assert {key for key, _ in store.reads} == {"v/c/0/0"}
        assert all(rng is not None for _, rng in store.reads)  # byte ranges, never the whole shard
        assert len(store.requests) == 2  # the shard's index, then the inner chunks in one batch
    # (inner chunks 0, 25 and 26 go out as one range: the store coalesces ranges with gaps under 64 KiB)
    store.reset()
    np.testing.assert_array_equal(opened["v"][5:8].values, ds["v"][5:8].values)
    assert len(store.reads) == 2  # the index and the inner chunk of those rows: 240 bytes
    assert store.nbytes <= index_nbytes + 300 < shard_nbytes / 10


def test_async_loading(tmp_path):
    import asyncio

    ds = _long_dataset(20)
    ds.to_zarr(tmp_path / "a.zarr")
    opened = xr.open_dataset(tmp_path / "a.zarr", engine="zarrpy")
    xr.testing.assert_identical(asyncio.run(opened.load_async()), ds)


@pytest.mark.parametrize("selection", [
    {"time": slice(None, None, -3), "x": 1},
    {"time": [5, 1, 7], "x": [2, 0]},
    {"time": xr.DataArray([1, 8, 3], dims="p"), "x": xr.DataArray([0, 2, 1], dims="p")},
    {"time": xr.DataArray([[1, 8], [3, 4]], dims=("p", "q"))},
    {"time": xr.DataArray([1, 8], dims="p"), "x": slice(1, 3)},
], ids=["basic", "outer", "vectorized", "vectorized-2d", "vectorized-and-slice"])
def test_lazy_selections_equal_numpy(tmp_path, selection):
    path = tmp_path / "sel.zarr"
    ds = _long_dataset(20)
    ds.to_zarr(path, encoding={"v": {"chunks": (4, 2)}})
    opened = xr.open_dataset(path, engine="zarrpy")
    xr.testing.assert_identical(opened["v"].isel(selection).load(), ds["v"].isel(selection))


def test_vectorized_keys_with_slices_put_the_sliced_dimensions_last():
    data = np.arange(60).reshape(3, 4, 5)
    array = zarrpy.create_array({}, data=data, chunks=(2, 2, 2))
    key = indexing.VectorizedIndexer((np.array([0, 2]), slice(1, 3), np.array([4, 0])))
    got = ZarrpyBackendArray(array)[key]
    assert got.shape == (2, 2)
    np.testing.assert_array_equal(got, np.stack([data[0, 1:3, 4], data[2, 1:3, 0]]))


# -- writing -------------------------------------------------------------------

def test_to_zarrpy_writes_what_to_zarr_writes(tmp_path, zarr_format):
    ds = example_dataset()
    ds.to_zarr(tmp_path / "ref.zarr", zarr_format=zarr_format)
    group = to_zarrpy(ds, tmp_path / "ours.zarr", zarr_format=zarr_format)
    assert isinstance(group, zarrpy.Group) and group.zarr_format == zarr_format
    expected = xr.open_zarr(tmp_path / "ref.zarr")
    assert_same(xr.open_zarr(tmp_path / "ours.zarr"), expected)
    assert_same(xr.open_dataset(tmp_path / "ours.zarr", engine="zarrpy"), expected)
    ours, ref = zarr_documents(tmp_path / "ours.zarr"), zarr_documents(tmp_path / "ref.zarr")
    if zarr_format == 2:  # the same documents but for each library's default compressor
        for doc in (*ours.values(), *ref.values()):
            doc.pop("compressor", None)
        for name in ("count", "name", "label"):  # arrays made without a fill value: null, as zarr-python
            assert ours[f"{name}/.zarray"]["fill_value"] is None
    assert ours == ref


def test_to_zarrpy_writes_dask_data_block_by_block(tmp_path):
    events = []

    class RecordingStore(CountingStore):
        def _set(self, key, value):
            if key.startswith("v/") and not is_document(key):
                events.append(("write", key))
            super()._set(key, value)

    def block(x, block_info=None):
        events.append(("compute", block_info[None]["chunk-location"]))
        return x

    ds = _long_dataset(40).chunk({"time": 10})
    ds["v"] = ds["v"].copy(data=ds["v"].data.map_blocks(block, dtype="f8"))
    store = RecordingStore(MemoryStore())
    with dask.config.set(scheduler="synchronous"):
        to_zarrpy(ds, store)
    kinds = [kind for kind, _ in events]
    assert kinds == ["compute", "write"] * 4  # each block is stored before the next is computed
    assert xr.open_dataset(store, engine="zarrpy")["v"].encoding["chunks"] == (10, 3)
    xr.testing.assert_identical(open_dataset(store).load(), ds.load())


def test_dask_chunks_that_straddle_stored_chunks_are_refused(tmp_path):
    ds = _long_dataset(40).chunk({"time": 15})
    with pytest.raises(ValueError, match="do not align"):
        to_zarrpy(ds, tmp_path / "a.zarr", encoding={"v": {"chunks": (10, 3)}})
    with pytest.raises(ValueError, match="shard size 20"):
        to_zarrpy(ds, tmp_path / "b.zarr", encoding={"v": {"chunks": (5, 3), "shards": (20, 3)}})
    assert list(tmp_path.iterdir()) == []  # refused before anything was created
    to_zarrpy(ds, tmp_path / "c.zarr", encoding={"v": {"chunks": (10, 3)}}, safe_chunks=False)
    xr.testing.assert_identical(xr.open_zarr(tmp_path / "c.zarr").load(), ds.load())


def test_encoding_sets_chunks_shards_and_codecs(tmp_path):
    ds = _long_dataset(100)
    zstd = {"name": "zstd", "configuration": {"level": 5, "checksum": False}}
    to_zarrpy(ds, tmp_path / "e.zarr", encoding={"v": {"chunks": (10, 3), "shards": (50, 3), "compressors": [zstd]}})
    array = zarrpy.open_array(tmp_path / "e.zarr", path="v")
    assert (array.chunks, array.shards) == ((10, 3), (50, 3))
    assert [c.to_json() for c in array.compressors] == [zstd]
    xr.testing.assert_identical(xr.open_zarr(tmp_path / "e.zarr").load(), ds)


def test_a_dataset_opened_by_either_engine_writes_back_through_either(tmp_path, zarr_format):
    """The encoding each engine leaves (zarr-python's codec objects, or
    zarrpy's) is taken by both writers."""
    ds = example_dataset()
    ds.to_zarr(tmp_path / "src.zarr", zarr_format=zarr_format,
               encoding={"temp": {"chunks": (2, 2)}, "count": {"chunks": (3,)}})
    expected = xr.open_zarr(tmp_path / "src.zarr")
    for engine in ("zarr", "zarrpy"):
        opened = xr.open_dataset(tmp_path / "src.zarr", engine=engine)
        to_zarrpy(opened, tmp_path / f"{engine}-zarrpy.zarr", zarr_format=zarr_format)
        if zarr_format == 2:
            # xarray writes a V2 StringDType variable as <U, keeping zarr-python's
            # VLenUTF8 filter, which zarr-python then refuses (with either engine);
            # to_zarrpy leaves the filter to the data type, and the strings read back as <U
            back = xr.open_zarr(tmp_path / f"{engine}-zarrpy.zarr")
            assert back["label"].dtype == np.dtype("<U2")
            assert back["label"].values.tolist() == expected["label"].values.tolist()
            opened = opened.drop_vars("label")
        opened.to_zarr(tmp_path / f"{engine}-zarr.zarr", zarr_format=zarr_format)
        for written in (f"{engine}-zarrpy.zarr", f"{engine}-zarr.zarr"):
            back = xr.open_zarr(tmp_path / written)
            names = [n for n in back.variables if not (zarr_format == 2 and n == "label")]
            # (xarray rewrites time units "days since 2000-01-01 00:00:00" as "days since 2000-01-01")
            assert_same(back[names], expected[names], cf_encoding=False)
            assert back["temp"].encoding["chunks"] == (2, 2) and back["count"].encoding["chunks"] == (3,)


def test_to_zarrpy_into_a_group(tmp_path, zarr_format):
    ds = example_dataset()
    to_zarrpy(ds[["temp"]], tmp_path / "g.zarr", group="a/b", zarr_format=zarr_format)
    to_zarrpy(ds[["count"]], tmp_path / "g.zarr", group="c", zarr_format=zarr_format)
    ds[["temp"]].to_zarr(tmp_path / "ref.zarr", group="a/b", zarr_format=zarr_format)
    ds[["count"]].to_zarr(tmp_path / "ref.zarr", group="c", zarr_format=zarr_format, mode="a")
    for group in ("a/b", "c"):
        expected = xr.open_zarr(tmp_path / "ref.zarr", group=group)
        assert_same(xr.open_zarr(tmp_path / "g.zarr", group=group), expected)
        assert_same(xr.open_dataset(tmp_path / "g.zarr", engine="zarrpy", group=group), expected)


def test_modes(tmp_path):
    ds = example_dataset()
    to_zarrpy(ds, tmp_path / "m.zarr")
    with pytest.raises(NodeExistsError):
        to_zarrpy(ds, tmp_path / "m.zarr")
    to_zarrpy(ds[["count"]], tmp_path / "m.zarr", mode="w")
    assert set(xr.open_dataset(tmp_path / "m.zarr", engine="zarrpy").data_vars) == {"count"}
    with pytest.raises(ValueError, match="mode must be"):
        to_zarrpy(ds, tmp_path / "m.zarr", mode="x")


def test_bad_encodings_are_refused_before_writing(tmp_path):
    ds = example_dataset()
    with pytest.raises(ValueError, match="not in the dataset"):
        to_zarrpy(ds, tmp_path / "a.zarr", encoding={"nope": {}})
    with pytest.raises(ValueError, match="unexpected encoding parameters.*'bogus'"):
        to_zarrpy(ds, tmp_path / "b.zarr", encoding={"temp": {"bogus": 1}})
    with pytest.raises(ValueError, match="Use `_FillValue`"):
        to_zarrpy(ds, tmp_path / "c.zarr", encoding={"temp": {"fill_value": 1.0}}, zarr_format=2)
    with pytest.raises(TypeError, match="must be an int or a tuple of ints"):
        to_zarrpy(ds, tmp_path / "d.zarr", encoding={"count": {"chunks": ("a",)}})
    with pytest.raises(TypeError, match="Dataset"):
        to_zarrpy(ds["temp"], tmp_path / "e.zarr")
    assert list(tmp_path.iterdir()) == []  # nothing was created


# -- bad input -----------------------------------------------------------------

def test_a_path_without_a_group_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="engine='zarrpy' opens a Zarr group.*no array or group"):
        xr.open_dataset(tmp_path / "missing.zarr", engine="zarrpy")
    (tmp_path / "empty.zarr").mkdir()
    with pytest.raises(NodeNotFoundError, match="empty.zarr"):
        xr.open_dataset(tmp_path / "empty.zarr", engine="zarrpy")
    zarrpy.create_array(tmp_path / "array.zarr", shape=(3,), dtype="i4")
    with pytest.raises(NodeNotFoundError, match="holds an array, not a group"):
        xr.open_dataset(tmp_path / "array.zarr", engine="zarrpy")
    example_dataset().to_zarr(tmp_path / "ds.zarr")
    with pytest.raises(NodeNotFoundError, match="node path '/nope'"):
        xr.open_dataset(tmp_path / "ds.zarr", engine="zarrpy", group="nope")


def test_an_array_without_dimension_names_is_a_clear_error(tmp_path):
    group = zarrpy.open_group(tmp_path / "nodims.zarr", mode="w")
    group.create_array("a", shape=(3,), dtype="i4")
    with pytest.raises(MetadataError, match="array 'a'.*no dimension names.*_ARRAY_DIMENSIONS"):
        xr.open_dataset(tmp_path / "nodims.zarr", engine="zarrpy")


def test_the_docs_example_runs(tmp_path, monkeypatch):
    """The first Python block of docs/guide/xarray.md runs as written."""
    text = (Path(__file__).parents[2] / "docs" / "guide" / "xarray.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "docs/guide/xarray.md", "exec"), {})

