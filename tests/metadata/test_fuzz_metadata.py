"""Fuzzing the metadata parsers (issue 13): random and mutated documents,
opened as a store's ``zarr.json`` (V3) or ``.zarray`` (V2), either open or
fail with a zarrpy error, within bounded time and memory.

Opening builds the whole read path (codec chain, chunk-I/O layer), so the
documents exercise the codec configuration parsers too. ``--hypothesis-profile=fuzz``
(tests/conftest.py) runs many more examples.
"""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.errors import ZarrpyError
from zarrpy.stores.memory import MemoryStore

VALID_V3 = {
    "zarr_format": 3, "node_type": "array", "shape": [10, 12], "data_type": "int16",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 6]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0,
    "codecs": [
        {"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 3],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd",
                                                                                 "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}],
    "attributes": {"a": [1, 2]}, "dimension_names": ["y", "x"],
}
VALID_V2 = {
    "zarr_format": 2, "shape": [10, 12], "chunks": [4, 6], "dtype": "<i2", "compressor": {"id": "zlib", "level": 1},
    "fill_value": 0, "order": "C", "filters": [{"id": "delta", "dtype": "<i2"}], "dimension_separator": ".",
}

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
INTERESTING = st.sampled_from([
    None, True, 0, -1, 1, 2**31, 2**63, 2**64 + 5, -(2**63), 1.5, float("inf"), "", "x", "int16", "string",
    "uint64", "bytes", "zstd", [], [0], [-1], [2**62, 2**62], [1] * 70, {}, {"name": "bytes"},
    {"name": "sharding_indexed", "configuration": {}}, [{"name": "gzip", "configuration": {"level": 99}}],
])


def _paths(doc, prefix=()):
    """Every (path) to a value in a JSON document."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _replace(doc, path, value):
    if not path:
        return value
    copy = dict(doc) if isinstance(doc, dict) else list(doc)
    copy[path[0]] = _replace(doc[path[0]], path[1:], value)
    return copy


@st.composite
def mutated(draw, valid):
    doc = valid
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(doc))
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["replace", "random", "delete"]))
        if action == "delete" and path and isinstance(doc, dict):
            parent = _get(doc, path[:-1])
            if isinstance(parent, dict):
                doc = _replace(doc, path[:-1], {k: v for k, v in parent.items() if k != path[-1]})
                continue
        value = draw(INTERESTING) if action == "replace" else draw(JSON_VALUES)
        doc = _replace(doc, path, value)
    return doc


def _get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def _open(raw: bytes, key: str) -> None:
    store = MemoryStore()
    store.set(key, raw)
    tracemalloc.start()
    try:
        try:
            a = zarrpy.open_array(store)
        except ZarrpyError:
            return
        finally:
            peak = tracemalloc.get_traced_memory()[1]
        assert peak < 64 << 20, f"opening took {peak} bytes"
        try:  # an array that opens must also read (fill: nothing stored) or fail as zarrpy
            a[tuple(slice(0, 1) for _ in a.shape)]
        except ZarrpyError:
            pass
    finally:
        tracemalloc.stop()


# 150 examples a test by default; a profile asking for more (--hypothesis-profile=fuzz) gets more.
FUZZ = settings(max_examples=max(150, settings.default.max_examples), deadline=2000,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(doc=mutated(VALID_V3))
def test_mutated_v3_documents_open_or_fail_as_zarrpy(doc):
    _open(json.dumps(doc).encode(), "zarr.json")


@FUZZ
@given(doc=mutated(VALID_V2))
def test_mutated_v2_documents_open_or_fail_as_zarrpy(doc):
    _open(json.dumps(doc).encode(), ".zarray")


@FUZZ
@given(raw=st.one_of(
    st.binary(max_size=200),
    st.builds(lambda d, cut, flip: _flip(json.dumps(d).encode(), cut, flip), st.sampled_from([VALID_V3, VALID_V2]),
              st.integers(0, 2000), st.integers(0, 255)),
), key=st.sampled_from(["zarr.json", ".zarray"]))
def test_random_and_corrupted_bytes_open_or_fail_as_zarrpy(raw, key):
    _open(raw, key)


def _flip(raw: bytes, at: int, value: int) -> bytes:
    at %= len(raw)
    return raw[:at] + bytes([value]) + raw[at + 1:]


def test_the_valid_documents_open():
    for doc, key in ((VALID_V3, "zarr.json"), (VALID_V2, ".zarray")):
        store = MemoryStore()
        store.set(key, json.dumps(doc).encode())
        np.testing.assert_array_equal(zarrpy.open_array(store)[...], np.zeros((10, 12), "int16"))
