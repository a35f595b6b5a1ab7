"""cast_value array-to-array codec (zarr-extensions; zarr-python 3.2+ writes it).

Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value
V3 name: ``cast_value``; no V2 form.

Encoding casts every element's *value* to ``data_type`` (no reinterpretation
of bits); decoding casts back to the array's type, by the same procedure
(:mod:`zarrpy.codecs._value_cast`): ``scalar_map`` entries first, then values
exact in the other type, then ``rounding`` (default ``"nearest-even"``)
followed by the ``out_of_range`` rule (absent: an error; ``"clamp"``;
``"wrap"``, for integer targets only). NaN and infinities go where the other
type has them and are an error elsewhere unless ``scalar_map`` maps them.

Both types must model real numbers: ``int2``..``int64``, ``uint2``..``uint64``,
``float16``/``32``/``64``, ``bfloat16`` and the 8/6/4-bit floats.

The fill value is cast too (the encoded chunk's fill is the array's, cast);
an array whose fill value does not come back as itself through encode and
decode is refused when it is opened, as the spec requires ("If the fill value
cannot survive a round-trip cast, implementations MUST treat this as an
error").

Configuration (``rounding``, ``out_of_range`` and ``scalar_map`` optional)::

    {"data_type": "uint8", "rounding": "towards-zero", "out_of_range": "wrap",
     "scalar_map": {"encode": [["NaN", 0], ["+Infinity", 0]]}}

``scalar_map`` scalars use each side's fill-value JSON (encode: array type ->
``data_type``; decode: ``data_type`` -> array type); a repeated key keeps its
first entry. ``out_of_range: "error"`` (an earlier draft of the spec) reads as
absent.

>>> CastValueCodec.from_config({"data_type": "uint8", "out_of_range": "clamp"}).to_config()
{'data_type': 'uint8', 'out_of_range': 'clamp'}
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..core.array_bytes import ArrayBytes
from ..core.dtypes import DataType
from ..errors import ChunkDecodeError, CodecError, MetadataError
from ._config import check_choice, check_keys
from ._elementwise import ElementwiseDecoder
from ._value_cast import OUT_OF_RANGE_MODES, ROUNDING_MODES, CastError, NumberFormat, cast_values, number_format
from .abc import ArrayToArrayCodec, ChunkSpec
from .partial import PARTIAL, ArrayPartialDecoder, CodecCapabilities

NAME = "cast_value"
_REAL_TYPES = "integer and floating-point types (int2-int64, uint2-uint64, float16/32/64, bfloat16, 8/6/4-bit floats)"


@dataclass(frozen=True)
class _Plan:
    """The codec bound to one array type: both formats and both parsed maps."""

    source: NumberFormat
    target: NumberFormat
    encode_map: tuple[tuple[Any, Any], ...]
    decode_map: tuple[tuple[Any, Any], ...]


class CastValueCodec(ArrayToArrayCodec):
    """Cast element values to ``data_type`` (and back when decoding)."""

    name = NAME
    __slots__ = ("data_type", "_data_type_json", "rounding", "out_of_range", "scalar_map", "_target", "_plans")

    def __init__(
        self,
        data_type: Any,
        rounding: str | None = None,
        out_of_range: str | None = None,
        scalar_map: Mapping[str, Any] | None = None,
    ):
        if isinstance(data_type, DataType):
            data_type = data_type.to_json()
        try:
            self.data_type = DataType.from_json(data_type)
        except MetadataError as exc:
            raise CodecError(f"codec {NAME!r}: 'data_type': {exc}") from None
        self._data_type_json = copy.deepcopy(data_type)
        target = _format(self.data_type, "'data_type'")
        self.rounding = None if rounding is None else check_choice(NAME, "rounding", rounding, ROUNDING_MODES)
        self.out_of_range = (
            None if out_of_range is None else check_choice(NAME, "out_of_range", out_of_range, (*OUT_OF_RANGE_MODES, "error"))
        )
        if self.out_of_range == "wrap" and not target.is_int:
            raise CodecError(
                f"codec {NAME!r}: 'out_of_range' \"wrap\" needs an integer 'data_type', got {self.data_type.name!r}"
            )
        self.scalar_map = None if scalar_map is None else _check_scalar_map(scalar_map)
        self._target = target
        for direction, at in (("encode", 1), ("decode", 0)):  # the data_type side of each map, checked now
            for i, entry in enumerate(self._entries(direction)):
                _scalar(self.data_type, entry[at], f"'scalar_map.{direction}[{i}][{at}]'")
        self._plans: dict[DataType, _Plan] = {}

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> CastValueCodec:
        config = check_keys(NAME, config, required=("data_type",), optional=("rounding", "out_of_range", "scalar_map"))
        return cls(config["data_type"], config.get("rounding"), config.get("out_of_range"), config.get("scalar_map"))

    def to_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"data_type": copy.deepcopy(self._data_type_json)}
        if self.rounding is not None:
            config["rounding"] = self.rounding
        if self.out_of_range is not None:
            config["out_of_range"] = self.out_of_range
        if self.scalar_map is not None:
            config["scalar_map"] = copy.deepcopy(self.scalar_map)
        return config

    # -- binding ---------------------------------------------------------
    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        plan = self._plan(spec.dtype)
        fill = np.asarray(spec.fill_value if spec.fill_value is not None else spec.dtype.default_fill(), spec.dtype.numpy)
        try:
            encoded = self._cast(fill.reshape(1), plan.source, plan.target, plan.encode_map)
            back = self._cast(encoded, plan.target, plan.source, plan.decode_map)
        except CastError as exc:
            raise CodecError(f"codec {NAME!r}: the fill value cannot be cast: {exc}") from None
        if not _same_value(back[0], fill.reshape(1)[0]):
            raise CodecError(
                f"codec {NAME!r}: the fill value {_show(fill)} does not survive the cast to "
                f"{self.data_type.name!r} and back (it decodes to {_show(back[0])})"
            )
        return ChunkSpec(spec.shape, self.data_type, encoded[0])

    def encode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        plan = self._plan(spec.dtype)
        try:
            return ArrayBytes.from_array(self._cast(chunk.array, plan.source, plan.target, plan.encode_map))
        except CastError as exc:
            raise CodecError(f"codec {NAME!r}: cannot encode to {self.data_type.name!r}: {exc}") from None

    def decode(self, chunk: ArrayBytes, spec: ChunkSpec) -> ArrayBytes:
        return self._decode_values(chunk, self._plan(spec.dtype))

    @property
    def capabilities(self) -> CodecCapabilities:
        return PARTIAL

    def partial_decoder(self, input: ArrayPartialDecoder, spec: ChunkSpec) -> ArrayPartialDecoder:
        """Each element decodes alone: ask ``input`` for the same selection, cast it."""
        plan = self._plan(spec.dtype)
        return ElementwiseDecoder(input, lambda part: self._decode_values(part, plan))

    # -- helpers -----------------------------------------------------------
    def _decode_values(self, chunk: ArrayBytes, plan: _Plan) -> ArrayBytes:
        try:
            return ArrayBytes.from_array(self._cast(chunk.array, plan.target, plan.source, plan.decode_map))
        except CastError as exc:
            raise ChunkDecodeError(f"codec {NAME!r}: cannot decode from {self.data_type.name!r}: {exc}") from None

    def _cast(self, values: np.ndarray, source: NumberFormat, target: NumberFormat, table: Sequence[tuple[Any, Any]]) -> np.ndarray:
        return cast_values(values, source, target, self.rounding or "nearest-even",
                           None if self.out_of_range == "error" else self.out_of_range, table)  # fmt: skip

    def _entries(self, direction: str) -> list[list[Any]]:
        return list((self.scalar_map or {}).get(direction, []))

    def _plan(self, dtype: DataType) -> _Plan:
        """This codec for arrays of ``dtype``: checked and parsed once per type."""
        plan = self._plans.get(dtype)
        if plan is None:
            source = _format(dtype, "the array's data type")
            enc = tuple((_scalar(dtype, k, f"'scalar_map.encode[{i}][0]'"), _scalar(self.data_type, v, ""))
                        for i, (k, v) in enumerate(self._entries("encode")))  # fmt: skip
            dec = tuple((_scalar(self.data_type, k, ""), _scalar(dtype, v, f"'scalar_map.decode[{i}][1]'"))
                        for i, (k, v) in enumerate(self._entries("decode")))  # fmt: skip
            plan = _Plan(source, self._target, enc, dec)
            self._plans[dtype] = plan  # a benign race: every thread computes the same plan
        return plan


def _format(dtype: DataType, what: str) -> NumberFormat:
    fmt = None if dtype.is_variable else number_format(dtype.numpy)
    if fmt is None:
        raise CodecError(f"codec {NAME!r}: {what} {dtype.name!r} is not supported (only {_REAL_TYPES})")
    return fmt


def _scalar(dtype: DataType, value: Any, where: str) -> Any:
    """A scalar-map entry as a value of ``dtype`` (its fill-value JSON)."""
    if isinstance(value, str) and value == "+Infinity":  # the spec's own example spells it so
        value = "Infinity"
    try:
        return dtype.fill_from_json(value)
    except MetadataError as exc:
        raise CodecError(f"codec {NAME!r}: {where or 'scalar_map'}: {exc}") from None


def _check_scalar_map(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise CodecError(f"codec {NAME!r}: 'scalar_map' must be an object, got {value!r}")
    unknown = set(value) - {"encode", "decode"}
    if unknown:
        raise CodecError(f"codec {NAME!r}: 'scalar_map': unknown member(s) {sorted(unknown)}")
    for direction, entries in value.items():
        if not isinstance(entries, (list, tuple)):
            raise CodecError(f"codec {NAME!r}: 'scalar_map.{direction}' must be a list of [input, output] pairs")
        for i, entry in enumerate(entries):
            if not isinstance(entry, (list, tuple)) or len(entry) != 2:
                raise CodecError(f"codec {NAME!r}: 'scalar_map.{direction}[{i}]' must be an [input, output] pair, got {entry!r}")
    return {k: [list(e) for e in v] for k, v in value.items()}


def _same_value(a: Any, b: Any) -> bool:
    fa, fb = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
    if np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu":
        return int(a) == int(b)
    return bool(fa == fb or (np.isnan(fa) and np.isnan(fb)))


def _show(value: Any) -> str:
    return repr(np.asarray(value).reshape(-1)[0].item() if np.asarray(value).dtype.kind in "iuf" else value)


__all__ = ["CastValueCodec"]
