"""What the installed interop oracles can do, for tests that need a newer one.

zarr-python 3.1 (the newest release for Python 3.11) has no ``struct`` data
type and refuses nested V2 structured dtypes; the ``struct`` interop tests
need the zarr-python that pip installs on Python 3.12 (3.4 and newer). CI runs
the suite on 3.12, so these tests run there.
"""

from __future__ import annotations

import pytest


def zarr_python_has_struct() -> bool:
    """True if the installed zarr-python reads and writes zarr-python 3.4's ``struct``."""
    try:
        from zarr.core.dtype.npy.structured import Struct  # noqa: F401
    except ImportError:
        return False
    return True


needs_zarr_struct = pytest.mark.skipif(
    not zarr_python_has_struct(),
    reason="this zarr-python has no 'struct' data type (zarr-python 3.1, the newest for Python 3.11); "
    "runs with zarr-python >= 3.4 (Python 3.12)",
)
