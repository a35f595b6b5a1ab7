"""``zarrpy cp``: copy an array or a group hierarchy into a new store, in bounded memory.

The copy may change the layout of every array -- chunks (``chunks``), shards
(``shards``, or none with ``no_shards``), compressor (``compressor``, in the
``zstd:3`` / ``blosc:lz4:5`` / ``gzip:6`` / ``none`` syntax) -- and the Zarr
format (``zarr_format``: V2 to V3 and back, where the codecs have a form in
the other format). Attributes, fill values, dimension names (V3), filters
and serializers are kept; groups are recreated with their attributes, and a
group that had consolidated metadata gets it again.

**Memory.** Data moves region by region: :func:`plan_regions` cuts each
array into boxes that are whole destination write units (shards, else
chunks), aligned to the source chunks where a common multiple fits, and as
large as :func:`in_flight` allows within ``max_memory``: the region's
elements and their encoded form (:data:`REGION_COPIES`), and per codec
thread a destination unit being encoded (:data:`UNIT_COPIES`) and a source
chunk being decoded (:data:`SOURCE_COPIES`). A region is read with
``source[region]`` and written with ``dest[region] = data``, which covers
whole destination shards or chunks, so nothing is read back from the
destination; it is dropped before the next is read.

**Shards larger than memory.** When one destination shard does not fit,
shards are streamed (:mod:`zarrpy.pipeline.shard_stream`): each is written
inner chunk by inner chunk, its index last, read from the source in bands
of whole inner chunks (:func:`plan_stream_band`) as large as
:func:`stream_in_flight` allows: the band's elements, the inner chunks
being encoded (:func:`~zarrpy.pipeline.shard_stream.in_flight_nbytes`) and
per codec thread a source chunk being decoded. So any shard size copies
within ``max_memory``; only an inner chunk that alone does not fit is
refused, before anything is written (:class:`MemoryBudgetError`; an
unsharded destination's chunk likewise). A destination store that cannot
stream (``Store.streams_writes`` False) keeps each shard's encoded bytes
until it is stored: not counted (compressed data, usually a fraction of
the shard).

Not counted either: the interpreter and its modules, the scratch buffers
threads keep (:mod:`zarrpy.core.scratch`), allocator slack, and the listing
of the source's stored chunk keys. Regions (shards) holding no stored
source chunk are skipped (they are fill only).

The destination is planned and validated (every array is first created in
memory) before the first byte is written; a copy interrupted later leaves a
partial destination, which ``overwrite`` replaces on the next run.
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import api
from ..api._array import Array
from ..api._create import node_exists
from ..api._group import Group, consolidate_metadata
from ..api._shard_writes import streams_shards, write_shard
from ..core._typing import Shape
from ..core.paths import normalize_path
from ..errors import ChunkDecodeError, NodeExistsError, ZarrpyError
from ..pipeline.concurrency import max_workers
from ..pipeline.shard_stream import RUN_NBYTES, in_flight_nbytes
from ..pipeline.shard_stream import plan_band as shard_plan_band
from ..stores import LocalStore, ZipStore, store_from_url
from ..stores.abc import Store
from ._nodes import (
    ChunksOption,
    Layout,
    element_nbytes,
    in_grid,
    inner_chunks,
    nbytes_of,
    outer_shape,
    stored_objects,
    stored_region,
    unit_shape,
    v3_metadata,
)
from .progress import Progress, format_bytes

DEFAULT_MAX_MEMORY = 256 << 20
"""``--max-memory`` when not given: 256 MiB."""
REGION_COPIES = 2
"""A region is in memory twice at most: its elements, read from the source,
and their encoded form, made before the first unit is stored (counted as
large as the elements: incompressible data)."""
UNIT_COPIES = 3
"""Per codec thread, a destination write unit being encoded: a contiguous
copy of its elements, its inner chunks laid out in order (shards), and the
comparison with the fill value (up to one byte per element)."""
SOURCE_COPIES = 2
"""Per codec thread, a source chunk being read: its stored bytes and its decoded elements."""


class CopyError(ZarrpyError, ValueError):
    """The copy cannot be made as asked (an option does not fit an array, or the stores overlap)."""


class MemoryBudgetError(CopyError):
    """One destination write unit alone needs more memory than ``max_memory``."""


@dataclass(frozen=True)
class CopyOptions:
    """How ``zarrpy cp`` changes each array (None: as in the source)."""

    chunks: ChunksOption | None = None
    """Per dimension an edge length (-1: whole) or a rectilinear dimension's edge lengths."""
    shards: ChunksOption | None = None
    no_shards: bool = False
    compressor: str | None = None
    """``--compressor`` text: ``zstd:3``, ``blosc:lz4:5``, ``gzip:6``, ``none``."""
    zarr_format: int | None = None
    max_memory: int = DEFAULT_MAX_MEMORY
    subchunk_write_order: str | None = None
    """``--subchunk-write-order``: the order of inner chunks in the copy's
    shards (None: lexicographic; :mod:`zarrpy.codecs.sharding.order`)."""


