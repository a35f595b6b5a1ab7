"""ml_dtypes extension data types: names <-> dtypes, fill-value JSON (bit-exact),
the bytes codec's stored form, create_array in V3 and V2, and hypothesis round
trips of random bit patterns (fill values included) through the default
codecs and through sharding."""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.bytes import BytesCodec, endian_required
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.dtypes import DataType, bit_size
from zarrpy.core.dtypes import ml as ml_module
from zarrpy.errors import CodecError, MetadataError
from zarrpy.metadata.v2 import encode_fill_value_v2, parse_fill_value_v2


FLOATS = ml_module.FLOAT_NAMES
INTS = ml_module.INT_NAMES
ML_COMPLEX = ("complex_float16", "complex_bfloat16")
STRUCT_COMPLEX = tuple(n for n in ml_module.COMPLEX_NAMES if n not in ML_COMPLEX + ("complex_float32", "complex_float64"))
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


ALL_NAMES = list(FLOATS + INTS + ml_module.COMPLEX_NAMES)


def lane_bits(name: str) -> int:
    """Information bits per lane of the V3 type ``name``."""
    lane = name[len("complex_"):] if name.startswith("complex_") else name
    if lane in ("bfloat16", "float16"):
        return 16
    if lane in ("float32", "float64"):
        return int(lane[5:])
    if lane in INTS:
        return int(lane[-1])
    return int(lane[5])


def canonical(arr: np.ndarray, name: str) -> np.ndarray:
    """The lane bit patterns of ``arr`` with only the information bits kept."""
    bits = lane_bits(name)
    lane = max(1, bits // 8) if bits >= 8 else 1
    raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8).view(_UINT[lane])
    if bits < 8 * lane:
        raw = raw & _UINT[lane]((1 << bits) - 1)
    return raw


def from_bits(raw: bytes, name: str, shape: tuple[int, ...]) -> np.ndarray:
    dt = DataType.from_json(name).numpy
    arr = np.frombuffer(raw, dtype=dt).reshape(shape)
    bits = lane_bits(name)
    if bits < 8:  # canonical in-memory form: the high bits clear
        arr = (np.frombuffer(raw, dtype=np.uint8) & np.uint8((1 << bits) - 1)).view(dt).reshape(shape)
    return arr


# -- names <-> dtypes ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", FLOATS + INTS)
def test_real_names_are_the_ml_dtypes_types(name: str) -> None:
    dt = DataType.from_json(name)
    assert dt.numpy == np.dtype(getattr(ml_dtypes, name))
    assert dt.to_json() == name
    assert DataType.from_numpy(getattr(ml_dtypes, name)).name == name
    assert DataType.from_numpy(name).numpy == dt.numpy  # dtype="bfloat16" by name


@pytest.mark.parametrize(("name", "ml"), [("complex_float16", "complex32"), ("complex_bfloat16", "bcomplex32")])
def test_complex_16_bit_lanes_are_ml_dtypes_complex(name: str, ml: str) -> None:
    dt = DataType.from_json(name)
    assert dt.numpy == np.dtype(getattr(ml_dtypes, ml))
    assert DataType.from_numpy(getattr(ml_dtypes, ml)).name == name


@pytest.mark.parametrize(("name", "numpy_name"), [("complex_float32", "complex64"), ("complex_float64", "complex128")])
def test_zarrs_complex_names_are_numpy_complex(name: str, numpy_name: str) -> None:
    dt = DataType.from_json(name)
    assert dt.numpy == np.dtype(numpy_name) and dt.to_json() == name  # the name read is kept
    assert DataType.from_numpy(np.dtype(numpy_name)).name == numpy_name  # zarrpy writes complex64/128


@pytest.mark.parametrize("name", STRUCT_COMPLEX)
def test_complex_small_float_lanes_are_a_real_imag_struct(name: str) -> None:
    dt = DataType.from_json(name)
    lane = np.dtype(getattr(ml_dtypes, name[len("complex_"):]))
    assert dt.numpy == np.dtype([("real", lane), ("imag", lane)])
    assert dt.to_json() == name
    assert DataType.from_numpy(name).name == name


