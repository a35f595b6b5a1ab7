"""zfp beyond the contract: the stream is zfpy's without its header, for
every mode zfpy has, every field dimensionality and type; zarrs' dims-3
fixed-rate setup; reversible mode is lossless for every promoted integer
type; shapes, legacy names, bad configurations, corrupt streams and a
missing library."""

from __future__ import annotations

import numpy as np
import pytest

import zarrpy
import zfpy

from tests.codecs.contract import spec_of
from zarrpy.codecs import _zfp_lib
from zarrpy.codecs.registry import codec_from_json, get_codec_class
from zarrpy.codecs.zfp import ZfpCodec, zfp_shape
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import ChunkDecodeError, CodecError

HEADER = 12  # zfpy's full header (magic, field, short mode): 96 bits


def encode(codec: ZfpCodec, array: np.ndarray) -> bytes:
    return codec.encode(ArrayBytes.from_array(array), spec_of(array.dtype.name, array.shape))


def decode(codec: ZfpCodec, data: bytes, like: np.ndarray) -> np.ndarray:
    return codec.decode(data, spec_of(like.dtype.name, like.shape)).array


def same_stream(zfpy_bytes: bytes, ours: bytes) -> bool:
    """zfpy's stream after its header equals ours (each zero-padded to whole 64-bit words)."""
    body = zfpy_bytes[HEADER:]
    n = min(len(body), len(ours))
    return body[:n] == ours[:n] and not any(body[n:]) and not any(ours[n:])


# zfp's accuracy mode is for floats (integers are refused: see below)
STREAM_CASES = [
    (dtype, shape, mode)
    for dtype in ("float32", "float64", "int32", "int64")
    for shape in ((7,), (6, 5), (3, 4, 5), (2, 3, 4, 5))
    for mode in ("fixed_precision", "fixed_accuracy", "fixed_rate")
    if not (mode == "fixed_accuracy" and dtype.startswith("int"))
]


@pytest.mark.parametrize(("dtype", "shape", "mode"), STREAM_CASES)
def test_stream_is_zfpys_without_header(dtype, shape, mode):
    rng = np.random.default_rng(len(shape))
    array = (rng.standard_normal(shape) * 1000).astype(dtype)
    param = {"fixed_precision": ("precision", 13), "fixed_accuracy": ("tolerance", 0.05),
             "fixed_rate": ("rate", 7.5)}[mode]  # fmt: skip
    codec = ZfpCodec(mode, **dict([param]))
    ours = encode(codec, array)
    # zarrs sets the rate for 3-d blocks: zfpy (which passes the real dims) needs it scaled
    zfpy_param = {param[0]: param[1] * 4**3 / 4 ** len(shape) if mode == "fixed_rate" else param[1]}
    theirs = zfpy.compress_numpy(array, **zfpy_param)
    assert same_stream(theirs, ours)
    assert decode(codec, ours, array).tobytes() == zfpy.decompress_numpy(theirs).tobytes()


def test_fixed_rate_is_per_three_d_block_whatever_the_chunk():
    array = np.linspace(0, 1, 64, dtype=np.float64)
    one_d = encode(ZfpCodec("fixed_rate", rate=2), array)
    # 16 blocks of 4 values, each 2 * 64 bits (zarrs: dims 3), not 2 * 4
    assert len(one_d) == 16 * 2 * 64 // 8


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "int64", "float32", "float64"])
def test_reversible_is_lossless(dtype):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    rng = np.random.default_rng(3)
    if info is not None:
        array = rng.integers(info.min, info.max, size=(5, 6, 7), dtype=dtype, endpoint=True)
    else:
        array = rng.standard_normal((5, 6, 7)).astype(dtype)
    codec = ZfpCodec("reversible")
    assert decode(codec, encode(codec, array), array).tobytes() == array.tobytes()


def test_unsigned_32_and_64_clamp_to_the_signed_range():
    # zarrs' promotion: min(u, INT_MAX), back max(i, 0)
    codec = ZfpCodec("reversible")
    array = np.array([0, 5, 2**31 - 1, 2**31, 2**32 - 1], dtype=np.uint32)
    assert decode(codec, encode(codec, array), array).tolist() == [0, 5, 2**31 - 1, 2**31 - 1, 2**31 - 1]


def test_shapes():
    assert zfp_shape((4, 1, 3, 1, 2, 1)) == (4, 3, 2)  # the spec's example
    assert zfp_shape((1, 1, 1, 1)) == (1, 1, 1, 1)  # 1-4 dims are never collapsed
    assert zfp_shape(()) == (1,)
    with pytest.raises(CodecError, match="more than 4 dimensions"):
        zfp_shape((2, 2, 2, 2, 2))
    codec = ZfpCodec("reversible")
    array = np.arange(24, dtype=np.float32).reshape(4, 1, 3, 1, 2, 1)
    assert encode(codec, array) == encode(codec, array.reshape(4, 3, 2))
    assert decode(codec, encode(codec, array), array).tobytes() == array.tobytes()


