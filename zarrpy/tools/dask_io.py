"""Dask arrays over zarrpy arrays (public as :mod:`zarrpy.dask`).

:func:`from_zarr` makes a dask array whose tasks read blocks of a zarrpy
array; :func:`to_zarr` writes a dask array into one, each task storing its
own blocks. The names, arguments and results follow dask's own
``dask.array.from_zarr`` / ``to_zarr``.

**Writes and the write unit.** A stored chunk (in a sharded array, a whole
shard) is the unit a write replaces: a task that writes part of one reads
it, merges and stores it back. On a store that cannot make that safe, two
tasks writing parts of the same unit from different processes would each
store their own merge, and one's data would be lost. So :func:`to_zarr`
checks that every boundary between two dask blocks falls on a multiple of
the write unit (the shard shape when sharded, else the chunk shape; the last
block may be short) and raises :class:`~zarrpy.errors.ChunkAlignmentError`
otherwise, unless

- the store reports :attr:`~zarrpy.stores.abc.Store.supports_concurrent_updates`:
  its writes are conditional (S3's ``If-Match``: a merge stored over another
  task's is refused, and re-read and merged again) or it locks each unit
  across processes (local files), so unaligned blocks lose nothing and are
  written as they are;
- ``rechunk=True``: the misaligned dimensions are rechunked to multiples of
  the write unit first;
- a ``synchronizer`` is given (to :func:`to_zarr` or to the array): it
  serialises the writes of one unit across processes;
- ``safe_chunks=False`` (xarray's name): no check. Safe only with dask's
  threaded or synchronous scheduler, where zarrpy's own per-key locks
  serialise the tasks of the one process (or on a store as above).

**Processes and in-memory stores.** Tasks that run in other processes
(``distributed``, the ``processes`` scheduler) receive the array pickled, by
store URL and path. An array on a ``MemoryStore`` or fsspec ``memory://``
lives in this process only and refuses to pickle
(:class:`~zarrpy.errors.ProcessLocalError`); with dask's
threaded scheduler, which does not pickle, it works.
"""

from __future__ import annotations

import bisect
import importlib
import itertools
import math
from typing import Any, Sequence

from ..api._array import Array
from ..api._open import create_array, open_array
from ..errors import ChunkAlignmentError, NodeExistsError, NodeNotFoundError, ProcessLocalError, ReadOnlyError
from ..pipeline.synchronizer import Synchronizer
from ..stores import Store, store_from_url


def _import(module: str) -> Any:
    """``module`` of the optional dask dependency, with the extra to install
    when it is missing (typed Any: dask is not a dependency of zarrpy)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"zarrpy.dask needs dask: pip install 'zarrpy[dask]' ({exc})") from exc


def write_unit(array: Array) -> tuple[int, ...]:
    """What one write replaces whole: the shard shape of a sharded array,
    else the chunk shape. IrregularChunksError for a rectilinear grid, whose
    write units differ: see ``Array.write_chunk_sizes``."""
    return array.shards or array.chunks


def _regular(array: Array) -> bool:
    """Do the array's write units have one shape (any grid but ``rectilinear``)?"""
    return bool(array.chunk_grid["name"] != "rectilinear")


def _default_chunks(array: Array) -> Any:
    """:func:`from_zarr`'s dask chunks: one block per write unit (shard, else
    chunk), the real boundaries of a rectilinear grid included."""
    if _regular(array):
        return write_unit(array)
    return tuple(sizes if sizes else (0,) for sizes in array.write_chunk_sizes)


def _unit_edges(array: Array) -> list[list[int]]:
    """Per dimension, where the write units start, then the array's length."""
    return [[0, *itertools.accumulate(sizes)] for sizes in array.write_chunk_sizes]


def _given(**options: Any) -> list[str]:
    """The names of the options given (not None)."""
    return [name for name, value in options.items() if value is not None]


