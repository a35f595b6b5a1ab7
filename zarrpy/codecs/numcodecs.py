"""numcodecs adapter: any numcodecs codec as a zarrpy codec, under ``numcodecs.<id>``.

Spec: none (zarr-python's convention, not part of the V3 spec); the names and
configurations are those zarr-python 3 writes with ``zarr.codecs.numcodecs``,
e.g. ``{"name": "numcodecs.zlib", "configuration": {"level": 1}}`` or
``{"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i4"}}``.
The ``configuration`` is the numcodecs ``get_config()`` without ``id``.
V3 names: ``numcodecs.<id>``; V2 ids: ``<id>`` (each class declares its
``v2_id``; the registry falls back to these classes for V2 ids no zarrpy codec
claims, see :func:`zarrpy.codecs.registry.codec_class_for_v2_id`).

**Which kind.** A codec's kind follows a small table and one rule:

=====================  ==========================================================
array-to-array         ``delta``, ``fixedscaleoffset``, ``quantize``, ``astype``,
                       ``bitround``, ``packbits`` (numcodecs "filters")
array-to-bytes         ``pcodec``, ``zfpy`` (these need the ``pcodec`` / ``zfpy``
                       packages: the ``zarrpy[pcodec]`` / ``zarrpy[zfp]``
                       extras; without them the error says so)
refused                ``pickle``, ``json2``, ``msgpack2``, ``categorize``
                       (object arrays), ``vlen-utf8``/``vlen-bytes`` (use the
                       native codecs of those names)
bytes-to-bytes         every other id: compressors (``zlib``, ``bz2``, ``lzma``,
                       ``lz4``, ``blosc`` …), ``shuffle``, checksums, ``base64``
=====================  ==========================================================

Native codecs stay native: ``numcodecs.gzip``, ``numcodecs.zstd`` and
``numcodecs.crc32c`` are aliases of ``gzip``, ``zstd`` and ``crc32c``
(:mod:`zarrpy.codecs.aliases`), ``numcodecs.vlen-array`` is
:mod:`zarrpy.codecs.vlen_array` and ``numcodecs.zlib`` is
:mod:`zarrpy.codecs.zlib` (registered under that name; :func:`codec_class`
itself still makes the adapter). ``numcodecs.blosc`` stays an adapter: its
``shuffle`` is numcodecs' integer (-1 included), which has no native form.

**Lookup.** :func:`codec_class` makes (once per id) a subclass of
:class:`NumcodecsArrayCodec`, :class:`NumcodecsBytesCodec` or
:class:`NumcodecsArrayToBytesCodec` whose ``name`` is ``numcodecs.<id>``; the
registry calls it for any ``numcodecs.``-prefixed name it does not know
(:mod:`zarrpy.codecs.registry`). numcodecs itself is imported on that first
lookup, never by ``import zarrpy``. An id numcodecs does not know (built in or
through its ``numcodecs.codecs`` entry points) is an
:class:`~zarrpy.errors.UnknownCodecError` naming it.

**Filters and byte order.** numcodecs filters *view* their input as their
configured ``dtype`` (and their encoded input as ``astype``). zarrpy's chunks
are in native byte order, so the adapter converts to the configured byte
order before calling numcodecs and back to native after: a V2 ``>i4`` array
with ``delta(dtype=">i4")`` encodes to the same bytes as numcodecs does. A
configured dtype of another kind or size than the chunk's is a
:class:`~zarrpy.errors.CodecError` at bind time.

**Errors.** A bad configuration is a CodecError naming the codec; anything
numcodecs raises while decoding becomes a
:class:`~zarrpy.errors.ChunkDecodeError` naming the codec.

**Bounded decoding.** numcodecs decoders take no output limit. For
``zlib``, ``bz2``, ``lzma``, ``lz4`` and ``blosc`` zarrpy streams the data
with a cap or checks the frame's size header before numcodecs allocates
(:mod:`zarrpy.codecs._compressors`), so a compressed bomb stops at what the
chunk can hold (:mod:`zarrpy.codecs._limits`). Other codecs are decoded by
numcodecs and their output checked after.

>>> cls = codec_class("numcodecs.zlib")
>>> cls.from_config({"level": 1}).to_json()
{'name': 'numcodecs.zlib', 'configuration': {'level': 1}}
>>> codec_class("numcodecs.delta").from_config({"dtype": "<i4"}).to_config()
{'dtype': '<i4'}
"""

