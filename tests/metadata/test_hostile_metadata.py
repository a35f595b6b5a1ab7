"""Hostile metadata is refused at open with zarrpy errors, in bounded time and
memory (issue 13).

Each case is one the probe reproduced: a chunk of 2**40 or 2**33 elements
(MemoryError, or a 4 GiB frame decoded to read 4 elements), a length past
int64 (accepted, reads returned zeros), rank 100 (numpy's ValueError), an
element count past int64 (numpy's "array is too big"), 100,000-deep JSON
(RecursionError), and a write over a huge region of tiny chunks (planned up
front: 1.8 GB before the first chunk was stored).
"""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

import zarrpy
from zarrpy.core.limits import ENV_VAR, check_chunk_nbytes
from zarrpy.errors import MetadataError, SelectionError
from zarrpy.stores.memory import MemoryStore


def _v3(shape, chunks, data_type="uint8", codecs=None, fill_value=0):
    return {
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": fill_value,
        "codecs": codecs or [{"name": "bytes"}],
    }


def _v2(shape, chunks, dtype="|u1"):
    return {"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": dtype, "compressor": None,
            "fill_value": 0, "order": "C", "filters": None}


def _store(doc, key="zarr.json") -> MemoryStore:
    store = MemoryStore()
    store.set(key, json.dumps(doc).encode() if isinstance(doc, dict) else doc)
    return store


SHARDED = [{"name": "sharding_indexed", "configuration": {
    "chunk_shape": [2**33], "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]

CASES = {
    "chunk 2**40 (1 TiB)": (_v3([16], [2**40]), "zarr.json", r"chunk_grid.chunk_shape: a chunk of \[1099511627776\]"),
    "chunk 2**33 (8 GiB)": (_v3([16], [2**33]), "zarr.json", "more than the 4294967296-byte ceiling"),
    "inner chunk 2**33": (_v3([16], [2**33], codecs=SHARDED), "zarr.json", "sharding_indexed chunk_shape"),
    "string chunk 2**26": (_v3([4], [2**26], "string", [{"name": "vlen-utf8"}], ""), "zarr.json",
                           "more than the 268435456-byte ceiling"),
    "length 2**64 + 5": (_v3([2**64 + 5], [4]), "zarr.json", "does not fit a 64-bit index"),
    "rank 100": (_v3([1] * 100, [1] * 100), "zarr.json", "100 dimensions; at most 64"),
    "2**62 x 2**62 elements": (_v3([2**62, 2**62], [1, 1]), "zarr.json", r"elements, more than 2\*\*63 - 1"),
    "deep JSON": (b"[" * 100_000 + b"]" * 100_000, "zarr.json", "nested too deeply"),
    "V2 chunk 2**40": (_v2([16], [2**40]), ".zarray", "a chunk of"),
    "V2 rank 100": (_v2([1] * 100, [1] * 100), ".zarray", "100 dimensions"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_metadata_is_refused_at_open(case):
    doc, key, match = CASES[case]
    store = _store(doc, key)
    tracemalloc.start()
    try:
        with pytest.raises(MetadataError, match=match):
            zarrpy.open_array(store)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20


def test_the_ceiling_can_be_raised_and_a_bad_value_is_refused(monkeypatch):
    store = _store(_v3([16], [2**33]))
    monkeypatch.setenv(ENV_VAR, str(2**34))
    assert zarrpy.open_array(store).chunks == (2**33,)
    monkeypatch.setenv(ENV_VAR, "lots")
    with pytest.raises(MetadataError, match=f"{ENV_VAR}='lots'"):
        check_chunk_nbytes([4], 1, "chunk_shape")


def test_creating_an_array_with_a_huge_chunk_writes_nothing():
    store = MemoryStore()
    with pytest.raises(MetadataError, match="ceiling"):
        zarrpy.create_array(store, shape=(16,), chunks=(2**40,), dtype="uint8")
    assert list(store.list()) == []


def test_a_read_too_big_for_memory_is_a_selection_error():
    a = zarrpy.open_array(_store(_v3([2**31, 2**31], [1, 1])))
    with pytest.raises(SelectionError, match=r"shape \(2147483648, 2147483648\) needs 4611686018427387904 bytes"):
        a[...]


def test_a_write_over_a_huge_region_streams_in_bounded_memory():
    class Stop(Exception):
        pass

    class StopAfter(MemoryStore):
        """Stops the write after 4,500 stored chunks (more than one batch)."""

        stored = 0

        def _set(self, key, value):
            if key.startswith("c/"):
                StopAfter.stored += 1
                if StopAfter.stored > 4_500:
                    raise Stop
            super()._set(key, value)

    store = StopAfter()
    store.set("zarr.json", json.dumps(_v3([2**20, 2**20], [1, 1])).encode())
    a = zarrpy.open_array(store, mode="r+")
    tracemalloc.start()
    try:
        with pytest.raises(Exception) as info:
            a[0:60000, 0:60000] = 1  # 3.6e9 chunks: planned up front, this took 1.8 GB
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(info.value, Stop) or isinstance(info.value.__cause__, Stop)
    assert StopAfter.stored > 4_500  # the first batches were stored before the rest was planned
    assert peak < 128 << 20
    np.testing.assert_array_equal(a[0, 0:5], 1)
