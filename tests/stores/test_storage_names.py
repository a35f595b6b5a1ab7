"""``zarrpy.storage``: zarr-python's ``zarr.storage`` names and constructor
keywords, so code written for zarr-python changes only its import; and the
store namespaces show only their own names."""

from __future__ import annotations

import inspect
import zipfile

import numpy as np
import pytest
import zarr.storage

import zarrpy
import zarrpy.storage
import zarrpy.stores

ZARR_PYTHON_NAMES = ("LocalStore", "MemoryStore", "ZipStore", "FsspecStore", "ObjectStore")


@pytest.mark.parametrize("name", ZARR_PYTHON_NAMES)
def test_zarr_python_store_names_are_zarrpys_own_classes(name):
    assert hasattr(zarr.storage, name)  # the oracle has the name
    assert getattr(zarrpy.storage, name) is getattr(zarrpy.stores, name)


def test_dir_lists_only_public_names():
    for module in (zarrpy.storage, zarrpy.stores):
        names = dir(module)
        assert names == sorted(module.__all__), module.__name__
        for leaked in ("os", "fsspec", "Any", "zipfile", "Mapping", "annotations", "local", "abc"):
            assert leaked not in names, f"{module.__name__} shows {leaked}"


def test_star_import_gives_all():
    namespace: dict[str, object] = {}
    exec("from zarrpy.storage import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(zarrpy.storage.__all__)


def test_zarr_python_code_runs_with_only_its_import_changed(tmp_path):
    """The same lines with ``zarr`` and with ``zarrpy`` give the same data."""
    data = np.arange(24, dtype="i4").reshape(6, 4)
    results = []
    for zarr_mod, storage in ((zarr, zarr.storage), (zarrpy, zarrpy.storage)):
        root = tmp_path / zarr_mod.__name__
        local = storage.LocalStore(root / "x.zarr", read_only=False)
        a = zarr_mod.create_array(local, shape=(6, 4), chunks=(3, 2), dtype="i4")
        a[:] = data
        mem = storage.MemoryStore(store_dict={})
        b = zarr_mod.create_array(mem, shape=(6, 4), chunks=(3, 2), dtype="i4")
        b[:] = data
        zs = storage.ZipStore(root / "x.zip", mode="w", read_only=False)
        c = zarr_mod.create_array(zs, shape=(6, 4), chunks=(3, 2), dtype="i4")
        c[:] = data
        zs.close()
        fs = storage.FsspecStore.from_url(
            f"file://{root}/f.zarr", storage_options={"auto_mkdir": True}, read_only=False
        )
        d = zarr_mod.create_array(fs, shape=(6, 4), chunks=(3, 2), dtype="i4")
        d[:] = data
        reread = (
            zarr_mod.open_array(storage.LocalStore(root / "x.zarr", read_only=True), mode="r")[:],
            zarr_mod.open_array(storage.ZipStore(root / "x.zip", mode="r"), mode="r")[:],
            zarr_mod.open_array(storage.ZipStore(root / "x.zip", read_only=True), mode="r")[:],
            zarr_mod.open_array(storage.FsspecStore.from_url(f"file://{root}/f.zarr"), mode="r")[:],
            b[:],
        )
        results.append(reread)
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(ours, data)


def test_memory_store_takes_store_dict_by_keyword():
    backing: dict[str, bytes] = {}
    zarrpy.create_array(zarrpy.storage.MemoryStore(store_dict=backing), shape=(2,), dtype="u1")
    assert "zarr.json" in backing
    with pytest.raises(zarrpy.ReadOnlyError):
        zarrpy.create_array(zarrpy.storage.MemoryStore(store_dict=backing, read_only=True), shape=(2,), dtype="u1",
                            overwrite=True)


@pytest.mark.parametrize(("mode", "read_only"), [("r", False), ("w", True), ("a", True), ("x", True)])
def test_zip_store_read_only_that_contradicts_the_mode_is_refused(tmp_path, mode, read_only):
    path = tmp_path / "z.zip"
    zipfile.ZipFile(path, "w").close()
    with pytest.raises(ValueError, match=rf"mode={mode!r}, read_only={read_only}"):
        zarrpy.storage.ZipStore(path, mode=mode, read_only=read_only)


def test_keyword_names_match_zarr_python():
    """Every keyword zarr-python's constructor takes that zarrpy's has too."""
    for name, cls_method in (("LocalStore", "__init__"), ("MemoryStore", "__init__"), ("ZipStore", "__init__"),
                             ("ObjectStore", "__init__"), ("FsspecStore", "from_url")):
        theirs = inspect.signature(getattr(getattr(zarr.storage, name), cls_method)).parameters
        ours = inspect.signature(getattr(getattr(zarrpy.storage, name), cls_method)).parameters
        missing = set(theirs) - set(ours) - {"self", "allowed_exceptions"}
        assert not missing, f"{name}.{cls_method} lacks {sorted(missing)}"