@dataclass
class ArrayPlan:
    """One array to copy: where it goes, how it is created, how it is cut."""

    source: Array
    rel: str
    """Path relative to the copied node ('' for the node itself)."""
    create: dict[str, Any]
    """Keyword arguments of :func:`zarrpy.create_array` (besides the store and name)."""
    element: int
    """Estimated bytes of one element in memory."""
    region: Shape = ()
    regions: list[tuple[slice, ...]] = field(default_factory=list)
    """The regions holding stored source data, in order (streamed: shards)."""
    band: Shape | None = None
    """The bands streamed shards are read in (whole inner chunks), when one
    shard does not fit ``max_memory``; None: regions are copied whole."""
    run_nbytes: int = RUN_NBYTES
    """Decoded bytes of inner chunks one codec task of a streamed shard encodes."""
    nbytes: int = 0
    """Bytes of the regions to copy (decoded)."""
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The array's path below the copied node, as ``/a/b`` (``/`` for the node itself)."""
        return "/" + self.rel


@dataclass
class CopyResult:
    """What :func:`copy` did."""

    arrays: list[ArrayPlan]
    groups: list[str]
    """Group paths created (relative; '' is the copied node)."""
    nbytes: int
    """Decoded bytes moved."""
    max_memory: int
    consolidated: bool = False
    created: dict[str, Array] = field(default_factory=dict)
    """The destination arrays, by relative path."""


