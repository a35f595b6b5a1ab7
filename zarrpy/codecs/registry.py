"""Codec registry: V3 name -> codec class.

Built-in codecs are listed as ``"module:Class"`` strings and imported on first
use, so importing zarrpy loads no codec and starts nothing. Third-party codecs
are found through the entry-point group ``zarrpy.codecs`` (entry name = V3
codec name, value = ``"pkg.module:CodecClass"``), loaded on the first lookup
that misses. :func:`register_codec` adds one by hand.

Whole families of names can be made on demand: ``_PREFIX_FACTORIES`` maps a
name prefix to a ``"module:function"`` that returns the class for a full name
(or raises UnknownCodecError). It is consulted last, after the registry,
aliases and entry points, so a registered class always wins. The one family
is ``numcodecs.<id>``: any numcodecs codec through the adapter
(:mod:`zarrpy.codecs.numcodecs`).

Codecs as users give them (zarr-python and numcodecs objects too) go through
:func:`zarrpy.codecs.user_forms.codec_from_any`.

**V2 ids.** A codec class with a V2 form declares ``v2_id`` (see
:class:`~zarrpy.codecs.abc.Codec`); :func:`codec_class_for_v2_id` finds it,
in this order: loaded registry classes that declare it themselves (those
given to :func:`register_codec` first, the latest winning); the class
registered under the V3 name ``<id>`` or ``numcodecs.<id>`` (the convention
every built-in follows, so a built-in needs no second line and only that one
class is imported); any class from the ``zarrpy.codecs`` entry points
(imported on the first V2 id nothing else claims); and last the
``numcodecs.<id>`` family: a native implementation (``_PREFIX_NATIVE``) or
the adapter, whose classes declare their id too.
"""

from __future__ import annotations

import difflib
import importlib
import threading
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import CodecError, UnknownCodecError
from ._config import did_you_mean
from .abc import Codec
from .aliases import CODEC_ALIASES

ENTRY_POINT_GROUP = "zarrpy.codecs"
"""The entry-point group third-party packages register codecs under
(``name = "pkg.module:CodecClass"``); read once, on the first lookup of
a name not registered already, so importing zarrpy loads no plugin."""

_BUILTIN: dict[str, str] = {
    "bytes": "zarrpy.codecs.bytes:BytesCodec",
    "transpose": "zarrpy.codecs.transpose:TransposeCodec",
    "gzip": "zarrpy.codecs.gzip:GzipCodec",
    "zstd": "zarrpy.codecs.zstd:ZstdCodec",
    "blosc": "zarrpy.codecs.blosc:BloscCodec",
    "crc32c": "zarrpy.codecs.crc32c:Crc32cCodec",
    "sharding_indexed": "zarrpy.codecs.sharding:ShardingCodec",
    "zarrs.vlen": "zarrpy.codecs.vlen:VlenCodec",
    "zarrs.vlen_v2": "zarrpy.codecs.vlen_v2:VlenV2Codec",
    "zarrs.optional": "zarrpy.codecs.optional:OptionalCodec",
    "vlen-utf8": "zarrpy.codecs.vlen_v2:VlenUtf8Codec",
    "vlen-bytes": "zarrpy.codecs.vlen_v2:VlenBytesCodec",
    "numcodecs.vlen-array": "zarrpy.codecs.vlen_array:VlenArrayCodec",
    "reshape": "zarrpy.codecs.reshape:ReshapeCodec",
    "zarrs.squeeze": "zarrpy.codecs.squeeze:SqueezeCodec",
    "bitround": "zarrpy.codecs.bitround:BitRoundCodec",
    "packbits": "zarrpy.codecs.packbits:PackBitsCodec",
    "cast_value": "zarrpy.codecs.cast_value:CastValueCodec",
    "scale_offset": "zarrpy.codecs.scale_offset:ScaleOffsetCodec",
    "n5_default": "zarrpy.codecs.n5_default:N5DefaultCodec",
    "conditional": "zarrpy.codecs.conditional:ConditionalCodec",
    "zfp": "zarrpy.codecs.zfp:ZfpCodec",
    # zarrs' other names for its zfp codec (read; `zfp` is written)
    "zarrs.zfp": "zarrpy.codecs.zfp:ZfpCodec",
    "https://codec.zarrs.dev/array_to_bytes/zfp": "zarrpy.codecs.zfp:ZfpCodec",
}

