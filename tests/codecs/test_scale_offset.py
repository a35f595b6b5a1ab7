"""scale_offset against the registry's rules.

Integers: ``(x - offset) * scale`` and ``x / scale + offset`` with Python's
exact integers, every intermediate value checked against the type (the
spec: "If any intermediate or final value ... is not representable in that
data type, implementations MUST treat this as an error"), for every integer
width. Floats: the same formulas in the type's own arithmetic (numpy with
scalars of the type), which is also what zarr-python writes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.codecs.contract import spec_of
from zarrpy.codecs.partial import BytesReader
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.registry import codec_from_json
from zarrpy.codecs.scale_offset import ScaleOffsetCodec
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import ChunkDecodeError, CodecError

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def reference_encode(x: int, offset: int, scale: int, lo: int, hi: int) -> int | None:
    d = x - offset
    if not lo <= d <= hi:
        return None
    m = d * scale
    return m if lo <= m <= hi else None


def reference_decode(y: int, offset: int, scale: int, lo: int, hi: int) -> int | None:
    if y % scale:
        return None
    q = y // scale
    if not lo <= q <= hi:
        return None
    out = q + offset
    return out if lo <= out <= hi else None


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_integers_are_exact_or_an_error(data):
    name = data.draw(st.sampled_from(INTS))
    info = np.iinfo(name)
    lo, hi = int(info.min), int(info.max)
    edge = st.sampled_from([lo, hi, 0, 1, lo + 1, hi - 1, (lo + hi) // 2])
    offset = data.draw(st.one_of(edge, st.integers(lo, hi)))
    scale = data.draw(st.one_of(st.sampled_from([1, -1, 2, -2, 3, 7, hi]), st.integers(lo, hi)).filter(lambda s: s != 0 and lo <= s <= hi))
    values = data.draw(st.lists(st.one_of(edge, st.integers(lo, hi)), min_size=1, max_size=5))
    codec = ScaleOffsetCodec(offset=offset, scale=scale)
    spec = spec_of(name, (len(values),))
    arr = np.array(values, dtype=name)
    expected = [reference_encode(v, offset, scale, lo, hi) for v in values]
    if None in expected:
        with pytest.raises(CodecError, match="codec 'scale_offset'"):
            codec.encode(ArrayBytes.from_array(arr), spec)
    else:
        got = codec.encode(ArrayBytes.from_array(arr), spec).array
        assert got.dtype == np.dtype(name) and got.tolist() == expected
    back = [reference_decode(v, offset, scale, lo, hi) for v in values]
    if None in back:
        with pytest.raises(ChunkDecodeError, match="codec 'scale_offset'"):
            codec.decode(ArrayBytes.from_array(arr), spec)
    else:
        assert codec.decode(ArrayBytes.from_array(arr), spec).array.tolist() == back


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_floats_use_the_types_own_arithmetic(name):
    dt = np.dtype(name)
    values = np.array([0.0, -0.0, 1.1, -3.3, np.inf, -np.inf, np.nan, float(np.finfo(dt).max), float(np.finfo(dt).tiny)], dtype=dt)
    codec = ScaleOffsetCodec.from_config({"offset": 0.25, "scale": "Infinity" if name == "float16" else 3.5})
    spec = spec_of(name, values.shape)
    off, sc = dt.type(0.25), dt.type(np.inf if name == "float16" else 3.5)
    with np.errstate(all="ignore"):
        expected = (values - off) * sc
        got = codec.encode(ArrayBytes.from_array(values), spec).array
        assert got.dtype == dt and got.tobytes() == expected.tobytes()
        assert codec.decode(ArrayBytes.from_array(values), spec).array.tobytes() == (values / sc + off).tobytes()


def test_the_fill_value_is_encoded():
    codec = ScaleOffsetCodec(offset=10, scale=2)
    assert int(codec.resolve(spec_of("int16", (3,), fill=13)).fill_value) == 6
    with pytest.raises(CodecError, match="fill value"):
        ScaleOffsetCodec(offset=10, scale=2).resolve(spec_of("uint8", (3,), fill=5))  # 5 - 10 < 0


def test_no_configuration_is_the_identity_and_round_trips():
    codec = codec_from_json({"name": "scale_offset"})
    assert codec.to_json() == {"name": "scale_offset"}
    assert codec_from_json({"name": "scale_offset", "configuration": {}}).to_json() == {"name": "scale_offset"}
    arr = np.arange(5, dtype="int64")
    assert codec.encode(ArrayBytes.from_array(arr), spec_of("int64", (5,))).array.tolist() == arr.tolist()


def test_partial_decoding_reads_only_the_selection():
    codec = ScaleOffsetCodec(offset=-4, scale=3)
    spec = spec_of("int32", (8, 8))
    bound = CodecChain([codec, codec_from_json({"name": "bytes", "configuration": {"endian": "little"}})]).bind(spec)
    data = np.arange(64, dtype="int32").reshape(8, 8)
    encoded = bound.encode(ArrayBytes.from_array(data))
    assert bound.capabilities.partial_decode
    got = bound.partial_decoder(BytesReader(encoded)).decode_selection((slice(2, 4), np.array([7, 1])))
    assert got.array.tolist() == data[2:4][:, [7, 1]].tolist()


@pytest.mark.parametrize(
    "config, field",
    [({"offset": None}, "offset"), ({"scale": True}, "scale"), ({"scale": [1]}, "scale"), ({"shift": 1}, "shift")],
)
def test_bad_configuration_names_codec_and_field(config, field):
    with pytest.raises(CodecError, match=f"codec 'scale_offset'.*{field}"):
        codec_from_json({"name": "scale_offset", "configuration": config})


def test_values_the_type_cannot_hold_are_refused_at_binding():
    with pytest.raises(CodecError, match="codec 'scale_offset'.*'offset'"):
        ScaleOffsetCodec(offset=-1).resolve(spec_of("uint8", (2,)))
    with pytest.raises(CodecError, match="codec 'scale_offset'.*'scale'"):
        ScaleOffsetCodec(scale=0.5).resolve(spec_of("int8", (2,)))
    with pytest.raises(CodecError, match="zero"):
        ScaleOffsetCodec(scale=0).resolve(spec_of("float32", (2,)))
    for dtype in ("bool", "complex64", "string"):
        with pytest.raises(CodecError, match="not supported"):
            ScaleOffsetCodec().resolve(spec_of(dtype, (2,)))
