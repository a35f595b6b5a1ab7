"""V2 <-> V3 array metadata: one V3 codec list for V2 data (one pipeline for both).

A V2 array's ``dtype``, ``order``, ``filters`` and ``compressor`` describe the
same bytes as a V3 ``data_type`` plus a ``codecs`` list, as in zarrs'
``convert.rs`` and zarr-python's ``zarr migrate v3`` (ZARR-FORMAT-NOTES.md §13).
:func:`v2_to_v3` builds that V3 description, so V2 chunks are read and written
by the same :class:`~zarrpy.codecs.chain.CodecChain` as V3 chunks, without
re-encoding; :func:`v3_to_v2` goes back, for creating V2 arrays.

=============================  ===============================================
V2                             V3
=============================  ===============================================
``dimension_separator`` s      ``chunk_key_encoding {"name": "v2", s}``
``order: "F"``                 ``transpose [n-1 … 0]`` first (any ndim, 0-d too)
numeric dtype                  core data type; ``bytes`` with the endian of the
                               stored order (``<``/``|`` little, ``>`` big;
                               none for 1-byte types), after the filters
``|V<n>``                      ``r<8n>`` with ``bytes``
``|O`` + ``vlen-utf8``         ``string`` with ``vlen-utf8`` (same bytes)
``|O`` + ``vlen-bytes``        ``variable_length_bytes`` with ``vlen-bytes``
``|O`` + ``vlen-array``        ``numcodecs.vlen-array {"dtype"}``; data type:
                               ``variable_length_bytes`` as a stand-in until
                               zarrpy has a ragged data type
filters (delta, astype …)      ``numcodecs.<id>`` array-to-array, before
                               ``bytes``; a filter that works on bytes
                               (shuffle, checksums …) goes after it
any codec id                   the codec class that declares that V2 id
                               (:func:`~zarrpy.codecs.registry.codec_class_for_v2_id`),
                               built through its ``from_v2_config``: native
                               ``gzip``/``zstd``/``crc32c``/``zlib``, native
                               ``blosc`` (shuffle 0/1/2 -> noshuffle/shuffle/
                               bitshuffle, -1 (auto) -> bitshuffle if the
                               typesize is 1, else shuffle; typesize = item
                               size of what blosc receives), plugins; any other
                               id: the adapter's ``numcodecs.<id>``
``fill_value: null``           the data type's default (zero, ``""``, ``b""``):
                               zarr-python also reads missing chunks as zeros
=============================  ===============================================

V2 types without a zarrpy data type yet (``S``, ``U``, ``M8``, ``m8``,
structured) and codec orders with no V3 form (an array filter after a bytes
filter, anything before the object codec) raise
:class:`~zarrpy.errors.MetadataError` naming the V2 field. An unknown codec id
is a MetadataError naming the field, caused by the codec layer's
:class:`~zarrpy.errors.UnknownCodecError`.

Each codec owns its V2 form (``v2_id``, ``from_v2_config``,
``to_v2_config``); this module only knows the V2 structure: the dtype (with
``bytes``' endian), ``order`` (a leading full ``transpose``), and which codec
goes where (filters, object codec, compressor).

Round trips: ``v3_to_v2(v2_to_v3(m))`` gives back ``m`` except that a null
fill value (and an object array's legacy ``0``) comes back as the default,
blosc ``shuffle: -1`` as the resolved shuffle, an object codec given as the
compressor as the first filter, and codec configurations in their normalised
form (numcodecs' defaults filled in, zstd without ``checksum: false``); ``v2_to_v3(v3_to_v2(m))`` gives back ``m`` for every
``m`` that has a V2 form (blosc ``typesize`` aside, which V2 derives).
"""

from __future__ import annotations

import sys
from typing import Any, Literal, NamedTuple, Sequence

import numpy as np

from ..codecs.abc import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, ChunkSpec, Codec
from ..codecs.chain import CodecChain
from ..codecs.registry import codec_class_for_v2_id, codec_from_json
from ..core.dtypes import DataType
from ..core.dtypes.registry import family_for_name, family_for_v2_name
from ..core.dtypes.struct import STRUCT, StructFamily, pack_struct, v3_endian
from ..errors import CodecError, MetadataError
from ..metadata.v2 import OBJECT_CODEC_IDS, ArrayMetadataV2, dtype_to_json_v2, find_object_codec, parse_dtype_v2
from ..metadata.v3 import ArrayMetadataV3, ChunkKeyEncodingSpec

