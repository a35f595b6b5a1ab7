"""The codec contract for zarrs' ``zarrs.optional`` codec (golden bytes:
chunks zarrs 0.23.13 wrote through zarrista, ``spec-fixtures/zarrs-optional/``,
``spec-fixtures/generate_optional.py``). Chunks are random masks -- all
missing, none missing and mixed -- over random values, fixed-size,
variable-length and nested."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.optional import OptionalCodec
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.dtypes import DataType
from zarrpy.core.dtypes.optional import inner_type, is_optional

ZARRS = "zarrs 0.23.13 (zarrista 0.1.0)"
BYTES_LE = [{"name": "bytes", "configuration": {"endian": "little"}}]
DEFAULT = {"mask_codecs": [{"name": "packbits"}], "data_codecs": BYTES_LE}
COMPRESSED = {"mask_codecs": [{"name": "packbits"}, {"name": "gzip", "configuration": {"level": 1}}],
              "data_codecs": [*BYTES_LE, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]}
BYTE_MASK = {"mask_codecs": [{"name": "bytes"}, {"name": "crc32c"}],
             "data_codecs": [{"name": "bytes", "configuration": {"endian": "big"}}]}
STRINGS = {"mask_codecs": [{"name": "packbits"}], "data_codecs": [{"name": "vlen-utf8"}]}
NESTED = {"mask_codecs": [{"name": "packbits"}], "data_codecs": [{"name": "zarrs.optional", "configuration": DEFAULT}]}
NESTED_BYTES = {"mask_codecs": [{"name": "packbits"}],
                "data_codecs": [{"name": "zarrs.optional", "configuration": {
                    "mask_codecs": [{"name": "packbits"}], "data_codecs": [{"name": "vlen-bytes"}]}}]}


def opt(inner: Any) -> dict[str, Any]:
    if isinstance(inner, str):
        inner = {"name": inner, "configuration": {}}
    return {"name": "zarrs.optional", "configuration": inner}


FIXED = [opt(t) for t in ("bool", "uint8", "int16", "float32", "float64", "complex128")]


def dtypes_for(codec: Any) -> list[dict[str, Any]]:
    """The data types a configuration's ``data_codecs`` take."""
    first = codec.data_codecs.to_json()[0]
    if first["name"] == "zarrs.optional":
        return [opt(t) for t in dtypes_for(OptionalCodec.from_config(first["configuration"]))]
    if first["name"] == "bytes":
        return FIXED
    if first["name"] == "vlen-utf8":
        return [opt("string"), opt("variable_length_bytes")]
    return [opt("bytes")]


def masks(shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """Validity masks: all missing, all present, or any."""
    return st.one_of(
        st.just(np.zeros(shape, dtype=bool)), st.just(np.ones(shape, dtype=bool)), hnp.arrays(np.bool_, shape)
    )


def fixed_elements(data_type: DataType, shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """Canonical elements: missing ones all zero bytes, valid bytes 0 or 1."""
    if not is_optional(data_type):
        return hnp.arrays(data_type.numpy, shape)

    def build(parts: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        values, valid = parts
        out = np.zeros(shape, dtype=data_type.numpy)
        out["value"][valid] = values[valid]
        out["valid"] = valid
        return out

    return st.tuples(fixed_elements(inner_type(data_type), shape), masks(shape)).map(build)


def variable_element(data_type: DataType) -> st.SearchStrategy[bytes]:
    if not is_optional(data_type):
        return st.text(max_size=6).map(str.encode) if data_type.is_string else st.binary(max_size=6)
    return st.one_of(st.just(b"\x00"), variable_element(inner_type(data_type)).map(lambda b: b + b"\x01"))


class TestOptionalContract(CodecContract):
    codec_class = OptionalCodec
    configs = [DEFAULT, COMPRESSED, BYTE_MASK, STRINGS, NESTED, NESTED_BYTES]
    golden = [
        # spec-fixtures/zarrs-optional/int16_null_fill chunk c/1: [M=1][D=6][mask 0b0111 packbits][3 int16]
        Golden(DEFAULT, opt("int16"), (4,), [(17220, True), (14306, True), (2899, True), (0, False)],
               "01000000000000000600000000000000" "07" "4443" "e237" "530b", ZARRS),
        # probe chunk zarrs wrote: 8 elements, mask 0b01001101 -> 0x4d, values 10, 30, 40, 70
        Golden(DEFAULT, opt("int16"), (8,), [(10, True), (0, False), (30, True), (40, True), (0, False), (0, False),
                                            (70, True), (0, False)],
               "01000000000000000800000000000000" "4d" "0a001e0028004600", ZARRS),
    ]

    def specs(self, codec: Any) -> st.SearchStrategy[ChunkSpec]:
        shapes = hnp.array_shapes(min_dims=0, max_dims=self.max_dims, min_side=0, max_side=6)
        return st.builds(spec_of, st.sampled_from(dtypes_for(codec)), shapes)

    def elements(self, spec: ChunkSpec, shape: Sequence[int]) -> st.SearchStrategy[ArrayBytes]:
        shape = tuple(shape)
        if not spec.dtype.is_variable:
            return fixed_elements(spec.dtype, shape).map(ArrayBytes.from_array)
        n = int(np.prod(shape, dtype=np.int64))
        items = st.one_of(
            st.lists(st.just(b"\x00"), min_size=n, max_size=n),
            st.lists(variable_element(inner_type(spec.dtype)).map(lambda b: b + b"\x01"), min_size=n, max_size=n),
            st.lists(variable_element(spec.dtype), min_size=n, max_size=n),
        )
        return items.map(lambda xs: ArrayBytes.from_bytes_list(xs, shape))

    def large_case(self, codec: Any) -> tuple[ChunkSpec, ArrayBytes, tuple[Any, ...]]:
        dtype = dtypes_for(codec)[0]
        spec = spec_of(dtype, (64, 64))
        n = 64 * 64
        valid = (np.arange(n) % 3 != 0).reshape(64, 64)
        if spec.dtype.is_variable:
            items = [b"%d\x01" % i if ok else b"\x00" for i, ok in enumerate(valid.reshape(-1))]
            if is_optional(inner_type(spec.dtype)):
                items = [b"\x00" if i % 5 == 0 else b + b"\x01" for i, b in enumerate(items)]
            return spec, ArrayBytes.from_bytes_list(items, (64, 64)), (slice(3, 5), np.array([40, 10, 11]))
        out = np.zeros((64, 64), dtype=spec.dtype.numpy)
        inner = inner_type(spec.dtype)
        if is_optional(inner):
            out["value"]["value"][valid] = 1
            out["value"]["valid"][valid] = True
        else:
            out["value"][valid] = (np.arange(n).reshape(64, 64) % 2)[valid].astype(inner.numpy)
        out["valid"] = valid
        return spec, ArrayBytes.from_array(out), (slice(3, 5), np.array([40, 10, 11]))
