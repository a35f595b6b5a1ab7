"""Data-type registry: V3 name -> :class:`DataTypeFamily`.

Built-in families are listed as ``"module:Class"`` strings in :data:`_BUILTIN`
and imported on first use (``ml_dtypes`` only loads when a type needs it).
Third-party families are found through the entry-point group
``zarrpy.data_types`` (entry name = the V3 name, value =
``"pkg.module:FamilyClass"``), loaded on the first lookup that misses or on
the first numpy dtype no built-in claims. :func:`register_data_type` adds one
by hand.

Numpy dtypes given to ``create_array`` are matched by asking each family, in
order, for :meth:`~DataTypeFamily.name_for_numpy`: built-ins first (in the
order below, so ``bfloat16`` is claimed before the raw-bytes family sees its
``V2`` storage), then families registered by hand or by entry points.
"""

from __future__ import annotations

import importlib
import threading
from importlib.metadata import entry_points
from typing import Any

import numpy as np

from ...errors import MetadataError
from .family import DataTypeFamily

ENTRY_POINT_GROUP = "zarrpy.data_types"
"""The entry-point group third-party packages register data type families under."""

# Built-in families, in the order numpy dtypes are matched.
_BUILTIN_FAMILIES: tuple[str, ...] = (
    "zarrpy.core.dtypes.numeric:CoreNumbers",
    "zarrpy.core.dtypes.ml:MlFloats",
    "zarrpy.core.dtypes.ml:MlInts",
    "zarrpy.core.dtypes.ml:ComplexFloats",
    "zarrpy.core.dtypes.text:VariableLength",
    "zarrpy.core.dtypes.text:FixedLengthText",
    "zarrpy.core.dtypes.time:NumpyTime",
    "zarrpy.core.dtypes.struct:StructFamily",
    "zarrpy.core.dtypes.raw:RawBytes",
    "zarrpy.core.dtypes.raw:RawBits",
    "zarrpy.core.dtypes.optional:OptionalFamily",
)

_lock = threading.RLock()
_families: list[DataTypeFamily] = []  # built-ins, then registered ones
_by_name: dict[str, DataTypeFamily] = {}
_by_v2_name: dict[str, DataTypeFamily] = {}
_broken: dict[str, str] = {}  # entry name -> why its plugin failed to load
_builtins_loaded = False
_entry_points_loaded = False


def register_data_type(family: DataTypeFamily | type[DataTypeFamily], *, replace: bool = False) -> DataTypeFamily:
    """Register a data-type family (an instance, or a class made with no arguments).

    Raises MetadataError when one of its names is taken, unless ``replace``.
    Returns the registered instance.
    """
    instance = family() if isinstance(family, type) else family
    if not isinstance(instance, DataTypeFamily):
        raise TypeError(f"{family!r} is not a zarrpy DataTypeFamily")
    if not instance.names and instance.name_pattern is None:
        raise MetadataError(f"data type family {type(instance).__name__} declares no names")
    with _lock:
        _load_builtins()
        _add(instance, replace=replace)
    return instance


def _add(family: DataTypeFamily, *, replace: bool) -> None:
    for name in family.names:
        held = _by_name.get(name)
        if held is not None and held is not family and not replace:
            raise MetadataError(
                f"data type {name!r} is already registered (by {type(held).__name__}); pass replace=True to override"
            )
    for name in family.names:
        _by_name[name] = family
    for name in family.v2_names:
        _by_v2_name.setdefault(name, family)
    if family not in _families:
        _families.append(family)


def family_for_name(name: str) -> DataTypeFamily:
    """The family that reads the V3 name ``name``.

    Raises MetadataError ("unknown data type") naming the known types.
    """
    found = _lookup(name)
    if found is None:
        _load_entry_points()
        found = _lookup(name)
    if found is None and name in _broken:
        raise MetadataError(f"data_type: data type {name!r} comes from a plugin that failed to load: {_broken[name]}")
    if found is None:
        raise MetadataError(
            f"data_type: unknown data type {name!r}; known: {', '.join(known_names())}. "
            f"Third-party data types are found through the entry-point group {ENTRY_POINT_GROUP!r}."
        )
    return found


def knows_name(name: str) -> bool:
    """True if some family reads the V3 name ``name`` (entry points included)."""
    if _lookup(name) is not None:
        return True
    _load_entry_points()
    return _lookup(name) is not None


def _lookup(name: str) -> DataTypeFamily | None:
    _load_builtins()
    found = _by_name.get(name)
    if found is not None:
        return found
    for family in _families:
        if family.name_pattern is not None and family.name_pattern.fullmatch(name):
            return family
    return None


def family_for_numpy(dtype: np.dtype) -> tuple[DataTypeFamily, str] | None:
    """The first family (and its V3 name) that represents numpy ``dtype``, or None."""
    found = _match_numpy(dtype)
    if found is None:
        _load_entry_points()
        found = _match_numpy(dtype)
    return found


def _match_numpy(dtype: np.dtype) -> tuple[DataTypeFamily, str] | None:
    _load_builtins()
    for family in list(_families):
        name = family.name_for_numpy(dtype)
        if name is not None:
            return family, name
    return None


def family_for_v2_name(text: str) -> DataTypeFamily | None:
    """The family that declares the V2 ``dtype`` string ``text`` (not a numpy typestr), or None."""
    _load_builtins()
    found = _by_v2_name.get(text)
    if found is None:
        _load_entry_points()
        found = _by_v2_name.get(text)
    return found


def known_names() -> list[str]:
    """Every registered V3 name (sorted), plus the patterns families read."""
    _load_builtins()
    patterns = [f.name_pattern.pattern for f in _families if f.name_pattern is not None]
    return sorted(_by_name) + patterns


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    with _lock:
        if _builtins_loaded:
            return
        for target in _BUILTIN_FAMILIES:
            module_name, _, attr = target.partition(":")
            cls = getattr(importlib.import_module(module_name), attr)
            _add(cls(), replace=False)
        _builtins_loaded = True


def _load_entry_points() -> None:
    """Register every ``zarrpy.data_types`` entry point once; a plugin that fails
    to load is reported when its name is looked up."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    with _lock:
        if _entry_points_loaded:
            return
        _entry_points_loaded = True
        _load_builtins()
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in _by_name:
                continue  # a built-in or hand-registered family wins
            try:
                loaded: Any = ep.load()
                instance = loaded() if isinstance(loaded, type) else loaded
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not break other types
                _broken[ep.name] = f"{ep.value}: {type(exc).__name__}: {exc}"
                continue
            if not isinstance(instance, DataTypeFamily):
                _broken[ep.name] = f"{ep.value} is not a zarrpy DataTypeFamily"
                continue
            try:
                _add(instance, replace=False)
            except MetadataError as exc:
                _broken[ep.name] = str(exc)


__all__ = ["ENTRY_POINT_GROUP", "family_for_name", "family_for_numpy", "known_names", "register_data_type"]