_NATIVE_ENDIAN = sys.byteorder



class V2Codecs(NamedTuple):
    """The V2 form of a V3 codec list: what goes into ``.zarray``."""

    dtype: str | list[Any]
    order: str
    filters: tuple[dict[str, Any], ...] | None
    compressor: dict[str, Any] | None


# -- V2 -> V3 ------------------------------------------------------------------


def v2_data_type(meta: ArrayMetadataV2) -> DataType:
    """The zarrpy data type of a V2 array (see the table in the module docstring).

    Raises MetadataError naming ``dtype`` when zarrpy has no such type.
    """
    dt = meta.numpy_dtype
    family = family_for_v2_name(meta.dtype) if isinstance(meta.dtype, str) else None
    if family is not None:  # a data type's own V2 name (tensorstore's "bfloat16", a plugin's)
        return DataType(family.names[0], family.dtype_for_numpy(family.names[0], dt), family.is_variable, family)
    if dt.kind == "O":
        codec_id = (meta.object_codec or {}).get("id")
        return DataType.from_json("string" if codec_id == "vlen-utf8" else "variable_length_bytes")
    if dt.fields is not None:  # zarr-python's struct; the fields keep their V2 byte orders
        try:
            packed = pack_struct(dt, None)
        except MetadataError as exc:
            raise MetadataError(f"dtype: {exc}") from None
        return DataType(STRUCT, packed, False, family_for_name(STRUCT))
    if dt.kind == "V":
        return DataType.from_numpy(np.dtype(f"V{dt.itemsize}"))
    return DataType.from_numpy(dt)


def v2_to_v3(meta: ArrayMetadataV2, *, document: bool = False) -> ArrayMetadataV3:
    """The V3 description of the same stored bytes as ``meta``.

    ``document=True`` asks for a V3 document other readers take (``zarr
    migrate``): a struct whose fields have different byte orders has none
    (V3 stores every field in the ``bytes`` codec's one order), and raises.

    Every codec is built and the whole chain bound once, so a V2 array whose
    chunks zarrpy cannot decode fails here, at open, not at the first read.

    Raises
    ------
    MetadataError
        Naming the V2 field (``dtype``, ``filters[i]``, ``compressor``) that
        has no V3 form or names an unknown or refused codec.
    """
    data_type = v2_data_type(meta)
    if document and data_type.numpy.fields is not None and v3_endian(data_type.numpy) == "mixed":
        raise MetadataError(
            f"dtype: struct {meta.dtype!r} has fields in different byte orders; a V3 struct stores every "
            "field in one byte order (the bytes codec's), so its chunks would have to be rewritten"
        )
    # coerce_fill also turns the default of r<bits> (a numpy void) into bytes, as V3 parsing gives
    fill = data_type.coerce_fill(data_type.default_fill() if meta.fill_value is None else meta.fill_value)
    codecs: list[dict[str, Any]] = []
    if meta.order == "F":
        codecs.append({"name": "transpose", "configuration": {"order": list(range(meta.ndim - 1, -1, -1))}})
    items = [(f"filters[{i}]", f) for i, f in enumerate(meta.filters or ())]
    if meta.compressor is not None:
        items.append(("compressor", meta.compressor))

    # Walk the V2 codecs in encoding order: array filters, then one serializer
    # (implied `bytes`, an object codec, or a numcodecs array-to-bytes codec),
    # then bytes codecs. `current` is what the next V2 codec receives.
    serializer: dict[str, Any] | None = None
    serializer_placed = False
    current = meta.numpy_dtype
    typesize = current.itemsize
    if current.kind == "O":
        found = find_object_codec(meta.filters, meta.compressor)
        if found is None:  # ArrayMetadataV2 refuses an object array without one
            raise MetadataError(f"filters: object array {meta.dtype!r} has no object codec")
        where, obj = found
        first = items[0]
        if first[0] != where:
            raise MetadataError(
                f"{first[0]}: codec {first[1]['id']!r} comes before the object codec {obj['id']!r} ({where}) "
                "and would work on Python objects; this has no V3 form"
            )
        serializer = _from_v2(where, obj, 1).to_json()
        items = items[1:]
        typesize = 1

    for where, config in items:
        codec_id = config["id"]
        if codec_id in OBJECT_CODEC_IDS:
            raise MetadataError(f"{where}: object codec {codec_id!r} on a {meta.dtype!r} array has no V3 form")
        codec = _from_v2(where, config, typesize)
        v3 = codec.to_json()
        if isinstance(codec, BytesToBytesCodec):
            if not serializer_placed:
                serializer = serializer or _bytes_serializer(current)
                codecs.append(serializer)
                serializer_placed = True
            codecs.append(v3)
            typesize = 1  # a bytes codec's output is plain bytes
            continue
        if serializer is not None:
            raise MetadataError(
                f"{where}: {codec_id!r} works on arrays but comes after {serializer['name']!r}, "
                "which produces bytes; this order has no V3 form"
            )
        if isinstance(codec, ArrayToBytesCodec):
            serializer = v3
            typesize = 1
        elif isinstance(codec, ArrayToArrayCodec):
            codecs.append(v3)
            current = _filter_output_dtype(codec, current)
            typesize = current.itemsize
        else:  # pragma: no cover - every codec class is one of the three kinds
            raise MetadataError(f"{where}: codec {codec_id!r} is neither an array nor a bytes codec")
    if not serializer_placed:
        codecs.append(serializer or _bytes_serializer(current))

    spec = ChunkSpec(meta.chunks, data_type, fill)
    try:
        CodecChain.from_json(codecs).bind(spec)
    except CodecError as exc:
        field = "compressor" if meta.filters is None else "filters"
        raise MetadataError(f"{field}: the V2 codecs have no working V3 form: {exc}") from exc
    return ArrayMetadataV3(
        shape=meta.shape,
        data_type=data_type,
        chunk_shape=meta.chunks,
        fill_value=fill,
        codecs=tuple(codecs),
        chunk_key_encoding=ChunkKeyEncodingSpec("v2", meta.dimension_separator),
        attributes=dict(meta.attributes),
    )


