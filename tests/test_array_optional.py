"""zarrs' optional (nullable) data type at the array edge and in metadata.

Reads give ``numpy.ma.MaskedArray`` (masked = missing); writes take masked
arrays, ``None`` (a scalar or list element) for missing, plain values for
present. Round trips with random masks (all-missing and none-missing chunks
included) go through the default codecs and through sharding.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import zarrpy
from zarrpy.core.dtypes import DataType
from zarrpy.core.dtypes.optional import optional_of
from zarrpy.errors import CodecError, MetadataError

SETTINGS = settings(max_examples=30, deadline=None)
FIXED_INNER = ("bool", "uint8", "int16", "int64", "float32", "float64", "complex64")


def opt_json(inner: str | dict, config: dict | None = None) -> dict:
    if isinstance(inner, dict):
        return {"name": "zarrs.optional", "configuration": inner}
    return {"name": "zarrs.optional", "configuration": {"name": inner, "configuration": config or {}}}


def masked_equal(got: np.ma.MaskedArray, data: np.ndarray, missing: np.ndarray) -> None:
    assert isinstance(got, np.ma.MaskedArray)
    assert np.array_equal(np.ma.getmaskarray(got), missing)
    present = ~missing
    if data.dtype.kind in "OT":
        assert got.data[present].tolist() == data[present].tolist()
    else:
        assert got.data[present].tobytes() == data[present].astype(got.dtype).tobytes()


@st.composite
def masked_case(draw, kinds=FIXED_INNER):
    inner = draw(st.sampled_from(kinds))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=9))
    chunks = tuple(draw(st.integers(1, max(1, s))) for s in shape)
    data = draw(hnp.arrays(np.dtype(inner), shape))
    missing = draw(st.one_of(st.just(np.zeros(shape, bool)), st.just(np.ones(shape, bool)), hnp.arrays(np.bool_, shape)))
    if draw(st.booleans()):  # a first chunk all missing, a last one all present
        missing[tuple(slice(0, c) for c in chunks)] = True
        missing[tuple(slice(s - 1, s) for s in shape)] = False
    return inner, shape, chunks, data, missing


@SETTINGS
@given(case=masked_case(), sharded=st.booleans(), fill=st.sampled_from([None, "present"]))
def test_round_trip_fixed(case, sharded, fill):
    inner, shape, chunks, data, missing = case
    fill_value = None if fill is None else np.zeros((), inner)[()] + 1
    kwargs = {"shards": tuple(2 * c for c in chunks)} if sharded else {}
    a = zarrpy.create_array({}, shape=shape, dtype=optional_of(inner), chunks=chunks, fill_value=fill_value,
                            **kwargs)
    a[...] = np.ma.MaskedArray(data, mask=missing)
    masked_equal(a[...], data, missing)
    # a region read and an integer read
    sel = tuple(slice(0, max(1, s // 2)) for s in shape)
    masked_equal(a[sel], data[sel], missing[sel])
    one = a[(0,) * len(shape)]
    if missing[(0,) * len(shape)]:
        assert one is np.ma.masked
    else:
        assert np.asarray(one).tobytes() == data[(0,) * len(shape)].tobytes()


@SETTINGS
@given(values=st.lists(st.one_of(st.none(), st.text(max_size=5)), min_size=1, max_size=12),
       chunk=st.integers(1, 5), sharded=st.booleans(), as_bytes=st.booleans())
def test_round_trip_variable(values, chunk, sharded, as_bytes):
    inner = "variable_length_bytes" if as_bytes else "string"
    items = [v.encode() if as_bytes and v is not None else v for v in values]
    kwargs = {"shards": (2 * chunk,)} if sharded else {}
    a = zarrpy.create_array({}, shape=(len(values),), dtype=optional_of(inner), chunks=(chunk,), **kwargs)
    a[...] = items
    got = a[...]
    assert isinstance(got, np.ma.MaskedArray)
    assert [None if m else v for v, m in zip(got.data.tolist(), np.ma.getmaskarray(got))] == items


def test_default_codecs_are_zarrs_defaults():
    a = zarrpy.create_array({}, shape=(4,), dtype=optional_of("int16"), chunks=(2,), compressors=None)
    doc = a.metadata.codecs[0]
    assert doc["name"] == "zarrs.optional"
    assert doc["configuration"]["data_codecs"] == [{"name": "bytes", "configuration": {"endian": "little"}}]
    assert [c["name"] for c in doc["configuration"]["mask_codecs"]] == ["packbits"]
    s = zarrpy.create_array({}, shape=(4,), dtype=optional_of("string"), chunks=(2,), compressors=None)
    assert s.metadata.codecs[0]["configuration"]["data_codecs"][0]["name"] == "vlen-utf8"
    n = zarrpy.create_array({}, shape=(4,), dtype=optional_of(optional_of("uint8")), chunks=(2,), compressors=None)
    inner = n.metadata.codecs[0]["configuration"]["data_codecs"][0]
    assert inner["name"] == "zarrs.optional"


def test_writes_none_masked_and_plain(tmp_path):
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=(6,), dtype=optional_of("float64"), chunks=(4,))
    a[...] = [1.0, None, 3.0, None, 5.0, 6.0]
    a[5] = None
    a[0] = np.ma.masked
    a[1] = 2.5
    got = a[...]
    assert got.mask.tolist() == [True, False, False, True, False, True]
    assert got.filled(-1).tolist() == [-1, 2.5, 3.0, -1, 5.0, -1]
    # all missing: no chunk stored (equals the null fill)
    a[...] = None
    assert zarrpy.open_array(str(tmp_path / "a.zarr"))[...].mask.all()
    assert not any(p.is_file() for p in (tmp_path / "a.zarr" / "c").rglob("*"))


def test_present_fill_value_reads_where_nothing_was_written():
    a = zarrpy.create_array({}, shape=(5,), dtype=optional_of("int32"), chunks=(2,), fill_value=7)
    assert a.metadata.data_type.fill_to_json(a.metadata.fill_value) == [7]
    got = a[...]
    assert not got.mask.any() and got.tolist() == [7] * 5
    a[1] = None
    assert a[...].mask.tolist() == [False, True, False, False, False]


def test_nested_optional_round_trip():
    dt = optional_of(optional_of("uint8"))
    a = zarrpy.create_array({}, shape=(6,), dtype=dt, chunks=(4,))
    inner = DataType.from_json(opt_json("uint8"))
    elements = np.zeros(6, dtype=inner.numpy)
    elements["value"] = [10, 0, 0, 30, 0, 50]
    elements["valid"] = [True, False, False, True, False, True]
    # the inner optional elements, masked where the outer value is missing, write as they are
    a[...] = np.ma.MaskedArray(elements, mask=[False, False, True, False, True, False])
    got = a[...]
    # read: the uint8 values, masked where missing at either level; the levels apart in a.validity
    assert got.dtype == np.uint8
    assert got.mask.tolist() == [False, True, True, False, True, False]
    assert got.data.tolist() == [10, 0, 0, 30, 0, 50]
    assert a.validity[...].tolist() == [[True, True], [True, False], [False, False], [True, True],
                                        [False, False], [True, True]]
    assert json.loads(json.dumps(a.metadata.data_type.to_json())) == opt_json(opt_json("uint8"))


# -- metadata: JSON, fill values, errors ----------------------------------------


def test_data_type_json_both_ways():
    for doc in (opt_json("int16"), opt_json("string"), opt_json(opt_json("float32")),
                opt_json("numpy.datetime64", {"unit": "s", "scale_factor": 1})):
        assert DataType.from_json(doc).to_json() == doc
    # zarrs' older name and an inner type without its configuration member are read
    old = DataType.from_json({"name": "optional", "configuration": {"name": "uint8"}})
    assert old.to_json() == {"name": "optional", "configuration": {"name": "uint8", "configuration": {}}}


@pytest.mark.parametrize("doc, fill, back", [
    (opt_json("int16"), None, None),
    (opt_json("int16"), [42], [42]),
    (opt_json("float32"), ["NaN"], ["NaN"]),
    (opt_json("bool"), [True], [True]),
    (opt_json("string"), ["ab"], ["ab"]),
    (opt_json("variable_length_bytes"), ["AQI="], ["AQI="]),
    (opt_json(opt_json("uint8")), [None], [None]),
    (opt_json(opt_json("uint8")), [[7]], [[7]]),
    (opt_json(opt_json("uint8")), None, None),
])
def test_fill_value_json_both_ways(doc, fill, back):
    dt = DataType.from_json(doc)
    assert dt.fill_to_json(dt.fill_from_json(fill)) == back


@pytest.mark.parametrize("doc, field", [
    ({"name": "zarrs.optional"}, "configuration"),
    ({"name": "zarrs.optional", "configuration": {"configuration": {}}}, "'name'"),
    ({"name": "zarrs.optional", "configuration": {"name": 3}}, "'name'"),
    ({"name": "zarrs.optional", "configuration": {"name": "int16", "configuration": 5}}, "'configuration'"),
    ({"name": "zarrs.optional", "configuration": {"name": "int16", "extra": 1}}, "extra"),
    ({"name": "zarrs.optional", "configuration": {"name": "no_such_type", "configuration": {}}}, "no_such_type"),
])
def test_bad_data_type_names_the_field(doc, field):
    with pytest.raises(MetadataError, match="data_type") as err:
        DataType.from_json(doc)
    assert field in str(err.value)
    assert "zarrs.optional" in str(err.value)


@pytest.mark.parametrize("fill", [42, [1, 2], "x", [[1]]])
def test_bad_fill_value_names_the_field(fill):
    with pytest.raises(MetadataError, match="fill_value"):
        DataType.from_json(opt_json("int16")).fill_from_json(fill)


@pytest.mark.parametrize("config, field", [
    ({"data_codecs": [{"name": "bytes"}]}, "mask_codecs"),
    ({"mask_codecs": [{"name": "packbits"}]}, "data_codecs"),
    ({"mask_codecs": "packbits", "data_codecs": [{"name": "bytes"}]}, "mask_codecs"),
    ({"mask_codecs": [{"name": "packbits"}], "data_codecs": [{"name": "no_such_codec"}]}, "data_codecs"),
])
def test_bad_codec_configuration_names_the_field(config, field):
    from zarrpy.codecs.registry import codec_from_json

    with pytest.raises(CodecError, match="zarrs.optional") as err:
        codec_from_json({"name": "zarrs.optional", "configuration": config})
    assert field in str(err.value)


def test_codec_and_type_must_match():
    with pytest.raises(CodecError, match="is stored only by the 'zarrs.optional' codec"):
        zarrpy.create_array({}, shape=(4,), dtype=optional_of("int16"), chunks=(2,), serializer="bytes")
    with pytest.raises(CodecError, match="not optional"):
        zarrpy.create_array({}, shape=(4,), dtype="int16", chunks=(2,),
                            serializer={"name": "zarrs.optional", "configuration": {
                                "mask_codecs": [{"name": "packbits"}], "data_codecs": [{"name": "bytes"}]}})
    with pytest.raises(CodecError, match="data_codecs"):  # strings need a vlen data codec
        zarrpy.create_array({}, shape=(4,), dtype=optional_of("string"), chunks=(2,),
                            serializer={"name": "zarrs.optional", "configuration": {
                                "mask_codecs": [{"name": "packbits"}], "data_codecs": [{"name": "bytes"}]}})


def test_no_v2_form():
    with pytest.raises((MetadataError, CodecError), match="optional"):
        zarrpy.create_array({}, shape=(4,), dtype=optional_of("int16"), chunks=(2,), zarr_format=2)


def test_bad_values_are_refused_before_writing():
    a = zarrpy.create_array({}, shape=(3,), dtype=optional_of("uint8"), chunks=(2,))
    with pytest.raises((TypeError, OverflowError)):
        a[...] = [1, None, 300]
    with pytest.raises(TypeError):
        a[...] = ["x", None, 1]
    assert a[...].mask.all()


def test_decode_errors_name_the_codec():
    from zarrpy.codecs.abc import ChunkSpec
    from zarrpy.codecs.optional import OptionalCodec
    from zarrpy.errors import ChunkDecodeError

    dt = optional_of("int16")
    spec = ChunkSpec((8,), dt, dt.default_fill())
    codec = OptionalCodec()
    good = bytes.fromhex("01000000000000000800000000000000" "4d" "0a001e0028004600")
    assert codec.decode(good, spec).array["value"].tolist() == [10, 0, 30, 40, 0, 0, 70, 0]
    for bad in (good[:10], good[:-1], good + b"\x00", good[:16] + b"\xff" + good[17:],
                bytes.fromhex("09000000000000000800000000000000") + good[16:]):
        with pytest.raises(ChunkDecodeError, match="zarrs.optional"):
            codec.decode(bad, spec)


@pytest.mark.parametrize("dtype, fill, shown, doc", [
    ("int16", None, np.ma.masked, None),
    ("int16", 5, 5, [5]),
    ("string", "ab", "ab", ["ab"]),
    ("string", None, np.ma.masked, None),
])
def test_fill_value_property_is_the_user_form(dtype, fill, shown, doc):
    a = zarrpy.create_array({}, shape=(4,), dtype=optional_of(dtype), chunks=(2,), fill_value=fill)
    assert a.fill_value is shown if shown is np.ma.masked else a.fill_value == shown
    again = zarrpy.create_array({}, shape=(4,), dtype=optional_of(dtype), chunks=(2,), fill_value=a.fill_value)
    assert again.metadata.data_type.fill_to_json(again.metadata.fill_value) == doc
