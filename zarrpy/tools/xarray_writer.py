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

``mode``, ``append_dim`` and ``region`` are ``Dataset.to_zarr``'s: ``"a"``
adds new variables and writes existing ones in place (``append_dim``: grown
along that dimension), ``"a-"`` leaves the existing variables without
``append_dim`` alone, ``"r+"`` writes existing variables only, into
``region`` (``{dim: slice}`` or ``"auto"``, found from the coordinates) or
whole. An existing variable is encoded exactly as it is stored (its
``scale_factor``, time units, ``_FillValue``), as xarray does.

Every variable's encoding (and dask chunking) is checked before the group is
created or an existing array is resized. Dask-backed variables are written block by block by dask (each task
writes its block into the zarrpy array). Other variables are in memory by
then (xarray's CF encoding loads lazily opened data, as ``to_zarr``'s does):
open a large dataset with ``chunks={}`` to copy it block by block.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
import xarray as xr
from xarray import coding, conventions
from xarray.backends.common import AbstractWritableDataStore, ArrayWriter
from xarray.backends.zarr import (
    FillValueCoder,
    _validate_and_transpose_existing_dims,
    _validate_datatypes_for_zarr_append,
    encode_zarr_attr_value,
    encode_zarr_variable,
)

from ..api._array import Array
from ..api._group import Group, consolidate_metadata
from ..api._node import write_metadata
from ..api._open import open_group
from ..codecs.abc import ArrayToBytesCodec
from ..codecs.user_forms import codec_from_any
from ..metadata.v2 import ArrayMetadataV2
from .xarray_backend import DIMENSION_KEY, ZarrpyDataStore, compact_chunk_sizes
from ..errors import ChunkAlignmentError, NodeExistsError, NodeNotFoundError
from .dask_io import first_misaligned, first_off_edges

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
    mode: str | None = None,
    encoding: Mapping[Hashable, Mapping[str, Any]] | None = None,
    append_dim: Hashable | None = None,
    region: Mapping[str, slice | Literal["auto"]] | Literal["auto"] | None = None,
    zarr_format: int | None = None,
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
        As ``Dataset.to_zarr``'s: ``"w-"`` (the default) fails if a node
        exists at ``group``; ``"w"`` replaces it; ``"a"`` adds to the group
        there (created if missing): new variables are created, existing ones
        written in place; ``"a-"`` as ``"a"``, but existing variables without
        ``append_dim`` are left alone; ``"r+"`` writes existing variables
        only, changing no metadata. Default ``"a"`` with ``append_dim``,
        ``"r+"`` with ``region``.
    encoding
        Per variable, as ``Dataset.to_zarr``'s: ``{"v": {"chunks": (100,),
        "shards": (1000,), "compressors": [...], "dtype": "int16",
        "scale_factor": 0.1, "_FillValue": -1}}``; codecs as zarrpy, zarr-python or
        numcodecs objects or their JSON. A key xarray's zarr backend does not
        take raises ValueError.
    append_dim
        Grow the existing variables that have this dimension along it, and
        write the new data there (``mode`` ``"a"`` or ``"a-"``).
    region
        ``{dim: slice(start, stop)}`` (step 1) or ``"auto"`` (each dimension's
        region found from the stored coordinate values): the part of the
        existing arrays to write (``mode`` ``"r+"`` or ``"a"``). Every variable
        needs one of the region's dimensions; indexed coordinates are dropped
        (they cannot change in a region write).
    zarr_format
        Of a new group: 3 (the default) or 2; an existing group keeps its own.
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
    NodeNotFoundError
        With ``mode="r+"`` when there is no group to write into.
    ValueError
        For a bad ``mode``, an encoding of a variable not in ``ds``, with an
        unknown key or of a variable that exists already, misaligned dask
        chunks, or (as ``to_zarr``) an ``append_dim`` or ``region`` that does
        not fit the stored dataset.
    """
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"to_zarrpy writes an xarray Dataset, got {type(ds).__name__} (DataArray: use .to_dataset())")
    mode = _choose_mode(mode, append_dim, region)
    encoding = {k: dict(v) for k, v in (encoding or {}).items()}
    unknown = [k for k in encoding if k not in ds.variables]
    if unknown:
        raise ValueError(f"encoding given for variables that are not in the dataset: {unknown!r}")
    for name in ds.variables:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"variable name {name!r}: Zarr needs a non-empty string without '/'")

    existing = _existing_group(store, group, storage_options, mode) if mode in ("a", "a-", "r+") else None
    if existing is not None:
        if zarr_format is not None and zarr_format != existing.zarr_format:
            raise ValueError(f"zarr_format={zarr_format} was given, but the group at {_where(store, group)} "
                             f"is Zarr V{existing.zarr_format}")
        zarr_format = existing.zarr_format
        if stored := sorted(str(k) for k in encoding if str(k) in existing.array_keys()):
            raise ValueError(f"variable {stored[0]!r} already exists, but encoding was provided")
    elif region is not None:
        raise ValueError(f"region= writes into existing arrays, and there is no group at {_where(store, group)}")
    write_region: dict[str, slice] | None = None
    if region is not None:
        ds, write_region = _region(ds, region, cast(Group, existing), append_dim)
    fmt = 3 if zarr_format is None else zarr_format
    variables, attributes = conventions.encode_dataset_coordinates(ds)
    for name, enc in encoding.items():
        variables[name].encoding = enc

    def open_target(attributes: dict[str, Any]) -> Group:
        if existing is not None:
            return existing
        try:
            return open_group(store, mode="w" if mode == "w" else "w-", path=group, zarr_format=fmt,
                              storage_options=storage_options, attributes=attributes)
        except NodeExistsError as exc:
            raise NodeExistsError(f"to_zarrpy: {_where(store, group)} already holds a Zarr node; pass mode='w' "
                                  "to replace it, or mode='a' to add to it (append_dim= to append along "
                                  "a dimension, region= to write into part of it)") from exc

    target = ZarrpyWritableStore(open_target, zarr_format=fmt, safe_chunks=safe_chunks, mode=mode,
                                 existing=existing, append_dim=append_dim, region=write_region)
    writer = ArrayWriter()
    target.store(variables, attributes, set(encoding), writer)
    writer.sync()
    group_written = cast(Group, target.group)
    if consolidated and mode != "r+":
        consolidate_metadata(group_written.store)
    return group_written


_MODES = ("w-", "w", "a", "a-", "r+")


def _choose_mode(mode: str | None, append_dim: Hashable | None, region: Any) -> str:
    """``to_zarr``'s rules: the default mode (``"a"`` with ``append_dim``,
    ``"r+"`` with ``region``, else ``"w-"``) and which modes take which."""
    if mode is None:
        mode = "a" if append_dim is not None else "r+" if region is not None else "w-"
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, _MODES))}, got {mode!r}")
    if append_dim is not None and mode not in ("a", "a-"):
        raise ValueError(f"append_dim= appends to existing arrays: it needs mode='a' (or 'a-'), got mode={mode!r}")
    if region is not None and mode not in ("a", "a-", "r+"):
        raise ValueError(f"region= writes into existing arrays: it needs mode='r+' or 'a', got mode={mode!r}")
    return mode


def _where(store: Any, group: str | None) -> str:
    name = getattr(store, "display_name", None) or str(store)
    return repr(name) + (f" (group {group!r})" if group else "")


def _existing_group(store: Any, group: str | None, storage_options: dict[str, Any] | None, mode: str) -> Group | None:
    """The group to add to, opened for writing; None when there is none and ``mode`` may create it."""
    try:
        return open_group(store, mode="r+", path=group, storage_options=storage_options, use_consolidated=False)
    except NodeNotFoundError:
        if mode == "r+":
            raise NodeNotFoundError(f"to_zarrpy: mode='r+' writes into an existing group, and there is none at "
                                    f"{_where(store, group)}; pass mode='a' or 'w-' to create it") from None
        return None


def _region(ds: xr.Dataset, region: Any, group: Group, append_dim: Hashable | None) -> tuple[xr.Dataset, dict[str, slice]]:
    """``region`` checked (and ``"auto"`` parts found) as ``to_zarr`` does;
    ``ds`` without its indexes, which a region write cannot change."""
    if region == "auto":
        region = dict.fromkeys(ds.dims, "auto")
    if not isinstance(region, Mapping):
        raise TypeError(f"region must be a dict of slices or 'auto', got {type(region).__name__}")
    found: dict[str, slice] = {}
    for dim, part in region.items():
        if dim not in ds.dims:
            raise ValueError(f"region: {dim!r} is not a dimension of the dataset ({list(ds.dims)})")
        if isinstance(part, str) and part == "auto":
            part = _auto_region(ds, str(dim), group)
        if not isinstance(part, slice):
            raise TypeError(f"region: {dim!r} must be a slice or 'auto', got {part!r}")
        if part.step not in (1, None):
            raise ValueError(f"region: the slice of {dim!r} must have step 1, got {part!r}")
        found[str(dim)] = part
    if append_dim is not None and append_dim in found:
        raise ValueError(f"{append_dim!r} cannot be both append_dim and in region")
    unrelated = [k for k, v in ds.variables.items() if not set(found).intersection(v.dims)]
    if found and unrelated:
        raise ValueError(f"region: every variable written needs one of the region's dimensions {list(found)}; "
                         f"drop the others first: .drop_vars({unrelated!r})")
    return ds.drop_vars(ds.indexes), found


def _auto_region(ds: xr.Dataset, dim: str, group: Group) -> slice:
    """Where ``ds``'s coordinate ``dim`` lies in the stored one (contiguous), as ``region="auto"`` finds it."""
    if dim not in ds.variables:
        return slice(0, ds.sizes[dim])
    if dim not in group.array_keys():
        raise ValueError(f"region='auto': the store has no coordinate {dim!r} to find the region in")
    source = ZarrpyDataStore(group)
    stored = conventions.decode_cf_variable(dim, source.open_store_variable(dim, _stored_array(group, dim)).compute())
    positions = stored.to_index().get_indexer(ds.get_index(dim))
    if (positions == -1).any():
        raise KeyError(f"region='auto': not all values of coordinate {dim!r} are in the stored one; a region write "
                       "cannot change coordinates")
    if len(positions) and (np.diff(positions) != 1).any():
        raise ValueError(f"region='auto': the values of coordinate {dim!r} are not a contiguous part of the stored ones")
    return slice(int(positions[0]), int(positions[-1]) + 1) if len(positions) else slice(0, 0)


