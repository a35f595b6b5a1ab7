"""How many bytes four variable-length string encodings store for one data set.

The data are the 47,868 city names of ``cities.csv`` (one UTF-8 name per
line, the file zarrs uses for its own table in ``zarrs/tests/cities.rs``),
written by zarrpy as a 1-D ``string`` array with chunks of 1,000 and fill
value ``""`` (so the last chunk holds 868 names and 132 fill elements) into a
:class:`~zarrpy.stores.memory.MemoryStore`, once per encoding:

a. ``vlen-utf8`` alone (no compressor);
b. ``vlen-utf8`` + ``zstd`` level 5;
c. ``zarrs.vlen``: data_codecs ``[bytes]``, index_codecs ``[bytes little]``,
   index_data_type uint32, index at the start;
d. ``zarrs.vlen``: data_codecs ``[bytes, blosc zstd 5 bitshuffle typesize 1]``,
   index_codecs ``[bytes little, blosc zstd 5 shuffle typesize 4]``,
   index_data_type uint32, index at the end.

The size reported is the sum of the stored chunk values (every key but
``zarr.json``). Before a size is reported, the array is read back through
zarrpy and must equal the input; arrays that zarr-python can read
(``vlen-utf8``) are also read back through zarr-python when it is installed.

    PYENV_VERSION=3.12.1 python3 bench/vlen_efficiency.py
    PYENV_VERSION=3.12.1 python3 bench/vlen_efficiency.py --csv other.csv --chunk 500
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: the shared harness
import _harness as H  # noqa: E402  (also puts the repository root on sys.path)
import zarrpy  # noqa: E402
from zarrpy.stores.memory import MemoryStore  # noqa: E402

# The shared data directory sits beside the checkout (…/shared/data/cities.csv).
DEFAULT_CSV = Path(__file__).resolve().parents[2] / "shared" / "data" / "cities.csv"

BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}


def blosc(shuffle: str, typesize: int) -> dict[str, Any]:
    return {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": shuffle,
                                               "typesize": typesize, "blocksize": 0}}


# label, short description, serializer, compressors
ENCODINGS: list[tuple[str, str, dict[str, Any], list[dict[str, Any]] | None]] = [
    ("a", "vlen-utf8", {"name": "vlen-utf8", "configuration": {}}, None),
    ("b", "vlen-utf8 + zstd(5)", {"name": "vlen-utf8", "configuration": {}},
     [{"name": "zstd", "configuration": {"level": 5, "checksum": False}}]),
    ("c", "zarrs.vlen, uint32 index at start, no compression",
     {"name": "zarrs.vlen", "configuration": {
         "data_codecs": [{"name": "bytes"}],
         "index_codecs": [BYTES_LE],
         "index_data_type": "uint32",
         "index_location": "start"}}, None),
    ("d", "zarrs.vlen, uint32 index at end, blosc zstd(5) on data (bitshuffle) and index (shuffle)",
     {"name": "zarrs.vlen", "configuration": {
         "data_codecs": [{"name": "bytes"}, blosc("bitshuffle", 1)],
         "index_codecs": [BYTES_LE, blosc("shuffle", 4)],
         "index_data_type": "uint32",
         "index_location": "end"}}, None),
]


def read_names(path: Path) -> list[str]:
    """One name per line, UTF-8; a trailing newline ends the last line."""
    text = path.read_text(encoding="utf-8")
    names = text.split("\n")
    if names and names[-1] == "":
        names.pop()
    return [n[:-1] if n.endswith("\r") else n for n in names]


def encode_and_measure(names: list[str], chunk: int, serializer: dict, compressors: list | None) -> dict[str, Any]:
    backing: dict[str, bytes] = {}
    store = MemoryStore(backing)
    a = zarrpy.create_array(store, shape=(len(names),), dtype="string", chunks=(chunk,), fill_value="",
                            serializer=serializer, compressors=compressors)
    a[:] = np.array(names, dtype=np.dtypes.StringDType())
    # Check before reporting: the whole array, then one element per chunk.
    back = zarrpy.open_array(store, mode="r")[:]
    if back.tolist() != names:
        raise AssertionError(f"{serializer['name']}: the array does not read back equal to the input")
    for i in range(0, len(names), chunk):
        if zarrpy.open_array(store, mode="r")[i] != names[i]:
            raise AssertionError(f"{serializer['name']}: element {i} does not read back equal")
    chunk_keys = [k for k in backing if k != "zarr.json"]
    expected_chunks = -(-len(names) // chunk)
    if len(chunk_keys) != expected_chunks:
        raise AssertionError(f"expected {expected_chunks} chunks, found {len(chunk_keys)}")
    peer_checked = _check_with_zarr_python(backing, names, serializer)
    return {
        "chunk_bytes": sum(len(backing[k]) for k in chunk_keys),
        "nchunks": len(chunk_keys),
        "codecs": a.metadata.to_json()["codecs"],
        "zarr_python_checked": peer_checked,
    }


def _check_with_zarr_python(backing: dict[str, bytes], names: list[str], serializer: dict) -> bool:
    """Read a vlen-utf8 array back through zarr-python too (False: not possible)."""
    if serializer["name"] != "vlen-utf8":
        return False  # zarr-python has no zarrs.vlen
    try:
        import zarr
        from zarr.storage import MemoryStore as ZarrMemoryStore
    except ImportError:
        return False
    from zarr.core.buffer import cpu

    zstore = ZarrMemoryStore({k: cpu.Buffer.from_bytes(v) for k, v in backing.items()})
    got = zarr.open_array(zstore, mode="r")[:]
    if [str(x) for x in got.tolist()] != names:
        raise AssertionError("zarr-python reads the vlen-utf8 array differently")
    return True


def versions() -> dict[str, str]:
    """The harness's package versions plus the C libraries behind blosc and zstd."""
    out = H.versions("numpy", "zstandard", "numcodecs", "zarr")
    try:
        import numcodecs.blosc

        out["c-blosc"] = numcodecs.blosc.VERSION_STRING
    except (ImportError, AttributeError):
        pass
    try:
        import zstandard

        out["libzstd"] = ".".join(map(str, zstandard.ZSTD_VERSION))
    except ImportError:
        pass
    return out


