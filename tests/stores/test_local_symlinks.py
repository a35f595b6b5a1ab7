"""LocalStore keeps every read, write, delete and listing inside its root,
symbolic links included, unless ``follow_symlinks=True`` (issue 13)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from zarrpy.core.byte_range import RangeRequest
from zarrpy.errors import InvalidKeyError, StoreError
from zarrpy.stores import LocalStore, _confine

from .contract import read_through_open_reader, read_through_scratch

SECRET = b"outside the store"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """``(root, outside)``: a store with a file and a directory link out of it,
    a chain of links out, and links that stay inside."""
    root, outside = tmp_path / "store", tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret").write_bytes(SECRET)
    (outside / "dir" / "secret").write_bytes(SECRET)
    (root / "real").mkdir(parents=True)
    (root / "real" / "k").write_bytes(b"inside")
    (root / "leak").symlink_to(outside / "secret")  # file link out
    (root / "evil").symlink_to(outside / "dir")  # directory link out
    (root / "hop1").symlink_to("hop2")  # chain: hop1 -> hop2 -> ../outside/dir
    (root / "hop2").symlink_to(Path("..") / "outside" / "dir")
    (root / "alias").symlink_to("real")  # stays inside (relative)
    (root / "alias-abs").symlink_to(root / "real")  # stays inside (absolute)
    (root / "real" / "k-link").symlink_to(root / "real" / "k")  # file link inside
    return root, outside


ESCAPING_KEYS = ["leak", "evil/secret", "evil/new", "evil/sub/new", "hop1/secret", "hop2/secret", "hop1/new"]


def _outside_untouched(outside: Path) -> None:
    assert sorted(str(p.relative_to(outside)) for p in outside.rglob("*")) == ["dir", "dir/secret", "secret"]
    assert (outside / "secret").read_bytes() == SECRET
    assert (outside / "dir" / "secret").read_bytes() == SECRET


@pytest.mark.parametrize("key", ESCAPING_KEYS)
@pytest.mark.parametrize(
    "operation",
    [
        lambda s, k: s.get(k),
        lambda s, k: s.get(k, RangeRequest(0, 4)),
        lambda s, k: s.get_partial_values([("real/k", None), (k, None)]),
        lambda s, k: s.exists(k),
        lambda s, k: s.getsize(k),
        read_through_open_reader,
        read_through_scratch,
        lambda s, k: s.set(k, b"overwritten"),
        lambda s, k: s.delete(k),
    ],
    ids=["get", "get-range", "get_partial_values", "exists", "getsize", "open_reader", "get_scratch", "set", "delete"],
)
def test_keys_leading_out_are_refused(
    layout: tuple[Path, Path], key: str, operation: Callable[[LocalStore, str], object]
) -> None:
    root, outside = layout
    store = LocalStore(root)
    with pytest.raises(InvalidKeyError, match=f"{key!r}.*outside the store root") as info:
        operation(store, key)
    assert isinstance(info.value, StoreError) and info.value.key == key
    _outside_untouched(outside)
    assert (root / "leak").is_symlink() and (root / "evil").is_symlink()


def test_listings_leave_out_links_that_lead_out(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    store = LocalStore(root)
    inside = ["alias-abs/k", "alias-abs/k-link", "alias/k", "alias/k-link", "real/k", "real/k-link"]
    assert sorted(store.list()) == inside
    assert sorted(store.list_prefix("a")) == inside[:4]
    assert sorted(k for k, _ in store.list_prefix_with_sizes("")) == inside
    assert sorted(store.list_dir("")) == ["alias", "alias-abs", "real"]
    assert sorted(store.list_dir("alias")) == ["k", "k-link"]
    for prefix in ("evil/", "hop1/", "evil/d"):
        with pytest.raises(InvalidKeyError, match="outside the store root"):
            list(store.list_prefix(prefix))
    for prefix in ("evil", "hop1"):
        with pytest.raises(InvalidKeyError, match="outside the store root"):
            list(store.list_dir(prefix))


def test_links_that_stay_inside_work(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    store = LocalStore(root)
    assert store.get("alias/k") == b"inside" and store.get("alias-abs/k") == b"inside"
    assert store.get("real/k-link") == b"inside"
    store.set("alias/new", b"n")
    assert (root / "real" / "new").read_bytes() == b"n"
    store.delete("alias/new")
    assert not (root / "real" / "new").exists()
    store.set("real/k-link", b"replaced")  # the link itself is replaced, never written through
    assert not (root / "real" / "k-link").is_symlink()
    assert (root / "real" / "k").read_bytes() == b"inside"


def test_listing_does_not_loop(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "k").write_bytes(b"1")
    (root / "self").symlink_to(".")
    (root / "a" / "b" / "up").symlink_to("../..")
    (root / "a" / "sideways").symlink_to("b")
    (root / "knot").symlink_to("knot")  # ELOOP
    store = LocalStore(root)
    assert sorted(store.list()) == ["a/b/k", "a/sideways/k"]
    with pytest.raises(StoreError, match="'knot'"):
        store.get("knot")


def test_opt_in_follows_links_out(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    store = LocalStore(root, follow_symlinks=True)
    assert store.get("leak") == SECRET and store.get("hop1/secret") == SECRET
    assert "evil/secret" in set(store.list())
    store.set("evil/new", b"n")
    assert (outside / "dir" / "new").read_bytes() == b"n"
    assert "follow_symlinks=True" in repr(store)


def test_a_root_that_is_a_link_is_resolved_once(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    store = LocalStore(link)
    store.set("a/k", b"v")
    (real / "back").symlink_to(link / "a")  # into the root, spelled through the root's link
    assert store.get("back/k") == b"v"
    assert sorted(store.list()) == ["a/k", "back/k"]
    assert store.root == real and store.display_name == str(link)
    # Retargeting the link later does not move the store.
    other = tmp_path / "other"
    other.mkdir()
    link.unlink()
    link.symlink_to(other)
    assert store.get("a/k") == b"v"


def test_issue_repro_array_write_through_a_directory_link(tmp_path: Path) -> None:
    """The probe's case: a group member that is a link to an array elsewhere."""
    victim = zarrpy.create_array(str(tmp_path / "victim.zarr"), shape=(4,), dtype="int32", chunks=(2,))
    victim[...] = 1
    root = tmp_path / "store.zarr"
    zarrpy.open_group(str(root), mode="w")
    (root / "evil").symlink_to(tmp_path / "victim.zarr")
    with pytest.raises(InvalidKeyError, match="evil"):
        zarrpy.open_group(LocalStore(root), mode="r+")["evil"][...] = 9
    assert np.array_equal(zarrpy.open_array(str(tmp_path / "victim.zarr"))[...], [1, 1, 1, 1])
    # Opting in is the old behaviour.
    zarrpy.open_group(LocalStore(root, follow_symlinks=True), mode="r+")["evil"][...] = 9
    assert np.array_equal(zarrpy.open_array(str(tmp_path / "victim.zarr"))[...], [9, 9, 9, 9])


@pytest.mark.skipif(not _confine.Confined("/").can_check_fds, reason="no way to ask an fd's path here")
def test_a_link_swapped_in_after_the_check_is_caught(
    layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """TOCTOU: the check before opening passes (as if the link appeared just
    after it); the check of the opened descriptor still refuses."""
    root, outside = layout
    store = LocalStore(root)
    monkeypatch.setattr(_confine.Confined, "resolves_inside", lambda self, parts: True)
    for call in (
        lambda: store.get("leak"),
        lambda: store.get("evil/secret"),
        lambda: store.set("evil/secret", b"x"),
        lambda: store.set("evil/new", b"x"),
        lambda: store.delete("evil/secret"),
    ):
        with pytest.raises(InvalidKeyError, match="outside the store root"):
            call()
    _outside_untouched(outside)
    assert not any(p.name.startswith(".zarrpy-tmp-") for p in outside.rglob("*"))


def test_the_fd_path_is_the_real_path(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"")
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:
        path = _confine.fd_path(fd)
    finally:
        os.close(fd)
    assert path is None or path == os.path.realpath(tmp_path / "f")
