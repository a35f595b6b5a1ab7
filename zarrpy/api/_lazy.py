"""VirtualArray: an array whose data a closure produces on demand (issue 12).

The model is awkward's VirtualArray. ``closure()`` makes the data; a
VirtualArray holds only the closure, the shape, the dtype and a persistent
key, never data. A single-level getitem (a slice, a field name,
``np.newaxis``, a 1-D mask or index array on the first axis) materialises
nothing: it returns a new VirtualArray whose closure is a
:class:`SlicedClosure` over this one. Everything else (an integer, ``...``,
a tuple, ``np.asarray``, arithmetic, ufuncs, comparisons, reductions)
materialises and returns plain numpy (or RaggedArray) data.

Materialised data lives in one place: a root's ``cache``
(:class:`zarrpy.cache.Cache`) keeps ``closure()`` under the persistent key;
a sliced VirtualArray has no cache and re-applies its chain to its parent's
data. Without a cache nothing is kept: materialising twice runs the closure
twice.

>>> import numpy as np
>>> calls = []
>>> va = VirtualArray(lambda: calls.append(1) or np.arange(10), (10,), np.dtype("i8"))
>>> sel = va[2:8][np.array([True, False] * 3)]
>>> sel.shape, sel.slices[0], len(calls)
((3,), slice(2, 8, None), 0)
>>> (sel + 1).tolist(), len(calls)
([3, 5, 7], 1)
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from numpy.lib.mixins import NDArrayOperatorsMixin

from ..core._typing import Shape
from ..errors import SelectionError
from ._lazy_step import ROW_KINDS, Step

if TYPE_CHECKING:
    from ._cache import Cache

PERSISTENT_KEY = "__persistent_key__"
"""The :attr:`VirtualArray.parameters` entry that names the data in a cache (awkward's name)."""


class SlicedClosure:
    """The closure of a VirtualArray made by a single-level getitem: the
    ``parent``'s data with one :class:`~zarrpy.api._lazy_step.Step` applied.

    When the chain above it leads, through arrays without a cache of their
    own, to a root whose closure reads rows at the source
    (``closure.read_rows(rows)``, as the reader of a stored array does), the
    leading row selections (slices, masks, index arrays) are composed into
    one set of root rows for that read alone, so only the chunks holding
    selected rows are read; the steps after them apply in memory. The chain
    itself stays one node a step. Otherwise the parent is materialised and
    the step applied in memory.
    """

    __slots__ = ("parent", "step")

    def __init__(self, parent: VirtualArray, step: Step):
        self.parent = parent
        self.step = step

    def __call__(self) -> Any:
        steps = [self.step]
        node = self.parent
        while isinstance(node.closure, SlicedClosure) and node.cache is None:
            steps.append(node.closure.step)
            node = node.closure.parent
        steps.reverse()
        read_rows = getattr(node.closure, "read_rows", None)
        leading = next((i for i, step in enumerate(steps) if step.kind not in ROW_KINDS), len(steps))
        if read_rows is None or node.cache is not None or not leading or not node.shape:
            return self.step.apply(self.parent.materialize())
        data = read_rows(_compose_rows(steps[:leading], node.shape[0]))
        for step in steps[leading:]:
            data = step.apply(data)
        return data

    def __reduce__(self) -> tuple[Any, ...]:
        return (SlicedClosure, (self.parent, self.step))

    def __repr__(self) -> str:
        return f"SlicedClosure({self.step!r} of {self.parent!r})"


class VirtualArray(NDArrayOperatorsMixin):
    """An array of known ``shape`` and ``dtype`` whose data ``closure()`` makes.

    The cache is not pickled; the closure is (a VirtualArray pickles only if
    its closure does).

    Parameters
    ----------
    closure
        Called with no arguments each time the data is needed; returns a
        numpy array (or RaggedArray) of ``shape``.
    cache
        A :class:`zarrpy.cache.Cache`: ``closure()``'s result is kept there
        under the persistent key, so later reads (from this object, a copy,
        or one rebuilt with the same key) skip the closure.
        ``cache.clear()`` frees it.
    persistent_key
        Names the data in the cache, across processes and sessions; it is
        ``parameters["__persistent_key__"]``. With a cache and no key, a
        random key is made (good for this object and its pickles only).
    """

    __array_priority__ = 20

    def __init__(
        self,
        closure: Callable[[], Any],
        shape: Iterable[int],
        dtype: npt.DTypeLike,
        *,
        cache: Cache | None = None,
        persistent_key: Hashable | None = None,
    ):
        if not callable(closure):
            raise TypeError(f"closure must be callable, got {type(closure).__name__}")
        if cache is not None and persistent_key is None:
            persistent_key = f"virtual-{uuid.uuid4().hex}"
        self._closure = closure
        self._shape: Shape = tuple(int(s) for s in shape)
        self._dtype = np.dtype(dtype)
        self._cache = cache
        self._parameters: dict[str, Any] = {PERSISTENT_KEY: persistent_key}

    # -- description (never materialises) ------------------------------
    @property
    def closure(self) -> Callable[[], Any]:
        """The function that makes the data (a :class:`SlicedClosure` for a sliced array)."""
        return self._closure

    @property
    def shape(self) -> Shape:
        """The data's shape, known without materialising."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The element dtype (``object`` for ragged stored arrays, whose data is a RaggedArray)."""
        return self._dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self._shape, dtype=np.int64))

    @property
    def cache(self) -> Cache | None:
        """Where this array's materialised data is kept (None for a sliced
        array, and for one over a stored array: its chunks are cached by the array)."""
        return self._cache

    @property
    def parameters(self) -> dict[str, Any]:
        """A copy of the parameters: ``"__persistent_key__"`` (None for a sliced array)."""
        return dict(self._parameters)

    @property
    def persistent_key(self) -> Hashable | None:
        """The key the data is cached under (``parameters["__persistent_key__"]``);
        None for a sliced array or a root without a cache and no key given."""
        key: Hashable | None = self._parameters[PERSISTENT_KEY]
        return key

    @property
    def parent(self) -> VirtualArray | None:
        """The array a single-level getitem made this one from, or None for a root."""
        closure = self._closure
        return closure.parent if isinstance(closure, SlicedClosure) else None

    @property
    def root(self) -> VirtualArray:
        """The first array of the chain (itself when not sliced)."""
        node = self
        while (parent := node.parent) is not None:
            node = parent
        return node

    @property
    def steps(self) -> tuple[Step, ...]:
        """The chain's steps, root-first."""
        steps = []
        node = self
        while isinstance(node._closure, SlicedClosure):
            steps.append(node._closure.step)
            node = node._closure.parent
        return tuple(reversed(steps))

    @property
    def slices(self) -> tuple[Any, ...]:
        """The chain as Python selections, root-first: a ``slice``, a field
        name, None (new axis) or the index array, one per getitem, so that
        ``root[s0][s1]…`` (or :meth:`apply`) rebuilds it."""
        return tuple(step.key for step in self.steps)

    def __repr__(self) -> str:
        sliced = isinstance(self._closure, SlicedClosure)
        chain = f" after {len(self.steps)} selections of {self.root.persistent_key!r}" if sliced else ""
        key = "" if sliced else f" key={self.persistent_key!r}"
        return f"<zarrpy.VirtualArray shape={self._shape} dtype={self._dtype}{key}{chain}>"

    # -- lazy selections -----------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        """A single-level selection (slice, field name, ``None``, 1-D mask or
        index array on the first axis) gives a new VirtualArray and reads
        nothing; any other key materialises and returns the data's ``[key]``."""
        if isinstance(key, VirtualArray):
            key = key.materialize()
        step = Step.parse(key, self._shape, self._dtype)
        if step is None:
            return self._materialized_item(key)
        return self._derive(step)

    def _derive(self, step: Step) -> VirtualArray:
        shape, dtype = step.result(self._shape, self._dtype)
        return VirtualArray(SlicedClosure(self, step), shape, dtype)

    def apply(self, slices: Iterable[Any]) -> VirtualArray:
        """This array after the single-level selections ``slices`` (as
        :attr:`slices` gives them), one getitem each.

        Raises SelectionError for a selection that is not single-level.
        """
        node = self
        for key in slices:
            step = Step.parse(key, node._shape, node._dtype)
            if step is None:
                raise SelectionError(f"{key!r} is not a single-level selection (a slice, field name, None, "
                                     "or a 1-D mask or index array)")
            node = node._derive(step)
        return node

    @classmethod
    def from_slices(cls, root: VirtualArray, slices: Iterable[Any]) -> VirtualArray:
        """``root.apply(slices)``: the chain ``root[s0][s1]…`` rebuilt."""
        return root.apply(slices)

    # -- materialising --------------------------------------------------
    def materialize(self) -> Any:
        """The data: from the cache, else ``closure()`` (stored in the cache if there is one).

        A numpy result kept in the cache is a read-only view, shared by every
        reader. Raises ValueError naming this array if the closure's result
        does not have the declared shape.
        """
        if self._cache is not None:
            data = self._cache.get_or_load(self.persistent_key, self._load_shared)
        else:
            data = self._closure()
        got = tuple(getattr(data, "shape", np.shape(data)))
        if got != self._shape:
            raise ValueError(f"the closure of {self!r} returned data of shape {got}")
        return data

    def _load_shared(self) -> Any:
        """``closure()`` as the cache keeps it: a numpy result becomes a
        read-only view (the closure's own array keeps its flags), so no
        reader can change what the others get."""
        data = self._closure()
        if isinstance(data, np.ndarray):
            data = data.view()
            data.setflags(write=False)
        return data

    def _materialized_item(self, key: Any) -> Any:
        """``self[key]`` for a key that is not single-level: the root's reader
        takes it when this is an unsliced root without a cache (a stored array
        reads only what ``key`` touches), else the data is indexed in memory."""
        read_item = getattr(self._closure, "read_item", None)
        if read_item is not None and self._cache is None:
            done, value = read_item(key)
            if done:
                return value
        return self.materialize()[key]

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        data = self.materialize()
        if not isinstance(data, np.ndarray):
            out: np.ndarray = data.__array__(dtype, copy)  # RaggedArray: an object array
            return out
        return np.array(data, dtype=dtype, copy=True) if copy else np.asarray(data, dtype=dtype)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if any(isinstance(x, VirtualArray) for x in kwargs.get("out", ())):
            raise TypeError(f"{ufunc.__name__}(out=...): a VirtualArray holds no data to write into")
        inputs = tuple(_concrete(x) for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return func(*_concrete_all(args), **_concrete_all(kwargs))

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d VirtualArray")
        return self._shape[0]

    def __iter__(self) -> Iterator[Any]:
        # One materialisation, not one per element (Python's fallback calls __getitem__(i)).
        if not self._shape:
            raise TypeError("iteration over a 0-d VirtualArray")
        return iter(self.materialize())

    def __bool__(self) -> bool:
        return bool(np.asarray(self))

    def tolist(self) -> Any:
        """The materialised data as nested Python lists (numpy's ``tolist``)."""
        data = self.materialize()
        return data.to_list() if hasattr(data, "to_list") else data.tolist()

    def sum(self, *args: Any, **kwargs: Any) -> Any:
        """``numpy.sum`` of the materialised data (same arguments)."""
        return np.sum(np.asarray(self), *args, **kwargs)

    def mean(self, *args: Any, **kwargs: Any) -> Any:
        """``numpy.mean`` of the materialised data (same arguments)."""
        return np.mean(np.asarray(self), *args, **kwargs)

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """``numpy.min`` of the materialised data (same arguments)."""
        return np.min(np.asarray(self), *args, **kwargs)

    def max(self, *args: Any, **kwargs: Any) -> Any:
        """``numpy.max`` of the materialised data (same arguments)."""
        return np.max(np.asarray(self), *args, **kwargs)

    def any(self, *args: Any, **kwargs: Any) -> Any:
        """``numpy.any`` of the materialised data (same arguments)."""
        return np.any(np.asarray(self), *args, **kwargs)

    def all(self, *args: Any, **kwargs: Any) -> Any:
        """``numpy.all`` of the materialised data (same arguments)."""
        return np.all(np.asarray(self), *args, **kwargs)

    # -- pickling ---------------------------------------------------------
    def __reduce__(self) -> tuple[Any, ...]:
        if isinstance(self._closure, SlicedClosure):
            return (_sliced, (self._closure.parent, self._closure.step))
        return (_root, (self._closure, self._shape, self._dtype, self.persistent_key))


def _compose_rows(steps: list[Step], n: int) -> slice | np.ndarray:
    """The root rows that row selections ``steps`` applied one after another
    pick from ``n`` rows: a slice while they are slices (a ``range`` composes
    them exactly), else an index array."""
    rows: range | np.ndarray = range(n)
    for step in steps:
        if step.kind == "slice" and isinstance(rows, range):
            rows = rows[step.key]
        else:
            rows = np.asarray(rows, dtype=np.int64)[step.key]
    if isinstance(rows, range):
        if rows.step > 0:
            return slice(rows.start, rows.stop, rows.step)
        rows = np.asarray(rows, dtype=np.int64)
    return rows


def _concrete(x: Any) -> Any:
    return x.materialize() if isinstance(x, VirtualArray) else x


def _concrete_all(x: Any) -> Any:
    """``x`` with every VirtualArray inside (lists, tuples, dict values) materialised."""
    if isinstance(x, VirtualArray):
        return x.materialize()
    if isinstance(x, (list, tuple)):
        return type(x)(_concrete_all(item) for item in x)
    if isinstance(x, dict):
        return {k: _concrete_all(v) for k, v in x.items()}
    return x


def _root(closure: Callable[[], Any], shape: Shape, dtype: np.dtype, key: Hashable | None) -> VirtualArray:
    return VirtualArray(closure, shape, dtype, persistent_key=key)


def _sliced(parent: VirtualArray, step: Step) -> VirtualArray:
    return parent._derive(step)


__all__ = ["PERSISTENT_KEY", "SlicedClosure", "VirtualArray"]
