"""Decoding without a chunk-sized buffer of its own: the scratch buffers
(:mod:`zarrpy.core.scratch`), ``decode_into`` of zstd and blosc,
:meth:`BoundChain.decoded` and :meth:`BoundChain.decode_into` (contiguous
outputs, shards decoded inner chunk by inner chunk), each checked against
the plain :meth:`BoundChain.decode`."""

from __future__ import annotations

import threading

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrpy.core.aligned import PAGE_NBYTES, aligned_empty, page_offset
from zarrpy.core.scratch import KEEP_NBYTES, scratch
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.blosc import BloscCodec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.zstd import ZstdCodec
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.dtypes import DataType
from zarrpy.errors import ChecksumError, ChunkDecodeError

SETTINGS = settings(max_examples=60, deadline=None, database=None)

ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}
GZIP = {"name": "gzip", "configuration": {"level": 1}}
CRC = {"name": "crc32c"}


def little(endian: str = "little") -> dict:
    return {"name": "bytes", "configuration": {"endian": endian}}


def spec(shape, dtype="uint16", fill=0) -> ChunkSpec:
    data_type = DataType.from_json(dtype) if dtype == "string" else DataType.from_numpy(np.dtype(dtype))
    return ChunkSpec(tuple(shape), data_type, data_type.coerce_fill(fill))


def bound(codecs, shape, dtype="uint16", fill=0):
    return CodecChain.from_json(codecs).bind(spec(shape, dtype, fill))


def sample(shape, dtype="uint16", seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 50, size=shape) + np.arange(int(np.prod(shape))).reshape(shape) % 7).astype(dtype)


# -- scratch buffers ----------------------------------------------------------
def test_scratch_nested_blocks_get_distinct_buffers_and_reuse_them():
    from zarrpy.core import scratch as _scratch

    _scratch._local.free = []  # this thread's buffers: none yet (earlier tests may have left some)
    with scratch(100) as a:
        with scratch(100) as b:
            assert a.size == b.size == 100
            assert not np.shares_memory(a, b)
        first_b = b
    with scratch(80) as c:
        assert c.size == 80
        assert np.shares_memory(c, a) or np.shares_memory(c, first_b)  # reused, not allocated


