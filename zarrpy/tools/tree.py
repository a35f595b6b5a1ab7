"""``zarrpy tree``: a hierarchy's groups and arrays, as text or as one nested JSON document.

The text is zarr-python's ``Group.tree()`` drawing with each node's format
(``V2`` or ``V3``) and each array's layout added: shape, data type, chunks,
shards and a codec summary
(``bytes > zstd:3``; inside the shards when sharded). Nothing but metadata is
read (consolidated metadata when the group has some).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from .. import api
from ..api._array import Array
from ..api._group import Group
from ._nodes import codec_summary, dtype_text, json_text, layout_lists, v3_metadata


def array_entry(a: Array) -> dict[str, Any]:
    """An array's layout as JSON-friendly values."""
    meta = v3_metadata(a)
    return {
        "node_type": "array",
        "zarr_format": a.zarr_format,
        "shape": list(a.shape),
        "dtype": dtype_text(a),
        "data_type": meta.data_type.to_json(),
        "chunks": layout_lists(a)[0],
        "shards": layout_lists(a)[1],
        "fill_value": meta.data_type.fill_to_json(meta.fill_value),
        "codecs": [c.to_json() for c in a.codecs],
        "codecs_summary": codec_summary(a),
        "dimension_names": None if meta.dimension_names is None else list(meta.dimension_names),
        "attributes": dict(a.attrs),
    }


def _dims_text(dims: list[Any]) -> str:
    """A chunk (shard) shape as the tree prints it; a rectilinear dimension's sizes as a tuple."""
    return str(tuple(tuple(d) if isinstance(d, list) else d for d in dims))


def tree_document(node: Array | Group, depth: int | None = None) -> dict[str, Any]:
    """The hierarchy below ``node`` as one nested document: every node has
    ``name`` (its last path part), ``path`` (``/a/b``) and ``node_type``;
    groups have ``zarr_format``, ``attributes`` and ``members`` (a list, left
    out for groups below ``depth``, which are not looked into); arrays the
    fields of :func:`array_entry`. ``depth`` counts levels below ``node``
    (None: all, 0: ``node`` alone)."""
    if isinstance(node, Array):
        return {"name": node.basename or "/", "path": node.name, **array_entry(node)}
    root: dict[str, Any] = {"name": node.basename or "/", "path": node.name, "node_type": "group",
                            "zarr_format": node.zarr_format, "attributes": dict(node.attrs)}
    if depth is not None and depth < 1:
        return root
    root["members"] = []
    by_path = {"": root}
    for rel, member in node.members(max_depth=None if depth is None else depth - 1):
        parent_rel, _, name = rel.rpartition("/")
        entry: dict[str, Any] = {"name": name, "path": member.name}
        if isinstance(member, Array):
            entry.update(array_entry(member))
        else:
            entry.update(node_type="group", zarr_format=member.zarr_format, attributes=dict(member.attrs))
            if depth is None or rel.count("/") + 1 < depth:
                entry["members"] = []
            by_path[rel] = entry
        by_path[parent_rel]["members"].append(entry)
    return root


def _label(entry: dict[str, Any]) -> str:
    """One node's line: its name and format (``V2``/``V3``), and an array's layout."""
    name = f"{entry['name']} V{entry['zarr_format']}"
    if entry["node_type"] == "group":
        return name
    shape = tuple(entry["shape"])
    text = f"{name} {shape} {entry['dtype']} chunks={_dims_text(entry['chunks'])}"
    if entry["shards"] is not None:
        text += f" shards={_dims_text(entry['shards'])}"
    return f"{text} {entry['codecs_summary']}"


def _glyphs(stream: TextIO) -> tuple[str, str, str, str]:
    """The tree's drawing characters: box drawing when ``stream`` can encode them, else ASCII."""
    try:
        "├└│─".encode(getattr(stream, "encoding", None) or "ascii")
        return "├── ", "└── ", "│   ", "    "
    except (UnicodeEncodeError, LookupError):
        return "|-- ", "`-- ", "|   ", "    "


def tree_text(document: dict[str, Any], stream: TextIO | None = None) -> str:
    """The document of :func:`tree_document` drawn as zarr-python draws a tree."""
    tee, last, bar, blank = _glyphs(sys.stdout if stream is None else stream)
    if document["node_type"] == "array":
        return _label({**document, "name": document["path"]})
    lines = [f"{document['path']} V{document['zarr_format']}"]

    def walk(members: list[dict[str, Any]], prefix: str) -> None:
        for i, entry in enumerate(members):
            end = i == len(members) - 1
            lines.append(prefix + (last if end else tee) + _label(entry))
            if entry.get("members"):
                walk(entry["members"], prefix + (blank if end else bar))

    walk(document.get("members", []), "")
    return "\n".join(lines)


def run_tree(target: str, path: str | None, *, as_json: bool, depth: int | None,
             storage_options: dict[str, Any] | None = None) -> int:
    """``zarrpy tree``: print the hierarchy at ``target`` (text, or one JSON document)."""
    node = api.open(target, mode="r", path=path, storage_options=storage_options)
    document = tree_document(node, depth)
    print(json_text(document) if as_json else tree_text(document))
    return 0


__all__ = ["array_entry", "run_tree", "tree_document", "tree_text"]
