"""Zarr V2 through the public API: bad metadata, writes, format selection.

* Bad ``.zarray`` documents (written by hand, as other tools or damaged files
  leave them) must fail at open with a zarrpy error that names the field at
  fault: unknown numcodecs ids in ``compressor`` and ``filters``, ``|O``
  without an object codec, bad ``dtype`` strings, bad ``order``, missing
  ``shape``. Bad ``create_array(zarr_format=2, ...)`` arguments fail before
  anything is written.
* Writes into V2 arrays (partial writes, resize, append, attributes, block
  API) keep the node V2: the store only ever holds ``.zarray``, ``.zattrs``,
  ``.zgroup`` and chunk keys, never ``zarr.json``.
* ``zarr_format=`` selects: 3 on a V2-only store and 2 on a V3-only store find
  nothing (NodeNotFoundError); a store holding both opens as V3 unless
  ``zarr_format=2`` is asked for.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import ml_dtypes
import numcodecs
import numpy as np
import pytest

import zarrpy
from zarrpy.errors import MetadataError, NodeExistsError, NodeNotFoundError, ReadOnlyError, ZarrpyError

BASE = {"zarr_format": 2, "shape": [5], "chunks": [2], "dtype": "<f8", "fill_value": 0, "order": "C",
        "filters": None, "compressor": None}


def _files(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())


def _no_v3(path: Path) -> None:
    names = {name.rsplit("/", 1)[-1] for name in _files(path)}
    assert "zarr.json" not in names, _files(path)


def _write_zarray(path: Path, doc: dict[str, Any], attrs: dict | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / ".zarray").write_text(json.dumps(doc))
    if attrs is not None:
        (path / ".zattrs").write_text(json.dumps(attrs))
    return path


def _doc(**changes: Any) -> dict[str, Any]:
    doc = dict(BASE)
    for key, value in changes.items():
        if value is _DROP:
            doc.pop(key)
        else:
            doc[key] = value
    return doc


_DROP = object()

# --------------------------------------------------------------------------
# bad .zarray documents: (changes, words the message must contain)

BAD_ZARRAY = {
    "compressor-unknown-id": (dict(compressor={"id": "nosuchcodec", "level": 1}), ["compressor", "nosuchcodec"]),
    "filters-unknown-id": (dict(filters=[{"id": "nosuchfilter"}]), ["filters[0]", "nosuchfilter"]),
    "filters-unknown-id-second": (dict(filters=[{"id": "delta", "dtype": "<f8"}, {"id": "nosuchfilter"}]),
                                  ["filters[1]", "nosuchfilter"]),
    "object-without-object-codec": (dict(dtype="|O", fill_value=None), ["filters", "object codec", "|O"]),
    "object-codec-missing-compressor-only": (dict(dtype="|O", fill_value=None, compressor={"id": "zstd", "level": 1}),
                                             ["object codec", "found none"]),
    "object-pickle-refused": (dict(dtype="|O", fill_value=None, filters=[{"id": "pickle"}]),
                              ["filters[0]", "pickle"]),
    "dtype-numpy-name": (dict(dtype="float64"), ["dtype", "float64"]),
    "dtype-bad-size": (dict(dtype="<f3"), ["dtype", "<f3"]),
    "dtype-bad-kind": (dict(dtype="<x4"), ["dtype", "<x4"]),
    "dtype-extended-precision": (dict(dtype="<f16"), ["dtype", "<f16"]),
    "dtype-not-a-string": (dict(dtype=8), ["dtype"]),
    "dtype-object-with-size": (dict(dtype="|O8", fill_value=None, filters=[{"id": "vlen-utf8"}]), ["dtype", "|O8"]),
    "order-K": (dict(order="K"), ["order", "K"]),
    "order-lowercase": (dict(order="f"), ["order"]),
    "order-null": (dict(order=None), ["order"]),
    "shape-missing": (dict(shape=_DROP), ["shape", "missing"]),
    "chunks-missing": (dict(chunks=_DROP), ["chunks", "missing"]),
    "dtype-missing": (dict(dtype=_DROP), ["dtype", "missing"]),
    "shape-negative": (dict(shape=[-1]), ["shape"]),
    "chunks-zero": (dict(chunks=[0]), ["chunks"]),
    "chunks-wrong-ndim": (dict(chunks=[2, 2]), ["chunks", "dimensions"]),
    "dimension-separator": (dict(dimension_separator="-"), ["dimension_separator"]),
    "fill-value-wrong-type": (dict(fill_value="abc"), ["fill_value", "abc"]),
    "fill-value-fraction-for-int": (dict(dtype="<i4", fill_value=1.5), ["fill_value", "1.5"]),
    "compressor-not-object": (dict(compressor="zstd"), ["compressor"]),
    "compressor-without-id": (dict(compressor={"level": 1}), ["compressor", "id"]),
    "filters-not-list": (dict(filters={"id": "delta"}), ["filters"]),
    "zarr-format-3-in-zarray": (dict(zarr_format=3), ["zarr_format"]),
    "blosc-bad-shuffle": (dict(compressor={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 7}),
                          ["compressor", "shuffle"]),
    "filter-dtype-mismatch": (dict(filters=[{"id": "delta", "dtype": "<i2"}]), ["filters", "delta", "<i2"]),
    "struct-object-field": (dict(dtype=[["a", "<i4"], ["b", "|O"]], fill_value=None), ["dtype[1]", "object"]),
}


def _opener(name: str):
    return {
        "open_array": lambda p: zarrpy.open_array(str(p)),
        "open_array-v2": lambda p: zarrpy.open_array(str(p), zarr_format=2),
        "open": lambda p: zarrpy.open(str(p), mode="r"),
        "group-member": lambda p: zarrpy.open_group(str(p.parent), mode="r")[p.name],
    }[name]


@pytest.mark.parametrize("name", list(BAD_ZARRAY))
def test_bad_zarray_names_the_field(tmp_path: Path, name: str) -> None:
    changes, words = BAD_ZARRAY[name]
    path = _write_zarray(tmp_path / "a", _doc(**changes))
    before = _files(tmp_path)
    with pytest.raises(MetadataError) as info:
        zarrpy.open_array(str(path))
    message = str(info.value)
    for word in words:
        assert word in message, (word, message)
    assert _files(tmp_path) == before  # a failed open writes nothing


@pytest.mark.parametrize("opener", ["open_array", "open_array-v2", "open", "group-member"])
@pytest.mark.parametrize("name", ["compressor-unknown-id", "filters-unknown-id", "object-without-object-codec",
                                  "dtype-numpy-name", "order-K", "shape-missing"])
def test_bad_zarray_every_entry_point(tmp_path: Path, name: str, opener: str) -> None:
    changes, words = BAD_ZARRAY[name]
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / ".zgroup").write_text('{"zarr_format": 2}')
    path = _write_zarray(tmp_path / "g" / "a", _doc(**changes))
    with pytest.raises(ZarrpyError) as info:
        _opener(opener)(path)
    assert isinstance(info.value, MetadataError)
    assert words[0] in str(info.value)


def test_unknown_codec_error_keeps_its_cause(tmp_path: Path) -> None:
    """The MetadataError naming the field is caused by the codec layer's UnknownCodecError."""
    path = _write_zarray(tmp_path / "a", _doc(compressor={"id": "nosuchcodec"}))
    with pytest.raises(MetadataError) as info:
        zarrpy.open_array(str(path))
    assert isinstance(info.value.__cause__, zarrpy.UnknownCodecError)


