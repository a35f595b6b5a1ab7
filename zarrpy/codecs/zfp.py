"""zfp array-to-bytes codec (zarrs' registered ``zfp``), via libzfp from zfpy.

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/zarrs.zfp
(and https://codec.zarrs.dev/array_to_bytes/zfp)
V3 name: ``zfp`` (aliases ``zarrs.zfp`` and the codec URL); no V2 form here
(numcodecs' ``zfpy``, which writes a zfp header, is ``numcodecs.zfpy``).

Configuration: ``mode`` and its parameters, as in zfp's documentation:
``{"mode": "fixed_rate", "rate": 10.5}``, ``{"mode": "fixed_precision",
"precision": 19}``, ``{"mode": "fixed_accuracy", "tolerance": 0.05}``,
``{"mode": "reversible"}``, ``{"mode": "expert", "minbits": 1, "maxbits":
13, "maxprec": 19, "minexp": -2}``. The names ``fixedrate`` /
``fixedprecision`` / ``fixedaccuracy`` that old zarrs versions wrote are read
and written back with the underscore.

The stream is the one zarrs writes: no zfp header (the metadata says it all),
compressed with the zfp library the zfpy wheel ships
(:mod:`zarrpy.codecs._zfp_lib`), fixed-rate mode set up as zarrs does it
(``dims`` 3 whatever the chunk). Chunks of 1-4 dimensions are zfp fields of
that shape (x fastest); a chunk of more dimensions drops its size-1
dimensions first (more than 4 left is an error); a 0-d chunk is one value.

Data types: float32, float64, int32, int64 natively; uint32 / uint64 clamp to
the signed range; int8 / uint8 / int16 / uint16 are promoted to int32 as zfp's
utility functions (and zarrs) do. ``fixed_accuracy`` takes floats only.

>>> ZfpCodec.from_config({"mode": "fixedrate", "rate": 8}).to_config()
{'mode': 'fixed_rate', 'rate': 8}
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Mapping

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..errors import CodecError
from . import _zfp_lib as zfplib
from ._config import check_choice, check_int, check_keys
from .abc import ArrayToBytesCodec, ChunkSpec

_NAME = "zfp"
_PARAMS: dict[str, tuple[str, ...]] = {
    "reversible": (),
    "fixed_rate": ("rate",),
    "fixed_precision": ("precision",),
    "fixed_accuracy": ("tolerance",),
    "expert": ("minbits", "maxbits", "maxprec", "minexp"),
}
_LEGACY = {"fixedrate": "fixed_rate", "fixedprecision": "fixed_precision", "fixedaccuracy": "fixed_accuracy"}
_MAX_BITS = 16658
"""zfp's ZFP_MAX_BITS: the most bits one block may take."""
_RATE_DIMS = 3
"""zarrs sets fixed rates for 3-d blocks (4**3 values) whatever the chunk's dimensionality."""
_MAX_PREC = 64
_MIN_EXP = -1074


class _Promotion:
    """How one numpy type travels through zfp: the zfp type, and the maps
    to and from its array (zarrs' promotions, zfp's utility functions)."""

    def __init__(
        self,
        zfp_type: int,
        to_zfp: Callable[[np.ndarray], np.ndarray] | None = None,
        from_zfp: Callable[[np.ndarray], np.ndarray] | None = None,
    ):
        self.zfp_type, self.to_zfp, self.from_zfp = zfp_type, to_zfp, from_zfp

    @property
    def numpy(self) -> np.dtype:
        return np.dtype({zfplib.TYPE_INT32: "i4", zfplib.TYPE_INT64: "i8",
                         zfplib.TYPE_FLOAT: "f4", zfplib.TYPE_DOUBLE: "f8"}[self.zfp_type])


def _shifted(shift: int, offset: int, lo: int, hi: int, dtype: str) -> _Promotion:
    """Small ints as int32: ``(v - offset) << shift``, back with ``>> shift``, clamped."""
    return _Promotion(
        zfplib.TYPE_INT32,
        lambda a: (a.astype(np.int32) - offset) << shift,
        lambda a: np.clip((a >> shift) + offset, lo, hi).astype(dtype),
    )


_PROMOTIONS: dict[str, _Promotion] = {
    "float32": _Promotion(zfplib.TYPE_FLOAT),
    "float64": _Promotion(zfplib.TYPE_DOUBLE),
    "int32": _Promotion(zfplib.TYPE_INT32),
    "int64": _Promotion(zfplib.TYPE_INT64),
    "int8": _shifted(23, 0, -0x80, 0x7F, "i1"),
    "uint8": _shifted(23, 0x80, 0, 0xFF, "u1"),
    "int16": _shifted(15, 0, -0x8000, 0x7FFF, "i2"),
    "uint16": _shifted(15, 0x8000, 0, 0xFFFF, "u2"),
    "uint32": _Promotion(
        zfplib.TYPE_INT32,
        lambda a: np.minimum(a, 2**31 - 1).astype(np.int32),
        lambda a: np.maximum(a, 0).astype(np.uint32),
    ),
    "uint64": _Promotion(
        zfplib.TYPE_INT64,
        lambda a: np.minimum(a, np.uint64(2**63 - 1)).astype(np.int64),
        lambda a: np.maximum(a, 0).astype(np.uint64),
    ),
}


