"""``Array.stored_chunk_keys()`` is sorted by chunk coordinates (row-major)
on every store, whatever order the store lists its keys in."""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrpy
from zarrpy.stores import FsspecStore, LocalStore, MemoryStore, ZipStore
from zarrpy.stores.abc import Store


class ShuffledStore(MemoryStore):
    """A memory store that lists its keys in a new random order every time."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self._rng = random.Random(seed)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        keys = list(super().list_prefix(prefix))
        self._rng.shuffle(keys)
        return iter(keys)


def _key(coords: tuple[int, ...], separator: str, zarr_format: int) -> str:
    """The chunk key as the spec encodes it (independent of zarrpy's encoder)."""
    body = separator.join(str(c) for c in coords)
    return body if zarr_format == 2 else f"c{separator}{body}"


def _store(kind: str, tmp_path: Path) -> Store:
    if kind == "memory":
        return MemoryStore()
    if kind == "shuffled":
        return ShuffledStore(seed=7)
    if kind == "local":
        return LocalStore(tmp_path / f"{uuid.uuid4().hex}.zarr")
    if kind == "zip":
        return ZipStore(tmp_path / f"{uuid.uuid4().hex}.zip", mode="w")
    return FsspecStore.from_url(f"memory://keys-{uuid.uuid4().hex}")


def _write(store: Store, coords: list[tuple[int, ...]], *, shape: tuple[int, ...], chunks: tuple[int, ...],
           zarr_format: int, separator: str, shards: tuple[int, ...] | None = None) -> zarrpy.Array:
    kwargs: dict[str, Any] = {"zarr_format": zarr_format}
    if zarr_format == 2:
        kwargs["dimension_separator"] = separator
    else:
        kwargs["chunk_key_encoding"] = {"name": "default", "separator": separator}
        kwargs["shards"] = shards
    a = zarrpy.create_array(store, shape=shape, dtype="int16", chunks=chunks, fill_value=0, **kwargs)
    order = list(coords)
    random.Random(len(order)).shuffle(order)  # written in no particular order
    a.write_chunks({c: np.ones(chunks, "int16") for c in order})
    return a


@pytest.mark.parametrize("kind", ["memory", "shuffled", "local", "zip", "fsspec-memory"])
def test_keys_are_sorted_by_coordinates_on_every_store(kind: str, tmp_path: Path) -> None:
    # 12 x 12 chunks: "c/10/..." sorts before "c/2/..." as text, after it by coordinates.
    coords = [(i, j) for i in range(12) for j in range(12) if (i * 5 + j) % 3 == 0]
    store = _store(kind, tmp_path)
    a = _write(store, coords, shape=(24, 24), chunks=(2, 2), zarr_format=3, separator="/")
    assert a.stored_chunk_keys() == [_key(c, "/", 3) for c in sorted(coords)]
    assert a.stored_chunk_keys() != sorted(a.stored_chunk_keys())  # not text order: 10 after 2


def test_a_sharded_array_lists_its_shards_in_grid_order() -> None:
    coords = [(3, 0), (0, 11), (10, 2), (2, 2)]
    a = _write(ShuffledStore(seed=1), coords, shape=(48, 48), chunks=(2, 2), shards=(4, 4), zarr_format=3,
               separator="/")
    # write_chunks takes inner chunk coordinates; each falls in shard coords // 2
    assert a.stored_chunk_keys() == [_key(c, "/", 3) for c in sorted({(i // 2, j // 2) for i, j in coords})]


@settings(max_examples=40)
@given(
    grid=st.tuples(st.integers(1, 13), st.integers(1, 13)),
    picks=st.sets(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=30),
    zarr_format=st.sampled_from([2, 3]),
    separator=st.sampled_from([".", "/"]),
    seed=st.integers(0, 2**16),
)
def test_any_set_of_chunks_on_a_shuffled_store(grid: tuple[int, int], picks: set[tuple[int, int]],
                                               zarr_format: int, separator: str, seed: int) -> None:
    coords = sorted({(i % grid[0], j % grid[1]) for i, j in picks})
    store = ShuffledStore(seed)
    a = _write(store, coords, shape=(grid[0] * 2, grid[1] * 3), chunks=(2, 3), zarr_format=zarr_format,
               separator=separator)
    assert a.stored_chunk_keys() == [_key(c, separator, zarr_format) for c in coords]
