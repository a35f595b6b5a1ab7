"""Every codec class zarrpy registers has a :class:`~tests.codecs.contract.CodecContract`
subclass: the built-ins, the native ``numcodecs.<id>`` codecs, every adapter
class the ``numcodecs.`` family makes for an id numcodecs knows, and any
``zarrpy.codecs`` entry-point codec installed."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from pathlib import Path

import numcodecs.registry as ncr
import pytest

from tests.codecs.contract import CodecContract
from zarrpy.codecs import registry
from zarrpy.codecs.numcodecs import codec_kind
from zarrpy.errors import CodecError

HERE = Path(__file__).parent
CONTRACT_MODULES = sorted(p.stem for p in HERE.glob("test_contract_*.py")) + ["test_zlib"]
# numcodecs ids zarrpy refuses on purpose (zarrpy.codecs.numcodecs._REFUSED)
REFUSED = {"pickle", "json2", "msgpack2", "categorize", "vlen-utf8", "vlen-bytes"}


def registered_codec_classes() -> dict[type, str]:
    """Every class the registry can hand out, with a name that finds it."""
    names = set(registry._BUILTIN) | set(registry._PREFIX_NATIVE) | set(registry.CODEC_ALIASES)
    names |= {ep.name for ep in entry_points(group=registry.ENTRY_POINT_GROUP)}
    for codec_id in set(ncr.codec_registry) | set(getattr(ncr, "entries", {})):
        if codec_id in REFUSED:
            continue
        names.add("numcodecs." + codec_id)
    return {registry.get_codec_class(name): name for name in sorted(names)}


def contract_classes() -> dict[type, list[type]]:
    """codec class -> the contract test classes that cover it."""
    for module in CONTRACT_MODULES:
        importlib.import_module(f"tests.codecs.{module}")
    covered: dict[type, list[type]] = {}
    todo = list(CodecContract.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        codec_class = cls.__dict__.get("codec_class")
        if codec_class is not None:
            assert cls.__name__.startswith("Test"), f"{cls.__name__} would not be collected by pytest"
            covered.setdefault(codec_class, []).append(cls)
    return covered


def test_every_registered_codec_class_has_a_contract():
    classes = registered_codec_classes()
    covered = contract_classes()
    missing = sorted(name for cls, name in classes.items() if cls not in covered)
    assert not missing, f"codecs without a CodecContract subclass: {missing}"
    assert len(classes) >= 28  # 12 built-in + numcodecs.zlib + the numcodecs adapters


def test_contract_modules_exist_per_family():
    for family in ("bytes", "transpose", "crc32c", "gzip", "zstd", "blosc", "sharding", "vlen_v2", "vlen",
                   "vlen_array", "numcodecs"):
        assert (HERE / f"test_contract_{family}.py").exists()
    assert "CodecContract" in (HERE / "test_zlib.py").read_text()


@pytest.mark.parametrize("codec_id", sorted(REFUSED))
def test_refused_numcodecs_ids_are_refused(codec_id):
    # the ids left out above are refused by the registry, so have no class to test
    with pytest.raises(CodecError, match="not supported"):
        codec_kind(codec_id)
    with pytest.raises(CodecError):
        registry.get_codec_class("numcodecs." + codec_id)
