"""What a wrong codec name says: one line naming the array, close names that
work (numcodecs' too), and how plugins register; registered extensions zarrpy
lacks say "not supported"; a bare name takes its class's defaults."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrpy
from zarrpy.codecs import BloscCodec, BytesCodec, GzipCodec, ZstdCodec


def _fail(name: str) -> str:
    with pytest.raises(zarrpy.UnknownCodecError) as info:
        zarrpy.create_array({}, shape=(4,), dtype="i1", compressors=[name])
    return str(info.value)


@pytest.mark.parametrize(("typed", "meant"), [
    ("zstdd", "zstd"), ("blosk", "blosc"), ("lz4", "numcodecs.lz4"), ("zlib", "numcodecs.zlib"),
    ("gzp", "gzip"), ("sharding", "sharding_indexed"), ("numcodecs.lz5", "numcodecs.lz4"),
])
def test_unknown_name_is_one_short_line_with_a_suggestion(typed, meant):
    message = _fail(typed)
    assert "\n" not in message and len(message) < 300, message
    assert f"did you mean {meant!r}" in message or f"{meant!r}" in message.split("did you mean", 1)[1]
    assert "://" not in message  # no URL aliases listed


def test_suggested_names_work():
    for name in ("numcodecs.lz4", "numcodecs.zlib"):
        a = zarrpy.create_array({}, shape=(6,), dtype="i2", compressors=[name])
        a[:] = np.arange(6)
        np.testing.assert_array_equal(a[:], np.arange(6))


def test_unknown_name_names_the_entry_point_group():
    message = _fail("frobnicate")
    assert "'zarrpy.codecs'" in message and "did you mean" not in message


def test_unknown_codec_at_open_names_the_array():
    store: dict[str, bytes] = {}
    zarrpy.create_array(store, name="grp/x", shape=(4,), dtype="i1")
    doc = json.loads(store["grp/x/zarr.json"])
    doc["codecs"].append({"name": "zstdd"})
    store["grp/x/zarr.json"] = json.dumps(doc).encode()
    with pytest.raises(zarrpy.UnknownCodecError, match=r"array 'grp/x' in .*unknown codec 'zstdd'; did you mean 'zstd'"):
        zarrpy.open_array(store, path="grp/x")


@pytest.mark.parametrize("name", ["zarrs.gdeflate", "n5_varlen", "pad", "offset", "lzw", "jpeg"])
def test_registered_extensions_zarrpy_lacks_are_not_supported_not_unknown(name):
    message = _fail(name)
    assert f"codec {name!r} is not supported" in message and "unknown" not in message


@pytest.mark.parametrize(("name", "cls"), [("blosc", BloscCodec), ("zstd", ZstdCodec), ("gzip", GzipCodec)])
def test_bare_compressor_name_is_its_class_defaults(name, cls):
    a = zarrpy.create_array({}, shape=(100,), dtype="i4", compressors=[name])
    given_object = zarrpy.create_array({}, shape=(100,), dtype="i4", compressors=[cls()])
    assert a.compressors[0].to_json() == given_object.compressors[0].to_json()
    a[:] = np.arange(100)
    np.testing.assert_array_equal(a[:], np.arange(100))


def test_bare_serializer_name_is_its_class_defaults():
    a = zarrpy.create_array({}, shape=(3,), dtype="f8", serializer="bytes")
    assert a.serializer.to_json() == BytesCodec().to_json()


def test_bare_name_of_a_codec_that_needs_settings_says_which():
    with pytest.raises(zarrpy.CodecError, match="'transpose'.*'order'"):
        zarrpy.create_array({}, shape=(3, 2), dtype="f8", filters=["transpose"])
