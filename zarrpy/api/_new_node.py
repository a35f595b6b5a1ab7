"""Making room for a new node and writing its documents, in few round trips.

On an object store every request of a create waits a round trip, and a
create comes before every write of a new array, so it is made of batches:
one of reads (the parents' documents, and the node's own or, to replace it,
its listing), at most one batched delete, and one batch of writes. Where the
store writes conditionally, documents are written "only if absent", so a
node that another writer made meanwhile is refused rather than replaced, and
a new V3 node at a place with no parents to read takes one round trip: its
``zarr.json`` written only if absent, beside the reads of the V2 documents
that would also make a node there (see :func:`put_new_node`).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from ._node import NODE_KEYS, location
from ..core.paths import METADATA_KEY, check_new_node_path, join_key
from ..errors import NodeExistsError
from ..metadata._parse import parse_json_document
from ..metadata.v2 import GroupMetadataV2
from ..metadata.v3 import GroupMetadataV3
from ..pipeline.io_pool import map_io, waits_on_network
from ..stores.abc import Store
from ..stores.writes import ABSENT, ConditionalWrite


def node_exists(store: Store, path: str) -> bool:
    """Is there a V3 or V2 node at ``path``? (One batched request.)"""
    values = store.get_partial_values([(join_key(path, k), None) for k in NODE_KEYS])
    return any(v is not None for v in values)


def _exists_message(store: Store, path: str) -> str:
    return (f"a node already exists at {location(store, path)}; "
            "pass overwrite=True (or mode='w') to replace it")


def _ancestors(path: str, within: str | None) -> list[str]:
    """The parents of ``path``, root first, below the group ``within`` (all when None)."""
    parts = path.split("/") if path else []
    skip = 0 if within is None else (len(within.split("/")) + 1 if within else 1)
    if within is not None and not (within == "" or path.startswith(within + "/")):
        raise ValueError(f"{path!r} is not inside {within!r}")
    return ["/".join(parts[:i]) for i in range(skip, len(parts))]


class _Room(NamedTuple):
    """What :func:`_survey` found where a node is to be made."""

    missing_parents: list[str]
    """Parents with no node: they become groups."""
    listed: list[str]
    """With ``overwrite``: every key under the node, to delete."""


def _side_by_side(tasks: list[Callable[[], Any]], store: Store) -> list[Any]:
    """Each task's result, the tasks waited on together when ``store`` is remote."""
    return map_io(lambda task: task(), tasks) if len(tasks) > 1 and waits_on_network([store]) else [t() for t in tasks]


def _survey(store: Store, path: str, *, own: Sequence[str], overwrite: bool, within: str | None) -> _Room:
    """One round trip: the parents' documents and the node's documents
    ``own`` in one batch, and (``overwrite``) the node's keys listed beside
    it. NodeExistsError for a parent that is an array, or (any of ``own``
    present) a node already there."""
    check_new_node_path(path)
    parents = _ancestors(path, within)
    keys = [join_key(p, k) for p in parents for k in NODE_KEYS] + [join_key(path, k) for k in own]

    def read() -> list[bytes | None]:
        return store.get_partial_values([(k, None) for k in keys]) if keys else []

    def listing() -> list[str]:
        return list(store.list_prefix(join_key(path, "")))

    values, listed = _side_by_side([read, listing], store) if overwrite else (read(), [])
    missing = []
    for i, parent in enumerate(parents):
        v3, zarray, zgroup = values[i * len(NODE_KEYS) : (i + 1) * len(NODE_KEYS)]
        if zarray is not None or (v3 is not None and _node_type(v3, join_key(parent, METADATA_KEY)) == "array"):
            raise NodeExistsError(f"cannot create a node at {location(store, path)}: {'/' + parent!r} is an array")
        if v3 is None and zgroup is None:
            missing.append(parent)
    if any(v is not None for v in values[len(parents) * len(NODE_KEYS) :]):
        raise NodeExistsError(_exists_message(store, path))
    return _Room(missing, listed)


def _node_type(raw: bytes, key: str) -> Any:
    return parse_json_document(raw, key).get("node_type")


def _group_documents(zarr_format: int) -> dict[str, bytes]:
    return (GroupMetadataV3() if zarr_format == 3 else GroupMetadataV2()).to_documents()


def prepare_node(store: Store, path: str, *, overwrite: bool, zarr_format: int = 3) -> None:
    """Make room for a new node at ``path`` (its documents are the caller's).

    Checks everything before writing anything: an existing node is an error
    unless ``overwrite`` (then it is removed with all its keys), and no node
    may be made inside an array. Missing parents become groups of
    ``zarr_format``.
    """
    room = _survey(store, path, own=() if overwrite else NODE_KEYS, overwrite=overwrite, within=None)
    if room.listed:
        store.delete_many(room.listed)
    group = _group_documents(zarr_format)
    store.set_many([(join_key(p, k), v) for p in room.missing_parents for k, v in group.items()])


def put_new_node(store: Store, path: str, documents: dict[str, bytes], *, overwrite: bool, zarr_format: int = 3,
                 within: str | None = None, absent: bool = False) -> None:
    """Make room for a new node at ``path`` and write its ``documents``, in
    as few requests and round trips as the checks allow.

    1. One batch of reads: every parent's documents (a parent that is an
       array refuses the node; a missing one becomes a group of
       ``zarr_format``) and, unless ``overwrite``, the node's own (a node
       already there is refused: NodeExistsError). With ``overwrite`` the
       node's keys are listed instead, side by side with the reads.
    2. ``overwrite`` only, if anything was listed: one ``delete_many`` of it
       all, so no chunk of an old array outlives it (nor a stray key).
    3. One batch of writes: the documents of the node and of its missing
       parents.

    A store with conditional writes writes every document "only if absent":
    a node that another writer made meanwhile is refused, not replaced, and
    a node of one document (V3) is not read first, its write is the check
    (``create_array`` on S3: the V2 documents read, then one conditional
    PUT). Nothing is written before every check has passed: writing the new
    node beside the reads would save a round trip, but a writer dying
    before it took the document back would leave a V2 node shadowed by it.

    Parents at or above ``within`` (a group the caller has open) are not
    read; ``absent``: the caller has just found none of the node's
    documents, so they are not read again.
    """
    conditional = store.supports_conditional_writes
    checked_by_write = conditional and not overwrite and len(documents) == 1
    own: Sequence[str] = ()
    if not (overwrite or absent):
        own = [k for k in NODE_KEYS if not (checked_by_write and k in documents)]
    room = _survey(store, path, own=own, overwrite=overwrite, within=within)
    if room.listed:
        store.delete_many(room.listed)
    group = _group_documents(zarr_format)
    parents = [(join_key(p, k), v) for p in room.missing_parents for k, v in group.items()]
    mine = [(join_key(path, k), v) for k, v in documents.items()]
    if not conditional:
        store.set_many(parents + mine)
        return
    done = store.set_conditional([ConditionalWrite(k, v, ABSENT) for k, v in parents + mine])
    refused = [(name, key, value) for name, (key, value), ok in zip(documents, mine, done[len(parents) :]) if not ok]
    if any(name in NODE_KEYS for name, _, _ in refused):
        raise NodeExistsError(_exists_message(store, path) if not overwrite else
                              f"another writer made a node at {location(store, path)} while this one replaced it")
    for _, key, value in refused:  # a stray .zattrs beside no node: ours replaces it
        store.set(key, value)


__all__ = ["node_exists", "prepare_node", "put_new_node"]
