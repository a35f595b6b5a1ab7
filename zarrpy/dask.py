"""Dask arrays over zarrpy arrays: :func:`from_zarr` reads, :func:`to_zarr` writes.

Needs the ``dask`` extra (``pip install 'zarrpy[dask]'``). Names and
arguments follow ``dask.array.from_zarr`` / ``to_zarr``; the user guide is
``docs/guide/dask.md``.

>>> import dask.array as da, zarrpy, zarrpy.dask
>>> z = zarrpy.create_array({}, shape=(6, 6), dtype="int32", chunks=(1, 3), shards=(2, 3))
>>> zarrpy.dask.to_zarr(da.ones((6, 6), dtype="int32", chunks=(2, 3)), z)
>>> x = zarrpy.dask.from_zarr(z)  # dask chunks: one shard each
>>> x.chunks
((2, 2, 2), (3, 3))
>>> int(x.sum().compute(scheduler="threads"))
36
"""

from __future__ import annotations

from .tools.dask_io import from_array, from_zarr, to_array, to_zarr, write_unit

__all__ = ["from_array", "from_zarr", "to_array", "to_zarr", "write_unit"]
