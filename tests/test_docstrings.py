"""Every public item of zarrpy has a docstring.

What "public" means here, precisely:

* **Modules**: every module of the ``zarrpy`` package (found with
  :func:`pkgutil.walk_packages`) whose dotted path has no segment starting with
  ``_``. ``zarrpy.api._array`` and ``zarrpy.__main__`` are private;
  ``zarrpy.codecs.gzip`` is public. A public module needs a module docstring.
* **Module-level items**: every name in a public module's ``__all__``; a module
  without ``__all__`` exports every name not starting with ``_`` that it
  *defines* (a class or function whose ``__module__`` is that module, or a
  top-level assignment in its source), not the names it imports. ``TypeVar``\\ s
  are typing plumbing, not API, and are left out.
* **Re-exports**: an item exported from a private module (``zarrpy.Array`` is
  ``zarrpy.api._array.Array``) is public all the same and is checked where it is
  defined, once, however many modules re-export it. Objects from outside
  zarrpy are not ours to document and are skipped.
* **Class members**: for a public class, every method, property, classmethod and
  staticmethod whose name does not start with ``_`` (so dunders, ``__init__``
  included, are out: the class docstring documents the constructor) and that is
  defined on the class itself. A member inherited from another public zarrpy
  class is checked once, at that base; one inherited from a *private* zarrpy
  base (``Array`` gets members from ``zarrpy.api._node``) is public through the
  public class and is checked on the private base, where it is defined.
  Nested public classes are public classes. Dataclass fields, enum members and
  other plain class attributes are data, not members, and are not checked.
* **Constants and type aliases** (non-callable items, such as
  ``zarrpy.core.paths.METADATA_KEY``) are documented the way Sphinx and
  mkdocstrings read them: a string literal right after the assignment in the
  module that assigns it.

An override documents itself through the base it overrides when that base is a
zarrpy class: the contract lives on the abstract method (``Codec.decode``) and
:func:`inspect.getdoc` and ``help()`` show it for every codec. Overrides of
methods from outside zarrpy (``Group.keys`` over ``Mapping.keys``) need their
own docstring, since the inherited one says nothing zarrpy-specific.

The test lists every offender in one failure, by qualified name (where the item
is defined), so one run shows all the work left.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
import sys
import textwrap
import types
import typing
from dataclasses import dataclass, field

import zarrpy


def _public_module_names() -> list[str]:
    names = ["zarrpy"]
    for info in pkgutil.walk_packages(zarrpy.__path__, "zarrpy."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def _is_ours(obj: object) -> bool:
    module = getattr(obj, "__module__", None)
    return isinstance(module, str) and (module == "zarrpy" or module.startswith("zarrpy."))


@functools.cache
def _tree(module_name: str) -> ast.Module | None:
    module = sys.modules[module_name]
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return None
    return ast.parse(source)


def _top_level_statements(body: list[ast.stmt]) -> typing.Iterator[ast.stmt]:
    """Top-level statements, looking into ``if``/``try`` blocks (conditional definitions)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _top_level_statements(node.body)
            yield from _top_level_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _top_level_statements(block)


