"""subchunk_write_order: the order inner chunks are laid out in a shard, on every write path.

The order is a write setting of the codec object (not in its JSON, as in
zarr-python). Whatever path writes a shard (whole-shard encode, a partial
update of a shard laid out in another order, the streaming encoder given
inner chunks in any order), its inner chunks lie in the codec's order and
the shard is the one :meth:`ShardLayout.build` makes.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.codecs.sharding._helpers import LE, fixed, sharding, spec, strings
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.sharding import ShardingCodec
from zarrpy.codecs.sharding.codec import chain_with_write_order
from zarrpy.codecs.sharding.order import WRITE_ORDERS, morton_codes, write_order, write_rank
from zarrpy.codecs.sharding.stream import ShardStream
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import CodecError

from tests.integration.oracles import needs_zarr_write_orders

ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
ORDERS = list(WRITE_ORDERS)


def ordered(codec: ShardingCodec, order: str) -> ShardingCodec:
    return codec.with_write_order(order)


def layout_order(layout, shard: bytes) -> list[int]:
    """The positions of a shard's stored inner chunks, by their offset."""
    index = layout.read_index(shard)
    present = [p for p in range(layout.nchunks) if index.get(p) is not None]
    return sorted(present, key=lambda p: index.get(p)[0])


def expected_order(layout, present) -> list[int]:
    present = set(present)
    return [p for p in write_order(layout.grid_shape, layout.write_order).tolist() if p in present]


# -- the orders ---------------------------------------------------------------
def test_the_orders_on_small_grids():
    assert write_order((2, 3), "lexicographic").tolist() == [0, 1, 2, 3, 4, 5]
    assert write_order((2, 3), "unordered").tolist() == [0, 1, 2, 3, 4, 5]
    assert write_order((2, 3), "colexicographic").tolist() == [0, 3, 1, 4, 2, 5]
    # compressed Morton: dimension 0 takes the lowest bit; on a 4 x 2 grid
    # dimension 1 runs out of bits after the first level.
    coords = [tuple(int(c) for c in np.unravel_index(p, (4, 2))) for p in write_order((4, 2), "morton")]
    assert coords == [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (3, 0), (2, 1), (3, 1)]
    assert write_order((), "morton").tolist() == [0]  # a 0-d shard: one inner chunk
    assert morton_codes((3, 3)).tolist() == [0, 2, 8, 1, 3, 9, 4, 6, 12]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("grid", [(1,), (7,), (2, 2), (5, 3), (3, 1, 4), (4, 4, 4), (6, 9)])
def test_an_order_is_a_permutation_and_its_rank_the_inverse(order, grid):
    positions = write_order(grid, order)
    assert sorted(positions.tolist()) == list(range(int(np.prod(grid))))
    rank = write_rank(grid, order)
    assert (rank[positions] == np.arange(len(positions))).all()
    assert not positions.flags.writeable and not rank.flags.writeable


@needs_zarr_write_orders
@pytest.mark.parametrize("grid", [(2, 2), (5, 2), (3, 3, 3), (33, 33), (1, 7), (7, 1, 3), (6,), (9, 17), ()])
def test_orders_match_zarr_python(grid):
    """The same coordinates, in the same order, as zarr-python 3.4's iterators."""
    indexing = pytest.importorskip("zarr.core.indexing")
    for order, theirs in [("morton", indexing.morton_order_coords), ("lexicographic", indexing.lexicographic_order_coords),
                          ("colexicographic", indexing.colexicographic_order_coords)]:
        mine = [tuple(int(c) for c in np.unravel_index(p, grid)) for p in write_order(grid, order)]
        assert mine == [tuple(c) for c in theirs(grid)], order


def test_an_unknown_order_is_refused_naming_the_codec_and_field():
    with pytest.raises(CodecError, match=r"codec 'sharding_indexed': 'subchunk_write_order' must be one of "
                                         r"\['lexicographic', 'colexicographic', 'morton', 'unordered'\], got 'z'"):
        ShardingCodec((2, 2), subchunk_write_order="z")
    with pytest.raises(CodecError, match="'subchunk_write_order'"):
        ShardingCodec.from_config({"chunk_shape": [2], "subchunk_write_order": "Morton"})
    with pytest.raises(ValueError, match="unknown subchunk write order 'x'"):
        write_order((2,), "x")