def test_missing_ml_dtypes_type_names_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("ml_dtypes")
    fake.__version__ = "0.5.0"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ml_dtypes", fake)
    with pytest.raises(MetadataError, match=r"complex_float16.*ml_dtypes >= 0\.6.*0\.5\.0 is installed"):
        DataType.from_json("complex_float16")
    with pytest.raises(MetadataError, match=r"bfloat16.*ml_dtypes >= 0\.6"):
        DataType.from_json("bfloat16")


def test_configuration_refused_naming_the_type() -> None:
    with pytest.raises(MetadataError, match="int4.*takes no configuration"):
        DataType.from_json({"name": "int4", "configuration": {"x": 1}})


# -- fill values: V3 JSON, bit for bit -----------------------------------------------------------

# (name, JSON read, lane bits it means, JSON zarrpy writes for them)
V3_FILLS: list[tuple[str, Any, list[int], Any]] = [
    ("bfloat16", -1.0, [0xBF80], -1.0),
    ("bfloat16", -0.0, [0x8000], -0.0),
    ("bfloat16", "NaN", [0x7FC0], "NaN"),
    ("bfloat16", "0x7fc1", [0x7FC1], "0x7fc1"),  # NaN payload: hex, as tensorstore writes it
    ("bfloat16", "0xffc0", [0xFFC0], "0xffc0"),  # negative NaN
    ("bfloat16", "Infinity", [0x7F80], "Infinity"),
    ("bfloat16", "-Infinity", [0xFF80], "-Infinity"),
    ("bfloat16", 1e-40, [0x0001], 9.183549615799121e-41),  # subnormal, rounded
    ("float8_e4m3fn", 1.0, [0x38], "0x38"),
    ("float8_e4m3fn", "0x38", [0x38], "0x38"),
    ("float8_e4m3fn", -0.0, [0x80], "0x80"),
    ("float8_e4m3fn", "NaN", [0x7F], "0x7f"),
    ("float8_e4m3fn", "0xff", [0xFF], "0xff"),  # the other NaN
    ("float8_e5m2", "Infinity", [0x7C], "0x7c"),
    ("float8_e5m2", "0x7d", [0x7D], "0x7d"),  # signalling NaN payload
    ("float8_e4m3fnuz", "NaN", [0x80], "0x80"),
    ("float8_e4m3fnuz", -0.0, [0x00], "0x00"),  # unsigned zero
    ("float8_e5m2fnuz", 0.5, [0x3C], "0x3c"),
    ("float8_e4m3b11fnuz", 0.5, [0x50], "0x50"),
    ("float8_e3m4", -1.0, [0xB0], "0xb0"),
    ("float8_e4m3", 1.0, [0x38], "0x38"),
    ("float8_e8m0fnu", 1.0, [0x7F], "0x7f"),  # exponent bias 127 (tensorstore 0.1.86 uses 63)
    ("float8_e8m0fnu", 2.0, [0x80], "0x80"),
    ("float8_e8m0fnu", "NaN", [0xFF], "0xff"),
    ("float6_e2m3fn", -1.0, [0x28], "0x28"),
    ("float6_e3m2fn", 0.5, [0x08], "0x08"),
    ("float4_e2m1fn", -0.0, [0x08], "0x08"),
    ("float4_e2m1fn", 6.0, [0x07], "0x07"),
    ("int2", -2, [0x02], -2),
    ("int4", -8, [0x08], -8),
    ("int4", 7, [0x07], 7),
    ("uint2", 3, [0x03], 3),
    ("uint4", 15, [0x0F], 15),
    ("complex_float32", [1.0, "NaN"], [0x3F800000, 0x7FC00000], [1.0, "NaN"]),
    ("complex_float64", [-0.0, "Infinity"], [0x8000000000000000, 0x7FF0000000000000], [-0.0, "Infinity"]),
    ("complex_float16", [1.0, "0x7e01"], [0x3C00, 0x7E01], [1.0, "0x7e01"]),
    ("complex_bfloat16", ["NaN", -0.0], [0x7FC0, 0x8000], ["NaN", -0.0]),
    ("complex_float8_e4m3fn", [1.0, "0x80"], [0x38, 0x80], ["0x38", "0x80"]),
    ("complex_float8_e5m2", ["Infinity", "NaN"], [0x7C, 0x7E], ["0x7c", "0x7e"]),
    ("complex_float4_e2m1fn", ["0x0f", 0.5], [0x0F, 0x01], ["0x0f", "0x01"]),
    ("complex_float8_e8m0fnu", [2.0, 0.5], [0x80, 0x7E], ["0x80", "0x7e"]),
]


