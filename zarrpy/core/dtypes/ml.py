"""Extension data types with numpy dtypes from ``ml_dtypes``.

Names as the zarr-extensions registry, tensorstore and zarrs write them:

======================== ================================ ===================
V3 name                  numpy dtype                      V2 (tensorstore)
======================== ================================ ===================
``bfloat16``             ``ml_dtypes.bfloat16``           ``"bfloat16"``
``float8_e4m3fn`` ...    ``ml_dtypes.float8_e4m3fn`` ...  the same name [1]_
``float6_e2m3fn``,       ``ml_dtypes.float6_*``,          none
``float6_e3m2fn``,       ``ml_dtypes.float8_e4m3``
``float8_e4m3``
``float4_e2m1fn``        ``ml_dtypes.float4_e2m1fn``      ``"float4_e2m1fn"``
``int2``, ``int4``       ``ml_dtypes.int2``, ``int4``     the same name
``uint2``, ``uint4``     ``ml_dtypes.uint2``, ``uint4``   none
``complex_float16``      ``ml_dtypes.complex32`` [2]_     none
``complex_bfloat16``     ``ml_dtypes.bcomplex32`` [2]_    none
``complex_float32``/64   numpy ``complex64``/``128`` [3]_ none
``complex_<float8...>``  struct ``(real, imag)`` of the   none
                         ml_dtypes lane type [4]_
======================== ================================ ===================

.. [1] ``float8_e3m4``, ``float8_e4m3fn``, ``float8_e4m3fnuz``,
   ``float8_e4m3b11fnuz``, ``float8_e5m2``, ``float8_e5m2fnuz``,
   ``float8_e8m0fnu``: tensorstore's ``zarr`` driver writes them (no byte
   order prefix; bfloat16 is little-endian there).
.. [2] ml_dtypes 0.6 added these (so zarrpy needs ml_dtypes >= 0.6; with an
   older one installed they raise an error naming the version).
.. [3] zarrs' names for numpy's complex types: read, and kept when the
   metadata is rewritten; zarrpy writes ``complex64``/``complex128`` for
   numpy complex arrays.
.. [4] ``complex_float8_e4m3fn`` ... ``complex_float4_e2m1fn`` (zarrs): no
   numpy or ml_dtypes complex type exists, so elements are a numpy struct
   with fields ``real`` and ``imag`` of the lane type; created by name only
   (``create_array(dtype="complex_float8_e5m2")``).

Fill values (measured against tensorstore 0.1.86 and zarrs 0.23):

- V3 ``bfloat16`` and 16-bit complex lanes: a number, ``"NaN"``,
  ``"Infinity"``/``"-Infinity"``, or ``"0x…"`` (4 hex digits) for a NaN with
  a payload -- what tensorstore and zarrs write.
- V3 8-, 6- and 4-bit floats (and their complex lanes): written as ``"0x…"``
  of the bit pattern (2 digits), the one form both tensorstore and zarrs
  (which reads nothing else for these types) read; numbers and the special
  names are read too. A name the type cannot represent (``"Infinity"`` for
  the ``fn``/``fnuz`` types, ``"NaN"`` for float4/float6) is an error.
- Integers: JSON integers.
- V2 (tensorstore): numbers and the special names only (its V2 driver reads
  ``"0x41"`` as a C hex float, 65.0, so zarrpy never writes hex there and
  reads it the same way); ``float4_e2m1fn`` is base64 of its byte, the only
  form tensorstore's V2 driver takes. NaN payloads have no V2 form.

Chunk bytes (``bytes`` codec): one element per byte for the sub-byte types.
``int2``/``int4`` are written sign-extended to the whole byte (``-3`` as
``0xfd``), which is what zarrs writes and what tensorstore writes for the
elements it encodes itself (its fill value); tensorstore and ml_dtypes read
only the low bits, zarrs reads the byte as ``i8``. Unsigned and float
sub-byte types are written with the upper bits clear. On read, only the low
bits are kept, so arrays come back in ml_dtypes' own canonical form whatever
the writer put in the upper bits. ``bfloat16`` and the 16-bit complex lanes
are byte-swapped for ``endian: "big"``, and ``bytes`` requires ``endian``
for them.
"""

