#!/usr/bin/env python3
"""Measure which implementation reads and writes which Zarr V3 data type; write
the table into ``docs/guide/data-types.md`` (between the ``support-matrix`` markers).

Run with an interpreter that has zarrpy and its test extras (zarr-python,
tensorstore, zarrista) installed::

    python3 spec-fixtures/support_matrix.py

For every data type and every implementation X (zarrpy, zarr-python,
tensorstore, zarrs through its Python binding zarrista):

- **W** (writes): X creates a V3 array of the type, writes sample values
  (NaN, infinities, extremes, fill value included where the type has them)
  and zarrpy reads back exactly those values, bit for bit;
- **R** (reads): X opens the array zarrpy wrote with the same values and
  reads exactly those values.

``zarrpy`` itself is W when it writes and reads its own array back. Every
attempt is real; a cell is ``-`` when X refused or returned other values, and
the reason is listed under the table. Nothing is hand-edited.
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "guide" / "data-types.md"
BEGIN, END = "<!-- support-matrix:begin -->", "<!-- support-matrix:end -->"


@dataclass
class Case:
    name: str                      # the V3 data_type name zarrpy writes
    dtype: Any                     # what zarrpy.create_array gets as dtype=
    values: Callable[[], np.ndarray]
    ts_dtype: str | None = None    # tensorstore's dtype name, where it differs from name
    zp_dtype: Any = None           # zarr-python's dtype= argument (default: dtype)


def _ml(name: str) -> Any:
    import ml_dtypes

    return getattr(ml_dtypes, name)


def _floats(dtype: Any) -> Callable[[], np.ndarray]:
    def make() -> np.ndarray:
        vals = np.array([0.0, -0.0, 1.0, -2.5, 0.125, np.inf, -np.inf, np.nan], dtype=np.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return vals.astype(np.dtype(dtype))
    return make


def _ints(dtype: Any, lo: int, hi: int) -> Callable[[], np.ndarray]:
    return lambda: np.array([lo, hi, 0, 1, lo + 1, hi - 1, -1 if lo < 0 else 2, hi], dtype=np.int64).astype(np.dtype(dtype))


def _complex(dtype: str) -> Callable[[], np.ndarray]:
    def make() -> np.ndarray:
        out = np.zeros(8, dtype=dtype)
        out.real, out.imag = _floats("float64")(), _floats("float64")()[::-1]
        return out
    return make


def _lanes(name: str, lane: str) -> Callable[[], np.ndarray]:
    """zarrs' complex_<small float> values: zarrpy's (real, imag) struct of the lane type."""
    def make() -> np.ndarray:
        from zarrpy.core.dtypes import DataType

        out = np.zeros(8, dtype=DataType.from_numpy(name).numpy)
        out["real"] = (np.arange(8) * 0.5 - 2).astype(_ml(lane))
        out["imag"] = (np.arange(8)[::-1] * 0.5).astype(_ml(lane))
        return out
    return make


def _cases() -> list[Case]:
    cases = [Case("bool", "bool", lambda: np.array([True, False] * 4))]
    for n, (lo, hi) in {"int8": (-128, 127), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
                        "int64": (-2**63, 2**63 - 1), "uint8": (0, 255), "uint16": (0, 2**16 - 1),
                        "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1)}.items():
        cases.append(Case(n, n, lambda n=n, lo=lo, hi=hi: np.array([lo, hi, 0, 1, lo + 1, hi - 1, 2, hi],
                                                                 dtype=object).astype(n)))
    for n in ("float16", "float32", "float64"):
        cases.append(Case(n, n, _floats(n)))
    for n in ("complex64", "complex128"):
        cases.append(Case(n, n, _complex(n)))
    cases += [
        Case("string", str, lambda: np.array(["", "a", "héllo", "x" * 50, "\x00z", "日本", "b", "c"], dtype=object),
             zp_dtype=str),
        Case("variable_length_bytes", bytes,
             lambda: np.array([b"", b"a", b"\x00\xff", b"x" * 50, b"q", b"r", b"s", b"t"], dtype=object),
             zp_dtype="variable_length_bytes"),
        Case("null_terminated_bytes", "S5", lambda: np.array([b"", b"ab", b"abcde", b"\x01"] * 2, dtype="S5")),
        Case("fixed_length_utf32", "U3", lambda: np.array(["", "ab", "héy", "z"] * 2, dtype="U3")),
        Case("numpy.datetime64", "datetime64[ns]",
             lambda: np.array(["NaT", "2024-01-01T00:00:00.000000001", "1970-01-01", "2262-04-11"] * 2,
                              dtype="datetime64[ns]")),
        Case("numpy.timedelta64", "timedelta64[10s]", lambda: np.array([0, -5, 7, "NaT"] * 2, dtype="timedelta64[10s]")),
        Case("raw_bytes", "V3", lambda: np.frombuffer(bytes(range(24)), dtype="V3").copy()),
        Case("struct", np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S2")]),
             lambda: np.array([(i, i / 2, b"xy") for i in range(8)], dtype=[("a", "<i4"), ("b", "<f8"), ("c", "S2")])),
    ]
    for n in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
              "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float6_e2m3fn",
              "float6_e3m2fn", "float4_e2m1fn"):
        cases.append(Case(n, n, lambda n=n: _floats(_ml(n))()))
    for n, (lo, hi) in {"int2": (-2, 1), "uint2": (0, 3), "int4": (-8, 7), "uint4": (0, 15)}.items():
        cases.append(Case(n, n, lambda n=n, lo=lo, hi=hi: _ints(_ml(n), lo, hi)()))
    cases += [
        Case("complex_float16", "complex_float16",
             lambda: (np.arange(8) - 3.5 + 1j * np.arange(8)).astype(_ml("complex32"))),
        Case("complex_bfloat16", "complex_bfloat16",
             lambda: (np.arange(8) - 3.5 + 1j * np.arange(8)).astype(_ml("bcomplex32"))),
        Case("complex_float8_e5m2", "complex_float8_e5m2", _lanes("complex_float8_e5m2", "float8_e5m2")),
        Case("complex_float4_e2m1fn", "complex_float4_e2m1fn", _lanes("complex_float4_e2m1fn", "float4_e2m1fn")),
    ]
    return cases


# -- the implementations --------------------------------------------------------


def _zarrpy_write(path: Path, case: Case, data: np.ndarray) -> None:
    import zarrpy

    a = zarrpy.create_array(str(path), shape=data.shape, chunks=(3,), dtype=case.dtype)
    a[...] = data


def _zarrpy_read(path: Path) -> Any:
    import zarrpy

    return zarrpy.open_array(str(path), mode="r")[...]


def _zarr_write(path: Path, case: Case, data: np.ndarray) -> None:
    import zarr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dtype = case.zp_dtype if case.zp_dtype is not None else case.dtype
        if dtype == "variable_length_bytes":
            from zarr.dtype import VariableLengthBytes

            dtype = VariableLengthBytes()
        z = zarr.create_array(str(path), shape=data.shape, chunks=(3,), dtype=dtype, zarr_format=3)
        z[...] = data


def _zarr_read(path: Path) -> Any:
    import zarr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(str(path), mode="r")[...]


def _ts_write(path: Path, case: Case, data: np.ndarray) -> None:
    import tensorstore as ts

    name = case.ts_dtype or case.name
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)},
                 "metadata": {"data_type": name, "shape": list(data.shape),
                              "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}}}},
                create=True).result()
    t[...] = data
    t.write(data).result()


def _ts_read(path: Path) -> Any:
    import tensorstore as ts

    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}, open=True).result().read().result()


def _zarrs_write(path: Path, case: Case, data: np.ndarray) -> None:
    """zarrs through zarrista: zarrs' ArrayBuilder makes the metadata, zarrs encodes the chunks."""
    import zarrista as zt
    from zarrista.store import FilesystemStore

    from zarrpy.core.dtypes import DataType

    dt = DataType.from_numpy(case.dtype)
    fill = b"" if dt.is_variable else np.zeros(1, dt.numpy).tobytes()
    grid = zt.ChunkGrid.regular(list(data.shape), chunk_shape=[3])
    meta = dict(zt.ArrayBuilder(grid, zt.DataType.from_metadata(dt.to_json()), zt.FillValue(fill)).create_metadata())
    array = zt.Array.from_metadata(meta, FilesystemStore(str(path)), "/")
    array.store_metadata()
    if dt.is_variable:
        items = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in data.reshape(-1)]
        offsets = np.concatenate([[0], np.cumsum([len(v) for v in items])]).tolist()
        payload = zt.ArrayBytes(b"".join(items), offsets=offsets)
    else:
        payload = zt.ArrayBytes(np.ascontiguousarray(data).tobytes())
    array.store_array_subset(array.subset_all, payload)


