"""The public functions: create and open arrays and groups.

``store`` is always a path, an fsspec URL (``s3://…``, ``memory://…``,
``zip::…``) or a :class:`~zarrpy.stores.abc.Store`; ``storage_options`` are
passed to fsspec. Modes follow zarr-python: ``r`` read-only, ``r+`` read/write
(must exist), ``a`` read/write (create if missing), ``w`` create (replace),
``w-`` create (fail if present).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from ._array import Array
from ._cache import Cache
from ..pipeline.synchronizer import Synchronizer
from ._create import create_array_at
from ._new_node import node_exists
from ._group import Group
from ._node import array_metadata, location, read_node, read_nodes
from ..core.paths import normalize_path
from ..metadata.nodes import ARRAY_METADATA
from ..errors import NodeExistsError, NodeNotFoundError, ReadOnlyError
from ..pipeline.io_pool import map_io, waits_on_network
from ..stores import store_from_url
from ..stores.abc import READ_ONLY_HINT, Store
from ..stores.zip import ZipStore
from ..stores._store_like import StoreLike
from ..codecs.user_forms import CompressorsLike, FiltersLike, SerializerLike
from ..core._typing import ArrayValueLike, ChunksLike, ShapeLike, ShardsLike
from ..core.dtypes.data_type import DTypeLike
from ..metadata.v3 import ChunkKeyEncodingLike

_MODES = ("r", "r+", "a", "w", "w-")


def _check_format(zarr_format: int | None) -> None:
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format must be 2, 3 or None (detect), got {zarr_format!r}")


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")


def _store(store: StoreLike, storage_options: dict[str, Any] | None, mode: str, action: str = "open") -> Store:
    """The store for ``store``, read-only for mode ``r``. A writing mode on a
    store that is read-only itself (a Store made with ``read_only=True``, a
    zip file given by path) is refused here, as zarr-python does, rather than
    at the first write."""
    s = store_from_url(store, storage_options=storage_options, read_only=(mode == "r"), mode=mode)
    if mode != "r" and s.read_only:
        raise _read_only_store(s, mode, action, given=isinstance(store, Store))
    return s


def _read_only_store(store: Store, mode: str, action: str, *, given: bool) -> ReadOnlyError:
    """The error for ``action`` ("open", "create an array in" ...) with a
    writing ``mode`` on a read-only store: names both, and the remedy
    (``given``: the user passed this Store object, not a path or URL)."""
    hint = store.read_only_hint
    if hint == READ_ONLY_HINT:  # the store object itself was made read-only: no mode helps
        hint = "pass a writable store (not read_only=True), or open with mode='r' to read"
    if not given and isinstance(store, ZipStore):
        hint = "a zip file given by path opens read-only; pass ZipStore(path, mode='a') as the store to write to it"
    return ReadOnlyError(f"cannot {action} {store.display_name!r} with mode={mode!r}: the store is read-only; {hint}")


def _refuse_other_format(store: Store, path: str, zarr_format: int | None) -> None:
    """Mode "a" found no node of ``zarr_format``: if one of the other format is
    there, say so (creating would need overwrite=True and destroy it)."""
    if zarr_format is not None and node_exists(store, path):
        other = 2 if zarr_format == 3 else 3
        raise NodeExistsError(f"{location(store, path)} holds a Zarr V{other} node, not V{zarr_format}; "
                              f"open it with zarr_format={other} or None")


def create_array(
    store: StoreLike,
    *,
    name: str | None = None,
    shape: ShapeLike | None = None,
    dtype: DTypeLike | None = None,
    chunks: ChunksLike = "auto",
    shards: ShardsLike = None,
    filters: FiltersLike = None,
    compressors: CompressorsLike = "auto",
    serializer: SerializerLike = "auto",
    fill_value: Any = None,
    zarr_format: int = 3,
    attributes: dict[str, Any] | None = None,
    dimension_names: Sequence[str | None] | None = None,
    chunk_key_encoding: ChunkKeyEncodingLike = None,
    storage_options: dict[str, Any] | None = None,
    overwrite: bool = False,
    write_empty_chunks: bool = False,
    data: ArrayValueLike = None,
    order: str | None = None,
    dimension_separator: str | None = None,
    cache: Cache | None = None,
    synchronizer: Synchronizer | None = None,
    subchunk_write_order: str | None = None,
) -> Array:
    """Create a new array and return it (open for writing).

    ``shape`` and ``dtype`` may be left out when ``data`` is given; ``data``
    is then written. Codecs are codec objects or their V3 JSON dicts;
    ``compressors="auto"`` is zstd level 0, as in zarr-python.
    ``zarr_format=2`` writes ``.zarray``/``.zattrs`` (``order`` "C" or "F",
    ``dimension_separator`` "." or "/"), readable by zarr-python's V2 support.
    A ragged array (1-D vectors of different lengths at each position) takes
    its element type as ``dtype`` and ``serializer="numcodecs.vlen-array"``;
    it reads back as a :class:`~zarrpy.RaggedArray` (docs/guide/strings.md).
    ``cache``, ``synchronizer`` and ``subchunk_write_order``: as for
    :func:`open_array`; an order given by a sharding codec object as
    ``serializer=`` (zarrpy's, or zarr-python's ``ShardingCodec``) is used
    too. ``subchunk_write_order`` needs a sharded array.
    """
    return create_array_at(
        _store(store, storage_options, "w" if overwrite else "w-", "create an array in"),
        normalize_path(name),
        shape=shape, dtype=dtype, chunks=chunks, shards=shards, filters=filters,
        compressors=compressors, serializer=serializer, fill_value=fill_value,
        attributes=attributes, dimension_names=dimension_names,
        chunk_key_encoding=chunk_key_encoding, overwrite=overwrite,
        write_empty_chunks=write_empty_chunks, data=data, zarr_format=zarr_format,
        order=order, dimension_separator=dimension_separator, cache=cache, synchronizer=synchronizer,
        subchunk_write_order=subchunk_write_order,
    )


def open_array(
    store: StoreLike,
    *,
    mode: str = "r",
    path: str | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    write_empty_chunks: bool = False,
    cache: Cache | None = None,
    synchronizer: Synchronizer | None = None,
    subchunk_write_order: str | None = None,
    **create_kwargs: Any,
) -> Array:
    """Open an existing array (modes ``r``, ``r+``, ``a``), or create one
    (``w``, ``w-``, or ``a`` when missing) from ``create_kwargs`` (those of
    :func:`create_array`; ``dtype`` defaults to float64 as in zarr-python).

    With ``mode="a"`` an existing array is opened as it is and
    ``create_kwargs`` are not used, as in zarr-python: the same call opens
    or creates.

    ``cache`` (a :class:`zarrpy.cache.Cache`): decoded chunks (inner chunks
    of a shard) are read through it and kept there, shared with every array
    opened with the same cache; writes through zarrpy drop what they make stale.

    ``synchronizer`` (:class:`zarrpy.ProcessSynchronizer`, or a
    :class:`zarrpy.LockSynchronizer` over dask's ``distributed.Lock``): locks
    each chunk or shard a write reads and rewrites, across processes, so
    processes writing parts of the same chunks or shards lose nothing.
    Threads of one process need none (docs/reliability.md).

    ``subchunk_write_order`` (``"lexicographic"``, the default,
    ``"colexicographic"``, ``"morton"`` or ``"unordered"``): the order this
    handle writes inner chunks in inside each shard, as zarr-python's
    ``ShardingCodec(subchunk_write_order=...)``. It is not stored in the
    metadata (zarr-python does not store it either), so each handle says
    its own; reads take shards in any order (docs/guide/sharding.md).
    """
    _check_mode(mode)
    _check_format(zarr_format)
    s = _store(store, storage_options, mode)
    p = normalize_path(path)

    def create(absent: bool) -> Array:
        if "data" not in create_kwargs:
            create_kwargs.setdefault("dtype", "float64")
        return create_array_at(s, p, overwrite=(mode == "w"), write_empty_chunks=write_empty_chunks,
                               zarr_format=zarr_format or 3, cache=cache, synchronizer=synchronizer, absent=absent,
                               subchunk_write_order=subchunk_write_order, **create_kwargs)

    if mode in ("w", "w-"):
        return create(absent=False)
    if mode == "a" and create_kwargs:
        # zarr.json, then the V2 documents only if it is missing: an existing
        # V3 array costs one request, and a missing node is known absent for the create.
        found = read_nodes(s, [p])[0]
        if found is None:
            return create(absent=True)
        if zarr_format in (None, found.metadata.zarr_format):
            return Array(s, p, array_metadata(s, p, found), write_empty_chunks=write_empty_chunks, cache=cache,
                         synchronizer=synchronizer, subchunk_write_order=subchunk_write_order)
        # the other format is there: Array.open below refuses it (or opens the one asked for beside it)
    if create_kwargs and mode != "a":
        raise TypeError(f"arguments for creating an array were given with mode={mode!r}, which only opens "
                        f"an existing array: {sorted(create_kwargs)}")
    return Array.open(s, p, read_only=(mode == "r"), write_empty_chunks=write_empty_chunks, zarr_format=zarr_format,
                      cache=cache, synchronizer=synchronizer, subchunk_write_order=subchunk_write_order)


def open_arrays(
    paths_or_urls: Iterable[StoreLike],
    *,
    store: StoreLike | None = None,
    mode: str = "r",
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    write_empty_chunks: bool = False,
    cache: Cache | None = None,
    synchronizer: Synchronizer | None = None,
) -> list[Array]:
    """Open many existing arrays at once, with all their metadata fetched
    side by side: the cost of opening one array, not of opening each in turn.

    With ``store``, ``paths_or_urls`` are paths of arrays inside it and every
    ``zarr.json`` is asked for in ONE batched store request (the V2
    documents, in one more, only for the paths that have no ``zarr.json``).
    Without it, each item is a store of its own (a path, an fsspec URL, a
    Store...; an array at the root of each) and the stores are opened and
    asked concurrently, on zarrpy's IO thread pool (``ZARRPY_IO_THREADS``
    threads, default 64). So 40 arrays cost one round trip either way.

    Parameters
    ----------
    paths_or_urls
        Paths inside ``store``, or (without ``store``) paths, URLs or
        anything else ``store=`` takes, one per array. A single string is
        refused (pass a list).
    store
        The store all paths are in; as :func:`open_array` takes it.
    mode
        ``"r"`` (read-only, the default) or ``"r+"`` (read/write); the arrays
        must exist (:func:`open_array` creates them).
    zarr_format
        2 or 3 to open only that format; None (the default) takes whichever is
        there, V3 first.
    storage_options
        For fsspec URLs: ``store``'s, or every item's without it.
    write_empty_chunks, cache, synchronizer
        For every array, as :func:`open_array` takes them.

    Returns
    -------
    list of Array
        The arrays, in the order given.

    Raises
    ------
    NodeNotFoundError
        If there is no array at one of the paths (nothing there, or a group);
        the message names the item's index, the store and the path.
    MetadataError
        If a document is invalid (the message names the store and path).

    Examples
    --------
    >>> import zarrpy
    >>> g = zarrpy.group({})
    >>> for name in "abc":
    ...     _ = g.create_array(name, shape=(3,), dtype="int8", fill_value=ord(name))
    >>> [chr(a[0]) for a in zarrpy.open_arrays(["c", "a"], store=g.store)]
    ['c', 'a']
    """
    if mode not in ("r", "r+"):
        raise ValueError(f"open_arrays opens existing arrays: mode must be 'r' or 'r+', got {mode!r} "
                         "(zarrpy.open_array creates one)")
    if isinstance(paths_or_urls, (str, bytes, os.PathLike, Store)):
        raise TypeError(f"open_arrays takes a list of paths or URLs, got one {type(paths_or_urls).__name__}: "
                        f"{paths_or_urls!r}; pass [{paths_or_urls!r}]")
    items = list(paths_or_urls)
    if store is None:
        targets = [ArrayTarget(item, "", f"paths_or_urls[{i}]") for i, item in enumerate(items)]
    else:
        given = _store(store, storage_options, mode)
        targets = [ArrayTarget(given, _path_in_store(i, item), f"paths_or_urls[{i}]") for i, item in enumerate(items)]
    return open_array_targets(targets, mode=mode, zarr_format=zarr_format, storage_options=storage_options,
                              write_empty_chunks=write_empty_chunks, cache=cache, synchronizer=synchronizer)


def _path_in_store(i: int, item: object) -> str:
    """Item ``i`` of ``open_arrays(..., store=...)``: a path inside the store, normalised."""
    if not isinstance(item, str):
        raise TypeError(f"paths_or_urls[{i}]: with store= the items are paths (str) inside it, "
                        f"got {type(item).__name__} {item!r}")
    return normalize_path(item)


class ArrayTarget(NamedTuple):
    """An array for :func:`open_array_targets` to open."""

    store: StoreLike
    """Its store: a Store, or what :func:`~zarrpy.stores.store_from_url` takes."""
    path: str
    """Its path in the store (normalised)."""
    label: str
    """How errors name it (``paths_or_urls[3]``)."""


def open_array_targets(
    targets: Sequence[ArrayTarget],
    *,
    mode: str = "r",
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    write_empty_chunks: bool = False,
    cache: Cache | None = None,
    synchronizer: Synchronizer | None = None,
) -> list[Array]:
    """The arrays of ``targets``, in order, all metadata fetched side by side:
    the targets of one store (one Store object, or one URL given again) in
    one :func:`~zarrpy.api._node.read_nodes` call, the stores concurrently
    on :func:`~zarrpy.pipeline.io_pool.map_io` when any of them is remote
    (on local ones opening is CPU work, done here: threads would only add
    their hand-offs). The stores are made first, here: making one sends no
    request. NodeNotFoundError naming the target's label where there is no
    array."""
    _check_format(zarr_format)
    by_store: dict[tuple[str, Any], list[int]] = {}
    for i, target in enumerate(targets):
        like = target.store
        key = ("url", os.fspath(like)) if isinstance(like, (str, os.PathLike)) else ("object", id(like))
        by_store.setdefault(key, []).append(i)

    groups = list(by_store.values())
    stores = [_store(targets[indices[0]].store, storage_options, mode) for indices in groups]

    def open_in_one_store(group: tuple[Store, list[int]]) -> list[Array]:
        s, indices = group
        paths = [targets[i].path for i in indices]
        arrays = []
        for i, path, found in zip(indices, paths, read_nodes(s, paths, zarr_format)):
            try:
                metadata = array_metadata(s, path, found, zarr_format)
            except NodeNotFoundError as exc:
                raise NodeNotFoundError(f"{targets[i].label}: {exc}") from None
            arrays.append(Array(s, path, metadata, read_only=(mode == "r"), write_empty_chunks=write_empty_chunks,
                                cache=cache, synchronizer=synchronizer))
        return arrays

    work = list(zip(stores, groups))
    opened: dict[int, Array] = {}
    results = map_io(open_in_one_store, work) if waits_on_network(stores) else map(open_in_one_store, work)
    for indices, arrays in zip(groups, results):
        opened.update(zip(indices, arrays))
    return [opened[i] for i in range(len(targets))]


def open_group(
    store: StoreLike | None = None,
    *,
    mode: str = "a",
    path: str | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    attributes: dict[str, Any] | None = None,
    use_consolidated: bool | None = None,
    cache: Cache | None = None,
    synchronizer: Synchronizer | None = None,
) -> Group:
    """Open a group, creating it when ``mode`` allows (``a``, ``w``, ``w-``;
    a new group is V3 unless ``zarr_format=2``).

    ``use_consolidated`` (for an existing group): None answers member
    questions from the group's consolidated metadata when it has some, False
    ignores it and reads the live hierarchy, True requires it (MetadataError
    if there is none). Consolidated metadata is a snapshot: see
    :mod:`zarrpy.metadata.consolidated`. Opening costs one batched store request.

    ``cache`` and ``synchronizer``: arrays reached through the group (and
    its subgroups) use them, as with :func:`open_array`.
    """
    _check_mode(mode)
    _check_format(zarr_format)
    s = _store(store if store is not None else {}, storage_options, mode)
    p = normalize_path(path)
    if mode in ("w", "w-"):
        return Group.create(s, p, attributes=attributes, overwrite=(mode == "w"), zarr_format=zarr_format or 3,
                            cache=cache, synchronizer=synchronizer)
    try:
        metadata, zmetadata = read_node(s, p, zarr_format, zmetadata=use_consolidated is not False)
    except NodeNotFoundError:
        if mode != "a":
            raise
        _refuse_other_format(s, p, zarr_format)
        # read_node found no node of either format (_refuse_other_format looked for the other)
        return Group.create(s, p, attributes=attributes, zarr_format=zarr_format or 3, cache=cache,
                            synchronizer=synchronizer, absent=True)
    return Group._from_metadata(s, p, metadata, zmetadata, read_only=(mode == "r"), use_consolidated=use_consolidated,
                                cache=cache, synchronizer=synchronizer)


def create_group(store: StoreLike, *, path: str | None = None, attributes: dict[str, Any] | None = None,
                 overwrite: bool = False, storage_options: dict[str, Any] | None = None,
                 zarr_format: int = 3) -> Group:
    """Create a new group (``overwrite=True`` replaces an existing node)."""
    s = _store(store, storage_options, "w" if overwrite else "w-", "create a group in")
    return Group.create(s, normalize_path(path), attributes=attributes, overwrite=overwrite, zarr_format=zarr_format)


def open(
    store: StoreLike | None = None,
    *,
    mode: str | None = None,
    path: str | None = None,
    zarr_format: int | None = None,
    storage_options: dict[str, Any] | None = None,
    use_consolidated: bool | None = None,
    cache: Cache | None = None,
    synchronizer: Synchronizer | None = None,
    **kwargs: Any,
) -> Array | Group:
    """Open whatever node is at ``path`` (array or group). When nothing is
    there and ``mode`` allows, create an array if ``shape`` is given, else a group.
    ``use_consolidated`` applies to a group, as in :func:`open_group`;
    ``cache`` and ``synchronizer`` to both (see :func:`open_array`).
    ``mode`` None (the default, as in zarr-python) is ``r`` on a read-only
    store (a zip file given by path, a Store made read-only) and ``a`` otherwise."""
    if mode is not None:
        _check_mode(mode)
    _check_format(zarr_format)
    if mode is None:
        s = store_from_url(store if store is not None else {}, storage_options=storage_options, mode="a")
        mode = "r" if s.read_only else "a"
    else:
        s = _store(store if store is not None else {}, storage_options, mode)
    p = normalize_path(path)
    try:
        metadata, zmetadata = read_node(s, p, zarr_format, zmetadata=use_consolidated is not False)
    except NodeNotFoundError:
        if mode in ("r", "r+"):
            raise
        if mode == "a":
            _refuse_other_format(s, p, zarr_format)
        metadata = None
    if metadata is None or mode in ("w", "w-"):
        if "shape" in kwargs:
            return open_array(s, mode=mode, path=p, zarr_format=zarr_format, cache=cache, synchronizer=synchronizer,
                              **kwargs)
        return open_group(s, mode=mode, path=p, zarr_format=zarr_format, cache=cache, synchronizer=synchronizer,
                          **kwargs)
    if isinstance(metadata, ARRAY_METADATA):
        return Array(s, p, metadata, read_only=(mode == "r"), cache=cache, synchronizer=synchronizer)
    return Group._from_metadata(s, p, metadata, zmetadata, read_only=(mode == "r"), use_consolidated=use_consolidated,
                                cache=cache, synchronizer=synchronizer)


__all__ = ["create_array", "create_group", "open", "open_array", "open_arrays", "open_group"]
