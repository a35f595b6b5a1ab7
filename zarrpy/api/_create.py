"""Creating nodes: build V3 metadata from user arguments and write it safely.

Shared by :func:`zarrpy.create_array`, :meth:`Group.create_array` and the
convenience functions (:func:`create_array_at`). Nothing
is written until the metadata and the codec chain have been fully validated,
and an existing node is only replaced when ``overwrite=True``; where the
node goes and what it costs in requests is :mod:`zarrpy.api._new_node`'s.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Mapping, Sequence

import numpy as np

from ..pipeline.cache_hook import ChunkCache
from ..pipeline.synchronizer import Synchronizer
from ._array import Array
from ._new_node import node_exists as node_exists, put_new_node  # node_exists: for zarrpy.tools.cp too
from ..pipeline.convert import v3_to_v2
from ..pipeline.values import ragged_elements
from ..codecs.abc import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, ChunkSpec, Codec
from ..codecs.aliases import CODEC_ALIASES
from ..codecs.chain import CodecChain
from ..codecs.registry import codec_from_json
from ..codecs.user_forms import codec_from_any
from ..codecs.vlen_array import VlenArrayCodec
from ..core.dtypes import DataType
from ..core.dtypes.optional import is_optional, optional_default_serializer
from ..core.dtypes.struct import as_written, has_multi_byte_fields, is_struct, pack_struct, v3_endian
from ..errors import CodecError, MetadataError
from ..metadata._parse import parse_shape
from ..metadata.v2 import ArrayMetadataV2
from ..core.chunk_grid import REGULAR
from ..metadata.chunk_grid import ChunkGridSpec, expand_run_lengths
from ..metadata.v3 import ArrayMetadataV3, ChunkKeyEncodingSpec
from ..stores.abc import Store

# Target uncompressed chunk size for chunks="auto" (zarr-python aims for ~1 MiB too).
_AUTO_CHUNK_NBYTES = 1 << 20


def build_array_metadata(
    *,
    shape: Any,
    dtype: Any,
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = None,
    compressors: Any = "auto",
    serializer: Any = "auto",
    fill_value: Any = None,
    attributes: dict[str, Any] | None = None,
    dimension_names: Sequence[str | None] | None = None,
    chunk_key_encoding: Any = None,
    compressor: Any = "auto",
    zarr_format: int = 3,
) -> ArrayMetadataV3:
    """Validate user arguments and return the metadata of a new array.

    ``compressor`` is zarr-python 2's singular keyword (zarr-python 3 still
    takes it in ``zarr.create`` and ``Group.create_array``): one codec, or
    None for none; it is ``compressors`` under another name.

    ``zarr_format=2`` keeps a structured dtype's field byte orders (V2 stores
    each field in its own order, as zarr-python); V3 stores them in the
    ``bytes`` codec's order.
    """
    compressors = compressors_argument(compressors, compressor)
    dtype, serializer = ragged_create_arguments(dtype, serializer)
    shape = parse_shape(list(user_shape(shape)), "shape")
    data_type = as_written(DataType.from_numpy(dtype))  # a legacy name is read, never written
    if zarr_format == 2 and is_optional(data_type):
        raise MetadataError(f"data_type: {data_type.name!r} has no Zarr V2 form (zarrs writes it in V3 only)")
    if zarr_format == 2 and is_struct(data_type.numpy) and data_type.family.endian_lane(data_type) is None:
        data_type = DataType(data_type.name, pack_struct(np.dtype(dtype), None), False, data_type.family)
    grid = normalize_chunks(chunks, shape, data_type)
    chunk_shape = grid.nominal_chunk_shape
    fill = data_type.coerce_fill(fill_value)
    codecs = _build_codecs(filters, serializer, compressors, data_type, _byte_order(dtype), zarr_format)
    if shards is not None:
        # As zarr-python: the grid is of shards; the codecs go inside the
        # sharding codec, whose inner chunks have the `chunks` shape.
        if grid.name != REGULAR:
            raise MetadataError(f"chunks: the inner chunks of a sharded array have one shape (the sharding codec's "
                                f"chunk_shape), not a {grid.name!r} grid; give the irregular edges as shards=")
        index_location = shards.get("index_location", "end") if isinstance(shards, dict) else "end"
        grid = _normalize_shards(shards, chunk_shape, shape)
        codecs = [codec_from_json({"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunk_shape),
            "codecs": CodecChain(codecs).evolve(ChunkSpec(chunk_shape, data_type, fill)).to_json(),
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": index_location,
        }})]
        chunk_shape = grid.nominal_chunk_shape
    spec = ChunkSpec(chunk_shape, data_type, fill)
    codecs = list(CodecChain(codecs).evolve(spec).codecs)
    CodecChain(codecs).bind(spec)  # validates order and data-type support now, not at first write
    return ArrayMetadataV3(
        shape=shape,
        data_type=data_type,
        chunk_shape=chunk_shape,
        chunk_grid=None if grid.name == REGULAR else grid,
        fill_value=fill,
        codecs=tuple(c.to_json() for c in codecs),
        chunk_key_encoding=_parse_key_encoding(chunk_key_encoding),
        attributes=dict(attributes or {}),
        dimension_names=None if dimension_names is None else tuple(dimension_names),
    )


def ragged_create_arguments(dtype: Any, serializer: Any) -> tuple[Any, Any]:
    """``(dtype, serializer)`` of a new array, with a ragged array's form resolved.

    A ragged array (each element a 1-D vector of its own length, numcodecs
    ``vlen-array``) is created with its *element* type as ``dtype`` and the
    ``numcodecs.vlen-array`` serializer, whose ``dtype`` may be left out:
    ``dtype="int32", serializer="numcodecs.vlen-array"``. It is stored with
    the ``variable_length_bytes`` data type, as zarrpy reads V2 ``vlen-array``
    arrays (in V2: dtype ``|O`` and a ``vlen-array`` filter, as zarr-python 2
    writes them). Other arguments come back unchanged.

    Raises CodecError if ``dtype`` is not numeric or differs from the
    serializer's ``dtype``.
    """
    if not _names_vlen_array(serializer):
        return dtype, serializer
    data_type = DataType.from_numpy(dtype)
    if data_type.is_variable:
        return dtype, serializer  # the stored data type, given as is (zarrs' untyped form on strings/bytes)
    element = data_type.numpy
    if element.kind not in "biufc":
        raise CodecError(f"serializer: codec {VlenArrayCodec.name!r} stores vectors of numbers; dtype= is their "
                         f"numeric type (e.g. 'int32'), got {dtype!r}")
    if isinstance(serializer, Mapping):  # V3 form {"name", "configuration"} or numcodecs' {"id", ...}
        config = serializer.get("configuration") if "name" in serializer else serializer
        bare = not isinstance(config, Mapping) or "dtype" not in config
    else:
        bare = isinstance(serializer, str)
    if bare:
        serializer = VlenArrayCodec(element.str)  # the short-hand: the element type is dtype=
    codec = codec_from_any(serializer, "serializer")
    if not isinstance(codec, VlenArrayCodec):  # pragma: no cover - _names_vlen_array named it
        raise CodecError(f"serializer: expected codec {VlenArrayCodec.name!r}, got {codec.name!r}")
    if codec.dtype.newbyteorder("=") != element.newbyteorder("="):
        raise CodecError(f"serializer: codec {VlenArrayCodec.name!r} has 'dtype' {codec.to_config()['dtype']!r}, "
                         f"but dtype={dtype!r} was given")
    return "variable_length_bytes", codec


def _names_vlen_array(serializer: Any) -> bool:
    """Is ``serializer`` the vlen-array codec, in any form users give codecs?"""
    if isinstance(serializer, VlenArrayCodec):
        return True
    if isinstance(serializer, Mapping):
        name = serializer.get("name", "numcodecs." + str(serializer.get("id")))
    elif isinstance(serializer, str):
        name = serializer
    else:
        name = "numcodecs." + str(getattr(serializer, "codec_id", ""))
    return isinstance(name, str) and CODEC_ALIASES.get(name, name) == VlenArrayCodec.name


def user_shape(shape: Any) -> tuple[int, ...]:
    """A shape as users give it (an int, a sequence or array of ints, numpy
    integers included) as a tuple of Python ints; MetadataError otherwise."""
    items = [shape] if isinstance(shape, (int, np.integer)) else shape
    try:
        if isinstance(items, (str, bytes)) or any(isinstance(i, (bool, np.bool_)) for i in items):
            raise TypeError
        return tuple(operator.index(i) for i in items)
    except TypeError:
        raise MetadataError(f"shape: expected an integer or a sequence of integers, got {shape!r}") from None


def normalize_chunks(chunks: Any, shape: tuple[int, ...], dtype: DataType) -> ChunkGridSpec:
    """The chunk grid ``chunks=`` asks for (see :data:`~zarrpy.typing.ChunksLike`):
    a chunk shape (an int for every dimension; -1 or None: the whole
    length) or "auto"/None give a ``regular`` grid; a list per dimension of
    its chunks' edge lengths (summing to its length; ``[value, count]``
    for ``count`` edges of ``value``) a ``rectilinear`` one, as zarr-python
    takes ``chunks=[[3, 3, 4], [2, 2, 2]]`` (a dimension may stay one
    integer: ``[[3, 3, 4], 2]``); a ``chunk_grid`` JSON object (``{"name":
    "zarrs.regular_bounded", "configuration": {"chunk_shape": [4, 4]}}``)
    is taken as it is."""
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        return ChunkGridSpec.regular(_auto_chunks(shape, max(dtype.itemsize, 1)))
    if isinstance(chunks, Mapping):
        spec = ChunkGridSpec.from_json(dict(chunks), shape)
        spec.check(shape)
        return spec
    if isinstance(chunks, (bool, np.bool_)):
        raise MetadataError(f"chunks: expected a shape, an integer or 'auto', got {chunks!r}")
    if isinstance(chunks, (int, np.integer)):
        chunks = (int(chunks),) * len(shape)
    chunks = tuple(chunks)
    if len(chunks) != len(shape):
        raise MetadataError(f"chunks: {chunks} has {len(chunks)} dimensions, shape {shape} has {len(shape)}")
    if any(_is_edge_list(c) for c in chunks):
        return _rectilinear("chunks", chunks, shape)
    out = []
    for c, s in zip(chunks, shape):
        if c is None or c == -1:
            c = max(s, 1)
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
            raise MetadataError(f"chunks: expected positive integers, got {chunks}")
        out.append(int(c))
    return ChunkGridSpec.regular(out)


def _is_edge_list(item: Any) -> bool:
    """Is ``item`` (one dimension of ``chunks=``) a list of edge lengths?"""
    return isinstance(item, (list, tuple, np.ndarray))


def _rectilinear(what: str, dims: Sequence[Any], shape: tuple[int, ...], unit: Sequence[int] | None = None
                 ) -> ChunkGridSpec:
    """A ``rectilinear`` grid from per-dimension edge lists (or one edge
    length) given as ``what=``; the edges of a dimension sum to its length
    exactly (any edges for a length of 0), each a multiple of ``unit``'s."""
    out: list[int | tuple[int, ...]] = []
    for axis, (item, n) in enumerate(zip(dims, shape)):
        field = f"{what}[{axis}]"
        if _is_edge_list(item):
            items = [i.tolist() if isinstance(i, np.ndarray) else list(i) if isinstance(i, tuple) else i
                     for i in (item.tolist() if isinstance(item, np.ndarray) else item)]
            items = [int(i) if isinstance(i, np.integer) else i for i in items]
            edges = expand_run_lengths(items, field)
            if n and sum(edges) != n:
                raise MetadataError(f"{field}: the edge lengths {list(edges)} sum to {sum(edges)}, "
                                    f"not to the array's length {n}")
            out.append(edges)
        elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)) and item >= 1:
            out.append(int(item))
        else:
            raise MetadataError(f"{field}: expected a positive edge length or a list of them, got {item!r}")
        if unit is not None:
            c = unit[axis]
            bad = [e for e in ((out[-1],) if isinstance(out[-1], int) else out[-1]) if e % c]
            if bad:
                raise MetadataError(f"{field}: shard edge length {bad[0]} is not a multiple of the chunk length {c}")
    spec = ChunkGridSpec.rectilinear(out)
    spec.check(shape)
    return spec