def _zarrs_read(path: Path, like: np.ndarray) -> Any:
    import zarrista as zt
    from zarrista.store import FilesystemStore

    got = zt.Array.open(FilesystemStore(str(path)), "/")[...]
    if hasattr(got, "buffer"):
        return np.frombuffer(got.buffer(), dtype=like.dtype).reshape(like.shape)
    return got.to_numpy()


IMPLEMENTATIONS: dict[str, tuple[Callable[..., None], Callable[..., Any]]] = {
    "zarrpy": (_zarrpy_write, _zarrpy_read),
    "zarr-python": (_zarr_write, _zarr_read),
    "tensorstore": (_ts_write, _ts_read),
    "zarrs (zarrista)": (_zarrs_write, _zarrs_read),
}


def _same(got: Any, want: np.ndarray) -> bool:
    got = np.asarray(got)
    if got.shape != want.shape:
        return False
    if want.dtype.kind == "O" or got.dtype.kind in "OT":
        return [v if isinstance(v, bytes) else str(v) for v in got.ravel().tolist()] == \
            [v if isinstance(v, bytes) else str(v) for v in want.ravel().tolist()]
    if got.dtype.itemsize != want.dtype.itemsize:
        return False
    if want.dtype.kind in "SU":
        return bool((got == want).all())
    from zarrpy.core.dtypes import bit_size

    got_bytes = np.frombuffer(np.ascontiguousarray(got).tobytes(), np.uint8)
    want_bytes = np.frombuffer(np.ascontiguousarray(want).tobytes(), np.uint8)
    bits = bit_size(want.dtype)
    if bits < 8:  # sub-byte types: only the low bits carry the value (writers differ in the rest)
        mask = (1 << bits) - 1
        return bool(((got_bytes & mask) == (want_bytes & mask)).all())
    return bool((got_bytes == want_bytes).all())  # bit for bit


