"""Write an xarray Dataset through zarrpy, in the layout xarray's ``to_zarr`` writes.

:func:`to_zarrpy` runs xarray's own encoding (``conventions.encode_dataset_coordinates``,
then the zarr backend's per-variable CF encoding) and stores each variable as
xarray's zarr backend stores it, so ``xr.open_zarr`` (zarr-python) and
``engine="zarrpy"`` read the result back alike:

- dimension names in V3 ``dimension_names``, in V2 the ``_ARRAY_DIMENSIONS``
  attribute;
- V3: the Zarr ``fill_value`` from ``encoding["fill_value"]`` (NaN for floats
  by default), the CF ``_FillValue`` an attribute (floats as xarray's
  base64); V2: ``_FillValue`` is the Zarr ``fill_value``, and a variable
  without one gets ``fill_value: null`` as zarr-python writes it (a V2
  reader masks the fill value: a 0 there would hide the zeros in the data);
- chunks from ``encoding["chunks"]``, else the dask chunks, else zarrpy's
  ``"auto"``; ``shards``, ``compressors``, ``filters``, ``serializer``,
  ``chunk_key_encoding`` and ``write_empty_chunks`` from the encoding.

Every variable's encoding (and dask chunking) is checked before the group is
created. Dask-backed variables are written block by block by dask (each task
writes its block into the zarrpy array). Other variables are in memory by
then (xarray's CF encoding loads lazily opened data, as ``to_zarr``'s does):
open a large dataset with ``chunks={}`` to copy it block by block.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
import xarray as xr
from xarray import coding, conventions
from xarray.backends.common import AbstractWritableDataStore, ArrayWriter
from xarray.backends.zarr import FillValueCoder, encode_zarr_attr_value, encode_zarr_variable

from ..api._array import Array
from ..api._group import Group, consolidate_metadata
from ..api._node import write_metadata
from ..api._open import open_group
from ..codecs.abc import ArrayToBytesCodec
from ..codecs.user_forms import codec_from_any
from ..metadata.v2 import ArrayMetadataV2
from .xarray_backend import DIMENSION_KEY
from ..errors import ChunkAlignmentError
from .dask_io import first_misaligned

_ENCODING_KEYS = frozenset({"chunks", "shards", "compressors", "filters", "serializer", "chunk_key_encoding",
                            "write_empty_chunks", "cache_metadata"})
"""What a variable's encoding may hold when it is written (xarray's list; ``fill_value`` too in V3)."""
_DROPPED_KEYS = frozenset({"source", "original_shape", "preferred_chunks"})
"""Encoding that reading leaves and writing ignores, even when given explicitly."""

_ENCODER_TAKES_FORMAT = "zarr_format" in inspect.signature(encode_zarr_variable).parameters


def to_zarrpy(
    ds: xr.Dataset,
    store: Any,
    *,
    group: str | None = None,
    mode: str = "w-",
    encoding: Mapping[Hashable, Mapping[str, Any]] | None = None,
    zarr_format: int = 3,
    consolidated: bool = True,
    storage_options: dict[str, Any] | None = None,
    safe_chunks: bool = True,
) -> Group:
    """Write ``ds`` to ``store`` (a path, an fsspec URL or a zarrpy Store) and
    return the group written.

    Parameters
    ----------
    group
        Path of the group inside the store (missing parent groups are created).
    mode
        ``"w-"``: fail if a node exists at ``group``; ``"w"``: replace it.
    encoding
        Per variable, as ``Dataset.to_zarr``'s: ``{"v": {"chunks": (100,),
        "shards": (1000,), "compressors": [...], "dtype": "int16",
        "scale_factor": 0.1, "_FillValue": -1}}``; codecs as zarrpy, zarr-python or
        numcodecs objects or their JSON. A key xarray's zarr backend does not
        take raises ValueError.
    consolidated
        Consolidate the metadata of the whole store at its root afterwards,
        as ``to_zarr`` does by default.
    safe_chunks
        Refuse dask chunks that would make two tasks write one chunk (shard,
        when sharded), as ``to_zarr`` does. zarrpy serialises writes to one
        chunk within a process, so ``False`` is safe with dask's threaded
        scheduler, not with processes or a distributed cluster.

    Raises
    ------
    NodeExistsError
        With ``mode="w-"`` when something is there already.
    ValueError
        For a bad ``mode``, an encoding of a variable not in ``ds`` or with an
        unknown key, or misaligned dask chunks.
    """
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"to_zarrpy writes an xarray Dataset, got {type(ds).__name__} (DataArray: use .to_dataset())")
    if mode not in ("w", "w-"):
        raise ValueError(f"mode must be 'w' (replace) or 'w-' (fail if present), got {mode!r}")
    encoding = {k: dict(v) for k, v in (encoding or {}).items()}
    unknown = [k for k in encoding if k not in ds.variables]
    if unknown:
        raise ValueError(f"encoding given for variables that are not in the dataset: {unknown!r}")
    for name in ds.variables:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"variable name {name!r}: Zarr needs a non-empty string without '/'")

    variables, attributes = conventions.encode_dataset_coordinates(ds)
    for name, enc in encoding.items():
        variables[name].encoding = enc
    target = ZarrpyWritableStore(
        lambda attributes: open_group(store, mode=mode, path=group, zarr_format=zarr_format,
                                      storage_options=storage_options, attributes=attributes),
        zarr_format=zarr_format, safe_chunks=safe_chunks,
    )
    writer = ArrayWriter()
    target.store(variables, attributes, set(encoding), writer)
    writer.sync()
    group_written = cast(Group, target.group)
    if consolidated:
        consolidate_metadata(group_written.store)
    return group_written


@dataclass(frozen=True)
class _ArrayPlan:
    """One encoded variable and the ``create_array`` arguments of its array."""

    name: str
    variable: xr.Variable
    create: dict[str, Any]
    null_fill: bool
    """A V2 array made without a fill value: its ``fill_value`` is written as null."""


class ZarrpyWritableStore(AbstractWritableDataStore):
    """The target of xarray's ``store()``: xarray encodes the variables, this
    plans one array per variable (every encoding checked), then creates the
    group (``open_target(attributes)``) and the arrays, then writes the data: dask
    data through the writer (block by block, when it syncs), other data at
    once. A bad encoding or dask chunking raises before anything is created."""

    __slots__ = ("group", "_open_target", "_zarr_format", "_safe_chunks")

    def __init__(self, open_target: Callable[[dict[str, Any]], Group], *, zarr_format: int = 3, safe_chunks: bool = True):
        self._open_target = open_target
        self._zarr_format = zarr_format
        self._safe_chunks = safe_chunks
        self.group: Group | None = None

    def encode_variable(self, variable: xr.Variable, name: Hashable = None) -> xr.Variable:
        """xarray's zarr CF encoding of one variable (times, packing, masks, strings)."""
        if _ENCODER_TAKES_FORMAT:
            fmt: Literal[2, 3] = 3 if self._zarr_format == 3 else 2
            encoded = encode_zarr_variable(variable, name=name, zarr_format=fmt)
        else:
            encoded = encode_zarr_variable(variable, name=name)
        return cast(xr.Variable, encoded)

    def encode_attribute(self, a: Any) -> Any:
        """An attribute value as JSON (numpy arrays as lists, numpy scalars as Python ones)."""
        return encode_zarr_attr_value(a)

    def store(self, variables: Mapping[str, xr.Variable], attributes: Mapping[str, Any],
              check_encoding_set: Any = frozenset(), writer: ArrayWriter | None = None,
              unlimited_dims: Any = None) -> None:
        """Encode, plan, create the group and its arrays, write (see the class docstring).

        ``check_encoding_set``: the variables whose encoding the user gave,
        where a key zarrpy does not take is an error (elsewhere it is dropped).
        Dask data is written when ``writer`` syncs (at once without a ``writer``).
        """
        if unlimited_dims:
            raise NotImplementedError("Zarr has no unlimited dimensions")
        variables, attributes = self.encode(variables, attributes)
        plans = [self._plan(name, v, strict=name in check_encoding_set) for name, v in variables.items()]
        self.group = group = self._open_target(dict(attributes))  # only now: nothing is created when a plan fails
        arrays = [group.create_array(plan.name, **plan.create) for plan in plans]
        arrays = [_with_null_fill_value(a) if plan.null_fill else a for plan, a in zip(plans, arrays)]
        dask_writer = writer if writer is not None else ArrayWriter()
        for plan, array in zip(plans, arrays):
            if plan.variable.chunks is not None and plan.variable.size:
                dask_writer.add(plan.variable.data, array)
            else:  # in memory: xarray's CF encoding has loaded it
                array[...] = plan.variable.values
        if writer is None:
            dask_writer.sync()

    def _plan(self, name: str, variable: xr.Variable, *, strict: bool) -> _ArrayPlan:
        """The array of one encoded variable, as xarray's ``ZarrStore.set_variables`` makes it."""
        v3 = self._zarr_format == 3
        attrs = dict(variable.attrs)
        encoding = dict(variable.encoding)
        if v3:
            fill = encoding.pop("fill_value", None)
            if fill is None and variable.dtype.kind == "f":
                fill = np.nan  # xarray's default for floats, where Zarr's is 0
            cf_fill = attrs.pop("_FillValue", None)
            if cf_fill is not None:
                attrs["_FillValue"] = FillValueCoder.encode(cf_fill, variable.dtype)
        else:
            fill = attrs.pop("_FillValue", None)  # V2: the Zarr fill value is the CF one
        if encoding.pop("_FillValue", None) is not None:
            raise ValueError(f"variable {name!r}: Zarr does not support _FillValue in encoding")
        options = _array_options(name, variable, encoding, strict=strict, v3=v3)
        if variable.chunks is not None and variable.size and self._safe_chunks:
            _check_dask_chunks(name, variable.chunks, options["chunks"], options["shards"])
        attrs = {k: encode_zarr_attr_value(x) for k, x in attrs.items()}
        if not v3:
            attrs[DIMENSION_KEY] = list(variable.dims)
        dtype = str if coding.strings.check_vlen_dtype(variable.dtype) is str else variable.dtype
        create = dict(shape=variable.shape, dtype=dtype, fill_value=fill, attributes=attrs,
                      dimension_names=variable.dims if v3 else None, **options)
        return _ArrayPlan(name, variable, create, null_fill=not v3 and fill is None)