from __future__ import annotations

import base64
import importlib
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import MetadataError
from .bits import bit_size
from .family import DataTypeFamily
from .fill_json import float_to_json, parse_float, parse_int

if TYPE_CHECKING:
    from .data_type import DataType

MIN_ML_DTYPES = "0.6"

FLOAT_NAMES: tuple[str, ...] = (
    "bfloat16",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz",
    "float8_e3m4", "float8_e4m3", "float8_e8m0fnu",
    "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
)  # fmt: skip
"""The V3 names of ml_dtypes' small floats (bfloat16, the float8/6/4 kinds),
as the zarr-extensions registry, tensorstore and zarrs write them."""
INT_NAMES: tuple[str, ...] = ("int2", "int4", "uint2", "uint4")
"""The V3 names of ml_dtypes' sub-byte integers."""

# The V2 dtype names tensorstore's "zarr" driver accepts (0.1.86).
V2_FLOAT_NAMES: tuple[str, ...] = (
    "bfloat16", "float8_e3m4", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
)  # fmt: skip
V2_INT_NAMES: tuple[str, ...] = ("int2", "int4")

# complex_<lane> -> the ml_dtypes complex type and the version that added it.
_ML_COMPLEX = {"float16": "complex32", "bfloat16": "bcomplex32"}
_NUMPY_COMPLEX = {"float32": "complex64", "float64": "complex128"}
COMPLEX_NAMES: tuple[str, ...] = tuple(
    f"complex_{lane}" for lane in ("float16", "bfloat16", "float32", "float64", *FLOAT_NAMES[1:])
)
"""The V3 names ``complex_<lane>`` of complex types (zarrs' names): lanes of
float16, bfloat16, float32, float64 and each float8/6/4 kind (see the table above)."""

_SIGNED_SUB_BYTE = {"int2", "int4"}

# Types without infinities / without NaN (the constants are refused for them).
_NO_INF = {
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e8m0fnu",
    "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
}  # fmt: skip
_NO_NAN = {"float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"}


def ml_dtype(name: str, data_type_name: str | None = None) -> np.dtype:
    """The numpy dtype of ``ml_dtypes.<name>``.

    Raises MetadataError naming the data type and the ml_dtypes version it
    needs when ml_dtypes is missing or too old.
    """
    what = data_type_name or name
    try:
        module = importlib.import_module("ml_dtypes")
    except ImportError:
        raise MetadataError(
            f"data type {what!r} needs the ml_dtypes package (>= {MIN_ML_DTYPES}); "
            "install it with `pip install ml_dtypes`"
        ) from None
    found = getattr(module, name, None)
    if found is None:
        version = getattr(module, "__version__", "unknown")
        raise MetadataError(
            f"data type {what!r} needs ml_dtypes >= {MIN_ML_DTYPES} "
            f"(ml_dtypes.{name}); ml_dtypes {version} is installed"
        )
    dtype: np.dtype = np.dtype(found)
    return dtype


def _is_plugin_dtype(dtype: np.dtype) -> bool:
    """True for a dtype numpy does not define itself (ml_dtypes' are ``numpy.dtype[bfloat16]``)."""
    return type(dtype).__module__ != "numpy.dtypes" and dtype.fields is None


# -- bit helpers (bytes codec hooks) -----------------------------------------


def _lane_bits(name: str) -> int:
    """Information bits of one lane of ``name`` (a real type name)."""
    if name in ("bfloat16", "float16"):
        return 16
    if name in INT_NAMES:
        return int(name[-1])
    if name.startswith("float"):
        return int(name[5])  # float8_* / float6_* / float4_*
    raise ValueError(name)  # pragma: no cover


def _canonical_bytes(array: np.ndarray, bits: int) -> np.ndarray:
    """``array`` with only the low ``bits`` bits of every byte kept (one lane per byte)."""
    raw = np.ascontiguousarray(array)
    u8 = raw.reshape(-1).view(np.uint8)
    mask = np.uint8((1 << bits) - 1)
    if not np.any(u8 & ~mask):
        return raw
    return (u8 & mask).view(raw.dtype).reshape(raw.shape)


