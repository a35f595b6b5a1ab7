"""subchunk_write_order: zarrpy's shards byte for byte zarr-python 3.4.2's, in each order.

zarr-python takes the order on its ``ShardingCodec`` object
(``subchunk_write_order=``; ``shards=`` builds one with its default,
``"morton"``) and never writes it into the metadata. Each case here writes
the same data with the same codecs through both libraries' public APIs and
compares every stored object: the metadata's codecs, and the shards after a
whole-array write, after an unaligned partial update (a read-modify-write of
stored shards), after a write that empties inner chunks, and through each of
zarrpy's other write paths (the streaming shard encoder of ``from_array``
and ``zarrpy cp``).

``"unordered"`` promises no order. Byte identity for it means: identical to
what zarr-python 3.4.2 writes for ``"unordered"`` (C order, which zarrpy
writes too); what any ``"unordered"`` writer must keep is only that each
inner chunk's encoded bytes and the decoded data are the same, which is
checked apart from the layout.
"""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest

import zarrpy
from zarrpy.codecs.sharding.order import WRITE_ORDERS
from zarrpy.stores import MemoryStore

from tests.integration.oracles import needs_zarr_write_orders
from tests.streamed_writes import WriterCountingStore

zarr = pytest.importorskip("zarr")
zcodecs = pytest.importorskip("zarr.codecs")

pytestmark = [pytest.mark.integration, needs_zarr_write_orders]

SHAPE, INNER, SHARD = (37, 29), (4, 3), (16, 12)
"""Edge shards on both axes, inner chunks cut by the array inside them."""
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}


def _data(dtype: str) -> np.ndarray:
    numbers = (np.arange(math.prod(SHAPE)) * 7 % 13).reshape(SHAPE)
    numbers[:8, :6] = 0  # fill inner chunks: left out of the index
    if dtype == "string":
        return np.array(["" if v == 0 else "s" * int(v) for v in numbers.reshape(-1)],
                        dtype=np.dtypes.StringDType()).reshape(SHAPE)
    return numbers.astype(dtype)


def _zarr_python(order: str, dtype: str, location: str):
    inner = [zcodecs.VLenUTF8Codec()] if dtype == "string" else [zcodecs.BytesCodec(), zcodecs.ZstdCodec(level=1)]
    codec = zcodecs.ShardingCodec(chunk_shape=INNER, codecs=inner, index_location=location,
                                  subchunk_write_order=order)
    store = zarr.storage.MemoryStore()
    array = zarr.create_array(store, shape=SHAPE, chunks=SHARD, dtype=str if dtype == "string" else dtype,
                              serializer=codec, compressors=None, fill_value="" if dtype == "string" else 0)
    return store, array


def _zarrpy(order: str, dtype: str, location: str, store=None):
    string = dtype == "string"
    return zarrpy.create_array(
        MemoryStore() if store is None else store, shape=SHAPE, dtype=dtype, chunks=INNER,
        shards={"shape": SHARD, "index_location": location}, serializer="vlen-utf8" if string else "auto",
        compressors=None if string else [ZSTD], fill_value="" if string else 0, subchunk_write_order=order)


def _theirs(store) -> dict[str, bytes]:
    return {k: v.to_bytes() for k, v in store._store_dict.items() if k != "zarr.json"}


def _ours(array) -> dict[str, bytes]:
    return {k: array.store.get(k) for k in array.stored_chunk_keys()}


def _writes(array, data) -> None:
    """The same writes in both libraries (their numpy-style setitem)."""
    array[...] = data
    array[5:30, 3:20] = data[10:35, 8:25]  # unaligned: shards read, merged, rewritten
    array[16:32, 0:12] = data[0:16, 0:12]  # shard (1, 0) whole, with fill inner chunks


@pytest.mark.parametrize("dtype", ["uint16", "string"])
@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("order", WRITE_ORDERS)
def test_shards_are_byte_for_byte_zarr_pythons(order, location, dtype):
    data = _data(dtype)
    store, theirs = _zarr_python(order, dtype, location)
    ours = _zarrpy(order, dtype, location)
    theirs[...] = data
    ours[...] = data
    assert _ours(ours) == _theirs(store)
    _writes(theirs, data)
    _writes(ours, data)
    assert _ours(ours) == _theirs(store)
    assert ours.subchunk_write_order == order
    # the metadata says nothing of the order, in either
    meta = json.loads(store._store_dict["zarr.json"].to_bytes())
    assert json.loads(ours.store.get("zarr.json"))["codecs"] == meta["codecs"]
    assert "subchunk_write_order" not in json.dumps(meta)


