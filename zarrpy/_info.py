"""A printable summary of an array: what ``print(a.info)`` shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._array import Array


@dataclass
class ArrayInfo:
    """A printable summary of an array (``print(a.info)``)."""

    array: Array

    def as_dict(self) -> dict[str, Any]:
        a = self.array
        return {
            "name": a.name,
            "type": "Array",
            "zarr_format": a.zarr_format,
            "data_type": a._v3.data_type.name,
            "shape": a.shape,
            "chunk_shape": a.chunks,
            "fill_value": a._v3.data_type.fill_to_json(a.fill_value),
            "codecs": [c.to_json() for c in a.codecs],
            "read_only": a.read_only,
            "store": type(a.store).__name__,
            "nbytes": a.nbytes,
            "nbytes_stored": a.nbytes_stored(),
            "chunks_initialized": f"{a.nchunks_initialized}/{a.nchunks}",
        }

    def __str__(self) -> str:
        d = self.as_dict()
        width = max(len(k) for k in d)
        return "\n".join(f"{k.ljust(width)} : {v}" for k, v in d.items())


__all__ = ["ArrayInfo"]
