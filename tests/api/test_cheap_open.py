"""Opening an array cheaply (issue 14): one metadata request on a local
store, each ``zarr.json`` parsed once per distinct content, codec chains
shared between arrays with the same codecs, the store's root resolved by the
kernel -- and none of it serving stale metadata or sharing mutable objects."""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

import zarrpy
from zarrpy.codecs import registry as codec_registry
from zarrpy.codecs.chain import _shared_chains, chain_from_json
from zarrpy.codecs.zstd import ZstdCodec
from zarrpy.core.dtypes import registry as dtype_registry
from zarrpy.errors import MetadataError
from zarrpy.metadata.v3 import _parsed_arrays, parse_node_metadata
from zarrpy.stores import LocalStore, MemoryStore, ZipStore, store_from_url


def _make(path, **kwargs):
    kwargs.setdefault("shape", (6,))
    kwargs.setdefault("chunks", (6,))
    kwargs.setdefault("dtype", "float64")
    a = zarrpy.create_array(path, **kwargs)
    a[...] = np.arange(kwargs["shape"][0], dtype=kwargs["dtype"])
    return a


def _document(path):
    with open(os.path.join(path, "zarr.json"), "rb") as f:
        return f.read()


def _rewrite(path, change):
    """Edit the zarr.json at ``path`` in place, as another process would."""
    name = os.path.join(path, "zarr.json")
    with open(name) as f:
        doc = json.load(f)
    change(doc)
    with open(name, "w") as f:
        json.dump(doc, f)


# -- the document on disk is read on every open ---------------------------
def test_changed_document_is_seen_on_the_next_open(tmp_path):
    path = str(tmp_path / "a")
    _make(path, attributes={"v": 1})
    assert zarrpy.open_array(path, mode="r").attrs["v"] == 1
    assert zarrpy.open_array(path, mode="r").attrs["v"] == 1  # parsed once, served twice
    _rewrite(path, lambda doc: doc["attributes"].update(v=2))
    assert zarrpy.open_array(path, mode="r").attrs["v"] == 2
    _rewrite(path, lambda doc: doc.update(shape=[3]))
    a = zarrpy.open_array(path, mode="r")
    assert a.shape == (3,)
    np.testing.assert_array_equal(a[...], [0, 1, 2])


def test_changed_codecs_are_seen_on_the_next_open(tmp_path):
    path = str(tmp_path / "a")
    _make(path, compressors=ZstdCodec(level=1))
    before = zarrpy.open_array(path, mode="r")
    _rewrite(path, lambda doc: doc["codecs"][-1]["configuration"].update(level=7))
    after = zarrpy.open_array(path, mode="r")
    assert after.compressors[0].to_json()["configuration"]["level"] == 7
    assert before.compressors[0].to_json()["configuration"]["level"] != 7
    np.testing.assert_array_equal(after[...], np.arange(6))


def test_replaced_array_is_seen_on_the_next_open(tmp_path):
    path = str(tmp_path / "a")
    _make(path)
    assert zarrpy.open_array(path, mode="r").dtype == np.float64
    _make(path, dtype="int32", overwrite=True)
    a = zarrpy.open_array(path, mode="r")
    assert a.dtype == np.int32
    np.testing.assert_array_equal(a[...], np.arange(6, dtype="int32"))


def test_v2_document_after_v3_removed(tmp_path):
    """zarr.json is asked for first; the V2 documents when it is gone."""
    path = str(tmp_path / "a")
    _make(path)
    assert zarrpy.open_array(path, mode="r").zarr_format == 3
    os.remove(os.path.join(path, "zarr.json"))
    _make(path, zarr_format=2, overwrite=True)
    assert zarrpy.open_array(path, mode="r").zarr_format == 2


# -- one request for a V3 node on a cheap store ----------------------------
class _CountingMemory(MemoryStore):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked: list[str] = []

    def get(self, key, byte_range=None):
        self.asked.append(key)
        return super().get(key, byte_range)

    def get_partial_values(self, requests):
        self.asked.extend(key for key, _ in requests)
        return [MemoryStore.get(self, key, rng) for key, rng in requests]


def test_v3_open_asks_for_zarr_json_only():
    store = _CountingMemory()
    _make(store, attributes={"x": 1})
    store.asked.clear()
    zarrpy.open_array(store, mode="r")
    assert store.asked == ["zarr.json"]