def _sign_extended(array: np.ndarray, bits: int) -> np.ndarray:
    """``array`` (one signed ``bits``-bit lane per byte) with each byte sign-extended."""
    raw = np.ascontiguousarray(array)
    u8 = raw.reshape(-1).view(np.uint8)
    mask = (1 << bits) - 1
    low = u8 & np.uint8(mask)
    negative = (low >> np.uint8(bits - 1)) & np.uint8(1)
    out = low | (negative * np.uint8(0xFF ^ mask))
    return out.view(raw.dtype).reshape(raw.shape)


# -- fill-value helpers ---------------------------------------------------------


def _check_special(name: str, value: Any) -> None:
    if value in ("Infinity", "-Infinity") and name in _NO_INF:
        raise ValueError(f"{name} has no infinity")
    if value == "NaN" and name in _NO_NAN:
        raise ValueError(f"{name} has no NaN")


def _lane_from_json(value: Any, lane: np.dtype, name: str) -> Any:
    """A V3 float fill (number, special name or hex) as a scalar of ``lane``."""
    _check_special(name, value)
    if isinstance(value, str) and value.startswith("0x"):
        bits = _lane_bits(name)
        if bits < 8 * lane.itemsize and len(value) == 2 + 2 * lane.itemsize and int(value[2:], 16) >> bits:
            raise ValueError(f"{value!r} has bits above the {bits} bits of {name}")
    return parse_float(value, lane)


def _lane_to_json(value: Any, name: str) -> Any:
    """A float lane scalar as V3 JSON: hex for 8 bits or fewer, else float_to_json."""
    arr = np.asarray(value)
    if arr.dtype.itemsize == 1:
        return "0x" + format(int(arr.view(np.uint8)), "02x")
    return float_to_json(arr)


def _lane_to_json_v2(value: Any) -> Any:
    with np.errstate(invalid="ignore"):  # a signalling NaN: V2 writes it as "NaN" anyway
        f = float(np.asarray(value).astype(np.float64))
    if np.isnan(f):
        return "NaN"
    if np.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


def _lane_from_json_v2(value: Any, lane: np.dtype, name: str) -> Any:
    _check_special(name, value)
    if isinstance(value, str) and value.lower().startswith(("0x", "-0x")):
        value = float.fromhex(value)  # tensorstore's V2 driver reads these as C hex floats
    if isinstance(value, str) and value not in ("NaN", "Infinity", "-Infinity"):
        raise ValueError('expected a number, "NaN", "Infinity" or "-Infinity"')
    return parse_float(value, lane)


def _coerce_float(value: Any, dtype: np.dtype, name: str) -> Any:
    arr = np.asarray(value)
    if arr.shape != ():
        raise ValueError("expected a scalar")
    if arr.dtype == dtype:
        return arr[()]
    if arr.dtype.kind in "iufb":
        f = float(arr.astype(np.float64))
        if np.isnan(f):
            _check_special(name, "NaN")
        elif np.isinf(f):
            _check_special(name, "Infinity")
        return np.array(f, dtype=np.float64).astype(dtype)[()]
    if arr.dtype.kind == "V" and arr.dtype.itemsize == dtype.itemsize and _is_plugin_dtype(arr.dtype):
        return arr.astype(np.float64).astype(dtype)[()]
    if isinstance(value, str):
        return _lane_from_json(value, dtype, name)
    raise TypeError(f"expected a number, got {value!r}")


def _v2_name(data_type: DataType, v2_names: tuple[str, ...]) -> str:
    if data_type.name not in v2_names:
        raise MetadataError(
            f"data type {data_type.name!r} has no Zarr V2 form (tensorstore's V2 names: "
            f"{', '.join(V2_FLOAT_NAMES + V2_INT_NAMES)}); use zarr_format=3"
        )
    return data_type.name


# -- families -----------------------------------------------------------------


class _NamedAsMlDtypes(DataTypeFamily):
    """Types whose V3 name is the ml_dtypes name of their numpy dtype."""

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        self.no_configuration(name, configuration)
        return ml_dtype(name)

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        if not _is_plugin_dtype(dtype) or dtype.name not in self.names:
            return None
        return dtype.name if dtype == ml_dtype(dtype.name) else None

    def dtype_from_v2(self, text: str) -> np.dtype:
        return ml_dtype(text)