# -- the codec value ------------------------------------------------------------
def test_the_order_stays_out_of_the_json_but_is_part_of_the_value():
    plain = sharding((2, 2), [LE, ZSTD])
    morton = plain.with_write_order("morton")
    assert plain.subchunk_write_order == "lexicographic"
    assert morton.to_json() == plain.to_json()  # what zarr-python writes: no such field
    assert "subchunk_write_order" not in morton.to_config()
    assert morton != plain and hash(morton) != hash(plain)
    assert morton == plain.with_write_order("morton") and hash(morton) == hash(plain.with_write_order("morton"))
    assert plain.with_write_order("lexicographic") is plain
    assert "subchunk_write_order='morton'" in repr(morton) and "subchunk_write_order" not in repr(plain)
    # zarr-python's from_dict takes it as a configuration member: so does from_config
    assert (ShardingCodec.from_config({"chunk_shape": [2, 2], "subchunk_write_order": "morton"})
            == ShardingCodec((2, 2), subchunk_write_order="morton"))


def test_the_order_survives_pickle_and_evolve_and_reaches_nested_codecs():
    nested = ShardingCodec((4, 4), [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2]}}])
    morton = nested.with_write_order("colexicographic")
    inner = morton.codecs.array_to_bytes
    assert isinstance(inner, ShardingCodec) and inner.subchunk_write_order == "colexicographic"
    back = pickle.loads(pickle.dumps(morton))
    assert back == morton and back.codecs.array_to_bytes.subchunk_write_order == "colexicographic"
    evolved = morton.evolve(spec((8, 8)))
    assert evolved.subchunk_write_order == "colexicographic"
    # two codecs whose nested orders differ write different bytes: not equal
    other = ShardingCodec((4, 4), [inner.with_write_order("morton")], subchunk_write_order="colexicographic")
    assert other != morton


def test_a_chain_takes_the_order_only_where_there_is_sharding():
    chain = CodecChain.from_json([sharding((2,)).to_json()])
    assert chain_with_write_order(chain, "morton").array_to_bytes.subchunk_write_order == "morton"
    assert chain_with_write_order(chain, "lexicographic") is chain
    plain = CodecChain.from_json([LE])
    assert chain_with_write_order(plain, "morton") is plain
    with pytest.raises(CodecError, match="'subchunk_write_order'"):
        chain_with_write_order(plain, "spiral")


# -- whole shards and partial updates ---------------------------------------------
@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("order", ORDERS)
def test_a_whole_shard_lies_in_the_order(order, location):
    codec = ordered(sharding((2, 3), [LE, ZSTD], index_location=location), order)
    s = spec((8, 12))
    layout = codec.layout(s)
    data = (np.arange(96, dtype="uint16") % 7 + 1).reshape(8, 12)
    data[0:2, 3:6] = 0  # an inner chunk of fill values: left out
    shard = codec.encode(fixed(data), s)
    present = [p for p in range(layout.nchunks) if p != 1]
    assert layout_order(layout, shard) == expected_order(layout, present)
    assert np.array_equal(codec.decode(shard, s).array, data)
    assert shard == layout.build([(p, layout.encode_inner(fixed(data[_box(layout, p)]))) for p in reversed(present)])


@pytest.mark.parametrize("order", ORDERS)
def test_an_update_rewrites_a_shard_of_another_order_in_its_own(order):
    """Old shard in C order; the update keeps untouched inner chunks' bytes
    and lays out every inner chunk in the updating codec's order."""
    s = spec((8, 8))
    old_codec = sharding((2, 2), [LE, ZSTD])
    data = (np.arange(64, dtype="uint16") % 11 + 1).reshape(8, 8)
    old = old_codec.encode(fixed(data), s)
    codec = ordered(old_codec, order)
    block = np.full((3, 5), 99, dtype="uint16")
    new = codec.update_many(old, [((slice(1, 4), slice(2, 7)), fixed(block))], s)
    expected = data.copy()
    expected[1:4, 2:7] = 99
    layout = codec.layout(s)
    assert new == codec.encode(fixed(expected), s)
    assert layout_order(layout, new) == expected_order(layout, range(16))
    assert np.array_equal(codec.decode(new, s).array, expected)