def _from_v2(where: str, config: dict[str, Any], typesize: int) -> Codec:
    """The codec for one V2 codec config, from the class that claims its id."""
    try:
        return codec_class_for_v2_id(config["id"]).from_v2_config(config, typesize=typesize)
    except CodecError as exc:
        raise MetadataError(f"{where}: {exc}") from exc


def _filter_output_dtype(codec: ArrayToArrayCodec, current: np.dtype) -> np.dtype:
    """The stored-order dtype a V2 filter hands to the next codec."""
    _, encoded = codec.v2_filter_dtypes()
    return current if encoded is None else encoded


def _endian(dtype: np.dtype) -> str | None:
    if dtype.itemsize == 1 or dtype.byteorder == "|":
        return None
    if dtype.kind in "SV" and (type(dtype).__module__ == "numpy.dtypes" or dtype.fields is not None):
        return None  # raw bytes, text, structs (ml_dtypes' bfloat16 is kind V too, and has an order)
    if dtype.byteorder == "=":
        return _NATIVE_ENDIAN
    return "little" if dtype.byteorder == "<" else "big"


def _bytes_serializer(dtype: np.dtype) -> dict[str, Any]:
    endian = _endian(dtype)
    if dtype.fields is not None:
        # a struct: its fields' one byte order is the codec's endian (the V3 form
        # zarr-python reads); fields in mixed orders get `bytes` without endian,
        # which stores the V2 layout as it is (readable, but no V3 document:
        # see v2_to_v3(document=True))
        endian = v3_endian(dtype)
        if endian == "mixed":
            endian = None
    return {"name": "bytes"} if endian is None else {"name": "bytes", "configuration": {"endian": endian}}


# -- V3 -> V2 ------------------------------------------------------------------


