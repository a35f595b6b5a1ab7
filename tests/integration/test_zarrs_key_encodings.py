"""``zarrs.default_suffix`` stores exchanged with zarrs (through zarrista), both ways.

The fixtures in ``spec-fixtures/zarrs-key-encodings/`` were written by zarrs
(``spec-fixtures/generate_zarrs_key_encodings.py``); the generic fixture test
reads their data. Here: zarrpy lists exactly the chunk keys zarrs stored,
writes the same keys and the same bytes from the same metadata and data, and
zarrs reads what zarrpy writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import zarrpy

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2] / "spec-fixtures" / "zarrs-key-encodings"
FIXTURES = sorted(p.parent for p in ROOT.glob("*/fixture.json"))


def _ids(path: Path) -> str:
    return path.name


def _files(store: Path) -> dict[str, bytes]:
    return {p.relative_to(store).as_posix(): p.read_bytes() for p in store.rglob("*") if p.is_file()
            and p.name != "zarr.json"}


def test_there_are_fixtures():
    assert len(FIXTURES) == 4, FIXTURES


@pytest.mark.parametrize("fixture", FIXTURES, ids=_ids)
def test_zarrpy_lists_the_keys_zarrs_stored(fixture):
    doc = json.loads((fixture / "fixture.json").read_text())
    a = zarrpy.open_array(str(fixture / "data.zarr"))
    assert sorted(a.stored_chunk_keys()) == doc["keys"]
    assert a.metadata.chunk_key_encoding.name == "zarrs.default_suffix"


@pytest.mark.parametrize("fixture", FIXTURES, ids=_ids)
def test_zarrpy_writes_zarrs_keys_and_bytes(fixture, tmp_path):
    """The fixture's metadata (its codecs and key encoding) and data, written
    by zarrpy: the same chunk objects, byte for byte."""
    meta = json.loads((fixture / "data.zarr" / "zarr.json").read_text())
    expected = np.load(fixture / "expected.npy")
    out = tmp_path / "out.zarr"
    codecs = meta["codecs"]
    sharding = codecs[0]["configuration"] if codecs[0]["name"] == "sharding_indexed" else None
    chunks = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    a = zarrpy.create_array(
        str(out), shape=tuple(meta["shape"]), dtype=meta["data_type"], fill_value=meta["fill_value"],
        chunks=tuple(sharding["chunk_shape"]) if sharding else chunks, shards=chunks if sharding else None,
        serializer="auto" if sharding else codecs[0], compressors=None,
        chunk_key_encoding=meta["chunk_key_encoding"])
    a[...] = expected
    assert json.loads((out / "zarr.json").read_text())["codecs"] == codecs
    assert _files(out) == _files(fixture / "data.zarr")


@pytest.mark.parametrize("separator", ["/", "."])
def test_zarrs_reads_what_zarrpy_writes(tmp_path, separator):
    zt = pytest.importorskip("zarrista")
    store_mod = pytest.importorskip("zarrista.store")
    data = (np.arange(63, dtype="<i4").reshape(7, 9) * 37) % 101 - 50
    data[:3, :4] = 0
    path = tmp_path / "a.zarr"
    a = zarrpy.create_array(str(path), shape=data.shape, dtype="int32", chunks=(3, 4), fill_value=0,
                            chunk_key_encoding={"name": "zarrs.default_suffix",
                                                "configuration": {"separator": separator, "suffix": ".i4"}})
    a[...] = data
    assert "c" + separator + "0" + separator + "0.i4" not in {k for k in a.stored_chunk_keys()}
    back = zt.Array.open(store_mod.FilesystemStore(str(path)), "/")[...]
    assert np.array_equal(np.frombuffer(back.buffer(), dtype="<i4").reshape(data.shape), data)
