"""Struct (structured dtype) arrays both ways with zarr-python as the oracle, V3 and V2:
nested structs, mixed field byte orders, every fixed-size field family; the
same metadata JSON and the same chunk bytes for the same codecs."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrpy
from tests.integration.oracles import needs_zarr_struct

pytestmark = [pytest.mark.integration, needs_zarr_struct]
zarr = pytest.importorskip("zarr")

NESTED = np.dtype([("a", "<f8"), ("b", "<i4"), ("c", [("x", "<u2"), ("y", "S3")]), ("d", "<M8[ns]")])
MIXED = np.dtype([("a", ">f8"), ("b", "<i4"), ("c", [("x", ">u2"), ("y", "<i8")]), ("d", ">m8[s]")])
FAMILIES = np.dtype([("f", "<f2"), ("c", ">c8"), ("r", "V2"), ("u", ">U2"), ("t", "?"), ("n", [("k", "i1")])])

CASES = {
    "nested": (NESTED, (1.5, -2, (3, b"ab"), np.datetime64(5, "ns"))),
    "mixed-byte-order": (MIXED, (np.nan, 7, (1, -1), np.timedelta64("NaT", "s"))),
    "field-families": (FAMILIES, (np.float16(0.5), 1 - 2j, b"\x01\x02", "hé", True, (-3,))),
}


def values_for(dtype: np.dtype, n: int) -> np.ndarray:
    """Deterministic values that touch every byte of every field (NaN, -0.0, NaT included)."""
    rng = np.random.default_rng(n)
    out = np.frombuffer(rng.bytes(n * dtype.itemsize), dtype=dtype).copy()

    def tidy(arr):
        for name in arr.dtype.names:
            sub = arr[name]
            if sub.dtype.names:
                tidy(sub)
            elif sub.dtype.kind == "b":
                arr[name] = rng.integers(0, 2, size=sub.shape).astype(bool)
            elif sub.dtype.kind == "U":
                arr[name] = rng.choice(np.array(["", "a", "é", "日本"], dtype=sub.dtype), size=sub.shape)

    tidy(out)
    return out


def same_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    expected = np.asarray(expected).astype(actual.dtype)
    assert np.ascontiguousarray(actual).tobytes() == np.ascontiguousarray(expected).tobytes()


def store_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _create(lib, path, dtype, fill, zarr_format, compressors, shards):
    kwargs = dict(shape=(7, 3), chunks=(2, 3), dtype=dtype, zarr_format=zarr_format, fill_value=fill)
    if compressors is None:
        kwargs["compressors"] = None
    if shards is not None:
        kwargs["shards"] = shards
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python: unstable-spec warnings for some field types
        return lib.create_array(str(path), **kwargs)


LAYOUTS = [
    pytest.param(3, "auto", None, id="v3-default"),
    pytest.param(3, None, None, id="v3-uncompressed"),
    pytest.param(3, "auto", (4, 3), id="v3-sharded"),
    pytest.param(2, "auto", None, id="v2-default"),
    pytest.param(2, None, None, id="v2-uncompressed"),
]


@pytest.mark.parametrize("zarr_format, compressors, shards", LAYOUTS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_struct_both_ways_same_bytes(tmp_path, case, zarr_format, compressors, shards):
    dtype, fill = CASES[case]
    data = values_for(dtype, 15).reshape(5, 3)  # rows 5..6: one chunk half fill, one absent

    # zarr-python writes, zarrpy reads
    zp = _create(zarr, tmp_path / "zp.zarr", dtype, fill, zarr_format, compressors, shards)
    same_layout = True
    try:
        zp[:5] = data
    except ValueError as exc:
        # zarr-python 3.4.2 cannot compress V2 structs with datetime fields
        # (numcodecs: "cannot include dtype 'M' in a buffer"); it writes them uncompressed
        assert zarr_format == 2 and "cannot include dtype" in str(exc)
        same_layout = False
        zp = _create(zarr, tmp_path / "zp-plain.zarr", dtype, fill, zarr_format, None, shards)
        zp[:5] = data
    zp_path = tmp_path / ("zp.zarr" if same_layout else "zp-plain.zarr")
    a = zarrpy.open_array(str(zp_path))
    expected = np.concatenate([data, np.full((2, 3), np.array(fill, dtype=dtype))])
    got = a[...]
    same_bits(got, expected)
    same_bits(np.asarray(a.fill_value, dtype=got.dtype), np.array(fill, dtype=dtype))
    if zarr_format == 2:
        assert got.dtype == dtype  # V2 fields keep their byte order, as zarr-python reads them
    assert got.dtype == zarr.open_array(str(zp_path))[...].dtype

    # zarrpy writes, zarr-python reads
    w = _create(zarrpy, tmp_path / "w.zarr", dtype, fill, zarr_format, compressors, shards)
    w[:5] = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(str(tmp_path / "w.zarr"), mode="r")
        zgot = z[...]
    same_bits(zgot, expected)
    same_bits(np.asarray(z.fill_value, dtype=zgot.dtype), np.array(fill, dtype=dtype))

    # the same documents and chunk bytes
    if not same_layout:
        return
    ours, theirs = store_files(tmp_path / "w.zarr"), store_files(tmp_path / "zp.zarr")
    meta = ".zarray" if zarr_format == 2 else "zarr.json"
    mine, ref = json.loads(ours.pop(meta)), json.loads(theirs.pop(meta))
    keys = ("dtype", "fill_value", "compressor", "filters", "order") if zarr_format == 2 else \
        ("data_type", "fill_value", "codecs", "chunk_grid", "chunk_key_encoding")
    for key in keys:
        assert mine[key] == ref[key], key
    ours.pop(".zattrs", None), theirs.pop(".zattrs", None)
    assert sorted(ours) == sorted(theirs) and len(ours) >= 2  # chunks (or shards); absent ones absent in both
    for key in ours:
        assert ours[key] == theirs[key], key


def test_legacy_structured_written_by_hand_reads_in_both(tmp_path):
    """zarr-python's legacy ``structured`` name with tuple fields and a base64
    (little-endian) fill value: both read the same values; zarrpy keeps the form."""
    path = tmp_path / "legacy.zarr"
    z = zarr.create_array(str(path), shape=(4,), chunks=(2,), dtype=[("a", "<i4"), ("b", "<f8")],
                          fill_value=(7, -2.5), compressors=None)
    z[:2] = [(1, 1.5), (2, 2.5)]
    doc = json.loads((path / "zarr.json").read_text())
    doc["data_type"] = {"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}}
    doc["fill_value"] = "BwAAAAAAAAAAAATA"  # (7, -2.5) little-endian
    (path / "zarr.json").write_text(json.dumps(doc))
    ours = zarrpy.open_array(str(path), mode="r+")
    theirs = zarr.open_array(str(path))
    assert ours[...].tolist() == theirs[...].tolist() == [(1, 1.5), (2, 2.5), (7, -2.5), (7, -2.5)]
    ours.attrs["touched"] = True  # rewrites the metadata: the legacy form is kept
    again = json.loads((path / "zarr.json").read_text())
    assert again["data_type"] == doc["data_type"] and again["fill_value"] == doc["fill_value"]
    assert zarr.open_array(str(path))[...].tolist() == [(1, 1.5), (2, 2.5), (7, -2.5), (7, -2.5)]


@pytest.mark.parametrize("dtype, endian", [
    (np.dtype([("a", ">f8"), ("c", [("x", ">u2"), ("y", "S3")])]), "big"),
    (np.dtype([("a", "<f8"), ("c", [("x", "<u2"), ("y", "S3")])]), "little"),
])
def test_migrated_v2_struct_reads_equal_in_zarr_python(tmp_path, dtype, endian):
    """A V2 struct whose fields share one byte order migrates to V3 without
    rewriting chunks: that order becomes the bytes codec's endian."""
    from zarrpy.tools.migrate import migrate_v3

    path = tmp_path / "m.zarr"
    z = zarr.create_array(str(path), shape=(5,), chunks=(2,), dtype=dtype, zarr_format=2, fill_value=(1.5, (2, b"f")))
    data = values_for(dtype, 4)
    z[:4] = data
    migrate_v3(str(path))
    doc = json.loads((path / "zarr.json").read_text())
    assert doc["codecs"][0] == {"name": "bytes", "configuration": {"endian": endian}}
    assert doc["data_type"]["name"] == "struct"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = zarr.open_array(str(path), zarr_format=3)
        got = back[...]
    expected = np.concatenate([data, np.array([(1.5, (2, b"f"))], dtype=dtype)])
    same_bits(got, expected)
    same_bits(zarrpy.open_array(str(path), zarr_format=3)[...], expected)