def v3_codecs_to_v2(
    codecs: Sequence[Any], data_type: DataType, *, ndim: int, order: str | None = None
) -> V2Codecs:
    """The V2 ``dtype``, ``order``, ``filters`` and ``compressor`` for a V3 codec list.

    ``codecs`` are V3 codec objects or JSON dicts. ``order`` None takes the
    order from the chain (a leading ``transpose`` reversing all dimensions is
    ``"F"``, none is ``"C"``); ``"C"``/``"F"`` given with a chain that has no
    transpose sets it, as ``create_array(order=...)`` does. Filters and
    compressor follow V2's rule "filters in order, then the compressor": the
    last bytes-to-bytes codec is the compressor, everything between the
    (implied or object) serializer and it is a filter.

    Raises
    ------
    MetadataError
        If the chain has no V2 form (another transpose, sharding, zarrs.vlen,
        a codec without a V2 id, a string/bytes chain without a vlen codec).
    """
    # the two codecs that are V2 structure, not V2 codecs (imported here: zarrpy
    # imports no codec module until one is used)
    from ..codecs.bytes import BytesCodec
    from ..codecs.transpose import TransposeCodec

    objs: list[Codec] = []
    for i, c in enumerate(codecs):
        try:
            objs.append(codec_from_json(c))
        except CodecError as exc:
            raise MetadataError(f"codecs[{i}]: {exc}") from exc
    if order not in (None, "C", "F"):
        raise MetadataError(f"order: expected 'C' or 'F', got {order!r}")
    v2_order = "C"
    start = 0
    if objs and isinstance(objs[0], TransposeCodec):
        if objs[0].order != tuple(range(ndim - 1, -1, -1)):
            raise MetadataError(
                f"codecs[0]: transpose {list(objs[0].order)} has no V2 form; only the full reversal "
                f"{list(range(ndim - 1, -1, -1))} (order 'F') has"
            )
        if order == "C":
            raise MetadataError("order: 'C' was given but the codecs start with a transpose to 'F' order")
        v2_order, start = "F", 1
    elif order is not None:
        v2_order = order

    items: list[dict[str, Any]] = []
    dtype_text: str | list[Any] | None = None
    filter_dtypes: list[tuple[np.dtype | None, np.dtype | None]] = []
    endian: str | None = None
    last_is_compressor = False
    for i, codec in enumerate(objs[start:], start):
        where = f"codecs[{i}]"
        if isinstance(codec, TransposeCodec):
            raise MetadataError(f"{where}: a transpose after other codecs has no V2 form")
        if isinstance(codec, BytesCodec):  # part of the V2 dtype, not a V2 codec
            last_is_compressor = False
            if data_type.is_variable:
                raise MetadataError(f"{where}: 'bytes' cannot serialise data type {data_type.name!r}")
            endian = codec.endian
            dtype_text = _v2_numeric_dtype(data_type, filter_dtypes, endian)
            continue
        try:
            v2 = codec.to_v2_config(data_type)
        except CodecError as exc:
            raise MetadataError(f"{where}: {exc}") from exc
        items.append(v2)
        # V2's compressor is the last codec, if it takes arrays or bytes
        # (object codecs stay filters, as zarr-python writes them)
        is_object = isinstance(codec, ArrayToBytesCodec) and v2["id"] in OBJECT_CODEC_IDS
        last_is_compressor = isinstance(codec, (BytesToBytesCodec, ArrayToBytesCodec)) and not is_object
        if isinstance(codec, ArrayToArrayCodec):
            filter_dtypes.append(codec.v2_filter_dtypes())
        elif isinstance(codec, ArrayToBytesCodec):
            dtype_text = "|O" if is_object else _v2_numeric_dtype(data_type, filter_dtypes, "little")
    if dtype_text is None:
        raise MetadataError("codecs: no array-to-bytes codec")
    compressor = items.pop() if last_is_compressor else None
    return V2Codecs(dtype_text, v2_order, tuple(items) or None, compressor)


def _v2_numeric_dtype(
    data_type: DataType, filters: list[tuple[np.dtype | None, np.dtype | None]], endian: str | None
) -> str | list[Any]:
    """The V2 dtype of a fixed-size type whose chunks reach ``bytes`` through ``filters``.

    V2 filters see the chunk in the V2 dtype's byte order and ``bytes``
    writes the last filter's output as it is, so the byte order must follow
    from the filters' configured dtypes; a chain where it does not (``bytes``
    big-endian after a filter that outputs little-endian) has no V2 form.
    """
    own = data_type.to_v2()
    if isinstance(own, str):  # the type names its V2 form itself (a plugin's, ml_dtypes')
        if endian == "big" and _endian(data_type.numpy) is not None:
            raise MetadataError(
                f"codecs: V2 {own!r} is stored little-endian; 'bytes' writes big-endian, which has no V2 form"
            )
        return own
    dt = data_type.numpy
    if isinstance(data_type.family, StructFamily):  # the fields in the order `bytes` stores them
        if filters:
            raise MetadataError(f"codecs: array filters before 'bytes' on a struct ({data_type.name!r}) have no V2 form")
        return dtype_to_json_v2(dt if endian is None else dt.newbyteorder("<" if endian == "little" else ">"))
    if dt.itemsize == 1 or dt.kind == "V":
        text = dtype_to_json_v2(dt)
        if not isinstance(text, str):  # pragma: no cover - zarrpy data types are never structured
            raise MetadataError(f"codecs: data type {data_type.name!r} has no V2 dtype string")
        return text
    orders: dict[str | None, Literal["<", ">"]] = {"little": "<", "big": ">", None: "<"}
    order = orders[endian]
    if filters and filters[0][0] is not None and _endian(filters[0][0]) is not None:
        order = "<" if _endian(filters[0][0]) == "little" else ">"
    # What V2 would hand to the compressor, filter by filter:
    current = dt.newbyteorder(order)
    for _, encoded in filters:
        if encoded is not None:
            current = encoded
    if _endian(current) not in (None, endian) and endian is not None:
        raise MetadataError(
            f"codecs: 'bytes' writes {endian}-endian but the V2 filters hand it {_endian(current)}-endian "
            "elements; this chain has no V2 form"
        )
    return dt.newbyteorder(order).str


