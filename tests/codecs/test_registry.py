"""Codec registry: built-ins, aliases, codec JSON forms, register_codec, entry points."""

from __future__ import annotations

import sys
import textwrap

import pytest

from zarrpy.codecs import registry
from zarrpy.codecs.abc import BytesToBytesCodec, Codec
from zarrpy.codecs.blosc import BloscCodec
from zarrpy.codecs.bytes import BytesCodec
from zarrpy.codecs.crc32c import Crc32cCodec
from zarrpy.codecs.gzip import GzipCodec
from zarrpy.codecs.registry import ENTRY_POINT_GROUP, codec_from_json, get_codec_class, register_codec, registered
from zarrpy.codecs.transpose import TransposeCodec
from zarrpy.codecs.zstd import ZstdCodec
from zarrpy.errors import CodecError, UnknownCodecError

BUILTINS = {
    "bytes": BytesCodec,
    "transpose": TransposeCodec,
    "gzip": GzipCodec,
    "zstd": ZstdCodec,
    "blosc": BloscCodec,
    "crc32c": Crc32cCodec,
}


@pytest.fixture
def clean_registry(monkeypatch):
    """Undo every registration a test makes."""
    saved = dict(registry._registry)
    monkeypatch.setattr(registry, "_entry_points_loaded", registry._entry_points_loaded)
    yield registry._registry
    registry._registry.clear()
    registry._registry.update(saved)


class ReverseCodec(BytesToBytesCodec):
    name = "test.reverse"
    __slots__ = ()

    def encode(self, data, spec):
        return bytes(data)[::-1]

    def decode(self, data, spec):
        return bytes(data)[::-1]


class OtherReverseCodec(ReverseCodec):
    __slots__ = ()


# -- built-ins and aliases -----------------------------------------------


@pytest.mark.parametrize("name, cls", sorted(BUILTINS.items()))
def test_builtins_resolve_to_their_class(name, cls):
    assert get_codec_class(name) is cls
    assert cls.name == name
    assert name in registered


def test_registered_view_is_read_only():
    with pytest.raises(TypeError):
        registered["gzip"] = GzipCodec  # type: ignore[index]


@pytest.mark.parametrize(
    "alias, cls",
    [("endian", BytesCodec), ("numcodecs.gzip", GzipCodec), ("numcodecs.zstd", ZstdCodec), ("numcodecs.crc32c", Crc32cCodec)],
)
def test_aliases(alias, cls):
    assert get_codec_class(alias) is cls


def test_alias_endian_builds_a_bytes_codec_that_writes_its_v3_name():
    codec = codec_from_json({"name": "endian", "configuration": {"endian": "little"}})
    assert isinstance(codec, BytesCodec)
    assert codec.to_json() == {"name": "bytes", "configuration": {"endian": "little"}}


def test_unknown_codec_suggests_close_names_and_the_entry_point_group():
    with pytest.raises(UnknownCodecError) as info:
        get_codec_class("lzmaa")
    message = str(info.value)
    assert "'lzmaa'" in message
    assert "did you mean 'numcodecs.lzma'" in message
    assert not any(name in message for name in ("transpose", "sharding_indexed", "://"))  # no full listing
    assert "zarrpy.codecs" in message and ENTRY_POINT_GROUP == "zarrpy.codecs"
    assert isinstance(info.value, CodecError)


def test_unknown_codec_through_codec_from_json():
    with pytest.raises(UnknownCodecError, match="'nope'"):
        codec_from_json({"name": "nope", "configuration": {}})


# -- codec JSON forms ----------------------------------------------------


def test_short_hand_name_string():
    assert codec_from_json("crc32c") == Crc32cCodec()
    assert codec_from_json("gzip") == GzipCodec(5)


def test_codec_objects_pass_through():
    codec = ZstdCodec(3)
    assert codec_from_json(codec) is codec


def test_must_understand_is_accepted():
    assert codec_from_json({"name": "crc32c", "must_understand": True}) == Crc32cCodec()


@pytest.mark.parametrize("obj", [None, 3, [], {"configuration": {}}, {"name": 5}, {"name": None}])
def test_malformed_codec_objects(obj):
    with pytest.raises(CodecError, match="codec"):
        codec_from_json(obj)


def test_unknown_member_names_the_codec():
    with pytest.raises(CodecError, match="'gzip'.*'level'"):
        codec_from_json({"name": "gzip", "level": 5})


