#!/usr/bin/env python3
"""Regenerate the data-type golden stores under ``spec-fixtures/types/``.

Run with the interpreter ``generate.py`` needs (zarr-python 3.4.2,
tensorstore 0.1.86, zarrs-python 0.2.3) plus ml_dtypes 0.6.0::

    python3 spec-fixtures/generate_types.py

It deletes and rewrites ``spec-fixtures/types/`` only (``generate.py`` owns
the other producer directories and leaves this one alone). The layout is the
one in ``spec-fixtures/README.md``: ``types/<producer>/<name>/`` holds
``data.zarr/``, ``fixture.json`` and the expected data. Differences from the
fixtures of ``generate.py``:

- ``fixture.json["data_type"]`` is the exact V3 ``data_type`` JSON (or the
  V2 ``dtype``) the producer wrote;
- numpy-typed data (zarr-python's struct, raw_bytes, null_terminated_bytes,
  fixed_length_utf32 types) is ``expected.npy`` in the exact dtype zarr-python
  reads back (structured dtypes included, so field byte orders are kept);
- the ml_dtypes family and the ``complex_*`` types are ``expected_bits.npy``:
  the bit patterns as unsigned integers of the lane size (``uint8`` for the
  8/6/4/2-bit types, ``uint16`` for bfloat16, ...), with a trailing axis of
  length 2 (real, imaginary) for ``complex_*``; .npy cannot hold ml_dtypes
  types without pickling. Sub-byte types are stored *canonical*: only the
  low ``bit_size`` bits (ml_dtypes' own in-memory form: int4 -3 is 0x0d,
  int2 -1 is 0x03, float4 -0.0 is 0x08), whatever upper bits the producer
  stored (zarrs stores int4 -3 as 0xfd). ``fixture.json["numpy_dtype"]`` names
  the dtype a reader should return (an ml_dtypes name, ``complex64`` /
  ``complex128``), or null where there is none (complex_bfloat16,
  complex_float16, complex_float8_*, ...); ``bit_size`` gives the information
  bits per lane.

Producers:

- ``zarr-python`` -- ``zarr.create_array`` with numpy dtypes zarr-python maps
  to its own types (struct, raw_bytes, null_terminated_bytes,
  fixed_length_utf32), V3 and V2;
- ``tensorstore`` -- the ``zarr3`` driver (and the ``zarr`` V2 driver) with the
  ml_dtypes types it accepts;
- ``zarrs`` -- zarr-python's API with the zarrs codec pipeline (strict, one
  thread, ``generate.ZARRS_CONFIG``). zarr-python 3.4.2 has none of these data
  types, so this script registers a minimal ``ZDType`` per type (``ExtDType``:
  the V3 name, the fill-value JSON, and as native dtype the unsigned-integer
  "container" of the bits, since the zarrs pipeline refuses numpy kind ``V``,
  which is what every ml_dtypes dtype is) and pass-through zarr-python codec
  classes for ``packbits``; zarr-python writes ``zarr.json`` from them and the
  Rust zarrs crate (0.23.8 inside zarrs-python 0.2.3) encodes every chunk from
  that JSON. The data handed to zarrs is in zarrs' own in-memory form
  (sub-byte signed integers sign-extended to a byte).

Every fixture is read back by its producer and compared with the intended
bits (fill regions included) before it is saved; ``cross_checks`` records what
the other implementations read (zarr-python without the registrations above,
so "cannot read" there means zarr-python 3.4.2 itself cannot).
"""

from __future__ import annotations

import base64
import contextlib
import importlib.metadata
import json
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate as g
import tensorstore as ts
import zarr
import zarr.codecs as zc
from zarr.abc.codec import ArrayBytesCodec
from zarr.core.dtype import data_type_registry
from zarr.core.dtype.common import HasEndianness
from zarr.core.dtype.wrapper import ZDType
from zarr.errors import DataTypeValidationError
from zarr.registry import register_codec

ROOT = g.ROOT / "types"
ML_DTYPES_VERSION = "0.6.0"
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


# ---------------------------------------------------------------------------
# the extension types: names, lanes, bit sizes
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Ext:
    """An extension data type: ``name`` is its V3 name, ``lane`` the numpy /
    ml_dtypes name of one element (of one component for ``complex_*``)."""

    name: str
    kind: str  # "float", "int", "uint", "complex"
    lane: str
    bits: int  # information bits per lane

    @property
    def lane_dtype(self) -> np.dtype:
        return np.dtype(getattr(ml_dtypes, self.lane, None) or self.lane)

    @property
    def lane_size(self) -> int:
        return self.lane_dtype.itemsize

    @property
    def lanes(self) -> int:
        return 2 if self.kind == "complex" else 1

    @property
    def lane_kind(self) -> str:
        if self.kind != "complex":
            return self.kind
        return "float"

    @property
    def numpy_dtype(self) -> str | None:
        """The dtype a reader returns, where numpy / ml_dtypes has one."""
        if self.kind != "complex":
            return self.lane
        return {"float32": "complex64", "float64": "complex128"}.get(self.lane)

    @property
    def container(self) -> np.dtype:
        """The unsigned-integer (or numpy complex) dtype the zarrs pipeline is handed."""
        if self.numpy_dtype in ("complex64", "complex128"):
            return np.dtype(self.numpy_dtype)
        return np.dtype(_UINT[self.lane_size * self.lanes])

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1


def _ext(name: str) -> Ext:
    if name.startswith("complex_"):
        lane = name[len("complex_"):]
        return Ext(name, "complex", lane, _ext(lane).bits)
    if name in ("int2", "int4", "uint2", "uint4"):
        return Ext(name, name.rstrip("24"), name, int(name[-1]))
    if name in ("float16", "float32", "float64", "bfloat16"):
        return Ext(name, "float", name, 16 if name == "bfloat16" else int(name[5:]))
    return Ext(name, "float", name, int(name[5]))  # float8_* / float6_* / float4_*


TS_TYPES = [
    _ext(n)
    for n in (
        "bfloat16", "float8_e3m4", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
        "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int2", "int4",
    )
]  # fmt: skip
ZARRS_TYPES = [
    _ext(n)
    for n in (
        "bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
        "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
        "float4_e2m1fn", "int2", "int4", "uint2", "uint4", "complex_bfloat16",
        "complex_float16", "complex_float32", "complex_float64", "complex_float8_e4m3",
        "complex_float8_e5m2", "complex_float8_e3m4", "complex_float8_e4m3fnuz",
        "complex_float8_e4m3b11fnuz", "complex_float8_e5m2fnuz", "complex_float8_e8m0fnu",
        "complex_float6_e2m3fn", "complex_float6_e3m2fn", "complex_float4_e2m1fn",
    )
]  # fmt: skip
# Names probed at start-up: tensorstore must refuse these (zarr3 driver), the zarrs
# pipeline these; a change means new fixtures are due (see check_refusals).
TS_REFUSED = ("float8_e4m3", "float6_e2m3fn", "float6_e3m2fn", "uint2", "uint4",
              "complex_bfloat16", "complex_float16", "complex_float32", "complex_float64")  # fmt: skip
ZARRS_REFUSED = ("float8_e4m3fn", "complex_float8_e4m3fn")


# ---------------------------------------------------------------------------
# bits: canonical lane bit patterns, the form every comparison uses
# ---------------------------------------------------------------------------


