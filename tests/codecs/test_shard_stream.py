"""ShardStream: a shard written inner chunk by inner chunk is the shard ``ShardLayout.build`` makes."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy
from tests.codecs.sharding._helpers import sharding, spec
from zarrpy.codecs.sharding import stream as stream_module
from zarrpy.codecs.sharding.stream import ShardStream
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import CodecError

ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
LE = {"name": "bytes", "configuration": {"endian": "little"}}
CRC = {"name": "crc32c"}
VLEN = {"name": "vlen-utf8"}


class Sink:
    """A byte sink that records when it was opened and what it got."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()
        self.opened = 0

    def open(self) -> io.BytesIO:
        self.opened += 1
        return self.buffer


def _inner_chunk(draw, dtype: str, shape, fill_ratio: float) -> ArrayBytes:
    n = int(np.prod(shape))
    if draw(st.floats(0, 1)) < fill_ratio:  # all fill: left out of the shard
        values = np.zeros(n, dtype=np.int64)
    else:
        values = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int64)
    if dtype == "string":
        return ArrayBytes.from_strings(np.array(["" if v == 0 else "x" * int(v) for v in values],
                                                dtype=np.dtypes.StringDType()).reshape(shape))
    return ArrayBytes.from_array(values.astype(dtype).reshape(shape))


@st.composite
def shards(draw):
    """A bound layout and inner chunks ``(position, chunk)`` in a random order (some all fill)."""
    ndim = draw(st.integers(1, 3))
    inner = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    grid = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(["uint16", "float32", "string"]))
    codecs = [VLEN] if dtype == "string" else [LE]
    codecs += draw(st.sampled_from([[], [ZSTD], [CRC], [ZSTD, CRC]]))
    location = draw(st.sampled_from(["end", "start"]))
    index_codecs = draw(st.sampled_from([[LE, CRC], [LE]]))
    codec = sharding(inner, codecs, index_codecs, location)
    layout = codec.layout(spec(tuple(g * c for g, c in zip(grid, inner)), dtype, "" if dtype == "string" else 0))
    positions = draw(st.permutations(range(layout.nchunks)))
    positions = positions[: draw(st.integers(0, layout.nchunks))]
    fill_ratio = draw(st.sampled_from([0.0, 0.3, 1.0]))
    return layout, [(p, _inner_chunk(draw, dtype, inner, fill_ratio)) for p in positions]


@settings(max_examples=150, deadline=None)
@given(shards())
def test_streamed_bytes_are_the_built_shard(case):
    layout, chunks = case
    sink = Sink()
    with ShardStream(layout, sink.open) as stream:
        for position, chunk in chunks:
            stream.add(position, chunk)
        stored = stream.finish()
    pieces = [(p, layout.encode_inner(c)) for p, c in chunks if not layout.is_fill(c)]
    assert stored == bool(pieces) and stream.count == len(pieces)
    if not pieces:  # all fill: nothing opened, nothing written (the caller deletes the shard)
        assert sink.opened == 0 and sink.buffer.getvalue() == b""
        return
    expected = layout.build(pieces)
    assert sink.opened == 1
    assert sink.buffer.getvalue() == expected and stream.nbytes == len(expected)
    # and it reads back: every inner chunk given, the others fill
    index = layout.read_index(expected)
    for position, chunk in chunks:
        stored = index.get(position)
        got = layout.fill_chunk() if stored is None else layout.decode_inner(
            position, expected[stored[0] : stored[0] + stored[1]])
        assert _elements(got) == _elements(chunk)


def _elements(chunk: ArrayBytes) -> list:
    return chunk.array.reshape(-1).tolist() if chunk.is_fixed else chunk.to_bytes_list()


@pytest.mark.parametrize("location", ["end", "start"])
def test_encoded_chunks_from_elsewhere_and_when_the_sink_opens(location):
    """add_encoded takes bytes encoded by any thread; the sink opens at the first
    byte due: the first stored inner chunk (index at the end) or the finish (start)."""
    layout = sharding((2, 2), [LE, ZSTD], index_location=location).layout(spec((4, 4)))
    sink = Sink()
    stream = ShardStream(layout, sink.open)
    one = ArrayBytes.from_array(np.arange(1, 5, dtype="uint16").reshape(2, 2))
    stream.leave_out([0, 2])  # never given: 1 is due first
    stream.add_encoded(3, None)  # a fill inner chunk: nothing to store
    assert sink.opened == 0
    stream.add_encoded(1, stream.encode(one))
    assert sink.opened == (1 if location == "end" else 0)
    assert stream.encode(ArrayBytes.from_array(np.zeros((2, 2), "uint16"))) is None
    assert stream.finish()
    assert sink.opened == 1
    assert sink.buffer.getvalue() == layout.build([(1, layout.encode_inner(one))])


