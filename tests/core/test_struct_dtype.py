"""The ``struct`` data type (zarr-python 3's structured dtypes): JSON forms, fill
values, errors naming the field, and round trips through the default codecs and
sharding, V3 and V2."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrpy
from tests.strategies import struct_arrays, structured_dtypes
from zarrpy.core.dtypes import DataType
from zarrpy.errors import MetadataError
from zarrpy.metadata.v2 import ArrayMetadataV2
from zarrpy.metadata.v3 import ArrayMetadataV3
from zarrpy.pipeline.convert import v2_to_v3

NESTED = np.dtype([("a", "<f8"), ("b", "<i4"), ("c", [("x", "<u2"), ("y", "S3")]), ("d", "<M8[ns]")])
NESTED_JSON = {
    "name": "struct",
    "configuration": {"fields": [
        {"name": "a", "data_type": "float64"},
        {"name": "b", "data_type": "int32"},
        {"name": "c", "data_type": {"name": "struct", "configuration": {"fields": [
            {"name": "x", "data_type": "uint16"},
            {"name": "y", "data_type": {"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}}},
        ]}}},
        {"name": "d", "data_type": {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}},
    ]},
}


def bits(value, dtype) -> bytes:
    return np.asarray(value, dtype=dtype).tobytes()


# -- data type JSON -------------------------------------------------------------


def test_struct_json_round_trip():
    dt = DataType.from_json(NESTED_JSON)
    assert dt.name == "struct" and dt.numpy == NESTED and not dt.is_variable
    assert dt.to_json() == NESTED_JSON
    assert DataType.from_numpy(NESTED) == dt


def test_legacy_structured_name_is_read_and_kept():
    legacy = {"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}}
    dt = DataType.from_json(legacy)
    assert dt.numpy == np.dtype([("a", "<i4"), ("b", "<f8")])
    assert dt.to_json() == legacy
    # the canonical name reads tuple-style fields too (zarr-python's Struct does)
    assert DataType.from_json({"name": "struct", "configuration": legacy["configuration"]}).numpy == dt.numpy


def test_numpy_dtype_becomes_packed_little_endian_struct():
    aligned = np.dtype([("a", ">u1"), ("b", ">f8"), ("c", [("x", ">i2")])], align=True)
    dt = DataType.from_numpy(aligned)
    assert dt.name == "struct"
    assert dt.numpy == np.dtype([("a", "u1"), ("b", "<f8"), ("c", [("x", "<i2")])])
    assert dt.numpy.itemsize == 11  # padding gone, as zarr-python packs


def test_field_types_of_every_fixed_size_family():
    dt = DataType.from_numpy(np.dtype([("f", "f2"), ("c", "c16"), ("t", "m8[s]"), ("r", "V2"), ("u", "U2"), ("b", "?")]))
    fields = {f["name"]: f["data_type"] for f in dt.to_json()["configuration"]["fields"]}
    assert fields == {
        "f": "float16", "c": "complex128",
        "t": {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1}},
        "r": {"name": "raw_bytes", "configuration": {"length_bytes": 2}},
        "u": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}},
        "b": "bool",
    }


@pytest.mark.parametrize(
    "config, fragments",
    [
        (None, ["'struct'", "fields"]),
        ({"fields": []}, ["non-empty"]),
        ({"fields": [{"name": "a"}]}, ["fields[0]"]),
        ({"fields": [["a", "int32"], ["a", "int8"]]}, ["fields[1]", "'a'", "unique"]),
        ({"fields": [{"name": "s", "data_type": "string"}]}, ["field 's'", "variable-length"]),
        ({"fields": [{"name": "q", "data_type": "no.such.type"}]}, ["field 'q'", "unknown data type"]),
        ({"fields": [{"name": "n", "data_type": {"name": "struct", "configuration": {
            "fields": [{"name": "v", "data_type": "variable_length_bytes"}]}}}]}, ["field 'n'", "field 'v'"]),
    ],
)
def test_bad_struct_json_names_the_field(config, fragments):
    with pytest.raises(MetadataError) as info:
        DataType.from_json({"name": "struct", "configuration": config} if config is not None else "struct")
    for fragment in fragments:
        assert fragment in str(info.value)


@pytest.mark.parametrize(
    "dtype, fragments",
    [
        (np.dtype([("a", "i4"), ("o", "O")]), ["field 'o'", "variable-length"]),
        (np.dtype([("a", "i4"), ("n", [("t", "O")])]), ["field 'n.t'", "variable-length"]),
        (np.dtype([(("title", "a"), "i4")]), ["field 'a'", "title"]),
    ],
)
def test_bad_numpy_struct_names_the_field(dtype, fragments):
    with pytest.raises(MetadataError) as info:
        DataType.from_numpy(dtype)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_subarray_fields_only_in_v2(tmp_path):
    dtype = np.dtype([("a", "<i4"), ("b", ">f8", (2,))])
    with pytest.raises(MetadataError, match=r"field 'b' is a subarray .* zarr_format=2"):
        zarrpy.create_array({}, shape=(3,), dtype=dtype)
    a = zarrpy.create_array(str(tmp_path / "v2.zarr"), shape=(3,), chunks=(2,), dtype=dtype, zarr_format=2,
                            fill_value=(1, [2.0, 3.0]))
    a[:2] = [(5, [1.5, -1.0]), (6, [0.0, 9.0])]
    zarray = json.loads((tmp_path / "v2.zarr" / ".zarray").read_text())
    assert zarray["dtype"] == [["a", "<i4"], ["b", ">f8", [2]]]
    assert base64.b64decode(zarray["fill_value"]) == bits((1, [2.0, 3.0]), dtype)
    back = zarrpy.open_array(str(tmp_path / "v2.zarr"))[...]
    assert back.dtype == dtype
    assert back["a"].tolist() == [5, 6, 1]
    assert back["b"].tolist() == [[1.5, -1.0], [0.0, 9.0], [2.0, 3.0]]


# -- fill values ------------------------------------------------------------------


def test_fill_json_is_an_object_of_field_values():
    dt = DataType.from_json(NESTED_JSON)
    fill = dt.coerce_fill((1.5, 2, (3, b"ab"), np.datetime64(5, "ns")))
    assert isinstance(fill, np.void)
    assert dt.fill_to_json(fill) == {"a": 1.5, "b": 2, "c": {"x": 3, "y": "YWI="}, "d": 5}
    assert bits(dt.fill_from_json(dt.fill_to_json(fill)), dt.numpy) == bits(fill, dt.numpy)


def test_fill_json_special_values():
    dt = DataType.from_numpy(np.dtype([("f", "f4"), ("c", "c8"), ("t", "m8[s]"), ("r", "V2"), ("u", "U2"), ("b", "?")]))
    fill = dt.coerce_fill((np.nan, 1 + 2j, np.timedelta64("NaT", "s"), b"\x01\x02", "hi", True))
    # as zarr-python 3.4.2 writes it
    assert dt.fill_to_json(fill) == {"f": "NaN", "c": [1.0, 2.0], "t": -9223372036854775808, "r": "AQI=",
                                     "u": "hi", "b": True}
    payload = np.array(0x7FC00001, dtype="<u4").view("<f4")[()]
    odd = dt.coerce_fill({"f": payload})
    assert dt.fill_to_json(odd)["f"] == "0x7fc00001"
    assert bits(dt.fill_from_json(dt.fill_to_json(odd)), dt.numpy) == bits(odd, dt.numpy)


def test_missing_fields_take_their_type_default():
    dt = DataType.from_numpy(np.dtype([("a", "i4"), ("t", "M8[s]")]))
    fill = dt.fill_from_json({"a": 3, "ignored": 1})  # zarr-python ignores other keys
    assert fill["a"] == 3 and np.isnat(fill["t"])  # NaT: the datetime type's own default
    assert bits(dt.default_fill(), dt.numpy) == bytes(dt.numpy.itemsize)  # the array default: zero bytes


def test_base64_fill_is_little_endian():
    dt = DataType.from_json({"name": "struct", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}})
    raw = np.array((7, -2.5), dtype=[("a", "<i4"), ("b", "<f8")]).tobytes()
    fill = dt.fill_from_json(base64.b64encode(raw).decode())
    assert fill["a"] == 7 and fill["b"] == -2.5
    legacy = DataType.from_json({"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}})
    assert legacy.fill_to_json((7, -2.5)) == base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    "value",
    [(1, 2.5), [1, 2.5], {"a": 1, "b": 2.5}, np.array((1, 2.5), dtype=[("p", ">i8"), ("q", ">f4")])[()],
     np.array((1, 2.5), dtype=[("a", "<i4"), ("b", "<f8")]).tobytes()],
)
def test_fill_coerced_from_tuples_dicts_voids_and_bytes(value):
    dt = DataType.from_numpy(np.dtype([("a", "i4"), ("b", "f8")]))
    fill = dt.coerce_fill(value)
    assert fill.tolist() == (1, 2.5)
    assert dt.coerce_fill(fill).tobytes() == fill.tobytes()


@pytest.mark.parametrize(
    "value, fragments",
    [
        ((1, "x"), ["field 'b'"]),
        ((1,), ["expected 2 values"]),
        ({"a": 1, "zz": 2}, ["unknown field", "zz"]),
        ((1, (2, 3.5)), ["field 'b'"]),
        (b"abc", ["expected 12 bytes"]),
        (1.5, ["tuple or dict"]),
    ],
)
def test_bad_fill_names_the_field(value, fragments):
    dt = DataType.from_numpy(np.dtype([("a", "i4"), ("b", "f8")]))
    with pytest.raises(MetadataError) as info:
        dt.coerce_fill(value)
    assert "fill_value" in str(info.value)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_bad_nested_fill_json_names_the_field():
    dt = DataType.from_json(NESTED_JSON)
    with pytest.raises(MetadataError, match=r"field 'c'.*field 'x'"):
        dt.fill_from_json({"c": {"x": "nope"}})
    with pytest.raises(MetadataError, match="base64"):
        dt.fill_from_json(5)


# -- arrays -----------------------------------------------------------------------


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_values_as_tuples_records_and_voids(zarr_format):
    a = zarrpy.create_array({}, shape=(4,), chunks=(3,), dtype=NESTED, zarr_format=zarr_format,
                            fill_value={"a": -1.0})
    a[:2] = [(1.0, 2, (3, b"x"), 7), (4.0, 5, (6, b"y"), 8)]
    a[2] = np.array((9.0, 9, (9, b"z"), 9), dtype=NESTED.newbyteorder(">"))[()]
    out = a[...]
    assert isinstance(out, np.ndarray) and out.dtype == NESTED
    assert out["a"].tolist() == [1.0, 4.0, 9.0, -1.0]
    assert out["c"]["y"].tolist() == [b"x", b"y", b"z", b""]
    assert isinstance(a[1], np.void) and a[1]["b"] == 5
    with pytest.raises(TypeError):
        a[0] = np.arange(4.0)
    with pytest.raises(TypeError):
        a[0] = "text"


def test_default_codecs_follow_zarr_python():
    multi = zarrpy.create_array({}, shape=(2,), dtype=[("a", "u1"), ("b", "S3")])
    assert multi.metadata.codecs[0] == {"name": "bytes", "configuration": {"endian": "little"}}
    single = zarrpy.create_array({}, shape=(2,), dtype=[("a", "u1"), ("b", "i1")])
    assert single.metadata.codecs[0] == {"name": "bytes"}


def test_v3_bytes_endian_applies_to_every_field():
    store: dict = {}
    dtype = np.dtype([("a", ">i4"), ("b", "<i2")])
    a = zarrpy.create_array(store, shape=(1,), dtype=dtype, compressors=None,
                            serializer={"name": "bytes", "configuration": {"endian": "big"}})
    a[0] = (1, 2)
    assert bytes(store["c/0"]) == b"\x00\x00\x00\x01\x00\x02"


def test_v2_fields_keep_their_byte_order():
    store: dict = {}
    dtype = np.dtype([("a", ">i4"), ("b", "<i2")])
    a = zarrpy.create_array(store, shape=(1,), dtype=dtype, compressors=None, zarr_format=2, fill_value=(3, 4))
    a[0] = (1, 2)
    assert bytes(store["0"]) == b"\x00\x00\x00\x01\x02\x00"
    zarray = json.loads(bytes(store[".zarray"]))
    assert zarray["dtype"] == [["a", ">i4"], ["b", "<i2"]]
    assert base64.b64decode(zarray["fill_value"]) == b"\x00\x00\x00\x03\x04\x00"
    assert zarrpy.open_array(store).dtype == dtype


def test_v2_structured_metadata_converts():
    meta = ArrayMetadataV2.from_bytes(json.dumps({
        "zarr_format": 2, "shape": [2], "chunks": [2], "dtype": [["a", "<i4"], ["b", [["x", ">f8"]]]],
        "fill_value": base64.b64encode(np.array((1, (2.0,)), dtype=[("a", "<i4"), ("b", [("x", ">f8")])]).tobytes()).decode(),
        "order": "C", "filters": None, "compressor": None,
    }).encode())
    v3 = v2_to_v3(meta)
    assert v3.data_type.name == "struct"
    assert v3.codecs == ({"name": "bytes"},)
    assert v3.fill_value.tolist() == (1, (2.0,))


# -- hypothesis round trips -------------------------------------------------------

COMMON = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _dtype_values_fill(subarrays: bool):
    return structured_dtypes(subarrays=subarrays).flatmap(
        lambda d: st.tuples(st.just(d), st.sampled_from([(0,), (5,), (3, 4), ()]).flatmap(lambda s: struct_arrays(d, s)),
                            struct_arrays(d, ()))
    )


def _check_round_trip(a, values, fill, expected_dtype):
    empty = a[...]
    assert empty.dtype == expected_dtype
    assert empty.tobytes() == np.broadcast_to(np.asarray(fill).astype(expected_dtype), values.shape).tobytes()
    a[...] = values
    out = a[...]
    assert out.dtype == expected_dtype
    assert np.ascontiguousarray(out).tobytes() == values.astype(expected_dtype).tobytes()


@COMMON
@given(_dtype_values_fill(subarrays=False), st.booleans())
def test_v3_round_trip_default_codecs_and_sharding(case, sharded):
    dtype, values, fill = case
    store: dict = {}
    kwargs = {"chunks": (2,) * values.ndim}
    if sharded and values.ndim:
        kwargs["shards"] = (4,) * values.ndim
    a = zarrpy.create_array(store, shape=values.shape, dtype=dtype, fill_value=fill[()], **kwargs)
    native = DataType.from_numpy(dtype).numpy
    _check_round_trip(a, values, fill, native)
    # the stored metadata reads back to the same type and fill bits
    again = zarrpy.open_array(store)
    assert again.dtype == native
    assert np.asarray(again.fill_value).tobytes() == np.asarray(fill).astype(native).tobytes()
    assert np.ascontiguousarray(again[...]).tobytes() == values.astype(native).tobytes()


@COMMON
@given(_dtype_values_fill(subarrays=True))
def test_v2_round_trip_keeps_field_byte_orders(case):
    dtype, values, fill = case
    store: dict = {}
    a = zarrpy.create_array(store, shape=values.shape, dtype=dtype, fill_value=fill[()], zarr_format=2,
                            chunks=(2,) * values.ndim)
    _check_round_trip(a, values, fill, dtype)
    again = zarrpy.open_array(store)
    assert again.dtype == dtype
    assert np.asarray(again.fill_value).tobytes() == np.asarray(fill).tobytes()


@COMMON
@given(structured_dtypes().flatmap(lambda d: struct_arrays(d, ())))
def test_fill_json_round_trips_bit_for_bit(fill):
    dt = DataType.from_numpy(fill.dtype)
    value = dt.coerce_fill(fill[()])
    text = json.dumps(dt.fill_to_json(value), allow_nan=False)
    assert bits(dt.fill_from_json(json.loads(text)), dt.numpy) == bits(value, dt.numpy)
    meta = ArrayMetadataV3.from_bytes(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [1], "data_type": dt.to_json(),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": json.loads(text),
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    }).encode())
    assert meta.data_type == dt and bits(meta.fill_value, dt.numpy) == bits(value, dt.numpy)


def test_fields_numpy_cannot_swap_refuse_a_foreign_byte_order():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    dtype = np.dtype([("a", ml_dtypes.bfloat16), ("n", [("h", ml_dtypes.bfloat16)]), ("b", "<i2")])
    with pytest.raises(zarrpy.CodecError, match=r"\['a', 'n.h'\].*big-endian"):
        zarrpy.create_array({}, shape=(2,), dtype=dtype, serializer={"name": "bytes", "configuration": {"endian": "big"}})
    a = zarrpy.create_array({}, shape=(2,), dtype=dtype)  # little (native): stored as they are
    a[:] = [(1.5, (2.0,), 2), (2.5, (-1.0,), 3)]
    assert a[...]["n"]["h"].tolist() == [2.0, -1.0]
