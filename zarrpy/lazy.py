"""Lazy arrays (issue 12): nothing is read before it is needed, and what is
read lives in one capped, flushable :class:`zarrpy.cache.Cache`.

- :class:`VirtualArray`: ``closure()`` produces the data. A single-level
  getitem (slice, field name, ``np.newaxis``, 1-D mask or index array on the
  first axis) gives a new VirtualArray over a :class:`SlicedClosure`;
  everything else materialises.
- :class:`VirtualTable`: equal-length arrays as the fields of a table; a
  row selection is one node that every field shares.
- :class:`Step`: one recorded selection (``va.steps``, ``table.steps``).
- :func:`virtual`: a VirtualArray over a stored array (reading only the
  chunks a selection needs) or a VirtualTable over a group.

See docs/guide/lazy-arrays.md.
"""

from __future__ import annotations

from .api._lazy import PERSISTENT_KEY, SlicedClosure, VirtualArray
from .api._lazy_step import Step
from .api._lazy_stored import StoredClosure, virtual
from .api._lazy_table import VirtualTable

__all__ = ["PERSISTENT_KEY", "SlicedClosure", "Step", "StoredClosure", "VirtualArray", "VirtualTable", "virtual"]
