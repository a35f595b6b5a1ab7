"""zarrs' ``numcodecs.vlen-array`` with an empty configuration on string and bytes data.

zarrs implements numcodecs' three VLen names as one interleaved layout
decoupled from the data type (its ``vlen_v2`` macro), so it writes
``{"name": "numcodecs.vlen-array", "configuration": {}}`` on ``string`` or
``bytes`` arrays with the chunk bytes ``vlen-utf8`` / ``vlen-bytes`` write.
zarrpy reads such arrays, keeps the name, writes the same bytes, and refuses
to give the form a V2 id (numcodecs' VLenArray needs a dtype).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import zarrpy
from zarrpy.codecs.registry import codec_from_json
from zarrpy.codecs.vlen_array import VlenArrayCodec
from zarrpy.codecs.vlen_v2 import UntypedVlenArrayCodec
from zarrpy.errors import CodecError

CASES = [
    ("string", str, ["a", "", "héllo wörld", "x" * 300, "tab\tnul\x00end"], "vlen-utf8"),
    ("bytes", "variable_length_bytes", [b"a", b"", b"\x00\x01\xff", b"q" * 300, b"\x00"], "vlen-bytes"),
]


def _zarr_dtype(dtype):
    """zarr-python's spelling: ``bytes`` there means fixed-length bytes."""
    if dtype == "variable_length_bytes":
        from zarr.dtype import VariableLengthBytes

        return VariableLengthBytes()
    return dtype


def test_no_v2_form_and_nothing_stored():
    store: dict = {}
    with pytest.raises(zarrpy.MetadataError, match="no Zarr V2 form"):
        zarrpy.create_array(store, shape=(3,), chunks=(2,), dtype=str, zarr_format=2,
                            serializer={"name": "numcodecs.vlen-array", "configuration": {}})
    assert store == {}


def test_empty_configuration_is_the_untyped_form():
    assert isinstance(codec_from_json({"name": "numcodecs.vlen-array", "configuration": {}}), UntypedVlenArrayCodec)
    assert isinstance(codec_from_json({"name": "numcodecs.vlen-array"}), UntypedVlenArrayCodec)
    typed = codec_from_json({"name": "numcodecs.vlen-array", "configuration": {"dtype": "<i4"}})
    assert isinstance(typed, VlenArrayCodec)
    with pytest.raises(CodecError, match="numcodecs.vlen-array"):
        codec_from_json({"name": "numcodecs.vlen-array", "configuration": {"dtyp": "<i4"}})
    with pytest.raises(CodecError, match="no Zarr V2 form"):
        UntypedVlenArrayCodec().to_v2_config()


@pytest.mark.integration
@pytest.mark.parametrize(("kind", "dtype", "values", "zp_codec"), CASES)
def test_reads_zarrs_form_of_zarr_python_chunks(tmp_path, kind, dtype, values, zp_codec):
    """Chunks encoded by zarr-python's vlen codec, metadata naming zarrs' form: zarrpy reads them."""
    zarr = pytest.importorskip("zarr")
    path = tmp_path / "a.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(path), shape=(5,), chunks=(2,), dtype=_zarr_dtype(dtype), fill_value=values[1],
                              compressors=None)
        z[...] = np.array(values, dtype=object)
    doc = json.loads((path / "zarr.json").read_text())
    assert doc["codecs"][0]["name"] == zp_codec
    doc["codecs"][0] = {"name": "numcodecs.vlen-array", "configuration": {}}
    (path / "zarr.json").write_text(json.dumps(doc))
    a = zarrpy.open_array(str(path), mode="r")
    assert a.serializer.to_json() == {"name": "numcodecs.vlen-array", "configuration": {}}
    assert a[...].tolist() == values


@pytest.mark.integration
@pytest.mark.parametrize(("kind", "dtype", "values", "zp_codec"), CASES)
def test_writes_the_same_bytes_as_zarr_python(tmp_path, kind, dtype, values, zp_codec):
    zarr = pytest.importorskip("zarr")
    ours = zarrpy.create_array(str(tmp_path / "ours.zarr"), shape=(5,), chunks=(2,), dtype=dtype,
                               serializer={"name": "numcodecs.vlen-array", "configuration": {}}, compressors=None,
                               fill_value=values[1])
    ours[...] = np.array(values, dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.create_array(str(tmp_path / "theirs.zarr"), shape=(5,), chunks=(2,), dtype=_zarr_dtype(dtype),
                                   compressors=None, fill_value=values[1])
        theirs[...] = np.array(values, dtype=object)
    for key in ("c/0", "c/1", "c/2"):
        assert (tmp_path / "ours.zarr" / key).read_bytes() == (tmp_path / "theirs.zarr" / key).read_bytes()
    reopened = zarrpy.open_array(str(tmp_path / "ours.zarr"), mode="r")
    assert reopened[...].tolist() == values
    doc = json.loads((tmp_path / "ours.zarr" / "zarr.json").read_text())
    assert doc["codecs"] == [{"name": "numcodecs.vlen-array", "configuration": {}}]
