"""Lazy arrays over stored arrays and groups: :func:`virtual` (issue 12).

The root's closure is a :class:`StoredClosure`, which reads the array. A
chain over it pushes its leading row selections down to the store read,
composed into one set of rows: ``virtual(a)[mask]`` materialises as
``a.oindex[mask]``, ``virtual(a)[10:50][mask]`` as ``a.oindex[rows]`` with
the 10:50 rows the mask keeps, so only the chunks holding selected rows are
read; later steps (a field, a new axis) apply in memory to that result. Decoded chunks are cached by the array itself
(``open_array(..., cache=c)``), so nothing is cached at the VirtualArray level.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from ._array import Array
from ._group import Group
from ._lazy import VirtualArray
from ._lazy_step import is_int
from ._lazy_table import VirtualTable
from ._open import open_array, open_group

if TYPE_CHECKING:
    from ._cache import Cache


class StoredClosure:
    """Reads a stored :class:`~zarrpy.Array`: all of it when called, some
    rows (:meth:`read_rows`) or one materialising key (:meth:`read_item`)
    at the store. Pickles as the array does (by store and path)."""

    __slots__ = ("array",)

    def __init__(self, array: Array):
        self.array = array

    def __call__(self) -> Any:
        return self.array[...]

    def read_rows(self, rows: slice | np.ndarray) -> Any:
        """Rows ``rows`` (a slice with a positive step, or an index array in
        any order, repeats allowed) of the array, reading only the chunks that
        hold them."""
        a = self.array
        rest = (slice(None),) * (a.ndim - 1)
        if isinstance(rows, slice):
            return a[(rows, *rest)]
        selection: tuple[np.ndarray | slice, ...] = (rows, *rest)
        return a.get_orthogonal_selection(selection)

    def read_item(self, key: Any) -> tuple[bool, Any]:
        """``(True, a[key])`` when ``key`` is made of integers, slices and
        ``...`` (the store reads only what it touches), else ``(False, None)``."""
        items = key if isinstance(key, tuple) else (key,)
        if all(item is Ellipsis or isinstance(item, slice) or is_int(item) for item in items):
            return True, self.array[key]
        return False, None

    def __reduce__(self) -> tuple[Any, ...]:
        return (StoredClosure, (self.array,))

    def __repr__(self) -> str:
        return f"StoredClosure({self.array!r})"


def stored_key(array: Array) -> str:
    """The persistent key of a stored array: its store's URL and its path.

    A store without a URL is named by its :attr:`~zarrpy.stores.abc.Store.identity`
    (a MemoryStore: its backing dict's id), which holds only within this
    process while the store lives.
    """
    store = array.store
    url = store.url
    base = url.rstrip("/") if url is not None else f"<{type(store).__name__} {store.identity!r}>"
    return f"{base}/{array.path}" if array.path else base


def virtual(node: Array | Group, *, cache: Cache | None = None) -> VirtualArray | VirtualTable:
    """A lazy view of a stored array (a :class:`VirtualArray`) or group (a
    :class:`VirtualTable` of its arrays).

    Nothing is read here beyond metadata. Reading the result later reads
    only the chunks the selections need. ``cache`` (a
    :class:`zarrpy.cache.Cache`): when ``node`` was opened without it,
    ``node`` is reopened read-only through it, so every chunk read is kept
    there; ``cache.clear()`` frees it all.

    A group's table has every array member of at least one dimension, in
    name order. Raises SelectionError naming the arrays and their lengths
    when those differ along the first axis; TypeError for anything that is
    not an Array or Group.
    """
    if isinstance(node, Array):
        return _virtual_array(_with_cache(node, cache))
    if isinstance(node, Group):
        group = node
        if cache is not None and getattr(group, "cache", None) is not cache:
            group = open_group(group.store, path=group.path, mode="r", cache=cache)
        return VirtualTable({name: _virtual_array(a) for name, a in group.arrays() if a.ndim})
    raise TypeError(f"virtual() takes a zarrpy.Array or zarrpy.Group, got {type(node).__name__}")


def _with_cache(array: Array, cache: Cache | None) -> Array:
    if cache is None or getattr(array, "cache", None) is cache:
        return array
    return open_array(array.store, path=array.path, mode="r", cache=cache)


def _virtual_array(array: Array) -> VirtualArray:
    key: Hashable = stored_key(array)
    return VirtualArray(StoredClosure(array), array.shape, array.dtype, persistent_key=key)


__all__ = ["StoredClosure", "stored_key", "virtual"]
