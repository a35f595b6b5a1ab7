"""xarray integration: ``engine="zarrpy"`` and :func:`to_zarrpy` (needs ``zarrpy[xarray]``).

>>> import numpy as np, xarray as xr, zarrpy
>>> from zarrpy.xarray import open_dataset, to_zarrpy
>>> ds = xr.Dataset({"t": (("time", "x"), np.zeros((3, 4)), {"units": "K"})},
...                 coords={"x": [10, 20, 30, 40]})
>>> store = zarrpy.stores.MemoryStore()
>>> _ = to_zarrpy(ds, store)                        # as ds.to_zarr(store) lays it out
>>> back = open_dataset(store)                      # xr.open_dataset(store, engine="zarrpy")
>>> back["t"].attrs, back["t"].dims
({'units': 'K'}, ('time', 'x'))

The engine is found by xarray through the ``xarray.backends`` entry point, so
``xr.open_dataset(path, engine="zarrpy")`` needs no import. See
docs/guide/xarray.md.
"""

from __future__ import annotations

from .tools.xarray_backend import ZarrpyBackendArray, ZarrpyBackendEntrypoint, ZarrpyDataStore, open_dataset
from .tools.xarray_writer import to_zarrpy

__all__ = ["ZarrpyBackendArray", "ZarrpyBackendEntrypoint", "ZarrpyDataStore", "open_dataset", "to_zarrpy"]
