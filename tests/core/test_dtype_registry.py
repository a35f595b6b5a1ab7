"""The data-type registry and its plugin interface (DataTypeFamily).

Built-in types are families on the same registry third-party types join; a
family registered by hand works end to end (create, write, reopen, read,
fill value JSON) in V3 and, through its own V2 name, in V2. The entry-point
path is tested with a real installed distribution in
tests/codecs/test_plugin_entry_points.py.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import zarrpy
from zarrpy.core.dtypes import DataType, DataTypeFamily, register_data_type
from zarrpy.core.dtypes import registry
from zarrpy.errors import MetadataError


class Celsius(DataTypeFamily):
    """A test type: float32 temperatures with a ``{"offset": k}`` configuration."""

    names = ("test.celsius", "test.celsius_alias")
    v2_names = ("test.celsius",)

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        if configuration not in (None, {}) and set(configuration or {}) != {"offset"}:
            raise MetadataError(f"{name!r} takes only 'offset', got {configuration!r}")
        return np.dtype("float32")

    def dtype_to_json(self, data_type: DataType) -> dict[str, Any]:
        return {"name": data_type.name, "configuration": {"offset": 0}}

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        return None

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        if not isinstance(value, str) or not value.endswith("C"):
            raise ValueError("expected a string like '21.5C'")
        return np.float32(value[:-1])

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        return f"{float(value)}C"

    def dtype_from_v2(self, text: str) -> np.dtype:
        return np.dtype("<f4")

    def dtype_to_v2(self, data_type: DataType) -> str:
        return "test.celsius"


@pytest.fixture(scope="module")
def celsius() -> DataTypeFamily:
    return register_data_type(Celsius, replace=True)


def test_builtins_are_registry_families():
    for name in ("int8", "float64", "string", "variable_length_bytes", "numpy.datetime64", "raw_bytes", "r24",
                 "null_terminated_bytes"):
        family = registry.family_for_name(name)
        assert isinstance(family, DataTypeFamily)
    assert DataType.from_json("uint16").family is registry.family_for_name("uint16")


def test_unknown_type_and_unsupported_configuration_are_different_errors():
    with pytest.raises(MetadataError, match=r"unknown data type 'no_such_type'.*zarrpy\.data_types"):
        DataType.from_json("no_such_type")
    with pytest.raises(MetadataError, match=r"data type 'int8' with configuration \{'x': 1\} is not supported"):
        DataType.from_json({"name": "int8", "configuration": {"x": 1}})
    with pytest.raises(MetadataError, match="unknown data type"):
        DataType.from_json({"name": "no_such_type", "configuration": {"x": 1}})
    with pytest.raises(MetadataError, match="configuration must be an object"):
        DataType.from_json({"name": "int8", "configuration": [1]})


def test_a_taken_name_needs_replace(celsius):
    class Again(Celsius):
        pass

    with pytest.raises(MetadataError, match="already registered"):
        register_data_type(Again)
    with pytest.raises(TypeError):
        register_data_type(object)  # type: ignore[arg-type]


def test_registered_family_names_and_fill_json(celsius):
    dt = DataType.from_json({"name": "test.celsius_alias", "configuration": {"offset": 0}})
    assert dt.family is celsius and dt.numpy == np.float32 and dt.name == "test.celsius_alias"
    assert dt.to_json() == {"name": "test.celsius_alias", "configuration": {"offset": 0}}
    assert dt.fill_from_json("21.5C") == np.float32(21.5)
    assert dt.fill_to_json(np.float32(-3)) == "-3.0C"
    with pytest.raises(MetadataError, match=r"fill_value: 21\.5 is not valid for data type 'test.celsius_alias'"):
        dt.fill_from_json(21.5)
    with pytest.raises(MetadataError, match=r"data_type: 'test.celsius' takes only 'offset'"):
        DataType.from_json({"name": "test.celsius", "configuration": {"scale": 2}})


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_registered_family_end_to_end(celsius, tmp_path, zarr_format):
    data = np.array([[20.5, -4.0, 37.25], [0.0, 100.0, -40.0]], dtype="float32")
    a = zarrpy.create_array(str(tmp_path / "t.zarr"), shape=(2, 3), chunks=(1, 2), dtype="test.celsius",
                            fill_value=np.float32(1.5), zarr_format=zarr_format)
    a[...] = data
    b = zarrpy.open_array(str(tmp_path / "t.zarr"), mode="r")
    np.testing.assert_array_equal(b[...], data)
    if zarr_format == 3:
        doc = json.loads((tmp_path / "t.zarr" / "zarr.json").read_text())
        assert doc["data_type"] == {"name": "test.celsius", "configuration": {"offset": 0}}
        assert doc["fill_value"] == "1.5C"
        assert b.fill_value == np.float32(1.5)
    else:
        doc = json.loads((tmp_path / "t.zarr" / ".zarray").read_text())
        assert doc["dtype"] == "test.celsius"


def test_a_broken_entry_point_is_reported_by_name(monkeypatch):
    class BrokenEntryPoint:
        name = "test.broken"
        value = "nowhere:Nothing"

        def load(self):
            raise ImportError("no module named 'nowhere'")

    monkeypatch.setattr(registry, "entry_points", lambda group: [BrokenEntryPoint()])
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    monkeypatch.setattr(registry, "_broken", {})
    with pytest.raises(MetadataError, match=r"'test.broken' comes from a plugin that failed to load: nowhere:Nothing"):
        DataType.from_json("test.broken")


@pytest.mark.parametrize(
    "dtype",
    [
        {"name": "zarrs.optional", "configuration": {"name": "int16", "configuration": {}}},
        {"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int32"}]}},
        {"name": "raw_bytes", "configuration": {"length_bytes": 3}},
        {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}},
    ],
)
def test_create_array_takes_the_v3_json_form(dtype):
    a = zarrpy.create_array({}, shape=(2,), chunks=(2,), dtype=dtype)
    assert a.metadata.data_type.to_json() == dtype
    assert zarrpy.open_array(a.store, mode="r").metadata.data_type.to_json() == dtype


def _nested(kind: str, depth: int) -> dict:
    d: dict = {"name": "int8"}
    for _ in range(depth):
        if kind == "optional":
            d = {"name": "zarrs.optional", "configuration": d}
        else:
            d = {"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": d}]}}
    return d


@pytest.mark.parametrize(
    "dtype, fragment",
    [
        ({"name": "raw_bytes", "configuration": {"length_bytes": 2**31}}, "length_bytes"),
        ({"name": "null_terminated_bytes", "configuration": {"length_bytes": 2**62}}, "length_bytes"),
        ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 2**62}}, "length_bytes"),
        ("r" + "8" * 5000, "multiple of 8 bits"),
        ("r" + str(2**40), "multiple of 8 bits"),
        (_nested("optional", 3000), "nested more than 128 levels"),
        (_nested("struct", 1000), "nested more than 128 levels"),
    ],
    ids=["raw-huge", "S-huge", "U-huge", "r-long-name", "r-huge", "optional-deep", "struct-deep"],
)
def test_hostile_data_types_are_metadata_errors(dtype, fragment):
    with pytest.raises(MetadataError, match=fragment):
        DataType.from_json(dtype)


def test_reasonable_nesting_is_accepted():
    assert DataType.from_json(_nested("struct", 8)).numpy.itemsize == 1
    assert DataType.from_json(_nested("optional", 4)).numpy.itemsize == 5