from __future__ import annotations

import copy
import difflib
import importlib
import math
import threading
from typing import Any, ClassVar, Mapping

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..core.dtypes import DataType
from ..errors import ChunkDecodeError, CodecError, MetadataError, UnknownCodecError
from ._compressors import BOUNDED
from ._config import did_you_mean
from ._limits import max_decoded_nbytes, too_large
from .abc import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, ChunkSpec, Codec

PREFIX = "numcodecs."

# id -> (config key of the decoded dtype, config key of the encoded dtype)
_ARRAY_TO_ARRAY: dict[str, tuple[str | None, str | None]] = {
    "delta": ("dtype", "astype"),
    "fixedscaleoffset": ("dtype", "astype"),
    "quantize": ("dtype", "astype"),
    "astype": ("decode_dtype", "encode_dtype"),
    "bitround": (None, None),
    "packbits": (None, None),
}
_ARRAY_TO_BYTES = frozenset({"pcodec", "zfpy"})
# id -> (the package numcodecs needs for it, the zarrpy extra that installs it)
_PACKAGES: dict[str, tuple[str, str]] = {"pcodec": ("pcodec", "pcodec"), "zfpy": ("zfpy", "zfp")}
_REFUSED = {
    "pickle": "it runs arbitrary code when a chunk is read",
    "json2": "it encodes Python object arrays, which zarrpy does not have",
    "msgpack2": "it encodes Python object arrays, which zarrpy does not have",
    "categorize": "it encodes Python object / string arrays; zarrpy has no such data type",
    "vlen-utf8": "use the native codec 'vlen-utf8'",
    "vlen-bytes": "use the native codec 'vlen-bytes'",
}
# numcodecs cannot decode its own frames of no bytes for these: the decoder
# compares with one instead (not for every codec: an lzma encoder takes 90 MiB).
_EMPTY_FRAME_FAILS = frozenset({"lz4", "blosc"})
# Settings zarr-python fills in from the data type when an array is created
# (its ``evolve_from_array_spec``): id -> (config key, what it is filled with).
_EVOLVE: dict[str, tuple[str, str]] = {
    "fixedscaleoffset": ("dtype", "dtype"),
    "quantize": ("dtype", "dtype"),
    "astype": ("decode_dtype", "dtype"),
    "shuffle": ("elementsize", "itemsize"),
}

_classes: dict[str, type[Codec]] = {}
_lock = threading.Lock()


def codec_kind(codec_id: str) -> str:
    """``"array_to_array"``, ``"array_to_bytes"`` or ``"bytes_to_bytes"`` for a numcodecs id.

    Raises CodecError for ids zarrpy refuses (object codecs, pickle).
    """
    if codec_id in _REFUSED:
        raise CodecError(f"codec {PREFIX + codec_id!r} is not supported: {_REFUSED[codec_id]}")
    if codec_id in _ARRAY_TO_ARRAY:
        return "array_to_array"
    if codec_id in _ARRAY_TO_BYTES:
        return "array_to_bytes"
    return "bytes_to_bytes"