def test_bad_configuration_names_codec_and_field():
    with pytest.raises(CodecError, match="'zstd'.*'level'"):
        codec_from_json({"name": "zstd", "configuration": {"level": "99"}})


# -- register_codec ------------------------------------------------------


def test_register_new_codec(clean_registry):
    register_codec(ReverseCodec)
    assert get_codec_class("test.reverse") is ReverseCodec
    assert codec_from_json({"name": "test.reverse"}).encode(b"abc", None) == b"cba"


def test_register_under_another_name(clean_registry):
    register_codec(ReverseCodec, name="test.rev2")
    assert get_codec_class("test.rev2") is ReverseCodec


def test_register_same_class_twice_is_fine(clean_registry):
    register_codec(ReverseCodec)
    register_codec(ReverseCodec)
    assert get_codec_class("test.reverse") is ReverseCodec


def test_register_conflict_needs_replace(clean_registry):
    register_codec(ReverseCodec)
    with pytest.raises(CodecError, match="'test.reverse'.*replace=True"):
        register_codec(OtherReverseCodec)
    assert get_codec_class("test.reverse") is ReverseCodec
    register_codec(OtherReverseCodec, replace=True)
    assert get_codec_class("test.reverse") is OtherReverseCodec


def test_replacing_a_builtin(clean_registry):
    class MyGzip(GzipCodec):
        __slots__ = ()

    with pytest.raises(CodecError, match="'gzip'"):
        register_codec(MyGzip)
    register_codec(MyGzip, replace=True)
    assert get_codec_class("gzip") is MyGzip
    assert get_codec_class("numcodecs.gzip") is MyGzip  # aliases follow


@pytest.mark.parametrize("thing", [object, GzipCodec(1), "zarrpy.codecs.gzip:GzipCodec", int])
def test_register_rejects_non_codec_classes(thing, clean_registry):
    with pytest.raises(TypeError):
        register_codec(thing)  # type: ignore[arg-type]


# -- entry points ----------------------------------------------------------


PLUGIN = textwrap.dedent(
    """
    from zarrpy.codecs.abc import BytesToBytesCodec

    class XorCodec(BytesToBytesCodec):
        name = "fake.xor"
        __slots__ = ()

        def encode(self, data, spec):
            return bytes(b ^ 0x5A for b in data)

        decode = encode

    NotACodec = object
    """
)


@pytest.fixture
def fake_distribution(tmp_path, monkeypatch, clean_registry):
    """An installed distribution declaring three ``zarrpy.codecs`` entry points."""
    dist = tmp_path / "zarrpy_fake_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: zarrpy-fake-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[zarrpy.codecs]\n"
        "fake.xor = zarrpy_fake_plugin_mod:XorCodec\n"
        "fake.missing = zarrpy_fake_no_such_module:Codec\n"
        "fake.notcodec = zarrpy_fake_plugin_mod:NotACodec\n"
    )
    (tmp_path / "zarrpy_fake_plugin_mod.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    monkeypatch.delitem(sys.modules, "zarrpy_fake_plugin_mod", raising=False)
    yield
    sys.modules.pop("zarrpy_fake_plugin_mod", None)


def test_entry_point_codec_is_found_lazily(fake_distribution):
    assert "fake.xor" in registry.known_codec_names()
    assert "zarrpy_fake_plugin_mod" not in sys.modules  # listed, not imported
    cls = get_codec_class("fake.xor")
    assert cls.__name__ == "XorCodec" and issubclass(cls, Codec)
    codec = codec_from_json({"name": "fake.xor"})
    assert codec.decode(codec.encode(b"abc", None), None) == b"abc"


def test_entry_point_is_loaded_on_first_miss(fake_distribution):
    assert get_codec_class("fake.xor").name == "fake.xor"


@pytest.mark.parametrize("name, reason", [("fake.missing", "cannot load"), ("fake.notcodec", "not a zarrpy Codec")])
def test_broken_entry_points_are_unknown_codec_errors(fake_distribution, name, reason):
    with pytest.raises(UnknownCodecError, match=f"'{name}'.*{reason}"):
        get_codec_class(name)


def test_entry_points_do_not_shadow_builtins(tmp_path, monkeypatch, clean_registry):
    dist = tmp_path / "zarrpy_shadow-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: zarrpy-shadow\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[zarrpy.codecs]\ngzip = zarrpy_fake_no_such_module:Gzip\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    registry.known_codec_names()
    assert get_codec_class("gzip") is GzipCodec
