"""``zarrpy verify``: find what interrupted writers left in a directory store.

A writer killed mid-write (SIGKILL, power loss) leaves its temporary file
(``.zarrpy-tmp-…``) next to the chunk it was replacing; the chunk itself
holds the old value or the new one, never a mix. Such files are never read
as data, and the next write into their directory removes them, but a store
that is no longer written keeps them. :func:`check_temp_files` lists them and,
asked to, removes the stale ones. A temporary file of a writer that may still
be running is reported and kept.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..stores import LocalStore, Store, store_from_url


@dataclass
class TempFileReport:
    """Temporary files found under a store's root (paths relative to it)."""

    root: str
    stale: list[str] = field(default_factory=list)
    """Left by writers that are gone (still there unless ``removed``)."""
    live: list[str] = field(default_factory=list)
    """Of writers that may still be running: kept."""
    removed: list[str] = field(default_factory=list)
    stale_nbytes: int = 0

    @property
    def ok(self) -> bool:
        """True when no stale temporary file remains."""
        return len(self.removed) == len(self.stale)


def _local_store(target: str | Store) -> LocalStore:
    store = target if isinstance(target, Store) else store_from_url(target, read_only=True)
    if not isinstance(store, LocalStore):
        raise TypeError(
            f"verify looks for temporary files in directory stores; {store.display_name!r} is a "
            f"{type(store).__name__}, which writes none"
        )
    if not store.root.is_dir():
        raise FileNotFoundError(f"no store directory at {store.display_name!r}")
    return store


def check_temp_files(target: str | Store, clean: bool = False) -> TempFileReport:
    """Report the temporary files under the directory store ``target``;
    with ``clean``, remove the stale ones."""
    store = _local_store(target)
    root = os.fspath(store.root)
    report = TempFileReport(root)
    for path, stale in store.temp_files():
        rel = os.path.relpath(path, root)
        if not stale:
            report.live.append(rel)
            continue
        report.stale.append(rel)
        try:
            report.stale_nbytes += os.lstat(path).st_size
        except FileNotFoundError:
            pass
    if clean and report.stale:
        removed = {os.path.relpath(p, root) for p in store.remove_stale_temp_files()}
        report.removed = [rel for rel in report.stale if rel in removed or not os.path.lexists(os.path.join(root, rel))]
    return report


__all__ = ["TempFileReport", "check_temp_files"]