# -- reading ----------------------------------------------------------------
def from_zarr(
    array_or_store: Any,
    *,
    path: str | None = None,
    chunks: Any = None,
    storage_options: dict[str, Any] | None = None,
    name: str | None = None,
    inline_array: bool = False,
    **open_kwargs: Any,
) -> Any:
    """A dask array reading a zarrpy array (dask's ``from_zarr``).

    Parameters
    ----------
    array_or_store
        A :class:`zarrpy.Array`, or what :func:`zarrpy.open_array` takes (a
        path, URL or Store), opened read-only.
    path
        The array's path inside the store (dask's ``component``).
    chunks
        The dask chunks, in any form ``dask.array.from_array`` takes. Default:
        the shard shape of a sharded array, else the chunk shape, so each task
        reads whole stored objects; for a rectilinear grid, its chunk (shard)
        sizes, one dask block per stored object. Any other chunking reads
        correctly too.
    storage_options
        For fsspec URLs, as in :func:`zarrpy.open_array`.
    name
        The dask key prefix; default ``"from-zarr-"`` and a token of the
        array (store, path, metadata) and ``chunks``.
    inline_array
        Put the array into every task rather than in the graph once
        (see ``dask.array.from_array``).
    **open_kwargs
        Passed to :func:`zarrpy.open_array` (``zarr_format``, ``cache`` ...).

    Returns
    -------
    dask.array.Array
        Computing it reads the array. The graph holds the zarrpy array; for
        other processes it is pickled (by store URL and path), which an array
        on an in-memory store refuses: compute those with
        ``scheduler="threads"``.

    Raises
    ------
    TypeError
        ``path``, ``storage_options`` or open arguments given with an Array.
    """
    da = _import("dask.array")
    if isinstance(array_or_store, Array):
        if extras := _given(path=path, storage_options=storage_options, **open_kwargs):
            raise TypeError(f"from_zarr: {extras} only apply when a store is given, not an Array")
        array = array_or_store
    else:
        array = open_array(array_or_store, mode="r", path=path, storage_options=storage_options, **open_kwargs)
    if chunks is None:
        chunks = _default_chunks(array)
    if name is None:
        name = "from-zarr-" + _import("dask.base").tokenize(array, chunks)
    source: Any = array if _regular(array) else _RectilinearSource(array)
    return da.from_array(source, chunks=chunks, name=name, inline_array=inline_array)


class _RectilinearSource:
    """An array with a rectilinear grid as ``dask.array.from_array`` reads it:
    dask asks for ``chunks``, which such an array cannot give as one shape
    (IrregularChunksError, as zarr-python's raises), so here it is the real
    chunk sizes (``read_chunk_sizes``); reads go to the array."""

    def __init__(self, array: Array):
        self.array = array
        self.shape, self.dtype, self.ndim = array.shape, array.dtype, array.ndim
        self.chunks = tuple(sizes if sizes else (0,) for sizes in array.read_chunk_sizes)

    def __getitem__(self, selection: Any) -> Any:
        return self.array[selection]

    def __dask_tokenize__(self) -> Any:
        return ("zarrpy.dask.rectilinear", self.array.__dask_tokenize__())


