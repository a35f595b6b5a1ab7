"""Reads of optional strings through value/flag pairs (zarrpy.pipeline.paired).

The paired reads must give exactly what the element form gives (the path a
read through a cache takes): every selection kind, missing chunks with a
missing or a present fill, partial and whole chunks, sharded arrays, other
codec chains, and both string converters. The whole-chunk fast path (the
optional codec decoding straight into the buffer) is checked to be taken.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.cache import Cache
from zarrpy.codecs.optional import OptionalCodec
from zarrpy.core import _vlen_python, vlen_kernels
from zarrpy.core.dtypes.optional import optional_of
from zarrpy.pipeline.paired import MISSING_FLAG, PairedStrings

STRING = np.dtypes.StringDType()
OPT_STRING = optional_of("string")
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)


def make(values: list[str | None], chunk: int, **kwargs: object) -> zarrpy.Array:
    a = zarrpy.create_array({}, shape=(len(values),), dtype=OPT_STRING, chunks=(chunk,), **kwargs)
    a[...] = values
    return a


def cached_twin(a: zarrpy.Array) -> zarrpy.Array:
    """The same stored array opened with a cache: its reads use the element form."""
    return zarrpy.open_array(a.store, mode="r", cache=Cache(max_bytes=1 << 20))


def same_masked(got: np.ma.MaskedArray, want: np.ma.MaskedArray) -> None:
    assert isinstance(got, np.ma.MaskedArray) and got.dtype == STRING
    assert np.array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    assert got.data.tolist() == want.data.tolist()  # missing ones read as "" in both


def test_reads_use_pairs_and_the_fast_path(monkeypatch):
    calls = []
    real = OptionalCodec.decode_into

    def spy(self, data, spec, dest, options=None):
        done = real(self, data, spec, dest, options)
        calls.append(done)
        return done

    monkeypatch.setattr(OptionalCodec, "decode_into", spy)
    a = make(["a", None, "ßé", "", None, "x\x00y"], 3)
    assert isinstance(a._io.read_form, PairedStrings)
    got = a[...]
    assert calls == [True, True]  # both chunks decoded straight into the buffer
    assert got.mask.tolist() == [False, True, False, False, True, False]
    assert got.data.tolist() == ["a", "", "ßé", "", "", "x\x00y"]
    assert not isinstance(cached_twin(a)._io.read_form, PairedStrings)


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.one_of(st.none(), TEXT), min_size=1, max_size=14), chunk=st.integers(1, 5),
       sharded=st.booleans(), fill=st.sampled_from([None, "f", ""]), data=st.data())
def test_paired_reads_equal_the_element_form(values, chunk, sharded, fill, data):
    kwargs: dict[str, object] = {"fill_value": fill}
    if sharded:
        kwargs["shards"] = (2 * chunk,)
    a = make(values, chunk, **kwargs)
    # leave a chunk unwritten now and then: it reads as the fill
    if data.draw(st.booleans()) and len(values) > chunk:
        a[:chunk] = None if fill is None else fill
    twin = cached_twin(a)
    same_masked(a[...], twin[...])
    start = data.draw(st.integers(0, len(values) - 1))
    stop = data.draw(st.integers(start + 1, len(values)))
    step = data.draw(st.integers(1, 3))
    same_masked(a[start:stop:step], twin[start:stop:step])
    points = data.draw(st.lists(st.integers(0, len(values) - 1), min_size=1, max_size=6))
    same_masked(a.vindex[np.array(points)], twin.vindex[np.array(points)])
    one = a[start]
    other = twin[start]
    assert (one is np.ma.masked) == (other is np.ma.masked)
    if one is not np.ma.masked:
        assert one == other
    assert np.array_equal(a.validity[...], twin.validity[...])


def test_two_dimensional_and_zero_dimensional():
    values = np.array([["a", "b", "c"], ["d", "e", "f"]], dtype=object)
    missing = np.array([[True, False, False], [False, False, True]])
    a = zarrpy.create_array({}, shape=(2, 3), dtype=OPT_STRING, chunks=(1, 2))
    a[...] = np.ma.MaskedArray(values, mask=missing)
    got = a[:, 1:]
    same_masked(got, cached_twin(a)[:, 1:])
    assert a.validity[...].shape == (2, 3, 1)
    z = zarrpy.create_array({}, shape=(), dtype=OPT_STRING)
    assert z[()] is np.ma.masked
    z[()] = "only"
    assert z[()] == "only"


def test_other_data_codecs_take_the_general_path():
    # zstd inside the optional codec's data chain: no fast path, same answer
    serializer = {"name": "zarrs.optional", "configuration": {
        "mask_codecs": [{"name": "packbits"}],
        "data_codecs": [{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 1}}]}}
    values = ["a", None, "bc", None, "日本"]
    a = zarrpy.create_array({}, shape=(5,), dtype=OPT_STRING, chunks=(5,), serializer=serializer)
    a[...] = values
    same_masked(a[...], cached_twin(a)[...])
    assert a[...].mask.tolist() == [v is None for v in values]


def test_the_pure_python_converter_gives_the_same(monkeypatch):
    values = ["a", None, "ßé", "", None, "x\x00y", "😀"]
    want = make(values, 3)[...]
    monkeypatch.setattr(vlen_kernels, "_impl", _vlen_python)
    got = make(values, 3)[...]
    same_masked(got, want)


def test_flags_keep_their_nul():
    # a numpy "U" array drops a trailing NUL: the flags must be set as str
    form = make(["a", None], 2)._io.read_form
    assert isinstance(form, PairedStrings)
    assert form.fill_block((3,)).tolist() == ["", MISSING_FLAG]


@pytest.mark.parametrize("flip", [0, 1])
def test_corrupt_chunks_still_raise(flip):
    from zarrpy.errors import ChunkDecodeError

    a = make(["abc", None, "de"], 3, compressors=None)
    key = "c/0"
    raw = bytearray(a.store.get(key))
    # shorten the data part: the header's lengths no longer fit the chunk
    a.store.set(key, bytes(raw[:-1 - flip]))
    with pytest.raises(ChunkDecodeError):
        a[...]


@pytest.mark.parametrize("sharded", [False, True])
def test_paired_reads_send_what_plain_string_reads_send(sharded):
    """Round trips: an optional-string read asks the store exactly what a
    plain string read of the same layout asks, every stored object it needs
    in one wave."""
    from tests.wave_store import WaveStore
    from zarrpy.stores import MemoryStore

    kwargs: dict[str, object] = {"chunks": (4,), "shards": (8,)} if sharded else {"chunks": (4,)}
    counts = {}
    for name, dtype in (("plain", str), ("optional", OPT_STRING)):
        inner = MemoryStore()
        a = zarrpy.create_array(inner, shape=(32,), dtype=dtype, **kwargs)
        a[...] = [f"s{i}" for i in range(32)]
        remote = zarrpy.open_array(WaveStore(inner, latency=0.01), mode="r")
        remote.store.reset()
        whole = remote[...]
        full = (remote.store.requests, remote.store.waves)
        remote.store.reset()
        region = remote[3:13]
        counts[name] = (full, (remote.store.requests, remote.store.waves))
        assert np.asarray(whole).tolist()[:2] == ["s0", "s1"] and np.asarray(region).tolist()[0] == "s3"
    assert counts["optional"] == counts["plain"]
    full, region = counts["optional"]
    assert full == ((4, 1) if sharded else (8, 1))  # every stored object in one wave
    # [3:13] touches chunks 0..3; sharded, it needs every inner chunk of shards
    # 0 and 1, which are therefore read whole (no index first)
    assert region == ((2, 1) if sharded else (4, 1))
