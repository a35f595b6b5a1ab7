"""The byte-reader protocol (zarrpy.core.byte_reader): declared members with
defaults, the plain readers, and the stores' readers implementing it."""

from __future__ import annotations

import numpy as np

import zarrpy.codecs.abc
import zarrpy.codecs.partial
from tests.codecs.sharding._helpers import fixed, sharding, spec
from zarrpy.core.byte_range import RangeRequest, SuffixRequest, slice_bytes
from zarrpy.core.byte_reader import ByteReader, BytesReader, PrefetchedReader, RangeReader
from zarrpy.core.chunk_spec import ChunkSpec
from zarrpy.stores import LocalStore, MemoryStore
from zarrpy.stores.abc import KeyReader


class CallOnly(ByteReader):
    """A reader that writes only ``__call__``: the rest is the protocol's defaults."""

    def __init__(self, value: bytes | None):
        self.value = value
        self.calls: list = []

    def __call__(self, request=None):
        self.calls.append(request)
        return None if self.value is None else slice_bytes(self.value, request)


class CountingStore(MemoryStore):
    """A MemoryStore counting each kind of request (a batch counts once)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts = {"get": 0, "batch": 0, "getsize": 0}

    def get(self, key, byte_range=None):
        self.counts["get"] += 1
        return super().get(key, byte_range)

    def get_partial_values(self, requests):
        self.counts["batch"] += 1
        return [MemoryStore.get(self, k, r) for k, r in requests]

    def getsize(self, key):
        self.counts["getsize"] += 1
        return super().getsize(key)


def test_defaults_one_call_per_request_unknown_size_not_cheap():
    reader = CallOnly(b"0123456789")
    requests = [RangeRequest(1, 3), None, SuffixRequest(2)]
    assert reader.read_many(requests) == [b"12", b"0123456789", b"89"]
    assert reader.calls == requests
    assert reader.size() is None
    assert reader.cheap_requests is False


def test_range_reader_batches_through_its_parent_and_takes_its_cheapness():
    class Batching(CallOnly):
        def __init__(self, value):
            super().__init__(value)
            self.batches: list = []

        def read_many(self, requests):
            self.batches.append(list(requests))
            return [slice_bytes(self.value, r) for r in requests]

    parent = Batching(b"abcdefghij")
    reader = RangeReader(parent, 2, 5)
    assert reader.read_many([RangeRequest(0, 2), SuffixRequest(1), None]) == [b"cd", b"g", b"cdefg"]
    assert parent.batches == [[RangeRequest(2, 4), RangeRequest(6, 7), RangeRequest(2, 7)]] and parent.calls == []
    assert reader.size() == 5
    assert not reader.cheap_requests and RangeReader(BytesReader(b"x"), 0, 1).cheap_requests


def test_bytes_and_prefetched_readers():
    assert BytesReader(b"abc").size() == 3 and BytesReader(None).size() is None
    assert BytesReader(None).read_many([None, RangeRequest(0, 1)]) == [None, None]
    fallback = CallOnly(b"0123456789")
    reader = PrefetchedReader(10, fallback)
    reader.add([RangeRequest(2, 5)], [b"234"])
    assert reader.read_many([RangeRequest(3, 5), RangeRequest(7, 9)]) == [b"34", b"78"]
    assert fallback.calls == [RangeRequest(7, 9)]  # only the unplanned request went out
    assert reader.size() == 10 and reader.cheap_requests


def test_stores_readers_implement_the_protocol(tmp_path):
    assert ByteReader in KeyReader.__mro__  # explicitly, so it has the defaults
    store = LocalStore(str(tmp_path))
    store.set("k", b"0123456789")
    with store.open_reader("k") as reader:
        assert isinstance(reader, KeyReader) and reader.cheap_requests and reader.size() == 10
    memory = MemoryStore()
    memory.set("k", b"0123")
    assert not memory.reader("k").cheap_requests and memory.reader("k").size() == 4


def test_a_missing_shard_through_a_key_reader_costs_one_request():
    """size() answers "missing": the index is not asked for as well."""
    store = CountingStore()
    codec, s = sharding([2]), spec((4,))
    decoder = codec.partial_decoder(store.reader("absent"), s)
    assert decoder.decode_selection((slice(0, 3),)) is None
    assert store.counts == {"get": 0, "batch": 0, "getsize": 1}


def test_a_present_shard_is_read_by_its_length_then_its_index_by_range():
    store = CountingStore()
    codec, s = sharding([2]), spec((4,))
    store.set("shard", codec.encode(fixed(np.arange(4, dtype="uint16")), s))
    decoder = codec.partial_decoder(store.reader("shard"), s)
    assert decoder.decode_selection((slice(1, 3),)).array.tolist() == [1, 2]
    # The length, the index by an explicit range, then each half-wanted inner
    # chunk (plain `bytes`) read in part by its own decoder: one batch each.
    assert store.counts == {"get": 1, "batch": 2, "getsize": 1}


def test_old_import_locations_name_the_same_objects():
    for name in ("ByteReader", "BytesReader", "PrefetchedReader", "RangeReader"):
        assert getattr(zarrpy.codecs.partial, name) is globals()[name]
    assert zarrpy.codecs.abc.ChunkSpec is ChunkSpec is zarrpy.codecs.ChunkSpec
    assert zarrpy.codecs.abc.ByteReader is ByteReader
