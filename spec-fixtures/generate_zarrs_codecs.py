"""Golden stores for the codecs zarrs writes that zarr-python does not know.

Writes ``spec-fixtures/zarrs-codecs/<name>/`` (``data.zarr/``,
``expected.npy``, ``fixture.json``) for ``reshape``, ``zarrs.squeeze``,
``packbits`` and ``numcodecs.pcodec``. zarr-python's API writes the metadata
and the zarrs codec pipeline of zarrs-python 0.2.3 (the Rust zarrs crate)
encodes every chunk: zarr-python refuses codec names it does not know, so a
minimal zarr-python codec class per name (:func:`json_codec`) only carries the
JSON; strict mode makes sure zarrs, not zarr-python, wrote the chunks, and
the read-back through zarrs must equal the data.

zarrs-python 0.2.3 cannot write ``bitround``, ``zfp``, ``numcodecs.zfpy`` or
``zarrs.gdeflate`` (its zarrs build leaves those features out: "codec ... is
not supported"); :func:`check_refused` keeps that claim honest.

Run with an interpreter that has zarr-python 3.4.2, zarrs 0.2.3 and pcodec:
``python spec-fixtures/generate_zarrs_codecs.py``. Deterministic: a second run
leaves ``git status`` clean.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import zarr
import zarr.codecs as zc
from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
from zarr.registry import register_codec

ROOT = Path(__file__).resolve().parent / "zarrs-codecs"
ZARR_VERSION, ZARRS_VERSION = "3.4.2", "0.2.3"
PRODUCER = f"zarrs-python {ZARRS_VERSION} (zarrs pipeline), metadata by zarr-python {ZARR_VERSION}"
ZARRS_CONFIG = {
    "codec_pipeline.path": "zarrs.ZarrsCodecPipeline",
    "codec_pipeline.strict": True,
    "threading.max_workers": 1,
    "codec_pipeline.chunk_concurrent_maximum": 1,
}
_KINDS = {"aa": ArrayArrayCodec, "ab": ArrayBytesCodec, "bb": BytesBytesCodec}


def json_codec(name: str, kind: str) -> type:
    """A zarr-python codec class that only round-trips ``name``'s JSON
    (zarrs does the encoding; zarr-python must never run it)."""

    class JsonCodec(_KINDS[kind]):  # type: ignore[misc, valid-type]
        is_fixed_size = False

        def __init__(self, **config: Any) -> None:
            object.__setattr__(self, "config", config)

        @classmethod
        def from_dict(cls, data: dict[str, Any]) -> JsonCodec:
            return cls(**(data.get("configuration") or {}))

        def to_dict(self) -> dict[str, Any]:
            return {"name": name, "configuration": self.config} if self.config else {"name": name}

        def compute_encoded_size(self, input_byte_length: int, chunk_spec: Any) -> int:
            return input_byte_length

        async def _decode_single(self, *args: Any) -> Any:
            raise AssertionError(f"zarr-python ran {name}: the zarrs pipeline should have")

        _encode_single = _decode_single

    JsonCodec.__name__ = f"JsonCodec_{name}"
    register_codec(name, JsonCodec)
    return JsonCodec


RESHAPE = json_codec("reshape", "aa")
SQUEEZE = json_codec("zarrs.squeeze", "aa")
PACKBITS = json_codec("packbits", "ab")


def wave(dtype: str, shape: tuple[int, ...], modulo: int, offset: int = 0) -> np.ndarray:
    return ((np.arange(int(np.prod(shape))) * 7 + 3) % modulo + offset).astype(dtype).reshape(shape)


FIXTURES: dict[str, dict[str, Any]] = {
    "reshape_merge_int16": dict(
        data=wave("int16", (8, 12), 1000, -500), chunks=(4, 6),
        filters=[RESHAPE(shape=[[0, 1]])], serializer=zc.BytesCodec(endian="little"),
        description="int16 (8, 12), chunks (4, 6), reshape [[0, 1]] (each chunk stored as 24 values), bytes little",
    ),
    "reshape_split_auto_float32": dict(
        data=wave("float32", (8, 12), 97) / np.float32(4), chunks=(4, 6),
        filters=[RESHAPE(shape=[[0], -1, 3])], serializer=zc.BytesCodec(endian="big"),
        description="float32 (8, 12), chunks (4, 6), reshape [[0], -1, 3] (chunk (4, 6) stored as (4, 2, 3)), "
        "bytes big",
    ),
    "squeeze_uint16": dict(
        data=wave("uint16", (6, 1, 8), 60000), chunks=(3, 1, 4),
        filters=[SQUEEZE()], serializer=zc.BytesCodec(endian="little"),
        description="uint16 (6, 1, 8), chunks (3, 1, 4), zarrs.squeeze (chunks stored as (3, 4)), bytes little",
    ),
    "packbits_bool": dict(
        data=wave("uint8", (5, 7), 3) == 0, chunks=(3, 4), serializer=PACKBITS(),
        description="bool (5, 7), chunks (3, 4) (12 bits per chunk, 4 padding bits), packbits, no padding byte",
    ),
    "packbits_bool_first_byte": dict(
        data=wave("uint8", (5, 7), 5) < 2, chunks=(3, 4), serializer=PACKBITS(padding_encoding="first_byte"),
        description="bool (5, 7), chunks (3, 4), packbits padding_encoding first_byte (numcodecs' layout)",
    ),
    "packbits_int16_bits_2_12": dict(
        data=wave("int16", (6, 5), 2048, -1024) * np.int16(4), chunks=(4, 3),
        serializer=PACKBITS(padding_encoding="last_byte", first_bit=2, last_bit=12),
        description="int16 (6, 5) of multiples of 4 in [-4096, 4092], chunks (4, 3), packbits first_bit 2, "
        "last_bit 12 (11 bits per value, sign bit 12), padding_encoding last_byte",
    ),
    "packbits_uint8_3bits": dict(
        data=wave("uint8", (9,), 8), chunks=(4,), serializer=PACKBITS(first_bit=0, last_bit=2),
        description="uint8 (9,) of values 0-7, chunks (4,), packbits last_bit 2 (3 bits per value)",
    ),
    "packbits_float32": dict(
        data=wave("float32", (7,), 50) - np.float32(20.5), chunks=(3,), serializer=PACKBITS(),
        description="float32 (7,), chunks (3,), packbits with all bits (the little-endian bytes)",
    ),
    "packbits_complex64_last_byte": dict(
        data=(wave("float32", (5,), 9) + 1j * wave("float32", (5,), 4)).astype("complex64"), chunks=(2,),
        serializer=PACKBITS(padding_encoding="last_byte"),
        description="complex64 (5,), chunks (2,), packbits (two 32-bit components), padding_encoding last_byte",
    ),
    "pcodec_float64": dict(
        data=np.sin(np.arange(40) / 5.0).reshape(5, 8), chunks=(5, 4),
        serializer=zarr.codecs.numcodecs.PCodec(level=8),
        description="float64 (5, 8), chunks (5, 4), numcodecs.pcodec level 8 (encoded by the zarrs crate's pcodec)",
    ),
}


# Fixtures zarrs writes correctly (zarrpy decodes every stored chunk to the
# data given) but reads back wrongly itself.
ZARRS_MISREADS = {
    "packbits_int16_bits_2_12": "the edge chunks, which zarrs reads through its packbits partial decoder",
}


def build(name: str, spec: dict[str, Any]) -> None:
    fdir = ROOT / name
    shutil.rmtree(fdir, ignore_errors=True)
    fdir.mkdir(parents=True)
    data = spec["data"]
    kwargs = {k: spec[k] for k in ("filters", "serializer") if k in spec}
    with zarr.config.set(ZARRS_CONFIG):
        arr = zarr.create_array(
            str(fdir / "data.zarr"), shape=data.shape, dtype=data.dtype, chunks=spec["chunks"],
            compressors=None, fill_value=0, **kwargs,
        )  # fmt: skip
        arr[...] = data
        back = zarr.open_array(str(fdir / "data.zarr"), mode="r")[...]
    same = back.dtype == data.dtype and back.tobytes() == data.tobytes()
    assert same or name in ZARRS_MISREADS, f"{name}: zarrs read back other data"
    np.save(fdir / "expected.npy", data, allow_pickle=False)
    doc = {"producer": PRODUCER, "path": "data.zarr", "description": spec["description"], "node_type": "array",
           "cross_checks": {f"zarrs-python {ZARRS_VERSION}": "equal" if same else f"different data ({ZARRS_MISREADS[name]})"}}
    (fdir / "fixture.json").write_text(json.dumps(doc, indent=2) + "\n")


def check_refused() -> None:
    """zarrs-python 0.2.3 must refuse these, or fixtures for them belong here."""
    refused = {
        "bitround": ("aa", {"keepbits": 3}, "float32"),
        "zfp": ("ab", {"mode": "fixed_rate", "rate": 8}, "float32"),
        "numcodecs.zfpy": ("ab", {"mode": 2, "rate": 8}, "float32"),
        "zarrs.gdeflate": ("bb", {"level": 5}, "float32"),
    }
    for name, (kind, config, dtype) in refused.items():
        cls = json_codec(name, kind)
        role = {"aa": "filters", "ab": "serializer", "bb": "compressors"}[kind]
        codec = cls(**config)
        with tempfile.TemporaryDirectory() as tmp, zarr.config.set(ZARRS_CONFIG):
            try:
                arr = zarr.create_array(tmp, shape=(4,), dtype=dtype, chunks=(2,), fill_value=0,
                                        **{role: [codec] if role != "serializer" else codec})  # fmt: skip
                arr[...] = np.arange(4, dtype=dtype)
            except Exception as exc:  # zarrs.pipeline.UnsupportedMetadataError
                assert "Unsupported" in type(exc).__name__, f"{name}: {exc!r}"
            else:
                raise AssertionError(f"the zarrs pipeline wrote {name}: add a fixture for it")


def main() -> None:
    assert zarr.__version__ == ZARR_VERSION, zarr.__version__
    assert importlib.metadata.version("zarrs") == ZARRS_VERSION
    for name, spec in FIXTURES.items():
        build(name, spec)
    check_refused()
    print(f"wrote {len(FIXTURES)} fixtures to {ROOT}")


if __name__ == "__main__":
    main()