def codec_class(name: str) -> type[Codec]:
    """The adapter class for ``numcodecs.<id>`` (made once per id, then cached).

    Raises UnknownCodecError if numcodecs has no codec ``<id>``, CodecError if
    zarrpy refuses it.
    """
    if not name.startswith(PREFIX) or len(name) == len(PREFIX):
        raise UnknownCodecError(f"codec {name!r}: not a 'numcodecs.<id>' name")
    codec_id = name[len(PREFIX):]
    _check_package(codec_id)
    cls = _classes.get(codec_id)
    if cls is not None:
        return cls
    kind = codec_kind(codec_id)
    _check_known(codec_id)
    base = {"array_to_array": NumcodecsArrayCodec, "array_to_bytes": NumcodecsArrayToBytesCodec,
            "bytes_to_bytes": NumcodecsBytesCodec}[kind]
    title = "".join(part.capitalize() for part in codec_id.replace("-", "_").split("_"))
    with _lock:
        cls = _classes.get(codec_id)
        if cls is None:
            cls = type(f"Numcodecs{title}Codec", (base,), {
                "__slots__": (), "name": name, "codec_id": codec_id, "v2_id": codec_id, "__module__": __name__,
            })
            _classes[codec_id] = cls
    return cls


def from_numcodecs(codec: Any) -> Codec:
    """The zarrpy codec for a numcodecs codec object (native when zarrpy has one).

    The same as :func:`zarrpy.codecs.registry.codec_from_any` on it, which is
    what ``create_array(filters=/compressors=)`` use: for V3 the codec is
    written as ``numcodecs.<id>`` (what ``zarr.codecs.numcodecs`` writes),
    except gzip, zstd and crc32c, which are written native (and VLenUTF8 /
    VLenBytes, which are the native ``vlen-utf8``/``vlen-bytes``); for V2
    the ``.zarray`` entry is the one zarr-python writes for the same object.

    >>> import numcodecs
    >>> from_numcodecs(numcodecs.Zlib(level=3)).to_json()
    {'name': 'numcodecs.zlib', 'configuration': {'level': 3}}
    >>> from_numcodecs(numcodecs.GZip(level=3)).to_json()
    {'name': 'gzip', 'configuration': {'level': 3}}
    """
    from .user_forms import codec_from_any

    return codec_from_any(codec)


def adapted_names() -> list[str]:
    """Every ``numcodecs.<id>`` name the adapter takes: numcodecs' registered
    ids (entry points included), less the ones zarrpy refuses."""
    import numcodecs.registry as ncr

    ids = set(ncr.codec_registry) | set(ncr.entries)
    return sorted(PREFIX + codec_id for codec_id in ids - set(_REFUSED))


def _check_package(codec_id: str) -> None:
    """UnknownCodecError saying what to install when ``codec_id`` is one of
    numcodecs' codecs that live in another package (numcodecs registers them
    only when that package imports)."""
    package = _PACKAGES.get(codec_id)
    if package is None:
        return
    try:
        importlib.import_module(package[0])
    except ImportError:
        raise UnknownCodecError(
            f"codec {PREFIX + codec_id!r} needs the {package[0]!r} package: pip install 'zarrpy[{package[1]}]'"
        ) from None


def _check_known(codec_id: str) -> None:
    import numcodecs.registry as ncr

    if codec_id not in ncr.codec_registry and codec_id not in ncr.entries:
        close = difflib.get_close_matches(PREFIX + codec_id, adapted_names(), n=3, cutoff=0.75)
        raise UnknownCodecError(
            f"unknown codec {PREFIX + codec_id!r}: numcodecs has no codec with id {codec_id!r} "
            f"(neither built in nor registered through the 'numcodecs.codecs' entry points){did_you_mean(close)}"
        )


def _make_numcodec(name: str, codec_id: str, config: dict[str, Any]) -> Any:
    import numcodecs.registry as ncr

    try:
        return ncr.get_codec({"id": codec_id, **config})
    except Exception as exc:  # numcodecs raises TypeError/ValueError/… for a bad config
        if type(exc).__name__ == "UnknownCodecError":
            raise UnknownCodecError(f"unknown codec {name!r}: numcodecs has no codec with id {codec_id!r}") from None
        raise CodecError(f"codec {name!r}: invalid configuration {config!r}: {type(exc).__name__}: {exc}") from None


