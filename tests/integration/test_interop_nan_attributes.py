"""Attributes holding NaN / Infinity / -Infinity, with zarr-python as the oracle.

zarr-python writes non-finite floats into attributes (``missing_value = nan``)
as the bare JSON tokens ``NaN``, ``Infinity`` and ``-Infinity``; zarrpy reads
and writes them the same way, in ``zarr.json``, ``.zattrs`` and both forms of
consolidated metadata, so a node written by either can be updated by the other.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy

SPECIAL = {"missing_value": float("nan"), "valid_max": float("inf"), "valid_min": -float("inf"),
           "nested": {"list": [1.5, float("nan"), -float("inf")]}, "plain": "text"}


def same(a: Any, b: Any) -> bool:
    """Equal as JSON text, so that NaN equals NaN."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _zarr_python_hierarchy(path: Path, zarr_format: int) -> None:
    root = zarr.open_group(str(path), mode="w", zarr_format=zarr_format, attributes=SPECIAL)
    root.create_array("arr", shape=(4,), dtype="float32", attributes=SPECIAL)
    root.create_group("sub", attributes=SPECIAL)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarrpy_reads_and_updates_what_zarr_python_wrote(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "h.zarr"
    _zarr_python_hierarchy(path, zarr_format)
    root = zarrpy.open_group(path, mode="r+")
    for node in (root, root["arr"], root["sub"]):
        assert same(node.attrs.asdict(), SPECIAL)
        assert math.isnan(node.attrs["missing_value"])
        node.attrs["added"] = float("nan")  # every change to such a node works
        node.attrs.update(units="K")
        del node.attrs["plain"]
    expected = {k: v for k, v in SPECIAL.items() if k != "plain"} | {"added": float("nan"), "units": "K"}
    zroot = zarr.open_group(str(path), mode="r")
    for znode in (zroot, zroot["arr"], zroot["sub"]):
        assert same(znode.attrs.asdict(), expected)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_reads_what_zarrpy_wrote(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "h.zarr"
    root = zarrpy.open_group(path, mode="w", zarr_format=zarr_format, attributes=SPECIAL)
    root.create_array("arr", shape=(4,), dtype="float32", attributes=SPECIAL)
    sub = root.create_group("sub")
    sub.attrs["missing_value"] = float("nan")
    sub.attrs.update({k: v for k, v in SPECIAL.items() if k != "missing_value"})
    zroot = zarr.open_group(str(path), mode="r")
    for znode in (zroot, zroot["arr"], zroot["sub"]):
        assert same(znode.attrs.asdict(), SPECIAL)
    # and zarr-python's update of a node zarrpy wrote reads back in zarrpy
    zarr.open_group(str(path), mode="r+")["arr"].attrs["more"] = float("-inf")
    assert zarrpy.open_array(path, path="arr").attrs["more"] == -float("inf")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_metadata_written_by_zarr_python(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "h.zarr"
    _zarr_python_hierarchy(path, zarr_format)
    zarr.consolidate_metadata(str(path))
    root = zarrpy.open_consolidated(path, mode="r+")
    assert root.consolidated_metadata is not None
    assert same(root["arr"].attrs.asdict(), SPECIAL) and same(root["sub"].attrs.asdict(), SPECIAL)
    root.attrs["changed"] = float("inf")  # rewrites the root document, snapshot included
    zroot = zarr.open_consolidated(str(path), zarr_format=zarr_format)
    assert zroot.attrs["changed"] == float("inf")
    assert same(zroot["arr"].attrs.asdict(), SPECIAL)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_metadata_written_by_zarrpy(tmp_path: Path, zarr_format: int) -> None:
    path = tmp_path / "h.zarr"
    root = zarrpy.open_group(path, mode="w", zarr_format=zarr_format, attributes=SPECIAL)
    root.create_array("arr", shape=(4,), dtype="float32", attributes=SPECIAL)
    root.create_group("sub", attributes=SPECIAL)
    snapshot = zarrpy.consolidate_metadata(root)
    assert same(snapshot["arr"].attrs.asdict(), SPECIAL)
    zroot = zarr.open_consolidated(str(path), zarr_format=zarr_format)
    assert same(zroot.attrs.asdict(), SPECIAL)
    assert same(zroot["arr"].attrs.asdict(), SPECIAL) and same(zroot["sub"].attrs.asdict(), SPECIAL)


def test_an_array_with_nan_attributes_equals_itself_reopened(tmp_path: Path) -> None:
    a = zarrpy.create_array(tmp_path / "a", shape=(2,), dtype="f8", attributes={"m": float("nan")})
    assert a == zarrpy.open_array(tmp_path / "a")


def test_non_json_attributes_are_still_refused(tmp_path: Path) -> None:
    a = zarrpy.create_array(tmp_path / "a", shape=(2,), dtype="f8", attributes={"m": float("nan")})
    with pytest.raises(zarrpy.MetadataError, match="not JSON"):
        a.attrs["bad"] = np.arange(3)
    assert same(zarrpy.open_array(tmp_path / "a").attrs.asdict(), {"m": float("nan")})


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=40)
@given(attrs=st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4), zarr_format=st.sampled_from([2, 3]))
def test_any_json_attributes_round_trip_both_ways(tmp_path_factory: pytest.TempPathFactory,
                                                  attrs: dict[str, Any], zarr_format: int) -> None:
    path = tmp_path_factory.mktemp("attrs") / "a.zarr"
    zarrpy.create_array(path, shape=(1,), dtype="i1", zarr_format=zarr_format, attributes=attrs)
    assert same(zarr.open_array(str(path)).attrs.asdict(), attrs)
    z = zarr.open_array(str(path), mode="r+")
    z.attrs.put(attrs | {"by": "zarr-python"})
    assert same(zarrpy.open_array(path).attrs.asdict(), attrs | {"by": "zarr-python"})