def _assignments(module_name: str) -> dict[str, str | None]:
    """Names assigned at the top level of a module -> their attribute docstring (None if absent)."""
    tree = _tree(module_name)
    if tree is None:
        return {}
    found: dict[str, str | None] = {}
    statements = list(_top_level_statements(tree.body))
    for index, node in enumerate(statements):
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        else:
            continue
        doc = None
        following = statements[index + 1] if index + 1 < len(statements) else None
        if (
            isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            doc = following.value.value
        for target in targets:
            # A later documented assignment wins over an undocumented earlier one.
            if found.get(target) is None:
                found[target] = doc
    return found


def _has_doc(doc: object) -> bool:
    return isinstance(doc, str) and bool(doc.strip())


@dataclass
class _Survey:
    checked: set[str] = field(default_factory=set)
    offenders: set[str] = field(default_factory=set)
    seen: set[int] = field(default_factory=set)
    public_classes: set[type] = field(default_factory=set)

    def note(self, qualname: str, documented: bool) -> None:
        self.checked.add(qualname)
        if not documented:
            self.offenders.add(qualname)


def _exported_names(module: types.ModuleType) -> list[str]:
    exported = getattr(module, "__all__", None)
    if exported is not None:
        return list(exported)
    assigned = _assignments(module.__name__)
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or inspect.ismodule(value):
            continue
        if inspect.isclass(value) or _function(value) is not None:
            if value.__module__ == module.__name__ and value.__qualname__ == name:
                names.append(name)
        elif name in assigned and not isinstance(value, (typing.TypeVar, typing.ParamSpec)):
            names.append(name)
    return names


def _function(value: object) -> types.FunctionType | None:
    """``value`` as a plain function, seen through decorators such as ``functools.cache``."""
    try:
        unwrapped = inspect.unwrap(value) if callable(value) and not inspect.isclass(value) else value
    except ValueError:  # a __wrapped__ cycle
        return None
    return unwrapped if isinstance(unwrapped, types.FunctionType) else None


def _member_doc(member: object) -> object:
    if isinstance(member, (staticmethod, classmethod)):
        member = member.__func__
    return getattr(member, "__doc__", None)


def _is_checked_member(member: object) -> bool:
    if isinstance(member, (staticmethod, classmethod)):
        member = member.__func__
    return isinstance(member, (property, functools.cached_property)) or _function(member) is not None


def _documented_by_a_base(cls: type, name: str) -> bool:
    for base in cls.__mro__[1:]:
        if _is_ours(base) and name in vars(base) and _has_doc(_member_doc(vars(base)[name])):
            return True
    return False


def _public_classes_and_values(survey: _Survey) -> list[tuple[str, str, object]]:
    """(module name, exported name, value) for every public module-level item, public classes recorded."""
    items = []
    for module_name in _public_module_names():
        module = importlib.import_module(module_name)
        for name in _exported_names(module):
            value = getattr(module, name)
            items.append((module_name, name, value))
            if inspect.isclass(value) and _is_ours(value):
                survey.public_classes.add(value)
    # Nested public classes (``Outer.Inner``) are public classes too.
    pending = list(survey.public_classes)
    while pending:
        cls = pending.pop()
        for name, value in vars(cls).items():
            if (
                not name.startswith("_")
                and inspect.isclass(value)
                and _is_ours(value)
                and value.__qualname__.startswith(cls.__qualname__ + ".")
                and value not in survey.public_classes
            ):
                survey.public_classes.add(value)
                pending.append(value)
    return items


def _class_doc(cls: type) -> str | None:
    """The docstring written in the class's source: not the one ``dataclass``
    or ``NamedTuple`` make up from the fields when there is none."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return cls.__doc__
    node = ast.parse(source).body[0]
    return ast.get_docstring(node) if isinstance(node, ast.ClassDef) else cls.__doc__


def _check_class(survey: _Survey, cls: type) -> None:
    where = f"{cls.__module__}.{cls.__qualname__}"
    survey.note(where, _has_doc(_class_doc(cls)))
    # The class's own members, then those of its private zarrpy bases (not
    # overridden closer to the class): a public base is checked on its own.
    shadowed: set[str] = set()
    for owner in cls.__mro__:
        if owner is not cls and (not _is_ours(owner) or owner in survey.public_classes):
            shadowed.update(vars(owner))
            continue
        for name, member in vars(owner).items():
            if name.startswith("_") or name in shadowed or not _is_checked_member(member):
                continue
            qualname = f"{owner.__module__}.{owner.__qualname__}.{name}"
            documented = _has_doc(_member_doc(member)) or _documented_by_a_base(owner, name)
            survey.note(qualname, documented)
        shadowed.update(vars(owner))


def _constant_definition(module_name: str, name: str, value: object) -> tuple[str, str | None] | None:
    """The module that assigns ``name`` to this very value, and its attribute docstring."""
    candidates = [module_name] + sorted(m for m in sys.modules if m.startswith("zarrpy.") and m != module_name)
    for candidate in candidates:
        module = sys.modules.get(candidate)
        if module is None or getattr(module, name, _MISSING) is not value:
            continue
        assigned = _assignments(candidate)
        if name in assigned:
            return candidate, assigned[name]
    return None


_MISSING = object()


@functools.cache
def survey() -> _Survey:
    """Walk the public API once; returns every checked item and the undocumented ones."""
    result = _Survey()
    items = _public_classes_and_values(result)
    for module_name in _public_module_names():
        result.note(module_name, _has_doc(sys.modules[module_name].__doc__))
    for module_name, name, value in items:
        if inspect.isclass(value) or _function(value) is not None:
            if not _is_ours(value) or id(value) in result.seen:
                continue
            result.seen.add(id(value))
            if inspect.isclass(value):
                _check_class(result, value)
            else:
                result.note(f"{value.__module__}.{value.__qualname__}", _has_doc(value.__doc__))
        elif inspect.ismodule(value):
            continue  # a submodule: checked as a module
        else:
            definition = _constant_definition(module_name, name, value)
            if definition is None:
                result.note(f"{module_name}.{name} (no assignment found to read a docstring from)", False)
            else:
                defined_in, doc = definition
                result.note(f"{defined_in}.{name}", _has_doc(doc))
    # Nested public classes are reached only through their outer class.
    for cls in sorted(result.public_classes, key=lambda c: (c.__module__, c.__qualname__)):
        if id(cls) not in result.seen:
            result.seen.add(id(cls))
            _check_class(result, cls)
    return result


def test_every_public_item_has_a_docstring() -> None:
    result = survey()
    assert len(result.checked) > 300, "the walk found too little: is the definition of public still right?"
    missing = sorted(result.offenders)
    assert not missing, (
        f"{len(missing)} of {len(result.checked)} public items have no docstring "
        "(see this module's docstring for what counts as public):\n  " + "\n  ".join(missing)
    )


def test_the_survey_sees_what_it_should() -> None:
    """Guards the definition: known items are in, private and inherited ones are out."""
    checked = survey().checked
    assert "zarrpy.api._array.Array" in checked  # re-exported from a private module
    assert "zarrpy.api._array.Array.shape" in checked  # a property
    assert "zarrpy.codecs.gzip" in checked and "zarrpy.codecs.gzip.GzipCodec" in checked
    assert "zarrpy.core.paths.METADATA_KEY" in checked  # a constant in __all__
    assert not any(name.rsplit(".", 1)[-1].startswith("_") for name in checked)
    assert "zarrpy.api._array" not in checked and "zarrpy.__main__" not in checked