# -- writing ----------------------------------------------------------------
def to_zarr(
    x: Any,
    store_or_array: Any,
    *,
    path: str | None = None,
    region: Any = None,
    compute: bool = True,
    return_stored: bool = False,
    overwrite: bool = False,
    mode: str | None = None,
    rechunk: bool = False,
    safe_chunks: bool = True,
    synchronizer: Synchronizer | None = None,
    storage_options: dict[str, Any] | None = None,
    zarr_format: int = 3,
    **create_kwargs: Any,
) -> Any:
    """Write the dask array ``x`` into a zarrpy array (dask's ``to_zarr``).

    Parameters
    ----------
    x
        A ``dask.array.Array`` of known shape.
    store_or_array
        An existing :class:`zarrpy.Array` opened for writing (``x`` goes into
        ``region``, default the whole array), or a path, URL or Store where a
        new array is created (:func:`zarrpy.create_array`), before anything is
        computed, with ``x``'s shape and dtype and, unless given, its block
        shape as chunks.
    path
        The new array's path inside the store.
    region
        Slices (step 1) of an existing array that ``x`` fills; ``x``'s shape
        must be the region's.
    compute
        Write now (with the scheduler in effect) and return None; False
        returns the dask array of the writes, which ``.compute()`` (or
        ``dask.compute``) carries out.
    return_stored
        As ``dask.array.store``: return dask arrays reading what was stored.
    overwrite
        Replace a node already at ``path`` (dask's older spelling of ``mode="w"``).
    mode
        With a path, URL or Store, as dask's and zarr-python's: ``"w-"``
        (default) creates the array and fails if a node is there; ``"w"``
        replaces it; ``"a"`` writes into the array there when there is one
        (``x`` fills ``region``, default all of it; creation arguments are
        then refused), else creates it; ``"r+"`` writes into the array there,
        which must exist. ``"r"`` is refused. With an :class:`~zarrpy.Array`:
        None, ``"a"`` or ``"r+"``.
    rechunk
        Rechunk dimensions whose blocks do not align to the write unit (the
        shard, else the chunk) to multiples of it, instead of raising (and
        on a store with concurrent updates, where nothing is raised).
    safe_chunks
        False skips the alignment check (xarray's name): only for dask's
        threaded or synchronous scheduler. The check passes by itself on a
        store that reports ``supports_concurrent_updates``.
    synchronizer
        Locks each write unit across processes (:class:`zarrpy.ProcessSynchronizer`,
        ``zarrpy.LockSynchronizer(distributed.Lock)``); misaligned blocks are
        then written as they are. The array's own synchronizer counts too.
    storage_options
        For fsspec URLs, as in :func:`zarrpy.create_array`.
    zarr_format
        Of a new array: 3 (default) or 2.
    **create_kwargs
        Of a new array: :func:`zarrpy.create_array`'s ``chunks``, ``shards``,
        ``compressors``, ``fill_value``, ``attributes``, ``dimension_names`` ...

    Returns
    -------
    None, or a dask array
        None when computed; the writes as a dask array with ``compute=False``;
        the stored data with ``return_stored=True``.

    Raises
    ------
    ChunkAlignmentError
        Two blocks would write one shard (or chunk) and neither the store
        (``supports_concurrent_updates``) nor a synchronizer makes that safe;
        the message names the dimension, the dask chunks and the write unit's size.
    ProcessLocalError
        ``compute=True`` on an array in this process's memory with a scheduler
        that runs tasks in other processes.
    ValueError
        ``x`` has unknown chunk sizes, or does not fit the array or region.
    """
    da = _import("dask.array")
    if not isinstance(x, da.Array):
        raise TypeError(f"to_zarr writes a dask array, got {type(x).__name__}; use zarrpy.create_array(data=...)")
    if any(math.isnan(s) for s in x.shape):
        raise ValueError("to_zarr: the dask array has unknown chunk sizes; call x.compute_chunk_sizes() first")
    mode = _write_mode(mode, overwrite, isinstance(store_or_array, Array) or region is not None)
    if not isinstance(store_or_array, Array) and mode in ("a", "r+"):
        existing = _existing_array(store_or_array, path, storage_options, mode)
        if existing is not None:
            if extras := _given(**create_kwargs, zarr_format=None if zarr_format == 3 else zarr_format):
                raise TypeError(f"to_zarr: {extras} only apply when a new array is created; with mode={mode!r} "
                                f"{existing.store.display_name!r} already holds the array: pass mode='w' to replace it")
            store_or_array, path, storage_options = existing, None, None
    if isinstance(store_or_array, Array):
        if extras := _given(path=path, storage_options=storage_options, overwrite=overwrite or None, **create_kwargs):
            raise TypeError(f"to_zarr: {extras} only apply when a new array is created, not to an existing Array")
        target = _writable(store_or_array, synchronizer)
        starts = _region_starts(target, region, x.shape)
        check = safe_chunks and not _updates_safely(target.store, target.synchronizer)
        x = _aligned(x, target, starts, rechunk, check, target.store)
        if compute:
            _refuse_other_processes(target.store)
    else:
        if region is not None:
            raise ValueError("to_zarr: region= writes into an existing array, and there is none at "
                             f"{_where(store_or_array, path)}: create it first, or pass mode='a' or 'r+' "
                             "with the path of one (or the zarrpy.Array)")
        store = store_from_url(store_or_array, storage_options=storage_options)
        new: dict[str, Any] = dict(shape=x.shape, dtype=x.dtype, chunks=tuple(max(c[0], 1) for c in x.chunks))
        new.update(create_kwargs, zarr_format=zarr_format)
        # Everything is checked before the array is created, so that a refused
        # write leaves nothing (an empty array) behind: the layout is built on
        # a scratch store first.
        layout = create_array({}, **new)
        starts = _region_starts(layout, None, x.shape)
        x = _aligned(x, layout, starts, rechunk, safe_chunks and not _updates_safely(store, synchronizer), store)
        if compute:
            _refuse_other_processes(store)
        try:
            target = create_array(store, name=path, overwrite=mode == "w", synchronizer=synchronizer, **new)
        except NodeExistsError as exc:
            what, more = ("", ", or mode='a' to write into the array there") if mode == "w-" else (" that is not an array", "")
            raise NodeExistsError(f"to_zarr: {_where(store, path)} already holds a Zarr node{what}; "
                                  f"pass mode='w' to replace it{more}") from exc
    regions = None if region is None else tuple(slice(s, s + n) for s, n in zip(starts, x.shape))
    return x.store(target, lock=False, regions=regions, compute=compute, return_stored=return_stored)


