"""The codec contracts for ``reshape`` and ``zarrs.squeeze`` (golden bytes:
chunks the zarrs pipeline wrote, ``spec-fixtures/zarrs-codecs/``)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.codecs.contract import CodecContract, Golden, spec_of
from zarrpy.codecs.reshape import ReshapeCodec
from zarrpy.codecs.squeeze import SqueezeCodec
from zarrpy.core.array_bytes import ArrayBytes

DTYPES = ("uint8", "int16", "float64", "complex64", "bool", "string", "variable_length_bytes")


class TestReshapeContract(CodecContract):
    codec_class = ReshapeCodec
    configs = [{"shape": [-1]}, {"shape": [[0, 1], [2]]}, {"shape": [[0], -1, 2]}, {"shape": [[0, 1, 2]]},
               {"shape": [[], [0], [1]]}]
    dtypes = DTYPES
    golden = [
        # zarrs pipeline, spec-fixtures/zarrs-codecs/reshape_merge_int16 chunk c/0/0
        Golden({"shape": [[0, 1]]}, "int16", (4, 6),
               [[-497, -490, -483, -476, -469, -462], [-413, -406, -399, -392, -385, -378],
                [-329, -322, -315, -308, -301, -294], [-245, -238, -231, -224, -217, -210]],
               "0ffe16fe1dfe24fe2bfe32fe63fe6afe71fe78fe7ffe86feb7febefec5feccfed3fedafe0bff12ff19ff20ff27ff2eff",
               "zarrs-python 0.2.3 (zarrs pipeline)"),
    ]

    def _shapes(self, codec):
        """Chunk shapes ``codec`` takes (sides >= 1: arrays make no empty chunks)."""
        dims = [d for d in codec.shape if isinstance(d, tuple)]
        ndim = max((d[-1] + 1 for d in dims if d), default=0)
        if codec.shape == (-1,):
            return hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5)
        if 2 in codec.shape:  # [[0], -1, 2]: an even last side
            return st.tuples(st.integers(1, 5), st.integers(1, 3).map(lambda n: 2 * n))
        return hnp.array_shapes(min_dims=ndim, max_dims=ndim, min_side=1, max_side=5)

    def specs(self, codec):
        return st.builds(spec_of, st.sampled_from(self.dtypes), self._shapes(codec))

    def large_case(self, codec):
        shape = (8, 8, 8) if any(isinstance(d, tuple) and d and d[-1] == 2 for d in codec.shape) else (64, 64)
        spec = spec_of("uint16", shape)
        data = (np.arange(int(np.prod(shape)), dtype=np.uint16) * 7).reshape(shape)
        return spec, ArrayBytes.from_array(data), (slice(1, 3),) * (len(shape) - 1) + (np.array([5, 2]),)


class TestSqueezeContract(CodecContract):
    codec_class = SqueezeCodec
    configs = [None, {}]
    dtypes = DTYPES
    golden = [
        # zarrs pipeline, spec-fixtures/zarrs-codecs/squeeze_uint16 chunk c/0/0/0
        Golden(None, "uint16", (3, 1, 4), [[[3, 10, 17, 24]], [[59, 66, 73, 80]], [[115, 122, 129, 136]]],
               "03000a00110018003b0042004900500073007a0081008800", "zarrs-python 0.2.3 (zarrs pipeline)"),
    ]

    def specs(self, codec):
        # plenty of size-1 sides
        shapes = st.lists(st.sampled_from([0, 1, 1, 2, 3, 5]), min_size=0, max_size=4).map(tuple)
        return st.builds(spec_of, st.sampled_from(self.dtypes), shapes)

    def expects_partial_decode(self, codec):
        return True  # the selection without the size-1 dims, read by range through `bytes`

    def large_case(self, codec):
        spec = spec_of("uint16", (16, 1, 16, 1))
        data = (np.arange(256, dtype=np.uint16) * 3).reshape(spec.shape)
        return spec, ArrayBytes.from_array(data), (slice(2, 4), np.array([0, 0]), np.array([9, 1]), slice(0, 1))
