"""The codec contract for the interleaved vlen codecs: ``vlen-utf8``,
``vlen-bytes`` and ``zarrs.vlen_v2`` (golden bytes from numcodecs 0.17.1)."""

from __future__ import annotations

import numpy as np

from tests.codecs.contract import CodecContract, Golden, chunk_of, spec_of
from zarrpy.codecs.vlen_v2 import VlenBytesCodec, VlenUtf8Codec, VlenV2Codec

STRINGS = ["", "a", "héllo", "\U0001F600"]
# numcodecs.VLenUTF8().encode(numpy.array(STRINGS, dtype=object))
STRINGS_HEX = "040000000000000001000000610600000068c3a96c6c6f04000000f09f9880"
BYTES = [b"", b"\x00\x01", b"zarr"]
# numcodecs.VLenBytes().encode(numpy.array(BYTES, dtype=object))
BYTES_HEX = "0300000000000000020000000001040000007a617272"


class _Interleaved(CodecContract):
    def large_case(self, codec):
        dtype = "string" if "string" in self.dtypes else "variable_length_bytes"
        spec = spec_of(dtype, (300,))
        values = [f"element {i} " * (i % 5) for i in range(300)]
        if dtype != "string":
            values = [v.encode() for v in values]
        return spec, chunk_of(values, spec), (np.array([7, 3]),)


class TestVlenUtf8Contract(_Interleaved):
    codec_class = VlenUtf8Codec
    configs = [{}, None]
    dtypes = ("string",)
    golden = [Golden({}, "string", (2, 2), STRINGS, STRINGS_HEX, "numcodecs 0.17.1")]


class TestVlenBytesContract(_Interleaved):
    codec_class = VlenBytesCodec
    configs = [{}, None]
    dtypes = ("variable_length_bytes",)
    golden = [Golden({}, "variable_length_bytes", (3,), BYTES, BYTES_HEX, "numcodecs 0.17.1")]


class TestVlenV2Contract(_Interleaved):
    codec_class = VlenV2Codec
    configs = [{}, None]
    dtypes = ("string", "variable_length_bytes")
    golden = [
        # the same layout as numcodecs' VLenUTF8 / VLenBytes (https://codec.zarrs.dev/array_to_bytes/vlen_v2)
        Golden({}, "string", (4,), STRINGS, STRINGS_HEX, "numcodecs 0.17.1"),
        Golden({}, "variable_length_bytes", (3,), BYTES, BYTES_HEX, "numcodecs 0.17.1"),
    ]
