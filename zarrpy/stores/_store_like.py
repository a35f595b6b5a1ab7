"""``StoreLike``: what every ``store=`` argument takes (public as :mod:`zarrpy.typing`)."""

from __future__ import annotations

import os
from typing import TypeAlias

from .abc import Store

StoreLike: TypeAlias = Store | str | os.PathLike[str] | dict[str, bytes]
"""A store, or what :func:`~zarrpy.stores.store_from_url` makes one of: a
local path or ``file://`` URL, an fsspec URL (``s3://...``, ``memory://...``,
``zip::...``), or a dict (an in-memory store over that dict), as zarr-python's
``StoreLike``."""

__all__ = ["StoreLike"]