def test_scratch_buffers_are_per_thread():
    seen = {}

    def grab(name):
        with scratch(4096) as buf:
            buf[:] = ord(name)
            seen[name] = buf
            barrier.wait()
            assert (buf == ord(name)).all()  # the other thread never wrote here

    barrier = threading.Barrier(2)
    threads = [threading.Thread(target=grab, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not np.shares_memory(seen["a"], seen["b"])


def test_scratch_keeps_at_most_keep_count_buffers_the_largest():
    from zarrpy.core import scratch as _scratch

    sizes = [10, 20, 30, 40, 50, 60]

    def nest(rest):
        if rest:
            with scratch(rest[0]):
                nest(rest[1:])

    nest(sizes)  # six buffers in use at once, then all given back
    kept = sorted(b.size for b in _scratch._free_list())
    assert len(kept) <= _scratch.KEEP_COUNT
    assert kept == sorted(kept)[-len(kept):] and max(kept) >= 60


def test_scratch_does_not_keep_huge_buffers():
    with scratch(KEEP_NBYTES + 1) as big:
        pass
    with scratch(KEEP_NBYTES + 1) as again:
        assert not np.shares_memory(big, again)


@pytest.mark.parametrize("nbytes", [1, 100, 4096, 300_000])
def test_aligned_empty_starts_on_a_page(nbytes):
    buf = aligned_empty(nbytes)
    assert buf.size == nbytes and buf.dtype == np.uint8 and buf.flags.c_contiguous and buf.flags.writeable
    assert buf.ctypes.data % PAGE_NBYTES == 0
    assert aligned_empty(nbytes, 64).ctypes.data % 64 == 0


@pytest.mark.parametrize("offset", [0, 16, 48, 4095])
def test_scratch_starts_at_the_asked_place_in_a_page_also_when_reused(offset):
    for nbytes in (1000, 600_000, 1000):  # a new buffer, a bigger one, a reused one
        with scratch(nbytes, offset) as buf:
            assert buf.size == nbytes
            assert buf.ctypes.data % PAGE_NBYTES == offset
            buf[:] = 7  # the whole view is writable memory of its own


def test_scratch_reuses_a_buffer_for_any_offset():
    from zarrpy.core import scratch as _scratch

    _scratch._local.free = []
    with scratch(1000) as first:
        pass
    with scratch(1000, 4000) as again:  # another place in a page: the same buffer still serves
        assert again.base is first.base


def test_nested_scratch_leases_get_the_same_buffers_in_the_same_roles():
    """A file read (outer) and its decoding (inner) take back the buffers they
    had for the previous chunk, though the files differ in size (here across
    a power of two, where buffer sizes are rounded): after the first chunks
    nothing new is allocated and each role keeps its buffer."""
    from zarrpy.core import scratch as _scratch

    _scratch._local.free = []
    bases = []
    for file_nbytes in (60_000, 67_000, 58_000, 66_000, 61_000, 59_000):
        with scratch(file_nbytes) as file_buf:
            with scratch(131_072, 16) as decode_buf:
                bases.append((file_buf.base, decode_buf.base))
    steady = bases[2:]
    assert all(b[0] is steady[0][0] and b[1] is steady[0][1] for b in steady)
    assert steady[0][0] is not steady[0][1]
    assert len(_scratch._free_list()) <= 3


def test_page_offset_is_where_an_array_starts_in_its_page():
    base = aligned_empty(3 * PAGE_NBYTES)
    assert page_offset(base) == 0
    assert page_offset(base[16:]) == 16
    assert page_offset(base[PAGE_NBYTES + 40 :].view(np.uint8)) == 40
    assert page_offset(b"not an array") == 0 and page_offset(None) == 0


def test_scratch_decoder_buffer_starts_where_its_destination_does():
    """Decoded elements land in the page position of the array they are
    copied into, so the copy out of the scratch buffer runs at full speed."""
    b = bound([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}], (64, 64))
    data = sample((64, 64))
    encoded = b.encode(ArrayBytes.from_array(data))
    out = aligned_empty(64 * 64 * 2 + PAGE_NBYTES)[24 : 24 + 64 * 64 * 2].view(np.uint16).reshape(64, 64)
    with b.scratch_decoder(like=out) as decode:
        assert decode is not None
        elements = decode(encoded)
        assert elements is not None
        assert elements.ctypes.data % PAGE_NBYTES == 24
        np.testing.assert_array_equal(elements, data)


# -- bytes-to-bytes decode_into --------------------------------------------------
@pytest.mark.parametrize("codec", [ZstdCodec(level=3), ZstdCodec(level=1, checksum=True),
                                   BloscCodec(cname="zstd", clevel=3, shuffle="shuffle", typesize=2)])
def test_decode_into_matches_decode(codec):
    s = spec((64, 33))
    raw = sample((64, 33)).tobytes()
    encoded = codec.encode(raw, s)
    dest = np.full(len(raw), 0xAB, dtype=np.uint8)
    assert codec.decode_into(encoded, dest, s)
    assert dest.tobytes() == raw == codec.decode(encoded, s)


@pytest.mark.parametrize("codec", [ZstdCodec(level=3), BloscCodec(cname="lz4", clevel=5, shuffle="noshuffle", typesize=2)])
def test_decode_into_refuses_a_size_other_than_the_stated_one(codec):
    s = spec((10,))
    encoded = codec.encode(sample((10,)).tobytes(), s)
    assert not codec.decode_into(encoded, np.empty(19, np.uint8), s)
    assert not codec.decode_into(encoded, np.empty(21, np.uint8), s)


def test_zstd_decode_into_leaves_unusual_frames_to_decode():
    s = spec((8,))
    raw = sample((8,)).tobytes()
    codec = ZstdCodec()
    unsized = zstandard.ZstdCompressor(write_content_size=False).compress(raw)
    half = len(raw) // 2
    two = zstandard.ZstdCompressor().compress(raw[:half]) + zstandard.ZstdCompressor().compress(raw[half:])
    for frames in (unsized, two):
        assert not codec.decode_into(frames, np.empty(len(raw), np.uint8), s)
        assert codec.decode(frames, s) == raw


@pytest.mark.parametrize("checksum", [False, True])
def test_zstd_decode_into_refuses_what_decode_refuses_after_or_inside_the_frame(checksum):
    s = spec((64,))
    raw = sample((64,)).tobytes()
    codec = ZstdCodec(level=3, checksum=checksum)
    frame = codec.encode(raw, s)
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"abcd"
    dest = np.empty(len(raw), np.uint8)
    assert codec.decode_into(memoryview(frame), dest, s) and dest.tobytes() == raw
    # A skippable frame after the data is left to decode, which allows it;
    # the rest (bytes after the frame, a cut frame or checksum) both refuse.
    assert not codec.decode_into(frame + skippable, dest, s)
    assert codec.decode(frame + skippable, s) == raw
    for bad in (frame + b"garbage!", frame + b"\0\0\0\0", frame[:-3], frame[: len(frame) // 2]):
        assert not codec.decode_into(bad, np.empty(len(raw), np.uint8), s)
        with pytest.raises(ChunkDecodeError):
            codec.decode(bad, s)


def test_zstd_decode_into_works_from_any_thread_with_one_context_each():
    s = spec((4096,))
    codec = ZstdCodec(level=3)
    chunks = [sample((4096,)).tobytes()[i:] + bytes(i) for i in range(32)]
    encoded = [codec.encode(c, s) for c in chunks]

    def decode(i):
        dest = np.empty(len(chunks[i]), np.uint8)
        for _ in range(20):
            assert codec.decode_into(encoded[i], dest, s)
            assert dest.tobytes() == chunks[i]
        return True

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(decode, range(32)))


@pytest.mark.parametrize("codec", [ZstdCodec(level=3), ZstdCodec(level=3, checksum=True),
                                   BloscCodec(cname="zstd", clevel=3, shuffle="shuffle", typesize=2)])
def test_corrupt_data_is_refused_by_decode_into_and_reported_by_decode(codec):
    s = spec((256,))
    encoded = bytearray(codec.encode(sample((256,)).tobytes(), s))
    encoded[len(encoded) // 2] ^= 0xFF
    encoded[-2] ^= 0x55
    dest = np.empty(512, np.uint8)
    if codec.decode_into(bytes(encoded), dest, s):  # some flips still decode: then both agree
        assert dest.tobytes() == codec.decode(bytes(encoded), s)
        return
    with pytest.raises(ChunkDecodeError):
        codec.decode(bytes(encoded), s)


# -- BoundChain.decoded and decode_into ----------------------------------------------
CHAINS = {
    "zstd": [little(), ZSTD],
    "blosc": [little(), BLOSC],
    "gzip": [little(), GZIP],
    "zstd+crc32c": [little(), ZSTD, CRC],
    "big-endian zstd": [little("big"), ZSTD],
    "transpose zstd": [{"name": "transpose", "configuration": {"order": [1, 0]}}, little(), ZSTD],
    "raw": [little()],
}


@pytest.mark.parametrize("name", sorted(CHAINS))
@given(data=st.data())
@SETTINGS
def test_decoded_and_decode_into_agree_with_decode(name, data):
    shape = (data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12)))
    dtype = data.draw(st.sampled_from(["uint16", "int32", "float64", "bool", "complex64"]))
    chain = bound(CHAINS[name], shape, dtype)
    values = sample(shape, dtype, seed=data.draw(st.integers(0, 99)))
    encoded = chain.encode(ArrayBytes.from_array(values))
    np.testing.assert_array_equal(chain.decode(encoded).array, values)
    with chain.decoded(encoded) as chunk:
        np.testing.assert_array_equal(chunk.array, values)
    # straight into a contiguous output, and into a strided view of a bigger one
    big = np.zeros((shape[0] + 2, shape[1] * 2 + 3), dtype=dtype)
    for dest in (np.zeros(shape, dtype), big[1:-1, 3::2]):
        if not chain.decode_into(encoded, dest):
            with chain.decoded(encoded) as chunk:
                dest[...] = chunk.array
        np.testing.assert_array_equal(dest, values)
    assert (big[0] == 0).all() and (big[-1] == 0).all() and (big[:, :3] == 0).all()  # nothing outside


def test_decode_into_writes_the_decompressor_output_into_a_contiguous_dest():
    chain = bound([little(), ZSTD], (16, 16))
    values = sample((16, 16))
    dest = np.zeros((16, 16), np.uint16)
    assert chain.decode_into(chain.encode(ArrayBytes.from_array(values)), dest)
    np.testing.assert_array_equal(dest, values)
    # non-native byte order and array-to-array codecs are not written straight through
    assert not bound([little("big"), ZSTD], (16, 16)).decode_into(b"", dest)
    assert not bound([{"name": "transpose", "configuration": {"order": [1, 0]}}, little(), ZSTD], (16, 16)).decode_into(b"", dest)


def test_decoded_chunk_of_a_corrupt_frame_raises_chunk_decode_error():
    chain = bound([little(), ZSTD], (32,))
    encoded = bytearray(chain.encode(ArrayBytes.from_array(sample((32,)))))
    encoded[-3:] = b"\xff\xff\xff"
    with pytest.raises(ChunkDecodeError):
        with chain.decoded(bytes(encoded)):
            pass


# -- shards decoded inner chunk by inner chunk ---------------------------------------
def sharding(inner_shape, inner_codecs, index_location="end"):
    return [{
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": list(inner_shape),
            "codecs": inner_codecs,
            "index_codecs": [little(), CRC],
            "index_location": index_location,
        },
    }]


