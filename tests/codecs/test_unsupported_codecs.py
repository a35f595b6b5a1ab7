"""Codecs other implementations write that zarrpy cannot run say so by name:
``zarrs.gdeflate`` (no Python implementation exists) and the numcodecs codecs
whose package is missing (the error names the package and the extra)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import zarrpy
from zarrpy.codecs import numcodecs as adapter
from zarrpy.codecs.registry import codec_from_json, get_codec_class
from zarrpy.errors import UnknownCodecError


def test_gdeflate_is_named_as_unsupported():
    with pytest.raises(UnknownCodecError, match=r"codec 'zarrs.gdeflate' is not supported: no Python implementation"):
        codec_from_json({"name": "zarrs.gdeflate", "configuration": {"level": 5}})


def test_opening_a_gdeflate_array_names_the_codec(tmp_path):
    meta = {
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0.0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zarrs.gdeflate", "configuration": {"level": 5}}],
    }  # fmt: skip
    (tmp_path / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(UnknownCodecError, match="'zarrs.gdeflate' is not supported"):
        zarrpy.open_array(str(tmp_path))[...]


@pytest.mark.parametrize(("codec_id", "package", "extra"), [("pcodec", "pcodec", "pcodec"), ("zfpy", "zfpy", "zfp")])
def test_missing_package_is_named(monkeypatch, codec_id, package, extra):
    monkeypatch.setitem(sys.modules, package, None)  # import fails as if not installed
    with pytest.raises(UnknownCodecError, match=rf"'numcodecs.{codec_id}' needs the '{package}' package: "
                                                rf"pip install 'zarrpy\[{extra}\]'"):
        get_codec_class(f"numcodecs.{codec_id}")


@pytest.mark.parametrize("codec_id", ["pcodec", "zfpy"])
def test_installed_packages_work_through_the_adapter(codec_id):
    # the test extra installs both: these must not be skipped
    cls = get_codec_class(f"numcodecs.{codec_id}")
    assert cls.codec_id == codec_id and codec_id in adapter._PACKAGES
    store = zarrpy.create_array({}, shape=(6, 5), dtype="float64", chunks=(3, 5),
                                serializer={"name": f"numcodecs.{codec_id}", "configuration":
                                            {"level": 8} if codec_id == "pcodec" else {"mode": 4, "tolerance": 0.0}})
    data = np.arange(30, dtype=np.float64).reshape(6, 5) / 4
    store[...] = data
    assert np.array_equal(store[...], data)
