"""Griffe extension for the API reference: zarrpy's reST-ish docstring markup as Markdown.

zarrpy's docstrings are numpy style with reST inline markup, which
mkdocstrings would show as written. Before a docstring is parsed, this
rewrites its text:

- a Sphinx role (``:class:`~zarrpy.Array```, ``:func:`open_array```) becomes
  a cross-reference to the API page when the object is documented there, and
  plain code otherwise (an "optional" autoref: never a warning); ``~`` keeps
  the last name only, as in Sphinx;
- a doctest (``>>>`` lines and their output) becomes a ``pycon`` code block;
- a paragraph ending in ``::`` ends in ``:`` and the indented block after it
  becomes a code block;
- a simple reST table (``====  ====`` borders) becomes a Markdown table.

Loaded by ``mkdocs.yml`` (``extensions:`` of the python handler); it changes
nothing in zarrpy itself.
"""

from __future__ import annotations

import html
import re
from typing import Any

from griffe import Extension, Object

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([^`<>]+)`")
BORDER = re.compile(r"^( *)=+(?: +=+)+ *$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _identifier(obj: Object, target: str) -> str:
    """The full dotted path of ``target`` as written in ``obj``'s docstring."""
    target = target.lstrip(".")
    head, _, rest = target.partition(".")
    scope: Any = obj if obj.is_module or obj.is_class else obj.parent
    while scope is not None:
        try:
            path = scope.resolve(head)
        except Exception:  # noqa: BLE001 -- a name griffe cannot place: try the enclosing scope
            scope = scope.parent
            continue
        return f"{path}.{rest}" if rest else path
    return target


def _roles(obj: Object, text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        short, target = match.groups()
        title = target.rsplit(".", 1)[-1] if short else target
        identifier = html.escape(_identifier(obj, target), quote=True)
        return f'<autoref identifier="{identifier}" optional><code>{html.escape(title)}</code></autoref>'

    return ROLE.sub(replace, text)


def _table(lines: list[str], indent: int) -> list[str]:
    """A simple reST table (border lines included) as Markdown table lines."""
    spans = [m.span() for m in re.finditer(r"=+", lines[0])]
    starts = [s for s, _ in spans]
    borders = [i for i, line in enumerate(lines) if BORDER.match(line)]
    rows: list[list[str]] = []
    header: list[str] | None = None
    for i, line in enumerate(lines):
        if i in borders:
            if len(borders) == 3 and i == borders[1] and rows:
                header, rows = rows[0], []
            continue
        cells = [line[start : (starts[k + 1] if k + 1 < len(starts) else None)].strip()
                 for k, start in enumerate(starts)]
        if rows and not cells[0] and i - 1 not in borders:  # a continuation line
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells)]
        elif any(cells):
            rows.append(cells)
    pad = " " * indent
    out = ["| " + " | ".join(c.replace("|", r"\|") for c in (header or [""] * len(starts))) + " |",
           "|" + "---|" * len(starts)]
    out += ["| " + " | ".join(c.replace("|", r"\|") for c in row) + " |" for row in rows]
    return [pad + line for line in out]


def _markdown(obj: Object, text: str) -> str:
    """``text`` with doctests, ``::`` literal blocks, tables and roles as Markdown (roles outside code)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = _indent(line)
        if stripped.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][indent:] if _indent(lines[i]) >= indent else lines[i].strip())
                i += 1
            pad = " " * indent
            out += ["", pad + "```pycon", *(pad + b for b in block), pad + "```", ""]
            continue
        if BORDER.match(line):
            end = i + 1
            count = 1
            while end < len(lines) and count < 3:
                if BORDER.match(lines[end]):
                    count += 1
                    if count == 2 and (end + 1 >= len(lines) or not lines[end + 1].strip()):
                        break  # a table without a header row ends at its second border
                end += 1
            out += ["", *(_roles(obj, t) for t in _table(lines[i : end + 1], indent)), ""]
            i = end + 1
            continue
        if stripped.endswith("::") and not stripped.startswith(".."):
            out.append(_roles(obj, line[:-1]) if stripped != "::" else "")
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            block = []
            while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > indent):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            if block:
                inner = min(_indent(b) for b in block if b.strip())
                pad = " " * indent
                out += ["", pad + "```", *(pad + b[inner:] for b in block), pad + "```", ""]
                i = j
                continue
            i += 1
            continue
        out.append(_roles(obj, line))
        i += 1
    return "\n".join(out)


class RestMarkup(Extension):
    """Rewrite every docstring's reST markup once the object tree is built."""

    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _markdown(obj, obj.docstring.value)