class MlFloats(_NamedAsMlDtypes):
    """``bfloat16`` and the float8 / float6 / float4 types of ml_dtypes."""

    names = FLOAT_NAMES
    v2_names = V2_FLOAT_NAMES

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        return _lane_from_json(value, data_type.numpy, data_type.name)

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        return _lane_to_json(value, data_type.name)

    def coerce_fill(self, data_type: DataType, value: Any) -> Any:
        return _coerce_float(value, data_type.numpy, data_type.name)

    def dtype_to_v2(self, data_type: DataType) -> str | list[Any] | None:
        return _v2_name(data_type, V2_FLOAT_NAMES)

    def fill_from_v2(self, data_type: DataType, value: Any) -> Any:
        if data_type.name == "float4_e2m1fn" and isinstance(value, str) and value not in ("NaN",):
            raw = base64.b64decode(value, validate=True)
            if len(raw) != 1 or raw[0] >> 4:
                raise ValueError("expected base64 of one byte with a value 0..15")
            return np.frombuffer(raw, dtype=data_type.numpy)[0]
        return _lane_from_json_v2(value, data_type.numpy, data_type.name)

    def fill_to_v2(self, data_type: DataType, value: Any) -> Any:
        if data_type.name == "float4_e2m1fn":
            return base64.b64encode(np.asarray(value).tobytes()).decode("ascii")
        return _lane_to_json_v2(value)

    def endian_lane(self, data_type: DataType) -> int | None:
        return data_type.numpy.itemsize

    def decode_elements(self, data_type: DataType, array: np.ndarray) -> np.ndarray:
        bits = bit_size(data_type.numpy)
        return _canonical_bytes(array, bits) if bits < 8 else array

    def encode_elements(self, data_type: DataType, array: np.ndarray) -> np.ndarray:
        return self.decode_elements(data_type, array)


class MlInts(_NamedAsMlDtypes):
    """``int2``, ``int4``, ``uint2``, ``uint4`` (one element per byte)."""

    names = INT_NAMES
    v2_names = V2_INT_NAMES

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        return np.array(parse_int(value, data_type.numpy)).astype(data_type.numpy)[()]

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        return int(np.asarray(value).astype(np.int64))

    def coerce_fill(self, data_type: DataType, value: Any) -> Any:
        arr = np.asarray(value)
        if arr.shape != ():
            raise ValueError("expected a scalar")
        if arr.dtype == data_type.numpy:
            return arr[()]
        if arr.dtype.kind in "iu" or (_is_plugin_dtype(arr.dtype) and arr.dtype.name in INT_NAMES):
            as_int = int(arr.astype(np.int64))
        elif arr.dtype.kind in "fb":
            item = float(arr.item())
            if not item.is_integer():
                raise ValueError("value is not integral")
            as_int = int(item)
        else:
            raise TypeError(f"expected an integer, got {value!r}")
        return np.array(parse_int(as_int, data_type.numpy)).astype(data_type.numpy)[()]

    def dtype_to_v2(self, data_type: DataType) -> str | list[Any] | None:
        return _v2_name(data_type, V2_INT_NAMES)

    def endian_lane(self, data_type: DataType) -> int | None:
        return 1

    def decode_elements(self, data_type: DataType, array: np.ndarray) -> np.ndarray:
        return _canonical_bytes(array, bit_size(data_type.numpy))

    def encode_elements(self, data_type: DataType, array: np.ndarray) -> np.ndarray:
        bits = bit_size(data_type.numpy)
        if data_type.name in _SIGNED_SUB_BYTE:
            return _sign_extended(array, bits)
        return _canonical_bytes(array, bits)