@pytest.mark.parametrize("order", ["morton", "colexicographic"])
def test_strings_shards_lie_in_the_order(order):
    s = spec((4, 4), "string", "")
    codec = ordered(sharding((1, 2), [{"name": "vlen-utf8"}]), order)
    items = [("" if i % 3 == 0 else "s" * i) for i in range(16)]
    shard = codec.encode(strings(items, (4, 4)), s)
    layout = codec.layout(s)
    present = [p for p in range(layout.nchunks) if any(items[4 * (p // 2) + 2 * (p % 2) + k] for k in (0, 1))]
    assert layout_order(layout, shard) == expected_order(layout, present)
    assert codec.decode(shard, s).to_bytes_list() == [x.encode() for x in items]


# -- the streaming encoder ----------------------------------------------------------
class Sink:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data) -> None:
        self.parts.append(bytes(data))

    def value(self) -> bytes:
        return b"".join(self.parts)


@settings(max_examples=40, deadline=None)
@given(order=st.sampled_from(ORDERS), location=st.sampled_from(["end", "start"]),
       arrival=st.permutations(list(range(12))), fills=st.sets(st.integers(0, 11)),
       absent=st.sets(st.integers(0, 11), max_size=4))
def test_a_stream_given_inner_chunks_in_any_order_writes_the_built_shard(order, location, arrival, fills, absent):
    codec = ordered(sharding((2, 2), [LE, ZSTD], index_location=location), order)
    layout = codec.layout(spec((6, 8)))
    rng = np.random.default_rng(len(arrival))
    chunks = {p: ArrayBytes.from_array(rng.integers(1, 9, (2, 2)).astype("uint16")) for p in range(12)}
    for p in fills:
        chunks[p] = ArrayBytes.from_array(np.zeros((2, 2), "uint16"))
    sink = Sink()
    with ShardStream(layout, lambda: sink) as stream:
        stream.leave_out(sorted(absent))
        for p in arrival:
            if p not in absent:
                stream.add(p, chunks[p])
        stored = stream.finish()
    kept = [p for p in range(12) if p not in absent and p not in fills]
    assert stored == bool(kept)
    if kept:
        assert sink.value() == layout.build([(p, layout.encode_inner(chunks[p])) for p in kept])


def test_a_stream_given_inner_chunks_in_its_order_holds_nothing_back(monkeypatch):
    codec = ordered(sharding((2, 2), [LE]), "morton")
    layout = codec.layout(spec((8, 8)))
    sink = Sink()
    with ShardStream(layout, lambda: sink) as stream:
        for n, p in enumerate(write_order(layout.grid_shape, "morton").tolist()):
            stream.add(p, ArrayBytes.from_array(np.full((2, 2), p + 1, "uint16")))
            assert not stream._held and stream._hold is None
            assert stream.count == n + 1  # stored at once: bytes already sent
            assert len(sink.value()) == (n + 1) * 8
        assert stream.finish()


def test_inner_chunks_held_back_spool_to_disk_past_the_memory_bound(monkeypatch):
    from zarrpy.codecs.sharding import stream as stream_module
    monkeypatch.setattr(stream_module, "SPOOL_MEMORY_NBYTES", 1000)
    codec = ordered(sharding((16, 16)), "colexicographic")
    layout = codec.layout(spec((64, 64)))
    rng = np.random.default_rng(3)
    chunks = {p: ArrayBytes.from_array(rng.integers(1, 9, (16, 16)).astype("uint16")) for p in range(16)}
    sink = Sink()
    with ShardStream(layout, lambda: sink) as stream:
        for p in range(1, 16):  # C order: all but position 0 come early in Fortran order
            stream.add(p, chunks[p])
        assert stream._hold is not None and stream._hold._rolled and sink.parts == []
        stream.add(0, chunks[0])  # now everything is due
        assert not stream._held and stream.count == 16
        assert stream.finish()
    assert sink.value() == layout.build([(p, layout.encode_inner(c)) for p, c in chunks.items()])


def test_leave_out_checks_its_positions():
    layout = sharding((2, 2)).layout(spec((4, 4)))
    stream = ShardStream(layout, Sink)
    stream.add(0, ArrayBytes.from_array(np.ones((2, 2), "uint16")))
    with pytest.raises(CodecError, match="an inner chunk left out was given already"):
        stream.leave_out([0])
    with pytest.raises(CodecError, match="outside a shard of 4"):
        stream.leave_out([4])


def _box(layout, position):
    coords = layout.coords(position)
    return tuple(slice(c * n, (c + 1) * n) for c, n in zip(coords, layout.inner_spec.shape))