@pytest.mark.parametrize("doc, words", [
    ('{"zarr_format": 2', [".zarray"]),  # not JSON
    ("[1, 2]", [".zarray"]),
])
def test_bad_zarray_json(tmp_path: Path, doc: str, words: list[str]) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / ".zarray").write_text(doc)
    with pytest.raises(MetadataError) as info:
        zarrpy.open_array(str(tmp_path / "a"))
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("zgroup, zattrs, words", [
    ('{"zarr_format": 3}', None, ["zarr_format"]),
    ('{"zarr_format": 2}', "[1]", ["zattrs"]),
])
def test_bad_group_documents(tmp_path: Path, zgroup: str, zattrs: str | None, words: list[str]) -> None:
    (tmp_path / ".zgroup").write_text(zgroup)
    if zattrs is not None:
        (tmp_path / ".zattrs").write_text(zattrs)
    with pytest.raises(MetadataError) as info:
        zarrpy.open_group(str(tmp_path), mode="r")
    for word in words:
        assert word in str(info.value)


def test_array_and_group_documents_at_one_path(tmp_path: Path) -> None:
    path = _write_zarray(tmp_path / "a", _doc())
    (path / ".zgroup").write_text('{"zarr_format": 2}')
    with pytest.raises(MetadataError):
        zarrpy.open(str(path), mode="r")


