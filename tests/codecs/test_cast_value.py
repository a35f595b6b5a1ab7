"""cast_value against the registry's rules, element by element.

``reference_cast`` is written from the spec text (zarr-extensions
``codecs/cast_value/README.md``) in exact rational arithmetic, one Python
value at a time, sharing nothing with ``zarrpy.codecs._value_cast`` but the
types' parameters (ml_dtypes' ``finfo``): scalar_map first (first entry
wins, NaN keys match NaN), then exact values, then rounding to the output's
precision, then the out-of-range rule on the rounded value; NaN and
infinities only where the output has them. Hypothesis drives every integer
width and the float types at their edges (NaN, +-inf, +-0, subnormals, the
extremes of each type, ties).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.codecs.contract import spec_of
from zarrpy.codecs.cast_value import CastValueCodec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import ChunkDecodeError, CodecError

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "int4", "uint4", "int2", "uint2"]
FLOATS = ["float16", "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float4_e2m1fn",
          "float8_e8m0fnu"]  # fmt: skip
MODES = ["nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"]


def np_dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


class Fail(Exception):
    pass


# -- the reference, from the spec text ------------------------------------------


def _int_range(name: str) -> tuple[int, int]:
    info = ml_dtypes.iinfo(np_dtype(name)) if name in ("int2", "int4", "uint2", "uint4") else np.iinfo(name)
    return int(info.min), int(info.max)


def _round_to_int(x: Fraction, mode: str) -> int:
    f = math.floor(x)
    frac = x - f
    if frac == 0:
        return f
    if mode == "towards-zero":
        return f if x > 0 else f + 1
    if mode == "towards-positive":
        return f + 1
    if mode == "towards-negative":
        return f
    if frac != Fraction(1, 2):
        return f + 1 if frac > Fraction(1, 2) else f
    if mode == "nearest-away":
        return f + 1 if x > 0 else f
    return f if f % 2 == 0 else f + 1  # nearest-even


class FloatType:
    def __init__(self, name: str):
        dt = np_dtype(name)
        fi = ml_dtypes.finfo(dt)
        self.dtype = dt
        self.p = int(fi.nmant) + 1
        self.emin = int(math.log2(float(fi.smallest_normal)))
        self.max = Fraction(float(fi.max))
        self.subnormal = float(fi.smallest_subnormal) < float(fi.smallest_normal)
        self.min_positive = Fraction(float(fi.smallest_subnormal))
        probe = np.array([np.inf, np.nan, -1.0, 0.0]).astype(dt).astype(float)
        self.inf, self.nan = bool(np.isinf(probe[0])), bool(np.isnan(probe[1]))
        self.negative, self.zero = probe[2] == -1.0, probe[3] == 0.0
        self.negative_zero = bool(np.signbit(np.array([-0.0]).astype(dt).astype(float))[0])

    def round(self, x: Fraction, mode: str) -> Fraction:
        """x rounded to this type's precision (exponent unbounded above)."""
        if x == 0:
            return x
        e = math.floor(math.log2(abs(x)))
        while Fraction(2) ** e > abs(x):
            e -= 1
        while Fraction(2) ** (e + 1) <= abs(x):
            e += 1
        if self.subnormal:
            e = max(e, self.emin)
        quantum = Fraction(2) ** (e - (self.p - 1))
        return _round_to_int(x / quantum, mode) * quantum