def canonical(lane_bits: np.ndarray, ext: Ext) -> np.ndarray:
    """Only the information bits of each lane (sub-byte types: the low bits)."""
    out = np.asarray(lane_bits).astype(_UINT[ext.lane_size])
    if ext.bits < 8 * ext.lane_size:
        out = out & _UINT[ext.lane_size](ext.mask)
    return out


def to_bits(a: np.ndarray, ext: Ext) -> np.ndarray:
    """A reader's array (ml_dtypes, container or numpy complex) -> canonical lane
    bits, shape ``a.shape`` (+ ``(2,)`` for complex_*)."""
    a = np.ascontiguousarray(a)
    check(a.dtype.itemsize == ext.lane_size * ext.lanes, f"{ext.name}: itemsize of {a.dtype}")
    a = a.astype(a.dtype.newbyteorder("=")) if a.dtype.byteorder not in "=|" else a
    lanes = np.frombuffer(a.tobytes(), dtype=np.dtype(_UINT[ext.lane_size]).newbyteorder("<"))
    lanes = lanes.astype(_UINT[ext.lane_size])
    shape = a.shape + ((2,) if ext.kind == "complex" else ())
    return canonical(lanes.reshape(shape), ext)


def to_ml(bits: np.ndarray, ext: Ext) -> np.ndarray:
    """Canonical bits -> the ml_dtypes / numpy array tensorstore is given."""
    check(ext.kind != "complex" or ext.numpy_dtype is not None, f"{ext.name} has no numpy dtype")
    raw = np.ascontiguousarray(bits.astype(_UINT[ext.lane_size]))
    if ext.kind == "complex":
        return raw.view(np.dtype(ext.numpy_dtype)).reshape(bits.shape[:-1])
    return raw.view(ext.lane_dtype)


def to_zarrs_memory(bits: np.ndarray, ext: Ext) -> np.ndarray:
    """Canonical bits -> the container array in zarrs' in-memory form (signed
    sub-byte integers sign-extended to a whole byte, as zarrs' int2/int4 are i8)."""
    raw = bits.astype(_UINT[ext.lane_size])
    if ext.kind == "int":
        sign = 1 << (ext.bits - 1)
        raw = ((raw.astype(np.int16) ^ sign) - sign).astype(np.int8).view(np.uint8)
    raw = np.ascontiguousarray(raw)
    if ext.kind == "complex":
        return raw.view(ext.container).reshape(bits.shape[:-1])
    return raw.view(ext.container)


def bits_of_value(value: float, ext: Ext) -> int:
    """The lane bits ml_dtypes gives ``value`` (rounded to the type)."""
    arr = np.array(value, dtype=np.float64).astype(ext.lane_dtype).reshape(1)
    return int(canonical(arr.view(_UINT[ext.lane_size]), ext)[0])


def fill_json_to_bits(fill: Any, ext: Ext) -> list[int]:
    """An independent reading of a fill_value JSON: one int of lane bits per lane."""
    if ext.kind == "complex":
        check(isinstance(fill, list) and len(fill) == 2, f"{ext.name} fill {fill!r}")
        lane = _ext(ext.lane)
        return [fill_json_to_bits(part, lane)[0] for part in fill]
    if ext.kind in ("int", "uint"):
        check(isinstance(fill, int) and not isinstance(fill, bool), f"{ext.name} fill {fill!r}")
        return [fill & ext.mask]
    if isinstance(fill, str) and fill.startswith("0x"):
        return [int(fill, 16) & ext.mask]
    if isinstance(fill, str) and fill not in ("NaN", "Infinity", "-Infinity"):
        raw = base64.b64decode(fill, validate=True)  # tensorstore's V2 float4_e2m1fn fill
        check(len(raw) == ext.lane_size, f"{ext.name} base64 fill {fill!r}")
        return [int.from_bytes(raw, "little") & ext.mask]
    value = {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}.get(fill, fill)
    check(isinstance(value, (int, float)), f"{ext.name} fill {fill!r}")
    return [bits_of_value(float(value), ext)]


def lanes_hex(lanes: list[int], ext: Ext) -> str:
    return b"".join(int(x).to_bytes(ext.lane_size, "little") for x in lanes).hex()


def fill_array(shape: tuple[int, ...], lanes: list[int], ext: Ext) -> np.ndarray:
    full = shape + ((2,) if ext.kind == "complex" else ())
    out = np.empty(full, dtype=_UINT[ext.lane_size])
    out[...] = np.array(lanes if ext.kind == "complex" else lanes[0], dtype=out.dtype)
    return out


# ---------------------------------------------------------------------------
# data: every bit pattern of the small types, specials + random for the rest
# ---------------------------------------------------------------------------

_BF16_SPECIALS = [
    0x0000, 0x8000, 0x7F80, 0xFF80,  # +-0, +-inf
    0x7FC0, 0x7FC1, 0xFFC0, 0x7F81,  # NaN, NaN with payload, -NaN, signalling NaN
    0x0001, 0x8001, 0x007F, 0x0080,  # smallest subnormal (+-), largest subnormal, min normal
    0x7F7F, 0xFF7F, 0x3F80, 0xBF80,  # +-max, +-1
]  # fmt: skip