def _dtype(name: str, key: str, value: Any) -> np.dtype:
    try:
        dtype: np.dtype = np.dtype(value)
        return dtype
    except TypeError as exc:
        raise CodecError(f"codec {name!r}: {key!r} must be a numpy dtype, got {value!r}: {exc}") from None


def _as_native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=") if dtype.byteorder not in ("=", "|") else dtype


class _NumcodecsCodec(Codec):
    """Shared part: configuration, the wrapped numcodecs object, evolve."""

    codec_id: ClassVar[str]
    __slots__ = ("_config", "_impl")

    def __init__(self, config: Mapping[str, Any] | None = None):
        if config is None:
            config = {}
        if not isinstance(config, Mapping):
            raise CodecError(f"codec {self.name!r}: configuration must be an object, got {config!r}")
        if "id" in config and config["id"] != self.codec_id:
            raise CodecError(f"codec {self.name!r}: configuration 'id' {config['id']!r} does not match")
        self._config: dict[str, Any] = {k: copy.deepcopy(v) for k, v in config.items() if k != "id"}
        self._impl: Any = None
        evolve_key = _EVOLVE.get(self.codec_id, (None,))[0]
        if evolve_key is None or self._config.get(evolve_key) is not None:
            self._numcodec()  # validate now; otherwise once evolve() has filled the key in

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> _NumcodecsCodec:
        return cls(config)

    def to_config(self) -> dict[str, Any]:
        return copy.deepcopy(self._config)

    def evolve(self, spec: ChunkSpec) -> _NumcodecsCodec:
        """Fill in what zarr-python fills in from the data type (e.g.
        fixedscaleoffset's ``dtype``, shuffle's ``elementsize``) if absent."""
        key, what = _EVOLVE.get(self.codec_id, (None, None))
        if key is None or self._config.get(key) is not None or spec.dtype.is_variable:
            return self
        value = spec.dtype.numpy.str if what == "dtype" else spec.dtype.itemsize
        return type(self)({**self._config, key: value})

    def _numcodec(self) -> Any:
        impl = self._impl
        if impl is None:  # a race builds it twice; both are equal and immutable
            impl = _make_numcodec(self.name, self.codec_id, self._config)
            self._impl = impl
        return impl

    def same_stored_form(self, other: Codec) -> bool:
        """Also true for a native codec of the same numcodecs id that reads
        and writes what this configuration does (``numcodecs.blosc`` vs ``blosc``)."""
        if super().same_stored_form(other):
            return True
        return other.v2_id == self.codec_id and other.matches_v2_config({"id": self.codec_id, **self._config})

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.name, self._config))


def _rebuild(name: str, config: dict[str, Any]) -> Codec:
    cls: Any = codec_class(name)  # an adapter class: built from its numcodecs configuration
    return cls(config)  # type: ignore[no-any-return]


class NumcodecsBytesCodec(_NumcodecsCodec, BytesToBytesCodec):
    """A numcodecs compressor or checksum: bytes in, bytes out."""

    __slots__ = ()

    def encode(self, data: bytes, spec: ChunkSpec) -> bytes:
        try:
            out = self._numcodec().encode(data)
        except Exception as exc:
            raise CodecError(f"codec {self.name!r}: cannot encode: {type(exc).__name__}: {exc}") from None
        return _to_bytes(out)

    def decode(self, data: bytes, spec: ChunkSpec) -> bytes:
        """Decode with numcodecs.

        Raises
        ------
        ChunkDecodeError
            If numcodecs fails (corrupt or truncated input, failed checksum)
            or the output is larger than the chunk can hold.
        """
        impl = self._numcodec()
        limit = max_decoded_nbytes(spec)
        if self.codec_id == "blosc":
            # The frame is the native codec's: check its header before c-blosc
            # reads or allocates what it states.
            from .blosc import check_header

            check_header(data, limit, spec, self.name)
        if self.codec_id in _EMPTY_FRAME_FAILS and spec.size == 0 and not spec.dtype.is_variable:
            if data == _to_bytes(impl.encode(b"")):
                return b""
        bounded = BOUNDED.get(self.codec_id)
        if bounded is not None:
            return bounded(self.name, impl, data, limit, spec)
        try:
            out = _to_bytes(impl.decode(data))
        except MemoryError:
            raise
        except Exception as exc:
            raise ChunkDecodeError(f"codec {self.name!r}: corrupt data: {type(exc).__name__}: {exc}") from None
        if len(out) > limit:
            raise ChunkDecodeError(too_large(self.name, limit, spec))
        return out