def test_names_and_legacy_modes():
    for name in ("zfp", "zarrs.zfp", "https://codec.zarrs.dev/array_to_bytes/zfp"):
        assert get_codec_class(name) is ZfpCodec
    codec = codec_from_json({"name": "zarrs.zfp", "configuration": {"mode": "fixedaccuracy", "tolerance": 0.5}})
    assert codec.to_json() == {"name": "zfp", "configuration": {"mode": "fixed_accuracy", "tolerance": 0.5}}


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"mode": "lossy"}, "mode"),
        ({}, "mode"),
        ({"mode": "fixed_rate"}, "rate"),
        ({"mode": "fixed_rate", "rate": -1}, "rate"),
        ({"mode": "fixed_rate", "rate": "8"}, "rate"),
        ({"mode": "fixed_precision", "precision": 1.5}, "precision"),
        ({"mode": "fixed_accuracy", "tolerance": float("nan")}, "tolerance"),
        ({"mode": "reversible", "rate": 3}, "rate"),
        ({"mode": "expert", "minbits": 1, "maxbits": 10, "maxprec": 10}, "minexp"),
        ({"mode": "expert", "minbits": -1, "maxbits": 10, "maxprec": 10, "minexp": 0}, "minbits"),
    ],
)
def test_bad_configuration_names_codec_and_field(config, field):
    with pytest.raises(CodecError, match=f"codec 'zfp'.*{field}"):
        codec_from_json({"name": "zfp", "configuration": config})


def test_unsupported_data_types_and_modes():
    with pytest.raises(CodecError, match="zfp.*'float16'"):
        ZfpCodec("reversible").resolve(spec_of("float16", (4,)))
    with pytest.raises(CodecError, match="fixed_accuracy.*'int32'"):
        ZfpCodec("fixed_accuracy", tolerance=1).resolve(spec_of("int32", (4,)))



@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"mode": "expert", "minbits": 100, "maxbits": 10, "maxprec": 64, "minexp": -1074}, "minbits <= maxbits"),
        ({"mode": "expert", "minbits": 1, "maxbits": 2**26, "maxprec": 64, "minexp": 0}, "maxbits"),
        ({"mode": "expert", "minbits": 1, "maxbits": 10, "maxprec": 0, "minexp": 0}, "maxprec"),
        ({"mode": "expert", "minbits": 1, "maxbits": 10, "maxprec": 99, "minexp": 0}, "maxprec"),
        ({"mode": "expert", "minbits": 1, "maxbits": 10, "maxprec": 9, "minexp": -5000}, "minexp"),
        ({"mode": "fixed_rate", "rate": 0}, "0 bits per block"),
        ({"mode": "fixed_rate", "rate": 2**32}, "bits per block"),
        ({"mode": "fixed_rate", "rate": 1e300}, "bits per block"),
        ({"mode": "fixed_precision", "precision": 0}, "precision"),
    ],
)
def test_parameters_zfp_would_misuse_are_refused_when_the_codec_is_made(config, fragment):
    """Not at the first write: zfp would store zeros (rate 0), allocate gigabytes
    (huge maxbits) or refuse only when compressing."""
    with pytest.raises(CodecError, match=f"codec 'zfp'.*{fragment}"):
        codec_from_json({"name": "zfp", "configuration": config})


@pytest.mark.parametrize("shape", [(65536,), (256, 256), (40, 40, 40)])
@pytest.mark.parametrize("rate", [8, 80, 260])
def test_high_fixed_rates_read_back_through_a_compressor(shape, rate):
    """A fixed rate set for 3-d blocks stores more than the elements for 1-d and
    2-d chunks (rate 8, 1-d: 16 bytes per float32); the compressor after zfp must
    accept that much (the spec's encoded_nbytes_bound), not refuse the frame."""
    data = np.random.default_rng(rate).random(shape, dtype="f4")
    a = zarrpy.create_array({}, shape=shape, chunks=shape, dtype="f4", compressors=[{"name": "zstd"}],
                            serializer={"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": rate}})
    a[...] = data
    got = a[...]
    assert got.shape == shape and np.abs(got - data).max() < 0.05  # 8 bits per value at worst (3-d, rate 8)


def test_truncated_stream_is_a_decode_error():
    array = np.random.default_rng(0).standard_normal((8, 8))
    codec = ZfpCodec("reversible")
    data = encode(codec, array)
    with pytest.raises(ChunkDecodeError, match="zfp.*truncated"):
        decode(codec, data[:16], array)
    with pytest.raises(ChunkDecodeError, match="zfp"):
        decode(codec, b"", array)


def test_missing_library_says_what_to_install(monkeypatch):
    monkeypatch.setattr(_zfp_lib, "_lib", None)
    monkeypatch.setattr(_zfp_lib, "_candidates", list)
    with pytest.raises(CodecError, match=r"pip install 'zarrpy\[zfp\]'"):
        encode(ZfpCodec("reversible"), np.zeros(4, np.float32))
