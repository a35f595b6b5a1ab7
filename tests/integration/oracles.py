"""What the installed interop oracles can do, for tests that need a newer one.

zarr-python 3.1 (the newest release for Python 3.11) has no ``struct`` data
type (and refuses nested V2 structured dtypes), no ``cast_value`` or
``scale_offset`` codec and no sharding ``subchunk_write_order``; the interop
tests of those need the zarr-python that pip installs on Python 3.12 (3.4
and newer). CI runs the suite on 3.12, so these tests run there.
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


def zarr_python_has_write_orders() -> bool:
    """True if the installed zarr-python's sharding codec takes ``subchunk_write_order``."""
    try:
        import inspect

        from zarr.codecs import ShardingCodec
    except ImportError:
        return False
    return "subchunk_write_order" in inspect.signature(ShardingCodec.__init__).parameters


def zarr_python_has_value_codecs() -> bool:
    """True if the installed zarr-python has the ``cast_value`` and ``scale_offset`` codecs."""
    try:
        from zarr.registry import get_codec_class

        get_codec_class("cast_value")
        get_codec_class("scale_offset")
    except Exception:  # noqa: BLE001 - ImportError or zarr-python's "not available" error
        return False
    return True


_OLD = "(zarr-python 3.1, the newest for Python 3.11); runs with zarr-python >= 3.4 (Python 3.12)"
needs_zarr_write_orders = pytest.mark.skipif(
    not zarr_python_has_write_orders(), reason="this zarr-python has no subchunk_write_order " + _OLD)
needs_zarr_value_codecs = pytest.mark.skipif(
    not zarr_python_has_value_codecs(), reason="this zarr-python has no cast_value / scale_offset " + _OLD)
