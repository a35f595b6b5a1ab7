"""xarray reads Zarr groups through zarrpy: ``xr.open_dataset(path, engine="zarrpy")``.

The engine is registered through the ``xarray.backends`` entry point (see
``pyproject.toml``), so xarray finds it without an import; the public names
are in :mod:`zarrpy.xarray`. It is xarray's own zarr backend with zarrpy
underneath, decision for decision (``xarray/backends/zarr.py``):

- **Lazy.** Opening reads metadata only (one request for a group with
  consolidated metadata). Each variable is a :class:`ZarrpyBackendArray`
  behind xarray's lazy indexing: basic, outer and vectorized selections go to
  zarrpy's ``a[...]``, ``a.oindex[...]`` and ``a.vindex[...]``, so only the
  chunks a selection touches are read, and of a sharded array only the
  inner chunks it needs (byte ranges).
- **Dimensions** come from V3 ``dimension_names`` or the V2
  ``_ARRAY_DIMENSIONS`` attribute (also read from a V3 array without
  dimension names: a V2 hierarchy migrated by :func:`zarrpy.migrate_v3`);
  ``_ARRAY_DIMENSIONS`` never shows in a variable's attributes.
- **CF decoding** is xarray's (:class:`xarray.backends.StoreBackendEntrypoint`):
  fill values as masks, ``scale_factor``/``add_offset``, CF times. As in
  xarray, a V2 array's ``fill_value`` masks (it becomes ``_FillValue``) and a
  V3 array's does not (xarray keeps the CF ``_FillValue`` in the attributes;
  the Zarr one goes to ``encoding["fill_value"]``);
  ``use_zarr_fill_value_as_mask`` overrides both.
- **Strings** (zarrpy reads them as ``numpy.dtypes.StringDType`` arrays) stay
  StringDType with ``encoding["dtype"]`` saying so, as xarray's zarr backend
  keeps them; an xarray without StringDType support gets object arrays.
- **Encoding** holds ``chunks`` (inner chunks of a sharded array, as in
  xarray), ``preferred_chunks``, ``shards`` and the codecs as JSON in the
  form zarr-python takes for the array's format (V3 codec JSON; numcodecs
  codec objects for V2), so both :func:`zarrpy.xarray.to_zarrpy` and
  ``Dataset.to_zarr`` accept it.

>>> import numpy as np, xarray as xr, zarrpy
>>> from zarrpy.xarray import to_zarrpy
>>> store = zarrpy.stores.MemoryStore()
>>> _ = to_zarrpy(xr.Dataset({"v": ("x", np.arange(4.0))}), store)
>>> xr.open_dataset(store, engine="zarrpy")["v"].values
array([0., 1., 2., 3.])
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numcodecs
import numpy as np
import xarray as xr
from xarray import coding
from xarray.backends import AbstractDataStore, BackendArray, BackendEntrypoint, StoreBackendEntrypoint
from xarray.backends.zarr import FillValueCoder
from xarray.core import indexing
from xarray.core.utils import FrozenDict

from ..api._array import Array
from ..api._group import Group
from ..api._open import open_group
from ..errors import MetadataError, NodeNotFoundError
from ..metadata.v2 import ArrayMetadataV2
from ..stores.abc import Store

DIMENSION_KEY = "_ARRAY_DIMENSIONS"
"""The attribute in which xarray keeps a V2 array's dimension names."""

_XARRAY_KEEPS_STRING_DTYPE = hasattr(coding.variables, "Numpy2StringDTypeCoder")
"""Does this xarray keep numpy StringDType variables (2025.x and newer)? Older
ones get strings as object arrays of ``str``, as their zarr backend gave them."""


def _hidden_attribute(name: str) -> bool:
    """Attributes xarray's zarr backend does not show: the dimension key and NCZarr's."""
    return name == DIMENSION_KEY or name.lower().startswith("_nc")


