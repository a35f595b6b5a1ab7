"""The import layering of DESIGN.md ("Layers: data flows one way"), checked on the source.

Every module of ``zarrpy/`` is parsed with :mod:`ast`; every ``import`` and
``from ... import`` counts, wherever it is: at module level, inside a function
or method, inside ``try``/``if``. Two rules:

(a) **no upward import**: a module imports only modules of its own layer or of
    a layer it may depend on (``ALLOWED`` below). ``metadata``, ``stores`` and
    ``codecs`` are peers: none of them may import another.
(b) **no import cycle** between modules, counting imports inside functions.

Imports under ``if TYPE_CHECKING:`` never run. They count for (a) -- naming a
higher layer's type is knowing about it -- but not for (b): a pair such as
``Array.info -> ArrayInfo`` / ``ArrayInfo.of(array: Array)`` refers to each
other's types only in annotations, which creates no import-order dependency.

Only explicit import statements are edges. (Python runs a package's
``__init__`` before any of its submodules; that implicit edge is not counted,
so ``zarrpy/__init__.py``, which re-exports everything, does not put every
module in a cycle.) A module importing ``pkg.sub`` depends on ``pkg.sub``,
not on ``pkg``.

The layer map is the package's folder tree: one subpackage per layer; a new
top-level module must be placed in it (the test fails for an unplaced module), and a violation is fixed in the
code, never by an exception list here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import zarrpy

PACKAGE_DIR = Path(zarrpy.__file__).resolve().parent
ROOT = PACKAGE_DIR.parent

# -- the layer map ------------------------------------------------------------------

LAYERS: dict[str, tuple[str, ...]] = {
    # errors, typing aliases, data types, ArrayBytes, RaggedArray, chunk grid,
    # byte ranges (and their coalescing), indexing: selection -> chunk projections.
    "core": ("zarrpy.errors", "zarrpy.core"),
    # zarr.json / .zarray / .zgroup parsing into frozen dataclasses, and chunk
    # key encoding (the behaviour of the metadata's ``chunk_key_encoding`` field).
    "metadata": ("zarrpy.metadata",),
    "stores": ("zarrpy.stores", "zarrpy.storage"),  # zarrpy.storage: zarr-python's names for the stores
    "codecs": ("zarrpy.codecs",),
    # chunk I/O between stores and codecs: the thread pool, per-key locks,
    # V2 -> V3 conversion (one pipeline for both formats), values at the array edge.
    "pipeline": ("zarrpy.pipeline",),
    # Array, Group, open*/create*, convenience functions, info; _node (what
    # arrays and groups share: paths, metadata IO, attributes); growable
    # buffers and the readers that fill them, with their public module;
    # lazy arrays and tables, with theirs; the cache, with its; zarrpy.typing,
    # which re-exports the aliases of the public signatures from every layer.
    "api": ("zarrpy.api", "zarrpy.buffers", "zarrpy.lazy", "zarrpy.cache", "zarrpy.typing"),
    # migrate, the CLI, and the package namespace itself: ``zarrpy/__init__``
    # re-exports a tool (migrate_v3) next to the API, so it sits on top; the
    # public faces of the integrations (zarrpy.dask, zarrpy.xarray over tools/).
    "tools": ("zarrpy.tools", "zarrpy.__main__", "zarrpy", "zarrpy.dask", "zarrpy.xarray"),
}

# layer -> the layers its modules may import (its own included)
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset({"core"}),
    "metadata": frozenset({"core", "metadata"}),
    "stores": frozenset({"core", "stores"}),
    "codecs": frozenset({"core", "codecs"}),
    "pipeline": frozenset({"core", "metadata", "stores", "codecs", "pipeline"}),
    "api": frozenset({"core", "metadata", "stores", "codecs", "pipeline", "api"}),
    "tools": frozenset({"core", "metadata", "stores", "codecs", "pipeline", "api", "tools"}),
}


def layer_of(module: str) -> str | None:
    """The layer of ``module``: an exact entry, else the longest package entry containing it."""
    best: tuple[int, str] | None = None
    for layer, entries in LAYERS.items():
        for entry in entries:
            if module == entry or (entry != "zarrpy" and module.startswith(entry + ".")):
                if best is None or len(entry) > best[0]:
                    best = (len(entry), layer)
    return None if best is None else best[1]


# -- the import graph ---------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported zarrpy module
    path: str  # file of the importing module, relative to the repository
    line: int
    type_only: bool  # under ``if TYPE_CHECKING:``

    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def __str__(self) -> str:
        how = " (under TYPE_CHECKING)" if self.type_only else ""
        return f"{self.where()}: {self.source} imports {self.target}{how}"


def module_name(path: Path, package_dir: Path = PACKAGE_DIR) -> str:
    parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement anywhere in ``tree``, with whether it is TYPE_CHECKING-only."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append((node, type_only))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(tree, False)
    return found


def imports_of(source: str, module: str, is_package: bool, known: set[str], path: str = "<src>") -> list[Import]:
    """The zarrpy modules that ``source`` (the text of ``module``) imports."""
    result: list[Import] = []
    for node, type_only in _import_nodes(ast.parse(source, filename=path)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            for alias in node.names:
                # ``from pkg import sub`` imports the module pkg.sub; ``from mod import name`` imports mod
                sub = f"{stem}.{alias.name}"
                targets.append(sub if sub in known else stem)
        for target in targets:
            if target == "zarrpy" or target.startswith("zarrpy."):
                result.append(Import(module, target, path, node.lineno, type_only))
    return result


def package_imports(package_dir: Path = PACKAGE_DIR) -> tuple[set[str], list[Import]]:
    files = {module_name(p, package_dir): p for p in sorted(package_dir.rglob("*.py"))}
    known = set(files)
    edges: list[Import] = []
    for module, p in files.items():
        rel = p.relative_to(package_dir.parent).as_posix()
        edges += imports_of(p.read_text(encoding="utf-8"), module, p.name == "__init__.py", known, rel)
    return known, edges


def find_cycles(edges: list[Import]) -> list[list[Import]]:
    """One cycle (as its import statements) per strongly connected component
    of the graph that has one; Tarjan's algorithm, iteratively."""
    graph: dict[str, dict[str, Import]] = {}
    for e in edges:
        graph.setdefault(e.source, {}).setdefault(e.target, e)  # first statement per pair
        graph.setdefault(e.target, {})
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        components.append(sorted(component))
    cycles = []
    for component in components:
        members = set(component)
        # shortest path from the first member back to itself, inside the component (BFS)
        first = component[0]
        parents: dict[str, tuple[str, Import]] = {}
        queue, seen, closing = [first], {first}, None
        while queue and closing is None:
            node = queue.pop(0)
            for child, imp in sorted(graph[node].items()):
                if child == first:
                    closing = imp
                    break
                if child in members and child not in seen:
                    seen.add(child)
                    parents[child] = (node, imp)
                    queue.append(child)
        assert closing is not None
        path = [closing]
        node = closing.source
        while node != first:
            node, imp = parents[node]
            path.append(imp)
        cycles.append(path[::-1])
    return cycles


