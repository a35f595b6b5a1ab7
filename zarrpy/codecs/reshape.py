"""reshape array-to-array codec (zarr-extensions; zarrs writes it).

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/reshape
V3 name: ``reshape``; no V2 form (numcodecs has no such codec).

The encoded chunk holds the same elements in the same C order under another
shape. Each entry of ``shape`` gives one encoded dimension: a positive size,
a list of decoded dimensions whose sizes multiply into it (an empty list is a
new dimension of size 1, the empty product), or ``-1`` (at most once) for whatever makes the element counts equal. The flattened lists of
decoded dimensions must be strictly increasing (a reshape never transposes),
and a list must line up with the dimensions around it (the spec's two
product rules), which is checked when the codec is bound to a chunk.

Partial reads decode the whole chunk: a box of the decoded chunk is not a box
of the encoded one once dimensions merge or split.

>>> ReshapeCodec.from_config({"shape": [[0, 1], -1, [3], 10]}).to_config()
{'shape': [[0, 1], -1, [3], 10]}
>>> ReshapeCodec.from_config({"shape": [[0, 1], [2]]}).resolve_shape((2, 3, 4))
(6, 4)
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from ..core._typing import Shape
from ..core.array_bytes import ArrayBytes
from ..errors import CodecError
from ._config import check_keys
from .abc import ArrayToArrayCodec, ChunkSpec

_NAME = "reshape"
_AUTO = -1

ReshapeDim = int | tuple[int, ...]
"""A positive size, ``-1`` (automatic), or a tuple of decoded dimensions."""


class ShapeOnlyCodec(ArrayToArrayCodec):
    """An array-to-array codec that only changes a chunk's shape (C order and
    elements kept): subclasses give :meth:`resolve_shape`."""

    __slots__ = ()

    def resolve_shape(self, decoded: Shape) -> tuple[int, ...]:
        """The encoded shape for a decoded chunk of shape ``decoded``."""
        raise NotImplementedError

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        return ChunkSpec(self.resolve_shape(spec.shape), spec.dtype, spec.fill_value)

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        return chunk.reshape(self.resolve_shape(spec.shape))

    def decode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        return chunk.reshape(spec.shape)


class ReshapeCodec(ShapeOnlyCodec):
    """Reshape a chunk (C order kept): encoded shape from ``shape``."""

    name = _NAME
    __slots__ = ("shape",)

    def __init__(self, shape: Sequence[Any]):
        self.shape: tuple[ReshapeDim, ...] = _parse_shape(shape)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> ReshapeCodec:
        config = check_keys(_NAME, config, required=("shape",))
        return cls(config["shape"])

    def to_config(self) -> dict[str, Any]:
        return {"shape": [list(d) if isinstance(d, tuple) else d for d in self.shape]}

    def resolve_shape(self, decoded: Shape) -> tuple[int, ...]:
        """The encoded shape for a decoded chunk of shape ``decoded``.

        Raises CodecError (naming ``shape``) when a listed dimension does not
        exist, the element counts cannot match, or a list of dimensions does
        not line up with the sizes around it.
        """
        ndim = len(decoded)
        out: list[int | None] = []
        for dim in self.shape:
            if isinstance(dim, tuple):
                if dim and dim[-1] >= ndim:
                    raise CodecError(
                        f"codec 'reshape': 'shape' names dimension {dim[-1]} of a {ndim}-d chunk {tuple(decoded)}"
                    )
                out.append(math.prod(decoded[d] for d in dim))
            else:
                out.append(None if dim == _AUTO else dim)
        total = math.prod(decoded)
        known = math.prod(s for s in out if s is not None)
        if None in out:
            auto = total // known if known else 0
            out[out.index(None)] = auto
        encoded = tuple(int(s) for s in out if s is not None)
        if math.prod(encoded) != total:
            raise CodecError(
                f"codec 'reshape': 'shape' {self.to_config()['shape']} gives {encoded} for a chunk of shape "
                f"{tuple(decoded)}: the element counts differ"
            )
        self._check_alignment(tuple(decoded), encoded)
        return encoded

    def _check_alignment(self, decoded: tuple[int, ...], encoded: tuple[int, ...]) -> None:
        """The spec's rule for a list entry ``i`` of input dims ``d0..dk``:
        ``prod(B[:i]) == prod(A[:d0])`` and ``prod(B[i+1:]) == prod(A[dk+1:])``."""
        for i, dim in enumerate(self.shape):
            if not (isinstance(dim, tuple) and dim):
                continue
            before, after = math.prod(decoded[: dim[0]]), math.prod(decoded[dim[-1] + 1 :])
            if math.prod(encoded[:i]) != before or math.prod(encoded[i + 1 :]) != after:
                raise CodecError(
                    f"codec 'reshape': 'shape' entry {i} ({list(dim)}) does not line up with the "
                    f"other dimensions for a chunk of shape {decoded} (encoded shape {encoded})"
                )


def _parse_shape(shape: Any) -> tuple[ReshapeDim, ...]:
    """Check the ``shape`` configuration (see the module docstring)."""

    def bad(why: str) -> CodecError:
        return CodecError(f"codec 'reshape': 'shape' {why}, got {shape!r}")

    if not isinstance(shape, (list, tuple)):
        raise bad("must be a list")
    out: list[ReshapeDim] = []
    previous = -1
    for dim in shape:
        if isinstance(dim, (list, tuple)):
            if not all(_is_int(d) and d >= 0 for d in dim):
                raise bad("lists must hold dimension indices (integers >= 0)")
            for d in dim:
                if d <= previous:
                    raise bad("lists of dimensions must be strictly increasing across the whole shape")
                previous = d
            out.append(tuple(int(d) for d in dim))
        elif _is_int(dim) and (dim > 0 or dim == _AUTO):
            out.append(int(dim))
        else:
            raise bad("entries must be positive integers, -1 or lists of dimensions")
    if out.count(_AUTO) > 1:
        raise bad("may hold -1 at most once")
    return tuple(out)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


__all__ = ["ReshapeCodec", "ShapeOnlyCodec"]
