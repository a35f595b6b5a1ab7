"""Bad input end to end, through the public API, on a LocalStore.

For every kind of bad input (DESIGN.md "Errors and safety"):

- the error is a zarrpy error (a ``zarrpy.ZarrpyError``), never another type;
- its message names the store key (``c/0/0``), the codec, or the metadata field;
- it comes back promptly (every call runs under a watchdog, never hangs);
- nothing in the store directory changes: every file's bytes (and every
  directory) are snapshotted before and compared after. The snapshot covers the
  store's parent directory too, so nothing may escape the root either.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import threading
import zlib
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import zarrpy
from zarrpy.stores.local import LocalStore

TIMEOUT = 30.0  # seconds for any single call; generous, it only catches hangs

SHAPE = (8, 8)
CHUNKS = (4, 4)
DTYPE = "uint16"
CHUNK_NBYTES = 4 * 4 * 2

RAW = []  # no compressor
GZIP = [{"name": "gzip", "configuration": {"level": 5}}]
ZSTD = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
ZSTD_CHECKSUM = [{"name": "zstd", "configuration": {"level": 3, "checksum": True}}]
BLOSC = [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                             "typesize": 2, "blocksize": 0}}]
CRC = [{"name": "crc32c"}]
ZSTD_CRC = [*ZSTD, *CRC]


# -- helpers ------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every directory (value None) under ``root``."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        out[rel + "/"] = None
        for name in filenames:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out[os.path.join(rel, name)] = f.read()
    return out


def bounded(fn: Callable[[], Any], timeout: float = TIMEOUT) -> tuple[Any, BaseException | None]:
    """Run ``fn`` in a watchdog thread; fail the test if it does not return in time."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        pytest.fail(f"call did not return within {timeout} s (hang?)")
    return box.get("result"), box.get("error")


def expect_error(fn: Callable[[], Any], *fragments: str, cls: type = zarrpy.ZarrpyError,
                 watch: Path | None = None) -> BaseException:
    """``fn()`` raises ``cls`` (a ZarrpyError) naming ``fragments``; ``watch`` is unchanged."""
    before = snapshot(watch) if watch is not None else None
    result, error = bounded(fn)
    problems = []
    if error is None:
        problems.append(f"expected {cls.__name__}, but the call returned {result!r:.200}")
    elif not isinstance(error, cls):
        problems.append(f"expected {cls.__name__}, got {type(error).__module__}.{type(error).__name__}: {error}")
    else:
        msg = str(error)
        problems += [f"{frag!r} not named in the error message: {msg}" for frag in fragments if frag not in msg]
    if watch is not None:
        problems += store_changes(before, snapshot(watch))
    if problems:
        raise AssertionError("; ".join(problems)) from error
    return error


def store_changes(before: dict, after: dict) -> list[str]:
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    if added or removed or changed:
        return [f"store changed: added={added} removed={removed} changed={changed}"]
    return []