def reference_cast(value: Any, source: str, target: str, mode: str, oor: str | None, scalar_map=()) -> Any:
    """One value cast by the spec's procedure; a Python int / float (or Fail)."""
    is_float_source = source in FLOATS
    v = float(value) if is_float_source else int(value)
    for key, out in scalar_map:  # 1. the scalar map, first occurrence wins
        if (isinstance(key, float) and math.isnan(key) and isinstance(v, float) and math.isnan(v)) or key == v:
            return out
    if target in INTS:
        lo, hi = _int_range(target)
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            raise Fail("NaN/inf into an integer type")
        r = _round_to_int(Fraction(v), mode)
        if lo <= r <= hi:
            return r
        if oor == "clamp":
            return lo if r < lo else hi
        if oor == "wrap":
            return (r - lo) % (hi - lo + 1) + lo
        raise Fail("out of range")
    t = FloatType(target)
    if isinstance(v, float) and math.isnan(v):
        if t.nan:
            return math.nan
        raise Fail("NaN")
    if isinstance(v, float) and math.isinf(v):
        if t.inf:
            return v
        raise Fail("inf")
    negative = math.copysign(1.0, v) < 0 if isinstance(v, float) else v < 0
    r = t.round(Fraction(v), mode)
    outside = abs(r) > t.max or (not t.negative and (negative and (r != 0 or not t.zero))) or (not t.zero and abs(r) < t.min_positive)
    if outside:
        if oor != "clamp":
            raise Fail("out of range")
        if not t.negative and (negative or abs(r) < t.min_positive):
            return float(t.min_positive)
        big = math.inf if t.inf else float(t.max)
        return -big if negative else big
    out = float(r)
    if out == 0.0:
        return -0.0 if negative and t.negative_zero else 0.0
    return out


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return int(a) == int(b)


def zarrpy_cast(values: np.ndarray, source: str, target: str, mode: str, oor: str | None, scalar_map=None):
    config: dict[str, Any] = {"data_type": target, "rounding": mode}
    if oor:
        config["out_of_range"] = oor
    if scalar_map:
        config["scalar_map"] = {"encode": scalar_map}
    codec = CastValueCodec.from_config(config)
    return codec.encode(ArrayBytes.from_array(values), spec_of(source, values.shape)).array


# -- values at the edges -----------------------------------------------------------


def edge_values(name: str) -> st.SearchStrategy[Any]:
    dt = np_dtype(name)
    if name in INTS:
        lo, hi = _int_range(name)
        return st.one_of(st.sampled_from([lo, hi, 0, 1, -1 if lo < 0 else 2, lo + 1, hi - 1]), st.integers(lo, hi))
    fi = ml_dtypes.finfo(dt)
    special = [0.0, -0.0, float(fi.max), -float(fi.max), float(fi.smallest_normal), float(fi.smallest_subnormal),
               0.5, 1.5, 2.5, -2.5, 127.5, 128.0, 255.5, 256.0, 65519.0, 65520.0, 2.0**63, 2.0**64, -(2.0**63), 1e300]
    special += [math.nan, math.inf, -math.inf] if dt.itemsize >= 2 else []
    drawn = st.floats(allow_nan=True, allow_infinity=True, width=64 if dt == np.float64 else 32)
    return st.one_of(st.sampled_from(special), drawn).map(lambda x: np.array([x]).astype(dt)[0])


SOURCES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64", "bfloat16"]
TARGETS = INTS + FLOATS


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_every_value_follows_the_spec(data):
    source = data.draw(st.sampled_from(SOURCES), label="source")
    target = data.draw(st.sampled_from(TARGETS), label="target")
    mode = data.draw(st.sampled_from(MODES), label="rounding")
    oor = data.draw(st.sampled_from([None, "clamp"] + (["wrap"] if target in INTS else [])), label="out_of_range")
    values = data.draw(st.lists(edge_values(source), min_size=1, max_size=6), label="values")
    array = np.array(values).astype(np_dtype(source)) if source in FLOATS or source == "bfloat16" else np.array(values, dtype=source)
    expected = []
    for v in array:
        try:
            expected.append(reference_cast(v, source if source != "bfloat16" else "float32", target, mode, oor))
        except Fail:
            expected.append(Fail)
    if Fail in expected:
        with pytest.raises(CodecError, match="codec 'cast_value'"):
            zarrpy_cast(array, source, target, mode, oor)
        return
    got = zarrpy_cast(array, source, target, mode, oor)
    assert got.dtype == np_dtype(target)
    for g, e, v in zip(got, expected, array):
        gv = float(np.asarray(g).astype(float)) if target in FLOATS else int(np.asarray(g).astype(np.int64) if target != "uint64" else g)
        assert same(gv, e), f"{v!r} ({source}) -> {target} {mode} {oor}: got {gv!r}, spec says {e!r}"