# -- the rules ------------------------------------------------------------------------

KNOWN, EDGES = package_imports()


def test_every_module_is_placed_in_a_layer():
    unplaced = sorted(m for m in KNOWN if layer_of(m) is None)
    assert not unplaced, f"modules with no layer in tests/test_layers.py LAYERS: {unplaced}"
    stale = sorted(e for entries in LAYERS.values() for e in entries if e not in KNOWN)
    assert not stale, f"LAYERS names modules that do not exist: {stale}"
    assert set(ALLOWED) == set(LAYERS)


def test_no_module_imports_a_higher_layer():
    bad = []
    for e in EDGES:
        src, dst = layer_of(e.source), layer_of(e.target)
        assert src is not None and dst is not None, e
        if dst not in ALLOWED[src]:
            bad.append(f"{e} -- layer {src!r} must not import layer {dst!r}")
    assert not bad, "upward (or sideways) imports:\n" + "\n".join(bad)


def test_no_import_cycles_even_inside_functions():
    runtime = [e for e in EDGES if not e.type_only]
    cycles = find_cycles(runtime)
    text = [
        " -> ".join([c[0].source] + [f"{e.target} ({e.where()})" for e in c])
        for c in cycles
    ]
    assert not cycles, "import cycles (each import names the file:line that makes it):\n" + "\n".join(text)


# -- the checker itself ---------------------------------------------------------------


def test_parser_sees_nested_relative_and_type_checking_imports():
    known = {"zarrpy", "zarrpy.a", "zarrpy.pkg", "zarrpy.pkg.b", "zarrpy.pkg.c"}
    src = (
        "from typing import TYPE_CHECKING\n"
        "import numpy\n"
        "from . import c\n"  # a sibling module
        "from .. import a\n"  # a module of the parent package
        "if TYPE_CHECKING:\n"
        "    from ..a import Thing\n"
        "else:\n"
        "    import zarrpy.a\n"
        "def f():\n"
        "    try:\n"
        "        from .c import helper\n"
        "    except ImportError:\n"
        "        pass\n"
        "class K:\n"
        "    def m(self):\n"
        "        from zarrpy import __version__\n"
    )
    got = [(i.target, i.line, i.type_only) for i in imports_of(src, "zarrpy.pkg.b", False, known)]
    assert got == [
        ("zarrpy.pkg.c", 3, False),
        ("zarrpy.a", 4, False),
        ("zarrpy.a", 6, True),
        ("zarrpy.a", 8, False),
        ("zarrpy.pkg.c", 11, False),
        ("zarrpy", 16, False),
    ]
    # in a package's __init__, "." is the package itself
    got = [i.target for i in imports_of("from . import b\nfrom .c import x\n", "zarrpy.pkg", True, known)]
    assert got == ["zarrpy.pkg.b", "zarrpy.pkg.c"]


def test_cycle_finder_names_each_import():
    def imp(s: str, t: str, line: int) -> Import:
        return Import(s, t, s.replace(".", "/") + ".py", line, False)

    edges = [imp("zarrpy.g", "zarrpy.c", 26), imp("zarrpy.c", "zarrpy.n", 5), imp("zarrpy.c", "zarrpy.g", 243)]
    (cycle,) = find_cycles(edges)
    assert [str(e) for e in cycle] == [
        "zarrpy/c.py:243: zarrpy.c imports zarrpy.g",
        "zarrpy/g.py:26: zarrpy.g imports zarrpy.c",
    ]
    assert find_cycles([imp("zarrpy.a", "zarrpy.b", 1), imp("zarrpy.b", "zarrpy.c", 1)]) == []
    assert len(find_cycles([imp("zarrpy.a", "zarrpy.a", 1)])) == 1


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("zarrpy", "tools"),
        ("zarrpy.codecs", "codecs"),
        ("zarrpy.codecs.sharding.codec", "codecs"),
        ("zarrpy.metadata.v3", "metadata"),
        ("zarrpy.stores.local", "stores"),
        ("zarrpy.api._array", "api"),
        ("zarrpy.nonexistent", None),
    ],
)
def test_layer_of(module, layer):
    assert layer_of(module) == layer
