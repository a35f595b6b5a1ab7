"""The one cache of decoded data: :class:`Cache` (a capped, flushable LRU mapping).

Give one to :func:`zarrpy.open_array` / :func:`zarrpy.open_group`
(``cache=``) to keep decoded chunks across reads, shared by every array and
store that uses it; lazy arrays (:mod:`zarrpy.lazy`) materialise into it.
Nothing else holds read data, so ``cache.clear()`` frees it all.
"""

from __future__ import annotations

from .api._cache import Cache

__all__ = ["Cache"]
