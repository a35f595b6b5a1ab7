"""Every fixed-size data type zarrpy knows, round-tripped with hypothesis.

For each type: random values (every bit pattern the type can hold: NaN
payloads, -0.0, subnormals, extremes; for the sub-byte types every value of
their bits) and a random fill value, written with zarrpy through the
default codecs and through sharding, reopened from the stored JSON, and
compared bit for bit -- including the unwritten region, which reads as the
fill value, and the fill value itself after its JSON round trip.

Variable-length and optional types have round-trip tests of their own
(tests/test_array_vlen.py, tests/core/test_optional_dtype.py); struct has
tests/core/test_struct_dtype.py. This file checks one property across the
whole registry, so a new family cannot skip it.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.core.dtypes import DataType, bit_size

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

# (dtype= given to create_array, the V3 name expected in zarr.json)
TYPES: list[tuple[object, str]] = [
    ("bool", "bool"),
    *[(n, n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                       "float16", "float32", "float64", "complex64", "complex128")],
    ("datetime64[ns]", "numpy.datetime64"),
    ("datetime64[7D]", "numpy.datetime64"),
    ("timedelta64[ms]", "numpy.timedelta64"),
    ("V5", "raw_bytes"),
    ("S4", "null_terminated_bytes"),
    ("U2", "fixed_length_utf32"),
    *[(getattr(ml_dtypes, n), n) for n in (
        "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz",
        "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
        "int2", "uint2", "int4", "uint4")],
    (ml_dtypes.complex32, "complex_float16"),
    (ml_dtypes.bcomplex32, "complex_bfloat16"),
]


# Types no V2 writer has a form for (tensorstore's zarr driver writes the others).
NO_V2_FORM = {"float8_e4m3", "float6_e2m3fn", "float6_e3m2fn", "uint2", "uint4", "complex_float16",
              "complex_bfloat16"}


def _values(dtype: np.dtype, n: int) -> st.SearchStrategy[np.ndarray]:
    """``n`` random elements of ``dtype``: random bit patterns where every pattern is a value."""
    if dtype.kind == "b":
        return st.lists(st.booleans(), min_size=n, max_size=n).map(lambda v: np.array(v, dtype=bool))
    if dtype.kind == "S":
        return st.lists(st.binary(max_size=dtype.itemsize).filter(lambda b: not b.endswith(b"\x00")),
                        min_size=n, max_size=n).map(lambda v: np.array(v, dtype=dtype))
    if dtype.kind == "U":
        chars = st.characters(codec="utf-8", exclude_characters="\x00")
        return st.lists(st.text(chars, max_size=dtype.itemsize // 4), min_size=n, max_size=n).map(
            lambda v: np.array(v, dtype=dtype))
    bits = bit_size(dtype)
    if bits < 8:  # sub-byte: every value of the low bits (ml_dtypes' own byte form)
        return st.lists(st.integers(0, 2**bits - 1), min_size=n, max_size=n).map(
            lambda v: np.array(v, dtype=np.uint8).view(dtype))
    return st.binary(min_size=n * dtype.itemsize, max_size=n * dtype.itemsize).map(
        lambda b: np.frombuffer(b, dtype=dtype).copy())


def _is_nan(value: object) -> bool:
    arr = np.asarray(value)
    if arr.dtype.kind in "biuSUVmM" and type(arr.dtype).__module__ == "numpy.dtypes":
        return False
    try:
        return bool(np.isnan(arr).any())
    except TypeError:
        return False


def _bits(a: np.ndarray) -> bytes:
    """The bytes that carry the values (sub-byte types: only their low bits)."""
    raw = np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8)
    bits = bit_size(a.dtype)
    return (raw & ((1 << bits) - 1)).tobytes() if bits < 8 else raw.tobytes()


@pytest.mark.parametrize(("dtype_arg", "name"), TYPES, ids=[t[1] + "-" + str(i) for i, t in enumerate(TYPES)])
@pytest.mark.parametrize("layout", ["v3", "v3-sharded", "v2"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip_bit_for_bit(dtype_arg, name, layout, data):
    dt = DataType.from_numpy(dtype_arg)
    assert dt.name == name
    dtype = dt.numpy
    n = data.draw(st.integers(1, 23), label="n")
    values = data.draw(_values(dtype, n), label="values")
    fill = data.draw(_values(dtype, 1), label="fill")[0]
    store: dict = {}
    kwargs = {"v3": {}, "v3-sharded": {"shards": (8,)}, "v2": {"zarr_format": 2}}[layout]
    if layout == "v2" and name in NO_V2_FORM:
        with pytest.raises(zarrpy.MetadataError, match="V2"):
            zarrpy.create_array(store, shape=(n + 5,), chunks=(4,), dtype=dtype_arg, fill_value=fill, **kwargs)
        assert store == {}
        return
    a = zarrpy.create_array(store, shape=(n + 5,), chunks=(4,), dtype=dtype_arg, fill_value=fill, **kwargs)
    a[:n] = values
    b = zarrpy.open_array(store, mode="r")
    if layout != "v2":
        assert b.metadata.data_type.name == name
    got = b[...]
    assert got.dtype == dtype
    assert _bits(got[:n]) == _bits(values)
    want_fill = np.array([fill] * 5, dtype=dtype)
    if layout == "v2" and _is_nan(fill):  # V2 fill JSON has only "NaN": the payload is not kept
        assert all(_is_nan(v) for v in got[n:]) and _is_nan(b.fill_value)
        return
    assert _bits(got[n:]) == _bits(want_fill)
    assert _bits(np.array([b.fill_value], dtype=dtype)) == _bits(np.array([fill], dtype=dtype))