def _stored_array(group: Group, name: str) -> Array:
    """The array ``name`` of ``group``; ValueError when a group has that name."""
    node = group[name]
    if not isinstance(node, Array):
        raise ValueError(f"variable {name!r}: the store holds a group of that name, not an array")
    return node


@dataclass(frozen=True)
class _ArrayUpdate:
    """An existing variable's write: into ``region`` of ``array``, grown to ``shape`` first when appending."""

    variable: xr.Variable
    array: Array
    shape: tuple[int, ...]
    region: tuple[slice, ...]


def _write(writer: ArrayWriter, variable: xr.Variable, array: Array, region: tuple[slice, ...]) -> None:
    """Dask data through ``writer`` (block by block when it syncs); data in
    memory (xarray's CF encoding has loaded it) at once."""
    if variable.chunks is not None and variable.size:
        writer.add(variable.data, array, region=region or None)
    else:
        array[region or ...] = variable.values


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

    __slots__ = ("group", "_open_target", "_zarr_format", "_safe_chunks", "_mode", "_existing", "_append_dim",
                 "_region")

    def __init__(self, open_target: Callable[[dict[str, Any]], Group], *, zarr_format: int = 3, safe_chunks: bool = True,
                 mode: str = "w-", existing: Group | None = None, append_dim: Hashable | None = None,
                 region: dict[str, slice] | None = None):
        self._open_target = open_target
        self._zarr_format = zarr_format
        self._safe_chunks = safe_chunks
        self._mode = mode
        self._existing = existing
        self._append_dim = append_dim
        self._region = region
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
        stored = set(self._existing.array_keys()) if self._existing is not None else set()
        old = {name: v for name, v in variables.items() if name in stored}
        if self._mode == "r+" and (new_names := [k for k in variables if k not in stored]):
            raise ValueError(f"the dataset has variables that are not in the store, {new_names!r}, which "
                             "mode='r+' cannot create; pass mode='a' to add them")
        if self._append_dim is not None and not self._has_dimension(self._append_dim):
            raise ValueError(f"append_dim={self._append_dim!r} does not match any dimension of the stored dataset")
        encoded, attributes = self.encode({k: v for k, v in variables.items() if k not in old}, attributes)
        updates = [self._update(name, v) for name, v in self._encoded_as_stored(old).items()
                   if self._mode != "a-" or self._append_dim in v.dims]
        plans = [self._plan(name, v, strict=name in check_encoding_set) for name, v in encoded.items()]
        # Only now, everything checked: create the group (or change the existing one) and the arrays.
        self.group = group = self._open_target(dict(attributes))
        if self._existing is not None and self._mode != "r+":
            group.attrs.put(dict(attributes))
        arrays = [group.create_array(plan.name, **plan.create) for plan in plans]
        arrays = [_with_null_fill_value(a) if plan.null_fill else a for plan, a in zip(plans, arrays)]
        dask_writer = writer if writer is not None else ArrayWriter()
        for plan, array in zip(plans, arrays):
            _write(dask_writer, plan.variable, array, ())
        for update in updates:
            if update.shape != update.array.shape:
                update.array.resize(update.shape)
            _write(dask_writer, update.variable, update.array, update.region)
        if writer is None:
            dask_writer.sync()

    def _has_dimension(self, dim: Hashable) -> bool:
        """Does some stored array have dimension ``dim``?"""
        if self._existing is None:
            return False
        return dim in ZarrpyDataStore(self._existing).get_dimensions()

    def _encoded_as_stored(self, variables: Mapping[str, xr.Variable]) -> dict[str, xr.Variable]:
        """``variables`` that exist in the store, encoded with the stored
        encoding (as xarray does: the appended values must be encoded exactly
        as the stored ones), with their dimensions in the stored order."""
        if not variables:
            return {}
        group = cast(Group, self._existing)
        source = ZarrpyDataStore(group)
        raw = {k: source.open_store_variable(k, _stored_array(group, k)) for k in variables}
        stored, _, _ = conventions.decode_cf_variables(variables=raw, attributes={})
        with_encoding = {}
        for name, v in variables.items():
            _validate_datatypes_for_zarr_append(name, stored[name], v)
            with_encoding[name] = v.copy(deep=False)
            with_encoding[name].encoding = stored[name].encoding
        encoded, _ = self.encode(with_encoding, {})
        return {name: _validate_and_transpose_existing_dims(name, encoded[name], stored[name], self._region,
                                                            self._append_dim) for name in encoded}

    def _update(self, name: str, variable: xr.Variable) -> _ArrayUpdate:
        """Where one existing variable goes: its array, the region, the array's new shape when appending."""
        array = _stored_array(cast(Group, self._existing), name)
        shape = list(array.shape)
        parts = {dim: (self._region or {}).get(str(dim), slice(None)) for dim in variable.dims}
        if self._append_dim is not None and self._append_dim in variable.dims:
            axis = variable.dims.index(self._append_dim)
            parts[self._append_dim] = slice(array.shape[axis], None)
            shape[axis] += variable.shape[axis]
        region = tuple(parts[dim] for dim in variable.dims)
        if variable.chunks is not None and variable.size and self._safe_chunks:
            starts = tuple(r.indices(n)[0] for r, n in zip(region, shape))
            _check_dask_chunks(name, variable.chunks, *_write_units(array), starts)
        return _ArrayUpdate(variable, array, tuple(shape), region)

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
            shards = options["shards"]
            _check_dask_chunks(name, variable.chunks, options["chunks"] if shards is None else shards,
                               "chunk" if shards is None else "shard")
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
    options["shards"] = None if shards is None else tuple(_edges_argument(s) for s in shards)
    return options