def _array_options(name: str, variable: xr.Variable, encoding: dict[str, Any], *, strict: bool,
                   v3: bool) -> dict[str, Any]:
    """``create_array`` arguments from a variable's remaining encoding."""
    valid = _ENCODING_KEYS | {"fill_value"} if v3 else _ENCODING_KEYS
    invalid = sorted(k for k in encoding if k not in valid and k not in _DROPPED_KEYS)
    if strict and invalid:
        hint = " Use `_FillValue` to set the Zarr V2 fill_value." if "fill_value" in invalid else ""
        raise ValueError(f"unexpected encoding parameters for zarrpy (variable {name!r}): {invalid!r}.{hint}")
    options = {k: v for k, v in encoding.items() if k in _ENCODING_KEYS - {"cache_metadata", "chunks", "shards"}}
    if options.get("filters"):
        options["filters"] = _without_serializers(options["filters"])
    options["chunks"] = _chunks(name, variable, encoding.get("chunks"))
    shards = encoding.get("shards")
    if isinstance(shards, int):
        shards = (shards,) * variable.ndim
    elif isinstance(shards, Mapping):  # zarr-python's {"shape": ...} form
        shards = shards.get("shape")
    options["shards"] = None if shards is None else tuple(shards)
    return options


def _without_serializers(filters: Any) -> list[Any]:
    """``filters`` without the V2 object codec (``vlen-utf8`` …) that
    zarr-python lists among a V2 array's filters: zarrpy picks the serializer
    from the data type, which xarray's V2 encoding may have changed (it
    writes StringDType as fixed-length ``<U``)."""
    return [f for f in filters if not isinstance(codec_from_any(f, "filters"), ArrayToBytesCodec)]