@pytest.mark.parametrize(("name", "text", "lanes", "written"), V3_FILLS)
def test_v3_fill_json_bit_exact(name: str, text: Any, lanes: list[int], written: Any) -> None:
    dt = DataType.from_json(name)
    value = dt.fill_from_json(text)
    assert canonical(np.asarray(value), name).tolist() == lanes
    out = dt.fill_to_json(value)
    assert json.dumps(out) == json.dumps(written)
    again = dt.fill_from_json(out)
    assert np.asarray(again).tobytes() == np.asarray(value).tobytes()


@pytest.mark.parametrize(
    ("name", "text", "match"),
    [
        ("float8_e4m3fn", "Infinity", "float8_e4m3fn.*no infinity"),
        ("float8_e4m3fnuz", "-Infinity", "float8_e4m3fnuz.*no infinity"),
        ("float4_e2m1fn", "NaN", "float4_e2m1fn.*no NaN"),
        ("float6_e3m2fn", "NaN", "float6_e3m2fn.*no NaN"),
        ("float4_e2m1fn", "0x1f", "float4_e2m1fn.*bits above"),
        ("float8_e5m2", "0x7c00", "float8_e5m2.*2 hex digits"),
        ("bfloat16", "0x7f", "bfloat16.*4 hex digits"),
        ("bfloat16", True, "bfloat16.*boolean"),
        ("bfloat16", "nan", "bfloat16"),
        ("int4", 8, "int4.*out of range"),
        ("int4", -9, "int4.*out of range"),
        ("int2", 2, "int2.*out of range"),
        ("uint2", -1, "uint2.*out of range"),
        ("uint4", 1.5, "uint4.*integer"),
        ("complex_float8_e4m3fn", 1.0, r"complex_float8_e4m3fn.*\[real, imag\]"),
        ("complex_float32", [1.0], r"complex_float32.*\[real, imag\]"),
    ],
)
def test_bad_fill_json_names_the_type(name: str, text: Any, match: str) -> None:
    with pytest.raises(MetadataError, match=match):
        DataType.from_json(name).fill_from_json(text)


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("int4", 9, "int4"),
        ("uint2", -1, "uint2"),
        ("int2", 0.5, "int2"),
        ("float4_e2m1fn", float("nan"), "float4_e2m1fn.*no NaN"),
        ("float8_e4m3fn", float("inf"), "float8_e4m3fn.*no infinity"),
    ],
)
def test_bad_user_fill_names_the_type(name: str, value: Any, match: str) -> None:
    with pytest.raises(MetadataError, match=match):
        DataType.from_json(name).coerce_fill(value)


def test_user_fills_cast() -> None:
    assert DataType.from_json("int4").coerce_fill(np.int8(-3)) == -3
    assert DataType.from_json("uint4").coerce_fill(12.0) == 12
    bf = DataType.from_json("bfloat16").coerce_fill(1.5)
    assert np.asarray(bf).view(np.uint16) == 0x3FC0
    c = DataType.from_json("complex_float8_e4m3fn").coerce_fill(1 - 0.5j)
    assert canonical(np.asarray(c), "complex_float8_e4m3fn").tolist() == [0x38, 0xB0]
    assert DataType.from_json("complex_float8_e4m3fn").coerce_fill((1.0, -0.5)) == c


