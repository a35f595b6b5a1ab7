"""The public API is typed precisely: no bare ``Any`` where the type is known.

Checked: every function in ``zarrpy.__all__`` and ``zarrpy.stores.__all__``,
and every public method and property (plus ``__init__``, ``__getitem__`` and
``__setitem__``) of the classes there, including what they inherit from
zarrpy's private bases (``Array`` and ``Group`` get ``attrs``, ``path``... from
``zarrpy.api._node.Node``). Annotations are resolved with
:func:`typing.get_type_hints`, so an alias that is ``Any`` underneath counts
as ``Any``. A parameter or return annotated ``Any`` fails the test unless it is
in :data:`ALLOWED` with the reason anything really goes there.

The aliases users write the same types with are :mod:`zarrpy.typing`.
"""

from __future__ import annotations

import builtins
import inspect
import sys
import typing
from typing import Any

import zarrpy
import zarrpy.stores

# (qualified name, parameter or "return") -> why Any is the honest type.
_READ = "a read returns a numpy array or a numpy scalar depending on the selection's value, as numpy's own " \
        "ndarray.__getitem__ is typed (Any): a union would make every caller narrow it"
_FILL = "a fill value is one element of any data type, plugin families included: its Python type is the family's"
_FORWARDED = "keywords forwarded unchanged to a function whose own parameters are typed (named in the docstring)"
_NUMPY = "arguments and result of the numpy function it forwards to (numpy types them per overload)"
_LAZY = "a VirtualArray's data is whatever its closure returns (numpy, RaggedArray, a stored array's reads)"
_FOREIGN = "another library's store object or options, typed by that optional package (not imported to type it)"
ALLOWED: dict[tuple[str, str], str] = {
    **{(f"Array.{m}", "return"): _READ for m in (
        "__getitem__", "get_basic_selection", "get_orthogonal_selection", "get_coordinate_selection",
        "get_mask_selection", "get_vectorized_selection", "read", "get_block_selection", "get_inner_block_selection")},
    ("Array.fill_value", "return"): _FILL,
    ("GrowableArray.__getitem__", "return"): _READ,
    **{(f, "fill_value"): _FILL for f in ("create_array", "create", "full", "from_array")},
    ("DataType.default_fill", "return"): _FILL,
    ("DataType.fill_from_json", "return"): _FILL,
    ("DataType.fill_to_json", "value"): _FILL,
    ("DataType.coerce_fill", "value"): _FILL,
    ("DataType.coerce_fill", "return"): _FILL,
    **{(f"DataTypeFamily.{m}", p): _FILL for m, p in (
        ("default_fill", "return"), ("fill_from_json", "return"), ("fill_to_json", "value"),
        ("fill_from_v2", "return"), ("fill_to_v2", "value"), ("coerce_fill", "value"), ("coerce_fill", "return"))},
    **{(f, "kwargs"): _FORWARDED for f in (
        "create", "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like", "array",
        "open", "open_consolidated", "Group.require_array", "Group.create_array")},
    ("open_array", "create_kwargs"): _FORWARDED,
    **{(f"VirtualArray.{m}", p): _NUMPY for m in ("sum", "mean", "min", "max", "any", "all")
       for p in ("args", "kwargs", "return")},
    **{(f"VirtualArray.{m}", p): _LAZY for m, p in (
        ("__getitem__", "key"), ("__getitem__", "return"), ("materialize", "return"), ("tolist", "return"))},
    ("ZarrPythonStore.__init__", "store"): _FOREIGN,
    ("ObjectStore.__init__", "store"): _FOREIGN,
    ("ObjectStore.from_url", "options"): _FOREIGN,
}

_EXTRA_DUNDERS = ("__init__", "__getitem__", "__setitem__")


def _namespace() -> dict[str, Any]:
    """Names to resolve annotations that modules import only under TYPE_CHECKING."""
    names: dict[str, Any] = {}
    for name, module in list(sys.modules.items()):
        if name == "zarrpy" or name.startswith("zarrpy."):
            # Not submodules (zarrpy.codecs.bytes would shadow the builtin
            # ``bytes``), and never a builtin's name.
            names.update({k: v for k, v in vars(module).items()
                          if not k.startswith("__") and not inspect.ismodule(v) and not hasattr(builtins, k)})
    return names


def _callables() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for package in (zarrpy, zarrpy.stores):
        for name in package.__all__:
            value = getattr(package, name)
            if inspect.isfunction(value):
                found.setdefault(name, value)
            elif inspect.isclass(value) and value.__module__.startswith("zarrpy"):
                for owner in value.__mro__:
                    if not owner.__module__.startswith("zarrpy"):
                        continue
                    for attr, member in vars(owner).items():
                        if attr.startswith("_") and attr not in _EXTRA_DUNDERS:
                            continue
                        if isinstance(member, (staticmethod, classmethod)):
                            member = member.__func__
                        if isinstance(member, property):
                            member = member.fget
                        if inspect.isfunction(member):
                            found.setdefault(f"{name}.{attr}", member)
    return found


def bare_any() -> list[str]:
    """``name(param)`` for every public parameter or return annotated ``Any``."""
    namespace = _namespace()
    offenders = []
    for qualname, function in sorted(_callables().items()):
        hints = typing.get_type_hints(function, globalns={**namespace, **function.__globals__})
        for param, hint in hints.items():
            if hint is Any and (qualname, param) not in ALLOWED:
                offenders.append(f"{qualname}({param})")
    return offenders


def test_public_signatures_have_no_bare_any() -> None:
    offenders = bare_any()
    assert not offenders, (
        f"{len(offenders)} public parameters or returns are typed Any (use a zarrpy.typing alias, "
        "or add them to ALLOWED with the reason):\n  " + "\n  ".join(offenders)
    )


def test_allow_list_is_short_and_current() -> None:
    """Every allowed entry still exists and is still Any: a stale entry would hide a regression."""
    namespace = _namespace()
    callables = _callables()
    assert len(ALLOWED) <= 70, "the allow-list is meant to stay short: type the items instead"
    for (qualname, param), reason in ALLOWED.items():
        assert reason
        if qualname not in callables:
            # Only entries of optional stores may be absent (their module may not be exported yet).
            assert qualname.split(".")[0] in ("ZarrPythonStore", "ObjectStore"), f"{qualname} is not public"
            continue
        hints = typing.get_type_hints(callables[qualname], globalns={**namespace, **callables[qualname].__globals__})
        assert hints.get(param) is Any, f"{qualname}({param}) is typed now: drop it from ALLOWED"


def test_store_like_alias_is_what_open_takes() -> None:
    from zarrpy.typing import StoreLike

    hints = typing.get_type_hints(zarrpy.open_array, globalns=_namespace())
    assert hints["store"] == StoreLike
