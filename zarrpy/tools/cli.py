"""The zarrpy command line: demo, info, tree, cp, migrate, consolidate and verify.

This module wires argparse; the commands that grew live in their own
modules (:mod:`.cp`, :mod:`.tree`, :mod:`.verify`, :mod:`.migrate`).

Exit status: 0 on success, 1 when the command fails (one ``zarrpy: error:``
line on stderr; ``--traceback`` or ``ZARRPY_DEBUG=1`` shows the traceback
instead) or ``verify`` finds a chunk that does not decode or stale temporary
files it was not asked to clean, 2 on a usage error: a missing argument, or
an option whose value does not parse (every option is checked before any
work starts, so a 1 always means the work itself failed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__, api
from ..core import vlen_kernels
from ..api._array import Array
from ..api._group import Group
from ..codecs.sharding.order import WRITE_ORDERS
from ..errors import ZarrpyError
from ._nodes import dtype_text, json_text, layout_lists

DESCRIPTION = """\
Create, inspect and convert Zarr (V2 and V3) arrays and groups.

PATH_OR_URL is a directory or an fsspec URL such as s3://bucket/x.zarr.
Run "zarrpy COMMAND --help" for the options of a command.
"""
"""What ``zarrpy --help`` prints first."""
EPILOG = "exit status: 0 done, 1 the command failed (one line on stderr), 2 bad usage"
"""What ``zarrpy --help`` prints last."""

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
        labels = np.array([f"row {i}: {'é' * (i % 4)}" for i in range(1000)], dtype=np.dtypes.StringDType())
        named = api.create_array(str(root / "labels.zarr"), shape=labels.shape, dtype=str, chunks=(250,),
                                 overwrite=True)
        named[...] = labels
        same = np.array_equal(api.open_array(str(root / "labels.zarr"), mode="r")[...], labels)
        print(f"strings: {labels.size:,} labels read back {'identical' if same else 'DIFFERENT'} "
              f"(converter: {vlen_kernels.IMPLEMENTATION})")
        if directory is None:
            print("(temporary directory removed; pass a directory to keep the array)")
        return 0 if ok and same else 1


def _info_document(node: Array | Group) -> dict[str, Any]:
    """The JSON ``zarrpy info --json`` prints: an array's info dict, or a
    group's name, format, attributes and every member below it."""
    if isinstance(node, Array):
        return {"node_type": "array", **node.info.as_dict()}
    members = []
    for rel, member in node.members(max_depth=None):
        entry: dict[str, Any] = {"path": rel, "node_type": "array" if isinstance(member, Array) else "group"}
        if isinstance(member, Array):
            entry.update(shape=member.shape, chunks=layout_lists(member)[0], dtype=dtype_text(member))
        members.append(entry)
    return {"node_type": "group", "name": node.name, "zarr_format": node.zarr_format,
            "attributes": dict(node.attrs), "members": members}


def _info(target: str, path: str | None, as_json: bool, storage_options: dict[str, Any] | None) -> int:
    node = api.open(target, mode="r", path=path, storage_options=storage_options)
    if not vlen_kernels.COMPILED:  # on stderr: the JSON on stdout stays parseable
        print(f"note: strings convert in {vlen_kernels.IMPLEMENTATION}", file=sys.stderr)
    if as_json:
        print(json_text(_info_document(node)))
    elif isinstance(node, Array):
        print(node.info)
    else:
        print(f"group {node.name} (Zarr V{node.zarr_format}) attributes={dict(node.attrs)}")
        print(node.tree())
    return 0


def _migrate(target: str, path: str | None, remove_v2: bool, dry_run: bool,
             storage_options: dict[str, Any] | None) -> int:
    from .migrate import migrate_v3

    result = migrate_v3(target, path=path, remove_v2=remove_v2, dry_run=dry_run, storage_options=storage_options)
    if result.already_v3:
        print(f"{target}{'' if path is None else f' (path {path})'}: already Zarr V3 "
              "(no V2 array or group found), nothing to do")
        return 0
    if dry_run:
        print(f"dry run, nothing written: would write zarr.json for {len(result.written)} node(s)"
              + (f", {len(result.unchanged)} already migrated" if result.unchanged else "")
              + (f"; would remove {len(result.removed)} V2 metadata document(s)" if remove_v2 else ""))
        for node_path in result.written:
            print(f"  write  {node_path + '/' if node_path else ''}zarr.json")
        for key in result.removed:
            print(f"  remove {key}")
        return 0
    print(f"wrote zarr.json for {len(result.written)} node(s)"
          + (f", {len(result.unchanged)} already migrated" if result.unchanged else "")
          + (f"; removed {len(result.removed)} V2 metadata document(s)" if remove_v2 else "")
          + "; no chunk was read or rewritten")
    for node_path in result.written:
        print(f"  /{node_path}")
    return 0