def v3_to_v2(meta: ArrayMetadataV3, *, order: str | None = None) -> ArrayMetadataV2:
    """The V2 metadata for a V3 array description (for ``create_array(zarr_format=2)``).

    ``order`` as in :func:`v3_codecs_to_v2`. The chunk key encoding must be
    ``v2`` (its separator becomes ``dimension_separator``). Members V2 cannot
    hold raise; ``must_understand: false`` extensions are dropped.

    Raises
    ------
    MetadataError
        If the codecs have no V2 form, ``dimension_names`` is set (V2 has
        none: xarray keeps them in the ``_ARRAY_DIMENSIONS`` attribute), or the
        chunk key encoding is not ``v2``.
    """
    if meta.dimension_names is not None:
        raise MetadataError(
            "dimension_names: Zarr V2 has no dimension names (xarray stores them in the "
            "'_ARRAY_DIMENSIONS' attribute)"
        )
    if meta.chunk_key_encoding.name != "v2":
        raise MetadataError(
            f"chunk_key_encoding: V2 arrays use the 'v2' encoding, got {meta.chunk_key_encoding.name!r}"
        )
    if meta.chunk_grid is not None:
        raise MetadataError(
            f"chunk_grid: Zarr V2 has regular chunks only, not a {meta.chunk_grid.name!r} grid"
        )
    v2 = v3_codecs_to_v2(meta.codecs, meta.data_type, ndim=meta.ndim, order=order)
    fill = meta.fill_value
    object_codec = None
    if v2.dtype == "|O":
        found = find_object_codec(v2.filters, v2.compressor)
        if found is None:  # pragma: no cover - v3_codecs_to_v2 says "|O" only for an object codec
            raise MetadataError("codecs: no object codec for a variable-length data type")
        object_codec = found[1]["id"]
        if object_codec == "vlen-array":
            if fill not in (b"", None):
                raise MetadataError("fill_value: a vlen-array array's fill value must be the empty element")
            fill = None
    elif isinstance(meta.data_type.family, StructFamily):  # the element in the V2 layout
        fill = np.asarray(fill, dtype=meta.data_type.numpy).astype(parse_dtype_v2(v2.dtype)).tobytes()
    elif meta.data_type.numpy.kind == "V" and meta.data_type.family.endian_lane(meta.data_type) is None:
        fill = bytes(fill)  # raw bytes and structs (not ml_dtypes' kind-V numbers)
    result = ArrayMetadataV2(
        shape=meta.shape,
        chunks=meta.chunk_shape,
        dtype=v2.dtype,
        compressor=v2.compressor,
        fill_value=fill,
        order=v2.order,
        filters=v2.filters,
        dimension_separator=meta.chunk_key_encoding.separator,
        attributes=dict(meta.attributes),
    )
    _check_round_trip(meta, result)
    return result


def _check_round_trip(meta: ArrayMetadataV3, v2: ArrayMetadataV2) -> None:
    """Guard: the V2 form must read back as codecs that give the same bytes."""
    back = list(v2_to_v3(v2).codecs)
    if v2.order == "F" and not (meta.codecs and meta.codecs[0].get("name") == "transpose"):
        back = back[1:]  # the transpose that `order="F"` added
    want = [codec_from_json(c) for c in meta.codecs]
    got = [codec_from_json(c) for c in back]
    # Each codec knows which other forms store what it stores (Codec.same_stored_form).
    if len(want) != len(got) or not all(w.same_stored_form(g) for w, g in zip(want, got)):
        raise MetadataError(
            f"codecs: {[w.to_json() for w in want]} have no exact V2 form "
            f"(V2 would read them as {[g.to_json() for g in got]})"
        )


__all__ = ["V2Codecs", "v2_data_type", "v2_to_v3", "v3_codecs_to_v2", "v3_to_v2"]