def test_v2_open_asks_for_v2_documents_after_zarr_json():
    store = _CountingMemory()
    _make(store, zarr_format=2)
    store.asked.clear()
    assert zarrpy.open_array(store, mode="r").zarr_format == 2
    assert store.asked[0] == "zarr.json" and ".zarray" in store.asked
    store.asked.clear()
    zarrpy.open_array(store, mode="r", zarr_format=2)
    assert "zarr.json" not in store.asked


def test_both_formats_present_v3_wins_unless_v2_asked():
    store = MemoryStore()
    _make(store, zarr_format=2)
    v2_docs = {k: store.get(k) for k in (".zarray", ".zattrs") if store.get(k) is not None}
    _make(store, shape=(4,), chunks=(4,), overwrite=True)
    for key, value in v2_docs.items():
        store.set(key, value)
    assert zarrpy.open_array(store, mode="r").zarr_format == 3
    assert zarrpy.open_array(store, mode="r", zarr_format=2).zarr_format == 2


# -- parsed documents: fresh mutable members for every array ---------------
def test_parse_memo_hands_out_fresh_mutable_members(tmp_path):
    path = str(tmp_path / "a")
    _make(path, attributes={"nested": {"list": [1, 2]}})
    raw = _document(path)
    first, second = parse_node_metadata(raw, "zarr.json"), parse_node_metadata(raw, "zarr.json")
    assert first == second and first is not second
    assert first.attributes is not second.attributes
    assert first.attributes["nested"] is not second.attributes["nested"]
    assert first.attributes["nested"]["list"] is not second.attributes["nested"]["list"]
    assert all(a is not b for a, b in zip(first.codecs, second.codecs))
    assert first.extra is not second.extra


def test_mutating_one_arrays_metadata_leaves_the_next_alone(tmp_path):
    path = str(tmp_path / "a")
    _make(path, attributes={"nested": {"list": [1, 2]}})
    a = zarrpy.open_array(path, mode="r")
    a.metadata.attributes["nested"]["list"].append(3)
    a.metadata.attributes["new"] = True
    a.metadata.codecs[-1].setdefault("configuration", {})["level"] = 99
    b = zarrpy.open_array(path, mode="r")
    assert b.metadata.attributes == {"nested": {"list": [1, 2]}}
    assert b.metadata.codecs[-1].get("configuration", {}).get("level") != 99
    np.testing.assert_array_equal(b[...], np.arange(6))


def test_mutable_fill_values_are_not_shared(tmp_path):
    path = str(tmp_path / "a")
    _make(path, dtype="complex128", fill_value=1 + 2j)
    raw = _document(path)
    first, second = parse_node_metadata(raw, "zarr.json"), parse_node_metadata(raw, "zarr.json")
    assert first.fill_value == second.fill_value == 1 + 2j


def test_parse_memo_reparses_after_a_data_type_family_is_replaced(tmp_path, monkeypatch):
    path = str(tmp_path / "a")
    _make(path)
    raw = _document(path)
    parse_node_metadata(raw, "zarr.json")
    assert _parsed_arrays.get(raw) is not None
    real = dtype_registry.family_for_name
    monkeypatch.setattr(dtype_registry, "family_for_name", lambda name: object() if name == "float64" else real(name))
    assert _parsed_arrays.get(raw) is None  # the hit is refused: parsed again


def test_parse_memo_is_bounded():
    assert _parsed_arrays.MAX_ENTRIES > 0
    big = json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [1], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}],
        "attributes": {"pad": "x" * (_parsed_arrays.MAX_DOCUMENT_NBYTES + 1)},
    }).encode()
    parse_node_metadata(big, "zarr.json")
    assert _parsed_arrays.get(big) is None  # too big to keep


def test_invalid_document_is_refused_every_time(tmp_path):
    path = str(tmp_path / "a")
    _make(path)
    _rewrite(path, lambda doc: doc.update(shape=[-1]))
    for _ in range(2):
        with pytest.raises(MetadataError):
            zarrpy.open_array(path, mode="r")


# -- shared codec chains -----------------------------------------------------
def test_arrays_with_the_same_codecs_share_one_chain(tmp_path):
    _make(str(tmp_path / "a"))
    _make(str(tmp_path / "b"))
    a = zarrpy.open_array(str(tmp_path / "a"), mode="r")
    b = zarrpy.open_array(str(tmp_path / "b"), mode="r")
    assert a._io.chain is b._io.chain