def _why(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    text = re.sub(r"/\S+", "<path>", text)
    return text[:160]


def measure() -> tuple[list[str], list[list[str]], list[str]]:
    cases = _cases()
    names = list(IMPLEMENTATIONS)
    rows: list[list[str]] = []
    notes: list[str] = []
    work = Path(tempfile.mkdtemp(prefix="support-matrix-"))
    try:
        for case in cases:
            data = case.values()
            row = [f"`{case.name}`"]
            ours = work / f"{case.name}-zarrpy"
            try:
                _zarrpy_write(ours, case, data)
                ours_ok = _same(_zarrpy_read(ours), data)
            except Exception as exc:  # noqa: BLE001 - the table records it
                ours_ok = False
                notes.append(f"`{case.name}`, zarrpy writes: {_why(exc)}")
            for impl in names:
                write, read = IMPLEMENTATIONS[impl]
                cell = ""
                if impl == "zarrpy":
                    cell = "R W" if ours_ok else "-"
                    row.append(cell)
                    continue
                try:
                    ok = ours_ok and _same(read(ours, data) if impl.startswith("zarrs") else read(ours), data)
                    cell += "R" if ok else ""
                    if not ok and ours_ok:
                        notes.append(f"`{case.name}`, {impl} reads zarrpy's array: other values")
                except Exception as exc:  # noqa: BLE001
                    notes.append(f"`{case.name}`, {impl} reads zarrpy's array: {_why(exc)}")
                theirs = work / f"{case.name}-{impl.split()[0]}"
                try:
                    write(theirs, case, data)
                    if _same(_zarrpy_read(theirs), data):
                        cell += " W" if cell else "W"
                    else:
                        notes.append(f"`{case.name}`, {impl} writes: zarrpy reads other values")
                except Exception as exc:  # noqa: BLE001
                    notes.append(f"`{case.name}`, {impl} writes: {_why(exc)}")
                row.append(cell.strip() or "-")
            rows.append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ["data type", *names], rows, notes


def render(header: list[str], rows: list[list[str]], notes: list[str]) -> str:
    versions = ", ".join(f"{d} {importlib.metadata.version(d)}" for d in ("zarrpy", "zarr", "tensorstore", "zarrista",
                                                                           "ml_dtypes", "numpy"))
    lines = [BEGIN, "", f"Measured by `spec-fixtures/support_matrix.py` with {versions}.", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += ["", "<details><summary>Why a cell is empty (first line of each refusal)</summary>", ""]
    lines += [f"- {n}" for n in notes] or ["- (none)"]
    lines += ["", "</details>", "", END]
    return "\n".join(lines)


def main() -> int:
    header, rows, notes = measure()
    table = render(header, rows, notes)
    text = DOC.read_text() if DOC.exists() else f"# Data types\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text:
        text += f"\n{BEGIN}\n{END}\n"
    start, end = text.index(BEGIN), text.index(END) + len(END)
    DOC.write_text(text[:start] + table + text[end:])
    print(table)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(1)
