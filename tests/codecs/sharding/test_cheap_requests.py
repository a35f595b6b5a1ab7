"""Shards read from cheap readers (local files): the inner chunks are read in
groups, each decoded as soon as it is read; other readers get one batch."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tests.codecs.sharding._helpers import LE, CountingReader, fixed, sharding, spec
from zarrpy.codecs.partial import BytesReader, RangeReader
from zarrpy.codecs.sharding.partial import DECODE_GROUPS

ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}


class CheapReader(CountingReader):
    """A counting reader that says its requests are cheap, and notes the threads reading."""

    cheap_requests = True

    def __init__(self, value):
        super().__init__(value)
        self.threads: set[int] = set()
        self._lock = threading.Lock()

    def read_many(self, requests):
        with self._lock:
            self.threads.add(threading.get_ident())
            return super().read_many(requests)


def shard_of(data, inner=(8, 8)):
    codec = sharding(list(inner), [LE, ZSTD])
    s = spec(data.shape, data.dtype)
    return codec, s, codec.encode(fixed(data), s)


@pytest.mark.parametrize("sel", [
    (slice(None), slice(None)),  # every inner chunk whole
    (slice(3, 61), slice(5, 50)),  # cut on every side: edge ones through the scratch buffer
])
def test_cheap_reader_reads_in_groups_on_the_pool_and_gets_the_same_result(sel):
    data = (np.arange(64 * 64, dtype="uint16").reshape(64, 64) * 7) % 1000
    codec, s, shard = shard_of(data)
    reader = CheapReader(shard)
    with ThreadPoolExecutor(2) as pool:
        decoder = codec.partial_decoder(reader, s, map_fn=lambda f, items: list(pool.map(f, items)))
        want = data[sel]
        out = np.zeros(want.shape, want.dtype)
        assert decoder.decode_selections_into([sel], [out])
    np.testing.assert_array_equal(out, want)
    assert len(reader.calls) == 1  # the index, once, before the groups
    assert 1 < len(reader.batches) <= DECODE_GROUPS  # one read per group
    assert reader.threads and threading.get_ident() not in reader.threads  # read by the pool's threads
    read = [r for batch in reader.batches for r in batch]
    spans = sorted((r.start, r.end) for r in read)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:]))  # nothing read twice


def test_other_readers_get_one_batch_before_any_decoding():
    data = np.arange(64 * 64, dtype="uint16").reshape(64, 64)
    codec, s, shard = shard_of(data)
    reader = CountingReader(shard)
    decoder = codec.partial_decoder(reader, s, map_fn=lambda f, items: [f(x) for x in items])
    out = np.zeros((40, 40), "uint16")
    assert decoder.decode_selections_into([(slice(10, 50), slice(20, 60))], [out])
    np.testing.assert_array_equal(out, data[10:50, 20:60])
    assert len(reader.batches) == 1


def test_readers_say_whether_requests_are_cheap():
    assert BytesReader(b"abc").cheap_requests
    assert RangeReader(BytesReader(b"abcdef"), 1, 3).cheap_requests
    assert not RangeReader(CountingReader(b"abcdef"), 1, 3).cheap_requests


def test_local_store_reader_is_cheap(tmp_path):
    from zarrpy.stores.local import LocalStore

    store = LocalStore(str(tmp_path))
    store.set("k", b"0123456789")
    with store.open_reader("k") as reader:
        assert reader.cheap_requests
