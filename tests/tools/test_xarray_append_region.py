"""``to_zarrpy``'s ``mode="a"``/``"a-"``/``"r+"``, ``append_dim`` and ``region``:
each compared with what xarray's own ``to_zarr`` (through zarr-python) stores
doing the same, read back by xarray (``xr.open_zarr``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import zarrpy
from zarrpy.errors import NodeExistsError, NodeNotFoundError
from zarrpy.xarray import to_zarrpy

from .helpers import snapshot

pytest.importorskip("zarr")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::FutureWarning", "ignore::UserWarning")


def weather(n: int = 6) -> xr.Dataset:
    time = pd.date_range("2000-01-01", periods=n)
    return xr.Dataset(
        {"temp": (("time", "x"), np.arange(n * 4, dtype="f8").reshape(n, 4), {"units": "K"}),
         "count": (("x",), np.arange(4, dtype="i4")),
         "packed": (("time",), np.linspace(0, 1, n), {}, {"dtype": "int16", "scale_factor": 0.01})},
        coords={"time": time, "x": [10, 20, 30, 40]}, attrs={"title": "w"})


def both(tmp_path, fmt, *steps):
    """Run each (dataset, kwargs) step with to_zarrpy and with xarray's to_zarr; both read back by xarray."""
    ours, ref = tmp_path / f"ours{fmt}.zarr", tmp_path / f"ref{fmt}.zarr"
    for i, (ds, kwargs) in enumerate(steps):
        extra = {"zarr_format": fmt} if i == 0 else {}
        to_zarrpy(ds, ours, **kwargs, **extra)
        ds.to_zarr(ref, **kwargs, **extra)
    return xr.open_zarr(ours).load(), xr.open_zarr(ref).load()


@pytest.mark.parametrize("fmt", [2, 3])
def test_append_along_a_dimension(tmp_path, fmt):
    ds = weather()
    got, ref = both(tmp_path, fmt, (ds.isel(time=slice(0, 2)), {}), (ds.isel(time=slice(2, 5)), {"append_dim": "time"}),
                    (ds.isel(time=slice(5, 6)), {"append_dim": "time"}))
    xr.testing.assert_identical(got, ref)
    xr.testing.assert_allclose(got, ds, atol=0.005)  # "packed" is stored as int16 hundredths
    assert got["packed"].encoding["dtype"] == np.dtype("int16")  # appended as the stored data are encoded


@pytest.mark.parametrize("fmt", [2, 3])
def test_append_with_dask_data_block_by_block(tmp_path, fmt):
    ds = weather(8)
    got, ref = both(tmp_path, fmt, (ds.isel(time=slice(0, 4)).chunk({"time": 2}), {}),
                    (ds.isel(time=slice(4, 8)).chunk({"time": 2}), {"append_dim": "time"}))
    xr.testing.assert_identical(got, ref)
    xr.testing.assert_allclose(got, ds, atol=0.005)


@pytest.mark.parametrize("fmt", [2, 3])
def test_region_writes_explicit_and_auto(tmp_path, fmt):
    ds = weather()
    zero = (ds.isel(time=slice(2, 4)) * 0).drop_vars(["count", "x"])
    plus = (ds.isel(time=slice(1, 3)) + 1).drop_vars(["count"])
    got, ref = both(tmp_path, fmt, (ds, {}), (zero, {"region": {"time": slice(2, 4)}}),
                    (plus, {"region": "auto"}), (plus * 2, {"region": "auto", "mode": "a"}))
    xr.testing.assert_identical(got, ref)
    expected = ds["temp"].values.copy()
    expected[2:4] = 0
    expected[1:3] = (ds["temp"].values[1:3] + 1) * 2
    np.testing.assert_array_equal(got["temp"].values, expected)


@pytest.mark.parametrize("fmt", [2, 3])
def test_mode_a_adds_variables_and_rewrites_existing_ones(tmp_path, fmt):
    ds = weather()
    extra = xr.Dataset({"extra": (("x",), np.ones(4))}, coords={"x": [10, 20, 30, 40]}, attrs={"k": 1})
    got, ref = both(tmp_path, fmt, (ds, {}), (extra, {"mode": "a"}), (ds[["count"]] * 3, {"mode": "a"}))
    xr.testing.assert_identical(got, ref)
    assert set(got.data_vars) == {"temp", "count", "packed", "extra"}
    np.testing.assert_array_equal(got["count"], ds["count"] * 3)