# Codecs other implementations write that zarrpy cannot read, and why: named
# in the error instead of "unknown codec" (a plugin may still provide one).
_UNSUPPORTED: dict[str, str] = {
    "zarrs.gdeflate": "no Python implementation exists (zarrs' GDeflate, nvCOMP's GPU-friendly "
    "deflate variant; no maintained Python binding is on PyPI)",
}
# Codec names of the zarr-extensions registry (its codecs/ folder) that zarrpy
# has no implementation of yet: "not supported", not "unknown".
_UNSUPPORTED.update(dict.fromkeys((
    "arrow-ipc", "cast-value", "jpeg", "jpegxl", "label_multiset", "lzw", "n5",
    "n5_label_multiset", "n5_varlen", "nanovdb", "offset", "pad", "scale-offset",
    "singleton_dim", "vlen-ndarray",
), "it is in the zarr-extensions registry, and zarrpy does not implement it yet"))

# Native implementations of names in a prefix family. Like the family's
# adapter classes they are not stored in the registry (register_codec can
# claim the name without replace=True), and the family's factory still
# accepts the name first (numcodecs must know the id).
_PREFIX_NATIVE: dict[str, str] = {
    "numcodecs.zlib": "zarrpy.codecs.zlib:ZlibCodec",
}

# name prefix -> "module:function(name) -> codec class"; see the module docstring.
_PREFIX_FACTORIES: dict[str, str] = {
    "numcodecs.": "zarrpy.codecs.numcodecs:codec_class",
}
# name prefix -> "module:function() -> the family's names", for "did you mean".
_PREFIX_NAMES: dict[str, str] = {
    "numcodecs.": "zarrpy.codecs.numcodecs:adapted_names",
}

_registry: dict[str, type[Codec] | str] = dict(_BUILTIN)
_lock = threading.Lock()
_generation = 0  # bumped by every register_codec: what names mean may have changed
_entry_points_loaded = False
_entry_point_names: list[str] = []
_v2_plugins: dict[str, type[Codec]] | None = None  # V2 id -> entry-point class, once scanned

registered = MappingProxyType(_registry)
"""Read-only view of the registry (values may be unimported ``"mod:Class"``)."""


def register_codec(cls: type[Codec], *, name: str | None = None, replace: bool = False) -> None:
    """Register ``cls`` under ``name`` (default ``cls.name``)."""
    if not (isinstance(cls, type) and issubclass(cls, Codec)):
        raise TypeError(f"{cls!r} is not a zarrpy Codec class")
    global _generation
    key = name or cls.name
    with _lock:
        if key in _registry and not replace and _registry[key] is not cls:
            raise CodecError(f"codec {key!r} is already registered; pass replace=True to override")
        _registry[key] = cls
        _generation += 1


def generation() -> int:
    """A number that changes whenever :func:`register_codec` is called:
    what was built from codec names before may now be built otherwise
    (caches of codecs built from JSON key on it)."""
    return _generation


def get_codec_class(name: str) -> type[Codec]:
    """The class registered for ``name`` (aliases and entry points included)."""
    canonical = CODEC_ALIASES.get(name, name)
    found = _registry.get(canonical)
    if found is None:
        _load_entry_points()
        found = _registry.get(canonical)
    if found is None:
        found = _from_prefix_factory(canonical)
    if found is None and canonical in _UNSUPPORTED:
        raise UnknownCodecError(f"codec {name!r} is not supported: {_UNSUPPORTED[canonical]}")
    if found is None:
        raise UnknownCodecError(_unknown_codec_message(name))
    if isinstance(found, str):
        found = _import(found, name)
        with _lock:
            _registry[canonical] = found
    return found


def codec_from_json(obj: Any) -> Codec:
    """Build a codec from a V3 codec object (or the bare-name short-hand)."""
    if isinstance(obj, Codec):
        return obj
    if isinstance(obj, str):
        obj = {"name": obj}
    if not isinstance(obj, Mapping) or not isinstance(obj.get("name"), str):
        raise CodecError(f"codec: expected an object with a 'name', got {obj!r}")
    unknown = set(obj) - {"name", "configuration", "must_understand"}
    if unknown:
        raise CodecError(f"codec {obj['name']!r}: unknown member(s) {sorted(unknown)}")
    return get_codec_class(obj["name"]).from_config(obj.get("configuration"))


