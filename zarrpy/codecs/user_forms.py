"""Codecs in every form users type: the one parser of ``filters=``,
``serializer=``, ``compressors=`` and ``codecs=`` items.

zarrpy codec objects, V3 JSON objects and names, numcodecs objects and their
``{"id": ...}`` form, and zarr-python codec objects (through ``to_dict()``,
without importing zarr) all become zarrpy codecs here.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Sequence
from typing import Any, Literal, Mapping, Protocol, TypeAlias

from ..errors import CodecError, UnknownCodecError
from .abc import Codec
from .registry import codec_from_json, get_codec_class


class NumcodecsCodecLike(Protocol):
    """A numcodecs codec object, as far as zarrpy looks at it: its
    ``codec_id`` and ``get_config()`` (numcodecs is not needed to type it)."""

    @property
    def codec_id(self) -> object:
        """The numcodecs id, e.g. ``"zlib"``."""
        ...

    def get_config(self) -> object:
        """The numcodecs configuration ``{"id": ..., **settings}``."""
        ...


class ZarrPythonCodecLike(Protocol):
    """A zarr-python codec object, as far as zarrpy looks at it: its
    ``to_dict()`` V3 JSON (zarr is never imported)."""

    def to_dict(self) -> object:
        """The codec's V3 JSON object ``{"name", "configuration"?}``."""
        ...


CodecLike: TypeAlias = Codec | str | Mapping[str, object] | NumcodecsCodecLike | ZarrPythonCodecLike
"""One codec in any form :func:`codec_from_any` takes: a zarrpy codec, a V3
name or JSON object, numcodecs' ``{"id": ...}`` form or object, or a
zarr-python codec object."""

FiltersLike: TypeAlias = CodecLike | Sequence[CodecLike] | None
"""``filters=``: array-to-array codecs, one or a list (None: none), as zarr-python's ``FiltersLike``."""

SerializerLike: TypeAlias = Literal["auto"] | CodecLike
"""``serializer=``: the array-to-bytes codec, or ``"auto"`` (chosen from the
data type), as zarr-python's ``SerializerLike``."""

CompressorsLike: TypeAlias = Literal["auto"] | CodecLike | Sequence[CodecLike] | None
"""``compressors=``: bytes-to-bytes codecs, one or a list; ``"auto"`` (zstd)
or None (none), as zarr-python's ``CompressorsLike``."""


def codec_from_any(value: CodecLike, what: str | None = None, *, itemsize: int | None = None) -> Codec:
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
    if isinstance(value, str):
        return _codec_from_name(value)
    if isinstance(value, Codec):
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


def _codec_from_name(name: str) -> Codec:
    """A bare name (``compressors=["blosc"]``, ``serializer="bytes"``): the
    codec with its class's defaults, as ``BloscCodec()`` has them, where the
    stored JSON form requires settings; a class that needs settings is built
    from the empty configuration, whose error names what is missing."""
    cls = get_codec_class(name)
    if _takes_no_arguments(cls):
        return cls()
    return codec_from_json(name)


def _takes_no_arguments(cls: type[Codec]) -> bool:
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


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
        order = getattr(codec, "subchunk_write_order", None)
        if doc["name"] == "sharding_indexed" and order is not None:
            # zarr-python keeps the write order on the object, out of to_dict().
            config["subchunk_write_order"] = _plain(order, itemsize)
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


__all__ = [
    "CodecLike", "CompressorsLike", "FiltersLike", "NumcodecsCodecLike", "SerializerLike", "ZarrPythonCodecLike",
    "codec_from_any",
]
