"""zarr-python's ``zarr.storage`` names, so code written for zarr-python
changes only its import::

    from zarrpy.storage import LocalStore, MemoryStore, ZipStore, FsspecStore, ObjectStore

Each name is zarrpy's own store class (the one :mod:`zarrpy.stores` exports,
not a wrapper), taking zarr-python's constructor arguments by keyword:
``LocalStore(root, read_only=...)``, ``MemoryStore(store_dict=None, read_only=...)``,
``ZipStore(path, mode="r", read_only=None, compression=..., allowZip64=...)``,
``FsspecStore.from_url(url, storage_options=None, read_only=False)``,
``ObjectStore(store, read_only=...)``. What differs is listed in
the docs' "Coming from zarr-python" page.

>>> from zarrpy.storage import MemoryStore
>>> import zarrpy
>>> zarrpy.create_array(MemoryStore(), shape=(4,), dtype="i1").shape
(4,)
"""

from __future__ import annotations

from .stores import FsspecStore, LocalStore, MemoryStore, ObjectStore, Store, ZipStore
from .stores._store_like import StoreLike

__all__ = ["FsspecStore", "LocalStore", "MemoryStore", "ObjectStore", "Store", "StoreLike", "ZipStore"]


def __dir__() -> list[str]:
    """Tab completion shows zarr-python's store names only."""
    return sorted(__all__)
