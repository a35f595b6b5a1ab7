"""The ``chunk_grid`` member of a V3 ``zarr.json``: parse, validate, serialise.

Three grids:

- ``regular`` (core): ``{"chunk_shape": [...]}``, one chunk shape.
- ``rectilinear`` (zarr-extensions ``chunk-grids/rectilinear``; zarr-python
  3.2+ behind ``array.rectilinear_chunks``, zarrs):
  ``{"kind": "inline", "chunk_shapes": [...]}`` with, per dimension, a bare
  integer (chunks of that edge length, as many as the array needs) or a
  list of edge lengths, where ``[value, count]`` stands for ``count``
  edges of ``value`` (run-length encoding). The edges must sum to at least
  the array's length; more is allowed (an array shrunk after it was
  written keeps its edges, as zarr-python and zarrs leave them).
- ``zarrs.regular_bounded`` (zarrs): ``{"chunk_shape": [...]}`` like
  ``regular``, but the edge chunks are stored clipped to the array.

:class:`ChunkGridSpec` is the member as a value; :meth:`ChunkGridSpec.bind`
gives the :class:`~zarrpy.core.chunk_grid.ChunkGrid` the pipeline runs on.

>>> spec = ChunkGridSpec.from_json(
...     {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[3, 2], 4], 2]}}, (10, 6))
>>> spec.chunk_shapes
((3, 3, 4), 2)
>>> spec.bind((10, 6)).chunk_sizes
((3, 3, 4), (2, 2, 2))
>>> spec.to_json()["configuration"]["chunk_shapes"]
[[[3, 2], 4], 2]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..core._typing import Shape
from ..core.chunk_grid import (
    RECTILINEAR,
    REGULAR,
    REGULAR_BOUNDED,
    BoundedDimension,
    ChunkGrid,
    FixedDimension,
    VaryingDimension,
)
from ..errors import MetadataError
from ._parse import parse_named, parse_shape

NAMES = (REGULAR, RECTILINEAR, REGULAR_BOUNDED)
"""The grids zarrpy reads and writes, by their V3 names."""

_ALIASES = {"regular_bounded": REGULAR_BOUNDED}
"""Older names read as a grid (zarrs wrote ``regular_bounded`` before it took its prefix)."""

MAX_EDGES = 1 << 24
"""The most explicit edge lengths a ``rectilinear`` grid may expand to (all
dimensions together): run-length encoding lets a few bytes of metadata
claim billions of chunks, which would take memory to hold."""

DimSpec = int | tuple[int, ...]
"""One dimension of a grid: a regular edge length, or explicit edge lengths."""


@dataclass(frozen=True, slots=True)
class ChunkGridSpec:
    """A ``chunk_grid`` member: its ``name`` and, per dimension, a bare edge
    length or the tuple of explicit edge lengths (run-length encoding expanded)."""

    name: str
    chunk_shapes: tuple[DimSpec, ...]

    @classmethod
    def regular(cls, chunk_shape: Sequence[int]) -> ChunkGridSpec:
        """The ``regular`` grid of ``chunk_shape``."""
        return cls(REGULAR, tuple(int(c) for c in chunk_shape))

    @classmethod
    def rectilinear(cls, chunk_shapes: Sequence[int | Sequence[int]]) -> ChunkGridSpec:
        """A ``rectilinear`` grid: per dimension an edge length or explicit edge lengths."""
        return cls(RECTILINEAR, tuple(c if isinstance(c, int) else tuple(c) for c in chunk_shapes))

    @property
    def is_regular_json(self) -> bool:
        """Stored as the core ``regular`` grid."""
        return self.name == REGULAR

    @property
    def nominal_chunk_shape(self) -> Shape:
        """One chunk shape standing for the grid: the chunk shape of a
        ``regular`` or ``zarrs.regular_bounded`` grid; for a ``rectilinear``
        one the largest edge along each dimension (what bounds a chunk's size)."""
        return tuple(c if isinstance(c, int) else max(c) for c in self.chunk_shapes)

    @classmethod
    def from_json(cls, value: Any, shape: Shape) -> ChunkGridSpec:
        """Parse the ``chunk_grid`` member for an array of ``shape``;
        MetadataError naming the field that is wrong."""
        name, config, _ = parse_named(value, "chunk_grid", allow_optional=False)
        name = _ALIASES.get(name, name)
        if name not in NAMES:
            raise MetadataError(f"chunk_grid: unknown chunk grid {name!r}; known: {', '.join(NAMES)}")
        config = dict(config or {})
        if name == RECTILINEAR:
            return _parse_rectilinear(config, shape)
        if "chunk_shape" not in config:
            raise MetadataError(f"chunk_grid: configuration of {name!r} is missing 'chunk_shape'")
        chunk_shape = parse_shape(config.pop("chunk_shape"), "chunk_grid.chunk_shape", positive=True)
        if config:
            raise MetadataError(f"chunk_grid: unknown configuration field(s) {sorted(config)}")
        if len(chunk_shape) != len(shape):
            raise MetadataError(
                f"chunk_grid.chunk_shape: has {len(chunk_shape)} dimensions but shape has {len(shape)}"
            )
        return cls(name, chunk_shape)

    def to_json(self) -> dict[str, Any]:
        """The ``chunk_grid`` member; a ``rectilinear`` dimension's edges
        run-length encoded where that is shorter (as zarr-python writes them)."""
        if self.name != RECTILINEAR:
            return {"name": self.name, "configuration": {"chunk_shape": list(self.chunk_shapes)}}
        shapes: list[Any] = []
        for dim in self.chunk_shapes:
            if isinstance(dim, int):
                shapes.append(dim)
            else:
                runs = run_length_encode(dim)
                shapes.append(runs if len(runs) < len(dim) else list(dim))
        return {"name": RECTILINEAR, "configuration": {"kind": "inline", "chunk_shapes": shapes}}

    def check(self, shape: Shape) -> None:
        """MetadataError unless the grid fits an array of ``shape`` (right
        number of dimensions; explicit edges covering each length)."""
        if len(self.chunk_shapes) != len(shape):
            field = "chunk_grid.configuration.chunk_shapes" if self.name == RECTILINEAR else "chunk_grid.chunk_shape"
            raise MetadataError(f"{field}: has {len(self.chunk_shapes)} dimensions but shape has {len(shape)}")
        for axis, (dim, n) in enumerate(zip(self.chunk_shapes, shape)):
            if isinstance(dim, int):
                if isinstance(dim, bool) or dim < 1:
                    raise MetadataError(f"{self._field(axis)}: expected a positive edge length, got {dim!r}")
                continue
            if not dim or any(isinstance(e, bool) or not isinstance(e, int) or e < 1 for e in dim):
                raise MetadataError(f"{self._field(axis)}: expected positive edge lengths, got {list(dim)!r}")
            if sum(dim) < n:
                raise MetadataError(
                    f"{self._field(axis)}: the edge lengths sum to {sum(dim)}, less than the array's length {n}"
                )
        if sum(len(d) for d in self.chunk_shapes if not isinstance(d, int)) > MAX_EDGES:
            raise MetadataError(
                f"chunk_grid.configuration.chunk_shapes: more than {MAX_EDGES} chunk edges in all; "
                "zarrpy refuses grids that large"
            )

    def _field(self, axis: int) -> str:
        if self.name == RECTILINEAR:
            return f"chunk_grid.configuration.chunk_shapes[{axis}]"
        return "chunk_grid.chunk_shape"

    def bind(self, shape: Shape) -> ChunkGrid:
        """The grid of an array of ``shape`` (checked with :meth:`check` first)."""
        if self.name == REGULAR:
            return ChunkGrid.regular(shape, self.chunk_shapes)  # type: ignore[arg-type]
        if self.name == REGULAR_BOUNDED:
            return ChunkGrid([BoundedDimension(c, s) for c, s in zip(self.chunk_shapes, shape)],  # type: ignore[arg-type]
                             REGULAR_BOUNDED)
        return ChunkGrid([FixedDimension(c, s) if isinstance(c, int) else VaryingDimension(c, s)
                          for c, s in zip(self.chunk_shapes, shape)], RECTILINEAR)

    def resized(self, shape: Shape) -> ChunkGridSpec:
        """The grid of the array resized to ``shape``, as zarr-python resizes
        one: a dimension of explicit edges that the new length exceeds gains
        one edge of the difference; shrinking keeps every edge; edge lengths
        given as one integer cover any length. (zarrs refuses a shape past the
        edges instead: the caller must give it a new grid.)"""
        if self.name != RECTILINEAR:
            return self
        out: list[DimSpec] = []
        for dim, n in zip(self.chunk_shapes, shape):
            if isinstance(dim, int) or n <= sum(dim):
                out.append(dim)
            else:
                out.append((*dim, n - sum(dim)))
        return ChunkGridSpec(RECTILINEAR, tuple(out))


def _parse_rectilinear(config: dict[str, Any], shape: Shape) -> ChunkGridSpec:
    kind = config.pop("kind", None)
    if kind != "inline":
        raise MetadataError(
            f"chunk_grid.configuration.kind: expected 'inline' (the one kind the rectilinear grid defines), got {kind!r}"
        )
    if "chunk_shapes" not in config:
        raise MetadataError("chunk_grid: configuration of 'rectilinear' is missing 'chunk_shapes'")
    raw = config.pop("chunk_shapes")
    if config:
        raise MetadataError(f"chunk_grid: unknown configuration field(s) {sorted(config)}")
    if not isinstance(raw, list):
        raise MetadataError(f"chunk_grid.configuration.chunk_shapes: expected a list, one entry per dimension, got {raw!r}")
    dims: list[DimSpec] = []
    budget = MAX_EDGES
    for axis, item in enumerate(raw):
        field = f"chunk_grid.configuration.chunk_shapes[{axis}]"
        if isinstance(item, list):
            edges = expand_run_lengths(item, field, budget)
            budget -= len(edges)
            dims.append(edges)
        elif isinstance(item, int) and not isinstance(item, bool) and item >= 1:
            dims.append(item)
        else:
            raise MetadataError(f"{field}: expected a positive edge length or a list of them, got {item!r}")
    spec = ChunkGridSpec(RECTILINEAR, tuple(dims))
    spec.check(shape)
    return spec


def expand_run_lengths(items: list[Any], field: str, budget: int = MAX_EDGES) -> tuple[int, ...]:
    """The edge lengths of one dimension of a ``rectilinear`` grid: each item
    an edge length, or ``[value, count]`` for ``count`` edges of ``value``
    (both positive). MetadataError naming ``field`` otherwise, or when the
    edges would number more than ``budget``."""
    if not items:
        raise MetadataError(f"{field}: expected at least one edge length, got []")
    out: list[int] = []
    for i, item in enumerate(items):
        if isinstance(item, list):
            ok = len(item) == 2 and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in item)
            if not ok:
                raise MetadataError(f"{field}[{i}]: a run must be [edge length, count], both positive, got {item!r}")
            value, count = item
        elif isinstance(item, int) and not isinstance(item, bool) and item >= 1:
            value, count = item, 1
        else:
            raise MetadataError(f"{field}[{i}]: expected a positive edge length or [edge length, count], got {item!r}")
        if len(out) + count > budget:
            raise MetadataError(f"{field}: more than {MAX_EDGES} chunk edges in all; zarrpy refuses grids that large")
        out.extend([value] * count)
    return tuple(out)


def run_length_encode(edges: Sequence[int]) -> list[Any]:
    """``edges`` with each run of two or more equal lengths as ``[value, count]``
    (zarr-python's form: ``[10, 10, 10, 5]`` is ``[[10, 3], 5]``)."""
    out: list[Any] = []
    i = 0
    while i < len(edges):
        j = i
        while j + 1 < len(edges) and edges[j + 1] == edges[i]:
            j += 1
        out.append([edges[i], j - i + 1] if j > i else edges[i])
        i = j + 1
    return out


__all__ = ["MAX_EDGES", "NAMES", "ChunkGridSpec", "DimSpec", "expand_run_lengths", "run_length_encode"]
