"""The user API: arrays, groups, and the functions that create and open them.

``zarrpy.api`` keeps zarr-python's module of the same name: ``open``,
``open_array``, ``open_group``, ``create_array``, ``create_group``.
"""

from ._open import create_array, create_group, open, open_array, open_group

__all__ = ["create_array", "create_group", "open", "open_array", "open_group"]