def assert_unchanged(before: dict, after: dict) -> None:
    problems = store_changes(before, after)
    assert not problems, problems[0]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The store directory; tests snapshot its parent (``tmp_path``)."""
    return tmp_path / "store.zarr"


def make_array(root: Path, compressors: Any = RAW, *, path: str | None = None, fill_value: Any = 0,
               dtype: str = DTYPE, **kwargs: Any) -> tuple[zarrpy.Array, np.ndarray]:
    data = (np.arange(64, dtype=dtype).reshape(SHAPE) * 37 + 1).astype(dtype)
    a = zarrpy.create_array(LocalStore(root), name=path, shape=SHAPE, dtype=dtype, chunks=CHUNKS,
                            compressors=compressors, fill_value=fill_value, **kwargs)
    a[...] = data
    return a, data


def chunk_file(root: Path, key: str = "c/0/0") -> Path:
    p = root.joinpath(*key.split("/"))
    assert p.is_file(), f"{key} was not written"
    return p


def reopen(root: Path, mode: str = "r", path: str | None = None) -> zarrpy.Array:
    return zarrpy.open_array(LocalStore(root), mode=mode, path=path)


def edit_metadata(root: Path, edit: Callable[[dict], None], path: str = "") -> None:
    p = root / path / "zarr.json" if path else root / "zarr.json"
    doc = json.loads(p.read_bytes())
    edit(doc)
    p.write_text(json.dumps(doc))


def read_all_ways(root: Path, key: str, watch: Path, cls: type = zarrpy.ChunkDecodeError, *,
                  small_read_checks: bool = True) -> None:
    """Every read path over a bad chunk at ``key`` raises ``cls`` naming ``key``.

    ``small_read_checks=False``: a read of a few elements (one element, one
    row) of an uncompressed chunk reads just their bytes (a partial read),
    which cannot see that the chunk has the wrong length when they are there
    (stores with a large ``whole_read_nbytes`` read such a chunk whole anyway)."""
    coords = tuple(int(c) for c in key.split("/")[1:])
    sel = tuple(slice(c * s, c * s + 1) for c, s in zip(coords, CHUNKS))
    a = reopen(root)
    expect_error(lambda: a[...], key, cls=cls, watch=watch)
    if small_read_checks:
        expect_error(lambda: a[sel], key, cls=cls, watch=watch)
        expect_error(lambda: a.oindex[[coords[0] * 4], :], key, cls=cls, watch=watch)
    expect_error(lambda: a.read_chunk(coords), key, cls=cls, watch=watch)
    expect_error(lambda: np.asarray(a), key, cls=cls, watch=watch)
    # Writing into a chunk that cannot be decoded must fail too, and write nothing
    # (not even the other chunks of the same call).
    w = reopen(root, mode="r+")
    expect_error(lambda: w.__setitem__(sel, 7), key, cls=cls, watch=watch)
    # rows cover the bad chunk's row partly and the other chunk row wholly
    rows = slice(0, 6) if coords[0] == 1 else slice(2, 8)
    expect_error(lambda: w.__setitem__((rows, slice(0, 8)), 7), key, cls=cls, watch=watch)
    # Other chunks still read fine.
    other = tuple(slice(0, 4) if c else slice(4, 8) for c in coords)
    _, err = bounded(lambda: a[other])
    assert err is None, err


# -- (a) malformed zarr.json ------------------------------------------------------------


BAD_JSON = [b"", b"{", b"{not json}", b"\xff\xfe\x00\x01", b"[]", b"null", b'"array"',
            b'{"zarr_format": 3, "node_type": "array",', b"\x00" * 16]


@pytest.mark.parametrize("raw", BAD_JSON, ids=repr)
def test_malformed_root_zarr_json(root, tmp_path, raw):
    make_array(root)
    (root / "zarr.json").write_bytes(raw)
    store = LocalStore(root)
    for call in (
        lambda: zarrpy.open_array(store),
        lambda: zarrpy.open_array(store, mode="r+"),
        lambda: zarrpy.open_array(store, mode="a"),
        lambda: zarrpy.open(store),
        lambda: zarrpy.open(store, mode="a"),
        lambda: zarrpy.open(store, mode="r"),
        lambda: zarrpy.open_group(store, mode="a"),
        lambda: zarrpy.open_group(store, mode="r"),
        lambda: zarrpy.open_array(str(root)),
        lambda: zarrpy.open(str(root), mode="r"),
    ):
        expect_error(call, "zarr.json", cls=zarrpy.MetadataError, watch=tmp_path)


@pytest.mark.parametrize("raw", BAD_JSON[:4], ids=repr)
def test_malformed_nested_zarr_json(root, tmp_path, raw):
    make_array(root, path="grp/arr")
    (root / "grp" / "arr" / "zarr.json").write_bytes(raw)
    expect_error(lambda: zarrpy.open_array(LocalStore(root), path="grp/arr"), "grp/arr/zarr.json",
                 cls=zarrpy.MetadataError, watch=tmp_path)
    g = zarrpy.open_group(LocalStore(root), mode="r", path="grp")
    expect_error(lambda: g["arr"], "grp/arr/zarr.json", cls=zarrpy.MetadataError, watch=tmp_path)
    expect_error(lambda: g.members(), "grp/arr/zarr.json", cls=zarrpy.MetadataError, watch=tmp_path)


def test_malformed_parent_group_blocks_child_creation(root, tmp_path):
    make_array(root, path="grp/arr")
    (root / "grp" / "zarr.json").write_bytes(b"{broken")
    expect_error(
        lambda: zarrpy.create_array(LocalStore(root), name="grp/new", shape=(4,), dtype="uint8", chunks=(2,)),
        "grp/zarr.json", cls=zarrpy.MetadataError, watch=tmp_path,
    )


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda d: d.update(fill_value=70000), "fill_value"),
        (lambda d: d.update(fill_value=1.5), "fill_value"),
        (lambda d: d.update(fill_value=True), "fill_value"),
        (lambda d: d.update(fill_value=None), "fill_value"),
        (lambda d: d.pop("fill_value"), "fill_value"),
        (lambda d: d.update(shape=[8]), "chunk_shape"),
        (lambda d: d.update(shape=[-8, 8]), "shape"),
        (lambda d: d.update(chunk_grid={"name": "rectilinear", "configuration": {}}), "chunk_grid"),
        (lambda d: d.update(chunk_key_encoding={"name": "default", "configuration": {"separator": "-"}}),
         "chunk_key_encoding"),
        (lambda d: d.update(dimension_names=["x"]), "dimension_names"),
        (lambda d: d.update(storage_transformers=[{"name": "t"}]), "storage_transformers"),
        (lambda d: d.update(zarr_format=2), "zarr_format"),
        (lambda d: d.update(node_type="thing"), "node_type"),
        (lambda d: d.update(codecs=[]), "codecs"),
        (lambda d: d.update(unknown_member={"name": "x"}), "unknown_member"),
        (lambda d: d.pop("codecs"), "codecs"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_invalid_metadata_names_field(root, tmp_path, edit, field):
    make_array(root)
    edit_metadata(root, edit)
    store = LocalStore(root)
    for call in (lambda: zarrpy.open_array(store), lambda: zarrpy.open(store, mode="a"),
                 lambda: zarrpy.open_array(store, mode="r+")):
        expect_error(call, field, cls=zarrpy.MetadataError, watch=tmp_path)


def test_must_understand_false_member_is_kept_on_rewrite(root, tmp_path):
    make_array(root)
    ext = {"must_understand": False, "note": "kept"}
    edit_metadata(root, lambda d: d.update(x_ext=ext))
    a = reopen(root, "r+")
    a.attrs["k"] = 1
    doc = json.loads((root / "zarr.json").read_bytes())
    assert doc["x_ext"] == ext and doc["attributes"] == {"k": 1}


# -- (b) unknown data type ------------------------------------------------------------


@pytest.mark.parametrize("dt", ["float128", "string_of_doom", {"name": "mystery", "configuration": {}}, 7])
def test_unknown_data_type_on_open(root, tmp_path, dt):
    make_array(root)
    edit_metadata(root, lambda d: d.update(data_type=dt))
    err = expect_error(lambda: reopen(root), "data_type", cls=zarrpy.MetadataError, watch=tmp_path)
    if isinstance(dt, str):
        assert dt in str(err)
    expect_error(lambda: zarrpy.open(LocalStore(root), mode="a"), "data_type", cls=zarrpy.MetadataError,
                 watch=tmp_path)


@pytest.mark.parametrize("dtype", ["float128", "complex256", "not-a-dtype"])
def test_unknown_data_type_on_create(root, tmp_path, dtype):
    expect_error(lambda: zarrpy.create_array(LocalStore(root), shape=(4,), dtype=dtype, chunks=(2,)),
                 "data_type", cls=zarrpy.MetadataError, watch=tmp_path)


# -- (c) unknown codec ----------------------------------------------------------------


def _assert_unknown_codec_message(err: BaseException, name: str) -> None:
    msg = str(err)
    assert name in msg
    assert "zarrpy.codecs" in msg  # the entry-point group, so users know how to add one
    assert "array '" in msg  # which array holds the codec
    assert "\n" not in msg and "://" not in msg  # one line, no list of URL aliases


@pytest.mark.parametrize("position", ["compressor", "serializer", "filter"])
def test_unknown_codec_on_open(root, tmp_path, position):
    make_array(root, ZSTD)

    def edit(d):
        if position == "compressor":
            d["codecs"].append({"name": "no.such.codec", "configuration": {"x": 1}})
        elif position == "serializer":
            d["codecs"][0] = {"name": "no.such.codec"}
        else:
            d["codecs"].insert(0, {"name": "no.such.codec"})

    edit_metadata(root, edit)
    for call in (lambda: reopen(root), lambda: reopen(root, "r+"), lambda: zarrpy.open(LocalStore(root), mode="r"),
                 lambda: zarrpy.open(LocalStore(root), mode="a")):
        err = expect_error(call, "no.such.codec", cls=zarrpy.UnknownCodecError, watch=tmp_path)
        _assert_unknown_codec_message(err, "no.such.codec")


def test_unknown_codec_in_nested_array_through_group(root, tmp_path):
    make_array(root, path="g/a")
    edit_metadata(root, lambda d: d["codecs"].append({"name": "mystery"}), path="g/a")
    g = zarrpy.open_group(LocalStore(root), mode="r", path="g")
    err = expect_error(lambda: g["a"], "mystery", cls=zarrpy.UnknownCodecError, watch=tmp_path)
    _assert_unknown_codec_message(err, "mystery")


@pytest.mark.parametrize(
    "codec, fragments",
    [
        ({"name": "zstd", "configuration": {"level": "99"}}, ("zstd", "level")),
        ({"name": "zstd", "configuration": {"level": 1, "checksum": "yes"}}, ("zstd", "checksum")),
        ({"name": "gzip", "configuration": {"level": 1.5}}, ("gzip", "level")),
        ({"name": "gzip", "configuration": {"level": 5, "bogus": 1}}, ("gzip", "bogus")),
        ({"name": "blosc", "configuration": {"cname": "nope", "clevel": 5, "shuffle": "shuffle",
                                             "typesize": 2, "blocksize": 0}}, ("blosc", "cname")),
        ({"name": "crc32c", "configuration": {"seed": 1}}, ("crc32c", "seed")),
        ({"name": "bytes", "configuration": {"endian": "middle"}}, ("bytes", "endian")),
    ],
    ids=lambda v: v["name"] if isinstance(v, dict) else "",
)
def test_bad_codec_configuration_on_open(root, tmp_path, codec, fragments):
    make_array(root)

    def edit(d):
        if codec["name"] == "bytes":
            d["codecs"] = [codec]
        else:
            d["codecs"].append(codec)

    edit_metadata(root, edit)
    expect_error(lambda: reopen(root), *fragments, cls=zarrpy.CodecError, watch=tmp_path)


def test_bytes_codec_without_endian_for_multibyte_type_on_open(root, tmp_path):
    make_array(root)
    edit_metadata(root, lambda d: d.update(codecs=[{"name": "bytes"}]))
    expect_error(lambda: reopen(root), "bytes", "endian", cls=zarrpy.CodecError, watch=tmp_path)


def test_codecs_in_wrong_order_on_open(root, tmp_path):
    make_array(root, GZIP)
    edit_metadata(root, lambda d: d.update(codecs=list(reversed(d["codecs"]))))
    expect_error(lambda: reopen(root), "gzip", cls=zarrpy.CodecError, watch=tmp_path)


# -- failed create_array calls write nothing ---------------------------------------------


BAD_CREATE = [
    pytest.param(dict(compressors=[{"name": "no.such.codec"}]), ("no.such.codec", "zarrpy.codecs"), id="unknown-codec"),
    pytest.param(dict(compressors=[{"name": "zstd", "configuration": {"level": 99}}]), ("zstd", "level"), id="zstd-level"),
    pytest.param(dict(compressors=[{"name": "gzip", "configuration": {"level": "high"}}]), ("gzip", "level"), id="gzip-level"),
    pytest.param(dict(compressors=[{"name": "blosc", "configuration": {"cname": "nope", "clevel": 5,
                                                                      "shuffle": "shuffle", "typesize": 2,
                                                                      "blocksize": 0}}]),
                 ("blosc", "cname"), id="blosc-cname"),
    pytest.param(dict(compressors=[{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                                      "shuffle": "sometimes", "typesize": 2,
                                                                      "blocksize": 0}}]),
                 ("blosc", "shuffle"), id="blosc-shuffle"),
    pytest.param(dict(compressors=[{"name": "crc32c", "configuration": {"x": 1}}]), ("crc32c",), id="crc32c-config"),
    pytest.param(dict(compressors=[{"name": "bytes", "configuration": {"endian": "little"}}]), ("bytes",),
                 id="a2b-as-compressor"),
    pytest.param(dict(serializer={"name": "gzip", "configuration": {"level": 1}}), ("gzip",), id="b2b-as-serializer"),
    pytest.param(dict(serializer={"name": "bytes"}), ("bytes", "endian"), id="bytes-no-endian"),
    pytest.param(dict(filters=[{"name": "transpose", "configuration": {"order": [0, 0]}}]), ("transpose", "order"),
                 id="transpose-not-permutation"),
    pytest.param(dict(filters=[{"name": "transpose", "configuration": {"order": [0]}}]), ("transpose",),
                 id="transpose-wrong-ndim"),
    pytest.param(dict(fill_value=70000), ("fill_value",), id="fill-out-of-range"),
    pytest.param(dict(fill_value=-1), ("fill_value",), id="fill-negative-unsigned"),
    pytest.param(dict(fill_value=1.5), ("fill_value",), id="fill-fraction"),
    pytest.param(dict(fill_value="abc"), ("fill_value",), id="fill-string"),
    pytest.param(dict(fill_value=[1, 2]), ("fill_value",), id="fill-list"),
    pytest.param(dict(chunks=(0, 4)), ("chunks",), id="chunks-zero"),
    pytest.param(dict(chunks=(4,)), ("chunks",), id="chunks-ndim"),
    pytest.param(dict(chunks=(4.5, 4)), ("chunks",), id="chunks-float"),
    pytest.param(dict(shape=(-1, 8)), ("shape",), id="shape-negative"),
    pytest.param(dict(dimension_names=["x"]), ("dimension_names",), id="dimension-names-length"),
    pytest.param(dict(chunk_key_encoding={"name": "default", "configuration": {"separator": ":"}}),
                 ("chunk_key_encoding",), id="key-encoding-separator"),
    pytest.param(dict(chunk_key_encoding={"name": "v3"}), ("chunk_key_encoding",), id="key-encoding-name"),
    pytest.param(dict(dtype="float128"), ("data_type",), id="dtype"),
    pytest.param(dict(shards=(6, 6)), ("shards",), id="shards-not-multiple-of-chunks"),
]


def _create(root: Path, name: str | None = None, **overrides: Any):
    kwargs: dict[str, Any] = dict(shape=SHAPE, dtype=DTYPE, chunks=CHUNKS)
    kwargs.update(overrides)
    return lambda: zarrpy.create_array(LocalStore(root), name=name, **kwargs)


@pytest.mark.parametrize("overrides, fragments", BAD_CREATE)
def test_failed_create_writes_nothing_in_empty_store(root, tmp_path, overrides, fragments):
    expect_error(_create(root, **overrides), *fragments, watch=tmp_path)
    assert not root.exists()


@pytest.mark.parametrize("overrides, fragments", BAD_CREATE)
def test_failed_create_writes_nothing_nested(root, tmp_path, overrides, fragments):
    make_array(root, path="keep/me")
    # missing parents ("new", "new/deeper") must not be created either
    expect_error(_create(root, name="new/deeper/arr", **overrides), *fragments, watch=tmp_path)


@pytest.mark.parametrize("overrides, fragments", BAD_CREATE)
def test_failed_overwrite_keeps_existing_array(root, tmp_path, overrides, fragments):
    _, data = make_array(root, ZSTD)
    expect_error(_create(root, overwrite=True, **overrides), *fragments, watch=tmp_path)
    np.testing.assert_array_equal(reopen(root)[...], data)


@pytest.mark.parametrize(
    "attributes",
    [{"bad": object()}, {"set": {1, 2}}, {1j: "complex key"}, {"arr": np.arange(3)}],
    ids=["object", "set", "complex-key", "ndarray"],
)
@pytest.mark.parametrize("mode", ["fresh", "nested", "overwrite"])
def test_unserialisable_attributes_write_nothing(root, tmp_path, attributes, mode):
    if mode == "fresh":
        call = _create(root, attributes=attributes)
    elif mode == "nested":
        make_array(root, path="keep")
        call = _create(root, name="new/arr", attributes=attributes)
    else:
        make_array(root)
        call = _create(root, overwrite=True, attributes=attributes)
    expect_error(call, "attributes", watch=tmp_path)


def test_unserialisable_attribute_update_keeps_metadata(root, tmp_path):
    a, data = make_array(root)
    expect_error(lambda: a.attrs.__setitem__("bad", object()), watch=tmp_path)
    expect_error(lambda: a.attrs.update({"ok": 1, "bad": {1, 2}}), watch=tmp_path)
    assert dict(reopen(root).attrs) == {}
    np.testing.assert_array_equal(reopen(root)[...], data)


def test_create_over_existing_without_overwrite(root, tmp_path):
    make_array(root)
    expect_error(_create(root), cls=zarrpy.NodeExistsError, watch=tmp_path)
    expect_error(lambda: zarrpy.create_group(LocalStore(root)), cls=zarrpy.NodeExistsError, watch=tmp_path)


def test_create_inside_an_array(root, tmp_path):
    make_array(root)
    expect_error(_create(root, name="child"), cls=zarrpy.NodeExistsError, watch=tmp_path)
    expect_error(_create(root, name="c/0"), cls=zarrpy.NodeExistsError, watch=tmp_path)


@pytest.mark.parametrize("name", ["../escape", "a/../../escape", "__private", "a/zarr.json", "a/./b"])
def test_unsafe_node_names(root, tmp_path, name):
    make_array(root, path="a")
    expect_error(_create(root, name=name), watch=tmp_path)
    expect_error(lambda: zarrpy.open_array(LocalStore(root), path=name), watch=tmp_path)
    expect_error(lambda: zarrpy.open_group(LocalStore(root), path=name, mode="a"), watch=tmp_path)


# -- writes of incompatible values write nothing ---------------------------------------


@pytest.mark.parametrize(
    "selection, value, cls",
    [
        ((slice(None), slice(None)), "abc", TypeError),
        ((slice(None), slice(None)), [[{"a": 1}]], TypeError),
        ((slice(None), slice(None)), np.array(["x", "y"]), TypeError),
        ((slice(0, 2), slice(0, 2)), np.ones((3, 3)), zarrpy.SelectionError),
        ((slice(None), slice(None)), np.ones((8, 7)), zarrpy.SelectionError),
        ((slice(0, 6), slice(0, 8)), np.ones((6, 8, 1)), zarrpy.SelectionError),
        ((100, 0), 1, zarrpy.BoundsCheckError),
        ((slice(0, 2), 8), 1, zarrpy.BoundsCheckError),
        ((0, 0, 0), 1, IndexError),
        (("a",), 1, IndexError),
    ],
    ids=repr,
)
def test_incompatible_writes_write_nothing(root, tmp_path, selection, value, cls):
    a, data = make_array(root, ZSTD)
    # DESIGN: a value of the wrong kind is a clear TypeError; shape and bounds
    # problems are zarrpy errors. Either way: nothing is written.
    before = snapshot(tmp_path)
    _, err = bounded(lambda: a.__setitem__(selection, value))
    assert err is not None, "write of an incompatible value succeeded"
    assert isinstance(err, cls), f"expected {cls.__name__}, got {type(err).__name__}: {err}"
    if cls is IndexError:
        assert isinstance(err, zarrpy.ZarrpyError), f"{type(err).__name__} is not a ZarrpyError: {err}"
    assert_unchanged(before, snapshot(tmp_path))
    np.testing.assert_array_equal(reopen(root)[...], data)


def test_write_to_read_only_array_writes_nothing(root, tmp_path):
    make_array(root)
    a = reopen(root, mode="r")
    expect_error(lambda: a.__setitem__((0, 0), 5), cls=zarrpy.ReadOnlyError, watch=tmp_path)
    expect_error(lambda: a.attrs.__setitem__("x", 1), cls=zarrpy.ReadOnlyError, watch=tmp_path)
    expect_error(lambda: a.resize((4, 4)), cls=zarrpy.ReadOnlyError, watch=tmp_path)
    expect_error(lambda: zarrpy.open_array(LocalStore(root, read_only=True), mode="r+"), cls=zarrpy.ReadOnlyError,
                 watch=tmp_path)
    ro = zarrpy.open_array(LocalStore(root, read_only=True))
    expect_error(lambda: ro.__setitem__((0, 0), 5), cls=zarrpy.ReadOnlyError, watch=tmp_path)


# -- (d) chunks that decode to the wrong size --------------------------------------------


@pytest.mark.parametrize("nbytes", [0, 1, CHUNK_NBYTES - 2, CHUNK_NBYTES - 1, CHUNK_NBYTES + 1,
                                    CHUNK_NBYTES + 2, 2 * CHUNK_NBYTES, 100_000])
def test_uncompressed_chunk_of_wrong_size(root, tmp_path, nbytes):
    make_array(root, RAW)
    assert chunk_file(root, "c/1/0").stat().st_size == CHUNK_NBYTES
    chunk_file(root, "c/1/0").write_bytes(bytes(range(256)) * (nbytes // 256) + bytes(nbytes % 256))
    # A one-element read fetches bytes [0, 2) only: it fails when they are missing.
    read_all_ways(root, "c/1/0", tmp_path, small_read_checks=nbytes < 2)
    if nbytes < CHUNK_NBYTES:  # the chunk's last element is past a short chunk's end
        a = reopen(root)
        expect_error(lambda: a[7, 3], "c/1/0", watch=tmp_path)


@pytest.mark.parametrize("nbytes", [0, 2, CHUNK_NBYTES - 2, CHUNK_NBYTES + 2, 10 * CHUNK_NBYTES])
@pytest.mark.parametrize("codec", ["gzip", "zstd", "blosc", "zstd+crc32c"])
def test_compressed_chunk_of_wrong_decoded_size(root, tmp_path, codec, nbytes):
    import zstandard
    from numcodecs import blosc

    payload = bytes((i * 7) % 256 for i in range(nbytes))
    if codec == "gzip":
        make_array(root, GZIP)
        c = zlib.compressobj(5, zlib.DEFLATED, 31)
        bad = c.compress(payload) + c.flush()
    elif codec == "zstd":
        make_array(root, ZSTD)
        bad = zstandard.ZstdCompressor().compress(payload)
    elif codec == "blosc":
        make_array(root, BLOSC)
        if nbytes:
            bad = blosc.compress(payload, b"lz4", 5, blosc.SHUFFLE, 2)
        else:
            # numcodecs refuses to compress nothing: hand-make the empty blosc1
            # frame (version 2, memcpyed, typesize 1, 0 bytes, 16-byte frame).
            bad = bytes([2, 1, 0x02, 1]) + (0).to_bytes(4, "little") * 2 + (16).to_bytes(4, "little")
    else:
        import google_crc32c

        make_array(root, ZSTD_CRC)
        z = zstandard.ZstdCompressor().compress(payload)
        bad = z + google_crc32c.value(bytes(z)).to_bytes(4, "little")
    chunk_file(root, "c/0/1").write_bytes(bad)
    read_all_ways(root, "c/0/1", tmp_path)


@pytest.mark.parametrize("codec", ["gzip", "zstd", "zstd-no-size"])
def test_decompression_bomb_is_refused_without_allocating(root, tmp_path, codec):
    """A tiny chunk that inflates to 512 MiB: refused, and memory stays bounded.

    Runs in a subprocess to measure its peak RSS (DESIGN: a decoder never
    allocates more than the chunk's expected size because a header said so).
    """
    make_array(root, GZIP if codec == "gzip" else ZSTD)
    target = chunk_file(root, "c/0/0")
    script = textwrap.dedent(
        f"""
        import resource, sys, zlib
        import zstandard, numpy as np
        import zarrpy
        from zarrpy.stores.local import LocalStore
        codec = {codec!r}
        total, piece = 512 << 20, b"\\0" * (1 << 20)
        if codec == "gzip":
            c = zlib.compressobj(9, zlib.DEFLATED, 31)
            bomb = b"".join(c.compress(piece) for _ in range(total >> 20)) + c.flush()
        else:
            size = total if codec == "zstd" else -1
            c = zstandard.ZstdCompressor(level=1, write_content_size=(codec == "zstd"))
            obj = c.compressobj(size=size)
            bomb = b"".join(obj.compress(piece) for _ in range(total >> 20)) + obj.flush()
        open({str(target)!r}, "wb").write(bomb)
        a = zarrpy.open_array(LocalStore({str(root)!r}))
        a[4:8, 0:4]  # warm up: imports, thread pool
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            a[...]
        except zarrpy.ChunkDecodeError as exc:
            assert "c/0/0" in str(exc), str(exc)
        else:
            sys.exit("the bomb was decoded")
        grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
        print(f"grew {{grown_mib:.1f}} MiB")
        assert grown_mib < 64, grown_mib
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_blosc_header_claiming_huge_size(root, tmp_path):
    from numcodecs import blosc

    make_array(root, BLOSC)
    frame = bytearray(blosc.compress(bytes(CHUNK_NBYTES), b"lz4", 5, blosc.SHUFFLE, 2))
    frame[4:8] = (1 << 31).to_bytes(4, "little")  # nbytes
    chunk_file(root, "c/0/0").write_bytes(bytes(frame))
    read_all_ways(root, "c/0/0", tmp_path)


# -- (e) corrupt compressed chunks --------------------------------------------------------


def _truncations(good: bytes) -> list[bytes]:
    return [good[:1], good[: len(good) // 2], good[:-1], good[:-4], good[1:]]


def _garbage(n: int, seed: int) -> bytes:
    rnd = random.Random(seed)
    return bytes(rnd.randrange(256) for _ in range(n))


@pytest.mark.parametrize("codec", ["gzip", "zstd", "zstd-checksum", "blosc"])
@pytest.mark.parametrize("how", ["truncate", "magic", "garbage", "appended-garbage"])
def test_corrupt_compressed_chunk(root, tmp_path, codec, how):
    chain = {"gzip": GZIP, "zstd": ZSTD, "zstd-checksum": ZSTD_CHECKSUM, "blosc": BLOSC}[codec]
    make_array(root, chain)
    f = chunk_file(root, "c/1/1")
    good = f.read_bytes()
    if how == "truncate":
        variants = _truncations(good)
    elif how == "magic":
        variants = [bytes([good[0] ^ 0xFF]) + good[1:], good[:1] + bytes([good[1] ^ 0x5A]) + good[2:]]
        if codec == "blosc":  # byte 0 is the format version, 3 the typesize: flip the sizes instead
            variants = [good[:4] + bytes([good[4] ^ 0x01]) + good[5:], good[:12] + bytes([good[12] ^ 0x40]) + good[13:]]
    elif how == "garbage":
        variants = [_garbage(n, seed) for seed, n in enumerate((4, 16, len(good), 200))]
    else:
        variants = [good + b"\x01garbage", good + _garbage(64, 1)]
    for bad in variants:
        f.write_bytes(bad)
        read_all_ways(root, "c/1/1", tmp_path)


@pytest.mark.parametrize("codec", ["gzip", "zstd-checksum", "zstd+crc32c", "gzip+crc32c", "blosc+crc32c"])
def test_every_single_byte_flip_is_detected(root, tmp_path, codec):
    """With an integrity check in the chain, no single-byte corruption reads as data.

    A flip must either raise a ChunkDecodeError naming the key, or (for bytes
    that do not matter, e.g. the gzip header's MTIME) read back the original data.
    """
    chain = {"gzip": GZIP, "zstd-checksum": ZSTD_CHECKSUM, "zstd+crc32c": ZSTD_CRC,
             "gzip+crc32c": [*GZIP, *CRC], "blosc+crc32c": [*BLOSC, *CRC]}[codec]
    _, data = make_array(root, chain)
    f = chunk_file(root, "c/0/1")
    good = f.read_bytes()
    expected = data[0:4, 4:8]
    a = reopen(root)
    before = snapshot(tmp_path)
    for i in range(len(good)):
        for mask in (0x01, 0x80):
            bad = bytearray(good)
            bad[i] ^= mask
            f.write_bytes(bytes(bad))
            before = snapshot(tmp_path)
            result, err = bounded(lambda: a[0:4, 4:8])
            if err is None:
                np.testing.assert_array_equal(result, expected, err_msg=f"flip at byte {i} mask {mask:#x} read silently")
            else:
                assert isinstance(err, zarrpy.ChunkDecodeError), f"byte {i}: {type(err).__name__}: {err}"
                assert "c/0/1" in str(err)
            assert_unchanged(before, snapshot(tmp_path))


@pytest.mark.parametrize("codec", ["zstd", "blosc"])
def test_random_corruption_never_escapes_as_another_error(root, tmp_path, codec):
    """Without a checksum, corruption may read as other data, but never as another exception."""
    make_array(root, ZSTD if codec == "zstd" else BLOSC)
    f = chunk_file(root, "c/0/0")
    good = f.read_bytes()
    a = reopen(root)
    rnd = random.Random(1234)
    for _ in range(150):
        bad = bytearray(good)
        for _ in range(rnd.randint(1, 4)):
            bad[rnd.randrange(len(bad))] = rnd.randrange(256)
        if rnd.random() < 0.3:
            bad = bad[: rnd.randrange(len(bad))]
        f.write_bytes(bytes(bad))
        result, err = bounded(lambda: a[...])
        if err is not None:
            assert isinstance(err, zarrpy.ChunkDecodeError), f"{type(err).__name__}: {err}"
            assert "c/0/0" in str(err)
        else:
            assert result.shape == SHAPE and result.dtype == np.dtype(DTYPE)


# -- (f) crc32c mismatch ------------------------------------------------------------------


@pytest.mark.parametrize("where", ["first", "middle", "last-data", "checksum", "every"])
def test_crc32c_mismatch(root, tmp_path, where):
    make_array(root, CRC)
    f = chunk_file(root, "c/0/0")
    good = f.read_bytes()
    assert len(good) == CHUNK_NBYTES + 4
    positions = {"first": [0], "middle": [CHUNK_NBYTES // 2], "last-data": [CHUNK_NBYTES - 1],
                 "checksum": [CHUNK_NBYTES, CHUNK_NBYTES + 3], "every": list(range(len(good)))}[where]
    for i in positions:
        bad = bytearray(good)
        bad[i] ^= 0x10
        f.write_bytes(bytes(bad))
        read_all_ways(root, "c/0/0", tmp_path, cls=zarrpy.ChecksumError)


def test_crc32c_after_compressor_mismatch(root, tmp_path):
    make_array(root, ZSTD_CRC)
    f = chunk_file(root, "c/1/0")
    good = bytearray(f.read_bytes())
    good[len(good) // 2] ^= 0x01
    f.write_bytes(bytes(good))
    read_all_ways(root, "c/1/0", tmp_path, cls=zarrpy.ChecksumError)


@pytest.mark.parametrize("nbytes", [0, 1, 3])
def test_crc32c_chunk_too_short(root, tmp_path, nbytes):
    make_array(root, CRC)
    chunk_file(root, "c/0/0").write_bytes(b"\x01" * nbytes)
    read_all_ways(root, "c/0/0", tmp_path)


def test_crc32c_valid_but_wrong_size(root, tmp_path):
    import google_crc32c

    make_array(root, CRC)
    payload = bytes(CHUNK_NBYTES - 2)
    chunk_file(root, "c/0/0").write_bytes(payload + google_crc32c.value(bytes(payload)).to_bytes(4, "little"))
    read_all_ways(root, "c/0/0", tmp_path)


# -- keys follow the chunk key encoding in messages --------------------------------------


@pytest.mark.parametrize(
    "encoding, key",
    [({"name": "default", "configuration": {"separator": "."}}, "c.1.0"),
     ({"name": "v2", "configuration": {"separator": "."}}, "1.0"),
     ({"name": "v2", "configuration": {"separator": "/"}}, "1/0")],
)
def test_error_names_key_of_other_encodings(root, tmp_path, encoding, key):
    make_array(root, CRC, path="deep/arr", chunk_key_encoding=encoding)
    f = root / "deep" / "arr" / key.replace("/", os.sep)
    assert f.is_file()
    f.write_bytes(f.read_bytes()[:-1] + b"\x00")
    a = zarrpy.open_array(LocalStore(root), path="deep/arr")
    expect_error(lambda: a[...], f"deep/arr/{key}", cls=zarrpy.ChunkDecodeError, watch=tmp_path)


def test_error_is_not_masked_by_good_chunks_in_large_read(root, tmp_path):
    """One bad chunk among many (more than one store batch) still fails the read."""
    store = LocalStore(root)
    a = zarrpy.create_array(store, shape=(600,), dtype="uint8", chunks=(1,), compressors=CRC)
    a[...] = np.arange(600) % 251 + 1
    f = root / "c" / "457"
    f.write_bytes(b"\x00" + f.read_bytes()[1:])
    expect_error(lambda: a[...], "c/457", cls=zarrpy.ChecksumError, watch=tmp_path)
    expect_error(lambda: a[1::3], "c/457", cls=zarrpy.ChecksumError, watch=tmp_path)


# -- more failed creates and writes ---------------------------------------------------


@pytest.mark.parametrize("fill", [[1, 2, 3], [1], [300, 1], 5, "not base64!"], ids=repr)
def test_bad_raw_fill_on_create(root, tmp_path, fill):
    expect_error(lambda: zarrpy.create_array(LocalStore(root), shape=(4,), dtype="V2", chunks=(2,), fill_value=fill),
                 "fill_value", cls=zarrpy.MetadataError, watch=tmp_path)


@pytest.mark.parametrize("how", ["create_group-overwrite", "open_group-w", "open_array-w", "group-child"])
def test_unserialisable_attributes_other_entry_points(root, tmp_path, how):
    _, data = make_array(root, path="x")
    bad = {"bad": object()}
    store = LocalStore(root)
    calls = {
        "create_group-overwrite": lambda: zarrpy.create_group(store, path="x", attributes=bad, overwrite=True),
        "open_group-w": lambda: zarrpy.open_group(store, path="x", mode="w", attributes=bad),
        "open_array-w": lambda: zarrpy.open_array(store, path="x", mode="w", shape=(4,), dtype="uint8",
                                                  chunks=(2,), attributes=bad),
        "group-child": lambda: zarrpy.open_group(store, mode="a").create_group("y/z", attributes=bad),
    }
    expect_error(calls[how], "attributes", watch=tmp_path)
    np.testing.assert_array_equal(reopen(root, path="x")[...], data)


@pytest.mark.parametrize(
    "data",
    [np.ones((3, 3)), np.full(SHAPE, "abc"), [[{"a": 1}] * 8] * 8],
    ids=["wrong-shape", "strings", "objects"],
)
@pytest.mark.parametrize("overwrite", [False, True])
def test_create_with_incompatible_data_writes_nothing(root, tmp_path, data, overwrite):
    if overwrite:
        _, old = make_array(root)
    call = _create(root, overwrite=overwrite, data=data)
    before = snapshot(tmp_path)
    _, err = bounded(call)
    assert err is not None, "create_array with incompatible data succeeded"
    assert isinstance(err, (zarrpy.ZarrpyError, TypeError)), f"{type(err).__name__}: {err}"
    assert_unchanged(before, snapshot(tmp_path))


@pytest.mark.parametrize(
    "value",
    [np.full((1, 8), "abc"), np.ones((2, 7)), np.ones((8,))],
    ids=["strings", "wrong-shape", "wrong-ndim"],
)
def test_failed_append_writes_nothing(root, tmp_path, value):
    a, data = make_array(root, ZSTD)
    before = snapshot(tmp_path)
    _, err = bounded(lambda: a.append(value))
    assert err is not None, "append of an incompatible value succeeded"
    assert isinstance(err, (zarrpy.ZarrpyError, TypeError)), f"{type(err).__name__}: {err}"
    assert_unchanged(before, snapshot(tmp_path))
    again = reopen(root)
    assert again.shape == SHAPE
    assert a.shape == SHAPE
    np.testing.assert_array_equal(again[...], data)