# -- fill values: V2 (tensorstore's zarr driver) ---------------------------------------------------

V2_FILLS: list[tuple[str, Any, list[int], Any]] = [
    ("bfloat16", -1.5, [0xBFC0], -1.5),
    ("bfloat16", "NaN", [0x7FC0], "NaN"),
    ("bfloat16", "0x41", [0x4282], 65.0),  # a C hex float there, as tensorstore reads it
    ("float8_e4m3fn", -0.0, [0x80], -0.0),  # numbers, never hex in V2
    ("float8_e5m2", "-Infinity", [0xFC], "-Infinity"),
    ("float8_e8m0fnu", 2.0, [0x80], 2.0),
    ("float4_e2m1fn", "Cw==", [0x0B], "Cw=="),  # base64 of the byte: -1.5
    ("int4", -1, [0x0F], -1),
    ("int2", 1, [0x01], 1),
]


@pytest.mark.parametrize(("name", "text", "lanes", "written"), V2_FILLS)
def test_v2_fill_json(name: str, text: Any, lanes: list[int], written: Any) -> None:
    dtype = DataType.from_json(name).numpy
    value = parse_fill_value_v2(text, dtype)
    assert canonical(np.asarray(value), name).tolist() == lanes
    assert json.dumps(encode_fill_value_v2(value, dtype)) == json.dumps(written)


def test_v2_fill_loses_nan_payload_and_refuses_bad_forms() -> None:
    dtype = np.dtype(ml_dtypes.bfloat16)
    payload = np.array(0x7FC1, dtype=np.uint16).view(dtype)[()]
    assert encode_fill_value_v2(payload, dtype) == "NaN"
    with pytest.raises(MetadataError, match="float4_e2m1fn"):
        parse_fill_value_v2("Qw==", np.dtype(ml_dtypes.float4_e2m1fn))  # 0x43: bits above 4
    with pytest.raises(MetadataError, match="float8_e4m3fn"):
        parse_fill_value_v2("AA==", np.dtype(ml_dtypes.float8_e4m3fn))


# -- the bytes codec --------------------------------------------------------------------------------


def _spec(name: str, shape: tuple[int, ...]) -> ChunkSpec:
    dt = DataType.from_json(name)
    return ChunkSpec(shape, dt, dt.default_fill())


def test_int4_int2_stored_sign_extended_read_by_low_bits() -> None:
    arr = np.array([-1, -3, 7, 0, -8], dtype=np.int8).astype(ml_dtypes.int4)
    assert arr.tobytes().hex() == "0f0d070008"  # ml_dtypes: the low bits only
    spec = _spec("int4", (5,))
    stored = BytesCodec(None).encode(ArrayBytes.from_array(arr), spec)
    assert stored.hex() == "fffd0700f8"  # as zarrs writes (and tensorstore for its fill)
    for raw in (stored, arr.tobytes(), bytes([0xAF, 0x3D, 0x57, 0xF0, 0x98])):
        back = BytesCodec(None).decode(raw, spec).array
        assert back.tobytes().hex() == "0f0d070008"
    arr2 = np.array([-2, -1, 1, 0], dtype=np.int8).astype(ml_dtypes.int2)
    assert BytesCodec(None).encode(ArrayBytes.from_array(arr2), _spec("int2", (4,))).hex() == "feff0100"


def test_unsigned_and_float_sub_byte_stored_with_high_bits_clear() -> None:
    spec = _spec("uint2", (3,))
    assert BytesCodec(None).decode(bytes([0xFF, 0x05, 0x02]), spec).array.tobytes().hex() == "030102"
    f4 = _spec("float4_e2m1fn", (2,))
    back = BytesCodec(None).decode(bytes([0xF8, 0x41]), f4).array
    assert back.tobytes().hex() == "0801"
    assert BytesCodec(None).encode(ArrayBytes.from_array(back), f4).hex() == "0801"