def _byte_order(dtype: Any) -> str:
    """The stored byte order a dtype asks for (``>i4``: big), as zarr-python;
    little for anything that is not a numpy dtype (a V3 ``data_type`` member,
    a DataType)."""
    if isinstance(dtype, (dict, DataType)):
        return "little"
    try:
        return "big" if np.dtype(dtype).byteorder == ">" else "little"
    except (TypeError, ValueError):
        return "little"


def _normalize_shards(shards: Any, chunk_shape: tuple[int, ...], shape: tuple[int, ...]) -> ChunkGridSpec:
    """The shard grid: a shard shape of positive multiples of the chunk shape,
    or (``rectilinear`` shards, as zarr-python takes them) per dimension a
    list of shard edge lengths, each a multiple of the chunk length there,
    summing to the array's length."""
    if isinstance(shards, (int, np.integer)):
        shards = (int(shards),) * len(chunk_shape)
    if isinstance(shards, Mapping) and "name" in shards:  # a chunk_grid member: the shard grid as stored
        spec = ChunkGridSpec.from_json(dict(shards), shape)
        spec.check(shape)
        grid = spec.bind(shape)
        for axis, c in enumerate(chunk_shape):
            bad = [e for e in grid.codec_sizes(axis) if e % c]
            if bad:
                raise MetadataError(f"shards: shard edge length {bad[0]} along axis {axis} is not a multiple "
                                    f"of the chunk length {c}")
        return spec
    if isinstance(shards, dict):  # zarr-python's {"shape": ...} form
        shards = shards.get("shape")
    shards = tuple(shards)
    if len(shards) != len(chunk_shape):
        raise MetadataError(f"shards: {shards} has {len(shards)} dimensions, chunks {chunk_shape} has {len(chunk_shape)}")
    if any(_is_edge_list(s) for s in shards):
        return _rectilinear("shards", shards, shape, unit=chunk_shape)
    for s, c in zip(shards, chunk_shape):
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 or s % c:
            raise MetadataError(f"shards: {shards} must be positive multiples of the chunk shape {chunk_shape}")
    return ChunkGridSpec.regular([int(s) for s in shards])


