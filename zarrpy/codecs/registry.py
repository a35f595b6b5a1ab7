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

:func:`codec_from_any` is the one entry point for codecs given by users: it
also takes numcodecs and zarr-python codec objects (see there).
"""

from __future__ import annotations

import enum
import importlib
import threading
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import CodecError, UnknownCodecError
from .abc import Codec
from .aliases import CODEC_ALIASES

ENTRY_POINT_GROUP = "zarrpy.codecs"

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
    "vlen-utf8": "zarrpy.codecs.vlen_v2:VlenUtf8Codec",
    "vlen-bytes": "zarrpy.codecs.vlen_v2:VlenBytesCodec",
    "numcodecs.vlen-array": "zarrpy.codecs.vlen_array:VlenArrayCodec",
}

# name prefix -> "module:function(name) -> codec class"; see the module docstring.
_PREFIX_FACTORIES: dict[str, str] = {
    "numcodecs.": "zarrpy.codecs.numcodecs:codec_class",
}

_registry: dict[str, type[Codec] | str] = dict(_BUILTIN)
_lock = threading.Lock()
_entry_points_loaded = False

registered = MappingProxyType(_registry)
"""Read-only view of the registry (values may be unimported ``"mod:Class"``)."""


def register_codec(cls: type[Codec], *, name: str | None = None, replace: bool = False) -> None:
    """Register ``cls`` under ``name`` (default ``cls.name``)."""
    if not (isinstance(cls, type) and issubclass(cls, Codec)):
        raise TypeError(f"{cls!r} is not a zarrpy Codec class")
    key = name or cls.name
    with _lock:
        if key in _registry and not replace and _registry[key] is not cls:
            raise CodecError(f"codec {key!r} is already registered; pass replace=True to override")
        _registry[key] = cls


def get_codec_class(name: str) -> type[Codec]:
    """The class registered for ``name`` (aliases and entry points included)."""
    canonical = CODEC_ALIASES.get(name, name)
    found = _registry.get(canonical)
    if found is None:
        _load_entry_points()
        found = _registry.get(canonical)
    if found is None:
        found = _from_prefix_factory(canonical)
    if found is None:
        raise UnknownCodecError(
            f"unknown codec {name!r}; known codecs: {', '.join(sorted(known_codec_names()))}. "
            f"Third-party codecs are found through the entry-point group {ENTRY_POINT_GROUP!r}."
        )
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


def codec_from_any(value: Any, what: str | None = None, *, itemsize: int | None = None) -> Codec:
    """A zarrpy codec for any form users of zarr-python type.

    - a zarrpy :class:`Codec` (returned as is);
    - a V3 JSON object ``{"name", "configuration"?}`` or a bare name;
    - numcodecs' form ``{"id": ..., **config}``, or a numcodecs object
      (``codec_id`` and ``get_config()``): ``numcodecs.<id>``, which is
      native for gzip, zstd and crc32c (:mod:`.aliases`); ``VLenUTF8`` and
      ``VLenBytes`` are the native ``vlen-utf8``/``vlen-bytes``;
    - a zarr-python codec object, recognised by its ``to_dict()`` (zarr is
      never imported). Enums, tuples and numpy scalars in it become JSON
      values, nested codec objects (sharding's ``codecs``) are converted
      the same way, and the settings zarr-python leaves to be filled in from
      the data type (``BloscCodec()``'s ``typesize`` and ``shuffle``) are
      filled in as zarr-python does: ``itemsize`` is the array's item size.

    ``what`` names the argument (``"compressors[1]"``) in errors.

    >>> import numcodecs
    >>> codec_from_any(numcodecs.Zlib(level=1)).to_json()
    {'name': 'numcodecs.zlib', 'configuration': {'level': 1}}
    >>> codec_from_any({"id": "zstd", "level": 3}).to_json()
    {'name': 'zstd', 'configuration': {'level': 3, 'checksum': False}}

    Raises
    ------
    CodecError
        Naming ``what`` and the value, for anything else or a bad
        configuration (UnknownCodecError for an unknown name).
    """
    try:
        return _codec_from_any(value, itemsize)
    except CodecError as exc:
        if what is None:
            raise
        cls = UnknownCodecError if isinstance(exc, UnknownCodecError) else CodecError
        raise cls(f"{what}: cannot use {value!r}: {exc}") from exc


def _codec_from_any(value: Any, itemsize: int | None) -> Codec:
    if isinstance(value, (Codec, str)):
        return codec_from_json(value)
    if isinstance(value, Mapping):
        if "name" not in value and "id" in value:
            return _from_numcodecs_config(_plain(value, itemsize))
        return codec_from_json(_plain(value, itemsize))
    if isinstance(getattr(value, "codec_id", None), str) and callable(getattr(value, "get_config", None)):
        return _from_numcodecs_config(_plain(_call(value, "get_config"), itemsize))
    if callable(getattr(value, "to_dict", None)):
        return codec_from_json(_zarr_python_codec_json(value, itemsize))
    raise CodecError(
        f"expected a codec: a zarrpy, zarr-python or numcodecs codec object, a codec JSON object "
        f"or a codec name, got {type(value).__name__} {value!r}"
    )


def _from_numcodecs_config(config: Any) -> Codec:
    """``{"id": ..., **config}`` as the codec ``numcodecs.<id>``."""
    if not isinstance(config, dict) or not isinstance(config.get("id"), str):
        raise CodecError(f"a numcodecs configuration needs a string 'id', got {config!r}")
    config = dict(config)
    codec_id = config.pop("id")
    if codec_id == "crc32c" and config.get("location") == "end":
        del config["location"]  # numcodecs' default, and the only place V3's crc32c has
    # numcodecs' VLenUTF8/VLenBytes write the layout of zarrpy's codecs of the same names
    name = codec_id if codec_id in ("vlen-utf8", "vlen-bytes") else f"numcodecs.{codec_id}"
    return codec_from_json({"name": name, "configuration": config})


def _zarr_python_codec_json(codec: Any, itemsize: int | None) -> dict[str, Any]:
    """The V3 JSON of a zarr-python codec object, with its tunable settings resolved."""
    doc = _plain(_call(codec, "to_dict"), itemsize)
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        raise CodecError(f"{type(codec).__name__}.to_dict() gave {doc!r}, not a codec object with a 'name'")
    config = doc.get("configuration")
    if isinstance(config, dict):
        for key, val in config.items():
            nested = getattr(codec, key, None)
            if isinstance(nested, (list, tuple)) and nested and all(_is_codec_like(c) for c in nested):
                config[key] = [codec_from_any(c, itemsize=itemsize).to_json() for c in nested]
        # zarr-python fills settings it was not given from the data type
        # (its BloscCodec.evolve_from_array_spec); to_dict shows placeholders.
        tunable = getattr(codec, "_tunable_attrs", None) or ()
        if doc["name"] == "blosc":
            if "typesize" in tunable:
                config.pop("typesize", None)  # evolve() fills in the item size
            if "shuffle" in tunable and itemsize is not None:
                config["shuffle"] = "bitshuffle" if itemsize == 1 else "shuffle"
    return doc


def _is_codec_like(value: Any) -> bool:
    return isinstance(value, Codec) or callable(getattr(value, "to_dict", None)) or (
        isinstance(getattr(value, "codec_id", None), str) and callable(getattr(value, "get_config", None))
    )


def _call(obj: Any, method: str) -> Any:
    try:
        return getattr(obj, method)()
    except Exception as exc:  # a foreign object: anything it raises is a bad codec
        raise CodecError(f"{type(obj).__name__}.{method}() failed: {type(exc).__name__}: {exc}") from None


def _plain(value: Any, itemsize: int | None) -> Any:
    """``value`` with enums, tuples, numpy scalars/arrays and nested codec
    objects turned into JSON values (foreign codecs' dicts hold all of these)."""
    if isinstance(value, enum.Enum):
        return _plain(value.value, itemsize)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, itemsize) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, itemsize) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if _is_codec_like(value):
        return codec_from_any(value, itemsize=itemsize).to_json()
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # numpy scalar or array
        return _plain(value.tolist(), itemsize)
    return value


def known_codec_names() -> set[str]:
    _load_entry_points()
    return set(_registry) | set(CODEC_ALIASES)


def _import(target: str, name: str) -> type[Codec]:
    module_name, _, attr = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise UnknownCodecError(f"codec {name!r}: cannot load {target!r}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Codec)):
        raise UnknownCodecError(f"codec {name!r}: {target!r} is not a zarrpy Codec class")
    return cls


def _from_prefix_factory(name: str) -> type[Codec] | None:
    """The class a prefix factory makes for ``name``, or None if no prefix matches.

    Not stored in the registry (the factory caches), so ``register_codec``
    can still claim such a name without ``replace=True``.
    """
    for prefix, target in _PREFIX_FACTORIES.items():
        if name.startswith(prefix):
            module_name, _, attr = target.partition(":")
            return getattr(importlib.import_module(module_name), attr)(name)
    return None


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    with _lock:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            _registry.setdefault(ep.name, ep.value)
        _entry_points_loaded = True


__all__ = ["ENTRY_POINT_GROUP", "codec_from_any", "codec_from_json", "get_codec_class", "register_codec", "registered"]