@pytest.mark.parametrize("inner", ["zstd", "zstd+crc32c", "transpose zstd", "raw", "gzip"])
@pytest.mark.parametrize("location", ["start", "end"])
@given(data=st.data())
@SETTINGS
def test_shard_decode_into_equals_decode(inner, location, data):
    inner_shape = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    grid = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    shape = tuple(i * g for i, g in zip(inner_shape, grid))
    chain = bound(sharding(inner_shape, CHAINS[inner], location), shape, "int32", 7)
    values = sample(shape, "int32", seed=data.draw(st.integers(0, 99)))
    # some inner chunks all fill: they are left out of the shard and must read as fill
    blank = data.draw(st.lists(st.booleans(), min_size=grid[0] * grid[1], max_size=grid[0] * grid[1]))
    for pos, is_blank in enumerate(blank):
        if is_blank:
            r, c = divmod(pos, grid[1])
            values[r * inner_shape[0]:(r + 1) * inner_shape[0], c * inner_shape[1]:(c + 1) * inner_shape[1]] = 7
    encoded = chain.encode(ArrayBytes.from_array(values))
    big = np.full((shape[0] + 1, shape[1] * 2), -1, np.int32)
    dest = big[1:, ::2]
    assert chain.decode_into(encoded, dest)
    np.testing.assert_array_equal(dest, values)
    np.testing.assert_array_equal(dest, chain.decode(encoded).array)
    assert (big[0] == -1).all() and (big[1:, 1::2] == -1).all()


