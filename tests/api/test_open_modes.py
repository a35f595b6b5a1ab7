"""A writing mode on a read-only store is refused at open (as zarr-python
does), naming the store and the mode, instead of returning a read-only node
whose first write then advises the mode that was passed."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import zarr

import zarrpy
from zarrpy.errors import ReadOnlyError
from zarrpy.stores import LocalStore, MemoryStore, ZipStore

WRITING_MODES = ("r+", "a", "w", "w-")


@pytest.fixture
def hierarchy(tmp_path: Path) -> Path:
    """A directory holding an array ``a`` and a group ``g``, plus a zip ``z.zip`` of a group."""
    zarrpy.create_array(tmp_path / "a", shape=(3,), dtype="int32", fill_value=7)
    zarrpy.create_group(tmp_path / "g", attributes={"k": 1})
    with ZipStore(tmp_path / "z.zip", mode="w") as zs:
        zarrpy.create_group(zs, attributes={"k": 1})
    return tmp_path


def _unchanged(root: Path) -> None:
    """A refused open wrote nothing."""
    assert zarrpy.open_array(root / "a")[...].tolist() == [7, 7, 7]
    assert zarrpy.open_group(root / "g", mode="r").attrs.asdict() == {"k": 1}
    assert zarrpy.open_group(root / "z.zip", mode="r").attrs.asdict() == {"k": 1}


OPENERS: dict[str, Callable[..., Any]] = {
    "open": lambda store, mode: zarrpy.open(store, mode=mode),
    "open_array": lambda store, mode: zarrpy.open_array(store, mode=mode, shape=(3,), dtype="int32"),
    "open_group": lambda store, mode: zarrpy.open_group(store, mode=mode),
}


@pytest.mark.parametrize("mode", WRITING_MODES)
@pytest.mark.parametrize("opener", sorted(OPENERS))
@pytest.mark.parametrize("node", ["a", "g"])
def test_writing_mode_on_a_read_only_local_store_is_refused(hierarchy: Path, opener: str, mode: str,
                                                            node: str) -> None:
    store = LocalStore(hierarchy / node, read_only=True)
    with pytest.raises(ReadOnlyError) as info:
        OPENERS[opener](store, mode)
    message = str(info.value)
    assert message.startswith(f"cannot open {str(hierarchy / node)!r} with mode={mode!r}: the store is read-only")
    assert message.endswith("pass a writable store (not read_only=True), or open with mode='r' to read")
    _unchanged(hierarchy)


@pytest.mark.parametrize("mode", WRITING_MODES)
@pytest.mark.parametrize("opener", sorted(OPENERS))
def test_writing_mode_on_a_zip_given_by_path_is_refused(hierarchy: Path, opener: str, mode: str) -> None:
    with pytest.raises(ReadOnlyError, match=r"z\.zip' with mode=.*ZipStore\(path, mode='a'\)"):
        OPENERS[opener](str(hierarchy / "z.zip"), mode)
    _unchanged(hierarchy)


def test_a_read_only_memory_store_too() -> None:
    with pytest.raises(ReadOnlyError, match=r"'<MemoryStore>' with mode='r\+'"):
        zarrpy.open_group(MemoryStore(read_only=True), mode="r+")


def test_zip_store_opened_for_reading_refuses_a_writing_mode(hierarchy: Path) -> None:
    with pytest.raises(ReadOnlyError, match=r"mode='a'.*ZipStore\(path, mode='a'\)"):
        zarrpy.open_group(ZipStore(hierarchy / "z.zip", mode="r"), mode="a")


@pytest.mark.parametrize("create", [
    lambda s: zarrpy.create_array(s, shape=(2,), dtype="int8"),
    lambda s: zarrpy.create_array(s, shape=(2,), dtype="int8", overwrite=True),
    lambda s: zarrpy.create_group(s),
    lambda s: zarrpy.group(s),
    lambda s: zarrpy.group(s, overwrite=True),
    lambda s: zarrpy.zeros((2,), store=s),
    lambda s: zarrpy.array(np.arange(2), store=s),
    lambda s: zarrpy.from_array(s, data=np.arange(2)),
    lambda s: zarrpy.open_consolidated(s),
], ids=["create_array", "create_array-overwrite", "create_group", "group", "group-overwrite", "zeros",
        "array", "from_array", "open_consolidated"])
def test_creating_functions_refuse_a_read_only_store(hierarchy: Path, create: Callable[[Any], Any]) -> None:
    with pytest.raises(ReadOnlyError, match=r"with mode='(w|w-|a)': the store is read-only"):
        create(LocalStore(hierarchy / "g", read_only=True))
    _unchanged(hierarchy)


@pytest.mark.parametrize("node", ["a", "g"])
def test_mode_r_on_a_read_only_store_still_reads(hierarchy: Path, node: str) -> None:
    store = LocalStore(hierarchy / node, read_only=True)
    opened = zarrpy.open(store, mode="r")
    assert opened.read_only


@pytest.mark.parametrize("node", ["a", "g"])
def test_open_without_a_mode_reads_a_read_only_store(hierarchy: Path, node: str) -> None:
    """zarrpy.open's default mode is r on a read-only store, a otherwise, as zarr-python's."""
    node_obj = zarrpy.open(LocalStore(hierarchy / node, read_only=True))
    assert node_obj.read_only
    assert zarrpy.open(str(hierarchy / "z.zip")).read_only
    assert not zarrpy.open(hierarchy / node).read_only
    z_node = zarr.open(zarr.storage.LocalStore(hierarchy / node, read_only=True))
    assert z_node.read_only  # the oracle agrees


def test_zarr_python_refuses_the_same_opens(hierarchy: Path) -> None:
    """The oracle: zarr-python refuses these opens too (with a ValueError)."""
    store = zarr.storage.LocalStore(hierarchy / "a", read_only=True)
    with pytest.raises(ValueError, match="read-only"):
        zarr.open_array(store, mode="r+")
    with pytest.raises(ValueError, match="read-only"):
        zarr.open_group(zarr.storage.LocalStore(hierarchy / "g", read_only=True), mode="a")


def test_group_opened_read_only_does_not_advise_open_array(hierarchy: Path) -> None:
    g = zarrpy.open_group(hierarchy / "g", mode="r")
    for write in (lambda: g.attrs.__setitem__("x", 1), lambda: g.create_group("sub"),
                  lambda: g.create_array("x", shape=(1,), dtype="int8")):
        with pytest.raises(ReadOnlyError) as info:
            write()
        message = str(info.value)
        assert "open_array" not in message
        assert "open_group(..., mode='r+')" in message
    a = zarrpy.open_array(hierarchy / "a")
    with pytest.raises(ReadOnlyError, match=r"open_array\(\.\.\., mode='r\+'\)"):
        a[0] = 1
    _unchanged(hierarchy)