class ZfpCodec(ArrayToBytesCodec):
    """Compress a chunk with zfp, headerless, as zarrs does."""

    name = _NAME
    __slots__ = ("mode", "params")

    def __init__(self, mode: str, **params: Any):
        mode = _LEGACY.get(mode, mode)
        self.mode: str = check_choice(_NAME, "mode", mode, tuple(_PARAMS))
        expected = _PARAMS[mode]
        missing = [p for p in expected if p not in params]
        unknown = sorted(set(params) - set(expected))
        if missing or unknown:
            raise CodecError(
                f"codec 'zfp': mode {mode!r} takes {list(expected)}; missing {missing}, unknown {unknown}"
            )
        self.params: dict[str, Any] = {p: _check_param(p, params[p]) for p in expected}
        if mode == "fixed_rate":
            bits = math.floor(4**_RATE_DIMS * self.params["rate"] + 0.5)
            if not 1 <= bits <= _MAX_BITS:
                raise CodecError(
                    f"codec 'zfp': 'rate' {self.params['rate']!r} gives {bits} bits per block; zfp takes 1 to "
                    f"{_MAX_BITS} (rate {1 / 2 / 4**_RATE_DIMS:g} to {_MAX_BITS / 4**_RATE_DIMS:g})"
                )
        if mode == "expert":
            p = self.params
            if not p["minbits"] <= p["maxbits"] <= _MAX_BITS:
                raise CodecError(f"codec 'zfp': expert mode needs minbits <= maxbits <= {_MAX_BITS}, got "
                                 f"minbits {p['minbits']}, maxbits {p['maxbits']}")
            if not 1 <= p["maxprec"] <= _MAX_PREC:
                raise CodecError(f"codec 'zfp': 'maxprec' must be 1 to {_MAX_PREC}, got {p['maxprec']}")
            if p["minexp"] < _MIN_EXP:
                raise CodecError(f"codec 'zfp': 'minexp' must be at least {_MIN_EXP}, got {p['minexp']}")

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> ZfpCodec:
        config = check_keys(_NAME, config, required=("mode",), optional=tuple(p for ps in _PARAMS.values() for p in ps))
        return cls(config["mode"], **{k: v for k, v in config.items() if k != "mode"})

    def to_config(self) -> dict[str, Any]:
        return {"mode": self.mode, **self.params}

    def _zfp_mode(self) -> zfplib.Mode:
        return zfplib.Mode(self.mode, *self.params.values())

    def _promotion(self, spec: ChunkSpec) -> _Promotion:
        dtype = spec.dtype.numpy
        key = "int64" if dtype.kind in "mM" else dtype.name
        promotion = _PROMOTIONS.get(key) if not spec.dtype.is_variable else None
        if promotion is None:
            raise CodecError(
                f"codec 'zfp': data type {spec.dtype.name!r} is not supported "
                "(float32/64 and 8- to 64-bit integers only)"
            )
        if self.mode == "fixed_accuracy" and promotion.zfp_type not in (zfplib.TYPE_FLOAT, zfplib.TYPE_DOUBLE):
            raise CodecError(f"codec 'zfp': mode 'fixed_accuracy' needs float data, got {spec.dtype.name!r}")
        return promotion

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        """The spec, with the most bytes zfp can write for it (a high fixed
        rate stores more than the elements: the decoders after zfp must take it)."""
        promotion = self._promotion(spec)
        shape = zfp_shape(spec.shape)
        if spec.size == 0:
            return spec
        bound = zfplib.maximum_size(shape, promotion.numpy, promotion.zfp_type, self._zfp_mode())
        return dataclasses.replace(spec, encoded_nbytes_bound=bound)

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> bytes:
        promotion = self._promotion(spec)
        if spec.size == 0:
            return b""
        arr = np.ascontiguousarray(chunk.array)
        if spec.dtype.numpy.kind in "mM":
            arr = arr.view(np.int64)
        if promotion.to_zfp is not None:
            arr = promotion.to_zfp(arr)
        return zfplib.compress(arr.reshape(zfp_shape(spec.shape)), promotion.zfp_type, self._zfp_mode())

    def decode(self, data: bytes, spec: ChunkSpec) -> ArrayBytes:
        """Decode a headerless zfp stream; ChunkDecodeError if it is corrupt or short."""
        promotion = self._promotion(spec)
        out = np.zeros(zfp_shape(spec.shape) if spec.size else (0,), dtype=promotion.numpy)
        if spec.size:
            zfplib.decompress(data, out, promotion.zfp_type, self._zfp_mode())
        if promotion.from_zfp is not None:
            out = promotion.from_zfp(out)
        return ArrayBytes.from_array(out.view(spec.dtype.numpy).reshape(spec.shape))


def zfp_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The zfp field shape of a chunk: itself for 1-4 dimensions; without its
    size-1 dimensions when it has more (the spec's rule); ``(1,)`` for 0-d."""
    if len(shape) > 4:
        shape = tuple(s for s in shape if s != 1)
        if len(shape) > 4:
            raise CodecError("codec 'zfp': chunks of more than 4 dimensions of size > 1 are not supported")
    return shape or (1,)


def _check_param(name: str, value: Any) -> Any:
    if name in ("rate", "tolerance"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise CodecError(f"codec 'zfp': {name!r} must be a non-negative number, got {value!r}")
        return value
    if name == "minexp":
        return check_int(_NAME, name, value, -(2**31), 2**31 - 1)
    if name == "precision":
        return check_int(_NAME, name, value, 1, _MAX_PREC)
    return check_int(_NAME, name, value, 0, _MAX_BITS if name in ("minbits", "maxbits") else _MAX_PREC)


__all__ = ["ZfpCodec", "zfp_shape"]