@pytest.mark.parametrize("name", ["bfloat16", "complex_float16", "complex_bfloat16"])
def test_multi_byte_lanes_swap_for_big_endian(name: str) -> None:
    dt = DataType.from_json(name)
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 256, 6 * dt.numpy.itemsize, dtype=np.uint8).tobytes()
    arr = np.frombuffer(raw, dtype=dt.numpy).reshape(2, 3)
    spec = ChunkSpec((2, 3), dt, dt.default_fill())
    little = BytesCodec("little").encode(ArrayBytes.from_array(arr), spec)
    big = BytesCodec("big").encode(ArrayBytes.from_array(arr), spec)
    assert little == raw
    assert big == np.frombuffer(raw, dtype="<u2").astype(">u2").tobytes()  # each 2-byte lane swapped
    assert BytesCodec("big").decode(big, spec).array.tobytes() == raw
    assert endian_required(dt)
    with pytest.raises(CodecError, match=f"'endian' is required for data type '{name}'"):
        BytesCodec(None).resolve(spec)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "int4", "complex_float8_e5m2", "complex_float4_e2m1fn"])
def test_one_byte_lanes_take_no_endian(name: str) -> None:
    dt = DataType.from_json(name)
    assert not endian_required(dt)
    BytesCodec(None).resolve(ChunkSpec((2,), dt, dt.default_fill()))


def test_partial_decode_keeps_low_bits() -> None:
    store: dict[str, Any] = {}
    a = zarrpy.create_array(store, shape=(40,), chunks=(40,), dtype=ml_dtypes.int4, compressors=None)
    data = (np.arange(40) % 16 - 8).astype(np.int8).astype(ml_dtypes.int4)
    a[:] = data
    assert bytes(store["c/0"])[:3].hex() == "f8f9fa"
    assert a[3:5].tobytes() == data[3:5].tobytes()
    assert a[[1, 30]].tobytes() == data[[1, 30]].tobytes()


# -- create_array ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_NAMES)
def test_create_array_v3_metadata(name: str) -> None:
    store: dict[str, Any] = {}
    dtype: Any = name if name in STRUCT_COMPLEX else DataType.from_json(name).numpy
    a = zarrpy.create_array(store, shape=(4,), chunks=(2,), dtype=dtype)
    meta = json.loads(bytes(store["zarr.json"]))
    expected_name = {"complex_float32": "complex64", "complex_float64": "complex128"}.get(name, name)
    assert meta["data_type"] == expected_name
    serializer = meta["codecs"][0]
    if lane_bits(name) > 8:
        assert serializer == {"name": "bytes", "configuration": {"endian": "little"}}
    else:
        assert serializer == {"name": "bytes"}
    assert a.dtype == DataType.from_json(name).numpy
    reopened = zarrpy.open_array(store)
    assert np.asarray(reopened.fill_value).tobytes() == np.asarray(a.fill_value).tobytes()


@pytest.mark.parametrize("name", ml_module.V2_FLOAT_NAMES + ml_module.V2_INT_NAMES)
def test_create_array_v2(name: str) -> None:
    store: dict[str, Any] = {}
    dt = np.dtype(getattr(ml_dtypes, name))
    fill = -1 if name in INTS else ("NaN" if name not in ("float4_e2m1fn",) else 6.0)
    fill_value = fill if isinstance(fill, int) else np.array(float(fill)).astype(dt)[()]
    a = zarrpy.create_array(store, shape=(5,), chunks=(3,), dtype=dt, fill_value=fill_value, zarr_format=2)
    meta = json.loads(bytes(store[".zarray"]))
    assert meta["dtype"] == name  # no byte-order prefix, as tensorstore
    data = np.array([1, -1], dtype=np.float32 if name not in INTS else np.int8).astype(dt)
    a[0:2] = data
    back = zarrpy.open_array(store)[:]
    assert back[:2].tobytes() == data.tobytes()
    assert np.asarray(back[2:]).tobytes() == np.asarray(np.full(3, fill_value, dtype=dt)).tobytes()


