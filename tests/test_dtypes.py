"""Data types: names <-> numpy, and fill-value JSON for every type.

Reference: shared/reference/ZARR-FORMAT-NOTES.md §4 (names) and §5 (fill_value).
Every invalid fill value must be a MetadataError whose message names
``fill_value``; every invalid type a MetadataError naming ``data_type``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from zarrpy.core.dtypes import DataType
from zarrpy.errors import MetadataError, ZarrpyError

INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_TYPES = ["float16", "float32", "float64"]
COMPLEX_TYPES = ["complex64", "complex128"]
CORE_TYPES = ["bool", *INT_TYPES, *FLOAT_TYPES, *COMPLEX_TYPES]

_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits_of(value, dtype: str) -> int:
    """The bit pattern of a float scalar of ``dtype`` as an unsigned int."""
    arr = np.asarray(value, dtype=np.dtype(dtype))
    return int(arr.view(_BITS[arr.dtype.itemsize]))


def from_bits(bits: int, dtype: str):
    dt = np.dtype(dtype)
    return np.array(bits, dtype=_BITS[dt.itemsize]).view(dt)[()]


def json_round_trip(dt: DataType, value):
    """fill_to_json -> JSON text (strict: no NaN tokens) -> fill_from_json."""
    text = json.dumps(dt.fill_to_json(value), allow_nan=False)
    return dt.fill_from_json(json.loads(text))


def assert_fill_error(dt: DataType, value) -> MetadataError:
    with pytest.raises(MetadataError) as info:
        dt.fill_from_json(value)
    assert "fill_value" in str(info.value)
    return info.value


# -- names ---------------------------------------------------------------------


@pytest.mark.parametrize("name", CORE_TYPES)
def test_core_names_round_trip(name):
    dt = DataType.from_json(name)
    assert dt.name == name
    assert dt.to_json() == name
    assert dt.numpy == np.dtype(name)
    assert not dt.is_variable
    assert dt.itemsize == np.dtype(name).itemsize
    assert DataType.from_json({"name": name}) == dt
    assert DataType.from_numpy(np.dtype(name)) == dt
    assert DataType.from_numpy(name) == dt


@pytest.mark.parametrize("name, nbytes", [("r8", 1), ("r16", 2), ("r24", 3), ("r128", 16)])
def test_raw_bits_types(name, nbytes):
    dt = DataType.from_json(name)
    assert dt.to_json() == name
    assert dt.itemsize == nbytes
    assert dt.numpy == np.dtype(f"V{nbytes}")
    # numpy V<n> becomes zarr-python's raw_bytes (zarr-python reads no r<bits>): the same bytes.
    made = DataType.from_numpy(np.dtype(f"V{nbytes}"))
    assert made.numpy == dt.numpy
    assert made.to_json() == {"name": "raw_bytes", "configuration": {"length_bytes": nbytes}}
    assert DataType.from_json(made.to_json()) == made


def test_raw_bytes_configuration_and_fill():
    dt = DataType.from_json({"name": "raw_bytes", "configuration": {"length_bytes": 3}})
    assert dt.numpy == np.dtype("V3")
    assert dt.fill_to_json(b"\x01\x02\x03") == "AQID"  # base64, as zarr-python writes
    assert dt.fill_from_json("AQID") == b"\x01\x02\x03" and dt.fill_from_json([1, 2, 3]) == b"\x01\x02\x03"
    for config in (None, {}, {"length_bytes": 0}, {"length_bytes": True}, {"length_bytes": 2, "x": 1}):
        with pytest.raises(MetadataError, match="raw_bytes"):
            DataType.from_json({"name": "raw_bytes", "configuration": config} if config is not None else "raw_bytes")


@pytest.mark.parametrize("name", ["r0", "r7", "r12", "r"])
def test_raw_bits_bad_width(name):
    with pytest.raises(MetadataError, match="data_type"):
        DataType.from_json(name)


@pytest.mark.parametrize("value", ["float128", "Float32", "int", "string_that_is_not_a_type", "uint128"])
def test_unknown_data_type_names_field_and_value(value):
    with pytest.raises(MetadataError) as info:
        DataType.from_json(value)
    msg = str(info.value)
    assert "data_type" in msg
    assert repr(value) in msg


@pytest.mark.parametrize("value", [None, 3, ["float32"], {"configuration": {}}, {"name": 5}])
def test_data_type_not_a_name(value):
    with pytest.raises(MetadataError, match="data_type"):
        DataType.from_json(value)


def test_data_type_object_with_unexpected_configuration():
    with pytest.raises(MetadataError, match="data_type"):
        DataType.from_json({"name": "float32", "configuration": {"endian": "big"}})


def test_data_type_must_understand_false_rejected():
    # Notes §2: "must_understand: false is not allowed for data types".
    with pytest.raises(MetadataError, match="data_type"):
        DataType.from_json({"name": "float32", "must_understand": False})


@pytest.mark.parametrize("np_dtype, name", [("<f4", "float32"), (">f4", "float32"), (">i2", "int16"),
                                            ("?", "bool"), ("<c16", "complex128"), ("u8", "uint64")])
def test_from_numpy_any_byte_order(np_dtype, name):
    dt = DataType.from_numpy(np_dtype)
    assert dt.name == name
    assert dt.numpy.isnative


@pytest.mark.parametrize("np_dtype", ["float128", "complex256"])
def test_from_numpy_without_v3_type(np_dtype):
    with pytest.raises(MetadataError, match="data_type"):
        DataType.from_numpy(np_dtype)


def test_from_numpy_garbage():
    with pytest.raises(MetadataError, match="data_type"):
        DataType.from_numpy("not a dtype at all")


# -- default fill ------------------------------------------------------------


@pytest.mark.parametrize("name", CORE_TYPES)
def test_default_fill_is_zero_and_serialises(name):
    dt = DataType.from_json(name)
    fill = dt.default_fill()
    assert fill == 0
    js = dt.fill_to_json(fill)
    assert json.loads(json.dumps(js, allow_nan=False)) == js
    assert dt.fill_from_json(js) == fill


def test_default_fill_raw():
    dt = DataType.from_json("r24")
    assert dt.fill_to_json(dt.default_fill()) == [0, 0, 0]


# -- bool ------------------------------------------------------------------


@pytest.mark.parametrize("value", [True, False])
def test_bool_fill(value):
    dt = DataType.from_json("bool")
    got = dt.fill_from_json(value)
    assert isinstance(got, np.bool_) and bool(got) is value
    assert dt.fill_to_json(got) is value


@pytest.mark.parametrize("value", [0, 1, "true", None, 0.0, [True]])
def test_bool_fill_rejects_non_booleans(value):
    assert_fill_error(DataType.from_json("bool"), value)


# -- integers ----------------------------------------------------------------


@pytest.mark.parametrize("name", INT_TYPES)
def test_int_fill_extremes_round_trip(name):
    dt = DataType.from_json(name)
    info = np.iinfo(name)
    for value in (info.min, info.max, 0, 1):
        got = dt.fill_from_json(value)
        assert got.dtype == np.dtype(name)
        assert int(got) == value
        js = dt.fill_to_json(got)
        assert type(js) is int and js == value
        assert json_round_trip(dt, got) == got


@pytest.mark.parametrize("name", INT_TYPES)
def test_int_fill_out_of_range(name):
    dt = DataType.from_json(name)
    info = np.iinfo(name)
    for value in (info.min - 1, info.max + 1, 2**64, -(2**63) - 1):
        if info.min <= value <= info.max:
            continue
        err = assert_fill_error(dt, value)
        assert name in str(err)


@pytest.mark.parametrize("name", INT_TYPES)
@pytest.mark.parametrize("value", [1.5, -0.25, 1e-300])
def test_int_fill_rejects_fraction(name, value):
    assert_fill_error(DataType.from_json(name), value)


@pytest.mark.parametrize("name", INT_TYPES)
@pytest.mark.parametrize("value", [True, False])
def test_int_fill_rejects_booleans(name, value):
    assert_fill_error(DataType.from_json(name), value)


@pytest.mark.parametrize("value", ["1", "NaN", "Infinity", None, [1], {"a": 1}, float("inf"), float("nan")])
def test_int_fill_rejects_non_numbers(value):
    assert_fill_error(DataType.from_json("int32"), value)


def test_int64_fill_exact_beyond_float_precision():
    # 2**53 + 1 is not representable as a double: the parser must not go through float.
    for name, value in (("int64", 2**53 + 1), ("uint64", 2**64 - 1), ("int64", -(2**63) + 1)):
        dt = DataType.from_json(name)
        got = dt.fill_from_json(value)
        assert int(got) == value
        assert dt.fill_to_json(got) == value
        assert json.loads(json.dumps(dt.fill_to_json(got))) == value


# -- floats ------------------------------------------------------------------


@pytest.mark.parametrize("name", FLOAT_TYPES)
@pytest.mark.parametrize("value", [0, 1, -1, 0.5, 1.5, -2.25, 100, 0.0])
def test_float_fill_numbers(name, value):
    dt = DataType.from_json(name)
    got = dt.fill_from_json(value)
    assert got.dtype == np.dtype(name)
    assert got == np.dtype(name).type(value)
    js = dt.fill_to_json(got)
    assert isinstance(js, (int, float)) and not isinstance(js, bool)
    assert js == value


@pytest.mark.parametrize("name", FLOAT_TYPES)
def test_float_fill_specials(name):
    dt = DataType.from_json(name)
    nan = dt.fill_from_json("NaN")
    assert np.isnan(nan) and nan.dtype == np.dtype(name)
    assert bits_of(nan, name) == bits_of(np.array(np.nan, dtype=name), name)  # the quiet NaN
    assert dt.fill_to_json(nan) == "NaN"
    inf = dt.fill_from_json("Infinity")
    assert np.isposinf(inf) and dt.fill_to_json(inf) == "Infinity"
    ninf = dt.fill_from_json("-Infinity")
    assert np.isneginf(ninf) and dt.fill_to_json(ninf) == "-Infinity"


@pytest.mark.parametrize("name", FLOAT_TYPES)
def test_negative_zero_keeps_sign(name):
    dt = DataType.from_json(name)
    got = json_round_trip(dt, np.dtype(name).type(-0.0))
    assert got == 0 and math.copysign(1.0, float(got)) == -1.0
    assert math.copysign(1.0, dt.fill_to_json(np.dtype(name).type(-0.0))) == -1.0


def test_float16_zero_written_as_number():
    dt = DataType.from_json("float16")
    js = dt.fill_to_json(np.float16(0))
    assert js == 0 and not isinstance(js, bool)


@pytest.mark.parametrize(
    "name, hexstr, expect",
    [
        ("float32", "0x7fc00000", "NaN"),        # the canonical quiet NaN
        ("float32", "0x3f800000", 1.0),
        ("float32", "0x7f800000", "Infinity"),
        ("float32", "0xff800000", "-Infinity"),
        ("float32", "0x80000000", -0.0),
        ("float64", "0x7ff8000000000000", "NaN"),
        ("float64", "0x3ff0000000000000", 1.0),
        ("float16", "0x7e00", "NaN"),
        ("float16", "0x3c00", 1.0),
    ],
)
def test_hex_float_fill_canonicalises(name, hexstr, expect):
    dt = DataType.from_json(name)
    got = dt.fill_from_json(hexstr)
    assert bits_of(got, name) == int(hexstr, 16)
    js = dt.fill_to_json(got)
    assert js == expect
    if isinstance(expect, float):
        assert math.copysign(1.0, js) == math.copysign(1.0, expect)


@pytest.mark.parametrize(
    "name, hexstr",
    [
        ("float32", "0x7fc00001"),          # NaN with a payload (notes §5)
        ("float32", "0xffc00000"),          # negative quiet NaN
        ("float32", "0x7f800001"),          # signalling NaN
        ("float32", "0xffffffff"),
        ("float64", "0x7ff8000000000001"),
        ("float64", "0xfff0000000000001"),
        ("float64", "0x7ff4000000000000"),
        ("float16", "0x7e01"),
        ("float16", "0xfc01"),
    ],
)
def test_nan_payload_survives_bit_for_bit(name, hexstr):
    dt = DataType.from_json(name)
    got = dt.fill_from_json(hexstr)
    assert np.isnan(got)
    assert bits_of(got, name) == int(hexstr, 16)
    js = dt.fill_to_json(got)
    assert js == hexstr  # only hex can carry the payload; lower-case, full width
    again = dt.fill_from_json(json.loads(json.dumps(js)))
    assert bits_of(again, name) == int(hexstr, 16)


def test_hex_float_upper_case_digits_accepted():
    dt = DataType.from_json("float32")
    assert bits_of(dt.fill_from_json("0x7FC00001"), "float32") == 0x7FC00001


@pytest.mark.parametrize(
    "name, value",
    [
        ("float32", "0x7fc0000"),       # too few digits
        ("float32", "0x7fc000000"),     # too many digits
        ("float64", "0x7fc00000"),      # float32 width for a float64
        ("float16", "0x7fc00000"),
        ("float32", "0xZZZZZZZZ"),      # not hex
        ("float32", "0x"),
        ("float32", "nan-ish"),
        ("float32", "Inf"),
        ("float32", "+Infinity"),
        ("float32", ""),
        ("float32", None),
        ("float32", [1.0]),
        ("float32", {"re": 1}),
        ("float64", True),              # booleans are not numbers
        ("float64", False),
        ("float16", True),
    ],
)
def test_float_fill_rejects(name, value):
    assert_fill_error(DataType.from_json(name), value)


# -- complex -------------------------------------------------------------------


@pytest.mark.parametrize("name", COMPLEX_TYPES)
@pytest.mark.parametrize(
    "js",
    [
        [1.0, -1.0],
        [0, 0],
        [0.5, 2],
        ["NaN", 1.5],
        [1.5, "NaN"],
        ["-Infinity", "NaN"],
        ["Infinity", "-Infinity"],
        [-0.0, "Infinity"],
    ],
)
def test_complex_fill_forms(name, js):
    dt = DataType.from_json(name)
    got = dt.fill_from_json(js)
    assert got.dtype == np.dtype(name)
    part = f"float{np.dtype(name).itemsize * 4}"
    expected = [DataType.from_json(part).fill_from_json(v) for v in js]
    for have, want in zip((got.real, got.imag), expected):
        assert bits_of(have, part) == bits_of(want, part)
    out = dt.fill_to_json(got)
    assert isinstance(out, list) and len(out) == 2
    assert json.dumps(out, allow_nan=False)
    back = dt.fill_from_json(json.loads(json.dumps(out)))
    assert bits_of(back.real, part) == bits_of(got.real, part)
    assert bits_of(back.imag, part) == bits_of(got.imag, part)


def test_complex_fill_hex_payload_parts():
    dt = DataType.from_json("complex64")
    got = dt.fill_from_json(["0x7fc00001", "-Infinity"])
    assert bits_of(got.real, "float32") == 0x7FC00001
    assert np.isneginf(got.imag)
    assert dt.fill_to_json(got) == ["0x7fc00001", "-Infinity"]
    dt = DataType.from_json("complex128")
    got = dt.fill_from_json([2.5, "0xfff8000000000123"])
    assert dt.fill_to_json(got) == [2.5, "0xfff8000000000123"]


def test_complex_to_json_from_python_complex():
    assert DataType.from_json("complex64").fill_to_json(np.complex64(1 - 1j)) == [1.0, -1.0]
    assert DataType.from_json("complex128").fill_to_json(3 + 0.5j) == [3.0, 0.5]


@pytest.mark.parametrize("name", COMPLEX_TYPES)
@pytest.mark.parametrize(
    "value",
    [1.0, "NaN", [1.0], [1.0, 2.0, 3.0], [], [True, 0.0], [0.0, None], ["nan", 0], {"real": 1, "imag": 0},
     ["0x7fc0", 0]],
)
def test_complex_fill_rejects(name, value):
    assert_fill_error(DataType.from_json(name), value)


def test_complex64_rejects_float64_width_hex():
    assert_fill_error(DataType.from_json("complex64"), ["0x7ff8000000000000", 0])
    assert_fill_error(DataType.from_json("complex128"), ["0x7fc00000", 0])


# -- raw bits -------------------------------------------------------------------


@pytest.mark.parametrize("name, js", [("r8", [255]), ("r16", [1, 2]), ("r24", [0, 128, 255]),
                                      ("r64", [1, 2, 3, 4, 5, 6, 7, 8])])
def test_raw_fill_round_trip(name, js):
    dt = DataType.from_json(name)
    got = dt.fill_from_json(js)
    assert bytes(got) == bytes(js)
    assert dt.fill_to_json(got) == js
    assert dt.fill_to_json(dt.coerce_fill(got)) == js


@pytest.mark.parametrize(
    "name, value",
    [
        ("r16", [1]),                  # N/8 = 2 bytes expected
        ("r16", [1, 2, 3]),
        ("r16", list(range(16))),      # N elements, the spec text's literal reading: rejected
        ("r8", []),
        ("r16", [256, 0]),
        ("r16", [-1, 0]),
        ("r16", [1.0, 2]),
        ("r16", [True, 0]),
        ("r16", ["a", "b"]),
        ("r16", 7),
        ("r16", None),
    ],
)
def test_raw_fill_rejects(name, value):
    err = assert_fill_error(DataType.from_json(name), value)
    assert name in str(err)


# -- coerce_fill (user-given values) ----------------------------------------------


@pytest.mark.parametrize(
    "name, value",
    [("uint8", 256), ("uint8", -1), ("int8", 128), ("int16", 1.5), ("uint64", -1), ("bool", 2),
     ("int32", "abc"), ("float32", "abc"), ("float32", [1.0, 2.0]), ("r16", [1, 2, 3]), ("r16", 5)],
    ids=lambda v: repr(v).replace(" ", ""),
)
def test_coerce_fill_refuses_lossy_or_invalid(name, value):
    with pytest.raises(MetadataError) as info:
        DataType.from_json(name).coerce_fill(value)
    assert "fill_value" in str(info.value)


@pytest.mark.parametrize(
    "name, value",
    [("uint8", 255), ("int8", -128), ("int16", 3.0), ("float32", 1.5), ("bool", True), ("float64", np.nan),
     ("complex64", 1 + 2j), ("uint64", 2**64 - 1)],
)
def test_coerce_fill_accepts(name, value):
    got = DataType.from_json(name).coerce_fill(value)
    assert got.dtype == np.dtype(name)
    if name == "float64":
        assert np.isnan(got)
    else:
        assert got == value


def test_coerce_fill_none_is_default():
    assert DataType.from_json("int16").coerce_fill(None) == 0


def test_errors_are_zarrpy_and_value_errors():
    with pytest.raises(ZarrpyError):
        DataType.from_json("int8").fill_from_json(1000)
    with pytest.raises(ValueError):
        DataType.from_json("int8").fill_from_json(1000)


# -- property: any float bit pattern survives JSON bit for bit ------------------------

_SPECIAL_32 = [0x7FC00000, 0x7FC00001, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7F800000, 0xFF800000,
               0x80000000, 0x00000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF]
_SPECIAL_64 = [0x7FF8000000000000, 0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001,
               0xFFFFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000, 0x8000000000000000,
               0x0000000000000001, 0x800FFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF]
_SPECIAL_16 = [0x7E00, 0x7E01, 0xFE00, 0x7C01, 0xFFFF, 0x7C00, 0xFC00, 0x8000, 0x0001, 0x83FF]


def _bit_patterns(bits: int, specials: list[int]):
    return st.one_of(st.integers(0, 2**bits - 1), st.sampled_from(specials))


def _check_float_bits(name: str, bits: int) -> None:
    dt = DataType.from_json(name)
    value = from_bits(bits, name)
    got = json_round_trip(dt, value)
    assert got.dtype == np.dtype(name)
    assert bits_of(got, name) == bits, (name, hex(bits), dt.fill_to_json(value), hex(bits_of(got, name)))


@settings(max_examples=400, deadline=None)
@given(_bit_patterns(32, _SPECIAL_32))
@example(0x7FC00001)
@example(0x00000001)  # smallest subnormal
@example(0x80000000)  # -0.0
def test_float32_bits_survive_json(bits):
    _check_float_bits("float32", bits)


@settings(max_examples=400, deadline=None)
@given(_bit_patterns(64, _SPECIAL_64))
@example(0x7FF8000000000001)
@example(0x000FFFFFFFFFFFFF)  # largest subnormal
@example(0x8000000000000000)
def test_float64_bits_survive_json(bits):
    _check_float_bits("float64", bits)


@settings(max_examples=300, deadline=None)
@given(_bit_patterns(16, _SPECIAL_16))
def test_float16_bits_survive_json(bits):
    _check_float_bits("float16", bits)


@settings(max_examples=200, deadline=None)
@given(_bit_patterns(32, _SPECIAL_32), _bit_patterns(32, _SPECIAL_32))
def test_complex64_bits_survive_json(re_bits, im_bits):
    dt = DataType.from_json("complex64")
    value = np.array([re_bits, im_bits], dtype=np.uint32).view(np.complex64)[0]
    got = json_round_trip(dt, value)
    assert got.dtype == np.complex64
    assert np.array([got]).view(np.uint32).tolist() == [re_bits, im_bits]


def test_unknown_data_type_and_unsupported_configuration_are_told_apart():
    import pytest

    from zarrpy.core.dtypes import DataType
    from zarrpy.errors import MetadataError

    for doc in ("mystery", {"name": "mystery"}, {"name": "mystery", "configuration": {"a": 1}}):
        with pytest.raises(MetadataError, match="unknown data type 'mystery'") as info:
            DataType.from_json(doc)
        assert "numpy.datetime64" in str(info.value)  # the known names are listed
    with pytest.raises(MetadataError, match=r"data type 'int32' with configuration \{'a': 1\} is not supported"):
        DataType.from_json({"name": "int32", "configuration": {"a": 1}})


def test_raw_bytes_with_zarr_python_both_ways(tmp_path):
    import warnings

    import zarrpy

    zarr = pytest.importorskip("zarr")
    values = np.frombuffer(bytes(range(24)), dtype="V3")
    fill = np.frombuffer(b"\x07\x08\x09", dtype="V3")[0]
    for fmt in (2, 3):
        ours = str(tmp_path / f"ours{fmt}.zarr")
        a = zarrpy.create_array(ours, shape=(8,), dtype="V3", chunks=(3,), fill_value=fill, zarr_format=fmt)
        a[...] = values
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z = zarr.open_array(ours, mode="r")
            assert z.dtype == np.dtype("V3") and z[...].tobytes() == values.tobytes()
            assert bytes(z.fill_value) == b"\x07\x08\x09"
            theirs = str(tmp_path / f"theirs{fmt}.zarr")
            w = zarr.create_array(theirs, shape=(8,), dtype="V3", chunks=(3,), fill_value=fill, zarr_format=fmt)
            w[...] = values
        b = zarrpy.open_array(theirs)
        assert b.dtype == np.dtype("V3") and b[...].tobytes() == values.tobytes()
        assert bytes(b.fill_value) == b"\x07\x08\x09"
