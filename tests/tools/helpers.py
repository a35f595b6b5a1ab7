"""What the command-line tests share: snapshots of directory stores, and damaging a file."""

from __future__ import annotations

import os
from pathlib import Path


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file under ``root`` (relative path -> bytes), and every directory (-> None)."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root) + "/"] = None
        for name in filenames:
            path = os.path.join(dirpath, name)
            out[os.path.relpath(path, root)] = Path(path).read_bytes()
    return out


def flip_bytes(path: Path, offset: int, count: int = 2) -> None:
    """Invert ``count`` bytes of the file at ``offset`` (negative: from the end)."""
    data = bytearray(path.read_bytes())
    start = offset % len(data)
    for i in range(start, min(start + count, len(data))):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
