"""Group.info and Group.info_complete(): zarr-python's fields, no chunk read."""

from __future__ import annotations

import numpy as np
import pytest

import zarrpy
from zarrpy.stores.memory import MemoryStore


class CountingStore(MemoryStore):
    """A MemoryStore that records every key it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.fetched: list[str] = []

    def get(self, key, byte_range=None):
        self.fetched.append(key)
        return super().get(key, byte_range)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_group_info_fields(zarr_format):
    g = zarrpy.group(zarr_format=zarr_format)
    g["x"] = np.arange(5)
    g.create_group("sub")
    info = g.info.as_dict()
    assert info == {"name": "/", "type": "Group", "zarr_format": zarr_format, "read_only": False,
                    "store": "MemoryStore"}
    complete = g.info_complete().as_dict()
    assert complete["members"] == 2 and complete["arrays"] == 1 and complete["groups"] == 1
    text = str(g.info_complete())
    assert "No. members : 2" in text and "Zarr format : " + str(zarr_format) in text


def test_group_info_matches_zarr_python_labels():
    zarr = pytest.importorskip("zarr")
    theirs = zarr.group()
    theirs.create_array("x", shape=(3,), dtype="i4")
    ours = zarrpy.group()
    ours.create_array("x", shape=(3,), dtype="i4")
    labels = lambda text: [line.split(":")[0].strip() for line in str(text).splitlines()]
    assert labels(ours.info_complete()) == labels(theirs.info_complete())
    assert labels(ours.info) == labels(theirs.info)


def test_group_info_reads_no_chunk():
    store = CountingStore()
    g = zarrpy.group(store)
    a = g.create_array("x", shape=(100,), chunks=(10,), dtype="f8")
    a[...] = 1.0
    store.fetched.clear()
    str(g.info)
    assert store.fetched == []
    str(g.info_complete())
    assert store.fetched and all(k.endswith(("zarr.json", ".zarray", ".zgroup", ".zattrs")) for k in store.fetched)


def test_group_info_read_only():
    store = {}
    zarrpy.group(store)
    g = zarrpy.open_group(store, mode="r")
    assert g.info.as_dict()["read_only"] is True