@pytest.mark.parametrize("target", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "int2", "int4", "uint2", "uint4"])
def test_every_integer_width_wraps_and_clamps(target):
    lo, hi = _int_range(target)
    n = hi - lo + 1
    values = np.array([lo - 1, hi + 1, lo - n - 3, hi + 2 * n + 5, 0.0, float(hi) + 0.5], dtype=np.float64)
    for oor in ("wrap", "clamp"):
        got = zarrpy_cast(values, "float64", target, "towards-negative", oor)
        for g, v in zip(got, values):
            assert int(np.asarray(g).astype(object)) == reference_cast(v, "float64", target, "towards-negative", oor)
    with pytest.raises(CodecError, match="out of range"):
        zarrpy_cast(values, "float64", target, "towards-negative", None)


def test_the_specs_examples():
    # 128.0 to int8: error / clamp 127 / wrap -128
    x = np.array([128.0])
    with pytest.raises(CodecError):
        zarrpy_cast(x, "float64", "int8", "nearest-even", None)
    assert zarrpy_cast(x, "float64", "int8", "nearest-even", "clamp").tolist() == [127]
    assert zarrpy_cast(x, "float64", "int8", "nearest-even", "wrap").tolist() == [-128]
    # int16 wrapping: 32768 -> -32768, 32769 -> -32767, -32769 -> 32767
    assert zarrpy_cast(np.array([32768, 32769, -32769], dtype="int32"), "int32", "int16", "nearest-even", "wrap").tolist() == [-32768, -32767, 32767]
    # the NumPy-compatibility example: NaN, +Infinity, -Infinity -> 0; towards-zero; wrap
    got = zarrpy_cast(np.array([np.nan, np.inf, -np.inf, 3.9, 300.7, -1.5]), "float64", "uint8", "towards-zero", "wrap",
                      [["NaN", 0], ["+Infinity", 0], ["-Infinity", 0]])
    assert got.tolist() == [0, 0, 0, 3, 44, 255]


def test_rounding_comes_before_the_range_check():
    # float16's max is 65504, the next step 65536: 65519 rounds into range, 65520 (a tie, to even) out
    got = zarrpy_cast(np.array([65519.0]), "float64", "float16", "nearest-even", None)
    assert got.tolist() == [65504.0]
    with pytest.raises(CodecError):
        zarrpy_cast(np.array([65520.0]), "float64", "float16", "nearest-even", None)
    assert np.isinf(zarrpy_cast(np.array([65520.0]), "float64", "float16", "nearest-even", "clamp")).all()
    with pytest.raises(CodecError):  # towards zero still lands past the max (69984)
        zarrpy_cast(np.array([70000.0]), "float64", "float16", "towards-zero", None)


def test_int64_and_uint64_round_exactly():
    got = zarrpy_cast(np.array([2**64 - 1], dtype="uint64"), "uint64", "float32", "towards-zero", None)
    assert int(got[0]) == 2**64 - 2**40
    got = zarrpy_cast(np.array([2**53 + 1], dtype="int64"), "int64", "float64", "towards-positive", None)
    assert int(got[0]) == 2**53 + 2
    assert zarrpy_cast(np.array([-(2**63)], dtype="int64"), "int64", "uint64", "nearest-even", "wrap").tolist() == [2**63]


def test_nan_and_infinity_need_a_home():
    for target in ("uint8", "float4_e2m1fn"):
        with pytest.raises(CodecError, match="NaN|nan"):
            zarrpy_cast(np.array([np.nan]), "float64", target, "nearest-even", "clamp")
    with pytest.raises(CodecError, match="inf"):
        zarrpy_cast(np.array([np.inf]), "float64", "float8_e4m3fn", "nearest-even", "clamp")
    assert np.isnan(zarrpy_cast(np.array([np.nan]), "float64", "float8_e4m3fn", "nearest-even", None).astype(float)).all()
    assert np.signbit(zarrpy_cast(np.array([-0.0]), "float64", "float16", "nearest-even", None)).all()


