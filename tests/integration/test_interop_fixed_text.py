"""Fixed-length bytes (numpy S) and UTF-32 (numpy U) arrays, V2 and V3, both ways with zarr-python."""

import warnings

import numpy as np
import pytest

import zarrpy
import zarrpy.core.dtypes

pytestmark = pytest.mark.integration
zarr = pytest.importorskip("zarr")

CASES = [
    ("|S3", [b"ab", b"", b"xyz"], b"q"),
    ("<U2", ["é", "", "ab"], "z"),
    (">U3", ["日本", "x", ""], ""),
]


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("dtype, values, fill", CASES)
def test_fixed_length_text_both_ways(tmp_path, zarr_format, dtype, values, fill):
    expected = values + [fill] * 2  # the last chunk is partly missing: fill
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr-python warns these V3 types are not yet specified
        z = zarr.create_array(str(tmp_path / "p.zarr"), shape=(5,), chunks=(2,), dtype=dtype,
                              zarr_format=zarr_format, fill_value=fill)
        z[:3] = np.array(values, dtype=dtype)
        a = zarrpy.open_array(str(tmp_path / "p.zarr"))
        assert a.zarr_format == zarr_format
        assert a.dtype.kind == np.dtype(dtype).kind and a.dtype.itemsize == np.dtype(dtype).itemsize
        assert a[...].tolist() == expected and a.fill_value == fill

        w = zarrpy.create_array(str(tmp_path / "w.zarr"), shape=(5,), chunks=(2,), dtype=dtype,
                                zarr_format=zarr_format, fill_value=fill)
        w[:3] = np.array(values, dtype=dtype)
        assert zarr.open_array(str(tmp_path / "w.zarr"), mode="r")[...].tolist() == expected


def test_fixed_length_fill_values_are_checked():
    with pytest.raises(zarrpy.MetadataError, match="fill_value"):
        zarrpy.create_array({}, shape=(2,), dtype="|S2", fill_value=b"too long")
    with pytest.raises(zarrpy.MetadataError, match="fill_value"):
        zarrpy.create_array({}, shape=(2,), dtype="<U2", fill_value=5)
    with pytest.raises(zarrpy.MetadataError, match="length_bytes"):
        zarrpy.core.dtypes.DataType.from_json({"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}})