# -- options ----------------------------------------------------------------
def compressor_codecs(text: str, itemsize: int) -> list[dict[str, Any]]:
    """``--compressor`` as the ``compressors`` list of :func:`zarrpy.create_array`.

    ``none``; ``zstd[:LEVEL]``; ``gzip[:LEVEL]``; ``zlib[:LEVEL]``;
    ``blosc[:CNAME[:CLEVEL[:SHUFFLE]]]`` (default lz4, 5, and bitshuffle for
    one-byte elements, else shuffle, as zarr-python). ValueError otherwise.
    """
    parts = [p.strip() for p in text.strip().lower().split(":")]
    name, args = parts[0], parts[1:]

    def level(default: int, low: int, high: int) -> int:
        if not args:
            return default
        if len(args) > 1 or not args[0].lstrip("-").isdigit() or not low <= int(args[0]) <= high:
            raise CopyError(f"--compressor {text!r}: {name} takes one level from {low} to {high}, e.g. {name}:{default}")
        return int(args[0])

    if name == "none" and not args:
        return []
    if name == "zstd":
        return [{"name": "zstd", "configuration": {"level": level(3, -131072, 22), "checksum": False}}]
    if name == "gzip":
        return [{"name": "gzip", "configuration": {"level": level(6, 0, 9)}}]
    if name == "zlib":  # numcodecs' zlib: its V3 name (V2 id: zlib)
        return [{"name": "numcodecs.zlib", "configuration": {"level": level(1, 0, 9)}}]
    if name == "blosc":
        if len(args) > 3:
            raise CopyError(f"--compressor {text!r}: expected blosc:CNAME:CLEVEL[:SHUFFLE], e.g. blosc:lz4:5")
        cname = args[0] if args else "lz4"
        if len(args) > 1 and not args[1].isdigit():
            raise CopyError(f"--compressor {text!r}: the blosc level must be an integer from 0 to 9")
        clevel = int(args[1]) if len(args) > 1 else 5
        shuffle = args[2] if len(args) > 2 else ("bitshuffle" if itemsize == 1 else "shuffle")
        return [{"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle}}]
    raise CopyError(f"--compressor {text!r}: expected none, zstd:LEVEL, gzip:LEVEL, zlib:LEVEL or "
                     "blosc:CNAME:CLEVEL (e.g. zstd:3, blosc:lz4:5, gzip:6)")


def _fit(option: str, given: ChunksOption | None, a: Array, rel: str, notes: list[str]) -> ChunksOption | None:
    """``--chunks``/``--shards`` (``option``) for array ``a``, with -1 standing
    for a whole dimension; None when not given or not applicable (a 0-d array,
    or a member of a copied group whose rank differs or, for rectilinear edges,
    whose lengths differ: noted in ``notes``; for the array copied itself
    that is a CopyError)."""
    if given is None or not a.ndim:  # a 0-d array has one chunk, of no shape
        return None
    if len(given) != a.ndim:
        if rel == "":
            raise CopyError(f"{option} has {len(given)} dimensions, the array has {a.ndim}")
        notes.append(f"keeps its {option[2:]}: {option} has {len(given)} dimensions, the array {a.ndim}")
        return None
    for axis, (c, n) in enumerate(zip(given, a.shape)):
        if isinstance(c, tuple) and n and sum(c) != n:
            if rel == "":
                raise CopyError(f"{option}: the edges of dimension {axis} sum to {sum(c)}, not to its length {n}")
            notes.append(f"keeps its {option[2:]}: the {option} edges of dimension {axis} sum to {sum(c)}, "
                         f"its length is {n}")
            return None
    return tuple(max(s, 1) if c == -1 else c for c, s in zip(given, a.shape))


def _grid_arguments(a: Array) -> tuple[Any, Any]:
    """``chunks=`` and ``shards=`` that give a copy of ``a`` its chunk grid:
    a rectilinear grid (of chunks, or of shards) as its ``chunk_grid`` member."""
    irregular = a.chunk_grid["name"] != "regular"
    if not a.is_sharded:
        return (a.chunk_grid if irregular else a.chunks), None
    return a.chunks, (a.chunk_grid if irregular else a.shards)


def _shard_edges(shards: Any) -> list[set[int]]:
    """The distinct shard edge lengths per dimension of a ``shards=`` value
    (a shape, per-dimension edges, or a ``chunk_grid`` member)."""
    if isinstance(shards, dict):
        config = shards.get("configuration") or {}
        dims = config.get("chunk_shapes", config.get("chunk_shape", []))
        return [{d} if isinstance(d, int) else {e for item in d for e in ([item[0]] if isinstance(item, list) else [item])}
                for d in dims]
    return [{d} if isinstance(d, int) else set(d) for d in shards]


def _create_arguments(a: Array, options: CopyOptions, fmt: int, rel: str) -> tuple[dict[str, Any], list[str]]:
    """The :func:`zarrpy.create_array` arguments of ``a``'s copy, and notes for the user."""
    meta = v3_metadata(a)
    notes: list[str] = []
    chunks, shards = _grid_arguments(a)
    new_chunks = _fit("--chunks", options.chunks, a, rel, notes)
    if new_chunks is not None:
        chunks = new_chunks
        if (shards is not None and options.shards is None and not options.no_shards
                and all(isinstance(c, int) for c in chunks)
                and any(e % c for edges, c in zip(_shard_edges(shards), chunks) if isinstance(c, int) for e in edges)):
            raise CopyError(
                f"array {'/' + rel!r}: its shards {_layout_text(shards)} are not multiples of --chunks "
                f"{_layout_text(chunks)}; give --shards too, or --no-shards")
    if options.no_shards:
        shards = None
    else:
        shards = _fit("--shards", options.shards, a, rel, notes) or shards
    if fmt == 2:
        if shards is not None and options.shards is not None and len(options.shards) == a.ndim:
            raise CopyError("--shards: Zarr V2 has no shards (use --no-shards, or --zarr-format 3)")
        if shards is not None:
            notes.append(f"unsharded: Zarr V2 has no shards (chunks {_layout_text(chunks)})")
        shards = None
    compressors: Any = list(a.compressors)
    if options.compressor is not None:
        compressors = compressor_codecs(options.compressor, max(a.dtype.itemsize, 1))
    create: dict[str, Any] = dict(
        shape=a.shape, dtype=meta.data_type, chunks=_as_argument(chunks), shards=_as_argument(shards),
        filters=list(a.filters), serializer=a.serializer, compressors=compressors, fill_value=meta.fill_value,
        attributes=dict(a.attrs), zarr_format=fmt,
    )
    if options.subchunk_write_order is not None:
        if shards is not None:
            create["subchunk_write_order"] = options.subchunk_write_order
        else:
            notes.append("--subchunk-write-order not used: the copy is not sharded")
    if fmt == 3:
        create["dimension_names"] = meta.dimension_names
        if a.zarr_format == 3:
            create["chunk_key_encoding"] = meta.chunk_key_encoding
    else:
        if meta.dimension_names is not None and any(n is not None for n in meta.dimension_names):
            notes.append("dimension names dropped: Zarr V2 has none")
        separator = meta.chunk_key_encoding.to_json().get("configuration", {}).get("separator")
        if a.zarr_format == 2 or meta.chunk_key_encoding.to_json().get("name") == "v2":
            create["dimension_separator"] = separator
    return create, notes


def _as_argument(value: Any) -> Any:
    """A ``--chunks``-style value as :func:`zarrpy.create_array` takes it
    (a rectilinear dimension's edges as a list)."""
    if isinstance(value, tuple) and any(isinstance(v, tuple) for v in value):
        return [list(v) if isinstance(v, tuple) else v for v in value]
    return value


def _layout_text(value: Any) -> str:
    """Chunks or shards as the summary prints them: a shape, or a rectilinear grid's sizes."""
    if isinstance(value, dict):
        config = value.get("configuration") or {}
        return f"{value.get('name')} {config.get('chunk_shapes', config.get('chunk_shape'))}"
    return str(value)


# -- regions ----------------------------------------------------------------
def in_flight(region: Shape, unit: Shape, source_chunks: Shape, element: int, workers: int) -> int:
    """Bytes in memory while a region of shape ``region`` is copied (the model
    the planner keeps under ``max_memory``; see the constants' docs)."""
    nbytes = math.prod(region) * element
    units = math.prod(-(-r // u) for r, u in zip(region, unit))
    sources = math.prod(-(-r // c) for r, c in zip(region, source_chunks))
    return (REGION_COPIES * nbytes
            + min(workers, units) * UNIT_COPIES * math.prod(unit) * element
            + min(workers, sources) * SOURCE_COPIES * math.prod(source_chunks) * element)


def plan_regions(shape: Shape, unit: Shape, source_chunks: Shape, element: int, max_memory: int,
                 workers: int | None = None) -> Shape:
    """The shape of the regions an array of ``shape`` is copied in.

    Each is a whole number of destination write units (``unit``: shards or
    chunks, clipped to the array) along every dimension (or the whole
    dimension), aligned to ``source_chunks`` too where a common multiple
    fits, and grown (last dimension first) while :func:`in_flight` stays
    within ``max_memory`` with ``workers`` codec threads (default: the
    pool's). MemoryBudgetError if one unit alone does not fit.
    """
    if not shape:
        return ()
    workers = max_workers() if workers is None else workers
    clamp = [max(s, 1) for s in shape]
    unit = tuple(min(u, c) for u, c in zip(unit, clamp))
    source_chunks = tuple(min(c, s) for c, s in zip(source_chunks, clamp))

    def fits(region: list[int]) -> bool:
        return in_flight(tuple(region), unit, source_chunks, element, workers) <= max_memory

    region = list(unit)
    if not fits(region):
        need = in_flight(unit, unit, source_chunks, element, workers)
        raise MemoryBudgetError(
            f"one destination write unit of shape {unit} holds {format_bytes(math.prod(unit) * element)} of "
            f"elements, and copying it needs up to {format_bytes(need)} in flight (the elements, a copy being "
            f"encoded, the encoded bytes, and the source chunks being decoded), more than --max-memory "
            f"{format_bytes(max_memory)}: give a larger --max-memory, or smaller --shards/--chunks")
    # Align to the source chunks where the common multiple fits: each source chunk is then decoded once.
    for d in reversed(range(len(shape))):
        aligned = min(math.lcm(unit[d], source_chunks[d]), clamp[d])
        trial = region[:d] + [aligned] + region[d + 1:]
        if aligned > region[d] and fits(trial):
            region = trial
    # Grow by whole steps (of the size reached so far) while it fits, last dimension first.
    for d in reversed(range(len(shape))):
        step = region[d]
        low, high = 1, -(-clamp[d] // step)  # the largest multiple that fits, by bisection
        while low < high:
            mid = (low + high + 1) // 2
            if fits(region[:d] + [min(step * mid, clamp[d])] + region[d + 1:]):
                low = mid
            else:
                high = mid - 1
        region[d] = min(step * low, clamp[d])
        if region[d] < clamp[d]:
            break
    return tuple(region)


def stream_in_flight(band: Shape, inner: Shape, source_chunks: Shape, element: int, workers: int,
                     run_nbytes: int = RUN_NBYTES) -> int:
    """Bytes in memory while a shard is streamed from bands of shape ``band``
    (inner chunks of ``inner``, encoded in runs of ``run_nbytes``): the band's
    elements, the runs being encoded, and per codec thread a source chunk
    being decoded."""
    sources = math.prod(-(-b // c) for b, c in zip(band, source_chunks))
    return (math.prod(band) * element + in_flight_nbytes(math.prod(inner) * element, workers, run_nbytes)
            + min(workers, sources) * SOURCE_COPIES * math.prod(source_chunks) * element)


def plan_stream_band(shard: Shape, inner: Shape, source_chunks: Shape, element: int, max_memory: int,
                     workers: int | None = None, order: str = "lexicographic") -> tuple[Shape, int]:
    """The bands a shard of ``shard`` (whole inner chunks of ``inner``) is
    streamed from, and the bytes of inner chunks each codec task encodes:
    the largest bands that :func:`stream_in_flight` keeps within
    ``max_memory`` (see :func:`zarrpy.pipeline.shard_stream.plan_band`),
    their partial dimension rounded down to the source chunks where these
    tile the shard (each source chunk is then decoded once; C-order bands
    only: the bands follow the shards' write ``order``); tasks of
    :data:`~zarrpy.pipeline.shard_stream.RUN_NBYTES`, or of one inner chunk
    when memory is that tight. MemoryBudgetError if one inner chunk alone
    does not fit."""
    workers = max_workers() if workers is None else workers
    source_chunks = tuple(min(c, s) for c, s in zip(source_chunks, shard))
    for run_nbytes in (RUN_NBYTES, 0):
        band = shard_plan_band(shard, inner, lambda b: stream_in_flight(
            b, inner, source_chunks, element, workers, run_nbytes) <= max_memory, order)
        if band is not None:
            break
    else:
        need = stream_in_flight(inner, inner, source_chunks, element, workers, 0)
        raise MemoryBudgetError(
            f"one destination inner chunk of shape {inner} (in shards of {shard}) holds "
            f"{format_bytes(math.prod(inner) * element)} of elements, and copying it needs up to "
            f"{format_bytes(need)} in flight (the elements, copies being encoded, the encoded bytes, and the "
            f"source chunks being decoded), more than --max-memory {format_bytes(max_memory)}: give a larger "
            f"--max-memory, or smaller --chunks")
    partial = [d for d, (b, s) in enumerate(zip(band, shard)) if b < s]
    if partial and order in ("lexicographic", "unordered"):  # the dimension where a band takes some inner chunks (before it: one, after it: all)
        d = partial[-1]
        step = math.lcm(inner[d], source_chunks[d])
        if band[d] > step and shard[d] % source_chunks[d] == 0:
            band = band[:d] + (band[d] // step * step,) + band[d + 1:]
    return band, run_nbytes


def _regular_cuts(shape: Shape, region: Shape) -> list[list[int]]:
    """Per dimension, where the regions of shape ``region`` start, then the length."""
    return [[*range(0, n, r), n] for n, r in zip(shape, region)]


def _regions_with_data(a: Array, cuts: list[list[int]]) -> list[tuple[slice, ...]]:
    """The regions (the boxes between the per-dimension ``cuts``) that hold at
    least one stored source chunk, in C order."""
    if not a.shape:
        return [()] if a.stored_chunk_keys() else []
    touched: set[tuple[int, ...]] = set()
    for obj in stored_objects(a):
        if not in_grid(a, obj.coords):
            continue
        spans = []
        for b, cut in zip(stored_region(a, obj.coords), cuts):
            first = bisect.bisect_right(cut, b.start) - 1
            spans.append(range(first, max(bisect.bisect_left(cut, b.stop), first + 1)))
        touched.update(_product(spans))
    return [tuple(slice(cut[i], cut[i + 1]) for i, cut in zip(idx, cuts)) for idx in sorted(touched)]


def plan_unit_runs(starts: list[list[int]] | tuple[tuple[int, ...], ...], unit: Shape, source_chunks: Shape,
                   element: int, max_memory: int, workers: int | None = None) -> tuple[list[list[int]], Shape]:
    """:func:`plan_regions` for a destination whose write units differ in
    shape (a rectilinear grid; ``starts``: per dimension each unit's start,
    then the length): regions are runs of whole units, as many along each
    dimension as :func:`in_flight` keeps within ``max_memory`` for the
    largest such run (last dimension first). Per dimension the regions'
    cuts, and the largest region's shape. MemoryBudgetError if the largest
    unit alone does not fit."""
    workers = max_workers() if workers is None else workers

    def cuts(d: int, k: int) -> list[int]:
        points = list(starts[d])
        every = points[:-1][::k]
        return [*every, points[-1]]

    def longest(cut: list[int]) -> int:
        return max([b - a for a, b in zip(cut, cut[1:])], default=1)

    def region_of(ks: list[int]) -> Shape:
        return tuple(longest(cuts(d, k)) for d, k in enumerate(ks))

    def fits(ks: list[int]) -> bool:
        return in_flight(region_of(ks), unit, source_chunks, element, workers) <= max_memory

    ks = [1] * len(starts)
    if not fits(ks):
        need = in_flight(unit, unit, source_chunks, element, workers)
        raise MemoryBudgetError(
            f"one destination write unit of shape {unit} holds {format_bytes(math.prod(unit) * element)} of "
            f"elements, and copying it needs up to {format_bytes(need)} in flight, more than --max-memory "
            f"{format_bytes(max_memory)}: give a larger --max-memory, or smaller --shards/--chunks")
    for d in reversed(range(len(starts))):
        n = len(starts[d]) - 1
        while ks[d] < n and fits(ks[:d] + [min(ks[d] * 2, n)] + ks[d + 1:]):
            ks[d] = min(ks[d] * 2, n)
        if ks[d] < n:
            break
    return [cuts(d, k) for d, k in enumerate(ks)], region_of(ks)


def _product(ranges: list[range]) -> list[tuple[int, ...]]:
    return [tuple(p) for p in itertools.product(*ranges)]


def _sample(a: Array) -> Any:
    """A small part of ``a`` holding stored data (one chunk), to size its elements."""
    if a.shape and a.size and v3_metadata(a).data_type.is_variable:
        for obj in stored_objects(a):
            if in_grid(a, obj.coords):
                return a.read_chunks(inner_chunks(a, obj.coords)[:1])[0]
    return None


# -- planning ---------------------------------------------------------------
def _plan_array(a: Array, rel: str, options: CopyOptions, fmt: int) -> ArrayPlan:
    where = f"array {'/' + rel!r}: "
    create, notes = _create_arguments(a, options, fmt, rel)
    # Validate the whole destination array (codecs, V2 form, shard/chunk fit) in memory first.
    try:
        probe = api.create_array({}, **create)
    except (ZarrpyError, ValueError, TypeError) as exc:
        raise type(exc)(where + str(exc)) from exc
    element = element_nbytes(a, _sample(a))
    source_chunks = unit_shape(a)
    unit = outer_shape(probe)
    if probe.is_sharded:  # edge shards hold only the inner chunks inside the array
        unit = tuple(min(u, -(-max(s, 1) // c) * c) for u, s, c in zip(unit, a.shape, probe.chunks))
    regular = probe.chunk_grid["name"] == "regular"
    band, run_nbytes = None, RUN_NBYTES
    try:
        try:
            if regular:
                region = plan_regions(a.shape, unit, source_chunks, element, options.max_memory)
                cuts = _regular_cuts(a.shape, region)
            else:
                cuts, region = plan_unit_runs(Layout.of(probe).outer, unit, source_chunks, element,
                                              options.max_memory)
        except MemoryBudgetError:
            if not probe.is_sharded or not streams_shards(probe):
                raise
            # One shard does not fit: shards are streamed, read in bands of inner chunks.
            region = unit
            cuts = _regular_cuts(a.shape, region) if regular else [list(d) for d in Layout.of(probe).outer]
            band, run_nbytes = plan_stream_band(unit, probe.chunks, source_chunks, element, options.max_memory,
                                                order=probe.subchunk_write_order or "lexicographic")
    except MemoryBudgetError as exc:
        raise MemoryBudgetError(where + str(exc)) from None
    plan = ArrayPlan(a, rel, create, element, region, band=band, run_nbytes=run_nbytes, notes=notes)
    plan.regions = _regions_with_data(a, cuts) if a.size else []
    plan.nbytes = sum(nbytes_of(r, element) for r in plan.regions) if a.shape else element * len(plan.regions)
    return plan


def _check_not_overlapping(source: Store, src_path: str, dest: Store) -> None:
    """Refuse to copy a directory store into itself or into a directory inside it (or the reverse)."""
    if isinstance(source, LocalStore) and isinstance(dest, LocalStore):
        src = os.path.realpath(os.path.join(source.root, src_path))
        dst = os.path.realpath(dest.root)
        if src == dst or dst.startswith(src + os.sep) or src.startswith(dst + os.sep):
            raise CopyError(f"cannot copy {source.display_name!r} into {dest.display_name!r}: the two overlap")
    elif source.display_name == dest.display_name:
        raise CopyError(f"cannot copy {source.display_name!r} onto itself")


def copy(
    source: Any,
    dest: Any,
    *,
    path: str | None = None,
    options: CopyOptions = CopyOptions(),
    overwrite: bool = False,
    progress: Callable[[int, int], Progress] | None = None,
    src_storage_options: dict[str, Any] | None = None,
    dst_storage_options: dict[str, Any] | None = None,
) -> CopyResult:
    """Copy the node at ``path`` of ``source`` (a path, URL or Store) to the root of ``dest``.

    ``progress(total_bytes, narrays)`` makes the progress bar (or None for
    none). Everything is planned and validated before anything is written.
    Raises NodeExistsError when ``dest`` holds a node and not ``overwrite``,
    MemoryBudgetError when one write unit does not fit ``max_memory``.
    ``src_storage_options`` / ``dst_storage_options`` go to fsspec for a URL
    ``source`` / ``dest``.
    """
    src_store = source if isinstance(source, Store) else store_from_url(source, read_only=True, storage_options=src_storage_options)
    src_path = normalize_path(path)
    node = api.open(src_store, mode="r", path=src_path, use_consolidated=False)
    dst_store = dest if isinstance(dest, Store) else store_from_url(
        dest, storage_options=dst_storage_options, mode="w" if overwrite else "w-")
    made_zip = dst_store if isinstance(dst_store, ZipStore) and not isinstance(dest, Store) else None
    if made_zip is not None and made_zip.read_only:
        raise CopyError(f"{made_zip.display_name!r} is a zip archive already; a zip cannot be overwritten "
                        "in place: remove it, or copy to a new .zip path")
    try:
        return _copy_into(node, src_store, src_path, dst_store, options, overwrite, progress)
    finally:
        if made_zip is not None:
            made_zip.close()  # writes the archive's central directory


def _copy_into(node: Array | Group, src_store: Store, src_path: str, dst_store: Store, options: CopyOptions,
               overwrite: bool, progress: Callable[[int, int], Progress] | None) -> CopyResult:
    """:func:`copy` once both stores are open."""
    _check_not_overlapping(src_store, src_path, dst_store)
    fmt = options.zarr_format or node.zarr_format
    if fmt not in (2, 3):
        raise CopyError(f"--zarr-format must be 2 or 3, got {fmt!r}")
    members: list[tuple[str, Array | Group]] = [("", node)]
    if isinstance(node, Group):
        members += list(node.members(max_depth=None))
    plans = [_plan_array(m, rel, options, fmt) for rel, m in members if isinstance(m, Array)]
    if not overwrite and node_exists(dst_store, ""):
        raise NodeExistsError(f"{dst_store.display_name!r} already holds a Zarr node; pass --overwrite to replace it")
    groups: list[str] = []
    created: dict[str, Array] = {}
    by_rel = {p.rel: p for p in plans}
    if isinstance(node, Group):
        root = api.open_group(dst_store, mode="w", zarr_format=fmt, attributes=dict(node.attrs))
        groups.append("")
        for rel, m in members[1:]:
            if isinstance(m, Group):
                root.create_group(rel, attributes=dict(m.attrs))
                groups.append(rel)
            else:
                created[rel] = root.create_array(rel, **by_rel[rel].create)
    else:
        created[""] = api.create_array(dst_store, overwrite=True, **plans[0].create)
    total = sum(p.nbytes for p in plans)
    bar = progress(total, len(plans)) if progress is not None else None
    moved = 0
    try:
        for plan in plans:
            label = f"cp {plan.name}" if len(plans) > 1 else None
            moved += _copy_array(plan, created[plan.rel], dst_store, bar, label)
    finally:
        if bar is not None:
            bar.close()
    consolidated = False
    if isinstance(node, Group) and _had_consolidated(src_store, src_path):
        consolidate_metadata(dst_store)
        consolidated = True
    return CopyResult(plans, groups, moved, options.max_memory, consolidated, created)


def _copy_array(plan: ArrayPlan, target: Array, dst_store: Store, bar: Progress | None, label: str | None) -> int:
    """Copy ``plan``'s regions into ``target``: each read whole and written
    whole, or (``plan.band``) each shard streamed from bands; the bytes moved."""
    moved = 0

    def read(region: tuple[slice, ...]) -> Any:
        nonlocal moved
        data = _read_source(plan, region, dst_store)
        n = nbytes_of(region, plan.element) if region else plan.element
        moved += n
        if bar is not None:
            bar.advance(n, label)
        return data

    starts = Layout.of(target).outer
    for region in plan.regions:
        if plan.band is not None and target.is_sharded:
            coords = tuple(bisect.bisect_right(d, r.start) - 1 for r, d in zip(region, starts))
            write_shard(target, coords, read, band=plan.band, run_nbytes=plan.run_nbytes)
            continue
        data = read(region)
        target[region] = data
        del data  # before the next read: never two regions in memory
    return moved


def _read_source(plan: ArrayPlan, region: tuple[slice, ...], dst_store: Store) -> Any:
    """``plan.source[region]``; a source chunk that does not decode says the copy is incomplete."""
    try:
        return plan.source[region]
    except ChunkDecodeError as exc:
        error = type(exc)(f"{exc}; the copy at {dst_store.display_name!r} is incomplete "
                          "(zarrpy verify lists the bad chunks of the source)")
        error.key = getattr(exc, "key", None)  # type: ignore[attr-defined]
        raise error from exc


def _had_consolidated(store: Store, path: str) -> bool:
    group = api.open_group(store, mode="r", path=path)
    return group.consolidated_metadata is not None


def run_cp(args: Any) -> int:
    """``zarrpy cp`` with parsed arguments (see :mod:`zarrpy.tools.cli`): copy, then print what was copied."""
    from ._nodes import codec_summary, dtype_text
    from .progress import wanted

    options = CopyOptions(chunks=args.chunks, shards=args.shards, no_shards=args.no_shards,
                          compressor=args.compressor, zarr_format=args.zarr_format, max_memory=args.max_memory,
                          subchunk_write_order=args.subchunk_write_order)
    show = wanted(args.quiet)
    result = copy(args.source, args.dest, path=args.path, options=options, overwrite=args.overwrite,
                  progress=lambda total, n: Progress(total, "cp", in_bytes=True, enabled=show),
                  src_storage_options=args.src_storage_options, dst_storage_options=args.dst_storage_options)
    for plan in result.arrays:
        a = result.created[plan.rel]
        chunks, shards = _grid_arguments(a)
        layout = f"chunks {_layout_text(chunks)}" + (f", shards {_layout_text(shards)}" if shards is not None else "")
        moves = (f"{len(plan.regions)} region(s) of {plan.region}" if plan.band is None else
                 f"{len(plan.regions)} shard(s) streamed in bands of {plan.band}")
        print(f"{plan.name} {a.shape} {dtype_text(a)}: V{a.zarr_format}, {layout}, {codec_summary(a)}; "
              f"{moves} ({format_bytes(plan.nbytes)})")
        for note in plan.notes:
            print(f"  note: {plan.name} {note}")
    groups = f"{len(result.groups)} group(s), " if result.groups else ""
    print(f"copied {groups}{len(result.arrays)} array(s), {format_bytes(result.nbytes)} of data, to {args.dest}"
          f" (at most {format_bytes(result.max_memory)} in flight)"
          + ("; consolidated metadata rewritten" if result.consolidated else ""))
    return 0


__all__ = [
    "DEFAULT_MAX_MEMORY",
    "ArrayPlan",
    "CopyError",
    "CopyOptions",
    "CopyResult",
    "MemoryBudgetError",
    "compressor_codecs",
    "copy",
    "in_flight",
    "plan_regions",
    "plan_stream_band",
    "plan_unit_runs",
    "run_cp",
    "stream_in_flight",
]
