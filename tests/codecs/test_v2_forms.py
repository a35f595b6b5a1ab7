"""Codecs own their V2 form: ``v2_id``, ``from_v2_config``, ``to_v2_config``,
found through :func:`zarrpy.codecs.registry.codec_class_for_v2_id`."""

from __future__ import annotations


import numpy as np
import pytest

import zarrpy
from zarrpy.codecs import registry
from zarrpy.codecs.abc import BytesToBytesCodec
from zarrpy.codecs.blosc import BloscCodec
from zarrpy.codecs.bytes import BytesCodec
from zarrpy.codecs.crc32c import Crc32cCodec
from zarrpy.codecs.gzip import GzipCodec
from zarrpy.codecs.numcodecs import NumcodecsArrayCodec, NumcodecsBytesCodec
from zarrpy.codecs.registry import codec_class_for_v2_id, codec_from_json
from zarrpy.codecs.transpose import TransposeCodec
from zarrpy.codecs.vlen_array import VlenArrayCodec
from zarrpy.codecs.vlen_v2 import VlenBytesCodec, VlenUtf8Codec, VlenV2Codec
from zarrpy.codecs.zlib import ZlibCodec
from zarrpy.codecs.zstd import ZstdCodec
from zarrpy.core.dtypes import DataType
from zarrpy.errors import CodecError, UnknownCodecError

STRING = DataType.from_json("string")
BYTES = DataType.from_json("variable_length_bytes")
INT32 = DataType.from_json("int32")

# (V2 config, class, data type for to_v2_config): every built-in codec with a V2 form
CASES = [
    ({"id": "gzip", "level": 1}, GzipCodec, None),
    ({"id": "gzip", "level": 9}, GzipCodec, None),
    ({"id": "zstd", "level": 0}, ZstdCodec, None),
    ({"id": "zstd", "level": 5, "checksum": True}, ZstdCodec, None),
    ({"id": "crc32c"}, Crc32cCodec, None),
    ({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}, BloscCodec, None),
    ({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 256}, BloscCodec, None),
    ({"id": "blosc", "cname": "zlib", "clevel": 1, "shuffle": 0, "blocksize": 0}, BloscCodec, None),
    ({"id": "zlib", "level": 4}, ZlibCodec, None),
    ({"id": "zlib"}, ZlibCodec, None),
    ({"id": "vlen-utf8"}, VlenUtf8Codec, STRING),
    ({"id": "vlen-bytes"}, VlenBytesCodec, BYTES),
    ({"id": "vlen-array", "dtype": "<i2"}, VlenArrayCodec, BYTES),
    ({"id": "delta", "dtype": "<i4"}, NumcodecsArrayCodec, INT32),
    ({"id": "lz4", "acceleration": 1}, NumcodecsBytesCodec, None),
    ({"id": "bz2", "level": 3}, NumcodecsBytesCodec, None),
]


@pytest.mark.parametrize("config, cls, data_type", CASES, ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_builtin_v2_forms_round_trip(config, cls, data_type):
    found = codec_class_for_v2_id(config["id"])
    assert issubclass(found, cls) and found.v2_id == config["id"]
    codec = found.from_v2_config(config, typesize=4)
    assert codec.to_v2_config(data_type) == config
    assert found.from_v2_config(codec.to_v2_config(data_type), typesize=4) == codec
    assert codec_from_json(codec.to_json()) == codec  # the V3 form reads back as the same codec


def test_v2_defaults_are_numcodecs_defaults():
    assert GzipCodec.from_v2_config({"id": "gzip"}).to_json() == {"name": "gzip", "configuration": {"level": 1}}
    assert ZstdCodec.from_v2_config({"id": "zstd"}).to_config() == {"level": 0, "checksum": False}
    blosc = BloscCodec.from_v2_config({"id": "blosc"}, typesize=8)
    assert blosc.to_config() == {"typesize": 8, "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}
    assert BloscCodec.from_v2_config({"id": "blosc", "shuffle": -1}, typesize=1).shuffle == "bitshuffle"
    assert BloscCodec.from_v2_config({"id": "blosc", "shuffle": -1}, typesize=2).shuffle == "shuffle"
    with pytest.raises(CodecError, match="'blosc': 'shuffle'"):
        BloscCodec.from_v2_config({"id": "blosc", "shuffle": 7})


def test_vlen_forms_depend_on_the_data_type():
    assert VlenV2Codec().to_v2_config(STRING) == {"id": "vlen-utf8"}
    assert VlenV2Codec().to_v2_config(BYTES) == {"id": "vlen-bytes"}
    with pytest.raises(CodecError, match="cannot serialise strings"):
        VlenBytesCodec().to_v2_config(STRING)
    with pytest.raises(CodecError, match="variable-length"):
        VlenArrayCodec("<i2").to_v2_config(INT32)
    with pytest.raises(CodecError, match="missing its 'dtype'"):
        VlenArrayCodec.from_v2_config({"id": "vlen-array"})


@pytest.mark.parametrize("codec", [BytesCodec(), TransposeCodec((1, 0))])
def test_codecs_without_v2_id_have_no_v2_form(codec):
    assert codec.v2_id is None
    with pytest.raises(CodecError, match="has no V2 form"):
        codec.to_v2_config(INT32)


def test_unknown_and_refused_ids():
    with pytest.raises(UnknownCodecError, match="no-such-codec"):
        codec_class_for_v2_id("no-such-codec")
    with pytest.raises(CodecError, match="pickle"):
        codec_class_for_v2_id("pickle")


class _Xor(BytesToBytesCodec):
    __slots__ = ("key",)

    def __init__(self, key: int = 0):
        self.key = key

    @classmethod
    def from_config(cls, config):
        return cls(dict(config or {}).get("key", 0))

    def to_config(self):
        return {"key": self.key}

    def encode(self, data, spec):
        return bytes(b ^ self.key for b in data)

    decode = encode


class AcmeXor(_Xor):
    name = "acme.xor"
    v2_id = "acme-xor"
    __slots__ = ()


@pytest.fixture
def clean_registry():
    saved = dict(registry._registry)
    yield
    registry._registry.clear()
    registry._registry.update(saved)


def test_registered_class_is_found_for_its_v2_id(clean_registry):
    with pytest.raises(UnknownCodecError):
        codec_class_for_v2_id("acme-xor")
    registry.register_codec(AcmeXor)
    assert codec_class_for_v2_id("acme-xor") is AcmeXor
    codec = AcmeXor.from_v2_config({"id": "acme-xor", "key": 7})
    assert codec.to_v2_config() == {"id": "acme-xor", "key": 7}

    class NotAClaim(GzipCodec):  # inherits gzip's v2_id: does not take V2 gzip over
        name = "acme.gzip"
        __slots__ = ()

    registry.register_codec(NotAClaim)
    assert codec_class_for_v2_id("gzip") is GzipCodec


def test_registered_class_reads_and_writes_v2_arrays(clean_registry):
    registry.register_codec(AcmeXor)
    store: dict = {}
    data = np.arange(20, dtype="<i4")
    a = zarrpy.create_array(store, shape=(20,), dtype="int32", chunks=(10,), zarr_format=2, fill_value=0,
                            compressors=[{"name": "acme.xor", "configuration": {"key": 165}}])
    a[...] = data
    import json

    assert json.loads(store[".zarray"])["compressor"] == {"id": "acme-xor", "key": 165}
    assert store["0"] == bytes(b ^ 165 for b in data[:10].tobytes())
    np.testing.assert_array_equal(zarrpy.open_array(store, mode="r")[...], data)