class ComplexFloats(DataTypeFamily):
    """zarrs' ``complex_<float type>`` names: two lanes (real, imaginary) per element."""

    names = COMPLEX_NAMES

    @staticmethod
    def _lane_name(name: str) -> str:
        return name[len("complex_"):]

    def dtype_from_json(self, name: str, configuration: dict[str, Any] | None) -> np.dtype:
        self.no_configuration(name, configuration)
        lane = self._lane_name(name)
        if lane in _NUMPY_COMPLEX:
            return np.dtype(_NUMPY_COMPLEX[lane])
        if lane in _ML_COMPLEX:
            return ml_dtype(_ML_COMPLEX[lane], name)
        part = ml_dtype(lane, name)
        return np.dtype([("real", part), ("imag", part)])

    def name_for_numpy(self, dtype: np.dtype) -> str | None:
        # numpy complex64/128 are complex64/complex128 (CoreNumbers); the
        # struct form of complex_float8_* is created by name only.
        if not _is_plugin_dtype(dtype) or dtype.name not in ("complex32", "bcomplex32"):
            return None
        name = "complex_float16" if dtype.name == "complex32" else "complex_bfloat16"
        return name if dtype == self.dtype_from_json(name, None) else None

    def _part(self, data_type: DataType) -> np.dtype:
        lane = self._lane_name(data_type.name)
        if lane in _NUMPY_COMPLEX:
            return np.dtype(lane)
        if lane == "float16":
            return np.dtype(np.float16)
        return ml_dtype(lane, data_type.name)

    def fill_from_json(self, data_type: DataType, value: Any) -> Any:
        if not isinstance(value, list) or len(value) != 2:
            raise ValueError("expected [real, imag]")
        part = self._part(data_type)
        lane = self._lane_name(data_type.name)
        out = np.zeros(2, dtype=part)
        out[0], out[1] = (_lane_from_json(v, part, lane) for v in value)
        return out.view(data_type.numpy)[0]

    def fill_to_json(self, data_type: DataType, value: Any) -> Any:
        part = self._part(data_type)
        lane = self._lane_name(data_type.name)
        re, im = np.asarray(value).reshape(1).view(part)
        return [_lane_to_json(re, lane), _lane_to_json(im, lane)]

    def coerce_fill(self, data_type: DataType, value: Any) -> Any:
        dt = data_type.numpy
        part = self._part(data_type)
        lane = self._lane_name(data_type.name)
        if isinstance(value, (bytes, bytearray)) and len(value) == dt.itemsize:
            return np.frombuffer(bytes(value), dtype=dt)[0]
        arr = np.asarray(value)
        if arr.dtype == dt and arr.shape == ():
            return arr[()]
        if isinstance(value, (list, tuple)) and len(value) == 2:
            re, im = value
        elif arr.shape == () and arr.dtype.kind in "iufbc":
            re, im = arr.real[()], arr.imag[()]
        elif arr.shape == () and _is_plugin_dtype(arr.dtype) and arr.dtype.kind == "W":
            c = arr.astype(np.complex64)
            re, im = c.real[()], c.imag[()]
        else:
            raise TypeError(f"expected a complex number or [real, imag], got {value!r}")
        out = np.zeros(2, dtype=part)
        out[0], out[1] = (_coerce_float(v, part, lane) for v in (re, im))
        return out.view(dt)[0]

    def dtype_to_v2(self, data_type: DataType) -> str | list[Any] | None:
        if self._lane_name(data_type.name) in _NUMPY_COMPLEX:
            return None  # numpy's '<c8' / '<c16'
        return _v2_name(data_type, ())

    def endian_lane(self, data_type: DataType) -> int | None:
        if self._lane_name(data_type.name) in _NUMPY_COMPLEX:
            return None  # numpy complex64/128: numpy's byte order rules
        return self._part(data_type).itemsize

    def decode_elements(self, data_type: DataType, array: np.ndarray) -> np.ndarray:
        lane = self._lane_name(data_type.name)
        if lane in _NUMPY_COMPLEX or lane in _ML_COMPLEX:
            return array
        bits = _lane_bits(lane)
        return _canonical_bytes(array, bits) if bits < 8 else array

    def encode_elements(self, data_type: DataType, array: np.ndarray) -> np.ndarray:
        return self.decode_elements(data_type, array)


__all__ = [
    "COMPLEX_NAMES",
    "ComplexFloats",
    "FLOAT_NAMES",
    "INT_NAMES",
    "MlFloats",
    "MlInts",
    "ml_dtype",
]
