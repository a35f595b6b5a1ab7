"""Shared hypothesis strategies and comparison helpers for zarrpy tests.

Import as ``from tests.strategies import core_dtypes, arrays_of`` (the test
command, ``python3 -m pytest`` from the repository root, puts the root on
``sys.path``). Shapes are small on purpose: the whole suite must run in
minutes on two cores.

- :func:`core_dtypes`: numpy dtypes of the Zarr V3 core data types.
- :func:`shapes`: array shapes with up to ``max_dims`` dimensions, sides
  0..``max_side`` (so empty arrays and 0-d arrays come up).
- :func:`arrays_of`: arrays of one dtype with every value numpy allows
  (NaN payloads, -0.0, infinities, subnormals, extreme integers).
- :func:`dtypes_and_arrays`: a random core dtype and an array of it.
- :func:`permutations_of`: a dimension order for an ``ndim``-dimensional array.
- :func:`assert_identical`: dtype, shape and every bit equal.
- :func:`spec_for` and :func:`chain_round_trip`: run an array through a
  codec chain (V3 JSON list or codec objects) and back.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.core.dtypes import DataType

CORE_DTYPE_NAMES: tuple[str, ...] = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
"""The V3 core data type names, which are also their numpy names."""


def core_dtypes() -> st.SearchStrategy[np.dtype]:
    """Native-order numpy dtypes of the V3 core data types."""
    return st.sampled_from([np.dtype(name) for name in CORE_DTYPE_NAMES])


def shapes(*, min_dims: int = 0, max_dims: int = 3, min_side: int = 0, max_side: int = 6) -> st.SearchStrategy[tuple[int, ...]]:
    """Small array shapes; with the defaults incl. ``()`` and sides of 0."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def arrays_of(dtype, shape=None) -> st.SearchStrategy[np.ndarray]:
    """Arrays of ``dtype`` (a dtype or a strategy of dtypes).

    ``shape`` is a shape, a strategy of shapes, or None for :func:`shapes`.
    Elements cover the dtype's whole range, NaN/inf/-0.0 included.
    """
    return hnp.arrays(dtype, shapes() if shape is None else shape)


def dtypes_and_arrays(shape=None) -> st.SearchStrategy[np.ndarray]:
    """An array of a random core dtype (read the dtype from ``.dtype``)."""
    return core_dtypes().flatmap(lambda dt: arrays_of(dt, shape))


def permutations_of(ndim: int) -> st.SearchStrategy[list[int]]:
    """A permutation of ``range(ndim)`` (a transpose ``order``)."""
    return st.permutations(list(range(ndim)))


def assert_identical(actual: np.ndarray, expected: np.ndarray) -> None:
    """Assert equal dtype, shape and bits (NaN payloads and -0.0 included)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    assert np.ascontiguousarray(actual).tobytes() == np.ascontiguousarray(expected).tobytes(), (
        f"bits differ:\n{actual!r}\n!=\n{expected!r}"
    )


def spec_for(array: np.ndarray, fill_value=None) -> ChunkSpec:
    """The chunk spec of ``array`` (shape, data type, fill value)."""
    dtype = DataType.from_numpy(array.dtype)
    return ChunkSpec(array.shape, dtype, dtype.coerce_fill(fill_value))


def chain_round_trip(codecs, array: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Encode ``array`` with ``codecs`` and decode it again.

    Returns the encoded bytes and the decoded array; the caller compares.
    """
    bound = CodecChain.from_json(codecs).bind(spec_for(array))
    encoded = bound.encode(ArrayBytes.from_array(array))
    return encoded, bound.decode(encoded).array


__all__ = [
    "CORE_DTYPE_NAMES",
    "arrays_of",
    "assert_identical",
    "chain_round_trip",
    "core_dtypes",
    "dtypes_and_arrays",
    "permutations_of",
    "shapes",
    "spec_for",
]
