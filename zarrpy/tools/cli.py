"""The zarrpy command line: demo, info, migrate, consolidate and verify.

Exit status: 0 on success, 1 when the command fails (one ``zarrpy: error:``
line on stderr; ``--traceback`` or ``ZARRPY_DEBUG=1`` shows the traceback
instead) or ``verify`` finds stale temporary files it was not asked to clean,
2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from .. import api
from ..api._array import Array
from ..api._group import Group
from ..errors import ZarrpyError

DESCRIPTION = """\
Create, inspect and convert Zarr (V2 and V3) arrays and groups.

PATH_OR_URL is a directory or an fsspec URL such as s3://bucket/x.zarr.
Run "zarrpy COMMAND --help" for the options of a command.
"""
EPILOG = "exit status: 0 done, 1 the command failed (one line on stderr), 2 bad usage"

EXPECTED_ERRORS = (ZarrpyError, OSError, ValueError, TypeError, KeyError, ImportError)
"""Failures the command reports in one line: bad input, missing or unreadable
data, a missing optional dependency. Anything else is a bug and keeps its traceback."""


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


def _json_default(value: Any) -> Any:
    """What ``json`` cannot serialise itself: numpy scalars and arrays, dtypes, bytes, sets."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return str(value)


def _info_document(node: Array | Group) -> dict[str, Any]:
    """The JSON ``zarrpy info --json`` prints: an array's info dict, or a
    group's name, format, attributes and every member below it."""
    if isinstance(node, Array):
        return {"node_type": "array", **node.info.as_dict()}
    members = []
    for rel, member in node.members(max_depth=None):
        entry: dict[str, Any] = {"path": rel, "node_type": "array" if isinstance(member, Array) else "group"}
        if isinstance(member, Array):
            entry.update(shape=member.shape, chunks=member.chunks, dtype=str(member.dtype))
        members.append(entry)
    return {"node_type": "group", "name": node.name, "zarr_format": node.zarr_format,
            "attributes": dict(node.attrs), "members": members}


def _info(target: str, path: str | None, as_json: bool) -> int:
    node = api.open(target, mode="r", path=path)
    if as_json:
        print(json.dumps(_info_document(node), indent=2, default=_json_default))
    elif isinstance(node, Array):
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
    from .. import consolidate_metadata

    group = consolidate_metadata(target, path=path)
    where = "zarr.json (consolidated_metadata)" if group.zarr_format == 3 else ".zmetadata"
    print(f"consolidated {len(group.consolidated_metadata or ())} node(s) into {group.name} {where}")
    return 0


def _verify(target: str, clean: bool) -> int:
    from .verify import check_temp_files

    report = check_temp_files(target, clean=clean)
    for rel in report.stale:
        print(f"{'removed' if rel in report.removed else 'stale'} temporary file: {rel}")
    for rel in report.live:
        print(f"in progress (kept): {rel}")
    count = f"{len(report.stale)} stale temporary file(s), {report.stale_nbytes:,} bytes"
    if not report.stale:
        print(f"{target}: no stale temporary files")
    elif report.ok:
        print(f"{target}: removed {count}")
    else:
        print(f'{target}: {count}; run "zarrpy verify --clean {target}" to remove them')
    return 0 if report.ok else 1


def _error_line(exc: BaseException) -> str:
    """One line for an expected failure: zarrpy's own messages as they are,
    other exceptions prefixed with their type (``FileNotFoundError: …``)."""
    text = str(exc.args[0]) if isinstance(exc, KeyError) and len(exc.args) == 1 else str(exc)
    text = " ".join(text.split()) or "(no message)"
    return text if isinstance(exc, ZarrpyError) else f"{type(exc).__name__}: {text}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zarrpy", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"zarrpy {__version__}")
    parser.add_argument("--traceback", action="store_true",
                        help="on failure show the full traceback (also: environment variable ZARRPY_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    demo = sub.add_parser("demo", help="create, write, read back and describe a small array")
    demo.add_argument("directory", nargs="?", help="where to keep demo.zarr (default: a temporary directory)")
    info = sub.add_parser("info", help="describe the array or group at a path or URL")
    info.add_argument("target", metavar="PATH_OR_URL", help="a directory, or an fsspec URL such as s3://bucket/x.zarr")
    info.add_argument("--path", help="node path inside the store")
    info.add_argument("--json", action="store_true", help="print the description as one JSON document")
    migrate = sub.add_parser(
        "migrate", help="write Zarr V3 metadata for every V2 array and group (chunks are not touched)")
    migrate.add_argument("target", metavar="PATH_OR_URL", help="a directory, or an fsspec URL")
    migrate.add_argument("--path", help="node path inside the store (default: the root)")
    migrate.add_argument("--remove-v2", action="store_true",
                         help="delete .zarray/.zgroup/.zattrs/.zmetadata once all zarr.json are written")
    consolidate = sub.add_parser("consolidate", help="write consolidated metadata for a group's hierarchy")
    consolidate.add_argument("target", metavar="PATH_OR_URL", help="a directory, or an fsspec URL")
    consolidate.add_argument("--path", help="group path inside the store (default: the root)")
    verify = sub.add_parser(
        "verify", help="list temporary files left by interrupted writers (exit 1 if any is stale)")
    verify.add_argument("target", metavar="PATH", help="a directory store")
    verify.add_argument("--clean", action="store_true",
                        help="remove the stale ones (files of writers that may still run are kept)")
    return parser


def _run(args: argparse.Namespace) -> int:
    if args.command == "demo":
        return _demo(args.directory)
    if args.command == "migrate":
        return _migrate(args.target, args.path, args.remove_v2)
    if args.command == "consolidate":
        return _consolidate(args.target, args.path)
    if args.command == "verify":
        return _verify(args.target, args.clean)
    return _info(args.target, args.path, args.json)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring)."""
    args = _parser().parse_args(argv)
    debug = args.traceback or os.environ.get("ZARRPY_DEBUG", "") not in ("", "0")
    try:
        return _run(args)
    except EXPECTED_ERRORS as exc:
        if debug:
            raise
        print(f"zarrpy: error: {_error_line(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