def git_commit() -> str | None:
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "zarrpy"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return None
    return commit + (" (zarrpy/ has uncommitted changes)" if dirty else "")


def format_table(raw: int, rows: list[tuple[str, str, int]]) -> str:
    lines = ["| encoding | stored chunk bytes | % of raw UTF-8 |", "|---|---:|---:|",
             f"| raw UTF-8 (names concatenated, for reference) | {raw:,} | 100.0 % |"]
    for label, desc, nbytes in rows:
        lines.append(f"| ({label}) {desc} | {nbytes:,} | {100 * nbytes / raw:.1f} % |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--csv", type=Path, default=DEFAULT_CSV, help=f"names file, one per line (default {DEFAULT_CSV})")
    p.add_argument("--chunk", type=int, default=1000, help="chunk length (default 1000)")
    args = p.parse_args(argv)
    if not args.csv.is_file():
        p.error(f"{args.csv} not found; pass --csv PATH")
    names = read_names(args.csv)
    raw = sum(len(n.encode("utf-8")) for n in names)
    print(f"{len(names)} names from {args.csv.name}, {raw:,} bytes of UTF-8; chunks of {args.chunk}, fill value ''")
    rows = []
    for label, desc, serializer, compressors in ENCODINGS:
        result = encode_and_measure(names, args.chunk, serializer, compressors)
        rows.append((label, desc, result["chunk_bytes"]))
        checked = "zarrpy and zarr-python" if result["zarr_python_checked"] else "zarrpy"
        print(f"({label}) {result['chunk_bytes']:>9,} bytes in {result['nchunks']} chunks; read back equal "
              f"through {checked}; codecs {result['codecs']}")
    print()
    print(format_table(raw, rows))
    print()
    print(f"date {datetime.now(timezone.utc).date().isoformat()}; zarrpy {git_commit()}; "
          + ", ".join(f"{k} {v}" for k, v in versions().items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
