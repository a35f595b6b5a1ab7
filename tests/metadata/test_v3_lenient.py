"""V3 documents as the peers wrote them open (issue #8); the spec's strict parts stay strict.

Every document here is stored by hand, as bytes, in the form a peer wrote it:
zarr-python up to 3.1.3 put ``"consolidated_metadata": null`` in every group's
``zarr.json``; arrays carry ``"storage_transformers": []`` and, from some
writers, ``"dimension_names": null``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrpy
from zarrpy.errors import MetadataError

zarr = pytest.importorskip("zarr")  # zarr-python: the oracle (a test extra)
cpu = pytest.importorskip("zarr.core.buffer").cpu

# zarr-python 3.0 .. 3.1.3: GroupMetadata.to_dict kept a None consolidated_metadata.
OLD_GROUP = b"""{
  "attributes": {
    "title": "old"
  },
  "zarr_format": 3,
  "consolidated_metadata": null,
  "node_type": "group"
}"""


def array_doc(**extra) -> dict:
    """An int16 array of shape (4,), chunks (2,), bytes codec only, as zarr-python writes it."""
    doc = {
        "shape": [4],
        "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
        "zarr_format": 3,
        "node_type": "array",
        "storage_transformers": [],
    }
    doc.update(extra)
    return doc


def old_store(array: dict | None = None, group: bytes = OLD_GROUP) -> dict:
    """A group holding array ``x`` = [1, 2, 3, 4], every document as bytes."""
    return {
        "zarr.json": group,
        "x/zarr.json": json.dumps(array or array_doc(), indent=2).encode(),
        "x/c/0": np.array([1, 2], "<i2").tobytes(),
        "x/c/1": np.array([3, 4], "<i2").tobytes(),
    }


def test_group_with_null_consolidated_metadata_opens():
    store = old_store()
    g = zarrpy.open_group(store, mode="r")
    assert g.attrs["title"] == "old"
    assert g.consolidated_metadata is None  # null is no snapshot
    assert list(g.array_keys()) == ["x"]
    np.testing.assert_array_equal(g["x"][...], [1, 2, 3, 4])
    assert isinstance(zarrpy.open(store, mode="r"), zarrpy.Group)
    with pytest.raises(MetadataError, match="consolidated"):
        zarrpy.open_group(store, mode="r", use_consolidated=True)


def test_group_rewritten_without_the_null_and_zarr_python_reads_it():
    store = old_store()
    g = zarrpy.open_group(store, mode="a")
    g.attrs["more"] = 1
    written = json.loads(store["zarr.json"])
    assert "consolidated_metadata" not in written
    assert written["attributes"] == {"title": "old", "more": 1}
    buffers = {k: cpu.Buffer.from_bytes(v) for k, v in store.items()}
    back = zarr.open_group(zarr.storage.MemoryStore(buffers), mode="r", zarr_format=3)
    assert dict(back.attrs) == {"title": "old", "more": 1}


@pytest.mark.parametrize(
    "extra",
    [{"dimension_names": None}, {"dimension_names": ["t"]}, {"dimension_names": [None]},
     {"storage_transformers": None}, {}],
    ids=["dimension_names-null", "dimension_names", "dimension_names-[null]", "storage_transformers-null",
         "storage_transformers-[]"],
)
def test_array_members_peers_write(extra):
    a = zarrpy.open_array(old_store(array_doc(**extra)), path="x", mode="r")
    np.testing.assert_array_equal(a[...], [1, 2, 3, 4])


def test_consolidated_snapshot_with_null_child_snapshots():
    """A root snapshot whose child-group entries say ``"consolidated_metadata": null``."""
    child = {"attributes": {"c": 1}, "zarr_format": 3, "consolidated_metadata": None, "node_type": "group"}
    root = {
        "attributes": {},
        "zarr_format": 3,
        "consolidated_metadata": {
            "kind": "inline",
            "must_understand": False,
            "metadata": {"sub": child, "sub/x": array_doc(), "x": array_doc()},
        },
        "node_type": "group",
    }
    store = old_store(group=json.dumps(root, indent=2).encode())
    store["sub/zarr.json"] = json.dumps(child).encode()
    store["sub/x/zarr.json"] = store["x/zarr.json"]
    g = zarrpy.open_group(store, mode="r")
    assert g.consolidated_metadata is not None
    assert sorted(g.consolidated_metadata) == ["sub", "sub/x", "x"]
    assert g["sub"].attrs["c"] == 1
    np.testing.assert_array_equal(g["x"][...], [1, 2, 3, 4])
    assert g["sub/x"].shape == (4,)


def test_consolidated_member_without_must_understand_is_read():
    """zarr-python treats the member as its own: it reads it without the flag."""
    root = {"attributes": {}, "zarr_format": 3, "node_type": "group",
            "consolidated_metadata": {"kind": "inline", "metadata": {"x": array_doc()}}}
    g = zarrpy.open_group(old_store(group=json.dumps(root).encode()), mode="r")
    assert list(g.consolidated_metadata) == ["x"]


@pytest.mark.parametrize("node", ["group", "array"])
def test_unknown_member_with_must_understand_false_is_accepted_and_kept(node):
    ext = {"must_understand": False, "anything": [1, {"a": None}]}
    if node == "group":
        store = old_store(group=json.dumps({"zarr_format": 3, "node_type": "group", "x_ext": ext}).encode())
        zarrpy.open_group(store, mode="a").attrs["k"] = 1
        written = json.loads(store["zarr.json"])
    else:
        store = old_store(array_doc(x_ext=ext))
        a = zarrpy.open_array(store, path="x", mode="a")
        np.testing.assert_array_equal(a[...], [1, 2, 3, 4])
        a.attrs["k"] = 1
        written = json.loads(store["x/zarr.json"])
    assert written["x_ext"] == ext
    assert written["attributes"] == {"k": 1}


@pytest.mark.parametrize("value", [None, 1, "x", [], {"name": "y"}, {"must_understand": True}])
@pytest.mark.parametrize("node", ["group", "array"])
def test_unknown_member_without_must_understand_false_is_refused(node, value):
    if node == "group":
        store = old_store(group=json.dumps({"zarr_format": 3, "node_type": "group", "x_ext": value}).encode())
        with pytest.raises(MetadataError, match="x_ext"):
            zarrpy.open_group(store, mode="r")
    else:
        store = old_store(array_doc(x_ext=value))
        with pytest.raises(MetadataError, match="x_ext"):
            zarrpy.open_array(store, path="x", mode="r")


def test_consolidated_metadata_null_is_accepted_only_on_groups():
    """zarr-python never wrote it into arrays; there the spec's rule holds."""
    store = old_store(array_doc(consolidated_metadata=None))
    with pytest.raises(MetadataError, match="consolidated_metadata"):
        zarrpy.open_array(store, path="x", mode="r")


@pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part")
def test_what_zarr_python_writes_opens():
    store = zarr.storage.MemoryStore()
    g = zarr.open_group(store, mode="w", zarr_format=3, attributes={"t": 1})
    g.create_array("x", shape=(4,), dtype="int16", chunks=(2,), dimension_names=["d"])[...] = [1, 2, 3, 4]
    zarr.consolidate_metadata(store)
    raw = {k: v.to_bytes() for k, v in store._store_dict.items()}
    back = zarrpy.open_group(raw, mode="r")
    assert back.attrs["t"] == 1
    np.testing.assert_array_equal(back["x"][...], [1, 2, 3, 4])