def test_shard_decode_into_names_the_corrupt_inner_chunk():
    chain = bound(sharding((4, 4), [little(), ZSTD]), (8, 8))
    encoded = bytearray(chain.encode(ArrayBytes.from_array(sample((8, 8)) + 1)))
    encoded[0] ^= 0xFF  # the magic number of the first inner chunk's zstd frame
    with pytest.raises(ChunkDecodeError, match=r"inner chunk \(0, 0\)"):
        chain.decode_into(bytes(encoded), np.empty((8, 8), np.uint16))


def test_shard_decode_into_checks_the_index():
    chain = bound(sharding((4, 4), [little(), ZSTD]), (8, 8))
    encoded = bytearray(chain.encode(ArrayBytes.from_array(sample((8, 8)) + 1)))
    encoded[-1] ^= 0xFF  # the index checksum
    with pytest.raises(ChecksumError):
        chain.decode_into(bytes(encoded), np.empty((8, 8), np.uint16))


def test_variable_length_shards_are_not_decoded_into_an_array():
    chain = bound(sharding((2,), [{"name": "vlen-utf8"}]), (4,), "string", "")
    encoded = chain.encode(ArrayBytes.from_bytes_list([b"a", b"bc", b"", b"d"], (4,)))
    assert not chain.decode_into(encoded, np.empty(4, dtype=np.dtypes.StringDType()))


