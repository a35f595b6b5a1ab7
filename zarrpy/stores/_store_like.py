"""``StoreLike``: what every ``store=`` argument takes (public as :mod:`zarrpy.typing`)."""

from __future__ import annotations

import os
from collections.abc import Awaitable
from typing import Protocol, TypeAlias

from .abc import Store


class FSMapLike(Protocol):
    """An ``fsspec.FSMap`` (``fsspec.get_mapper(url)``), as zarrpy uses it:
    its filesystem and root (fsspec has no type information to name it by)."""

    @property
    def fs(self) -> object:
        """The fsspec filesystem."""
        ...

    @property
    def root(self) -> str:
        """The mapping's root path on that filesystem."""
        ...


class ZarrPythonStoreLike(Protocol):
    """A zarr-python 3 store (icechunk's too), recognised by what only
    zarr-python's ``Store`` has; zarr is never imported to type it."""

    @property
    def supports_consolidated_metadata(self) -> bool:
        """zarr-python's flag for stores that hold consolidated metadata."""
        ...


class ObstoreStoreLike(Protocol):
    """An ``obstore.store`` object (``S3Store``, ``LocalStore``...), recognised
    by its ``head``/``head_async`` methods; obstore is never imported to type it."""

    def head(self, path: str, /) -> object:
        """The object's metadata."""
        ...

    def head_async(self, path: str, /) -> Awaitable[object]:
        """The object's metadata, asynchronously."""
        ...


StoreLike: TypeAlias = (
    Store | str | os.PathLike[str] | dict[str, bytes] | FSMapLike | ZarrPythonStoreLike | ObstoreStoreLike
)
"""A store, or what :func:`~zarrpy.stores.store_from_url` makes one of: a
local path or ``file://`` URL, an fsspec URL (``s3://...``, ``memory://...``,
``zip::...``), a dict (an in-memory store over that dict), an fsspec
``FSMap``, a zarr-python store or an obstore store (each wrapped), as
zarr-python's ``StoreLike``."""

__all__ = ["FSMapLike", "ObstoreStoreLike", "StoreLike", "ZarrPythonStoreLike"]
