"""Growable buffers: numpy rows and ragged elements whose size is apart from
their capacity (C++ ``std::vector``), so that reading window after window
into one buffer allocates once.

- :class:`GrowableArray`: rows of a fixed-size dtype; ``.nda`` is the view
  of the rows in use.
- :class:`GrowableRagged`: strings, bytes or 1-D numeric vectors as offsets
  plus flat values.

Fill them with :func:`zarrpy.iter_rows`, :func:`zarrpy.concat` or
``read_into``; see docs/guide/buffers.md. A view taken before a call that grows the
buffer may be stale: read ``.nda`` again after such a call.
"""

from __future__ import annotations

from .api._buffers import GrowableArray, GrowableRagged

__all__ = ["GrowableArray", "GrowableRagged"]