def test_scalar_map_first_entry_wins_and_nan_keys_match_nan():
    values = np.array([2.0, np.nan, 5.5])
    got = zarrpy_cast(values, "float64", "uint8", "nearest-even", None, [[2.0, 9], [2.0, 8], ["NaN", 7]])
    assert got.tolist() == [9, 7, 6]


def test_decode_casts_back_with_the_decode_map():
    codec = CastValueCodec.from_config({"data_type": "uint8", "scalar_map": {"decode": [[255, "NaN"]]}})
    spec = spec_of("float32", (3,))
    out = codec.decode(ArrayBytes.from_array(np.array([1, 255, 7], dtype="uint8")), spec).array
    assert out.dtype == np.float32 and out[0] == 1 and np.isnan(out[1]) and out[2] == 7
    codec = CastValueCodec.from_config({"data_type": "float64"})
    with pytest.raises(ChunkDecodeError, match="codec 'cast_value'"):
        codec.decode(ArrayBytes.from_array(np.array([300.0])), spec_of("uint8", (1,)))


def test_the_fill_value_is_cast_and_must_survive_the_round_trip():
    codec = CastValueCodec.from_config({"data_type": "int16"})
    encoded = codec.resolve(spec_of("float32", (4,), fill=-3.0))
    assert encoded.dtype.name == "int16" and int(encoded.fill_value) == -3
    with pytest.raises(CodecError, match="fill value"):
        codec.resolve(spec_of("float32", (4,), fill=0.5))  # 0.5 -> 0 -> 0.0
    with pytest.raises(CodecError, match="fill value"):
        CastValueCodec.from_config({"data_type": "uint8"}).resolve(spec_of("int16", (4,), fill=-1))


def test_chunks_round_trip_through_a_chain_and_decode_partially():
    codec = CastValueCodec.from_config({"data_type": "int32"})
    spec = spec_of("float64", (6, 5), fill=2.0)
    bound = CodecChain([codec, codec_from_json({"name": "bytes", "configuration": {"endian": "little"}})]).bind(spec)
    data = np.arange(30, dtype=np.float64).reshape(6, 5) - 7
    encoded = bound.encode(ArrayBytes.from_array(data))
    assert encoded == data.astype("<i4").tobytes()
    from zarrpy.codecs.partial import BytesReader

    assert bound.capabilities.partial_decode
    part = bound.partial_decoder(BytesReader(encoded)).decode_selection((slice(1, 3), np.array([4, 0])))
    assert part.array.tolist() == data[1:3][:, [4, 0]].tolist()


@pytest.mark.parametrize(
    "config, field",
    [
        ({}, "data_type"),
        ({"data_type": "uint8", "rounding": "up"}, "rounding"),
        ({"data_type": "uint8", "out_of_range": "saturate"}, "out_of_range"),
        ({"data_type": "float32", "out_of_range": "wrap"}, "out_of_range"),
        ({"data_type": "uint8", "extra": 1}, "extra"),
        ({"data_type": "string"}, "data_type"),
        ({"data_type": "no_such_type"}, "data_type"),
        ({"data_type": "uint8", "scalar_map": {"encode": [[1]]}}, "scalar_map.encode[0]"),
        ({"data_type": "uint8", "scalar_map": {"sideways": []}}, "scalar_map"),
        ({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 300]]}}, "scalar_map.encode[0][1]"),
    ],
)
def test_bad_configuration_names_codec_and_field(config, field):
    with pytest.raises(CodecError, match=f"codec 'cast_value'.*{field.split('[')[0]}"):
        codec_from_json({"name": "cast_value", "configuration": config})


def test_unsupported_array_types_are_refused_at_binding():
    codec = CastValueCodec.from_config({"data_type": "uint8"})
    for dtype in ("bool", "complex64", "string"):
        with pytest.raises(CodecError, match="codec 'cast_value'.*not supported"):
            codec.resolve(spec_of(dtype, (2,)))
    with pytest.raises(CodecError, match=r"scalar_map.encode\[0\]\[0\]"):
        CastValueCodec.from_config({"data_type": "uint8", "scalar_map": {"encode": [["NaN", 0]]}}).resolve(spec_of("int16", (2,)))