class ZarrpyBackendArray(BackendArray):
    """One zarrpy array as xarray's lazily indexed backend array.

    xarray composes the user's selections and calls ``__getitem__`` with one
    explicit indexer when data is needed: a ``BasicIndexer`` reads through
    ``a[...]``, an ``OuterIndexer`` through ``a.oindex[...]``, a
    ``VectorizedIndexer`` through ``a.vindex[...]``.
    """

    __slots__ = ("_array", "dtype", "shape")

    def __init__(self, array: Array):
        self._array = array
        self.shape = array.shape
        dtype = array.dtype
        if dtype.kind == "T" and not _XARRAY_KEEPS_STRING_DTYPE:
            dtype = coding.strings.create_vlen_dtype(str)
        self.dtype = dtype

    def get_array(self) -> Array:
        """The zarrpy array underneath."""
        return self._array

    def __getitem__(self, key: indexing.ExplicitIndexer) -> Any:
        method: Callable[[Any], Any]
        if isinstance(key, indexing.VectorizedIndexer):
            method = self._vindex
        elif isinstance(key, indexing.OuterIndexer):
            method = self._array.get_orthogonal_selection
        else:
            method = self._array.get_basic_selection
        value = indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.VECTORIZED, method)
        return self._as_xarray(value)

    async def async_getitem(self, key: indexing.ExplicitIndexer) -> Any:
        """``__getitem__`` on a worker thread (zarrpy's API is synchronous),
        for ``Dataset.load_async``."""
        return await asyncio.to_thread(self.__getitem__, key)

    def _vindex(self, key: tuple[Any, ...]) -> Any:
        # xarray's vectorized selections put sliced dimensions last (NEP 21's
        # vindex), numpy's advanced indexing where the slices stand; zarrpy's
        # vindex follows numpy. Integer arrays alone mean the same in both.
        return self._array.get_vectorized_selection(_arrayize(key, self.shape))

    def _as_xarray(self, value: Any) -> Any:
        if self._array.dtype.kind != "T":
            return value
        if not _XARRAY_KEEPS_STRING_DTYPE:
            return np.asarray(value, dtype=object)
        if isinstance(value, str):  # a 0-d read gives a str: keep the variable's dtype
            return np.asarray(value, dtype=self.dtype)
        return value