def test_the_orders_lay_out_different_bytes():
    """So the comparison above can fail: the orders differ on these shards."""
    data = _data("uint16")
    laid = {}
    for order in WRITE_ORDERS:
        a = _zarrpy(order, "uint16", "end")
        a[...] = data
        laid[order] = _ours(a)["c/0/0"]
    assert len({laid["lexicographic"], laid["colexicographic"], laid["morton"]}) == 3
    assert laid["unordered"] == laid["lexicographic"]


def test_unordered_keeps_each_inner_chunk_and_the_data():
    """What "unordered" promises, whatever the layout: the same inner chunks
    (encoded bytes per position) and the same data, in both libraries."""
    data = _data("uint16")
    store, theirs = _zarr_python("unordered", "uint16", "end")
    theirs[...] = data
    ours = _zarrpy("unordered", "uint16", "end")
    ours[...] = data
    layout = ours._io.chain.array_to_bytes.layout(ours._io.spec)
    for key, shard in _theirs(store).items():
        mine = ours.store.get(key)
        a, b = layout.read_index(shard), layout.read_index(mine)
        for p in range(layout.nchunks):
            x, y = a.get(p), b.get(p)
            assert (x is None) == (y is None)
            if x is not None:
                assert shard[x[0]:x[0] + x[1]] == mine[y[0]:y[0] + y[1]]
    assert np.array_equal(np.asarray(zarr.open_array(store, mode="r")[...]), ours[...])


def test_shards_equals_zarr_pythons_default_with_morton():
    """zarr-python's ``shards=`` writes Morton order; zarrpy's writes C order
    unless told, and zarr-python's bytes when told ``"morton"``."""
    data = _data("uint16")
    store = zarr.storage.MemoryStore()
    theirs = zarr.create_array(store, shape=SHAPE, chunks=INNER, shards=SHARD, dtype="uint16",
                               compressors=[zcodecs.ZstdCodec(level=1)], fill_value=0)
    theirs[...] = data
    ours = zarrpy.create_array({}, shape=SHAPE, chunks=INNER, shards=SHARD, dtype="uint16", compressors=[ZSTD],
                               fill_value=0, subchunk_write_order="morton")
    ours[...] = data
    assert _ours(ours) == _theirs(store)
    default = zarrpy.create_array({}, shape=SHAPE, chunks=INNER, shards=SHARD, dtype="uint16", compressors=[ZSTD],
                                  fill_value=0)
    default[...] = data
    assert default.subchunk_write_order == "lexicographic" and _ours(default) != _theirs(store)


@pytest.mark.parametrize("order", ["morton", "colexicographic"])
def test_a_zarr_python_sharding_codec_brings_its_order(order):
    data = _data("uint16")
    store, theirs = _zarr_python(order, "uint16", "end")
    theirs[...] = data
    codec = zcodecs.ShardingCodec(chunk_shape=INNER, codecs=[zcodecs.BytesCodec(), zcodecs.ZstdCodec(level=1)],
                                  subchunk_write_order=order)
    ours = zarrpy.create_array({}, shape=SHAPE, chunks=SHARD, dtype="uint16", serializer=codec, compressors=None,
                               fill_value=0)
    assert ours.subchunk_write_order == order
    ours[...] = data
    assert _ours(ours) == _theirs(store)


def test_from_array_streams_shards_in_the_order(monkeypatch):
    """Shards large enough to stream (the bound lowered here) stream in the
    order; a zarrpy source's order is kept by default, or replaced."""
    from zarrpy.api import _convenience

    monkeypatch.setattr(_convenience, "_STREAM_SHARD_NBYTES", 64)
    monkeypatch.setattr(_convenience, "_COPY_STEP_NBYTES", 4 * 3 * 8 * 4 * 2)  # bands of a few inner chunks
    data = _data("uint16")
    store, theirs = _zarr_python("morton", "uint16", "end")
    theirs[...] = data

    counting = WriterCountingStore()
    copy = zarrpy.from_array(counting, data=data, chunks=INNER, shards=SHARD, compressors=[ZSTD],
                             subchunk_write_order="morton")
    assert counting.streamed and _ours(copy) == _theirs(store)
    again = zarrpy.from_array({}, data=copy)  # "keep": the source's order
    assert again.subchunk_write_order == "morton" and _ours(again) == _theirs(store)
    lex = zarrpy.from_array({}, data=copy, subchunk_write_order="lexicographic")
    assert _ours(lex) != _theirs(store) and np.array_equal(lex[...], data)
    flat = zarrpy.from_array({}, data=copy, shards=None)  # unsharded: no order to keep
    assert flat.subchunk_write_order is None