_MODES = ("w-", "w", "a", "r+")


def _write_mode(mode: str | None, overwrite: bool, to_array: bool) -> str:
    """The mode in effect: ``mode``, else ``"w"`` for ``overwrite``, else
    ``"w-"`` (``"r+"`` ``to_array``: an Array, or a region of one); ValueError
    for one that does not write or does not fit."""
    if mode is None:
        return "r+" if to_array and not overwrite else ("w" if overwrite else "w-")
    if mode == "r":
        raise ValueError("to_zarr: mode='r' opens read-only and cannot write; use 'w-', 'w', 'a' or 'r+'")
    if mode not in _MODES:
        raise ValueError(f"to_zarr: mode must be one of {', '.join(map(repr, _MODES))}, got {mode!r}")
    if overwrite and mode != "w":
        raise ValueError(f"to_zarr: overwrite=True means mode='w', but mode={mode!r} was given")
    if to_array and mode not in ("a", "r+"):
        raise ValueError(f"to_zarr: mode={mode!r} creates a new array, but an existing zarrpy.Array or a region= "
                         "of one was given (it is written into: mode 'a' or 'r+')")
    return mode


def _existing_array(store: Any, path: str | None, storage_options: dict[str, Any] | None,
                    mode: str) -> Array | None:
    """The array at ``path`` opened for writing (``mode`` ``"a"`` or ``"r+"``);
    None when there is no node there and ``mode`` is ``"a"``."""
    try:
        return open_array(store, mode="r+", path=path, storage_options=storage_options)
    except NodeNotFoundError:
        if mode == "r+":
            raise NodeNotFoundError(f"to_zarr: mode='r+' writes into an existing array, and there is none at "
                                    f"{_where(store, path)}; pass mode='a' or 'w-' to create it") from None
        return None


def _where(store: Any, path: str | None) -> str:
    """``store`` (and ``path`` in it) as a message names them."""
    name = store.display_name if isinstance(store, Store) else str(store)
    return repr(name) + (f" (path {path!r})" if path else "")


def _writable(array: Array, synchronizer: Synchronizer | None) -> Array:
    """``array``, reopened with ``synchronizer`` when one is given; ReadOnlyError
    now rather than in every task."""
    if array.read_only:
        raise ReadOnlyError(f"to_zarr: array {array.name!r} in {array.store.display_name!r} is read-only; "
                            "open it with zarrpy.open_array(..., mode='r+') to write")
    if synchronizer is None or synchronizer is array.synchronizer:
        return array
    return Array.open(array.store, array.path, write_empty_chunks=array.write_empty_chunks, cache=array.cache,
                      synchronizer=synchronizer)


