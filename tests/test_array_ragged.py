"""V2 vlen-array (ragged numeric) arrays read as RaggedArray and written back."""

import json

import numcodecs
import numpy as np
import pytest

import zarrpy
from zarrpy.stores.local import LocalStore


@pytest.fixture
def ragged_store(tmp_path):
    root = tmp_path / "r.zarr"
    root.mkdir()
    (root / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [5], "chunks": [2], "dtype": "|O", "compressor": None,
        "fill_value": 0, "order": "C", "filters": [{"id": "vlen-array", "dtype": "<i2"}]}))
    codec = numcodecs.VLenArray("<i2")
    values = [np.array([1, 2], "i2"), np.array([], "i2"), np.array([3], "i2"), np.array([4, 5, 6], "i2")]
    chunk0 = np.empty(2, dtype=object)
    chunk0[:] = values[:2]
    chunk1 = np.empty(2, dtype=object)
    chunk1[:] = values[2:]
    (root / "0").write_bytes(codec.encode(chunk0))
    (root / "1").write_bytes(codec.encode(chunk1))
    return root, values


def test_reads_return_ragged_arrays_and_missing_chunks_are_empty(ragged_store):
    root, values = ragged_store
    a = zarrpy.open_array(str(root))
    out = a[...]
    assert isinstance(out, zarrpy.RaggedArray) and out.shape == (5,)
    got = out.to_list()
    for g, w in zip(got, values + [np.array([], "i2")]):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == np.int16
    np.testing.assert_array_equal(a[3], [4, 5, 6])
    assert a[1:4].to_list()[2].tolist() == [4, 5, 6]


def test_writes_round_trip_and_stay_readable_by_numcodecs(ragged_store):
    root, _ = ragged_store
    a = zarrpy.open_array(str(root), mode="r+")
    a[4] = np.array([9, 9], "i2")
    a[0:2] = [[7], [8, 8]]
    assert [x.tolist() for x in a[...].to_list()] == [[7], [8, 8], [3], [4, 5, 6], [9, 9]]
    stored = LocalStore(root).get("2")
    decoded = numcodecs.VLenArray("<i2").decode(stored)
    assert [x.tolist() for x in decoded] == [[9, 9], []]  # the edge chunk is padded with an empty element
    with pytest.raises(TypeError):
        a[0] = ["not", "numbers"]
