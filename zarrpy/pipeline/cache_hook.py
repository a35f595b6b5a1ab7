"""The chunk-I/O layer's cache hook: what it needs of a cache of decoded chunks.

The cache itself (:class:`zarrpy.cache.Cache`) belongs to the API layer; the
pipeline sees this protocol only. Keys are persistent: ``(store, node path,
chunk shape, chunk coordinates)``, so arrays opened twice, or through a
group, share their entries.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, Protocol


class ChunkCache(Protocol):
    """A mapping of decoded chunks that a write can invalidate."""

    def __getitem__(self, key: Hashable) -> Any: ...

    @property
    def version(self) -> int:
        """Changes whenever values are invalidated."""
        ...

    def store_if_current(self, key: Hashable, value: Any, version: int) -> None:
        """Keep ``value`` unless something was invalidated since ``version``."""

    def discard(self, keys: Iterable[Hashable]) -> None:
        """Drop ``keys`` (a write made them stale)."""

    def discard_prefix(self, prefix: tuple[Any, ...]) -> None:
        """Drop every key of one node."""


__all__ = ["ChunkCache"]
