"""Error messages name what the user passed: the store (path, URL or a
description) and the node path inside it; read-only errors say how to write."""

import pickle
import uuid
from pathlib import Path

import pytest

import zarrpy
from zarrpy.errors import MetadataError, NodeExistsError, NodeNotFoundError, ReadOnlyError
from zarrpy.stores import FsspecStore, LocalStore, MemoryStore


def memory_url() -> str:
    """A fresh fsspec ``memory://`` URL (the memory filesystem is process-global)."""
    return f"memory://errors-{uuid.uuid4().hex}/x.zarr"


@pytest.fixture(params=["local", "memory-store", "fsspec-memory"])
def store_like(request, tmp_path, monkeypatch):
    """``(what the user passes, how messages must name it)`` for each kind of store."""
    if request.param == "local":
        monkeypatch.chdir(tmp_path)
        return "data/x.zarr", "'data/x.zarr'"  # relative, as given: not made absolute
    if request.param == "memory-store":
        return {}, "'<MemoryStore>'"
    url = memory_url()
    return url, repr(url)


def test_display_names():
    assert LocalStore("rel/x.zarr").display_name == "rel/x.zarr"
    assert LocalStore(Path("rel") / "x.zarr").display_name == "rel/x.zarr"
    assert LocalStore("/abs/x.zarr").display_name == "/abs/x.zarr"
    assert MemoryStore().display_name == "<MemoryStore>"
    url = memory_url()
    assert FsspecStore.from_url(url).display_name == url
    assert pickle.loads(pickle.dumps(LocalStore("rel/x.zarr"))).display_name == "rel/x.zarr"


def test_missing_node_names_the_store_and_the_node_path(store_like):
    store, shown = store_like
    with pytest.raises(NodeNotFoundError) as info:
        zarrpy.open_array(store)
    assert str(info.value) == f"no array or group at {shown} (node path '/'): no zarr.json, .zarray or .zgroup there"
    with pytest.raises(NodeNotFoundError, match="node path '/a/b'") as info:
        zarrpy.open(store, mode="r", path="a/b")
    assert shown in str(info.value)


def test_missing_node_in_the_users_relative_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NodeNotFoundError) as info:
        zarrpy.open_array("nope.zarr")
    message = str(info.value)
    assert message.startswith("no array or group at 'nope.zarr' (node path '/')")
    assert str(tmp_path) not in message


def test_array_opened_read_only_says_how_to_write(store_like):
    store, shown = store_like
    zarrpy.create_array(store, shape=(4,), dtype="int8", chunks=(2,))
    a = zarrpy.open_array(store)  # mode='r' by default
    for write in (lambda: a.__setitem__(slice(None), 1), lambda: a.attrs.__setitem__("k", 1),
                  lambda: a.resize((8,))):
        with pytest.raises(ReadOnlyError) as info:
            write()
        message = str(info.value)
        assert message.startswith(f"array '/' in {shown} is read-only: ")
        assert "mode='r'" in message and "mode='r+'" in message
    zarrpy.open_array(store, mode="r+")[:] = 3  # the advice works
    assert zarrpy.open_array(store)[:].tolist() == [3, 3, 3, 3]


def test_group_opened_read_only_says_how_to_write(store_like):
    store, shown = store_like
    zarrpy.open_group(store, mode="w").create_group("sub")
    sub = zarrpy.open_group(store, mode="r")["sub"]
    with pytest.raises(ReadOnlyError, match=r"mode='r\+'") as info:
        sub.create_array("x", shape=(2,), dtype="int8")
    assert str(info.value).startswith(f"group '/sub' in {shown} is read-only")


