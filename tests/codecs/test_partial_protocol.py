"""zarrpy.codecs.partial: the one partial-or-whole rule, and the declared
defaults of partial decoders."""

from __future__ import annotations

import numpy as np
import pytest

from zarrpy.codecs.partial import (
    PARTIAL,
    PARTIAL_UNCHECKED,
    WHOLE_ONLY,
    ArrayPartialDecoder,
    WholeChunkDecoder,
    reads_partially,
)
from zarrpy.core.array_bytes import ArrayBytes


@pytest.mark.parametrize("caps, wanted, total, flags, expected", [
    (WHOLE_ONLY, 1, 100, {}, False),  # the decoder would decode everything anyway
    (WHOLE_ONLY, 1, 100, {"holds_chunks": True, "indexed": True}, False),
    (PARTIAL, 50, 100, {}, True),  # at most half
    (PARTIAL, 51, 100, {}, False),
    (PARTIAL, 100, 100, {"indexed": True}, True),  # parts read through an index: always
    (PARTIAL, 10, 100, {"indexed": True, "every_part_whole": True}, False),  # same bytes, one request
    (PARTIAL, 51, 100, {"holds_chunks": True}, False),  # holding chunks alone changes nothing here
    (PARTIAL_UNCHECKED, 1, 100, {}, False),  # crc32c: read whole, checked
    (PARTIAL_UNCHECKED, 1, 100, {"holds_chunks": True}, True),  # a shard + crc32c: too big to read whole
    (PARTIAL_UNCHECKED, 60, 100, {"holds_chunks": True}, False),
    (PARTIAL_UNCHECKED, 60, 100, {"holds_chunks": True, "indexed": True}, True),
])
def test_the_rule(caps, wanted, total, flags, expected):
    assert reads_partially(caps, wanted, total, **flags) is expected


def test_decode_into_defaults_decode_then_copy():
    chunk = np.arange(12, dtype="int32").reshape(3, 4)
    decoder: ArrayPartialDecoder = WholeChunkDecoder(lambda: ArrayBytes.from_array(chunk))
    assert decoder.decodes_into is False  # nothing better than a copy
    out = np.full((5, 6), -1, dtype="int32")
    sels = [(slice(0, 2), slice(1, 3)), (np.array([2]), slice(0, 4))]
    assert decoder.decode_selections_into(sels, [out[:2, :2], out[4:5, 2:]])
    np.testing.assert_array_equal(out[:2, :2], chunk[0:2, 1:3])
    np.testing.assert_array_equal(out[4:5, 2:], chunk[2:3, 0:4])
    assert (out[2:4] == -1).all()


def test_decode_into_default_writes_nothing_for_a_missing_chunk():
    decoder = WholeChunkDecoder(lambda: None)
    out = np.full((2, 2), 7, dtype="int32")
    assert decoder.decode_selections_into([(slice(0, 2), slice(0, 2))], [out]) is False
    assert (out == 7).all()