def _arrayize(key: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[Any, ...]:
    """A vectorized key with slices as integer arrays, the sliced dimensions
    after the broadcast ones (xarray's order), so numpy's rules give the same."""
    nslices = sum(isinstance(k, slice) for k in key)
    if nslices in (0, len(key)):
        return key
    ndim = len(np.broadcast_shapes(*(np.shape(k) for k in key if not isinstance(k, slice))))
    out: list[Any] = []
    for k, size in zip(key, shape):
        if isinstance(k, slice):
            where = [1] * (ndim + nslices)
            where[ndim + sum(isinstance(o, slice) for o in out)] = -1
            out.append(np.arange(*k.indices(size)).reshape(where))
        else:
            out.append(np.asarray(k).reshape(np.shape(k) + (1,) * nslices))
    return tuple(out)


def compact_chunk_sizes(sizes: tuple[tuple[int, ...], ...]) -> tuple[Any, ...]:
    """Per-dimension chunk sizes (``read_chunk_sizes``) as xarray's zarr
    backend gives them in ``encoding``: one int where they are regular (the
    last may be shorter), the sizes where they are not (a rectilinear grid),
    ``(0,)`` for a dimension of length 0."""
    out: list[Any] = []
    for dim in sizes:
        if not dim:
            out.append((0,))
        elif len(set(dim[:-1])) <= 1 and dim[-1] <= dim[0]:
            out.append(dim[0])
        else:
            out.append(tuple(dim))
    return tuple(out)


def _dimensions(array: Array, name: str) -> tuple[str, ...]:
    """The array's dimension names: V3 ``dimension_names``, else the
    ``_ARRAY_DIMENSIONS`` attribute; a clear error when it has neither."""
    names = array.dimension_names
    if names is not None and all(isinstance(n, str) for n in names):
        return tuple(str(n) for n in names)
    attr = array.attrs.get(DIMENSION_KEY)
    if isinstance(attr, list) and len(attr) == array.ndim and all(isinstance(n, str) for n in attr):
        return tuple(attr)
    if array.ndim == 0 and names is None and attr is None:
        return ()
    raise MetadataError(
        f"array {name!r} ({array.name} in {array.store.display_name}) has no dimension names for xarray: "
        f"expected V3 dimension_names or a {DIMENSION_KEY!r} attribute listing {array.ndim} names, "
        f"got dimension_names={names!r}, {DIMENSION_KEY}={attr!r}"
    )


def _zarr_python_fill_value(array: Array) -> Any:
    """The fill value as zarr-python reports it: None for a V2 ``null`` (which
    zarrpy reads as the type's zero, or ``""``), so that it masks nothing."""
    metadata = array.metadata
    if isinstance(metadata, ArrayMetadataV2):
        return None if metadata.fill_value_json is None else metadata.fill_value
    return array.fill_value


def _codec_encoding(array: Array) -> dict[str, Any]:
    """The codec part of a variable's encoding, in the form zarr-python takes
    for the array's format (so ``Dataset.to_zarr`` takes it, as zarrpy does):
    V3 codec JSON; numcodecs codec objects for V2 (zarr-python refuses V2
    filters in any other form), with the object codec among the filters as
    zarr-python lists it."""
    metadata = array.metadata
    if isinstance(metadata, ArrayMetadataV2):
        compressor = metadata.compressor
        return {
            "compressors": () if compressor is None else (_numcodecs(compressor),),
            "filters": tuple(_numcodecs(f) for f in metadata.filters or ()),
        }
    return {
        "compressors": tuple(c.to_json() for c in array.compressors),
        "filters": tuple(c.to_json() for c in array.filters),
        "serializer": array.serializer.to_json(),
    }


def _numcodecs(config: Mapping[str, Any]) -> Any:
    """numcodecs' codec object for a V2 codec configuration, or the
    configuration itself when numcodecs has no such codec."""
    try:
        return numcodecs.get_codec(dict(config))
    except (KeyError, ValueError, TypeError):
        return dict(config)


class ZarrpyDataStore(AbstractDataStore):
    """A zarrpy group as an xarray data store (what the engine decodes).

    ``use_zarr_fill_value_as_mask``: None means xarray's default (True for V2,
    False for V3).
    """

    __slots__ = ("group", "_mask_with_fill_value")

    def __init__(self, group: Group, *, use_zarr_fill_value_as_mask: bool | None = None):
        self.group = group
        if use_zarr_fill_value_as_mask is None:
            use_zarr_fill_value_as_mask = group.zarr_format == 2
        self._mask_with_fill_value = use_zarr_fill_value_as_mask

    @classmethod
    def open(
        cls,
        store: Any,
        *,
        group: str | None = None,
        consolidated: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
    ) -> ZarrpyDataStore:
        """Open the group at ``group`` in ``store`` read-only (see :func:`open_zarrpy_group`)."""
        zgroup = open_zarrpy_group(store, group=group, consolidated=consolidated,
                                   storage_options=storage_options, zarr_format=zarr_format)
        return cls(zgroup, use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask)

    def get_variables(self) -> Mapping[str, xr.Variable]:
        """Every array of the group as a lazy variable (no chunk is read)."""
        return FrozenDict((name, self.open_store_variable(name, array)) for name, array in self.group.arrays())

    def get_attrs(self) -> dict[str, Any]:
        """The group's attributes (NCZarr's ``_nc*`` ones left out, as xarray does)."""
        return {k: v for k, v in self.group.attrs.asdict().items() if not k.lower().startswith("_nc")}

    def get_dimensions(self) -> dict[str, int]:
        """Dimension name -> length over all arrays; ValueError when two arrays disagree."""
        sizes: dict[str, int] = {}
        for name, array in self.group.arrays():
            for dim, size in zip(_dimensions(array, name), array.shape):
                if sizes.setdefault(dim, size) != size:
                    raise ValueError(f"found conflicting lengths for dimension {dim} ({size} != {sizes[dim]})")
        return sizes

    def open_store_variable(self, name: str, array: Array) -> xr.Variable:
        """The variable of one array: lazy data, dimensions, attributes, encoding."""
        dims = _dimensions(array, name)
        attributes = {k: v for k, v in array.attrs.asdict().items() if not _hidden_attribute(k)}
        wrapper = ZarrpyBackendArray(array)
        # As xarray's zarr backend: a rectilinear grid's dimensions as their chunk sizes.
        rectilinear = array.chunk_grid["name"] == "rectilinear"
        chunks = compact_chunk_sizes(array.read_chunk_sizes) if rectilinear and not array.is_sharded else array.chunks
        shards = compact_chunk_sizes(array.write_chunk_sizes) if rectilinear and array.is_sharded else array.shards
        encoding: dict[str, Any] = {
            "chunks": chunks,
            "preferred_chunks": dict(zip(dims, chunks)),
            "shards": shards,
            **_codec_encoding(array),
        }
        if wrapper.dtype.kind == "T":
            encoding["dtype"] = wrapper.dtype
        if self._mask_with_fill_value:  # as netCDF's _FillValue: xarray's CF decoding masks it
            fill = _zarr_python_fill_value(array)
            if fill is not None:
                attributes["_FillValue"] = fill
        else:
            if array.metadata.zarr_format == 3:
                encoding["fill_value"] = array.fill_value
            if "_FillValue" in attributes:  # xarray writes V3 float fills as base64
                attributes["_FillValue"] = FillValueCoder.decode(attributes["_FillValue"], array.dtype)
        return xr.Variable(dims, indexing.LazilyIndexedArray(wrapper), attributes, encoding)


def open_zarrpy_group(
    store: Any,
    *,
    group: str | None = None,
    consolidated: bool | None = None,
    storage_options: dict[str, Any] | None = None,
    zarr_format: int | None = None,
) -> Group:
    """The group xarray opens, read-only: ``store`` is a path, an fsspec URL
    or a zarrpy Store, ``group`` a path inside it.

    ``consolidated``: None uses consolidated metadata when there is some
    (without xarray's warning when there is none), True requires it, False
    reads the live hierarchy. As xarray does, a ``group`` is looked up in the
    store root's consolidated metadata first (zarr-python's ``to_zarr``
    consolidates at the root), then opened on its own.

    Raises
    ------
    NodeNotFoundError
        (a ``FileNotFoundError``) when there is no group there.
    """
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    opened = None
    path = (group or "").strip("/")
    if path and consolidated is not False:
        opened = _from_root_snapshot(store, path, storage_options, zarr_format)
    try:
        if opened is None:
            opened = open_group(store, mode="r", path=path, zarr_format=zarr_format,
                                storage_options=storage_options, use_consolidated=consolidated)
    except NodeNotFoundError as exc:
        raise NodeNotFoundError(f"engine='zarrpy' opens a Zarr group, and found none: {exc}") from exc
    return opened


def _from_root_snapshot(store: Any, path: str, storage_options: dict[str, Any] | None,
                        zarr_format: int | None) -> Group | None:
    """The group at ``path`` from the root's consolidated metadata, or None
    when the root has none or does not list it."""
    try:
        root = open_group(store, mode="r", zarr_format=zarr_format, storage_options=storage_options)
    except NodeNotFoundError:
        return None
    if root.consolidated_metadata is None:
        return None
    node = root.get(path)
    return node if isinstance(node, Group) else None


class ZarrpyBackendEntrypoint(BackendEntrypoint):
    """``engine="zarrpy"``: open Zarr V3 and V2 groups with zarrpy.

    Arguments beyond xarray's decoding options: ``group`` (a path in the
    store), ``consolidated``, ``storage_options`` (fsspec URLs),
    ``zarr_format`` (None: detect), ``use_zarr_fill_value_as_mask``.
    """

    description = "Open Zarr V3 and V2 groups (.zarr) lazily with zarrpy"
    supports_groups = True

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        """A zarrpy Store, or a path ending in ``.zarr`` (as xarray's zarr engine guesses)."""
        if isinstance(filename_or_obj, Store):
            return True
        if isinstance(filename_or_obj, (str, os.PathLike)):
            return os.path.splitext(str(filename_or_obj).rstrip("/"))[1] == ".zarr"
        return False

    def open_dataset(
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale: bool = True,
        decode_times: Any = True,
        concat_characters: bool = True,
        decode_coords: Any = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: Any = None,
        group: str | None = None,
        consolidated: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
    ) -> xr.Dataset:
        """The group as a lazily loaded, CF-decoded Dataset (see the module docstring)."""
        store = ZarrpyDataStore.open(filename_or_obj, group=group, consolidated=consolidated,
                                     storage_options=storage_options, zarr_format=zarr_format,
                                     use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask)
        return _decode(store, mask_and_scale=mask_and_scale, decode_times=decode_times,
                       concat_characters=concat_characters, decode_coords=decode_coords,
                       drop_variables=drop_variables, use_cftime=use_cftime, decode_timedelta=decode_timedelta)

    def open_groups_as_dict(
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale: bool = True,
        decode_times: Any = True,
        concat_characters: bool = True,
        decode_coords: Any = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: Any = None,
        group: str | None = None,
        consolidated: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
    ) -> dict[str, xr.Dataset]:
        """Every group at and below ``group`` as a Dataset, keyed ``"/"``, ``"/a"``, ``"/a/b"`` …"""
        root = open_zarrpy_group(filename_or_obj, group=group, consolidated=consolidated,
                                 storage_options=storage_options, zarr_format=zarr_format)
        groups = [("", root), *((rel, g) for rel, g in root.members(max_depth=None) if isinstance(g, Group))]
        return {
            "/" + rel: _decode(ZarrpyDataStore(g, use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask),
                               mask_and_scale=mask_and_scale, decode_times=decode_times,
                               concat_characters=concat_characters, decode_coords=decode_coords,
                               drop_variables=drop_variables, use_cftime=use_cftime,
                               decode_timedelta=decode_timedelta)
            for rel, g in groups
        }

    def open_datatree(
        self, filename_or_obj: Any, **kwargs: Any
    ) -> xr.DataTree:
        """The hierarchy at ``group`` as a DataTree (arguments as :meth:`open_groups_as_dict`)."""
        return xr.DataTree.from_dict(self.open_groups_as_dict(filename_or_obj, **kwargs))


def _decode(store: ZarrpyDataStore, **decoders: Any) -> xr.Dataset:
    """xarray's CF decoding of a data store (what every store-based engine runs)."""
    return StoreBackendEntrypoint().open_dataset(store, **decoders)


def open_dataset(store: Any, **kwargs: Any) -> xr.Dataset:
    """``xr.open_dataset(store, engine="zarrpy", **kwargs)``: a zarrpy group as
    a lazily loaded Dataset (``chunks={}`` makes it a dask-backed one)."""
    return xr.open_dataset(store, engine="zarrpy", **kwargs)


__all__ = ["ZarrpyBackendArray", "ZarrpyBackendEntrypoint", "ZarrpyDataStore", "open_dataset", "open_zarrpy_group"]