def _consolidate(target: str, path: str | None, storage_options: dict[str, Any] | None) -> int:
    from .. import consolidate_metadata

    group = consolidate_metadata(target, path=path, storage_options=storage_options)
    where = "zarr.json (consolidated_metadata)" if group.zarr_format == 3 else ".zmetadata"
    print(f"consolidated {len(group.consolidated_metadata or ())} node(s) into {group.name} {where}")
    return 0


def _error_line(exc: BaseException) -> str:
    """One line for an expected failure: zarrpy's own messages as they are,
    other exceptions prefixed with their type (``FileNotFoundError: …``)."""
    text = str(exc.args[0]) if isinstance(exc, KeyError) and len(exc.args) == 1 else str(exc)
    text = " ".join(text.split()) or "(no message)"
    return text if isinstance(exc, ZarrpyError) else f"{type(exc).__name__}: {text}"


def _sub(sub: Any, name: str, help_text: str, examples: str) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` ends with ``examples``."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".",
        epilog="examples:\n" + examples, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Also after the command (`zarrpy info X --traceback`); SUPPRESS keeps the
    # value given before the command when it is not repeated after it.
    parser.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS, help=TRACEBACK_HELP)
    parser.set_defaults(subparser=parser)
    return parser


def _target(parser: argparse.ArgumentParser, what: str = "node path inside the store (default: the root)") -> None:
    parser.add_argument("target", metavar="PATH_OR_URL", help="a directory, or an fsspec URL such as s3://bucket/x.zarr")
    parser.add_argument("--path", help=what)
    _storage_options(parser, "--storage-options", "PATH_OR_URL")


STORAGE_OPTIONS_EXAMPLE = '{"key": "...", "secret": "...", "client_kwargs": {"endpoint_url": "http://127.0.0.1:9000"}}'
"""An S3 / MinIO ``--storage-options`` value, as the help shows it."""
TRACEBACK_HELP = "on failure show the full traceback (also: environment variable ZARRPY_DEBUG=1)"
"""``--traceback``'s help, before and after the command."""


def _storage_options(parser: argparse.ArgumentParser, option: str, what: str) -> None:
    parser.add_argument(option, type=_json_object(option), metavar="JSON",
                        help=f"fsspec options for {what} when it is a URL, as a JSON object or @FILE holding one, "
                             f"e.g. '{STORAGE_OPTIONS_EXAMPLE}' (s3fs also reads the AWS_* environment variables)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zarrpy", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version",
                        version=f"zarrpy {__version__}\nstrings: {vlen_kernels.IMPLEMENTATION}")
    parser.add_argument("--traceback", action="store_true", help=TRACEBACK_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    demo = _sub(sub, "demo", "create, write, read back and describe a small array",
                "  zarrpy demo             # in a temporary directory, removed afterwards\n"
                "  zarrpy demo ./scratch   # keeps ./scratch/demo.zarr\n")
    demo.add_argument("directory", nargs="?", help="where to keep demo.zarr (default: a temporary directory)")
    info = _sub(sub, "info", "describe the array or group at a path or URL",
                "  zarrpy info data.zarr\n"
                "  zarrpy info data.zarr --path group/temperature --json\n"
                "  zarrpy info s3://bucket/data.zarr\n"
                "  zarrpy info s3://bucket/data.zarr --storage-options '{\"anon\": true}'\n")
    _target(info)
    info.add_argument("--json", action="store_true", help="print the description as one JSON document")
    tree = _sub(sub, "tree", "show a hierarchy: groups, and arrays with shape, dtype, chunks, shards and codecs",
                "  zarrpy tree data.zarr\n"
                "  zarrpy tree data.zarr --depth 1        # the root's members only\n"
                "  zarrpy tree data.zarr --json | jq '.members[].name'\n")
    _target(tree)
    tree.add_argument("--json", action="store_true", help="print the hierarchy as one nested JSON document")
    tree.add_argument("--depth", type=_depth, metavar="N", help="levels below the node to show (default: all)")
    cp = _sub(sub, "cp", "copy an array or a group hierarchy into a new store, rechunking, resharding, "
              "recompressing or converting the format, in bounded memory",
              "  zarrpy cp in.zarr out.zarr --chunks 100,100 --shards 1000,1000\n"
              "  zarrpy cp in.zarr out.zarr --compressor blosc:lz4:5 --max-memory 64MB\n"
              "  zarrpy cp v2.zarr v3.zarr --zarr-format 3\n"
              "  zarrpy cp s3://bucket/in.zarr out.zarr --path group/temperature --no-shards --overwrite\n"
              "  zarrpy cp s3://bucket/in.zarr s3://other/out.zarr --storage-options @s3.json\n"
              "\n--storage-options applies to each of SRC and DST that is a URL; --src-storage-options\n"
              "and --dst-storage-options to one of them (and take its place there).\n"
              "--chunks and --shards apply to every copied array with that many dimensions\n"
              "(-1: the whole dimension); the others keep theirs. Memory: the data in flight\n"
              "(a region decoded, and encoded) stays under --max-memory; a destination shard\n"
              "or chunk that alone needs more is refused before anything is written.\n")
    cp.add_argument("source", metavar="SRC", help="the array or group to copy: a directory or an fsspec URL")
    cp.add_argument("dest", metavar="DST", help="where the copy goes (its root): a directory or an fsspec URL")
    cp.add_argument("--path", help="node path inside SRC to copy (default: the root)")
    cp.add_argument("--chunks", type=_shape("--chunks"), metavar="C1,C2,...",
                    help="new chunk shape (inner chunks when sharded); a dimension's edges joined by + make a "
                         "rectilinear grid (E*K: K edges of E), e.g. 30*3+10,40")
    shards = cp.add_mutually_exclusive_group()
    shards.add_argument("--shards", type=_shape("--shards"), metavar="S1,S2,...",
                        help="new shard shape (multiples of the chunks; Zarr V3 only); edges joined by + "
                             "for rectilinear shards, as for --chunks")
    shards.add_argument("--no-shards", action="store_true", help="store chunks unsharded")
    cp.add_argument("--compressor", metavar="SPEC", type=_compressor,
                    help="zstd:LEVEL, blosc:CNAME:CLEVEL[:SHUFFLE], gzip:LEVEL, zlib:LEVEL or none "
                         "(default: the source's compressors)")
    cp.add_argument("--zarr-format", type=int, choices=(2, 3), help="format of the copy (default: the source's)")
    cp.add_argument("--subchunk-write-order", choices=WRITE_ORDERS, metavar="ORDER",
                    help="order of the inner chunks in the copy's shards: lexicographic (default), "
                         "colexicographic, morton (zarr-python's default) or unordered")
    cp.add_argument("--max-memory", type=_size, default="256MB", metavar="SIZE",
                    help="bound on the data in flight, e.g. 64MB, 1GB (K/M/G: powers of 1024; default 256MB)")
    cp.add_argument("--overwrite", action="store_true", help="replace a node already at DST")
    cp.add_argument("--quiet", action="store_true", help="no progress bar (there is none when stderr is not a terminal)")
    _storage_options(cp, "--storage-options", "SRC and DST")
    _storage_options(cp, "--src-storage-options", "SRC")
    _storage_options(cp, "--dst-storage-options", "DST")
    migrate = _sub(sub, "migrate", "write Zarr V3 metadata for every V2 array and group (chunks are not touched)",
                   "  zarrpy migrate v2.zarr --dry-run      # what would be written; writes nothing\n"
                   "  zarrpy migrate v2.zarr\n"
                   "  zarrpy migrate v2.zarr --remove-v2    # then delete .zarray/.zgroup/.zattrs\n")
    _target(migrate)
    migrate.add_argument("--remove-v2", action="store_true",
                         help="delete .zarray/.zgroup/.zattrs/.zmetadata once all zarr.json are written")
    migrate.add_argument("--dry-run", action="store_true", help="print what would be written and removed; write nothing")
    consolidate = _sub(sub, "consolidate", "write consolidated metadata for a group's hierarchy",
                       "  zarrpy consolidate data.zarr\n"
                       "  zarrpy consolidate s3://bucket/data.zarr --path group\n")
    _target(consolidate, "group path inside the store (default: the root)")
    verify = _sub(sub, "verify", "decode every stored chunk and list the bad ones; list temporary files left by "
                  "interrupted writers (exit 1 if anything is bad)",
                  "  zarrpy verify data.zarr\n"
                  "  zarrpy verify data.zarr --json > report.json\n"
                  "  zarrpy verify data.zarr --clean      # also remove stale temporary files\n"
                  "\nOne line per bad chunk: its store key and the error. Temporary files are\n"
                  "looked for in directory stores only.\n")
    _target(verify)
    verify.add_argument("--clean", action="store_true",
                        help="remove stale temporary files (those of writers that may still run are kept; "
                             "bad chunks are never touched)")
    verify.add_argument("--json", action="store_true", help="print the report as one JSON document")
    verify.add_argument("--quiet", action="store_true",
                        help="no progress bar (there is none when stderr is not a terminal)")
    return parser


def _depth(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of levels (0 or more), got {text!r}")
    return value


def _shape(what: str) -> Callable[[str], tuple[int | tuple[int, ...], ...]]:
    from ._nodes import parse_chunks

    def parse(text: str) -> tuple[int | tuple[int, ...], ...]:
        try:
            return parse_chunks(text, what)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _size(text: str) -> int:
    from ._nodes import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _compressor(text: str) -> str:
    """``--compressor``, checked as it parses (its codec built once), so a bad
    spec is a usage error before anything is read."""
    from ..codecs.registry import codec_from_json
    from .cp import compressor_codecs

    try:
        for doc in compressor_codecs(text, 1):
            codec_from_json(doc)
    except (ZarrpyError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--compressor ")) from None
    return text


def _json_object(option: str) -> Callable[[str], dict[str, Any]]:
    """The parser of ``option``: a JSON object, given inline or as ``@FILE``."""

    def parse(text: str) -> dict[str, Any]:
        source = text
        if text.startswith("@"):
            try:
                source = Path(text[1:]).read_text(encoding="utf-8")
            except OSError as exc:
                raise argparse.ArgumentTypeError(f"cannot read {text[1:]!r}: {exc.strerror or exc}") from None
        try:
            value = json.loads(source)
        except json.JSONDecodeError as exc:
            raise argparse.ArgumentTypeError(
                f"not valid JSON ({exc.msg} at character {exc.pos}); expected an object such as "
                f"'{{\"anon\": true}}'") from None
        if not isinstance(value, dict):
            raise argparse.ArgumentTypeError(
                f"expected a JSON object such as '{{\"anon\": true}}', got a JSON {_json_kind(value)}")
        return value

    return parse


def _json_kind(value: Any) -> str:
    """What JSON calls the type of a parsed ``value`` (``array``, not ``list``)."""
    kinds = {bool: "boolean", int: "number", float: "number", str: "string", list: "array", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def _is_url(target: str) -> bool:
    """Does ``target`` go to fsspec (and so take storage options), as :func:`zarrpy.stores.store_from_url` decides?"""
    return "://" in target or "::" in target


def _url_options(parser: argparse.ArgumentParser, option: str, options: dict[str, Any] | None,
                 what: str, target: str) -> dict[str, Any] | None:
    """``options`` for ``target``; a usage error when there are some and ``target`` is a local path."""
    if options and not _is_url(target):
        parser.error(f"argument {option}: {what} {target!r} is a local path; storage options are only used "
                     "with fsspec URLs such as s3://bucket/x.zarr")
    return options


def _resolve_storage_options(args: argparse.Namespace) -> None:
    """Check the storage options against the paths they go with (a usage error
    for options given to a local path) and, for ``cp``, settle each side's:
    its own option if given, else ``--storage-options`` when it is a URL."""
    parser = args.subparser
    if args.command != "cp":
        if hasattr(args, "storage_options"):
            _url_options(parser, "--storage-options", args.storage_options, "PATH_OR_URL", args.target)
        return
    shared = args.storage_options
    if shared and not (_is_url(args.source) or _is_url(args.dest)):
        parser.error("argument --storage-options: neither SRC nor DST is a URL; storage options are only used "
                     "with fsspec URLs such as s3://bucket/x.zarr")
    for side, option, target in (("src", "--src-storage-options", args.source),
                                 ("dst", "--dst-storage-options", args.dest)):
        own = getattr(args, f"{side}_storage_options")
        if own is None:
            chosen = shared if _is_url(target) else None
        else:
            chosen = _url_options(parser, option, own, side.upper(), target)
        setattr(args, f"{side}_storage_options", chosen)


def _run(args: argparse.Namespace) -> int:
    if args.command == "demo":
        return _demo(args.directory)
    if args.command == "cp":
        from .cp import run_cp

        return run_cp(args)
    options = args.storage_options
    if args.command == "migrate":
        return _migrate(args.target, args.path, args.remove_v2, args.dry_run, options)
    if args.command == "consolidate":
        return _consolidate(args.target, args.path, options)
    if args.command == "verify":
        from .verify import run_verify

        return run_verify(args.target, args.path, clean=args.clean, as_json=args.json, quiet=args.quiet,
                          storage_options=options)
    if args.command == "tree":
        from .tree import run_tree

        return run_tree(args.target, args.path, as_json=args.json, depth=args.depth, storage_options=options)
    return _info(args.target, args.path, args.json, options)


def _stdout_closed() -> bool:
    """Has the reader of stdout gone away (a pipe into ``head``)? A pipe whose
    reader closed polls as an error; without poll (Windows), assume it did."""
    import select

    if not hasattr(select, "poll"):
        return True
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring)."""
    args = _parser().parse_args(argv)
    _resolve_storage_options(args)
    debug = args.traceback or os.environ.get("ZARRPY_DEBUG", "") not in ("", "0")
    try:
        return _run(args)
    except BrokenPipeError:
        if not _stdout_closed():
            raise  # not the reader of our output going away (`zarrpy tree --json | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 1
    except EXPECTED_ERRORS as exc:
        if debug:
            raise
        print(f"zarrpy: error: {_error_line(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
