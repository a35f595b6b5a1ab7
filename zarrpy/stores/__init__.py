"""Stores: where chunk and metadata bytes live.

:func:`store_from_url` turns what a user passes as ``store`` (a Store, a path,
a URL) into a :class:`Store`:

===============================================  =====================================
``Store`` instance                               returned as is
``dict``                                         ``MemoryStore(dict)``
``pathlib.Path`` / ``"data/x.zarr"``             ``LocalStore``
``"file:///abs/x.zarr"``                         ``LocalStore``
path or ``file://`` URL of an existing zip file  ``ZipStore(path, mode="r")``
``"memory://x"``, ``"s3://b/x"``, ``"zip::…"``   ``FsspecStore.from_url`` (zip: reads)
``fsspec.FSMap`` (``fsspec.get_mapper(url)``)    ``FsspecStore(map.fs, map.root)``
a zarr-python 3 store (also icechunk's)          ``ZarrPythonStore(store)``
an ``obstore.store`` object (``S3Store`` …)      ``ObjectStore(store)``
===============================================  =====================================

A wrapped FSMap, zarr-python or obstore store takes ``read_only`` as a path
or URL does (a zarr-python store that is read-only itself stays so).
zarr-python and obstore are never imported to recognise their stores: an
object can only be one of them when its package is already imported.

Zip archives: a path is a directory for a ``LocalStore`` (as in zarr-python
3), except that a path naming an existing zip *file* opens it read-only as a
:class:`ZipStore`, since a directory store on a file could never work. To
write a zip archive, pass ``ZipStore(path, mode="w")`` (or ``"a"``) as the
store and ``close()`` it when done; ``zip::`` URLs and a zip file given by path
only read (a write raises :class:`~zarrpy.errors.ReadOnlyError` naming
``ZipStore``).
"""

from __future__ import annotations

from ._resolve import store_from_url
from .abc import Store
from .fsspec import FsspecStore
from .local import LocalStore
from .memory import MemoryStore
from .obstore import ObjectStore
from .zarr_python import ZarrPythonStore
from .zip import ZipStore

__all__ = [
    "FsspecStore", "LocalStore", "MemoryStore", "ObjectStore", "Store", "ZarrPythonStore", "ZipStore",
    "store_from_url",
]


def __dir__() -> list[str]:
    """Tab completion shows the stores, not the modules they live in."""
    return sorted(__all__)