def _auto_chunks(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Halve the largest dimension until a chunk is at most ~1 MiB."""
    chunks = [max(s, 1) for s in shape]
    while math.prod(chunks) * itemsize > _AUTO_CHUNK_NBYTES:
        i = max(range(len(chunks)), key=lambda j: chunks[j])
        if chunks[i] == 1:
            break
        chunks[i] = -(-chunks[i] // 2)
    return tuple(chunks)


_KINDS = {
    ArrayToArrayCodec: "an array-to-array codec (a filter)",
    ArrayToBytesCodec: "an array-to-bytes codec (a serializer)",
    BytesToBytesCodec: "a bytes-to-bytes codec (a compressor)",
}


def _as_codecs(value: Any, what: str, itemsize: int, *kinds: type[Codec]) -> list[Codec]:
    """``filters=``/``serializer=``/``compressors=`` as codec objects of ``kinds``.

    ``value`` is None (no codecs), one codec in any form
    :func:`~zarrpy.codecs.registry.codec_from_any` takes (zarrpy, zarr-python
    or numcodecs object, JSON object, name), or a list/tuple of them. Errors
    name ``what`` (with the index in a list).
    """
    if value is None:
        return []
    items = list(enumerate(value)) if isinstance(value, (list, tuple)) else [(None, value)]
    codecs = []
    for i, item in items:
        where = what if i is None else f"{what}[{i}]"
        codec = codec_from_any(item, where, itemsize=itemsize)
        if not isinstance(codec, kinds):
            actual = next((text for k, text in _KINDS.items() if isinstance(codec, k)), "another kind of codec")
            raise CodecError(f"{where}: codec {codec.name!r} is {actual}, not "
                             f"{' or '.join(_KINDS[k] for k in kinds)}")
        codecs.append(codec)
    return codecs


def compressors_argument(compressors: Any, compressor: Any) -> Any:
    """``compressors``, or ``compressor`` when only that was given."""
    if isinstance(compressor, str) and compressor == "auto":
        return compressors
    if not (isinstance(compressors, str) and compressors == "auto"):
        raise TypeError(f"compressor={compressor!r} and compressors={compressors!r} were both given; "
                         "pass one (compressor= is zarr-python 2's name for a single compressor)")
    return compressor


def _split_filters(filters: list[Codec], serializer: Any) -> tuple[list[Codec], Any, list[Codec]]:
    """``filters`` as (array filters, serializer, bytes filters).

    V2's filters are any numcodecs, in order: zarr-python puts the object
    codec (``VLenUTF8()``) there, and Shuffle or a checksum work on bytes.
    So after the array-to-array codecs may come one array-to-bytes codec,
    which becomes the serializer (``serializer`` must then be ``"auto"``),
    then bytes-to-bytes codecs, which run before the compressors.
    """
    n_array = next((i for i, c in enumerate(filters) if not isinstance(c, ArrayToArrayCodec)), len(filters))
    start = n_array
    if start < len(filters) and isinstance(filters[start], ArrayToBytesCodec):
        if not (isinstance(serializer, str) and serializer == "auto"):
            raise CodecError(f"filters[{start}]: codec {filters[start].name!r} is a serializer and "
                             "serializer= was given too; pass one")
        serializer = filters[start]
        start += 1
    for i in range(start, len(filters)):
        if not isinstance(filters[i], BytesToBytesCodec):
            raise CodecError(f"filters[{i}]: codec {filters[i].name!r} works on arrays but comes after "
                             f"{filters[i - 1].name!r}, which outputs bytes")
    return filters[:n_array], serializer, filters[start:]


def _build_codecs(
    filters: Any, serializer: Any, compressors: Any, data_type: DataType, endian: str = "little",
    zarr_format: int = 3,
) -> list[Codec]:
    """The codec list ``filters + [serializer] + compressors``, defaults filled in.

    ``filters`` may also be V2-style numcodecs filters (:func:`_split_filters`).
    """
    from ..codecs.bytes import BytesCodec, endian_required

    itemsize = data_type.itemsize or 1  # what zarr-python fills tunable settings in with
    array_filters, serializer, bytes_filters = _split_filters(
        _as_codecs(filters, "filters", itemsize, ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec), serializer
    )
    if isinstance(serializer, str) and serializer == "auto" and is_optional(data_type):
        serializer = optional_default_serializer(data_type)
    if isinstance(serializer, str) and serializer == "auto" and data_type.is_variable:
        # zarr-python's defaults, readable by every peer that knows these types.
        serializer = {"name": "vlen-utf8" if data_type.is_string else "vlen-bytes", "configuration": {}}
    if isinstance(serializer, str) and serializer == "auto":
        # The bytes codec stores what the last filter hands it: follow that
        # filter's stated byte order when it names one (numcodecs astype=">i2").
        last = array_filters[-1] if array_filters else None
        encoded = last.v2_filter_dtypes()[1] if isinstance(last, ArrayToArrayCodec) else None
        if encoded is not None and encoded.byteorder in "<>":
            endian = "big" if encoded.byteorder == ">" else "little"
        if is_struct(data_type.numpy):
            # zarr-python: V3 structs with a field of more than one byte store
            # little-endian; V2 structs store each field in its own order (the
            # fields' one order as `endian`, none when they differ: as V2 reads).
            if zarr_format == 3:
                serializer = BytesCodec("little" if has_multi_byte_fields(data_type.numpy) else None)
            else:
                struct_endian = v3_endian(data_type.numpy)
                serializer = BytesCodec(None if struct_endian == "mixed" else struct_endian)
        else:
            serializer = BytesCodec(endian if endian_required(data_type) else None)
    if isinstance(compressors, str) and compressors == "auto":
        compressors = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
    return [
        *array_filters,
        *_as_codecs(serializer, "serializer", itemsize, ArrayToBytesCodec),
        *bytes_filters,
        *_as_codecs(compressors, "compressors", itemsize, BytesToBytesCodec),
    ]


def _parse_key_encoding(value: Any) -> ChunkKeyEncodingSpec:
    if value is None:
        return ChunkKeyEncodingSpec()
    if isinstance(value, ChunkKeyEncodingSpec):
        return value
    if isinstance(value, dict) and ("separator" in value or "suffix" in value) and "configuration" not in value:
        # zarr-python's short form {"name": "v2", "separator": "."} (and {"name": "zarrs.default_suffix", "suffix": ...})
        value = {"name": value.get("name", "default"),
                 "configuration": {k: v for k, v in value.items() if k != "name"}}
    return ChunkKeyEncodingSpec.from_json(value)


def create_array_at(store: Store, path: str, *, overwrite: bool, write_empty_chunks: bool,
                     data: Any = None, zarr_format: int = 3, order: str | None = None,
                     dimension_separator: str | None = None, cache: ChunkCache | None = None,
                     synchronizer: Synchronizer | None = None, within: str | None = None, absent: bool = False,
                     subchunk_write_order: str | None = None,
                     **kwargs: Any) -> Array:
    """Create the array at ``path`` of ``store`` (see :func:`zarrpy.create_array`):
    validate everything, then make room for the node and write its metadata
    (:func:`put_new_node`, which takes ``within`` and ``absent``) and
    ``data`` (if given)."""
    if data is not None and kwargs.get("shape") is None and _names_vlen_array(kwargs.get("serializer")):
        kwargs["shape"] = ragged_elements(data, np.dtype(kwargs.get("dtype") or "float64")).shape
    if data is not None and (kwargs.get("shape") is None or kwargs.get("dtype") is None):
        inferred = as_data_array(data)
        if kwargs.get("shape") is None:
            kwargs["shape"] = inferred.shape
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = infer_dtype(inferred)
    if kwargs.get("shape") is None or kwargs.get("dtype") is None:
        raise TypeError("create_array needs shape= and dtype= (or data=)")
    stored = _build_stored_metadata(zarr_format, order, dimension_separator, kwargs)
    documents = stored.to_documents()  # fails on bad attributes before anything is touched
    given_order = subchunk_write_order
    if subchunk_write_order is None:
        subchunk_write_order = _serializer_write_order(kwargs.get("serializer"))
    array = Array(store, path, stored, write_empty_chunks=write_empty_chunks, cache=cache,
                  synchronizer=synchronizer, subchunk_write_order=subchunk_write_order)  # validates the chain
    if given_order is not None and array.subchunk_write_order is None:
        raise ValueError(f"subchunk_write_order={given_order!r} is the order of inner chunks inside shards; "
                         "this array is not sharded (give shards=)")
    # Coerced as given ([256] into uint8 overflows, as in numpy) before anything is written.
    value = None if data is None else array._coerce(data, array.shape)
    put_new_node(store, path, documents, overwrite=overwrite, zarr_format=zarr_format, within=within, absent=absent)
    if value is not None:
        array[...] = value
    return array


def _serializer_write_order(serializer: Any) -> str | None:
    """The ``subchunk_write_order`` of a sharding codec given as ``serializer=``
    (a zarrpy or zarr-python codec object, or JSON naming one), else None.
    A serializer that is no codec is left for the metadata to refuse."""
    if serializer is None or isinstance(serializer, str):
        return None
    try:
        codec = codec_from_any(serializer, "serializer")
    except (CodecError, MetadataError):
        return None
    order = getattr(codec, "subchunk_write_order", None)  # a sharding codec's (the API names no codec)
    return order if isinstance(order, str) else None


def _build_stored_metadata(zarr_format: int, order: str | None, dimension_separator: str | None,
                           kwargs: dict[str, Any]) -> ArrayMetadataV3 | ArrayMetadataV2:
    """The metadata document a new array is stored with (V3, or V2)."""
    if zarr_format == 3:
        if order not in (None, "C") or dimension_separator is not None:
            raise ValueError("order= and dimension_separator= are Zarr V2 options; "
                             "for V3 use filters=[transpose] and chunk_key_encoding=")
        return build_array_metadata(**kwargs)
    if zarr_format != 2:
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    if kwargs.get("shards") is not None or kwargs.get("dimension_names") is not None:
        raise ValueError("shards= and dimension_names= have no Zarr V2 form")
    if kwargs.get("chunk_key_encoding") is not None:
        raise ValueError("use dimension_separator= for Zarr V2 arrays")
    if dimension_separator not in (None, ".", "/"):
        raise ValueError(f"dimension_separator must be '.' or '/', got {dimension_separator!r}")
    kwargs["chunk_key_encoding"] = {"name": "v2", "configuration": {"separator": dimension_separator or "."}}
    return v3_to_v2(build_array_metadata(**kwargs, zarr_format=2), order=order)


def as_data_array(data: Any) -> np.ndarray:
    """``data`` as a numpy array; nested lists of ``bytes`` as an object array
    (numpy would make them fixed-width ``S`` and drop trailing NULs), and a
    list of sequences of different lengths (ragged data) as a 1-D object array."""
    if isinstance(data, np.ndarray):
        return data
    if _holds_bytes(data):
        return np.array(data, dtype=object)
    try:
        return np.asarray(data)
    except ValueError:  # inhomogeneous: one element per item
        out = np.empty(len(data), dtype=object)
        out[:] = [np.asarray(item) for item in data]
        return out


def _holds_bytes(data: Any) -> bool:
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    return isinstance(first, bytes)


def infer_dtype(data: np.ndarray) -> Any:
    """The data type for ``data``: strings and bytes become variable-length."""
    if data.dtype.kind == "S":
        return bytes
    if data.dtype.kind == "U":
        return str
    if data.dtype.kind == "O":
        first = next(iter(data.flat), "")
        return bytes if isinstance(first, bytes) else str
    return data.dtype