@pytest.mark.parametrize("order", ["morton", "colexicographic"])
@pytest.mark.parametrize("max_memory", ["64MB", "1KB"])  # regions written whole; shards streamed in bands
def test_cp_writes_shards_in_the_order(tmp_path, order, max_memory):
    from zarrpy.tools.cli import main
    from zarrpy.tools.cp import CopyOptions, copy

    data = _data("uint16")
    source = zarrpy.create_array(str(tmp_path / "in.zarr"), shape=SHAPE, dtype="uint16", chunks=(10, 10),
                                 compressors=[ZSTD], fill_value=0)
    source[...] = data
    store, theirs = _zarr_python(order, "uint16", "end")
    theirs[...] = data
    result = copy(str(tmp_path / "in.zarr"), str(tmp_path / "out.zarr"), options=CopyOptions(
        chunks=INNER, shards=SHARD, subchunk_write_order=order, max_memory={"64MB": 64 << 20, "1KB": 1024}[max_memory]))
    assert (result.arrays[0].band is None) == (max_memory == "64MB")
    assert _ours(zarrpy.open_array(str(tmp_path / "out.zarr"))) == _theirs(store)
    assert main(["cp", str(tmp_path / "in.zarr"), str(tmp_path / "cli.zarr"), "--chunks", "4,3",
                 "--shards", "16,12", "--subchunk-write-order", order, "--max-memory", max_memory, "--quiet"]) == 0
    assert _ours(zarrpy.open_array(str(tmp_path / "cli.zarr"))) == _theirs(store)
    flat = copy(str(tmp_path / "in.zarr"), str(tmp_path / "flat.zarr"), options=CopyOptions(subchunk_write_order=order))
    assert flat.arrays[0].notes == ["--subchunk-write-order not used: the copy is not sharded"]


def test_the_order_is_a_handle_setting_kept_by_pickle_and_refused_without_shards(tmp_path):
    path = str(tmp_path / "a.zarr")
    a = zarrpy.create_array(path, shape=SHAPE, dtype="uint16", chunks=INNER, shards=SHARD, compressors=[ZSTD],
                            subchunk_write_order="morton")
    assert pickle.loads(pickle.dumps(a)).subchunk_write_order == "morton"
    assert zarrpy.open_array(path).subchunk_write_order == "lexicographic"  # not in the metadata
    member = zarrpy.group({}).create_array("x", shape=SHAPE, dtype="uint16", chunks=INNER, shards=SHARD,
                                           subchunk_write_order="colexicographic")
    assert member.subchunk_write_order == "colexicographic"
    assert zarrpy.open_array(path, mode="r+", subchunk_write_order="colexicographic").subchunk_write_order == (
        "colexicographic")
    with pytest.raises(ValueError, match="subchunk_write_order='morton' is the order of inner chunks inside shards; "
                                         r"this array is not sharded \(give shards=\)"):
        zarrpy.create_array({}, shape=SHAPE, dtype="uint16", chunks=INNER, subchunk_write_order="morton")
    with pytest.raises(zarrpy.errors.CodecError, match="'subchunk_write_order' must be one of"):
        zarrpy.create_array({}, shape=SHAPE, dtype="uint16", chunks=INNER, shards=SHARD, subchunk_write_order="z")


@pytest.mark.parametrize("order", ["morton", "colexicographic"])
def test_tensorstore_reads_shards_in_each_order(tmp_path, order):
    ts = pytest.importorskip("tensorstore")
    data = _data("uint16")
    path = tmp_path / "a.zarr"
    a = _zarrpy(order, "uint16", "end", store=str(path))
    _writes(a, data)
    expected = a[...]
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}, open=True).result()
    assert np.array_equal(t.read().result(), expected)