def test_a_codec_changed_in_place_is_not_handed_out_again(tmp_path):
    path = str(tmp_path / "a")
    _make(path)
    a = zarrpy.open_array(path, mode="r")
    codec = a.compressors[0]
    level = codec.to_json()["configuration"]["level"]
    codec.level = level + 5  # nobody should, but if someone does
    b = zarrpy.open_array(path, mode="r")
    assert b._io.chain is not a._io.chain
    assert b.compressors[0].to_json()["configuration"]["level"] == level
    codec.level = level


def test_register_codec_starts_the_chains_afresh(tmp_path):
    path = str(tmp_path / "a")
    _make(path)
    a = zarrpy.open_array(path, mode="r")
    cls = codec_registry.get_codec_class("zstd")
    codec_registry.register_codec(cls, replace=True)
    b = zarrpy.open_array(path, mode="r")
    assert b._io.chain is not a._io.chain
    assert b.compressors[0] == a.compressors[0]


def test_chain_from_codec_objects_is_built_each_time():
    from zarrpy.codecs.bytes import BytesCodec

    codecs = [BytesCodec()]
    assert chain_from_json(codecs) is not chain_from_json(codecs)
    assert len(_shared_chains) <= _shared_chains.MAX_ENTRIES


# -- the store's root --------------------------------------------------------
def test_store_from_url_resolves_a_directory_once(tmp_path):
    target = tmp_path / "real"
    _make(str(target))
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    store = store_from_url(str(link), read_only=True)
    assert isinstance(store, LocalStore)
    assert store.root == target.resolve()
    assert store.display_name == str(link)
    assert store.read_only
    np.testing.assert_array_equal(zarrpy.open_array(str(link), mode="r")[...], np.arange(6))


def test_store_from_url_still_finds_zip_files_and_missing_paths(tmp_path):
    missing = tmp_path / "nothing" / "here"
    store = store_from_url(str(missing))
    assert isinstance(store, LocalStore) and store.root == missing.resolve()
    zpath = tmp_path / "x.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("zarr.json", b"{}")
    assert isinstance(store_from_url(str(zpath)), ZipStore)


def test_root_keeps_a_link_swapped_after_the_open_out(tmp_path):
    """The root is resolved when the store is made; a link in its path that
    changes later does not move the store (as before)."""
    one, two = tmp_path / "one", tmp_path / "two"
    _make(str(one))
    _make(str(two), shape=(3,), chunks=(3,))
    link = tmp_path / "link"
    link.symlink_to(one, target_is_directory=True)
    a = zarrpy.open_array(str(link), mode="r")
    link.unlink()
    link.symlink_to(two, target_is_directory=True)
    assert a.shape == (6,) and a.store.root == one.resolve()
    assert zarrpy.open_array(str(link), mode="r").shape == (3,)  # a new open follows the new link


# -- the whole-array indexer ---------------------------------------------------
def test_whole_reads_share_one_indexer_per_shape_and_grid(tmp_path):
    _make(str(tmp_path / "a"))
    _make(str(tmp_path / "b"))
    _make(str(tmp_path / "c"), shape=(8,), chunks=(3,))
    a, b, c = (zarrpy.open_array(str(tmp_path / n), mode="r") for n in "abc")
    assert a._plain_indexer(...) is b._plain_indexer(...)
    assert c._plain_indexer(...) is not a._plain_indexer(...)
    assert list(c._plain_indexer(...)) == list(c._plain_indexer(...))  # iterable again and again
    np.testing.assert_array_equal(c[...], np.arange(8))
    np.testing.assert_array_equal(c[...], c[:])


def test_whole_read_after_resize_and_whole_write(tmp_path):
    path = str(tmp_path / "a")
    a = _make(path)
    a.resize((9,))
    np.testing.assert_array_equal(a[...], [0, 1, 2, 3, 4, 5, 0, 0, 0])
    a[...] = np.full(9, 7.0)
    np.testing.assert_array_equal(zarrpy.open_array(path, mode="r")[...], np.full(9, 7.0))
    z = zarrpy.create_array({}, shape=(), dtype="int8", fill_value=3)
    assert z[...].shape == () and isinstance(z[...], np.ndarray) and z[()] == 3
