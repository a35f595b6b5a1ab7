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


STRUCT_LEAF_CODES: tuple[str, ...] = (
    "?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16",
    "M8[ns]", "M8[D]", "m8[s]", "S3", "U2", "V2",
)
"""numpy type codes of the struct fields :func:`structured_dtypes` draws."""


def structured_dtypes(*, max_fields: int = 4, max_depth: int = 2, subarrays: bool = False) -> st.SearchStrategy[np.dtype]:
    """Packed numpy structured dtypes: fields of :data:`STRUCT_LEAF_CODES` with a
    random byte order each (``<`` or ``>``), nested structs up to ``max_depth``
    levels, and subarray fields (Zarr V2 only) when ``subarrays``."""
    leaf = st.tuples(st.sampled_from(STRUCT_LEAF_CODES), st.sampled_from("<>")).map(
        lambda t: np.dtype(t[0]).newbyteorder(t[1])
    )
    shapes_ = st.sampled_from([(), (2,), (1, 3)]) if subarrays else st.just(())

    def level(depth: int) -> st.SearchStrategy[np.dtype]:
        child = leaf if depth <= 1 else st.one_of(leaf, leaf, level(depth - 1))
        field = st.tuples(st.text(alphabet="abxyz_", min_size=1, max_size=3), child, shapes_)
        return st.lists(field, min_size=1, max_size=max_fields, unique_by=lambda f: f[0]).map(
            lambda fs: np.dtype([(n, d, shape) if shape else (n, d) for n, d, shape in fs])
        )

    return level(max_depth)


def struct_arrays(dtype: np.dtype, shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """Arrays of struct ``dtype`` with random bits in every field (NaN payloads,
    NaT, any raw bytes), except that bool fields hold 0/1 and UTF-32 fields
    valid text (hypothesis has no strategy for structs with raw-bytes fields)."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize

    def build(args: tuple[bytes, int]) -> np.ndarray:
        raw, seed = args
        arr = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        _tidy_fields(arr, np.random.default_rng(seed))
        return arr

    return st.tuples(st.binary(min_size=nbytes, max_size=nbytes), st.integers(0, 2**32 - 1)).map(build)


def _tidy_fields(arr: np.ndarray, rng: np.random.Generator) -> None:
    for name in arr.dtype.names or ():
        sub = arr[name]
        if sub.dtype.names is not None:
            _tidy_fields(sub, rng)
        elif sub.dtype.kind == "b":
            arr[name] = rng.integers(0, 2, size=sub.shape).astype(bool)
        elif sub.dtype.kind == "U":
            words = np.array(["", "a", "é", "日本", "xyz"[: sub.dtype.itemsize // 4]], dtype=sub.dtype)
            arr[name] = rng.choice(words, size=sub.shape)


@st.composite
def array_layouts(draw, max_side: int = 8) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...] | None]:
    """(shape, chunks, shards) of an array: 1-3 dimensions, sharded (shards
    of 1-2 chunks per dimension) or not."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, max_side)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, s)) for s in shape)
    shards = tuple(c * draw(st.integers(1, 2)) for c in chunks) if draw(st.booleans()) else None
    return shape, chunks, shards


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
    "struct_arrays",
    "structured_dtypes",
]
