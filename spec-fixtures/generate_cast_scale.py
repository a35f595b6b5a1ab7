"""Golden stores of ``cast_value`` and ``scale_offset``, written by zarr-python.

Writes ``spec-fixtures/zarr-python-codecs/<name>/`` (``data.zarr/``,
``expected.npy``, ``fixture.json``). zarr-python 3.4.2 writes metadata and
chunks; its ``cast_value`` runs through cast-value-rs 0.5.1 (the backend it
requires). ``expected.npy`` is what zarr-python reads back, and the generator
checks that this is the data it meant to store, decoded by the spec's rules
(lossy codecs: the values written are picked so the expected result is
known; see each description).

Run: ``pip install "zarr==3.4.2" "cast-value-rs==0.5.1"`` then
``python spec-fixtures/generate_cast_scale.py``. Deterministic: a second run
leaves ``git status`` clean. ``tests/codecs/test_new_codec_fixtures.py``
reads them.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import zarr
from zarr.codecs import BytesCodec, CastValue, ScaleOffset, ZstdCodec

ROOT = Path(__file__).resolve().parent / "zarr-python-codecs"
ZARR_VERSION, CAST_VERSION = "3.4.2", "0.5.1"
PRODUCER = f"zarr-python {ZARR_VERSION} (cast_value through cast-value-rs {CAST_VERSION})"
OWN_TEST = "tests/codecs/test_new_codec_fixtures.py"


def fixtures() -> dict[str, dict[str, Any]]:
    rng = np.random.default_rng(20261201)
    floats = np.linspace(-20.0, 300.0, 48).reshape(6, 8)
    floats[0, 0], floats[1, 1], floats[2, 2] = np.nan, np.inf, -np.inf
    cf = (rng.random((10, 7)) * 40.0 - 10.0).astype("float32")
    return {
        "cast_value_float64_uint8_clamp_map": dict(
            data=floats, chunks=(4, 3), fill_value=0.0,
            filters=[CastValue(data_type="uint8", rounding="towards-zero", out_of_range="clamp",
                               scalar_map={"encode": [("NaN", 0), ("Infinity", 255), ("-Infinity", 0)]})],
            expected=np.where(np.isnan(floats), 0, np.where(np.isposinf(floats), 255, np.clip(np.trunc(np.nan_to_num(floats, posinf=255, neginf=0)), 0, 255))).astype("float64"),
            description="float64 (6, 8), chunks (4, 3), cast_value to uint8 towards-zero, clamp, scalar_map encode "
            "NaN->0, Infinity->255, -Infinity->0; partial edge chunks",
        ),
        "cast_value_int32_int8_wrap": dict(
            data=np.arange(-300, 300, 25, dtype="int32").reshape(4, 6), chunks=(3, 4), fill_value=0,
            filters=[CastValue(data_type="int8", out_of_range="wrap")],
            expected=(((np.arange(-300, 300, 25) + 128) % 256) - 128).astype("int32").reshape(4, 6),
            description="int32 (4, 6), chunks (3, 4), cast_value to int8 with wrap (two's complement modulo 256)",
        ),
        "cast_value_float32_float16_nearest_even": dict(
            data=(np.arange(40, dtype="float32") * np.float32(0.7) - np.float32(9.3)).reshape(5, 8), chunks=(5, 4),
            fill_value=1.5, filters=[CastValue(data_type="float16")],
            expected=(np.arange(40, dtype="float32") * np.float32(0.7) - np.float32(9.3)).astype("float16").astype("float32").reshape(5, 8),
            description="float32 (5, 8), chunks (5, 4), fill 1.5, cast_value to float16 (nearest-even), stored values "
            "rounded; partly written (chunk 1 left to the fill value)", write=(slice(None), slice(0, 4)),
        ),
        "cast_value_uint16_float32_sharded": dict(
            data=(np.arange(64, dtype="uint16") * 1031).reshape(8, 8), chunks=(2, 4), shards=(4, 8), fill_value=7,
            filters=[CastValue(data_type="float32")], expected=(np.arange(64, dtype="uint16") * 1031).reshape(8, 8),
            description="uint16 (8, 8), shards (4, 8) of chunks (2, 4), fill 7, cast_value to float32 inside the shard",
        ),
        "scale_offset_cast_value_float32_int16": dict(
            data=cf, chunks=(4, 4), fill_value=0.5,
            filters=[ScaleOffset(offset=10, scale=100), CastValue(data_type="int16", rounding="nearest-even")],
            expected=None,  # computed from the spec's formulas below
            description="float32 (10, 7), chunks (4, 4), fill 0.5, scale_offset offset 10 scale 100 then cast_value "
            "to int16 (the CF packing pattern: value = int16 / 100 + 10)",
        ),
        "scale_offset_int32": dict(
            data=np.arange(-40, 40, 3, dtype="int32").reshape(3, 9), chunks=(2, 5), fill_value=-3,
            filters=[ScaleOffset(offset=-3, scale=-7)], expected=np.arange(-40, 40, 3, dtype="int32").reshape(3, 9),
            description="int32 (3, 9), chunks (2, 5), fill -3, scale_offset offset -3 scale -7 (exact integer "
            "arithmetic; the fill encodes to 0)",
        ),
        "scale_offset_float64_default": dict(
            data=np.linspace(-1, 1, 12), chunks=(5,), fill_value=0.0, filters=[ScaleOffset()],
            expected=np.linspace(-1, 1, 12),
            description="float64 (12,), chunks (5,), scale_offset with no configuration (offset 0, scale 1: the identity)",
        ),
    }


def cf_expected(data: np.ndarray) -> np.ndarray:
    """(x - 10) * 100 in float32, rounded to int16 (nearest-even), then / 100 + 10 in float32."""
    encoded = ((data - np.float32(10)) * np.float32(100)).astype("float32")
    packed = np.rint(encoded).astype("int16")
    return (packed.astype("float32") / np.float32(100) + np.float32(10)).astype("float32")


def build(name: str, spec: dict[str, Any]) -> None:
    fdir = ROOT / name
    shutil.rmtree(fdir, ignore_errors=True)
    fdir.mkdir(parents=True)
    data = spec["data"]
    arr = zarr.create_array(
        str(fdir / "data.zarr"), shape=data.shape, dtype=data.dtype, chunks=spec["chunks"], shards=spec.get("shards"),
        fill_value=spec["fill_value"], filters=spec["filters"], serializer=BytesCodec(endian="little"),
        compressors=[ZstdCodec(level=3)],
    )  # fmt: skip
    region = spec.get("write", ...)
    arr[region] = data[region]
    back = zarr.open_array(str(fdir / "data.zarr"), mode="r")[...]
    expected = cf_expected(data) if spec["expected"] is None else np.array(spec["expected"], dtype=data.dtype)
    if region is not ...:
        full = np.full(data.shape, spec["fill_value"], dtype=data.dtype)
        full[region] = expected[region]
        expected = full
    assert back.dtype == data.dtype and back.tobytes() == expected.tobytes(), f"{name}: zarr-python read back {back!r}"
    np.save(fdir / "expected.npy", back, allow_pickle=False)
    doc = {"producer": PRODUCER, "path": "data.zarr", "description": spec["description"], "node_type": "array",
           "own_test": OWN_TEST}
    (fdir / "fixture.json").write_text(json.dumps(doc, indent=2) + "\n")


def main() -> None:
    assert zarr.__version__ == ZARR_VERSION, zarr.__version__
    assert importlib.metadata.version("cast-value-rs") == CAST_VERSION
    for name, spec in fixtures().items():
        build(name, spec)
    print(f"wrote {len(fixtures())} fixtures to {ROOT}")


if __name__ == "__main__":
    main()