class NumcodecsArrayCodec(_NumcodecsCodec, ArrayToArrayCodec):
    """A numcodecs filter: fixed-size elements in, fixed-size elements out.

    The encoded chunk has the same shape unless the filter says otherwise
    (``packbits``: ``(1 + ceil(n / 8),)`` bytes); its data type is the
    configured encoded dtype (``astype``, ``encode_dtype``) when there is one.
    """

    __slots__ = ()

    def configured_dtypes(self) -> tuple[np.dtype | None, np.dtype | None]:
        """The configured decoded and encoded dtypes, in their stated byte order.

        None where the configuration names none (the filter keeps the type);
        the encoded dtype defaults to the decoded one, as in numcodecs.
        """
        dec_key, enc_key = _ARRAY_TO_ARRAY[self.codec_id]
        dec = self._config.get(dec_key) if dec_key else None
        enc = self._config.get(enc_key) if enc_key else None
        dec_dt = None if dec is None or dec_key is None else _dtype(self.name, dec_key, dec)
        enc_dt = None if enc is None or enc_key is None else _dtype(self.name, enc_key, enc)
        if enc_dt is None and dec_dt is not None:
            enc_dt = dec_dt  # numcodecs: astype defaults to dtype
        return dec_dt, enc_dt

    def v2_filter_dtypes(self) -> tuple[np.dtype | None, np.dtype | None]:
        """:meth:`configured_dtypes`; ``packbits`` hands on bytes (``u1``)."""
        if self.codec_id == "packbits":
            return None, np.dtype("u1")
        return self.configured_dtypes()

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if spec.dtype.is_variable:
            raise CodecError(f"codec {self.name!r}: data type {spec.dtype.name!r} is variable-length; "
                             "numcodecs filters need fixed-size elements")
        self._numcodec()
        native = spec.dtype.numpy
        if self.codec_id == "packbits":
            if native.kind != "b":
                raise CodecError(f"codec {self.name!r}: needs bool data, got {spec.dtype.name!r}")
            return ChunkSpec((1 + math.ceil(spec.size / 8),), DataType.from_json("uint8"), np.uint8(0))
        if self.codec_id == "bitround" and native.kind != "f":
            raise CodecError(f"codec {self.name!r}: needs float data, got {spec.dtype.name!r}")
        dec_dt, enc_dt = self.configured_dtypes()
        if dec_dt is not None and _as_native(dec_dt) != native:
            raise CodecError(
                f"codec {self.name!r}: configured dtype {dec_dt.str!r} does not match the chunk's "
                f"data type {spec.dtype.name!r}"
            )
        if enc_dt is None or _as_native(enc_dt) == native:
            return spec
        try:
            encoded = DataType.from_numpy(_as_native(enc_dt))
        except MetadataError as exc:
            raise CodecError(f"codec {self.name!r}: encoded dtype {enc_dt.str!r}: {exc}") from None
        return ChunkSpec(spec.shape, encoded, encoded.default_fill())

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        encoded = self.resolve(spec)
        dec_dt, _ = self.configured_dtypes()
        arr = chunk.array
        if dec_dt is not None and arr.dtype != dec_dt:
            arr = arr.astype(dec_dt)  # byte order only: resolve() checked kind and size
        try:
            out = np.asarray(self._numcodec().encode(np.ascontiguousarray(arr)))
        except Exception as exc:
            raise CodecError(f"codec {self.name!r}: cannot encode: {type(exc).__name__}: {exc}") from None
        return _fixed(out, encoded, self.name, CodecError)

    def decode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        """Invert :meth:`encode`; ``spec`` is the decoded chunk's spec.

        Raises ChunkDecodeError naming the codec if numcodecs fails or gives
        the wrong number of elements.
        """
        _, enc_dt = self.configured_dtypes()
        arr = chunk.array
        if enc_dt is not None and arr.dtype != enc_dt and enc_dt.itemsize == arr.dtype.itemsize:
            arr = arr.astype(enc_dt)
        try:
            out = np.asarray(self._numcodec().decode(np.ascontiguousarray(arr)))
        except MemoryError:
            raise
        except Exception as exc:
            raise ChunkDecodeError(f"codec {self.name!r}: corrupt data: {type(exc).__name__}: {exc}") from None
        return _fixed(out, spec, self.name, ChunkDecodeError)