# --------------------------------------------------------------------------
# bad create_array(zarr_format=2, ...) arguments: an error naming the argument, nothing written

BAD_CREATE = {
    "order-K": (dict(order="K"), MetadataError, "order"),
    "order-lowercase": (dict(order="f"), MetadataError, "order"),
    "dimension-separator": (dict(dimension_separator="-"), ValueError, "dimension_separator"),
    "unknown-compressor": (dict(compressors=[{"name": "numcodecs.nosuchcodec", "configuration": {}}]),
                           zarrpy.UnknownCodecError, "nosuchcodec"),
    "unknown-filter": (dict(filters=[{"name": "numcodecs.nosuchfilter", "configuration": {}}]),
                       zarrpy.UnknownCodecError, "nosuchfilter"),
    "shards": (dict(shards=(4,)), ValueError, "shards"),
    "dimension-names": (dict(dimension_names=["x"]), ValueError, "dimension_names"),
    "chunk-key-encoding": (dict(chunk_key_encoding={"name": "v2", "configuration": {"separator": "/"}}),
                           ValueError, "dimension_separator"),
    "partial-transpose": (dict(shape=(4, 4), chunks=(2, 2),
                               filters=[{"name": "transpose", "configuration": {"order": [0, 1]}}]),
                          MetadataError, "transpose"),
    "order-C-with-F-transpose": (dict(shape=(4, 4), chunks=(2, 2), order="C",
                                      filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}]),
                                 MetadataError, "order"),
    "bad-dtype": (dict(dtype="float3"), MetadataError, "float3"),
    "zarrs-vlen-has-no-v2-form": (dict(dtype=str, serializer={"name": "zarrs.vlen", "configuration": {}}),
                                  MetadataError, "zarrs.vlen"),
    "pickle-refused": (dict(dtype=str, filters=[{"name": "numcodecs.pickle", "configuration": {}}]),
                       zarrpy.CodecError, "pickle"),
    "zarr-format-4": (dict(zarr_format=4), ValueError, "zarr_format"),
    "sharding-codec": (dict(serializer={"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}),
        MetadataError, "sharding_indexed"),
}


@pytest.mark.parametrize("name", list(BAD_CREATE))
def test_bad_create_arguments(tmp_path: Path, name: str) -> None:
    changes, error, word = BAD_CREATE[name]
    kwargs = dict(shape=(4,), chunks=(2,), dtype="<f8", zarr_format=2)
    kwargs.update(changes)
    with pytest.raises(error) as info:
        zarrpy.create_array(str(tmp_path / "a"), **kwargs)
    assert word in str(info.value)
    assert not (tmp_path / "a").exists() or _files(tmp_path / "a") == []


def test_v2_options_refused_for_v3(tmp_path: Path) -> None:
    for kwargs in (dict(order="F"), dict(dimension_separator="/")):
        with pytest.raises(ValueError, match="V2"):
            zarrpy.create_array(str(tmp_path / "a"), shape=(4,), dtype="<i4", **kwargs)
    assert not (tmp_path / "a").exists()


# --------------------------------------------------------------------------
# writes into V2 arrays keep them V2


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("separator", [".", "/"])
def test_partial_writes_and_resize(tmp_path: Path, order: str, separator: str) -> None:
    path = tmp_path / "a"
    z = zarrpy.create_array(str(path), shape=(5, 7), chunks=(2, 3), dtype="<i4", fill_value=-1, order=order,
                            dimension_separator=separator, zarr_format=2,
                            compressors=[{"name": "numcodecs.zlib", "configuration": {"level": 1}}])
    zarray = json.loads((path / ".zarray").read_bytes())
    expected = np.full((5, 7), -1, dtype="<i4")

    z[1:4, 2:6] = np.arange(12).reshape(3, 4)
    expected[1:4, 2:6] = np.arange(12).reshape(3, 4)
    z[0, 0] = 99
    expected[0, 0] = 99
    z.oindex[[4], [1, 6]] = [7, 8]
    expected[4, [1, 6]] = [7, 8]
    np.testing.assert_array_equal(z[...], expected)
    sep = separator
    chunk_keys = {f"{i}{sep}{j}" for i in range(3) for j in range(3)
                  if (expected[2 * i:2 * i + 2, 3 * j:3 * j + 3] != -1).any()}
    assert _files(path) == sorted({".zarray", ".zattrs"} | chunk_keys)
    assert sorted(z.stored_chunk_keys()) == sorted(chunk_keys)
    assert z.nchunks_initialized == len(chunk_keys)

    # writing the fill value over a whole chunk removes it
    z[0:2, 0:3] = -1
    expected[0:2, 0:3] = -1
    assert f"0{sep}0" not in _files(path)

    # shrink: chunks outside go, cut chunks keep only their inner part
    z.resize(3, 4)
    assert z.shape == (3, 4)
    assert {k for k in _files(path) if not k.startswith(".")} <= {f"{i}{sep}{j}" for i in range(2) for j in range(2)}
    # grow back: the cut-off part reads as fill, never stale data
    z.resize((5, 7))
    grown = np.full((5, 7), -1, dtype="<i4")
    grown[:3, :4] = expected[:3, :4]
    np.testing.assert_array_equal(z[...], grown)
    assert json.loads((path / ".zarray").read_bytes()) == zarray  # same document, shape included again
    _no_v3(path)

    reopened = zarrpy.open_array(str(path))
    assert reopened.zarr_format == 2 and reopened.metadata.order == order
    np.testing.assert_array_equal(reopened[...], grown)


def test_append_keeps_v2(tmp_path: Path) -> None:
    path = tmp_path / "a"
    z = zarrpy.create_array(str(path), shape=(2, 3), chunks=(2, 2), dtype="<u2", zarr_format=2, order="F")
    z[...] = [[1, 2, 3], [4, 5, 6]]
    assert z.append([[7, 8, 9]]) == (3, 3)
    assert z.append([[0], [0], [1]], axis=1) == (3, 4)
    np.testing.assert_array_equal(zarrpy.open_array(str(path))[...],
                                  [[1, 2, 3, 0], [4, 5, 6, 0], [7, 8, 9, 1]])
    assert json.loads((path / ".zarray").read_bytes())["shape"] == [3, 4]
    _no_v3(path)


def test_attribute_updates_keep_v2(tmp_path: Path) -> None:
    path = tmp_path / "a"
    z = zarrpy.create_array(str(path), shape=(4,), chunks=(2,), dtype="<f8", zarr_format=2,
                            attributes={"a": 1})
    zarray = (path / ".zarray").read_bytes()
    z.attrs["b"] = [1, "x"]
    z.attrs.update({"c": {"d": None}}, e=2.5)
    del z.attrs["a"]
    assert json.loads((path / ".zattrs").read_bytes()) == {"b": [1, "x"], "c": {"d": None}, "e": 2.5}
    assert (path / ".zarray").read_bytes() == zarray
    assert _files(path) == [".zarray", ".zattrs"]
    assert dict(zarrpy.open_array(str(path)).attrs) == {"b": [1, "x"], "c": {"d": None}, "e": 2.5}
    z.attrs.put({})
    assert json.loads((path / ".zattrs").read_bytes()) == {}


def test_writes_into_a_foreign_v2_array(tmp_path: Path) -> None:
    """A .zarray as zarr-python 2 left it: null fill, no dimension_separator, an
    unknown extra key, no .zattrs. zarrpy writes, resizes and sets attributes
    without changing what the document means (the unknown key is dropped, as
    zarr-python does)."""
    doc = {"zarr_format": 2, "shape": [5, 4], "chunks": [2, 3], "dtype": ">f8", "fill_value": None,
           "order": "F", "filters": [{"id": "delta", "dtype": ">f8", "astype": ">f8"}],
           "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0},
           "extra_key": "x"}
    path = _write_zarray(tmp_path / "a", doc)
    z = zarrpy.open_array(str(path), mode="r+")
    assert z.fill_value == 0
    np.testing.assert_array_equal(z[...], np.zeros((5, 4)))
    z[1:3, 1:4] = 7.5
    z.attrs["units"] = "m"
    z.resize(4, 4)
    stored = json.loads((path / ".zarray").read_bytes())
    assert stored == {**{k: v for k, v in doc.items() if k != "extra_key"}, "shape": [4, 4],
                      "dimension_separator": "."}
    assert json.loads((path / ".zattrs").read_bytes()) == {"units": "m"}
    assert _files(path) == [".zarray", ".zattrs", "0.0", "0.1", "1.0", "1.1"]
    expected = np.zeros((4, 4))
    expected[1:3, 1:4] = 7.5
    np.testing.assert_array_equal(zarrpy.open_array(str(path))[...], expected)


def test_empty_filters_list_is_read_as_null_and_never_written(tmp_path: Path) -> None:
    """ZARR-FORMAT-NOTES §13: ``filters: []`` exists in the wild (zarr-python #2842)."""
    path = _write_zarray(tmp_path / "a", _doc(dtype="<i2", filters=[]))
    (path / "0").write_bytes(np.array([1, 2], "<i2").tobytes())
    z = zarrpy.open_array(str(path), mode="r+")
    assert z.metadata.filters is None
    np.testing.assert_array_equal(z[...], [1, 2, 0, 0, 0])
    z.attrs["a"] = 1
    assert json.loads((path / ".zarray").read_bytes())["filters"] is None


def test_legacy_object_codec_layouts(tmp_path: Path) -> None:
    """Object codec given as the compressor (old zarr-python), and a bytes filter
    after the object codec: both read; a codec before it is refused by field."""
    vals = np.array(["a", "ĉ", ""], dtype=object)
    enc = numcodecs.VLenUTF8().encode(vals)
    p1 = _write_zarray(tmp_path / "as-compressor",
                       _doc(shape=[3], chunks=[3], dtype="|O", fill_value=None, compressor={"id": "vlen-utf8"}))
    (p1 / "0").write_bytes(enc)
    assert np.asarray(zarrpy.open_array(str(p1))[...], dtype=object).tolist() == ["a", "ĉ", ""]
    p2 = _write_zarray(tmp_path / "then-zlib", _doc(shape=[3], chunks=[3], dtype="|O", fill_value=None,
                                                     filters=[{"id": "vlen-utf8"}, {"id": "zlib", "level": 1}],
                                                     compressor={"id": "zstd", "level": 1}))
    (p2 / "0").write_bytes(numcodecs.Zstd(level=1).encode(numcodecs.Zlib(level=1).encode(enc)))
    assert np.asarray(zarrpy.open_array(str(p2))[...], dtype=object).tolist() == ["a", "ĉ", ""]
    p3 = _write_zarray(tmp_path / "zlib-first", _doc(dtype="|O", fill_value=None,
                                                      filters=[{"id": "zlib", "level": 1}, {"id": "vlen-utf8"}]))
    with pytest.raises(MetadataError, match=r"filters\[0\].*before the object codec"):
        zarrpy.open_array(str(p3))


def test_auto_serializer_follows_filter_byte_order(tmp_path: Path) -> None:
    z = zarrpy.create_array(str(tmp_path / "a"), shape=(4,), chunks=(2,), dtype="<f8", zarr_format=2,
                            filters=[{"name": "numcodecs.fixedscaleoffset", "configuration": {
                                "offset": 1000, "scale": 10, "dtype": "<f8", "astype": ">i2"}}])
    z[...] = [1000.0, 1000.5, 999.9, 1001.2]
    np.testing.assert_allclose(z[...], [1000.0, 1000.5, 999.9, 1001.2], atol=0.051)


def test_block_api_on_v2(tmp_path: Path) -> None:
    path = tmp_path / "a"
    z = zarrpy.create_array(str(path), shape=(5,), chunks=(2,), dtype="<i8", zarr_format=2,
                            dimension_separator="/")
    z.write_chunks({(0,): [1, 2], (2,): [5]})
    assert [c.tolist() for c in z.read_chunks([(0,), (1,), (2,)])] == [[1, 2], [0, 0], [5]]
    assert _files(path) == [".zarray", ".zattrs", "0", "2"]


def test_strings_write_and_resize_v2(tmp_path: Path) -> None:
    path = tmp_path / "s"
    z = zarrpy.create_array(str(path), shape=(5,), chunks=(2,), dtype=str, zarr_format=2, order="F")
    z[1:4] = ["ĉ", "", "long" * 100]
    z.resize(3)
    z.resize(5)
    assert np.asarray(z[...], dtype=object).tolist() == ["", "ĉ", "", "", ""]
    assert json.loads((path / ".zarray").read_bytes())["filters"] == [{"id": "vlen-utf8"}]
    _no_v3(path)


def test_read_only_v2(tmp_path: Path) -> None:
    path = tmp_path / "a"
    zarrpy.create_array(str(path), shape=(4,), chunks=(2,), dtype="<i4", zarr_format=2)
    before = _files(path)
    z = zarrpy.open_array(str(path), mode="r")
    with pytest.raises(ReadOnlyError):
        z[0] = 1
    with pytest.raises(ReadOnlyError):
        z.attrs["a"] = 1
    with pytest.raises(ReadOnlyError):
        z.resize(8)
    assert _files(path) == before


def test_pickle_v2_array(tmp_path: Path) -> None:
    z = zarrpy.create_array(str(tmp_path / "a"), shape=(4,), chunks=(2,), dtype="<i4", zarr_format=2)
    z[...] = [1, 2, 3, 4]
    back = pickle.loads(pickle.dumps(z))
    assert back.zarr_format == 2
    np.testing.assert_array_equal(back[...], [1, 2, 3, 4])


def test_nbytes_stored_counts_v2_metadata(tmp_path: Path) -> None:
    path = tmp_path / "a"
    z = zarrpy.create_array(str(path), shape=(6,), chunks=(2,), dtype="<i4", zarr_format=2, compressors=None)
    z[:3] = 1
    assert z.nbytes_stored() == sum(p.stat().st_size for p in path.iterdir())


def test_groups_keep_v2(tmp_path: Path) -> None:
    path = tmp_path / "g"
    g = zarrpy.create_group(str(path), zarr_format=2, attributes={"a": 1})
    g.attrs["b"] = 2
    sub = g.create_group("sub")
    assert sub.zarr_format == 2
    arr = sub.create_array("x", shape=(3,), dtype="<i2")
    assert arr.zarr_format == 2
    arr[...] = [1, 2, 3]
    g.require_group("sub").attrs["c"] = 3
    zarrpy.create_array(str(path), name="deep/er/y", shape=(2,), dtype="u1", zarr_format=2)
    assert _files(path) == [
        ".zattrs", ".zgroup",
        "deep/.zattrs", "deep/.zgroup", "deep/er/.zattrs", "deep/er/.zgroup",
        "deep/er/y/.zarray", "deep/er/y/.zattrs",
        "sub/.zattrs", "sub/.zgroup", "sub/x/.zarray", "sub/x/.zattrs", "sub/x/0",
    ]
    assert json.loads((path / ".zattrs").read_bytes()) == {"a": 1, "b": 2}
    reopened = zarrpy.open_group(str(path), mode="r")
    assert reopened.zarr_format == 2
    assert [name for name, _ in reopened.members(max_depth=None)] == ["deep", "deep/er", "deep/er/y", "sub",
                                                                     "sub/x"]
    assert dict(reopened["sub"].attrs) == {"c": 3}


def test_open_creates_v2_when_asked(tmp_path: Path) -> None:
    a = zarrpy.open(str(tmp_path / "a"), mode="w", zarr_format=2, shape=(3,), dtype="<f4")
    g = zarrpy.open(str(tmp_path / "g"), mode="a", zarr_format=2)
    g2 = zarrpy.open_group(str(tmp_path / "g2"), mode="w-", zarr_format=2)
    a2 = zarrpy.open_array(str(tmp_path / "a2"), mode="w", zarr_format=2, shape=(3,), dtype="u1", order="F")
    assert [n.zarr_format for n in (a, g, g2, a2)] == [2, 2, 2, 2]
    assert isinstance(a, zarrpy.Array) and isinstance(g, zarrpy.Group)
    _no_v3(tmp_path)


def test_overwrite_switches_format_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "a"
    z = zarrpy.create_array(str(path), shape=(4,), chunks=(2,), dtype="<i4", zarr_format=2)
    z[...] = 1
    z3 = zarrpy.create_array(str(path), shape=(4,), chunks=(2,), dtype="<i4", overwrite=True)
    assert _files(path) == ["zarr.json"]
    z3[...] = 2
    zarrpy.create_array(str(path), shape=(4,), chunks=(2,), dtype="<i4", zarr_format=2, overwrite=True)
    assert _files(path) == [".zarray", ".zattrs"]
    with pytest.raises(NodeExistsError):
        zarrpy.create_array(str(path), shape=(4,), dtype="<i4")  # V3 over V2 without overwrite


# --------------------------------------------------------------------------
# format selection


@pytest.fixture
def v2_store(tmp_path: Path) -> Path:
    path = tmp_path / "v2"
    g = zarrpy.create_group(str(path), zarr_format=2)
    g.create_array("x", shape=(4,), chunks=(2,), dtype="<i4")[...] = [1, 2, 3, 4]
    return path


@pytest.fixture
def v3_store(tmp_path: Path) -> Path:
    path = tmp_path / "v3"
    g = zarrpy.create_group(str(path))
    g.create_array("x", shape=(4,), chunks=(2,), dtype="<i4")[...] = [1, 2, 3, 4]
    return path


_OPENERS = {
    "open": lambda p, **kw: zarrpy.open(str(p), **kw),
    "open_array": lambda p, **kw: zarrpy.open_array(str(p), **kw),
    "open_group": lambda p, **kw: zarrpy.open_group(str(p), **kw),
}


@pytest.mark.parametrize("mode", ["r", "r+"])
@pytest.mark.parametrize("fn", list(_OPENERS))
@pytest.mark.parametrize("sub", ["", "x"])
def test_v3_asked_on_v2_store(v2_store: Path, fn: str, mode: str, sub: str) -> None:
    before = _files(v2_store)
    with pytest.raises(NodeNotFoundError, match="zarr.json"):
        _OPENERS[fn](v2_store / sub if sub else v2_store, mode=mode, zarr_format=3)
    assert _files(v2_store) == before


@pytest.mark.parametrize("mode", ["r", "r+"])
@pytest.mark.parametrize("fn", list(_OPENERS))
@pytest.mark.parametrize("sub", ["", "x"])
def test_v2_asked_on_v3_store(v3_store: Path, fn: str, mode: str, sub: str) -> None:
    before = _files(v3_store)
    with pytest.raises(NodeNotFoundError, match=r"\.zarray or \.zgroup"):
        _OPENERS[fn](v3_store / sub if sub else v3_store, mode=mode, zarr_format=2)
    assert _files(v3_store) == before


@pytest.mark.parametrize("fn", ["open", "open_group"])
def test_other_format_in_mode_a_is_not_clobbered(v2_store: Path, v3_store: Path, fn: str) -> None:
    """Mode "a" (open's default) would create a node when none is found; a node
    of the other format is there, so zarrpy refuses and writes nothing
    (zarr-python 3.4.2 writes a new group's documents next to the old ones)."""
    for store, other in ((v2_store, 3), (v3_store, 2)):
        before = _files(store)
        with pytest.raises((NodeNotFoundError, NodeExistsError)):
            _OPENERS[fn](store, zarr_format=other)
        assert _files(store) == before


def test_open_array_mode_a_other_format(v2_store: Path) -> None:
    with pytest.raises(NodeNotFoundError):
        zarrpy.open_array(str(v2_store / "x"), mode="a", zarr_format=3)


def test_kind_mismatch_v2(v2_store: Path) -> None:
    with pytest.raises(NodeNotFoundError, match="group"):
        zarrpy.open_array(str(v2_store), mode="r")
    with pytest.raises(NodeNotFoundError, match="array"):
        zarrpy.open_group(str(v2_store / "x"), mode="r")


def test_detection_without_zarr_format(v2_store: Path, v3_store: Path) -> None:
    for store, fmt in ((v2_store, 2), (v3_store, 3)):
        assert zarrpy.open(str(store), mode="r").zarr_format == fmt
        assert zarrpy.open(str(store), mode="r", zarr_format=fmt).zarr_format == fmt
        x = zarrpy.open_array(str(store / "x"), mode="r")
        assert x.zarr_format == fmt
        np.testing.assert_array_equal(x[...], [1, 2, 3, 4])


@pytest.fixture
def mixed_store(tmp_path: Path) -> Path:
    """One path holding a V3 array and a V2 array with other contents (as a
    half-migrated store does): zarr.json + c/... beside .zarray + 0, 1."""
    path = tmp_path / "m"
    v3 = zarrpy.create_array(str(path), shape=(4,), chunks=(2,), dtype="<i4", attributes={"fmt": 3})
    v3[...] = [3, 3, 3, 3]
    other = tmp_path / "tmp2"
    v2 = zarrpy.create_array(str(other), shape=(6,), chunks=(3,), dtype="<f8", zarr_format=2,
                             attributes={"fmt": 2})
    v2[...] = [2.0] * 6
    for f in other.iterdir():
        (path / f.name).write_bytes(f.read_bytes())
    return path


def test_mixed_store_opens_as_v3_by_default(mixed_store: Path) -> None:
    assert {".zarray", ".zattrs", "zarr.json"} <= set(_files(mixed_store))
    for node in (zarrpy.open(str(mixed_store), mode="r"), zarrpy.open_array(str(mixed_store), mode="r"),
                 zarrpy.open_array(str(mixed_store), mode="r", zarr_format=3)):
        assert node.zarr_format == 3
        assert node.shape == (4,) and dict(node.attrs) == {"fmt": 3}
        np.testing.assert_array_equal(node[...], [3, 3, 3, 3])


def test_mixed_store_v2_when_asked(mixed_store: Path) -> None:
    for node in (zarrpy.open(str(mixed_store), mode="r", zarr_format=2),
                 zarrpy.open_array(str(mixed_store), mode="r", zarr_format=2)):
        assert node.zarr_format == 2
        assert node.shape == (6,) and dict(node.attrs) == {"fmt": 2}
        np.testing.assert_array_equal(node[...], [2.0] * 6)


def test_mixed_store_as_group_member(mixed_store: Path, tmp_path: Path) -> None:
    """A group's member with both documents is the V3 one, as at the root."""
    (tmp_path / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    g = zarrpy.open_group(str(tmp_path), mode="r")
    member = g["m"]
    assert isinstance(member, zarrpy.Array) and member.zarr_format == 3
    assert dict(g.members())["m"].zarr_format == 3


def test_mixed_store_writes_go_to_the_opened_format(mixed_store: Path) -> None:
    v2 = zarrpy.open_array(str(mixed_store), mode="r+", zarr_format=2)
    v2.attrs["touched"] = True
    v2[0] = 9.0
    assert json.loads((mixed_store / ".zattrs").read_bytes()) == {"fmt": 2, "touched": True}
    v3 = zarrpy.open_array(str(mixed_store), mode="r")
    assert dict(v3.attrs) == {"fmt": 3}
    np.testing.assert_array_equal(v3[...], [3, 3, 3, 3])
    np.testing.assert_array_equal(zarrpy.open_array(str(mixed_store), zarr_format=2)[...], [9.0] + [2.0] * 5)


@pytest.mark.parametrize(
    ("dtype", "uint", "value_bits", "fill_bits", "canonical"),
    [
        ("float32", np.uint32, 0x7FC00001, 0x7FC00001, 0x7FC00000),  # the value is the fill, payload and all
        ("float32", np.uint32, 0x7FC00001, 0xFFC00000, 0x7FC00000),  # a negative NaN fill
        ("float64", np.uint64, 0x7FF8000000000001, 0x7FF8000000000001, 0x7FF8000000000000),
        ("float8_e3m4", np.uint8, 0x71, 0x71, 0x78),  # ml_dtypes, through its plugin's V2 form
    ],
)
def test_v2_nan_fill_is_the_nan_readers_see(dtype, uint, value_bits, fill_bits, canonical):
    """V2 stores every NaN fill as "NaN": a new array's fill value is that
    NaN from the start, so a chunk holding the asked-for NaN bits is stored
    (not skipped as empty) and reads back bit for bit, and unwritten places
    read the same NaN before and after reopening."""
    if dtype == "float8_e3m4":
        dtype = ml_dtypes.float8_e3m4
    value = np.array([value_bits], dtype=uint).view(dtype)
    fill = np.array([fill_bits], dtype=uint).view(dtype)[0]
    store: dict[str, Any] = {}
    a = zarrpy.create_array(store, shape=(6,), chunks=(4,), dtype=dtype, fill_value=fill, zarr_format=2)
    a[:1] = value
    assert "0" in store and "1" not in store
    assert json.loads(store[".zarray"])["fill_value"] == "NaN"
    expected = [value_bits] + [canonical] * 5
    for arr in (a, zarrpy.open_array(store, mode="r")):
        assert np.asarray(arr.fill_value, dtype=arr.dtype).view(uint) == canonical
        assert arr[...].view(uint).tolist() == expected
