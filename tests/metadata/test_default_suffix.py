"""zarrs' ``zarrs.default_suffix`` chunk key encoding: metadata, keys both ways, arrays."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import zarrpy
from zarrpy.errors import MetadataError
from zarrpy.metadata.chunk_key_encoding import decode_chunk_key, encode_chunk_key
from zarrpy.metadata.v3 import ChunkKeyEncodingSpec

NAME = "zarrs.default_suffix"


def spec(suffix: str, separator: str | None = None) -> ChunkKeyEncodingSpec:
    config = {"suffix": suffix} if separator is None else {"separator": separator, "suffix": suffix}
    return ChunkKeyEncodingSpec.from_json({"name": NAME, "configuration": config})


@pytest.mark.parametrize("sep, coords, key", [
    ("/", (1, 23, 45), "c/1/23/45.tiff"),  # zarrs' own tests
    (".", (1, 23, 45), "c.1.23.45.tiff"),
    ("/", (), "c.tiff"),
    (".", (), "c.tiff"),
])
def test_zarrs_keys(sep, coords, key):
    s = spec(".tiff", sep)
    assert encode_chunk_key(s, coords) == key
    assert decode_chunk_key(s, key, len(coords)) == coords


def test_the_separator_defaults_to_slash_and_is_written_out():
    s = spec(".bin")
    assert s.separator == "/" and s.suffix == ".bin"
    assert s.to_json() == {"name": NAME, "configuration": {"separator": "/", "suffix": ".bin"}}
    assert ChunkKeyEncodingSpec.from_json(s.to_json()) == s
    assert ChunkKeyEncodingSpec.from_json({"name": "default"}).suffix == ""  # the others have none


@pytest.mark.parametrize("key", ["c/1/2", "c/1/2.bin.x", "c/1.bin", "c/1/2/3.bin", "c/x/2.bin", "zarr.json",
                                 "c/1/2.BIN", "c/²/2.bin"])
def test_keys_without_the_suffix_or_coordinates_name_no_chunk(key):
    assert decode_chunk_key(spec(".bin"), key, 2) is None


@given(st.sampled_from(["/", "."]), st.sampled_from(["", ".bin", "_x", ".1", "/data", ".a.b"]),
       st.lists(st.integers(0, 10**6), max_size=4))
def test_round_trip(sep, suffix, coords):
    s = spec(suffix, sep)
    key = encode_chunk_key(s, tuple(coords))
    assert key.endswith(suffix) and decode_chunk_key(s, key, len(coords)) == tuple(coords)


@pytest.mark.parametrize("config, message", [
    ({}, "needs a string 'suffix', got None"),
    ({"suffix": 3}, "needs a string 'suffix', got 3"),
    ({"suffix": ".b", "separator": "-"}, "separator must be '/' or '.'"),
    ({"suffix": ".b", "extra": 1}, r"unknown configuration field\(s\) \['extra'\]"),
    ({"suffix": "/../x"}, "suffix '/../x': a '/' in it must start a plain name"),
    ({"suffix": "//x"}, "a '/' in it must start a plain name"),
    ({"suffix": "\\x"}, "may hold no"),
])
def test_bad_configurations_are_refused(config, message):
    with pytest.raises(MetadataError, match=message):
        ChunkKeyEncodingSpec.from_json({"name": NAME, "configuration": config})


def test_unknown_encodings_list_the_known_ones():
    with pytest.raises(MetadataError, match="known: default, v2, zarrs.default_suffix"):
        ChunkKeyEncodingSpec.from_json({"name": "zarrs.other"})


@pytest.mark.parametrize("encoding", [
    {"name": NAME, "configuration": {"separator": ".", "suffix": ".bin"}},
    {"name": NAME, "separator": ".", "suffix": ".bin"},  # the short form, as zarr-python's for the others
])
def test_an_array_writes_reads_lists_and_deletes_suffixed_keys(encoding):
    store: dict = {}
    a = zarrpy.create_array(store, shape=(5, 7), dtype="int16", chunks=(2, 3), chunk_key_encoding=encoding,
                            fill_value=0)
    data = np.arange(35, dtype="int16").reshape(5, 7)
    a[...] = data
    assert json.loads(store["zarr.json"])["chunk_key_encoding"] == {
        "name": NAME, "configuration": {"separator": ".", "suffix": ".bin"}}
    keys = sorted(k for k in store if k != "zarr.json")
    assert keys == sorted(f"c.{i}.{j}.bin" for i in range(3) for j in range(3))
    assert sorted(a.stored_chunk_keys()) == keys and a.nchunks_initialized == 9
    a[0:2, 0:3] = 0  # back to the fill value: the chunk is deleted
    assert "c.0.0.bin" not in store and np.array_equal(zarrpy.open_array(store)[...], np.where(
        (np.arange(5)[:, None] < 2) & (np.arange(7) < 3), 0, data))


def test_a_sharded_0d_and_a_grouped_array():
    g = zarrpy.group({})
    s = g.create_array("s", shape=(7, 10), dtype="uint16", chunks=(2, 3), shards=(4, 6),
                       chunk_key_encoding={"name": NAME, "configuration": {"suffix": ".shard"}}, fill_value=0)
    s[...] = 5
    assert sorted(s.stored_chunk_keys()) == ["s/c/0/0.shard", "s/c/0/1.shard", "s/c/1/0.shard", "s/c/1/1.shard"]
    assert int(s[6, 9]) == 5
    z = g.create_array("z", shape=(), dtype="uint8", chunk_key_encoding={"name": NAME, "suffix": ".raw"})
    z[...] = 201
    assert z.stored_chunk_keys() == ["z/c.raw"] and int(z[...]) == 201


def test_v2_has_no_such_encoding():
    with pytest.raises(ValueError, match="use dimension_separator= for Zarr V2 arrays"):
        zarrpy.create_array({}, shape=(4,), dtype="uint8", zarr_format=2,
                            chunk_key_encoding={"name": NAME, "suffix": ".b"})