def test_shard_decode_into_hands_inner_chunks_to_map_fn_in_a_few_groups():
    from zarrpy.codecs.partial import DecodeOptions

    calls = []

    def recording_map(fn, items):
        items = list(items)
        calls.append([len(group) for group in items])
        return [fn(x) for x in items]

    chain = bound(sharding((2, 2), [little(), ZSTD]), (8, 10))
    values = sample((8, 10)) + 1
    values[0:2, 0:2] = 0  # one inner chunk of fill: not stored, not decoded
    dest = np.empty((8, 10), np.uint16)
    assert chain.decode_into(chain.encode(ArrayBytes.from_array(values)), dest, DecodeOptions(map_fn=recording_map))
    np.testing.assert_array_equal(dest, values)
    from zarrpy.codecs.sharding.partial import DECODE_GROUPS
    from zarrpy.core.batches import even_runs

    # 19 stored inner chunks in one group per core (at most 8), sizes differing by at most one
    assert calls == [[len(run) for run in even_runs(list(range(19)), DECODE_GROUPS)]]
    assert len(calls[0]) == DECODE_GROUPS and max(calls[0]) - min(calls[0]) <= 1


def test_a_shared_sharding_codec_keeps_a_layout_per_shard_spec():
    """Arrays with equal codecs share one codec object: each keeps its bound
    layout (and with it the checked indexes it remembers)."""
    codec = CodecChain.from_json(sharding((2, 2), [little(), ZSTD])).array_to_bytes
    a, b = spec((4, 4)), spec((6, 2))
    layout_a, layout_b = codec.layout(a), codec.layout(b)
    assert layout_a is not layout_b
    assert codec.layout(a) is layout_a and codec.layout(b) is layout_b
    for n in range(40):  # many specs: the codec forgets the oldest, answers stay right
        assert codec.layout(spec((2, 2 * (n + 1)))).grid_shape == (1, n + 1)


@given(
    pattern=st.sampled_from(["random", "runs", "zeros", "text"]),
    nbytes=st.integers(1, 300_000),
    level=st.sampled_from([-5, 1, 3, 19]),
    checksum=st.booleans(),
    extra=st.binary(max_size=8),
)
@settings(max_examples=40, deadline=None)
def test_zstd_frame_length_from_block_headers_matches_zstd(pattern, nbytes, level, checksum, extra):
    # Raw (incompressible), RLE (runs, zeros) and compressed blocks, one or
    # several (a block holds at most 128 KiB), with or without a checksum.
    from zarrpy.codecs.zstd import _frame_nbytes

    rng = np.random.default_rng(nbytes)
    if pattern == "random":
        raw = rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    elif pattern == "runs":
        raw = np.repeat(rng.integers(0, 256, nbytes // 5000 + 1, dtype=np.uint8), 5000)[:nbytes].tobytes()
    elif pattern == "zeros":
        raw = bytes(nbytes)
    else:
        raw = (b"the quick brown fox jumps over the lazy dog " * (nbytes // 44 + 1))[:nbytes]
    frame = zstandard.ZstdCompressor(level=level, write_checksum=checksum).compress(raw)
    dobj = zstandard.ZstdDecompressor().decompressobj()
    dobj.decompress(frame + extra)
    assert len(frame + extra) - len(dobj.unused_data) == len(frame)  # zstd's own account
    assert _frame_nbytes(memoryview(frame + extra), nbytes) == len(frame)
    for cut in (1, 3, len(frame) // 2):
        if cut < len(frame) - 6:
            assert _frame_nbytes(memoryview(frame[:-cut]), nbytes) is None


def test_zstd_frames_of_many_tiny_blocks_are_left_to_decode():
    # 3,000 raw blocks of one byte each (a valid frame no zstd writer makes):
    # decode_into does not walk them all, decode reads the frame.
    from zarrpy.codecs.zstd import _frame_nbytes

    raw = bytes(range(256)) * 12  # 3,072 bytes
    # frame header: magic, descriptor (single segment, 2-byte content size), size - 256
    header = b"\x28\xb5\x2f\xfd" + bytes([0x60]) + (len(raw) - 256).to_bytes(2, "little")
    blocks = b"".join(((1 << 3) | (1 if i == len(raw) - 1 else 0)).to_bytes(3, "little") + raw[i : i + 1]
                      for i in range(len(raw)))
    frame = header + blocks
    s = spec((len(raw) // 2,))
    assert zstandard.ZstdDecompressor().decompress(frame) == raw  # a valid frame
    assert _frame_nbytes(memoryview(frame), len(raw)) is None
    codec = ZstdCodec()
    assert not codec.decode_into(frame, np.empty(len(raw), np.uint8), s)
    assert codec.decode(frame, s) == raw
