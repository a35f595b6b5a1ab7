"""numpy.datetime64 / numpy.timedelta64: zarr-python 3's V3 names and V2 dtypes.

V3: ``{"name": "numpy.datetime64", "configuration": {"unit": "ns",
"scale_factor": 1}}``; V2: ``"<M8[ns]"``. Elements are int64 counts of the
unit; the fill value is written as that int64 (NaT: the int64 minimum), and
the default fill is NaT, as in zarr-python. Checked against numpy (bit for
bit, NaT included) and against zarr-python both ways where it is installed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.core.dtypes import NAT, DataType
from zarrpy.errors import MetadataError
from zarrpy.stores.memory import MemoryStore

UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"]
KINDS = ["datetime64", "timedelta64"]


def time_dtype(kind: str, unit: str, scale: int = 1) -> np.dtype:
    return np.dtype(f"{kind}[{scale}{unit}]")


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.int64)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("unit", UNITS)
def test_json_form_and_back(kind, unit):
    for scale in (1, 10):
        dt = DataType.from_numpy(time_dtype(kind, unit, scale))
        assert dt.to_json() == {"name": f"numpy.{kind}", "configuration": {"unit": unit, "scale_factor": scale}}
        assert DataType.from_json(dt.to_json()) == dt
        assert dt.numpy == time_dtype(kind, unit, scale)


def test_generic_unit():
    dt = DataType.from_json({"name": "numpy.datetime64", "configuration": {"unit": "generic", "scale_factor": 1}})
    assert dt.numpy == np.dtype("M8") and dt.to_json()["configuration"] == {"unit": "generic", "scale_factor": 1}


@pytest.mark.parametrize(
    "doc, fragment",
    [
        ("numpy.datetime64", "configuration"),
        ({"name": "numpy.datetime64"}, "configuration"),
        ({"name": "numpy.datetime64", "configuration": {"unit": "ns"}}, "configuration"),
        ({"name": "numpy.timedelta64", "configuration": {"unit": "fortnight", "scale_factor": 1}}, "unit"),
        ({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 0}}, "scale_factor"),
        ({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 2**31}}, "scale_factor"),
        ({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": True}}, "scale_factor"),
        ({"name": "numpy.datetime64", "configuration": {"unit": "generic", "scale_factor": 2}}, "generic"),
        ({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1, "x": 1}}, "configuration"),
    ],
)
def test_bad_configurations_name_the_field(doc, fragment):
    with pytest.raises(MetadataError, match="data_type") as info:
        DataType.from_json(doc)
    assert fragment in str(info.value)


def test_fill_values():
    dt = DataType.from_numpy("datetime64[s]")
    assert np.isnat(dt.default_fill())
    assert dt.fill_to_json(dt.default_fill()) == NAT
    assert np.isnat(dt.fill_from_json("NaT")) and np.isnat(dt.fill_from_json(NAT))
    assert dt.fill_from_json(86400) == np.datetime64("1970-01-02", "s")
    assert dt.fill_to_json(np.datetime64("1970-01-02", "s")) == 86400
    assert dt.fill_to_json(np.datetime64("1970-01-02", "D")) == 86400  # cast to the array's unit
    with pytest.raises(MetadataError, match="fill_value"):
        dt.fill_from_json(1.5)


@st.composite
def time_arrays(draw):
    kind = draw(st.sampled_from(KINDS))
    unit = draw(st.sampled_from(UNITS))
    scale = draw(st.sampled_from([1, 1, 3]))
    n = draw(st.integers(0, 40))
    counts = np.array(draw(st.lists(st.integers(-(2**62), 2**62), min_size=n, max_size=n)), dtype=np.int64)
    nat = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    counts[np.array(nat, dtype=bool)] = NAT
    return counts.view(time_dtype(kind, unit, scale))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=time_arrays(), fmt=st.sampled_from([2, 3]), sharded=st.booleans(),
       fill=st.sampled_from(["default", "nat", "zero", "value"]), endian=st.sampled_from(["little", "big"]))
def test_round_trip_bit_for_bit(values, fmt, sharded, fill, endian):
    if sharded and fmt == 2:
        sharded = False
    fill_value = {"default": None, "nat": np.array("NaT", values.dtype)[()],
                  "zero": np.array(0, np.int64).view(values.dtype)[()],
                  "value": np.array(12345, np.int64).view(values.dtype)[()]}[fill]
    kwargs = dict(shape=values.shape, dtype=values.dtype, chunks=(7,), fill_value=fill_value, zarr_format=fmt)
    if sharded:
        kwargs.update(chunks=(7,), shards=(14,))
    if fmt == 3:
        kwargs["serializer"] = {"name": "bytes", "configuration": {"endian": endian}}
    store = MemoryStore()
    a = zarrpy.create_array(store, **kwargs)
    a[...] = values
    b = zarrpy.open_array(store, mode="r+")
    got = b[...]
    assert got.dtype == values.dtype
    np.testing.assert_array_equal(bits(got), bits(values))
    expected_fill = np.array("NaT", values.dtype)[()] if fill_value is None else fill_value
    assert bits(np.array(b.fill_value)) == bits(np.array(expected_fill))
    # Chunks equal to the fill value are not stored, and read back as it.
    if values.size:
        b[...] = expected_fill
        assert b.nchunks_initialized == 0
        assert (bits(b[...]) == bits(np.array(expected_fill))).all()


def test_assignment_follows_numpy():
    a = zarrpy.create_array({}, shape=(4,), dtype="datetime64[s]", chunks=(2,))
    a[:] = ["2020-01-01", "NaT", "1970-01-01T00:00:10", "2000-02-29T12:00"]
    expected = np.array(["2020-01-01", "NaT", "1970-01-01T00:00:10", "2000-02-29T12:00"], dtype="datetime64[s]")
    np.testing.assert_array_equal(bits(a[:]), bits(expected))
    a[0] = np.datetime64("2021-01-01", "D")  # units converted as numpy converts them
    assert a[0] == np.datetime64("2021-01-01T00:00:00", "s")
    a[1] = 5  # an integer is a count of the unit, as in numpy
    assert a[1] == np.datetime64(5, "s")
    with pytest.raises(TypeError):
        a[2] = np.timedelta64(5, "s")
    with pytest.raises(TypeError):
        a[2] = 1.5
    t = zarrpy.create_array({}, shape=(2,), dtype="timedelta64[ms]", chunks=(2,))
    t[:] = [np.timedelta64(2, "s"), np.timedelta64("NaT", "s")]
    assert t[0] == np.timedelta64(2000, "ms") and np.isnat(t[1])
    with pytest.raises(TypeError):
        t[0] = np.datetime64("2020-01-01")


# -- zarr-python as the oracle, both ways ---------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype", ["datetime64[ns]", "datetime64[D]", "datetime64[10s]", "timedelta64[ms]",
                                   "timedelta64[us]"])
def test_zarr_python_reads_what_zarrpy_writes_and_back(tmp_path, fmt, dtype):
    zarr = pytest.importorskip("zarr")
    values = (np.arange(12, dtype=np.int64) * 977 - 3000).view(np.dtype(dtype))
    values[5] = np.array("NaT", dtype)[()]
    fill = np.array(7, np.int64).view(np.dtype(dtype))[()]
    ours = str(tmp_path / "ours.zarr")
    a = zarrpy.create_array(ours, shape=(12,), dtype=dtype, chunks=(5,), fill_value=fill, zarr_format=fmt)
    a[...] = values
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(ours, mode="r")
        assert z.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(bits(z[...]), bits(values))
        assert bits(np.array(z.fill_value)) == bits(np.array(fill))
        theirs = str(tmp_path / "theirs.zarr")
        w = zarr.create_array(theirs, shape=(12,), dtype=dtype, chunks=(5,), zarr_format=fmt)
        w[...] = values
        their_fill = w.fill_value
    b = zarrpy.open_array(theirs)
    assert b.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(bits(b[...]), bits(values))
    assert bits(np.array(b.fill_value)) == bits(np.array(their_fill))
    if fmt == 3:
        import json
        from pathlib import Path

        our_doc = json.loads((Path(ours) / "zarr.json").read_text())
        their_doc = json.loads((Path(theirs) / "zarr.json").read_text())
        assert our_doc["data_type"] == their_doc["data_type"]