def codec_class_for_v2_id(codec_id: str) -> type[Codec]:
    """The codec class for the V2 (numcodecs) id ``codec_id``.

    Found as the module docstring says; an id no zarrpy codec claims is the
    numcodecs adapter's ``numcodecs.<id>``. Raises UnknownCodecError if
    numcodecs has no such codec either, CodecError if zarrpy refuses it.
    """
    for cls in reversed(list(_registry.values())):  # loaded classes; the latest registration wins
        if isinstance(cls, type) and _declared_v2_id(cls) == codec_id:
            return cls
    for name in (codec_id, "numcodecs." + codec_id):
        canonical = CODEC_ALIASES.get(name, name)
        if canonical not in _registry:
            _load_entry_points()
        if canonical in _registry:
            cls = get_codec_class(canonical)
            if cls.v2_id == codec_id:
                return cls
    found = _plugin_v2_classes().get(codec_id)
    if found is not None:
        return found
    family = _from_prefix_factory("numcodecs." + codec_id)
    assert family is not None
    return family


def _declared_v2_id(cls: type[Codec]) -> str | None:
    """The V2 id ``cls`` itself declares (a subclass does not inherit the claim)."""
    return cls.__dict__.get("v2_id")


def _plugin_v2_classes() -> dict[str, type[Codec]]:
    """V2 id -> class for every entry-point codec declaring one (imported once;
    a plugin that fails to load is skipped here and reported when named)."""
    global _v2_plugins
    if _v2_plugins is None:
        _load_entry_points()
        found: dict[str, type[Codec]] = {}
        for name in _entry_point_names:
            try:
                cls = get_codec_class(name)
            except CodecError:
                continue
            if _declared_v2_id(cls) is not None:
                found.setdefault(cls.v2_id, cls)  # type: ignore[arg-type]
        _v2_plugins = found
    return _v2_plugins


def known_codec_names() -> set[str]:
    _load_entry_points()
    return set(_registry) | set(CODEC_ALIASES)


def suggested_codec_names(name: str) -> list[str]:
    """Names that work and look like ``name`` (at most three, best first):
    registered names and aliases without their URL forms, plus the numcodecs
    ids the adapter reads, matched with and without a ``numcodecs.`` prefix."""
    plain = sorted({n for n in known_codec_names() | set(_PREFIX_NATIVE) | _prefix_family_names()
                    if "://" not in n})
    lowered = name.lower()
    close = difflib.get_close_matches(lowered, plain, n=3, cutoff=0.6)
    bare = {n.removeprefix("numcodecs."): n for n in plain if n.startswith("numcodecs.")}
    for match in difflib.get_close_matches(lowered.removeprefix("numcodecs."), list(bare), n=3, cutoff=0.75):
        if bare[match] not in close:
            close.append(bare[match])
    return close[:3]


def _unknown_codec_message(name: str) -> str:
    """One line: the name, what it may have meant, and how plugins are found."""
    return f"unknown codec {name!r}{did_you_mean(suggested_codec_names(name))} ({_PLUGIN_HINT})"


_PLUGIN_HINT = (
    "numcodecs' codecs are named 'numcodecs.<id>'; a third-party codec registers through the "
    f"entry-point group {ENTRY_POINT_GROUP!r}"
)


def _import(target: str, name: str) -> type[Codec]:
    module_name, _, attr = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise UnknownCodecError(f"codec {name!r}: cannot load {target!r}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Codec)):
        raise UnknownCodecError(f"codec {name!r}: {target!r} is not a zarrpy Codec class")
    return cls


def _prefix_family_names() -> set[str]:
    """Every name the prefix families take (numcodecs' ids, imported on demand)."""
    names: set[str] = set()
    for target in _PREFIX_NAMES.values():
        module_name, _, attr = target.partition(":")
        names.update(getattr(importlib.import_module(module_name), attr)())
    return names


def _from_prefix_factory(name: str) -> type[Codec] | None:
    """The class a prefix factory makes for ``name``, or None if no prefix matches.

    Not stored in the registry (the factory caches), so ``register_codec``
    can still claim such a name without ``replace=True``.
    """
    for prefix, target in _PREFIX_FACTORIES.items():
        if name.startswith(prefix):
            module_name, _, attr = target.partition(":")
            cls = getattr(importlib.import_module(module_name), attr)(name)
            native = _PREFIX_NATIVE.get(name)
            return cls if native is None else _import(native, name)
    return None


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    with _lock:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            _registry.setdefault(ep.name, ep.value)
            _entry_point_names.append(ep.name)
        _entry_points_loaded = True


__all__ = [
    "ENTRY_POINT_GROUP",
    "codec_class_for_v2_id",
    "codec_from_json",
    "generation",
    "get_codec_class",
    "register_codec",
    "registered",
]