def test_bad_inner_chunks_are_refused_naming_the_codec():
    layout = sharding((2, 2)).layout(spec((4, 4)))
    stream = ShardStream(layout, Sink().open)
    chunk = ArrayBytes.from_array(np.ones((2, 2), "uint16"))
    stream.add(0, chunk)
    with pytest.raises(CodecError, match=r"'sharding_indexed': inner chunk \(0, 0\) was given twice"):
        stream.add(0, chunk)
    with pytest.raises(CodecError, match="'sharding_indexed': inner chunk position 4 outside a shard of 4"):
        stream.add(4, chunk)
    with pytest.raises(CodecError, match=r"'sharding_indexed': inner chunk of shape \(1, 2\), expected \(2, 2\)"):
        stream.add(1, ArrayBytes.from_array(np.ones((1, 2), "uint16")))


def test_an_index_at_the_start_spools_to_disk_past_the_memory_bound(monkeypatch):
    monkeypatch.setattr(stream_module, "SPOOL_MEMORY_NBYTES", 1000)
    monkeypatch.setattr(stream_module, "COPY_BLOCK_NBYTES", 777)  # the copy to the sink goes in pieces
    layout = sharding((16, 16), index_location="start").layout(spec((64, 64)))
    rng = np.random.default_rng(1)
    chunks = [(p, ArrayBytes.from_array(rng.integers(1, 9, (16, 16)).astype("uint16"))) for p in (0, 2, 5, 9, 15)]
    sink = Sink()
    with ShardStream(layout, sink.open) as stream:
        stream.leave_out([p for p in range(16) if p not in (0, 2, 5, 9, 15)])
        for position, chunk in chunks:
            stream.add(position, chunk)
        assert stream._spool is not None and stream._spool._rolled  # on disk: 5 x 512 bytes > 1000
        assert stream.finish()
    assert sink.buffer.getvalue() == layout.build([(p, layout.encode_inner(c)) for p, c in chunks])


@pytest.mark.integration
@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("dtype", ["uint16", "string"])
def test_zarr_python_reads_streamed_shards(tmp_path, location, dtype):
    """Shards streamed with their inner chunks given in reverse order (the
    stream holds them back and lays them out in C order) read in zarr-python
    as the data they hold."""
    zarr = pytest.importorskip("zarr")
    shape, inner, shard = (10, 9), (2, 3), (4, 6)
    fill = "" if dtype == "string" else 0
    a = zarrpy.create_array(str(tmp_path / "a.zarr"), shape=shape, dtype=dtype, chunks=inner, fill_value=fill,
                            shards={"shape": shard, "index_location": location},
                            compressors=[ZSTD])
    layout = a._io.chain.array_to_bytes.layout(a._io.spec)
    numbers = (np.arange(np.prod(shape)) % 5).reshape(shape)
    expected = numbers.astype("uint16") if dtype == "uint16" else np.array(
        ["" if v == 0 else "s" * int(v) for v in numbers.reshape(-1)], dtype=np.dtypes.StringDType()).reshape(shape)
    padded_shape = tuple(-(-s // c) * c for s, c in zip(shape, shard))
    padded = np.full(padded_shape, fill, dtype=expected.dtype)
    padded[: shape[0], : shape[1]] = expected
    for coords in np.ndindex(*(p // c for p, c in zip(padded_shape, shard))):
        box = padded[tuple(slice(c * s, (c + 1) * s) for c, s in zip(coords, shard))]
        chunks = []
        for position in reversed(range(layout.nchunks)):
            ic = layout.coords(position)
            block = np.ascontiguousarray(box[tuple(slice(i * n, (i + 1) * n) for i, n in zip(ic, inner))])
            chunks.append((position, ArrayBytes.from_array(block) if dtype == "uint16" else ArrayBytes.from_strings(block)))
        sink = io.BytesIO()
        with ShardStream(layout, lambda: sink) as stream:
            for position, chunk in chunks:
                stream.add(position, chunk)
            if stream.finish():
                a.store.set(a.chunk_key(coords), sink.getvalue())
    got = zarr.open_array(str(tmp_path / "a.zarr"), mode="r")[...]
    if dtype == "string":
        assert [str(x) for x in got.reshape(-1)] == [str(x) for x in expected.reshape(-1)]
    else:
        assert np.array_equal(got, expected)
    assert np.array_equal(zarrpy.open_array(str(tmp_path / "a.zarr"))[...], expected)