def test_read_only_store_says_how_to_write(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for store, shown in ((LocalStore("ro.zarr", read_only=True), "'ro.zarr'"),
                         (MemoryStore(read_only=True), "'<MemoryStore>'"),
                         (FsspecStore.from_url(url := memory_url(), read_only=True), repr(url))):
        with pytest.raises(ReadOnlyError) as info:
            store.set("zarr.json", b"{}")
        message = str(info.value)
        assert message.startswith(f"cannot write 'zarr.json' to {shown}: the store is read-only")
        assert "read_only=True" in message and "mode='r+'" in message


def test_wrong_node_type_names_the_store(store_like):
    store, shown = store_like
    g = zarrpy.open_group(store, mode="w")
    g.create_array("arr", shape=(2,), dtype="int8")
    with pytest.raises(NodeNotFoundError) as info:
        zarrpy.open_array(store)
    assert str(info.value) == f"{shown} (node path '/') holds a group, not an array; use zarrpy.open_group"
    with pytest.raises(NodeNotFoundError) as info:
        zarrpy.open_group(store, path="arr", mode="r")
    assert str(info.value) == f"{shown} (node path '/arr') holds an array, not a group; use zarrpy.open_array"
    with pytest.raises(NodeExistsError) as info:
        g.require_group("arr")
    assert str(info.value) == f"{shown} (node path '/arr') is an array, not a group"


def test_creating_over_a_node_names_the_store(store_like):
    store, shown = store_like
    zarrpy.create_array(store, shape=(2,), dtype="int8", name="a")
    with pytest.raises(NodeExistsError) as info:
        zarrpy.create_array(store, shape=(2,), dtype="int8", name="a")
    assert str(info.value).startswith(f"a node already exists at {shown} (node path '/a'); ")
    assert "overwrite=True" in str(info.value)
    with pytest.raises(NodeExistsError) as info:
        zarrpy.create_array(store, shape=(2,), dtype="int8", name="a/inside")
    assert str(info.value) == f"cannot create a node at {shown} (node path '/a/inside'): '/a' is an array"


def test_invalid_metadata_names_the_store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("bad.zarr/sub").mkdir(parents=True)
    Path("bad.zarr/sub/zarr.json").write_bytes(b"{not json")
    with pytest.raises(MetadataError) as info:
        zarrpy.open("bad.zarr", mode="r", path="sub")
    message = str(info.value)
    assert message.startswith("invalid metadata at 'bad.zarr' (node path '/sub'): ")
    assert "'sub/zarr.json'" in message and "not valid JSON" in message


def test_missing_consolidated_metadata_names_the_store(store_like):
    store, shown = store_like
    zarrpy.open_group(store, mode="w")
    with pytest.raises(MetadataError) as info:
        zarrpy.open_group(store, mode="r", use_consolidated=True)
    assert str(info.value).startswith(f"group {shown} (node path '/') has no consolidated metadata")


def test_read_only_store_explains_its_own_remedy(tmp_path):
    """A node in a zip opened read-only points to ZipStore(mode='a'), not to mode='r+'."""
    from zarrpy.stores import ZipStore

    path = tmp_path / "x.zip"
    with ZipStore(path, mode="w") as store:
        zarrpy.create_array(store, shape=(3,), dtype="i4")[:] = 1
    for array in (zarrpy.open_array(str(path)), zarrpy.open_array(ZipStore(path, mode="r"))):
        with pytest.raises(zarrpy.ReadOnlyError, match=r"ZipStore\(path, mode='a'\)") as info:
            array[0] = 2
        assert "r+" not in str(info.value)
        assert list(array[...]) == [1, 1, 1]


def test_migrate_and_consolidate_name_the_store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(zarrpy.NodeNotFoundError, match=r"'nope\.zarr' \(node path '/'\)"):
        zarrpy.migrate_v3("nope.zarr")
    zarrpy.create_group("g.zarr")
    group = zarrpy.open_group("g.zarr", mode="r")
    with pytest.raises(zarrpy.ReadOnlyError, match=r"'g\.zarr' \(node path '/'\).*mode='r\+'"):
        zarrpy.consolidate_metadata(group)
    with pytest.raises(zarrpy.ReadOnlyError, match=r"'g\.zarr' \(node path '/'\).*mode='r\+'"):
        zarrpy.migrate_v3(group)


def test_zip_store_is_named_as_given(tmp_path, monkeypatch):
    from zarrpy.stores import ZipStore

    monkeypatch.chdir(tmp_path)
    with ZipStore("x.zip", mode="w") as store:
        zarrpy.create_group(store)
    with pytest.raises(zarrpy.NodeNotFoundError, match=r"'x\.zip' \(node path '/a'\)"):
        zarrpy.open_array(ZipStore("x.zip"), path="a")
