"""Peers read what zarrpy writes with the new codecs: zarr-python (cast_value,
scale_offset; its cast_value needs cast-value-rs), zarrs through zarrista
(integer bitround) and tensorstore's n5 driver (n5_default blocks, with the
N5 ``attributes.json`` written beside ``zarr.json``). zarrpy reading what
the peers write is ``test_new_codec_fixtures.py``'s job, and the other
direction for zarr-python is checked here too, on data made here."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrpy
from zarrpy.codecs.cast_value import CastValueCodec
from zarrpy.codecs.n5_default import N5DefaultCodec
from zarrpy.codecs.scale_offset import ScaleOffsetCodec

from tests.integration.oracles import needs_zarr_value_codecs

pytestmark = pytest.mark.integration

zarr = pytest.importorskip("zarr")
pytest.importorskip("cast_value_rs")

CASES = [
    ("float64", [CastValueCodec("uint8", rounding="towards-zero", out_of_range="clamp",
                                scalar_map={"encode": [["NaN", 0], ["Infinity", 255]]})], 0.0),
    ("int32", [CastValueCodec("int8", out_of_range="wrap")], 0),
    ("float32", [ScaleOffsetCodec(offset=10, scale=100), CastValueCodec("int16")], 0.5),
    ("int64", [ScaleOffsetCodec(offset=-3, scale=-7)], -3),
    ("uint16", [CastValueCodec("float32")], 7),
]  # fmt: skip


def _data(dtype: str) -> np.ndarray:
    if dtype.startswith("float"):
        data = np.linspace(-20, 300, 42).astype(dtype).reshape(6, 7)
        if dtype == "float64":
            data[0, 0], data[1, 1] = np.nan, np.inf
        else:
            data = np.clip(data, -300, 300)
        return data
    return (np.arange(42) * 13 - 200).astype(dtype).reshape(6, 7) if dtype[0] == "i" else (np.arange(42) * 1500).astype(dtype).reshape(6, 7)


@needs_zarr_value_codecs
@pytest.mark.parametrize("dtype, filters, fill", CASES, ids=lambda x: str(x)[:40])
def test_zarr_python_reads_what_zarrpy_writes_and_back(tmp_path, dtype, filters, fill):
    data = _data(dtype)
    ours = zarrpy.create_array(str(tmp_path / "ours.zarr"), shape=data.shape, chunks=(4, 3), dtype=dtype,
                               filters=filters, fill_value=fill)  # fmt: skip
    ours[:5] = data[:5]  # the last row left to the fill value
    expected = ours[...]
    theirs = zarr.open_array(str(tmp_path / "ours.zarr"), mode="r")[...]
    assert theirs.dtype == expected.dtype and theirs.tobytes() == expected.tobytes()
    # and zarr-python writing the same codecs: zarrpy reads it equal
    zfilters = [zarr.registry.get_codec_class(f.name).from_dict(f.to_json()) for f in filters]
    z = zarr.create_array(str(tmp_path / "theirs.zarr"), shape=data.shape, chunks=(4, 3), dtype=dtype,
                          filters=zfilters, fill_value=fill)  # fmt: skip
    z[:5] = data[:5]
    back = zarrpy.open_array(str(tmp_path / "theirs.zarr"))[...]
    assert back.tobytes() == z[...].tobytes() == expected.tobytes()


def test_zarrs_reads_zarrpys_integer_bitround(tmp_path):
    zt = pytest.importorskip("zarrista")
    from zarrista.store import FilesystemStore

    from zarrpy.codecs.bitround import BitRoundCodec

    data = (np.arange(-60, 60, dtype=np.int16) * 271).reshape(8, 15)
    arr = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=data.shape, chunks=(3, 4), dtype="int16",
                              filters=[BitRoundCodec(4)], fill_value=0)  # fmt: skip
    arr[...] = data
    got = zt.Array.open(FilesystemStore(str(tmp_path / "a.zarr")), "/")[...]
    assert np.frombuffer(bytes(memoryview(got.buffer())), np.int16).tobytes() == arr[...].tobytes()


def test_tensorstore_reads_zarrpys_n5_blocks(tmp_path):
    ts = pytest.importorskip("tensorstore")
    data = (np.arange(5 * 7 * 3, dtype=np.uint64) * 2654435761 % 2**32).astype(np.uint32).reshape(5, 7, 3)
    n5 = N5DefaultCodec([{"name": "transpose", "configuration": {"order": [2, 1, 0]}},
                         {"name": "bytes", "configuration": {"endian": "big"}},
                         {"name": "gzip", "configuration": {"level": 5}}])  # fmt: skip
    path = tmp_path / "n5.zarr"
    arr = zarrpy.create_array(str(path), shape=data.shape, chunks=(2, 4, 3), dtype="uint32", serializer=n5,
                              compressors=None, fill_value=0, chunk_key_encoding={"name": "v2", "separator": "/"})  # fmt: skip
    arr[...] = data
    attrs = {"dimensions": list(data.shape), "blockSize": [2, 4, 3], "dataType": "uint32",
             "compression": {"type": "gzip", "level": 5, "useZlib": False}}  # fmt: skip
    (path / "attributes.json").write_text(json.dumps(attrs))
    got = ts.open({"driver": "n5", "kvstore": {"driver": "file", "path": str(path)}, "open": True}).result().read().result()
    assert got.tobytes() == data.tobytes()