@pytest.mark.parametrize("fmt", [2, 3])
def test_mode_a_minus_leaves_variables_without_the_dimension(tmp_path, fmt):
    ds = weather()
    later = ds.isel(time=slice(3, 6)).assign(count=ds["count"] * 100)
    got, ref = both(tmp_path, fmt, (ds.isel(time=slice(0, 3)), {}), (later, {"mode": "a-", "append_dim": "time"}))
    xr.testing.assert_identical(got, ref)
    np.testing.assert_array_equal(got["count"], ds["count"])  # not rewritten


def test_the_hint_names_arguments_that_exist(tmp_path):
    ds = weather()
    to_zarrpy(ds, tmp_path / "a.zarr")
    with pytest.raises(NodeExistsError, match="mode='w'") as exc_info:
        to_zarrpy(ds, tmp_path / "a.zarr")
    assert "overwrite" not in str(exc_info.value)
    for kwargs in ({"mode": "w"}, {"mode": "a"}, {"append_dim": "time"}, {"region": {"time": slice(0, 6)}}):
        part = ds if "region" not in kwargs else ds.drop_vars(["count", "x", "time"])
        to_zarrpy(part, tmp_path / "a.zarr", **kwargs)  # each argument the hint names works
    assert xr.open_zarr(tmp_path / "a.zarr").sizes["time"] == 12


def test_refusals_store_nothing(tmp_path):
    ds = weather()
    to_zarrpy(ds, tmp_path / "a.zarr")
    before = snapshot(tmp_path / "a.zarr")
    bad = [
        (dict(mode="r+"), ValueError, "mode='r\\+' cannot create"),  # ds has no new var... see below
        (dict(append_dim="nope"), ValueError, "append_dim='nope'"),
        (dict(append_dim="time", mode="w"), ValueError, "needs mode='a'"),
        (dict(region={"time": slice(0, 2)}, mode="w-"), ValueError, "needs mode='r\\+'"),
        (dict(region={"time": slice(0, 2, 2)}), ValueError, "step 1"),
        (dict(region={"nope": slice(0, 2)}), ValueError, "not a dimension"),
        (dict(mode="a", encoding={"temp": {"chunks": (1, 1)}}), ValueError, "already exists, but encoding"),
        (dict(mode="a", zarr_format=2), ValueError, "is Zarr V3"),
    ]
    extended = ds.assign(new=(("x",), np.zeros(4)))
    for kwargs, error, match in bad:
        target = extended if kwargs.get("mode") == "r+" else ds
        with pytest.raises(error, match=match):
            to_zarrpy(target, tmp_path / "a.zarr", **kwargs)
        assert snapshot(tmp_path / "a.zarr") == before, kwargs
    with pytest.raises(ValueError, match="different dimension sizes"):
        to_zarrpy(ds.isel(x=slice(0, 2)), tmp_path / "a.zarr", append_dim="time")
    assert snapshot(tmp_path / "a.zarr") == before
    with pytest.raises(ValueError, match="drop the others"):
        to_zarrpy(ds, tmp_path / "a.zarr", region={"time": slice(0, 6)})
    with pytest.raises(KeyError, match="not all values"):
        to_zarrpy(weather(8).isel(time=slice(5, 8)).drop_vars("count"), tmp_path / "a.zarr", region="auto")
    assert snapshot(tmp_path / "a.zarr") == before


def test_r_plus_needs_a_group_and_a_creates_one(tmp_path):
    ds = weather()
    with pytest.raises(NodeNotFoundError, match="mode='r\\+'"):
        to_zarrpy(ds, tmp_path / "none.zarr", mode="r+")
    with pytest.raises(ValueError, match="no group"):
        to_zarrpy(ds.drop_vars(["count", "x"]), tmp_path / "none.zarr", region={"time": slice(0, 6)}, mode="a")
    assert not (tmp_path / "none.zarr").exists()
    to_zarrpy(ds, tmp_path / "new.zarr", mode="a")
    xr.testing.assert_allclose(xr.open_zarr(tmp_path / "new.zarr").load(), ds, atol=0.005)


def test_r_plus_writes_values_in_place_and_changes_no_metadata(tmp_path):
    ds = weather()
    to_zarrpy(ds, tmp_path / "a.zarr")
    meta = {k: v for k, v in snapshot(tmp_path / "a.zarr").items() if k.endswith("zarr.json")}
    to_zarrpy(ds[["temp"]] * 0, tmp_path / "a.zarr", mode="r+")
    assert {k: v for k, v in snapshot(tmp_path / "a.zarr").items() if k.endswith("zarr.json")} == meta
    assert float(xr.open_zarr(tmp_path / "a.zarr")["temp"].sum()) == 0
    assert zarrpy.open_array(tmp_path / "a.zarr", path="temp").shape == (6, 4)
