"""reshape and zarrs.squeeze beyond the contract: bad configurations, the
spec's alignment rule, and zarrs' accepted forms."""

from __future__ import annotations

import pytest

from tests.codecs.contract import spec_of
from zarrpy.codecs.registry import codec_from_json
from zarrpy.codecs.reshape import ReshapeCodec
from zarrpy.codecs.squeeze import SqueezeCodec
from zarrpy.errors import CodecError


@pytest.mark.parametrize("shape", [[[0, 1], 10, [3, 4]], [[0, 1], [2], 3], [[0, 1], -1, [3], 4], [-1],
                                   [[0], -1, [2, 3]], [[0], -1, [3]]])
def test_zarrs_valid_shapes_parse(shape):
    # zarrs_metadata_ext reshape.rs tests: valid1-valid6
    assert ReshapeCodec.from_config({"shape": shape}).to_config() == {"shape": shape}


@pytest.mark.parametrize("shape", [[[1], [0]], [[1, 0], 10, [3, 4]], [[3, 4], 10, [0, 1]], [-1, -1], 7, [0], [-2],
                                   [True], [[0.5]], [[-1]], ["a"]])
def test_bad_shapes_name_codec_and_field(shape):
    with pytest.raises(CodecError, match="codec 'reshape': 'shape'"):
        codec_from_json({"name": "reshape", "configuration": {"shape": shape}})


def test_missing_shape():
    with pytest.raises(CodecError, match="reshape.*'shape'"):
        ReshapeCodec.from_config({})


@pytest.mark.parametrize(
    ("shape", "chunk", "message"),
    [
        ([[0, 1, 2]], (2, 3), "dimension 2"),
        ([5], (2, 3), "element counts differ"),
        ([-1, 4], (2, 3), "element counts differ"),
        ([[0], [1]], (2, 3, 4), "element counts differ"),
        ([4, [1], 2], (2, 3, 4), "does not line up"),  # 24 elements, but 4 * ... != 2 * ...
    ],
)
def test_shapes_that_do_not_fit_the_chunk(shape, chunk, message):
    codec = ReshapeCodec(shape)
    with pytest.raises(CodecError, match=message):
        codec.resolve(spec_of("int8", chunk))


def test_alignment_rule():
    # [2, [1]] on (2, 3): counts match (6) and entry 1 lines up: B[:1] = 2 == A[:1]
    assert ReshapeCodec([2, [1]]).resolve_shape((2, 3)) == (2, 3)
    # [6, [2]] on (2, 3, 4): B[:1] = 6 == A[:2]
    assert ReshapeCodec([6, [2]]).resolve_shape((2, 3, 4)) == (6, 4)
    with pytest.raises(CodecError, match="does not line up"):
        ReshapeCodec([[1], 8]).resolve_shape((2, 3, 4))


def test_squeeze_reads_empty_configuration_and_rejects_fields():
    assert codec_from_json({"name": "zarrs.squeeze", "configuration": {}}) == SqueezeCodec()
    with pytest.raises(CodecError, match="zarrs.squeeze"):
        codec_from_json({"name": "zarrs.squeeze", "configuration": {"axes": [1]}})
    assert SqueezeCodec().resolve(spec_of("int8", (1, 1))).shape == ()