def _edges_argument(value: Any) -> Any:
    """One dimension of ``chunks`` / ``shards`` encoding as ``create_array``
    takes it: an int, or a rectilinear dimension's edges as a list."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return [int(v) for v in value]
    return int(value)


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
        def edges(c: Any) -> bool:
            return isinstance(c, (list, tuple)) and all(isinstance(e, (int, np.integer)) for e in c)
        if not all(isinstance(c, (int, np.integer)) or edges(c) for c in given):
            raise TypeError(f"encoding['chunks'] of variable {name!r} must be an int or a tuple of ints "
                            f"(a dimension's edge lengths for a rectilinear grid), got {given!r}")
        return tuple(_edges_argument(c) for c in given)
    dask_chunks = variable.chunks
    if not dask_chunks or not variable.size:
        return "auto"
    for sizes in dask_chunks:
        if len(set(sizes[:-1])) > 1 or sizes[-1] > sizes[0]:
            raise ValueError(f"variable {name!r}: Zarr needs uniform dask chunks (the last may be smaller), "
                             f"got {dask_chunks!r}; rechunk with .chunk() or set encoding['chunks']")
    return tuple(sizes[0] for sizes in dask_chunks)


def _write_units(array: Array) -> tuple[tuple[Any, ...], str]:
    """What one write of ``array`` replaces, per dimension (an int, or a
    rectilinear dimension's sizes), and its name (chunk or shard)."""
    what = "shard" if array.is_sharded else "chunk"
    if array.chunk_grid["name"] == "rectilinear":
        return compact_chunk_sizes(array.write_chunk_sizes), what
    return (array.shards if array.is_sharded else array.chunks) or (), what


def _check_dask_chunks(name: str, dask_chunks: tuple[tuple[int, ...], ...], units: tuple[Any, ...], what: str,
                       starts: tuple[int, ...] | None = None) -> None:
    """Every dask block but the last along a dimension must end on a boundary
    of the array's ``units`` (``what``: chunks, or shards when sharded; per
    dimension a length, or a rectilinear dimension's sizes), counted from
    ``starts`` (where a region or an append begins): else two tasks would
    write one stored object (ChunkAlignmentError, a ValueError)."""
    for dim, (sizes, unit) in enumerate(zip(dask_chunks, units)):
        start = starts[dim] if starts else 0
        if isinstance(unit, (list, tuple)):
            end = first_off_edges(sizes, start, [0, *itertools.accumulate(unit)])
        else:
            end = first_misaligned(sizes, start, unit)
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