class NumcodecsArrayToBytesCodec(_NumcodecsCodec, ArrayToBytesCodec):
    """A numcodecs codec that serialises a whole numeric array (``pcodec``, ``zfpy``)."""

    __slots__ = ()

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        if spec.dtype.is_variable:
            raise CodecError(f"codec {self.name!r}: data type {spec.dtype.name!r} is variable-length")
        self._numcodec()
        return spec

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        try:
            return _to_bytes(self._numcodec().encode(np.ascontiguousarray(chunk.array)))
        except Exception as exc:
            raise CodecError(f"codec {self.name!r}: cannot encode: {type(exc).__name__}: {exc}") from None

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        if spec.size == 0 and data == self.encode(ArrayBytes.from_array(np.zeros(spec.shape, spec.dtype.numpy)), spec):
            # pcodec cannot decode the stream it writes for no elements
            return ArrayBytes.from_array(np.zeros(spec.shape, spec.dtype.numpy))
        if type(self._numcodec()).__module__ == "numcodecs.zfpy":
            # zfpy trusts the stream's header, and a corrupt one crashes it: read it here
            from ._zfp_lib import decompress_with_header

            return _fixed(decompress_with_header(data, spec.size, self.name), spec, self.name, ChunkDecodeError)
        try:
            out = np.asarray(self._numcodec().decode(data))
        except MemoryError:
            raise
        except Exception as exc:
            raise ChunkDecodeError(f"codec {self.name!r}: corrupt data: {type(exc).__name__}: {exc}") from None
        return _fixed(out, spec, self.name, ChunkDecodeError)


def _fixed(out: np.ndarray, spec: ChunkSpec, name: str, error: type[CodecError]) -> ArrayBytes:
    """``out`` as a native-order chunk of ``spec``, or ``error`` naming the codec.

    Another byte order is converted. Another kind of the same item size is
    reinterpreted, not converted: numcodecs hands on the bytes of its result
    (``bitround`` returns its floats viewed as integers), and so does
    zarr-python.
    """
    native = spec.dtype.numpy
    if out.size != spec.size or out.dtype.itemsize != native.itemsize or out.dtype.hasobject:
        raise error(
            f"codec {name!r}: produced {out.size} elements of {out.dtype.str}, "
            f"expected {spec.size} of {native.str} (shape {spec.shape})"
        )
    if out.dtype.kind != native.kind:
        order = out.dtype.byteorder if out.dtype.byteorder in "<>" else "="
        out = np.ascontiguousarray(out).view(native.newbyteorder(order))
    if out.dtype != native:
        out = out.astype(native)
    return ArrayBytes.from_array(np.ascontiguousarray(out).reshape(spec.shape))


def _to_bytes(out: Any) -> bytes:
    if isinstance(out, bytes):
        return out
    if isinstance(out, np.ndarray):
        return np.ascontiguousarray(out).tobytes()
    return bytes(memoryview(out))


__all__ = [
    "NumcodecsArrayCodec",
    "NumcodecsArrayToBytesCodec",
    "NumcodecsBytesCodec",
    "codec_class",
    "codec_kind",
    "from_numcodecs",
]
