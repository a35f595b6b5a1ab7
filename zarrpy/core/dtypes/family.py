"""The data-type plugin interface: :class:`DataTypeFamily`.

A family is one Zarr V3 data type name (with its aliases) and everything that
name means: which numpy dtype a ``data_type`` JSON member stands for, which
numpy dtypes it represents when a user creates an array, and the JSON form of
fill values -- in V3 and, where the type has one, in V2. zarrpy's built-in
types are families on the same registry third-party ones join (entry-point
group ``zarrpy.data_types``, see :mod:`zarrpy.core.dtypes.registry`).

A family is stateless; one instance serves every array. Its methods receive
the :class:`~zarrpy.core.dtypes.DataType` they act on (name and numpy dtype),
so one family can cover a parametrised name (``raw_bytes`` with any
``length_bytes``, ``numpy.datetime64`` with any unit). Methods raise
:class:`~zarrpy.errors.MetadataError`, or ``ValueError``/``TypeError``/
``OverflowError`` from the fill-value methods; :class:`DataType` turns them
all into MetadataErrors prefixed ``data_type:`` / ``fill_value:`` and the
type's name, so messages only need to say what is wrong.

A minimal plugin (a fixed-size type with a numpy dtype of its own)::

    class Uint24(DataTypeFamily):
        names = ("example.uint24",)

        def dtype_from_json(self, name, configuration):
            self.no_configuration(name, configuration)
            return np.dtype("V3")

        def fill_from_json(self, data_type, value):
            return int(value).to_bytes(3, "little")

        def fill_to_json(self, data_type, value):
            return int.from_bytes(bytes(value), "little")
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ...errors import MetadataError
from .._typing import JSON

if TYPE_CHECKING:
    from .data_type import DataType


class DataTypeFamily(ABC):
    """One Zarr data type name (and aliases): JSON <-> numpy dtype, and fill-value JSON.

    Subclasses set :attr:`names` and implement :meth:`dtype_from_json`,
    :meth:`fill_from_json` and :meth:`fill_to_json`; everything else has a
    default that fits a fixed-size type without configuration.
    """

    names: ClassVar[tuple[str, ...]] = ()
    """V3 ``data_type`` names this family reads. ``names[0]`` is the one
    written for arrays created from a numpy dtype; a name read from a stored
    array is kept when its metadata is rewritten."""

    name_pattern: ClassVar[re.Pattern[str] | None] = None
    """Optional: further names this family reads (e.g. ``r<bits>``)."""

    v2_names: ClassVar[tuple[str, ...]] = ()
    """V2 ``dtype`` strings that are not numpy typestrs but mean this type
    (tensorstore writes ``"bfloat16"``); see :meth:`dtype_from_v2`."""

    is_variable: ClassVar[bool] = False
    """True for types whose elements have no fixed size (strings, bytes)."""

    def is_variable_dtype(self, dtype: np.dtype) -> bool:
        """True when elements of ``dtype`` (from :meth:`dtype_from_json`) have
        no fixed size. Default: :attr:`is_variable`; a wrapper type whose
        size depends on its configuration (zarrs' ``optional``) overrides it."""
        return self.is_variable

    # -- names and configuration ---------------------------------------------

    @abstractmethod
    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        """The numpy dtype of ``{"name": name, "configuration": configuration}``.

        ``configuration`` is None when the member was a bare name. Raise
        MetadataError for a configuration this family does not take.
        """

    def dtype_to_json(self, data_type: DataType) -> str | dict[str, Any]:
        """The V3 ``data_type`` member (default: the bare name)."""
        return data_type.name

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        """The V3 name this family gives numpy ``dtype`` in a new array, or None.

        Used by ``create_array(dtype=...)``; families are asked in registry
        order, built-ins first. Default: ``names[0]`` when
        ``dtype_from_json(names[0], None)`` equals ``dtype``.
        """
        if not self.names:
            return None
        try:
            own = self.dtype_from_json(self.names[0], None)
        except MetadataError:
            return None
        return self.names[0] if own == dtype else None

    def dtype_for_numpy(self, name: str, dtype: np.dtype) -> np.dtype:
        """The in-memory dtype of a type made from numpy ``dtype`` (default: ``dtype``)."""
        return dtype

    # -- fill values ----------------------------------------------------------

    @abstractmethod
    def fill_from_json(self, data_type: DataType, value: JSON) -> Any:
        """Decode a V3 ``fill_value`` JSON member into a scalar of the type."""

    @abstractmethod
    def fill_to_json(self, data_type: DataType, value: Any) -> JSON:
        """Encode a fill value (already coerced) as V3 JSON."""

    def default_fill(self, data_type: DataType) -> Any:
        """The fill value when none is given (default: all-zero bytes)."""
        return np.zeros((), dtype=data_type.numpy)[()]

    def coerce_fill(self, data_type: DataType, value: Any) -> Any:
        """A user-given fill value as a scalar of the type; raise on a lossy cast.

        A scalar this method returned must come back unchanged (it is applied
        again before :meth:`fill_to_json`).

        The default casts with numpy and refuses a scalar that does not round
        trip (an integer type given 1.5 or 300 for uint8).
        """
        arr = np.asarray(value)
        if arr.shape != ():
            raise ValueError("expected a scalar")
        with np.errstate(invalid="ignore", over="ignore"):
            out = arr.astype(data_type.numpy)
        if arr.dtype.kind in "iuf" and data_type.numpy.kind in "iub" and out != arr:
            raise ValueError("value is out of range or not integral")
        return out[()]

    # -- V2 -------------------------------------------------------------------

    def dtype_from_v2(self, text: str) -> np.dtype:
        """The numpy dtype of one of :attr:`v2_names` in a ``.zarray``."""
        raise MetadataError(f"{text!r} has no V2 form in this data type")

    def dtype_to_v2(self, data_type: DataType) -> str | list[Any] | None:
        """The V2 ``dtype`` member, or None when only the numpy typestr applies (default)."""
        return None

    def fill_from_v2(self, data_type: DataType, value: JSON) -> Any:
        """Decode a non-null V2 ``fill_value`` of a type with its own V2 name
        (default: as :meth:`fill_from_json`)."""
        return self.fill_from_json(data_type, value)

    def fill_to_v2(self, data_type: DataType, value: Any) -> JSON:
        """Encode a fill value (already coerced) as V2 JSON (default: as :meth:`fill_to_json`)."""
        return self.fill_to_json(data_type, value)

    # -- stored element bytes (the ``bytes`` codec) ---------------------------

    def endian_lane(self, data_type: DataType) -> int | None:
        """For a type numpy cannot byte-swap itself (ml_dtypes' ``bfloat16``,
        ``complex32``...): the bytes per unit the ``bytes`` codec swaps for a
        non-native ``endian`` (1: nothing to swap; over 1: ``endian`` is
        required). None (default): numpy's own byte-order rules apply."""
        return None

    def encode_elements(self, data_type: DataType, array: np.ndarray) -> np.ndarray:
        """The elements the ``bytes`` codec stores, native byte order (only
        asked when :meth:`endian_lane` is not None; default: as they are).
        ``int4`` sign-extends to the whole byte here, as zarrs writes it."""
        return array

    def decode_elements(self, data_type: DataType, array: np.ndarray) -> np.ndarray:
        """The in-memory elements from stored ones, native byte order (only
        asked when :meth:`endian_lane` is not None; default: as they are).
        Sub-byte types keep only their low bits here."""
        return array

    # -- helpers for subclasses -------------------------------------------

    @staticmethod
    def no_configuration(name: str, configuration: dict[str, Any] | None) -> None:
        """Refuse a non-empty configuration for a type that takes none."""
        if configuration not in (None, {}):
            raise MetadataError(
                f"data type {name!r} with configuration {configuration!r} is not supported "
                f"({name!r} takes no configuration)"
            )


__all__ = ["DataTypeFamily"]
