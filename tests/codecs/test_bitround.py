"""bitround beyond the contract: numcodecs' exact bits for every keepbits of
every float width (hypothesis over all bit patterns), and refusals."""

from __future__ import annotations

import numcodecs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import spec_of
from zarrpy.codecs.bitround import BitRoundCodec
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import CodecError

MANTISSA = {"float16": 10, "float32": 23, "float64": 52}


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_matches_numcodecs_bit_for_bit(data):
    dtype = data.draw(st.sampled_from(sorted(MANTISSA)))
    keepbits = data.draw(st.integers(0, MANTISSA[dtype]))
    array = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=2, max_side=8)))
    ours = BitRoundCodec(keepbits).encode(ArrayBytes.from_array(array), spec_of(dtype, array.shape)).array
    theirs = np.asarray(numcodecs.BitRound(keepbits).encode(array)).view(dtype)
    assert ours.dtype == np.dtype(dtype)
    assert ours.tobytes() == theirs.tobytes()


def test_decode_is_the_identity():
    chunk = ArrayBytes.from_array(np.array([1.2345], dtype=np.float32))
    assert BitRoundCodec(2).decode(chunk, spec_of("float32", (1,))) is chunk


def test_integers_and_other_types_are_refused():
    for dtype in ("int32", "uint8", "bool", "string"):
        with pytest.raises(CodecError, match=f"codec 'bitround': data type '{dtype}'"):
            BitRoundCodec(3).resolve(spec_of(dtype, (2,)))


@pytest.mark.parametrize("config", [{}, {"keepbits": -1}, {"keepbits": 2.5}, {"keepbits": True}, {"keepbits": 3, "x": 1}])
def test_bad_configuration_names_codec_and_field(config):
    with pytest.raises(CodecError, match="codec 'bitround'"):
        codec_from_json({"name": "bitround", "configuration": config})


def test_numcodecs_name_stays_the_adapter_with_the_same_bits():
    adapter = codec_from_json({"name": "numcodecs.bitround", "configuration": {"keepbits": 5}})
    array = np.linspace(-3, 3, 17, dtype=np.float64)
    spec = spec_of("float64", (17,))
    ours = BitRoundCodec(5).encode(ArrayBytes.from_array(array), spec).array
    assert adapter.encode(ArrayBytes.from_array(array), spec).array.tobytes() == ours.tobytes()
