"""zarr-python's convenience functions, with its signatures and semantics.

``create``, ``zeros``, ``ones``, ``full``, ``empty`` (and their ``*_like``
forms), ``array``, ``from_array``, ``group`` and ``open_consolidated``. Each
is a thin layer over :func:`zarrpy.create_array` / :func:`zarrpy.open_group`:
``store=None`` is a new in-memory store, ``path=`` names the node inside the
store, ``compressor=`` (zarr-python 2's singular form) and ``codecs=`` (a whole
V3 chain) are accepted beside ``filters``/``serializer``/``compressors``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ._array import Array
from ._group import Group
from ._create import as_data_array, compressors_argument, infer_dtype, user_shape
from ._open import create_array, open_group
from ..codecs.abc import ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec
from ..codecs.user_forms import CodecLike, CompressorsLike, FiltersLike, SerializerLike, codec_from_any
from ..core._typing import ArrayValueLike, ChunksLike, ShapeLike, ShardsLike
from ..core.dtypes.data_type import DTypeLike
from ..metadata.v3 import ChunkKeyEncodingLike
from ..stores._store_like import StoreLike
from ..core.chunk_grid import REGULAR
from ..core.dtypes import DataType
from ..metadata.v2 import ArrayMetadataV2
from ..metadata.v3 import ArrayMetadataV3

# A copy between arrays moves at most about this many bytes per step.
_COPY_STEP_NBYTES = 64 << 20
# Shards holding more decoded bytes than this are written inner chunk by
# inner chunk (streamed), from source bands of at most _COPY_STEP_NBYTES / 2.
_STREAM_SHARD_NBYTES = 16 << 20


def _is(value: Any, word: str) -> bool:
    """Is ``value`` the string ``word`` (values may be codecs or arrays)?"""
    return isinstance(value, str) and value == word


def create(
    shape: ShapeLike,
    *,
    store: StoreLike | None = None,
    path: str | None = None,
    name: str | None = None,
    dtype: DTypeLike | None = None,
    chunks: ChunksLike = None,
    chunk_shape: ChunksLike = None,
    fill_value: Any = None,
    compressor: Literal["auto"] | CodecLike | None = "auto",
    compressors: CompressorsLike = "auto",
    filters: FiltersLike = None,
    serializer: SerializerLike = "auto",
    codecs: CodecLike | Sequence[CodecLike] | None = None,
    **kwargs: Any,
) -> Array:
    """Create an array (zarr-python's ``zarr.create``).

    ``dtype`` defaults to float64 and ``chunks`` to an automatic shape, as in
    zarr-python; the other keywords are those of :func:`zarrpy.create_array`.
    ``codecs`` is a whole V3 chain, split here into filters, serializer and
    compressors; it cannot be combined with those.
    """
    if path is not None and name is not None:
        raise TypeError("create: give path= or name=, not both")
    if chunk_shape is not None:  # zarr-python's V3 name for chunks
        if chunks is not None:
            raise TypeError("create: give chunks= or chunk_shape=, not both")
        chunks = chunk_shape
    compressors = compressors_argument(compressors, compressor)
    if codecs is not None:
        if filters is not None or not _is(serializer, "auto") or not _is(compressors, "auto"):
            raise TypeError("create: codecs= is a whole chain; do not combine it with filters=, "
                            "serializer=, compressors= or compressor=")
        filters, serializer, compressors = _split_chain(codecs)
    return create_array(
        {} if store is None else store,
        name=name if name is not None else path,
        shape=user_shape(shape),
        dtype="float64" if dtype is None else dtype,
        chunks="auto" if chunks is None else chunks,
        fill_value=fill_value,
        filters=filters,
        serializer=serializer,
        compressors=compressors,
        **kwargs,
    )


def _split_chain(codecs: CodecLike | Sequence[CodecLike]) -> tuple[list[ArrayToArrayCodec], ArrayToBytesCodec, list[BytesToBytesCodec]]:
    """A V3 chain (codec objects or JSON) as (filters, serializer, compressors)."""
    items = codecs if isinstance(codecs, (list, tuple)) else [codecs]
    parsed = [codec_from_any(c, f"codecs[{i}]") for i, c in enumerate(items)]
    filters = [c for c in parsed if isinstance(c, ArrayToArrayCodec)]
    serializers = [c for c in parsed if isinstance(c, ArrayToBytesCodec)]
    compressors = [c for c in parsed if isinstance(c, BytesToBytesCodec)]
    if len(serializers) != 1:
        raise TypeError(f"create: codecs= needs exactly one array-to-bytes codec, got {len(serializers)}")
    return filters, serializers[0], compressors


def empty(shape: ShapeLike, **kwargs: Any) -> Array:
    """A new array whose unwritten parts read as the fill value (0 unless given)."""
    return create(shape, **kwargs)


def zeros(shape: ShapeLike, **kwargs: Any) -> Array:
    """A new array of zeros (fill value 0; nothing is stored until written)."""
    return create(shape, fill_value=0, **kwargs)


def ones(shape: ShapeLike, **kwargs: Any) -> Array:
    """A new array of ones (fill value 1; nothing is stored until written)."""
    return create(shape, fill_value=1, **kwargs)


def full(shape: ShapeLike, fill_value: Any, **kwargs: Any) -> Array:
    """A new array that reads ``fill_value`` everywhere until written."""
    return create(shape, fill_value=fill_value, **kwargs)


def _like_args(a: Any, zarr_format: int | None) -> dict[str, Any]:
    """Settings of a new array like ``a``: shape, chunks and dtype of any
    array-like; for a zarrpy Array also its fill value and, when the new array
    has the same format, its codecs, shards and (V2) memory order."""
    out: dict[str, Any] = {}
    shape = getattr(a, "shape", None)
    if isinstance(shape, tuple):
        out["shape"] = shape
        chunks = _grid_args(a)["chunks"] if isinstance(a, Array) else getattr(a, "chunks", None)
        if isinstance(chunks, dict):  # a zarrpy Array's rectilinear grid
            out["chunks"] = chunks
        elif isinstance(chunks, tuple) and len(chunks) == len(shape) and all(isinstance(c, int) for c in chunks):
            out["chunks"] = chunks
    if hasattr(a, "dtype"):
        out["dtype"] = a.dtype
    if isinstance(a, Array):
        out["fill_value"] = a.fill_value
        zarr_format = zarr_format or a.zarr_format
        if zarr_format == a.zarr_format:
            out.update(_codec_args(a))
    if zarr_format is not None:
        out["zarr_format"] = zarr_format
    return out


def _codec_args(a: Array) -> dict[str, Any]:
    """The codec settings that recreate ``a``'s chunk encoding (same format)."""
    out: dict[str, Any] = {"filters": list(a.filters) or None, "compressors": list(a.compressors) or None}
    metadata = a.metadata
    if isinstance(metadata, ArrayMetadataV2):
        out["order"] = metadata.order
    else:
        out["serializer"] = a.serializer
        out["shards"] = _grid_args(a)["shards"]
    return out


def _like(a: Any, zarr_format: int | None, kwargs: dict[str, Any], *, fill: bool = True) -> dict[str, Any]:
    """The arguments of a new array like ``a``, ``kwargs`` winning. Another
    ``dtype`` drops what only fits ``a``'s: its fill value and its filters
    and serializer; ``fill=False`` drops the fill value (zeros, ones)."""
    like = _like_args(a, zarr_format)
    if "dtype" in kwargs and "dtype" in like and not _same_data_type(kwargs["dtype"], like["dtype"]):
        for key in ("fill_value", "filters", "serializer"):
            like.pop(key, None)
    if not fill:
        like.pop("fill_value", None)
    return like | kwargs


def _same_data_type(a: Any, b: Any) -> bool:
    return DataType.from_numpy(a).name == DataType.from_numpy(b).name


def empty_like(a: npt.ArrayLike, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An empty array like ``a`` (shape, chunks, dtype and, for a zarrpy Array, codecs)."""
    return empty(**_like(a, zarr_format, kwargs))


def zeros_like(a: npt.ArrayLike, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An array of zeros like ``a``."""
    return zeros(**_like(a, zarr_format, kwargs, fill=False))


def ones_like(a: npt.ArrayLike, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An array of ones like ``a``."""
    return ones(**_like(a, zarr_format, kwargs, fill=False))


def full_like(a: npt.ArrayLike, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An array like ``a`` filled with ``fill_value`` (``a``'s own by default)."""
    like = _like(a, zarr_format, kwargs)
    if "fill_value" not in like:
        raise TypeError("full_like: give fill_value= (a has none to inherit)")
    return full(**like)


def array(data: ArrayValueLike, **kwargs: Any) -> Array:
    """A new array holding ``data`` (zarr-python's ``zarr.array``).

    Shape, dtype (and chunks, for a chunked source) come from ``data``; the
    other keywords are those of :func:`create`. A zarrpy Array is copied with
    its settings, as :func:`from_array` does.
    """
    if isinstance(data, Array):
        store = kwargs.pop("store", None)
        if "path" in kwargs:
            kwargs["name"] = kwargs.pop("path")
        return from_array({} if store is None else store, data=data, **kwargs)
    # Any array-like with shape and dtype (dask, xarray...) is read block by block as it is.
    source: Any = data if hasattr(data, "shape") and hasattr(data, "dtype") else as_data_array(data)
    kwargs.setdefault("dtype", infer_dtype(source))  # text and bytes: variable-length types
    kwargs.setdefault("chunks", _like_args(source, None).get("chunks"))
    out = create(source.shape, **kwargs)
    _copy(out, source)
    return out


def from_array(
    store: StoreLike,
    *,
    data: npt.ArrayLike,
    write_data: bool = True,
    name: str | None = None,
    chunks: ChunksLike | Literal["keep"] = "keep",
    shards: ShardsLike | Literal["keep"] = "keep",
    filters: FiltersLike | Literal["keep"] = "keep",
    compressors: CompressorsLike | Literal["keep"] = "keep",
    serializer: SerializerLike | Literal["keep"] = "keep",
    fill_value: Any = None,
    order: str | None = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    chunk_key_encoding: ChunkKeyEncodingLike = None,
    dimension_names: Sequence[str | None] | None = None,
    storage_options: dict[str, Any] | None = None,
    overwrite: bool = False,
    write_empty_chunks: bool = False,
    subchunk_write_order: str | None | Literal["keep"] = "keep",
) -> Array:
    """A new array at ``store``/``name`` copied from ``data`` (zarr-python's ``from_array``).

    ``"keep"`` takes the setting from ``data`` when it is a zarrpy Array
    (chunks, shards, codecs, the order its handle writes inner chunks in
    when the copy is sharded; and its fill value, attributes, dimension
    names and chunk key encoding when not given), else the default. The
    copy moves one bounded block at a time, so arrays larger than memory
    copy fine.
    """
    source = data if isinstance(data, Array) else None
    if source is None and not (hasattr(data, "shape") and hasattr(data, "dtype")):
        data = as_data_array(data)
    values: Any = data  # an array-like with shape and dtype from here on
    keep: dict[str, Any] = {"chunks": chunks, "shards": shards, "filters": filters, "compressors": compressors,
                            "serializer": serializer}
    if source is not None:
        zarr_format = zarr_format or source.zarr_format
        same_format = zarr_format == source.zarr_format
        inherited = {**_grid_args(source), **(_codec_args(source) if same_format else {})}
        inherited.pop("order", None)
        if not same_format or zarr_format == 2:
            inherited.pop("shards", None)
        settings = {k: (inherited.get(k, _DEFAULTS[k]) if _is(v, "keep") else v) for k, v in keep.items()}
        if fill_value is None:
            fill_value = source.fill_value
        if attributes is None:
            attributes = source.attrs.asdict()
        if dimension_names is None and zarr_format == 3:
            dimension_names = source.dimension_names
        if order is None and zarr_format == 2 and isinstance(source.metadata, ArrayMetadataV2):
            order = source.metadata.order
        if chunk_key_encoding is None and same_format and isinstance(source.metadata, ArrayMetadataV3):
            chunk_key_encoding = source.metadata.chunk_key_encoding
    else:
        zarr_format = zarr_format or 3
        settings = {k: (_DEFAULTS[k] if _is(v, "keep") else v) for k, v in keep.items()}
        if _is(chunks, "keep"):
            like_chunks = _like_args(values, None).get("chunks")
            settings["chunks"] = like_chunks if like_chunks is not None else "auto"
    extra: dict[str, Any] = {"order": order} if zarr_format == 2 else {}
    if not _is(subchunk_write_order, "keep"):
        extra["subchunk_write_order"] = subchunk_write_order
    elif source is not None and settings.get("shards") is not None:
        extra["subchunk_write_order"] = source.subchunk_write_order
    if zarr_format == 2 and chunk_key_encoding is not None:
        raise TypeError("from_array: chunk_key_encoding= is a Zarr V3 option")
    out = create_array(
        store, name=name, shape=values.shape, dtype=source.dtype if source is not None else infer_dtype(values),
        fill_value=fill_value, zarr_format=zarr_format, attributes=attributes,
        chunk_key_encoding=chunk_key_encoding, dimension_names=dimension_names,
        storage_options=storage_options, overwrite=overwrite, write_empty_chunks=write_empty_chunks,
        **settings, **extra,
    )
    if write_data:
        _copy(out, values)
    return out


_DEFAULTS: dict[str, Any] = {"chunks": "auto", "shards": None, "filters": None, "compressors": "auto",
                             "serializer": "auto"}


def _copy(out: Array, data: Any) -> None:
    """Write ``data`` into ``out`` block by block (a numpy array at once);
    shards too large to hold a few of in memory are streamed from bands."""
    if out.size and _streams(out):
        _stream_copy(out, data)
        return
    if isinstance(data, np.ndarray) or out.size == 0:
        out[...] = data
        return
    for region in _copy_regions(out):
        out[region] = np.asarray(data[region])


def _grid_args(source: Array) -> dict[str, Any]:
    """``chunks=`` and ``shards=`` that give a new array of ``source``'s shape
    its chunk grid (a rectilinear one as its ``chunk_grid`` member)."""
    if not source.is_sharded:
        grid = source._io.grid
        return {"chunks": source.chunk_grid if grid.kind != REGULAR else source.chunks, "shards": None}
    return {"chunks": source.chunks, "shards": source.chunk_grid if source._io.grid.kind != REGULAR else source.shards}


def _streams(out: Array) -> bool:
    """Are ``out``'s shards large enough to stream, and can they be streamed?"""
    if not out.is_sharded:
        return False
    shards = out._io.spec.shape  # the largest, when shards differ in shape
    # An edge shard holds only the inner chunks inside the array: a shard larger than the array costs less.
    held = [min(s, -(-n // c) * c) for s, n, c in zip(shards, out.shape, out.chunks)]
    if math.prod(held) * max(out.dtype.itemsize, 8) <= _STREAM_SHARD_NBYTES:
        return False
    from ._shard_writes import streams_shards  # the sharding codec, loaded only where shards stream

    return streams_shards(out)


def _stream_copy(out: Array, data: Any) -> None:
    """Each shard of ``out`` written inner chunk by inner chunk, read from
    ``data`` in bands of whole inner chunks holding at most half a copy step."""
    from ._shard_writes import plan_band, write_shard

    itemsize = max(out.dtype.itemsize, 8)
    band = plan_band(out, lambda b: math.prod(b) * itemsize <= _COPY_STEP_NBYTES // 2) or out.chunks

    def read(region: tuple[slice, ...]) -> Any:
        return data[region] if isinstance(data, np.ndarray) else np.asarray(data[region])

    for coords in np.ndindex(*out._io.grid.grid_shape):
        write_shard(out, coords, read, band=band)


def _copy_regions(out: Array) -> list[tuple[slice, ...]]:
    """Regions of ``out`` aligned to its stored chunks (shards), each holding
    about :data:`_COPY_STEP_NBYTES` or one stored chunk, covering it whole:
    runs of ``step`` stored chunks along each dimension (any chunk grid)."""
    grid = out._io.grid
    largest = grid.max_chunk_shape
    step = [1] * out.ndim
    itemsize = max(out.dtype.itemsize, 8)
    # Grow the step from the last axis backwards while it stays under budget.
    for axis in reversed(range(out.ndim)):
        while step[axis] < grid.dims[axis].nchunks and math.prod(
                s * c for s, c in zip(step, largest)) * 2 * itemsize <= _COPY_STEP_NBYTES:
            step[axis] = min(step[axis] * 2, grid.dims[axis].nchunks)
    per_axis = []
    for dim, k in zip(grid.dims, step):
        runs = []
        for first in range(0, max(dim.nchunks, 1), k):
            last = min(first + k, dim.nchunks) - 1
            runs.append(slice(dim.offset(first), dim.offset(last) + dim.data_size(last)) if dim.nchunks else slice(0, 0))
        per_axis.append(runs)
    return [tuple(region) for region in itertools.product(*per_axis)]


def group(
    store: StoreLike | None = None,
    *,
    overwrite: bool = False,
    path: str | None = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Open the group at ``store``/``path``, creating it if missing
    (``overwrite=True`` replaces whatever is there), as zarr-python's ``zarr.group``."""
    return open_group({} if store is None else store, mode="w" if overwrite else "a", path=path,
                      zarr_format=zarr_format, attributes=attributes, storage_options=storage_options)


def open_consolidated(store: StoreLike, *, use_consolidated: bool = True, **kwargs: Any) -> Group:
    """Open a group from its consolidated metadata (an error if it has none)."""
    if use_consolidated is not True:
        raise TypeError("open_consolidated needs use_consolidated=True; "
                        "use zarrpy.open_group(..., use_consolidated=False) to read the live hierarchy")
    return open_group(store, use_consolidated=True, **kwargs)


__all__ = [
    "array", "create", "empty", "empty_like", "from_array", "full", "full_like", "group", "ones",
    "ones_like", "open_consolidated", "zeros", "zeros_like",
]