def _chunks(name: str, variable: xr.Variable, given: Any) -> Any:
    """The chunk shape: the encoding's (an int means all dimensions), else the
    first dask chunk of each dimension, else ``"auto"`` (xarray's rules)."""
    if isinstance(given, int):
        given = (given,) * variable.ndim
    if given is not None and len(given) == variable.ndim:
        if not all(isinstance(c, (int, np.integer)) for c in given):
            raise TypeError(f"encoding['chunks'] of variable {name!r} must be an int or a tuple of ints, got {given!r}")
        return tuple(int(c) for c in given)
    dask_chunks = variable.chunks
    if not dask_chunks or not variable.size:
        return "auto"
    for sizes in dask_chunks:
        if len(set(sizes[:-1])) > 1 or sizes[-1] > sizes[0]:
            raise ValueError(f"variable {name!r}: Zarr needs uniform dask chunks (the last may be smaller), "
                             f"got {dask_chunks!r}; rechunk with .chunk() or set encoding['chunks']")
    return tuple(sizes[0] for sizes in dask_chunks)


def _check_dask_chunks(name: str, dask_chunks: tuple[tuple[int, ...], ...], chunks: tuple[int, ...],
                       shards: tuple[int, ...] | None) -> None:
    """Every dask block but the last along a dimension must end on a boundary
    of the array's chunks (shards, when sharded): else two tasks would write
    one stored object (ChunkAlignmentError, a ValueError)."""
    what, grid = ("chunk", chunks) if shards is None else ("shard", shards)
    for dim, (sizes, unit) in enumerate(zip(dask_chunks, grid)):
        end = first_misaligned(sizes, 0, unit)
        if end is not None:
            raise ChunkAlignmentError(
                f"variable {name!r}: dask chunks {sizes} along dimension {dim} do not align with the stored "
                f"{what} size {unit} (a block ends at {end}), so two dask tasks would write the same stored "
                "object; rechunk with .chunk(), change encoding['chunks'] or ['shards'], or pass "
                "safe_chunks=False (safe with dask's threaded scheduler only)"
            )


def _with_null_fill_value(array: Array) -> Array:
    """The V2 array with ``fill_value: null``, as zarr-python writes one made
    without a fill value (zarrpy writes the type's zero, or ``""``, which V2
    readers of xarray data would take for a mask). zarrpy reads null as
    that same zero, so the array's contents do not change."""
    metadata = array.metadata
    if not isinstance(metadata, ArrayMetadataV2):  # pragma: no cover - called for V2 arrays only
        raise TypeError(f"{array!r} is not a Zarr V2 array")
    metadata = metadata.evolve(fill_value_json=None)
    write_metadata(array.store, array.path, metadata)
    return Array(array.store, array.path, metadata)


__all__ = ["ZarrpyWritableStore", "to_zarrpy"]