def _updates_safely(store: Store, synchronizer: Synchronizer | None) -> bool:
    """Can tasks in several processes write parts of one write unit and lose
    nothing? With a synchronizer, or on a store whose writes are conditional
    or locked across processes (:attr:`~zarrpy.stores.abc.Store.supports_concurrent_updates`)."""
    return synchronizer is not None or store.supports_concurrent_updates


def _region_starts(array: Array, region: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Where ``region`` (None: the whole array) starts in each dimension,
    after checking that it is slices of step 1 of ``shape``'s size."""
    slices = () if region is None else region if isinstance(region, tuple) else (region,)
    if len(slices) > array.ndim or not all(isinstance(s, slice) for s in slices):
        raise ValueError(f"to_zarr: region must be up to {array.ndim} slices, got {region!r}")
    starts = []
    for dim, (size, n) in enumerate(zip(array.shape, shape)):
        s = slices[dim] if dim < len(slices) else slice(None)
        start, stop, step = s.indices(size)
        if step != 1 or stop - start != n:
            where = "the array" if region is None else f"region {region!r}"
            raise ValueError(f"to_zarr: the dask array's shape {shape} does not fit {where} of shape "
                             f"{array.shape} (dimension {dim}: {max(stop - start, 0)} elements"
                             f"{'' if step == 1 else f', step {step}'}); pass region= slices of step 1")
        starts.append(start)
    return tuple(starts)


def _aligned(x: Any, array: Array, starts: Sequence[int], rechunk: bool, check: bool, store: Store) -> Any:
    """``x``, rechunked where its block boundaries fall inside a write unit of
    ``array`` (``rechunk``), else checked (``check``): ChunkAlignmentError
    (naming ``store``, the one written to)."""
    fixes: dict[int, tuple[int, ...]] = {}
    if not _regular(array):
        for dim, (blocks, start, edges) in enumerate(zip(x.chunks, starts, _unit_edges(array))):
            bad = first_off_edges(blocks, start, edges)
            if bad is None:
                continue
            if rechunk:
                fixes[dim] = _blocks_on_edges(start, sum(blocks), edges, max(blocks))
            elif check:
                raise ChunkAlignmentError(
                    _misaligned_message(array, dim, blocks, start, _unit_near(edges, bad), bad, store))
        return x.rechunk(fixes) if fixes else x
    unit = write_unit(array)
    for dim, (blocks, start, size) in enumerate(zip(x.chunks, starts, unit)):
        bad = first_misaligned(blocks, start, size)
        if bad is None:
            continue
        if rechunk:
            fixes[dim] = _aligned_blocks(start, sum(blocks), size * max(1, max(blocks) // size))
        elif check:
            raise ChunkAlignmentError(_misaligned_message(array, dim, blocks, start, size, bad, store))
    return x.rechunk(fixes) if fixes else x


def first_misaligned(blocks: Sequence[int], start: int, size: int) -> int | None:
    """The first boundary between two blocks (in array coordinates) that is
    not a multiple of ``size``, or None."""
    edge = start
    for block in blocks[:-1]:
        edge += block
        if edge % size:
            return edge
    return None


def first_off_edges(blocks: Sequence[int], start: int, edges: Sequence[int]) -> int | None:
    """The first boundary between two blocks (in array coordinates) that is
    not one of ``edges`` (where the write units of a rectilinear grid start), or None."""
    on = set(edges)
    edge = start
    for block in blocks[:-1]:
        edge += block
        if edge not in on:
            return edge
    return None


def _unit_near(edges: Sequence[int], position: int) -> int:
    """The length of the write unit holding ``position`` (for messages)."""
    i = max(bisect.bisect_right(edges, position) - 1, 0)
    return edges[min(i + 1, len(edges) - 1)] - edges[i]


def _blocks_on_edges(start: int, length: int, edges: Sequence[int], block: int) -> tuple[int, ...]:
    """Blocks covering ``[start, start + length)`` that end on ``edges`` (the
    write units' starts), each as many whole units as fit in ``block``
    elements (at least one); the first and last may be short."""
    if length == 0:
        return (0,)
    stop = start + length
    return _merged(start, stop, [e for e in edges if start < e < stop], block)


def _merged(start: int, stop: int, inner_edges: list[int], block: int) -> tuple[int, ...]:
    """Cut ``[start, stop)`` at some of ``inner_edges``: greedily, a piece ends
    at the last edge that keeps it within ``block`` (or at the first edge, when none does)."""
    out: list[int] = []
    piece_start = start
    candidates = [*inner_edges, stop]
    i = 0
    while piece_start < stop:
        j = i
        while j + 1 < len(candidates) and candidates[j + 1] - piece_start <= block:
            j += 1
        end = candidates[j]
        out.append(end - piece_start)
        piece_start, i = end, j + 1
    return tuple(out)


def _aligned_blocks(start: int, length: int, block: int) -> tuple[int, ...]:
    """Blocks covering ``[start, start + length)`` whose boundaries are the
    multiples of ``block`` inside it (the first and last may be short)."""
    if length == 0:
        return (0,)
    edges = [start, *range((start // block + 1) * block, start + length, block), start + length]
    return tuple(b - a for a, b in zip(edges, edges[1:]))


def _misaligned_message(array: Array, dim: int, blocks: Sequence[int], start: int, size: int, edge: int,
                        store: Store) -> str:
    unit = "shard" if array.is_sharded else "chunk"
    names = array.dimension_names
    label = f"dimension {dim}" + (f" ({names[dim]!r})" if names and names[dim] else "")
    shown = tuple(blocks) if len(blocks) <= 8 else (*blocks[:6], "...", blocks[-1])
    offset = f" starting at {start}" if start else ""
    irregular = "" if _regular(array) else f" (its {unit} grid is rectilinear: blocks must end where {unit}s end)"
    return (
        f"to_zarr: the dask chunks along {label} are {shown}{offset}, but the array's {unit}s there are "
        f"{size} long{irregular}: the block boundary at {edge} falls inside a {unit}, so two tasks would each "
        f"read, merge and rewrite that {unit} and one's data could be lost. Pass rechunk=True to "
        f"rechunk to multiples of {size}, rechunk the dask array so that block boundaries fall on "
        f"multiples of {size} (the last block may be shorter), or pass synchronizer= "
        "(zarrpy.ProcessSynchronizer on a file system all workers share, or "
        f"zarrpy.LockSynchronizer(distributed.Lock)); {store.display_name!r} cannot update "
        "parts of one object from several processes by itself (no conditional writes or update locks)"
    )


def _refuse_other_processes(store: Store) -> None:
    """ProcessLocalError up front for a store in this process's memory when
    the scheduler in effect runs tasks in other processes (distributed,
    ``processes``): the graph would fail to pickle deep inside dask, with the
    reason buried in its traceback."""
    if not store.process_local:
        return
    dask_base = _import("dask.base")
    scheduler = dask_base.get_scheduler()
    in_process = {_import("dask.threaded").get, _import("dask.local").get_sync}
    if scheduler is not None and scheduler not in in_process:
        raise ProcessLocalError(
            f"to_zarr: {store.display_name!r} lives in this process's memory, and dask's scheduler runs "
            "tasks in other processes, whose writes would be lost. Write to a directory or object store, or compute with scheduler='threads' "
            "(dask.config.set(scheduler='threads'))"
        )


from_array = from_zarr
"""Alias of :func:`from_zarr`."""

to_array = to_zarr
"""Alias of :func:`to_zarr`."""

__all__ = ["first_misaligned", "first_off_edges", "from_array", "from_zarr", "to_array", "to_zarr", "write_unit"]
