"""The ``zarrpy`` command.

``zarrpy demo [DIR]``, ``zarrpy info PATH_OR_URL``, ``zarrpy migrate PATH_OR_URL
[--remove-v2]`` (V2 -> V3 metadata, chunks untouched) and ``zarrpy consolidate
PATH_OR_URL`` (write consolidated metadata).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from . import api
from ._array import Array
from .errors import ZarrpyError


def _demo(directory: str | None) -> int:
    """Create, write, read back and describe a small compressed array."""
    with tempfile.TemporaryDirectory(prefix="zarrpy-demo-") as tmp:
        root = Path(directory) if directory else Path(tmp)
        path = root / "demo.zarr"
        print(f"creating {path}")
        arr = api.create_array(
            str(path), shape=(1000, 1000), dtype="uint16", chunks=(250, 250),
            compressors=[{"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
            fill_value=0, attributes={"units": "counts", "description": "zarrpy demo"},
            dimension_names=["y", "x"], overwrite=True,
        )
        yy, xx = np.mgrid[0:1000, 0:1000]
        data = ((np.sin(yy / 50.0) + np.cos(xx / 70.0) + 2) * 100).astype("uint16")
        arr[:, :] = data
        arr[100:200, 300:400] = 7
        data[100:200, 300:400] = 7
        back = api.open_array(str(path), mode="r")
        full = back[...]
        region = back[123:456, ::50]
        ok = np.array_equal(full, data) and np.array_equal(region, data[123:456, ::50])
        stored = back.nbytes_stored()
        print(f"wrote {data.nbytes:,} bytes ({stored:,} stored, {data.nbytes / stored:.1f}x smaller); "
              f"read back {'identical' if ok else 'DIFFERENT'}")
        print(back.info)
        if directory is None:
            print("(temporary directory removed; pass a directory to keep the array)")
        return 0 if ok else 1


def _info(target: str, path: str | None) -> int:
    node = api.open(target, mode="r", path=path)
    if isinstance(node, Array):
        print(node.info)
    else:
        print(f"group {node.name} attributes={dict(node.attrs)}")
        print(node.tree())
    return 0


def _migrate(target: str, path: str | None, remove_v2: bool) -> int:
    from .migrate import migrate_v3

    result = migrate_v3(target, path=path, remove_v2=remove_v2)
    print(f"wrote zarr.json for {len(result.written)} node(s)"
          + (f", {len(result.unchanged)} already migrated" if result.unchanged else "")
          + (f"; removed {len(result.removed)} V2 metadata document(s)" if remove_v2 else "")
          + "; no chunk was read or rewritten")
    for node_path in result.written:
        print(f"  /{node_path}")
    return 0


def _consolidate(target: str, path: str | None) -> int:
    from .consolidated import consolidate_metadata

    group = consolidate_metadata(target, path=path)
    where = "zarr.json (consolidated_metadata)" if group.zarr_format == 3 else ".zmetadata"
    print(f"consolidated {len(group.consolidated_metadata or ())} node(s) into {group.name} {where}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="zarrpy", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="create, write, read back and describe a small array")
    demo.add_argument("directory", nargs="?", help="where to keep demo.zarr (default: a temporary directory)")
    info = sub.add_parser("info", help="describe the array or group at a path or URL")
    info.add_argument("target", help="a directory, or an fsspec URL such as s3://bucket/x.zarr")
    info.add_argument("--path", help="node path inside the store")
    migrate = sub.add_parser(
        "migrate", help="write Zarr V3 metadata for every V2 array and group (chunks are not touched)")
    migrate.add_argument("target", help="a directory, or an fsspec URL")
    migrate.add_argument("--path", help="node path inside the store (default: the root)")
    migrate.add_argument("--remove-v2", action="store_true",
                         help="delete .zarray/.zgroup/.zattrs/.zmetadata once all zarr.json are written")
    consolidate = sub.add_parser("consolidate", help="write consolidated metadata for a group's hierarchy")
    consolidate.add_argument("target", help="a directory, or an fsspec URL")
    consolidate.add_argument("--path", help="group path inside the store (default: the root)")
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return _demo(args.directory)
        if args.command == "migrate":
            return _migrate(args.target, args.path, args.remove_v2)
        if args.command == "consolidate":
            return _consolidate(args.target, args.path)
        return _info(args.target, args.path)
    except ZarrpyError as exc:
        print(f"zarrpy: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