@pytest.mark.parametrize("name", ["uint4", "uint2", "float6_e2m3fn", "float8_e4m3", "complex_float8_e4m3fn"])
def test_no_v2_form_names_the_type(name: str) -> None:
    dtype: Any = name if name.startswith("complex_") else getattr(ml_dtypes, name)
    with pytest.raises(MetadataError, match=f"{name}.*(no Zarr V2 form|V2)"):
        zarrpy.create_array({}, shape=(4,), chunks=(2,), dtype=dtype, zarr_format=2)


def test_v2_bfloat16_big_endian_has_no_v2_form() -> None:
    with pytest.raises(MetadataError, match="little-endian"):
        zarrpy.create_array({}, shape=(4,), chunks=(2,), dtype=ml_dtypes.bfloat16, zarr_format=2,
                            serializer={"name": "bytes", "configuration": {"endian": "big"}})  # fmt: skip


# -- hypothesis round trips ---------------------------------------------------------------------------


def _lane_bytes(name: str) -> int:
    return DataType.from_json(name).numpy.itemsize


@st.composite
def _case(draw: st.DrawFn, name: str) -> tuple[bytes, bytes, tuple[int, ...], tuple[int, ...]]:
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=1, max_size=2)))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    n = int(np.prod(shape))
    size = _lane_bytes(name)
    data = draw(st.binary(min_size=n * size, max_size=n * size))
    fill = draw(st.binary(min_size=size, max_size=size))
    return data, fill, shape, chunks


def _fill_ok(fill: np.ndarray, name: str) -> bool:
    """Fill bits zarrpy accepts as a user fill (finite/NaN forms the type has)."""
    try:
        DataType.from_json(name).fill_to_json(fill[()])
    except MetadataError:
        return False
    return True


def _roundtrip(name: str, case: Any, *, sharded: bool, big: bool = False) -> None:
    data_raw, fill_raw, shape, chunks = case
    data = from_bits(data_raw, name, shape)
    fill = from_bits(fill_raw, name, ())
    if not _fill_ok(fill, name):
        fill = from_bits(bytes(len(fill_raw)), name, ())
    store: dict[str, Any] = {}
    dtype: Any = name if name in STRUCT_COMPLEX else DataType.from_json(name).numpy
    kwargs: dict[str, Any] = {}
    if sharded:
        kwargs["shards"] = tuple(2 * c for c in chunks)
    if big:
        kwargs["serializer"] = {"name": "bytes", "configuration": {"endian": "big"}}
    a = zarrpy.create_array(store, shape=shape, chunks=chunks, dtype=dtype, fill_value=fill[()], **kwargs)
    region = tuple(slice(0, max(1, s - 1)) for s in shape)
    a[region] = data[region]
    b = zarrpy.open_array(store)
    got = b[...]
    expected = np.empty(shape, dtype=data.dtype)
    expected[...] = fill
    expected[region] = data[region]
    assert canonical(got, name).tolist() == canonical(expected, name).tolist()
    assert canonical(np.asarray(b.fill_value), name).tolist() == canonical(np.asarray(fill), name).tolist()


_SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", ALL_NAMES)
@_SETTINGS
@given(data=st.data())
def test_hypothesis_roundtrip_default_codecs(name: str, data: st.DataObject) -> None:
    _roundtrip(name, data.draw(_case(name)), sharded=False)


@pytest.mark.parametrize("name", ALL_NAMES)
@_SETTINGS
@given(data=st.data())
def test_hypothesis_roundtrip_sharded(name: str, data: st.DataObject) -> None:
    _roundtrip(name, data.draw(_case(name)), sharded=True)


@pytest.mark.parametrize("name", ["bfloat16", "complex_float16", "complex_bfloat16"])
@_SETTINGS
@given(data=st.data())
def test_hypothesis_roundtrip_big_endian(name: str, data: st.DataObject) -> None:
    _roundtrip(name, data.draw(_case(name)), sharded=False, big=True)


def test_bit_size_of_every_real_type() -> None:
    for name in FLOATS + INTS:
        assert bit_size(np.dtype(getattr(ml_dtypes, name))) == lane_bits(name)
