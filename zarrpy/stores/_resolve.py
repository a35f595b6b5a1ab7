"""``store_from_url``: what a user passes as ``store`` turned into a :class:`Store`
(the table is in :mod:`zarrpy.stores`' docstring)."""

from __future__ import annotations

import os
import zipfile
from typing import Any, Mapping
from urllib.parse import urlsplit
from urllib.request import url2pathname

from fsspec.mapping import FSMap

from ._confine import real_dir
from ._store_like import StoreLike
from .abc import Store
from .fsspec import FsspecStore
from .local import LocalStore
from .memory import MemoryStore
from .obstore import ObjectStore, is_obstore_store
from .zarr_python import ZarrPythonStore, is_zarr_python_store
from .zip import ZipStore


def _file_url_to_path(url: str) -> str:
    parts = urlsplit(url)
    if parts.query or parts.fragment:
        raise ValueError(f"unsupported file URL {url!r}: no query or fragment allowed")
    if parts.netloc in ("", "localhost"):
        return url2pathname(parts.path)
    # "file://data/x.zarr": fsspec reads this as the relative path data/x.zarr.
    return url2pathname(parts.netloc + parts.path)


def _no_archive_yet(path: str) -> bool:
    """Nothing at ``path`` that writing a new archive would lose: no file, an
    empty file, or a zip archive without members (what an earlier failed
    create left behind)."""
    if not os.path.exists(path):
        return True
    if not os.path.isfile(path):
        return False
    if os.path.getsize(path) == 0:
        return True
    try:
        with zipfile.ZipFile(path) as zf:
            return not zf.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def store_from_url(
    store_like: StoreLike,
    *,
    storage_options: Mapping[str, Any] | None = None,
    read_only: bool = False,
    mode: str | None = None,
) -> Store:
    """Return a :class:`Store` for ``store_like`` (see the module docstring).

    ``storage_options`` go to fsspec and only make sense with an fsspec URL;
    given with a local path they raise ``TypeError`` (so a typo'd URL does
    not silently become a local directory). A ``file://`` URL *with*
    ``storage_options`` goes to fsspec's local filesystem. A chained URL
    (``zip::file:///a.zip``, ``simplecache::s3://…``) reaches fsspec untouched.
    A path to an existing zip file opens a read-only :class:`ZipStore`.
    A path ending in ``.zip`` opened to write (``mode`` ``"w"``, ``"w-"``
    or ``"a"``, the caller's open mode) where no archive with members exists
    yet creates a zip archive there (:class:`ZipStore`), closed when the
    store is garbage collected, at exit, or by ``store.close()``.
    A Store passed in is returned as is, whatever ``read_only`` says; an
    ``fsspec.FSMap``, a zarr-python store or an obstore store is wrapped
    (and takes ``read_only``).
    """
    if isinstance(store_like, Store):
        return store_like
    if isinstance(store_like, dict):
        if storage_options:
            raise TypeError("storage_options are only used with fsspec URLs, not with a dict")
        return MemoryStore(store_like, read_only=read_only)
    if isinstance(store_like, FSMap) or is_zarr_python_store(store_like) or is_obstore_store(store_like):
        if storage_options:
            raise TypeError(
                f"storage_options are only used with fsspec URLs, not with a {type(store_like).__name__} "
                "(it is configured already)"
            )
        if isinstance(store_like, FSMap):
            return FsspecStore(store_like.fs, store_like.root, read_only=read_only)
        if is_zarr_python_store(store_like):
            return ZarrPythonStore(store_like, read_only=read_only)
        return ObjectStore(store_like, read_only=read_only)
    if isinstance(store_like, os.PathLike):
        store_like = os.fspath(store_like)
    if not isinstance(store_like, str):
        raise TypeError(f"cannot make a store from {type(store_like).__name__} {store_like!r}")
    url = store_like
    is_url = "://" in url or "::" in url
    if not is_url or (url.startswith("file://") and not storage_options):
        if storage_options:
            raise TypeError(
                f"storage_options were given but {url!r} is a local path; "
                "they are only used with fsspec URLs"
            )
        path = _file_url_to_path(url) if url.startswith("file://") else url
        real = real_dir(os.path.abspath(path))
        if real is not None:  # an existing directory (resolved): no zip file to look for
            return LocalStore._at_real(path, real, read_only)
        if not read_only and mode in ("w", "w-", "a") and path.lower().endswith(".zip") and _no_archive_yet(path):
            return ZipStore(path, mode="w")
        if os.path.isfile(path) and zipfile.is_zipfile(path):
            return ZipStore(path, mode="r")
        return LocalStore(path, read_only=read_only)
    return FsspecStore.from_url(url, storage_options=dict(storage_options or {}), read_only=read_only)


__all__ = ["store_from_url"]