def lane_patterns(ext: Ext, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` lane bit patterns: all 2**bits of them first for types of at most
    8 bits (then random ones), the bfloat16 / float specials then random ones."""
    if ext.bits <= 8:
        every = np.arange(1 << ext.bits, dtype=np.uint8)
        extra = rng.integers(0, 1 << ext.bits, size=max(0, n - every.size), dtype=np.uint8)
        return np.concatenate([every, extra])[:n]
    if ext.lane == "bfloat16":
        specials = np.array(_BF16_SPECIALS, dtype=np.uint16)
        extra = rng.integers(0, 1 << 16, size=max(0, n - specials.size), dtype=np.uint16)
        return np.concatenate([specials, extra])[:n]
    floats = g._random_floats(np.dtype(ext.lane), n, rng)  # float16 / float32 / float64
    return floats.view(_UINT[ext.lane_size])


def ext_data(ext: Ext, shape: tuple[int, ...], key: str) -> np.ndarray:
    """Canonical bits of shape ``shape`` (+ (2,) for complex)."""
    rng = g.rng_for(key)
    n = int(np.prod(shape))
    if ext.kind == "complex":
        re = lane_patterns(_ext(ext.lane), n, rng)
        im = rng.permutation(lane_patterns(_ext(ext.lane), n, rng))
        return canonical(np.stack([re, im], axis=-1).reshape(shape + (2,)), ext)
    return canonical(lane_patterns(ext, n, rng).reshape(shape), ext)


def data_shape(ext: Ext) -> tuple[int, ...]:
    """Big enough for every pattern of an 8-bit type (or pair of 4-bit lanes)."""
    return (18, 22) if ext.bits == 8 else (9, 10)


# ---------------------------------------------------------------------------
# zarr-python registrations the zarrs producer needs
# ---------------------------------------------------------------------------


def _float_lane_json(bits: int, ext: Ext, *, numbers: bool) -> Any:
    """Lane bits -> fill JSON: numbers (or "NaN"/"Infinity"/"-Infinity", hex
    for a non-canonical NaN) when ``numbers``, else always a hex string."""
    if not numbers:
        return f"0x{bits:0{2 * ext.lane_size}x}"
    value = float(np.array(bits, dtype=_UINT[ext.lane_size]).view(ext.lane_dtype))
    if np.isnan(value):
        return "NaN" if bits == bits_of_value(np.nan, ext) else f"0x{bits:0{2 * ext.lane_size}x}"
    if np.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def zarrs_fill_json(lanes: list[int], ext: Ext) -> Any:
    """The fill JSON this script writes for zarrs: what zarrs 0.23.8 (as built into
    zarrs-python 0.2.3, without its "float8" feature) accepts: integers for the
    integer types, numbers / "NaN" / hex for bfloat16, float16/32/64 lanes, and
    only hex strings for the float8 / float6 / float4 types and their complex
    forms (numbers and "NaN" are refused there: "incompatible fill value")."""
    numbers = ext.lane in ("bfloat16", "float16", "float32", "float64")
    if ext.kind == "complex":
        lane = _ext(ext.lane)
        return [_float_lane_json(x, lane, numbers=numbers) for x in lanes]
    if ext.kind in ("int", "uint"):
        sign = 1 << (ext.bits - 1)
        return int(lanes[0]) if ext.kind == "uint" else int((lanes[0] ^ sign) - sign)
    return _float_lane_json(lanes[0], ext, numbers=numbers)


def make_ext_zdtype(ext: Ext) -> type:
    """A minimal zarr-python ZDType writing ``ext.name`` as data_type; scalars are
    container values, their JSON is ``zarrs_fill_json``."""
    container = ext.container
    multibyte = ext.lane_size > 1

    def scalar_lanes(value: Any) -> list[int]:
        bits = to_bits(np.asarray(value, dtype=container).reshape(1), ext).reshape(-1)
        return [int(x) for x in bits]

    def lanes_scalar(lanes: list[int]) -> np.generic:
        bits = np.array(lanes, dtype=_UINT[ext.lane_size]).reshape((1, 2) if ext.lanes == 2 else 1)
        return to_zarrs_memory(bits, ext)[0]

    bases: tuple[type, ...] = (ZDType, HasEndianness) if multibyte else (ZDType,)

    @dataclass(frozen=True, kw_only=True)
    class ExtDType(*bases):  # type: ignore[misc]
        dtype_cls: ClassVar[type] = type(container)
        _zarr_v3_name: ClassVar[str] = ext.name

        @classmethod
        def _check_native_dtype(cls, dtype: Any) -> bool:
            return False  # never chosen for a numpy dtype: only given explicitly

        @classmethod
        def from_native_dtype(cls, dtype: Any) -> Any:
            raise TypeError(f"{ext.name}: pass the ZDType instance")

        def to_native_dtype(self) -> np.dtype:
            return container

        @classmethod
        def _from_json_v2(cls, data: Any) -> Any:
            raise DataTypeValidationError(f"{ext.name} has no V2 form here")

        @classmethod
        def _from_json_v3(cls, data: Any) -> Any:
            if data == ext.name:
                return cls(endianness="little") if multibyte else cls()
            raise DataTypeValidationError(f"not {ext.name}: {data!r}")

        def to_json(self, zarr_format: int) -> Any:
            return ext.name

        def _check_scalar(self, data: object) -> bool:
            return True

        def cast_scalar(self, data: object) -> Any:
            return np.asarray(data).astype(container)[()]

        def default_scalar(self) -> Any:
            return np.zeros((), container)[()]

        def from_json_scalar(self, data: Any, *, zarr_format: int) -> Any:
            return lanes_scalar(fill_json_to_bits(data, ext))

        def to_json_scalar(self, data: object, *, zarr_format: int) -> Any:
            return zarrs_fill_json(scalar_lanes(data), ext)

    ExtDType.__name__ = ExtDType.__qualname__ = f"ExtDType_{ext.name}"
    return ExtDType


EXT_ZDTYPES = {
    ext.name: make_ext_zdtype(ext) for ext in ZARRS_TYPES + [_ext(n) for n in ZARRS_REFUSED]
}


@contextlib.contextmanager
def ext_zdtypes_registered() -> Iterator[None]:
    """zarr-python knows the extension names only inside this block, so that a
    zarr-python cross check outside it is zarr-python 3.4.2 itself."""
    for name, cls in EXT_ZDTYPES.items():
        data_type_registry.register(name, cls)
    try:
        yield
    finally:
        for name in EXT_ZDTYPES:
            data_type_registry.unregister(name)


def _passthrough_codec(codec_name: str) -> type:
    """A zarr-python array->bytes codec that only carries its JSON: zarr-python
    writes it into zarr.json, zarrs does the encoding (zarr-python never runs it)."""

    class Passthrough(ArrayBytesCodec):
        is_fixed_size = False

        def __init__(self, *, configuration: dict[str, Any] | None = None) -> None:
            object.__setattr__(self, "configuration", configuration)

        @classmethod
        def from_dict(cls, data: dict[str, Any]) -> Any:
            return cls(configuration=data.get("configuration"))

        def to_dict(self) -> dict[str, Any]:
            if self.configuration is None:
                return {"name": codec_name}
            return {"name": codec_name, "configuration": self.configuration}

        def evolve_from_array_spec(self, array_spec: Any) -> Any:
            return self

        def compute_encoded_size(self, input_byte_length: int, chunk_spec: Any) -> int:
            raise NotImplementedError(codec_name)

        async def _decode_single(self, *args: Any) -> Any:
            raise NotImplementedError(f"{codec_name}: zarr-python cannot decode it")

        async def _encode_single(self, *args: Any) -> Any:
            raise NotImplementedError(f"{codec_name}: zarr-python cannot encode it")

    Passthrough.__name__ = Passthrough.__qualname__ = f"Passthrough_{codec_name}"
    register_codec(codec_name, Passthrough)
    return Passthrough


PackBits = _passthrough_codec("packbits")
OptionalCodec = _passthrough_codec("optional")


# ---------------------------------------------------------------------------
# readers (canonical bits for the extension types) and cross checks
# ---------------------------------------------------------------------------


def ts_read(store: Path) -> tuple[np.ndarray, Any]:
    return g.read_tensorstore(store)


def zp_read(store: Path) -> tuple[np.ndarray, Any]:
    return g.read_zarr_python(store)


def zarrs_read(store: Path) -> tuple[np.ndarray, Any]:
    with ext_zdtypes_registered():
        return g.read_zarrs(store)


EXT_READERS: dict[str, Callable[[Path], tuple[np.ndarray, Any]]] = {
    g.ZARR_LABEL: zp_read, g.TS_LABEL: ts_read, g.ZARRS_LABEL: zarrs_read,
}  # fmt: skip


def _failure(exc: Exception) -> str:
    text = f"cannot read ({type(exc).__name__})"
    why = g.refusal_reason(exc)
    cause = exc.__cause__
    if why:
        text += f": {why}"
    elif cause is not None and str(cause):
        text += f": {str(cause)[:200]}"
    elif type(exc).__name__ not in ("UnsupportedDataTypeError",) and str(exc):
        text += f": {str(exc).splitlines()[0][:200]}"
    return text


def cross_check_ext(store: Path, expected_bits: np.ndarray, ext: Ext, skip: str) -> dict[str, str]:
    out = {}
    for label, reader in EXT_READERS.items():
        if label == skip:
            continue
        try:
            got, _ = reader(store)
        except Exception as exc:  # a peer may refuse the store: recorded
            out[label] = _failure(exc)
            continue
        if np.asarray(got).dtype.itemsize != ext.lane_size * ext.lanes:
            out[label] = f"different dtype ({np.asarray(got).dtype}, shape {np.shape(got)})"
            continue
        bits = to_bits(got, ext)
        if bits.shape != expected_bits.shape:
            out[label] = f"different shape {bits.shape}"
        elif np.array_equal(bits, expected_bits):
            out[label] = "equal"
        else:
            n = int(np.count_nonzero(bits != expected_bits))
            out[label] = f"different data ({n} of {expected_bits.size} lanes differ)"
    return out


def raw_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype (field byte orders included), shape and bytes."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and (
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
    )


def cross_check_numpy(store: Path, expected: np.ndarray, skip: str) -> dict[str, str]:
    out = {}
    for label, reader in EXT_READERS.items():
        if label == skip:
            continue
        try:
            got, _ = reader(store)
        except Exception as exc:  # recorded
            out[label] = _failure(exc)
            continue
        got = np.asarray(got)
        if raw_equal(got, expected):
            out[label] = "equal"
        elif np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(expected).tobytes():
            out[label] = f"same bytes as a {got.dtype} array of shape {got.shape}"
        elif got.shape != expected.shape or got.dtype != expected.dtype:
            out[label] = f"different dtype or shape ({got.dtype}, shape {got.shape})"
        else:
            out[label] = "different data"
    return out


# ---------------------------------------------------------------------------
# fixture registry and driver
# ---------------------------------------------------------------------------


@dataclass
class TypeBuilt:
    """What a builder returns. ``ext`` set: ``intended`` is canonical bits and
    ``fill_lanes`` the fill's lane bits; else ``intended`` is the numpy array."""

    intended: np.ndarray
    description: str
    ext: Ext | None = None
    fill_lanes: list[int] | None = None


FIXTURES: list[tuple[str, str, Callable[[Path], TypeBuilt]]] = []


def fixture(producer: str, name: str) -> Callable:
    def register(fn: Callable[[Path], TypeBuilt]) -> Callable[[Path], TypeBuilt]:
        FIXTURES.append((producer, name, fn))
        return fn

    return register


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"generate_types.py: check failed: {what}")


def _meta(store: Path) -> dict[str, Any]:
    return g.array_doc(store)


def build(producer: str, name: str, builder: Callable[[Path], TypeBuilt]) -> None:
    fdir = ROOT / producer / name
    fdir.mkdir(parents=True)
    store = fdir / "data.zarr"
    built = builder(store)
    label = g.producer_label(producer)
    meta = _meta(store)
    fmt = g.store_format(store)
    reader = {"zarr-python": zp_read, "tensorstore": ts_read, "zarrs": zarrs_read}[producer]
    got, producer_fill = reader(store)
    if fmt == 2:  # the V2 ml_dtypes names are tensorstore's: zarr-python cannot open them
        chunks, shards = list(meta["chunks"]), None
    else:
        with ext_zdtypes_registered():
            zp = zarr.open_array(str(store), mode="r")
            chunks, shards = list(zp.chunks), None if zp.shards is None else list(zp.shards)
    doc: dict[str, Any] = {
        "producer": label, "path": "data.zarr", "description": built.description,
        "node_type": "array", "zarr_format": fmt, "chunks": chunks, "shards": shards,
        "data_type": meta["data_type"] if fmt == 3 else meta["dtype"],
    }  # fmt: skip
    fill_json = meta["fill_value"]
    if built.ext is not None:
        ext = built.ext
        bits = to_bits(got, ext)
        check(bits.shape == built.intended.shape and np.array_equal(bits, built.intended),
              f"{producer}/{name}: read-back != intended")  # fmt: skip
        producer_lanes = [int(x) for x in to_bits(np.asarray(producer_fill).reshape(1), ext).reshape(-1)]
        check(producer_lanes == built.fill_lanes,
              f"{producer}/{name}: producer fill {producer_lanes} != {built.fill_lanes}")  # fmt: skip
        if fill_json is None:
            check(fmt == 2, f"{producer}/{name}: V3 fill null")
            fill_check: dict[str, Any] = {"json": None, "raw_le_hex": None}
        else:
            check(fill_json_to_bits(fill_json, ext) == built.fill_lanes,
                  f"{producer}/{name}: fill JSON {fill_json!r} != lanes {built.fill_lanes}")  # fmt: skip
            fill_check = {"json": fill_json, "raw_le_hex": lanes_hex(built.fill_lanes, ext)}
        np.save(fdir / "expected_bits.npy", bits, allow_pickle=False)
        doc["numpy_dtype"] = ext.numpy_dtype
        doc["bit_size"] = ext.bits
        doc["fill_value_check"] = fill_check
        doc["cross_checks"] = cross_check_ext(store, bits, ext, skip=label)
    else:
        got = np.asarray(got)
        check(raw_equal(got, built.intended), f"{producer}/{name}: read-back != intended")
        fill = np.asarray(producer_fill, dtype=got.dtype)
        doc["fill_value_check"] = {
            "json": fill_json, "raw_hex": np.ascontiguousarray(fill).tobytes().hex(),
        }  # fmt: skip
        np.save(fdir / "expected.npy", got, allow_pickle=False)
        check(raw_equal(np.load(fdir / "expected.npy", allow_pickle=False), got),
              f"{producer}/{name}: expected.npy does not round-trip")  # fmt: skip
        doc["cross_checks"] = cross_check_numpy(store, got, skip=label)
    g.write_json(fdir / "fixture.json", doc)


# ---------------------------------------------------------------------------
# zarr-python: struct, raw_bytes, null_terminated_bytes, fixed_length_utf32
# ---------------------------------------------------------------------------

_MIXED = np.dtype([("a", "<i4"), ("b", ">f8")])
_NESTED_V3 = np.dtype([
    ("a", "<i4"), ("b", ">f8"), ("c", [("x", "u1"), ("y", "<f2")]), ("d", "S3"), ("e", "?"),
    ("f", "V2"), ("g", "<c8"), ("h", "<M8[s]"),
])  # fmt: skip
_NESTED_V2 = np.dtype([
    ("a", "<i4"), ("b", ">f8"), ("c", [("x", "u1"), ("y", ">f2")]), ("d", "S3"), ("e", "?"),
    ("f", "V2"), ("g", "<c8"),
])  # fmt: skip


def struct_data(dtype: np.dtype, shape: tuple[int, ...], key: str) -> np.ndarray:
    """Random field values (float fields with the specials of generate.py)."""
    rng = g.rng_for(key)
    out = np.zeros(shape, dtype=dtype)
    n = int(np.prod(shape))

    def fill_fields(arr: np.ndarray, dt: np.dtype, prefix: str) -> None:
        for fname in dt.names:
            fdt = dt.fields[fname][0]
            if fdt.names:
                fill_fields(arr[fname], fdt, prefix + fname + ".")
            elif fdt.kind in "biufcmM":
                arr[fname] = g.random_data(fdt.newbyteorder("=").str, shape, rng)
            elif fdt.kind == "S":
                vals = [bytes(rng.integers(1, 256, size=rng.integers(0, fdt.itemsize + 1),
                                           dtype=np.uint8)) for _ in range(n)]  # fmt: skip
                arr[fname] = np.array(vals, dtype=fdt).reshape(shape)
            elif fdt.kind == "V":
                raw = rng.integers(0, 256, size=n * fdt.itemsize, dtype=np.uint8)
                arr[fname] = raw.view(fdt).reshape(shape)
            else:
                raise ValueError(fdt)

    fill_fields(out, dtype, "")
    return out


def zp_fixture_array(store: Path, data: np.ndarray, fill: Any, region: Any, **kwargs: Any) -> np.ndarray:
    """Create with zarr-python, write ``data[region]``; the intended array
    (fill outside the region) in the dtype zarr-python reads back."""
    arr = zarr.create_array(str(store), shape=data.shape, dtype=data.dtype, fill_value=fill, **kwargs)
    arr[region] = data[region]
    readback = zarr.open_array(str(store), mode="r")
    dtype = readback.dtype
    intended = np.empty(data.shape, dtype=dtype)
    intended[...] = np.asarray(readback.fill_value, dtype=dtype)
    intended[region] = data[region].astype(dtype)
    return intended


def _struct_fill(dtype: np.dtype) -> np.void:
    fill = np.zeros((), dtype=dtype)
    for fname in dtype.names:
        fdt = dtype.fields[fname][0]
        if fdt.names:
            fill[fname] = _struct_fill(fdt)
        elif fdt.kind == "f":
            fill[fname] = -2.5
        elif fdt.kind == "c":
            fill[fname] = 1.5 - 0.5j
        elif fdt.kind in "iu":
            fill[fname] = 7
        elif fdt.kind == "b":
            fill[fname] = True
        elif fdt.kind == "S":
            fill[fname] = b"fi"
        elif fdt.kind == "V":
            fill[fname] = np.frombuffer(b"\xab" * fdt.itemsize, dtype=fdt)[0]
        elif fdt.kind == "M":
            fill[fname] = np.array(946684800, dtype=np.int64).view(fdt)
    return fill[()]


@fixture("zarr-python", "struct_mixed_endian")
def _(store: Path) -> TypeBuilt:
    data = struct_data(_MIXED, (7, 6), "types-zp-struct-mixed")
    intended = zp_fixture_array(store, data, _struct_fill(_MIXED), np.s_[0:5, 0:4], chunks=(3, 4))
    return TypeBuilt(
        intended,
        "struct from numpy [('a', '<i4'), ('b', '>f8')], shape (7, 6), chunks (3, 4), fill "
        "{a: 7, b: -2.5}, bytes little + zstd; only [0:5, 0:4] written (chunk row 1 holds fill "
        "in its last row, chunk row 2 and chunk column 1 are absent). V3 has no per-field byte "
        "order: zarr-python writes field data_types \"int32\" / \"float64\" and the bytes codec "
        "encodes every field little-endian; it reads back [('a', '<i4'), ('b', '<f8')] "
        "(expected.npy's dtype). b holds +-inf, NaN, NaN with payload, -NaN, -0.0.",
    )


@fixture("zarr-python", "struct_nested_partial")
def _(store: Path) -> TypeBuilt:
    data = struct_data(_NESTED_V3, (6, 5), "types-zp-struct-nested")
    intended = zp_fixture_array(store, data, _struct_fill(_NESTED_V3), np.s_[0:4, 0:3], chunks=(3, 3))
    return TypeBuilt(
        intended,
        "struct with a nested struct field c {x uint8, y float16}, null_terminated_bytes d "
        "(length 3), bool e, raw_bytes f (length 2), complex64 g and numpy.datetime64 h "
        "(unit s); shape (6, 5), chunks (3, 3), fill value a JSON object with every field "
        "(bytes fields base64), bytes little + zstd; only [0:4, 0:3] written (chunk (1, 0) "
        "holds fill in two rows, chunk column 1 is absent)",
    )


@fixture("zarr-python", "struct_big_endian_sharded")
def _(store: Path) -> TypeBuilt:
    dt = np.dtype([("i", "<u2"), ("s", [("f", "<f4"), ("z", "<i8")]), ("r", "V3")])
    data = struct_data(dt, (8, 6), "types-zp-struct-big-sharded")
    intended = zp_fixture_array(
        store, data, _struct_fill(dt), np.s_[0:5, 0:6], chunks=(2, 3), shards=(4, 6),
        serializer=zc.BytesCodec(endian="big"), compressors=None,
    )  # fmt: skip
    return TypeBuilt(
        intended,
        "struct {i uint16, s {f float32, z int64}, r raw_bytes 3}, shape (8, 6), shards "
        "(4, 6), inner chunks (2, 3), inner codecs bytes endian big (every numeric field "
        "big-endian inside the element; raw_bytes unchanged), no compressor; [0:5, 0:6] "
        "written: shard c/1/0 holds the inner chunks of row 4 (fill in row 5), the rest of "
        "it is absent",
    )


@fixture("zarr-python", "v2_struct_mixed_endian")
def _(store: Path) -> TypeBuilt:
    data = struct_data(_MIXED, (7, 6), "types-zp-v2-struct-mixed")
    intended = zp_fixture_array(
        store, data, _struct_fill(_MIXED), np.s_[0:5, 0:4], chunks=(3, 4), zarr_format=2
    )
    return TypeBuilt(
        intended,
        "V2 dtype [[\"a\", \"<i4\"], [\"b\", \">f8\"]] (field byte orders kept: b is stored "
        "big-endian), shape (7, 6), chunks (3, 4), fill_value base64 of the 12 fill bytes in "
        "the dtype's own byte orders, compressor zstd; only [0:5, 0:4] written. expected.npy "
        "keeps the dtype with '>f8'",
    )


@fixture("zarr-python", "v2_struct_nested")
def _(store: Path) -> TypeBuilt:
    data = struct_data(_NESTED_V2, (6, 5), "types-zp-v2-struct-nested")
    intended = zp_fixture_array(
        store, data, _struct_fill(_NESTED_V2), np.s_[0:4, 0:3], chunks=(3, 3), zarr_format=2,
        compressors=None,
    )  # fmt: skip
    return TypeBuilt(
        intended,
        "V2 structured dtype with a nested field c [[\"x\", \"|u1\"], [\"y\", \">f2\"]], "
        "\"|S3\", \"|b1\", \"|V2\", \"<c8\" fields, shape (6, 5), chunks (3, 3), base64 fill, "
        "no compressor (chunks are the raw structured bytes); only [0:4, 0:3] written. "
        "zarr-python 3.4.2 cannot write a V2 struct with a datetime64 field (\"cannot include "
        "dtype 'M' in a buffer\" while encoding the fill), so it has none",
    )


_V7_VALUES = [b"1234567", b"\x00" * 7, b"\xff" * 7, b"abc\x00\x00\x00\x00", b"\x00\x00\x00\x00abc"]


def raw_bytes_data(shape: tuple[int, ...], length: int, key: str) -> np.ndarray:
    rng = g.rng_for(key)
    n = int(np.prod(shape))
    raw = rng.integers(0, 256, size=n * length, dtype=np.uint8).view(f"V{length}")
    for i, v in enumerate(_V7_VALUES[: min(n, len(_V7_VALUES))]):
        raw[i] = np.frombuffer(v[:length].ljust(length, b"\x00"), dtype=f"V{length}")[0]
    return raw.reshape(shape)


@fixture("zarr-python", "raw_bytes_V7")
def _(store: Path) -> TypeBuilt:
    data = raw_bytes_data((6, 5), 7, "types-zp-raw-v7")
    fill = np.frombuffer(bytes(range(1, 8)), dtype="V7")[0]
    intended = zp_fixture_array(store, data, fill, np.s_[0:4, 0:5], chunks=(3, 3))
    return TypeBuilt(
        intended,
        "raw_bytes {length_bytes 7} (numpy V7), shape (6, 5), chunks (3, 3), fill_value "
        "base64 \"AQIDBAUGBw==\" (bytes 01..07), bytes (no endian) + zstd; only [0:4, 0:5] "
        "written (chunk row 1 holds fill in two rows). Values include all-zero, all-0xff and "
        "values with leading and trailing NULs",
    )


@fixture("zarr-python", "v2_raw_bytes_V7")
def _(store: Path) -> TypeBuilt:
    data = raw_bytes_data((7,), 7, "types-zp-v2-raw-v7")
    fill = np.frombuffer(b"\x00\xff" * 3 + b"\x01", dtype="V7")[0]
    intended = zp_fixture_array(store, data, fill, np.s_[0:5], chunks=(3,), zarr_format=2)
    return TypeBuilt(
        intended,
        "V2 dtype \"|V7\", shape (7,), chunks (3,), fill_value base64 of 00 ff 00 ff 00 ff 01, "
        "compressor zstd; [0:5] written (chunk 1 holds one fill element, chunk 2 is absent)",
    )


_S_VALUES = [b"", b"a", b"hello", b"a\x00b", b"\x00ab", b"\xff\xfe"]


@fixture("zarr-python", "null_terminated_bytes_S5")
def _(store: Path) -> TypeBuilt:
    data = np.array((_S_VALUES * 5)[:28], dtype="S5").reshape(4, 7)
    intended = zp_fixture_array(store, data, b"xy", np.s_[0:3, 0:5], chunks=(2, 4))
    return TypeBuilt(
        intended,
        "null_terminated_bytes {length_bytes 5} (numpy S5), shape (4, 7), chunks (2, 4), "
        "fill_value base64 \"eHk=\" (b\"xy\"), bytes + zstd; [0:3, 0:5] written. Values include "
        "embedded and leading NULs; numpy S drops trailing NULs when it converts an element, so "
        "compare the raw bytes",
    )


@fixture("zarr-python", "v2_null_terminated_bytes_S5")
def _(store: Path) -> TypeBuilt:
    data = np.array((_S_VALUES * 2)[:9], dtype="S5")
    intended = zp_fixture_array(store, data, b"q", np.s_[0:7], chunks=(4,), zarr_format=2)
    return TypeBuilt(
        intended,
        "V2 dtype \"|S5\", shape (9,), chunks (4,), fill_value base64 \"cQ==\" (b\"q\"), "
        "compressor zstd; [0:7] written",
    )


_U_VALUES = ["", "ab", "日本語x", "z", "€✓", "abcd"]


@fixture("zarr-python", "fixed_length_utf32_U4")
def _(store: Path) -> TypeBuilt:
    data = np.array((_U_VALUES * 5)[:28], dtype="<U4").reshape(4, 7)
    intended = zp_fixture_array(store, data, "fi", np.s_[0:3, 0:5], chunks=(2, 4))
    return TypeBuilt(
        intended,
        "fixed_length_utf32 {length_bytes 16} (numpy <U4), shape (4, 7), chunks (2, 4), "
        "fill_value \"fi\", bytes little + zstd; [0:3, 0:5] written",
    )


@fixture("zarr-python", "fixed_length_utf32_big_endian")
def _(store: Path) -> TypeBuilt:
    data = np.array((_U_VALUES * 2)[:9], dtype="<U4")
    intended = zp_fixture_array(
        store, data, "é", np.s_[0:7], chunks=(4,), serializer=zc.BytesCodec(endian="big"),
        compressors=None,
    )  # fmt: skip
    return TypeBuilt(
        intended,
        "fixed_length_utf32 {length_bytes 16}, shape (9,), chunks (4,), fill_value \"é\", "
        "bytes endian big (each UTF-32 code unit big-endian), no compressor; [0:7] written",
    )


@fixture("zarr-python", "v2_fixed_length_utf32_big_endian")
def _(store: Path) -> TypeBuilt:
    data = np.array((_U_VALUES * 2)[:9], dtype=">U4")
    intended = zp_fixture_array(
        store, data, "fi", np.s_[0:7], chunks=(4,), zarr_format=2, compressors=None
    )
    return TypeBuilt(
        intended,
        "V2 dtype \">U4\" (big-endian UTF-32), shape (9,), chunks (4,), fill_value \"fi\", no "
        "compressor; [0:7] written; expected.npy keeps '>U4'",
    )


# ---------------------------------------------------------------------------
# tensorstore: zarr3 and zarr (V2) drivers
# ---------------------------------------------------------------------------


def _ts_fill(ext: Ext, variant: str) -> Any:
    """The fill JSON given to tensorstore (it may rewrite it; fixture.json has
    what it wrote)."""
    if ext.kind == "int":
        return {"fill": -3 if ext.bits == 4 else -1, "v2": -3 if ext.bits == 4 else -1,
                "nan": -(1 << (ext.bits - 1))}[variant]  # fmt: skip
    if variant == "v2" and ext.name == "float4_e2m1fn":
        return "Cw=="  # the V2 driver wants float4 fills as base64 of the byte (0x0b: -1.5)
    if variant == "v2" and ext.kind == "float" and ext.name != "float8_e8m0fnu":
        return -1.5  # V2 reads a "0x..." fill as a C hex float (0xffc1 -> 65473.0), so no hex
    if ext.name == "float8_e8m0fnu":
        # tensorstore 0.1.86 converts e8m0fnu fill JSON numbers with exponent bias 63, not
        # 127 (0.25 -> bits 0x3d, bits 0x7f -> 1.8446744073709552e+19): NaN is the only
        # fill whose JSON and chunk bytes agree.
        return "NaN"
    if variant == "fill":
        if ext.name == "bfloat16":
            return "0xffc1"  # a negative NaN with payload: stays hex
        return -1.5
    return 6.0 if ext.name == "float4_e2m1fn" else "NaN"  # float4_e2m1fn has no NaN: its max


def _ts_write(ext: Ext, store: Path, key: str, fill: Any, codecs: list | None,
              chunks: tuple[int, ...], region: Any, **meta: Any) -> TypeBuilt | tuple:  # fmt: skip
    shape = data_shape(ext)
    bits = ext_data(ext, shape, key)
    t = g.ts_array(store, shape=shape, chunks=chunks, dtype=ext.name, fill_value=fill,
                   codecs=codecs, **meta)  # fmt: skip
    t[region].write(to_ml(bits[region], ext)).result()
    written = g.read_json(store / "zarr.json")["fill_value"]
    lanes = fill_json_to_bits(written, ext)
    intended = fill_array(shape, lanes, ext)
    intended[region] = bits[region]
    return intended, lanes, written


def _region_text(ext: Ext) -> str:
    if ext.bits == 8:
        return ("[0:16, 0:16] written with all 256 bit patterns (row-major from 0x00), rows "
                "16-17 and column 21 are fill (chunk column 3 absent)")  # fmt: skip
    if ext.bits < 8:
        return (f"[0:7, 0:8] written, the first {1 << ext.bits} elements every {ext.bits}-bit "
                "pattern, then random patterns; rows 7-8 and columns 8-9 are fill")  # fmt: skip
    return ("[0:7, 0:8] written: +-0, +-inf, NaN 0x7fc0, NaN payload 0x7fc1, -NaN 0xffc0, "
            "signalling NaN 0x7f81, +-smallest subnormal, largest subnormal 0x007f, min "
            "normal 0x0080, +-max, +-1, then random bit patterns; rows 7-8 and columns 8-9 are fill")  # fmt: skip


def _region(ext: Ext) -> Any:
    return np.s_[0:16, 0:16] if ext.bits == 8 else np.s_[0:7, 0:8]


def _chunks(ext: Ext) -> tuple[int, int]:
    return (6, 7) if ext.bits == 8 else (4, 6)


def _register_tensorstore() -> None:
    for ext in TS_TYPES:

        def plain(store: Path, ext: Ext = ext) -> TypeBuilt:
            fill = _ts_fill(ext, "fill")
            intended, lanes, written = _ts_write(
                ext, store, f"types-ts-{ext.name}", fill, None, _chunks(ext), _region(ext)
            )
            return TypeBuilt(
                intended,
                f"{ext.name}, shape {data_shape(ext)}, chunks {_chunks(ext)}, codecs not given "
                f"(tensorstore's default: bytes only, no compressor, so chunks are the raw "
                f"element bytes, one byte per element for the 8/4/2-bit types), fill_value "
                f"given as {json.dumps(fill)} and written as {json.dumps(written)}; "
                f"{_region_text(ext)}",
                ext, lanes,
            )  # fmt: skip

        fixture("tensorstore", f"{ext.name}_fill")(plain)

        def zstd(store: Path, ext: Ext = ext) -> TypeBuilt:
            fill = _ts_fill(ext, "nan")
            codecs = [g._bytes("little" if ext.lane_size > 1 else None),
                      {"name": "zstd", "configuration": {"level": 3, "checksum": False}}]  # fmt: skip
            intended, lanes, written = _ts_write(
                ext, store, f"types-ts-{ext.name}-zstd", fill, codecs, _chunks(ext), _region(ext)
            )
            return TypeBuilt(
                intended,
                f"{ext.name}, shape {data_shape(ext)}, chunks {_chunks(ext)}, codecs bytes + "
                f"zstd level 3, fill_value given as {json.dumps(fill)} and written as "
                f"{json.dumps(written)}; {_region_text(ext)}",
                ext, lanes,
            )  # fmt: skip

        fixture("tensorstore", f"{ext.name}_zstd")(zstd)

        def v2(store: Path, ext: Ext = ext) -> TypeBuilt:
            shape = data_shape(ext)
            bits = ext_data(ext, shape, f"types-ts-v2-{ext.name}")
            fill = _ts_fill(ext, "v2")
            spec = {
                "driver": "zarr", "kvstore": {"driver": "file", "path": str(store) + "/"},
                "metadata": {"shape": list(shape), "chunks": list(_chunks(ext)), "dtype": ext.name,
                             "fill_value": fill, "compressor": {"id": "zlib", "level": 1}},
            }  # fmt: skip
            t = ts.open(spec, create=True, delete_existing=True).result()
            region = _region(ext)
            t[region].write(to_ml(bits[region], ext)).result()
            written = g.read_json(store / ".zarray")["fill_value"]
            lanes = fill_json_to_bits(written, ext)
            intended = fill_array(shape, lanes, ext)
            intended[region] = bits[region]
            return TypeBuilt(
                intended,
                f"V2 (tensorstore driver \"zarr\"): dtype written as {json.dumps(ext.name)} "
                f"(no byte-order prefix), shape {shape}, chunks {_chunks(ext)}, compressor zlib "
                f"level 1, fill_value given as {json.dumps(fill)} and written as "
                f"{json.dumps(written)}; {_region_text(ext)}",
                ext, lanes,
            )  # fmt: skip

        fixture("tensorstore", f"v2_{ext.name}")(v2)


_register_tensorstore()


def _ts_sharded(name: str, inner_codecs: list[dict[str, Any]], text: str) -> None:
    ext = _ext(name)

    def build_it(store: Path) -> TypeBuilt:
        fill = _ts_fill(ext, "fill")
        codecs = [g._sharding([3, 4], inner_codecs)]
        intended, lanes, written = _ts_write(
            ext, store, f"types-ts-sharded-{name}", fill, codecs, (6, 8), _region(ext)
        )
        return TypeBuilt(
            intended,
            f"{name}, shape {data_shape(ext)}, shards (6, 8), inner chunks (3, 4), inner codecs "
            f"{text}, index bytes + crc32c at the end, fill_value written as "
            f"{json.dumps(written)}; {_region_text(ext)}",
            ext, lanes,
        )  # fmt: skip

    fixture("tensorstore", f"{name}_sharded")(build_it)


_ts_sharded("bfloat16", [g._bytes("little"), {"name": "zstd", "configuration": {"level": 1}}],
            "bytes little + zstd level 1")  # fmt: skip
_ts_sharded("int4", [g._bytes(None)], "bytes (one byte per int4 element)")
_ts_sharded("float8_e5m2", [g._bytes(None), {"name": "crc32c"}], "bytes + crc32c")


# ---------------------------------------------------------------------------
# zarrs (zarr-python metadata through ExtDType, zarrs chunk bytes)
# ---------------------------------------------------------------------------


def _zarrs_fill(ext: Ext) -> list[int]:
    """Fill lanes for the zarrs fixtures (non-default, type-specific)."""
    if ext.kind == "complex":
        lane = _ext(ext.lane)
        if lane.lane == "bfloat16":
            return [0x7FC1, bits_of_value(-1.5, lane)]  # NaN with payload, -1.5
        if lane.bits >= 16:
            return [bits_of_value(2.5, lane), bits_of_value(-0.0, lane)]
        return [bits_of_value(1.5 if lane.name != "float8_e8m0fnu" else 0.5, lane),
                bits_of_value(-1.0, lane) if lane.name != "float8_e8m0fnu" else 0xFF]  # fmt: skip
    if ext.kind == "int":
        return [(-3 if ext.bits == 4 else -2) & ext.mask]
    if ext.kind == "uint":
        return [ext.mask]
    if ext.name == "bfloat16":
        return [0xFFC1]
    if ext.name == "float8_e8m0fnu":
        return [0xFF]  # NaN
    return [bits_of_value(-1.5, ext)]


def zarrs_write(ext: Ext, store: Path, key: str, *, region: Any, chunks: Any,
                fill_lanes: list[int] | None = None, shape: tuple[int, ...] | None = None,
                **kwargs: Any) -> tuple[np.ndarray, list[int]]:  # fmt: skip
    shape = data_shape(ext) if shape is None else shape
    bits = ext_data(ext, shape, key)
    lanes = _zarrs_fill(ext) if fill_lanes is None else fill_lanes
    zdtype = EXT_ZDTYPES[ext.name](endianness="little") if ext.lane_size > 1 else EXT_ZDTYPES[ext.name]()
    fill_scalar = to_zarrs_memory(
        np.array(lanes, dtype=_UINT[ext.lane_size]).reshape((1, 2) if ext.lanes == 2 else 1), ext
    )[0]
    with ext_zdtypes_registered(), zarr.config.set(g.ZARRS_CONFIG):
        arr = zarr.create_array(str(store), shape=shape, dtype=zdtype, chunks=chunks,
                                fill_value=fill_scalar, **kwargs)  # fmt: skip
        arr[region] = to_zarrs_memory(bits[region], ext)
    intended = fill_array(shape, lanes, ext)
    intended[region] = bits[region]
    return intended, lanes


def _zarrs_text(ext: Ext, fill_json: Any) -> str:
    stored = ""
    if ext.kind == "int":
        stored = (f"; zarrs holds {ext.name} as a sign-extended byte, and that byte is what the "
                  "bytes codec stores (-3 as 0xfd), expected_bits keeps the low bits")  # fmt: skip
    return f"fill_value {json.dumps(fill_json)}{stored}"


def _register_zarrs() -> None:
    for ext in ZARRS_TYPES:
        serializer = zc.BytesCodec(endian="little") if ext.lane_size > 1 else zc.BytesCodec(endian=None)

        def plain(store: Path, ext: Ext = ext, serializer: Any = serializer) -> TypeBuilt:
            intended, lanes = zarrs_write(ext, store, f"types-zarrs-{ext.name}", region=_region(ext),
                                          chunks=_chunks(ext), serializer=serializer,
                                          compressors=None)  # fmt: skip
            fill_json = g.read_json(store / "zarr.json")["fill_value"]
            return TypeBuilt(
                intended,
                f"{ext.name} (zarrs pipeline), shape {data_shape(ext)}, chunks {_chunks(ext)}, "
                f"bytes{' little' if ext.lane_size > 1 else ''}, no compressor (chunks are the "
                f"raw element bytes{', real then imaginary' if ext.kind == 'complex' else ''}), "
                f"{_zarrs_text(ext, fill_json)}; {_region_text(ext)}",
                ext, lanes,
            )  # fmt: skip

        fixture("zarrs", ext.name)(plain)

        if ext.bits < 8:

            def packbits(store: Path, ext: Ext = ext) -> TypeBuilt:
                intended, lanes = zarrs_write(ext, store, f"types-zarrs-packbits-{ext.name}",
                                              region=_region(ext), chunks=_chunks(ext),
                                              serializer=PackBits(), compressors=None)  # fmt: skip
                fill_json = g.read_json(store / "zarr.json")["fill_value"]
                return TypeBuilt(
                    intended,
                    f"{ext.name} (zarrs pipeline), shape {data_shape(ext)}, chunks "
                    f"{_chunks(ext)}, codecs [{{\"name\": \"packbits\"}}] (no configuration: "
                    f"padding_encoding \"none\"; {ext.bits} bits per element, first element in "
                    f"the lowest bits of byte 0, the last byte zero-padded), no compressor, "
                    f"{_zarrs_text(ext, fill_json)}; {_region_text(ext)}",
                    ext, lanes,
                )  # fmt: skip

            fixture("zarrs", f"{ext.name}_packbits")(packbits)


_register_zarrs()


@fixture("zarrs", "int4_packbits_first_byte_sharded")
def _(store: Path) -> TypeBuilt:
    ext = _ext("int4")
    pb = PackBits(configuration={"padding_encoding": "first_byte", "first_bit": None, "last_bit": None})
    intended, lanes = zarrs_write(ext, store, "types-zarrs-int4-pb-sharded", region=np.s_[0:7, 0:8],
                                  chunks=(3, 5), shards=(6, 10), serializer=pb,
                                  compressors=None)  # fmt: skip
    return TypeBuilt(
        intended,
        "int4 (zarrs pipeline), shape (9, 10), shards (6, 10), inner chunks (3, 5), inner codec "
        "packbits {padding_encoding \"first_byte\", first_bit null, last_bit null} (byte 0 is the "
        "number of padding bits in the last byte), index bytes + crc32c at the end, fill_value "
        f"-3; {_region_text(ext)}",
        ext, lanes,
    )  # fmt: skip


@fixture("zarrs", "bfloat16_big_endian_zstd_sharded")
def _(store: Path) -> TypeBuilt:
    ext = _ext("bfloat16")
    intended, lanes = zarrs_write(ext, store, "types-zarrs-bf16-big-sharded", region=np.s_[0:7, 0:8],
                                  chunks=(3, 5), shards=(6, 10),
                                  serializer=zc.BytesCodec(endian="big"),
                                  compressors=[zc.ZstdCodec(level=3)])  # fmt: skip
    return TypeBuilt(
        intended,
        "bfloat16 (zarrs pipeline), shape (9, 10), shards (6, 10), inner chunks (3, 5), inner "
        "codecs bytes endian big + zstd level 3, fill_value \"0xffc1\" (NaN with payload); "
        f"{_region_text(ext)}",
        ext, lanes,
    )  # fmt: skip


@fixture("zarrs", "complex_float16_big_endian_zstd")
def _(store: Path) -> TypeBuilt:
    ext = _ext("complex_float16")
    intended, lanes = zarrs_write(ext, store, "types-zarrs-cf16-big", region=np.s_[0:7, 0:8],
                                  shape=(8, 12), chunks=(4, 6), serializer=zc.BytesCodec(endian="big"),
                                  compressors=[zc.ZstdCodec(level=3)])  # fmt: skip
    return TypeBuilt(
        intended,
        "complex_float16 (zarrs pipeline), shape (8, 12), chunks (4, 6) (no clipped edge "
        "chunk: zarrs 0.23.8 reads the elements of a clipped big-endian complex_float16 edge "
        "chunk with real and imaginary parts swapped, although it writes them right), bytes "
        "endian big "
        "(each float16 component swapped on its own: re then im, each big-endian) + zstd "
        "level 3, fill_value [2.5, -0.0]; [0:7, 0:8] written (row 7 and columns 8-11 are fill): float16 specials (+-inf, NaN, "
        "NaN payload, -NaN, -0.0, smallest subnormal, max) then random values in both "
        "components",
        ext, lanes,
    )  # fmt: skip


# ---------------------------------------------------------------------------
# refusals the README records (checked on every run)
# ---------------------------------------------------------------------------


def check_refusals() -> dict[str, str]:
    """What the producers refuse, so README's table stays true."""
    import tempfile

    found: dict[str, str] = {}
    for name in TS_REFUSED:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                g.ts_array(Path(tmp) / "t.zarr", shape=(2,), chunks=(2,), dtype=name)
            except Exception as exc:  # the expected outcome
                found[f"tensorstore zarr3 {name}"] = _failure(exc)
            else:
                check(False, f"tensorstore now accepts {name}: add fixtures")
    for name in ZARRS_REFUSED:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                zarrs_write(_ext(name), Path(tmp) / "t.zarr",
                            "refusal", region=np.s_[0:2, 0:2], chunks=(2, 2), compressors=None)  # fmt: skip
            except Exception as exc:  # the expected outcome
                found[f"zarrs {name}"] = _failure(exc)
            else:
                check(False, f"the zarrs pipeline now writes {name}: add fixtures")
    for dt in (np.dtype([("a", "<i2", (3,))]),):
        for fmt in (3, 2):
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    zarr.create_array(f"{tmp}/t.zarr", shape=(2,), dtype=dt, chunks=(2,), zarr_format=fmt)
                except Exception as exc:  # expected: zarr-python has no subarray fields
                    found[f"zarr-python V{fmt} subarray field"] = f"{type(exc).__name__}"
                else:
                    check(False, f"zarr-python V{fmt} now writes subarray fields: add fixtures")
    return found


def main() -> None:
    check(zarr.__version__ == g.ZARR_VERSION, f"zarr {zarr.__version__} != {g.ZARR_VERSION}")
    for dist, want in (("tensorstore", g.TENSORSTORE_VERSION), ("zarrs", g.ZARRS_VERSION),
                       ("ml_dtypes", ML_DTYPES_VERSION)):  # fmt: skip
        have = importlib.metadata.version(dist)
        check(have == want, f"{dist} {have} != {want}")
    refusals = check_refusals()
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir()
    with g.gzip_mtime_zero():
        for producer, name, builder in FIXTURES:
            build(producer, name, builder)
    for key, text in sorted(refusals.items()):
        print(f"refused: {key}: {text}", file=sys.stderr)
    files = [p for p in ROOT.rglob("*") if p.is_file()]
    nbytes = sum(p.stat().st_size for p in files)
    print(f"{len(FIXTURES)} fixtures, {len(files)} files, {nbytes} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
