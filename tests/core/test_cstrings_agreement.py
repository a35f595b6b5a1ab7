"""The compiled string converter and its pure-Python twin agree on every input.

``zarrpy.core._cstrings`` (C) and :mod:`zarrpy.core._vlen_python` promise the
same functions, arguments and results: a success is the same array or bytes,
a malformed input the same ``(code, index, value)`` tuple. Three kinds of
check, on inputs drawn from valid element lists (empty strings, NULs, 2/3/4-byte
UTF-8, every kind of invalid UTF-8) and then mutated (flipped, truncated or
appended bytes, overwritten length prefixes and counts, random byte soup):

- *reference* checks run on every importable module, the pure-Python one
  always: results against an obvious model of the layouts written here,
  against numcodecs' VLenUTF8/VLenBytes and against Python's strict UTF-8
  decoder (an element is accepted iff ``bytes.decode("utf-8")`` accepts it);
- *agreement* checks compare the two modules on the same input (they need the
  compiled module and skip without it);
- compiled-only checks: no read past the end of the input (the buffer ends at
  a PROT_NONE guard page, in a subprocess so a segfault fails the test) and
  the GIL released during a conversion.

The reference model's order of failures is the buffer's order: the count
header, then per element its length prefix, its bytes and (strings) their
UTF-8, then bytes after the last element.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import subprocess
import sys
import textwrap
import threading
import tracemalloc
from pathlib import Path
from typing import Any, Callable

import numcodecs
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from zarrpy.core import _vlen_python as P

try:
    from zarrpy.core import _cstrings as _C  # type: ignore[attr-defined]
except ImportError:  # the reference checks still run on the pure-Python module
    _C = None

SD = np.dtypes.StringDType
PLAIN = SD()
WITH_NA = SD(na_object=None)
U32_MAX = 2**32 - 1
ROOT = Path(__file__).resolve().parents[2]

IMPLS = [P] + ([_C] if _C is not None else [])
IMPL_IDS = ["python"] + (["compiled"] if _C is not None else [])
each_impl = pytest.mark.parametrize("impl", IMPLS, ids=IMPL_IDS)


@pytest.fixture(scope="module")
def C():
    """The compiled module; only the compiled-vs-python checks skip without it."""
    return pytest.importorskip("zarrpy.core._cstrings")


# -- layouts: an obvious model ---------------------------------------------------------


def interleaved(elements: list[bytes], count: int | None = None) -> bytes:
    """``[n: u32 LE]`` then per element ``[nbytes: u32 LE][bytes]``."""
    head = struct.pack("<I", len(elements) if count is None else count)
    return head + b"".join(struct.pack("<I", len(e)) + e for e in elements)


def prefix_positions(elements: list[bytes]) -> list[int]:
    """Where each element's length prefix sits in ``interleaved(elements)``."""
    at, pos = [], 4
    for e in elements:
        at.append(pos)
        pos += 4 + len(e)
    return at


def decodes(e: bytes) -> bool:
    try:
        e.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def parse(buf: bytes, n: int, allow_trailing: bool, utf8: bool) -> tuple[list[bytes] | None, tuple | None]:
    """The n elements of an interleaved buffer, or the first failure in buffer order."""
    size = len(buf)
    if size < 4:
        return None, (P.E_SHORT, 0, size)
    count = int.from_bytes(buf[:4], "little")
    if count != n:
        return None, (P.E_COUNT, count, n)
    if (size - 4) // 4 < n:
        return None, (P.E_TRUNCATED, n, size)
    pos, items = 4, []
    for i in range(n):
        if pos + 4 > size:
            return None, (P.E_PREFIX_PAST, i, n)
        length = int.from_bytes(buf[pos : pos + 4], "little")
        pos += 4
        if pos + length > size:
            return None, (P.E_DATA_PAST, i, size)
        if utf8 and not decodes(buf[pos : pos + length]):
            return None, (P.E_UTF8, i, 0)
        items.append(buf[pos : pos + length])
        pos += length
    if pos < size and not allow_trailing:
        return None, (P.E_TRAILING, 0, size - pos)
    return items, None


def offsets_failure(offsets: list[int], size: int) -> tuple | None:
    """Offsets must start in ``[0, size]``, never decrease and never pass ``size``."""
    if not 0 <= offsets[0] <= size:
        return (P.E_OFFSETS, 0, offsets[0])
    for k in range(len(offsets) - 1):
        if offsets[k + 1] < offsets[k] or offsets[k + 1] > size:
            return (P.E_OFFSETS, k + 1, offsets[k + 1])
    return None


def interleaved_offsets_failure(offsets: list[int], size: int) -> tuple | None:
    """offsets_to_interleaved's order: a bad start or a decrease, then an
    element longer than a u32 prefix holds, then offsets past the data."""
    if not 0 <= offsets[0] <= size:
        return (P.E_OFFSETS, 0, offsets[0])
    for k in range(len(offsets) - 1):
        if offsets[k + 1] < offsets[k]:
            return (P.E_OFFSETS, k + 1, offsets[k + 1])
    for k in range(len(offsets) - 1):
        if offsets[k + 1] - offsets[k] > U32_MAX:
            return (P.E_TOO_LONG, k, min(offsets[k + 1] - offsets[k], 2**63 - 1))
    return offsets_failure(offsets, size)


def offsets_of(elements: list[bytes], start: int = 0) -> np.ndarray:
    return np.cumsum([start] + [len(e) for e in elements]).astype(np.int64)


# -- strategies -------------------------------------------------------------------------

VALID_EDGES = [b"", b"\x00", b"a\x00b", b"\x00" * 9, b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xed\x9f\xbf",
               b"\xee\x80\x80", b"\xef\xbf\xbf", b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf", "é€😀".encode()]
INVALID = [b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xed\xa0\x80",
           b"\xed\xbf\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
           b"\xf8\x88\x80\x80\x80", b"\xfe", b"\xff", b"\xc2a", b"\xe2\x82a", b"\xf0\x9f\x98a"]
TRUNCATED = [b"\xc2", b"\xe2", b"\xe2\x82", b"\xf0", b"\xf0\x9f", b"\xf0\x9f\x98"]
SIZE_FIELDS = [U32_MAX, U32_MAX - 1, 2**31, 2**31 - 1, 2**16]

texts = st.text(max_size=10).map(str.encode)  # any code point but surrogates: 1-4 bytes each
ascii_runs = st.text(st.characters(max_codepoint=127), min_size=7, max_size=19).map(str.encode)  # 8-byte words
valid_elements = st.one_of(texts, ascii_runs, st.sampled_from(VALID_EDGES))
elements = st.one_of(
    valid_elements,
    st.builds(lambda a, b, c: a + b + c, texts, st.sampled_from(INVALID + VALID_EDGES), texts),
    st.builds(lambda a, b: a + b, st.one_of(texts, ascii_runs), st.sampled_from(TRUNCATED)),  # truncated at the end
    st.binary(max_size=12),
)
valid_lists = st.lists(valid_elements, max_size=8)
element_lists = st.lists(elements, max_size=8)


@st.composite
def mutated(draw: Any, elems: list[bytes]) -> bytes:
    """``interleaved(elems)`` with zero to three changes (none a third of the
    time), or random bytes."""
    buf = interleaved(elems)
    if draw(st.sampled_from(["layout"] * 9 + ["soup"])) == "soup":
        return draw(st.binary(min_size=1, max_size=64))
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2, 3]))):
        kind = draw(st.sampled_from(["flip", "truncate", "append", "prefix", "count", "delete"]))
        n = len(buf)
        if kind == "flip" and n:
            b = bytearray(buf)
            b[draw(st.integers(0, n - 1))] ^= draw(st.integers(1, 255))
            buf = bytes(b)
        elif kind == "truncate":  # mostly a few bytes off the end
            cut = draw(st.one_of(st.integers(1, 6), st.integers(0, n)))
            buf = buf[: max(n - cut, 0)]
        elif kind == "append":
            buf += draw(st.one_of(st.binary(min_size=1, max_size=8), st.just(b"\x00" * 4)))
        elif kind == "delete" and n:
            at = draw(st.integers(0, n - 1))
            buf = buf[:at] + buf[at + draw(st.integers(1, 4)) :]
        elif kind in ("prefix", "count"):
            at = 0 if kind == "count" or not elems else draw(st.sampled_from(prefix_positions(elems)))
            value = draw(st.one_of(st.sampled_from(SIZE_FIELDS), st.integers(0, 40)))
            buf = buf[:at] + struct.pack("<I", value) + buf[at + 4 :]
    return buf


def declared_count(buf: bytes) -> int | None:
    return int.from_bytes(buf[:4], "little") if len(buf) >= 4 else None


@st.composite
def counts(draw: Any, elems: list[bytes], buf: bytes, small: bool) -> int:
    """The element count a caller expects: mostly the list's, sometimes what the
    header says (up to 2**32-1 unless ``small``) or one off."""
    n = len(elems)
    choices = [n] * 6 + [max(n - 1, 0), n + 1]
    head = declared_count(buf)
    if head is not None and (not small or head <= 12):
        choices.append(head)
    return draw(st.sampled_from(choices))


BUFFER_FORMS: dict[str, Callable[[bytes], Any]] = {
    "bytes": bytes,
    "bytearray": bytearray,
    "memoryview": memoryview,
    "numpy": lambda b: np.frombuffer(b, dtype=np.uint8),
}
buffer_forms = st.sampled_from(sorted(BUFFER_FORMS))

LAYOUTS = ["flat", "shaped", "reversed", "strided", "fortran", "zero_d"]


@st.composite
def layouts(draw: Any, size: int) -> tuple[str, tuple[int, ...]]:
    """How an array of ``size`` elements lies in memory: a kind and a shape."""
    kind = draw(st.sampled_from(LAYOUTS if size == 1 else LAYOUTS[:-1]))
    if kind in ("flat", "reversed", "zero_d"):
        return kind, (() if kind == "zero_d" else (size,))
    divisors = [d for d in range(1, size + 1) if size % d == 0] or [0]
    d = draw(st.sampled_from(divisors))
    shape = (d, size // d if d else 0)
    if draw(st.booleans()):
        shape = (1,) + shape
    return kind, shape


def make_array(kind: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A new array of ``shape`` laid out as ``kind`` says (views for all but flat/shaped/zero_d)."""
    if kind in ("flat", "shaped", "zero_d"):
        return np.empty(shape, dtype=dtype)
    if kind == "reversed":
        return np.empty(shape, dtype=dtype)[::-1]
    if kind == "strided":
        base = np.empty(shape[:-1] + (2 * shape[-1] + 1,), dtype=dtype)
        return base[..., 1::2]
    return np.empty(shape[::-1], dtype=dtype).T  # fortran


def filled(kind: str, shape: tuple[int, ...], dtype: Any, items: list) -> np.ndarray:
    arr = make_array(kind, shape, dtype)
    flat = np.empty(len(items), dtype=object)
    flat[:] = items
    arr[...] = flat.reshape(shape)
    return arr


@st.composite
def masks(draw: Any, size: int, present: int | None) -> np.ndarray:
    """A bool mask of ``size`` entries, with exactly ``present`` True ones when given."""
    if present is None or present > size:
        return np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool)
    where = draw(st.lists(st.integers(0, size - 1), min_size=present, max_size=present, unique=True)) if size else []
    mask = np.zeros(size, dtype=bool)
    mask[where] = True
    return mask


# -- comparing results -------------------------------------------------------------------


def normal(result: Any) -> Any:
    """A comparable form of a module function's result."""
    if result is None:
        return None
    if isinstance(result, tuple) and len(result) == 3 and all(type(v) is int for v in result):
        return ("failure", result)
    if isinstance(result, np.ndarray):
        return ("array", result.dtype.str, result.shape, result.tolist())
    if isinstance(result, (bytes, bytearray)):
        return ("bytes", bytes(result))  # the type is checked by test_encoders_return_bytes
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], np.ndarray):
        offsets, data = result
        return ("offsets", offsets.dtype.str, offsets.shape, offsets.tolist(), type(data).__name__, bytes(data))
    raise AssertionError(f"unexpected result {result!r}")


def outcome(fn: Callable[[], Any]) -> Any:
    """``normal(fn())``, or the class of what it raised."""
    try:
        return normal(fn())
    except Exception as exc:
        return ("raised", type(exc))


def as_list(arr: np.ndarray) -> list:
    return np.asarray(arr, dtype=object).reshape(-1).tolist()


# -- interleaved -> strings ---------------------------------------------------------------


@st.composite
def string_decode_cases(draw: Any) -> dict[str, Any]:
    elems = draw(element_lists)
    buf = draw(mutated(elems))
    use_mask = draw(st.booleans())
    n = draw(counts(elems, buf, small=True))
    if use_mask:
        size = n + draw(st.integers(0, 3))
        mask = draw(masks(size, draw(st.sampled_from([n, n, n, n, None]))))
    else:
        size, mask = n, None
    kind, shape = draw(layouts(size))
    mask_shaped = mask is not None and draw(st.booleans())
    return {
        "buf": buf,
        "form": draw(buffer_forms),
        "layout": (kind, shape),
        "dtype": draw(st.sampled_from([PLAIN, WITH_NA])),
        "mask": None if mask is None else (mask.reshape(shape) if mask_shaped else mask),
        "allow_trailing": draw(st.booleans()),
    }


def decode_strings(impl: Any, case: dict[str, Any]) -> tuple[Any, np.ndarray]:
    out = make_array(*case["layout"], case["dtype"])
    has_na = case["dtype"] is WITH_NA
    got = outcome(lambda: impl.interleaved_to_strings(BUFFER_FORMS[case["form"]](case["buf"]), out, case["mask"],
                                                      case["allow_trailing"], has_na))
    return got, out


def expected_strings(case: dict[str, Any]) -> tuple[Any, list | None]:
    """The model's failure, or the out array's elements in C order."""
    kind, shape = case["layout"]
    size = int(np.prod(shape, dtype=np.int64))
    mask = None if case["mask"] is None else np.asarray(case["mask"]).reshape(-1).tolist()
    n = size if mask is None else sum(mask)
    items, failure = parse(case["buf"], n, case["allow_trailing"], utf8=True)
    if failure is not None:
        return ("failure", failure), None
    strings = iter([e.decode() for e in items])
    missing = None if case["dtype"] is WITH_NA else ""
    return None, [next(strings) if mask is None or mask[k] else missing for k in range(size)]


PRECEDENCE_CASE = {"buf": interleaved([b"\xff", b"a"]) + b"zz", "form": "bytes", "layout": ("flat", (2,)),
                   "dtype": PLAIN, "mask": None, "allow_trailing": False}


@each_impl
@given(case=string_decode_cases())
@example(case=PRECEDENCE_CASE)
def test_interleaved_to_strings_matches_the_model(impl, case):
    """Results, failures and the filled ``out`` are the model's for any buffer, out layout and mask."""
    got, out = decode_strings(impl, case)
    want, values = expected_strings(case)
    assert got == want
    if values is not None:
        assert out.dtype == case["dtype"] and out.shape == case["layout"][1]
        assert as_list(out) == values


@given(case=string_decode_cases())
@example(case=PRECEDENCE_CASE)
def test_interleaved_to_strings_agrees(C, case):
    got_c, out_c = decode_strings(C, case)
    got_p, out_p = decode_strings(P, case)
    assert got_c == got_p
    if got_c is None:
        assert as_list(out_c) == as_list(out_p)


@each_impl
@given(elems=element_lists)
def test_an_element_is_accepted_iff_python_decodes_it(impl, elems):
    """Strict UTF-8 as Python's: overlongs, surrogates, > U+10FFFF and truncated sequences are refused."""
    buf = interleaved(elems)
    out = np.empty(len(elems), dtype=PLAIN)
    got = impl.interleaved_to_strings(buf, out, None, False, False)
    bad = [i for i, e in enumerate(elems) if not decodes(e)]
    if bad:
        assert got == (P.E_UTF8, bad[0], 0)
    else:
        assert got is None
        assert out.tolist() == [e.decode() for e in elems] == numcodecs.VLenUTF8().decode(buf).tolist()


@each_impl
@pytest.mark.parametrize("snippet", INVALID + TRUNCATED + VALID_EDGES, ids=lambda b: b.hex() or "empty")
def test_each_utf8_edge(impl, snippet):
    """Every listed sequence alone, after a long ASCII run (the 8-byte fast path) and before one."""
    for elem in (snippet, b"abcdefghij" + snippet, snippet + b"abcdefghij"):
        out = np.empty(2, dtype=PLAIN)
        got = impl.interleaved_to_strings(interleaved([b"ok", elem]), out, None, False, False)
        assert got == (None if decodes(elem) else (P.E_UTF8, 1, 0))
        offsets = offsets_of([b"ok", elem])
        got = impl.offsets_to_strings(offsets, b"ok" + elem, np.empty(2, dtype=PLAIN))
        assert got == (None if decodes(elem) else (P.E_UTF8, 1, 0))


# -- interleaved -> bytes / offsets ---------------------------------------------------------


@st.composite
def bytes_decode_cases(draw: Any) -> tuple[bytes, str, int, bool]:
    elems = draw(element_lists)
    buf = draw(mutated(elems))
    return buf, draw(buffer_forms), draw(counts(elems, buf, small=False)), draw(st.booleans())


@each_impl
@given(case=bytes_decode_cases())
def test_interleaved_to_bytes_matches_the_model(impl, case):
    buf, form, n, allow_trailing = case
    items, failure = parse(buf, n, allow_trailing, utf8=False)
    got = outcome(lambda: impl.interleaved_to_bytes(BUFFER_FORMS[form](buf), n, allow_trailing))
    if failure is not None:
        assert got == ("failure", failure)
    else:
        assert got == ("array", "|O", (n,), items)


@each_impl
@given(case=bytes_decode_cases())
def test_interleaved_to_offsets_matches_the_model(impl, case):
    buf, form, n, allow_trailing = case
    items, failure = parse(buf, n, allow_trailing, utf8=False)
    got = outcome(lambda: impl.interleaved_to_offsets(BUFFER_FORMS[form](buf), n, allow_trailing))
    if failure is not None:
        assert got == ("failure", failure)
    else:
        assert got == ("offsets", "<i8", (n + 1,), offsets_of(items).tolist(), "bytes", b"".join(items))


@given(case=bytes_decode_cases())
def test_interleaved_to_bytes_and_offsets_agree(C, case):
    buf, form, n, allow_trailing = case
    for name in ("interleaved_to_bytes", "interleaved_to_offsets"):
        got = [outcome(lambda m=m: getattr(m, name)(BUFFER_FORMS[form](buf), n, allow_trailing)) for m in (C, P)]
        assert got[0] == got[1], name


@each_impl
@given(elems=valid_lists, extra=st.binary(max_size=6))
def test_valid_buffers_decode_as_numcodecs_does(impl, elems, extra):
    """numcodecs ignores bytes after the last element; so does ``allow_trailing=True``."""
    buf = numcodecs.VLenBytes().encode(np.array(elems + [b""], dtype=object)[:-1])
    assert bytes(buf) == interleaved(elems)
    want = numcodecs.VLenBytes().decode(bytes(buf) + extra).tolist()
    assert impl.interleaved_to_bytes(bytes(buf) + extra, len(elems), True).tolist() == want == elems
    strings = numcodecs.VLenUTF8().decode(bytes(buf) + extra).tolist()
    out = np.empty(len(elems), dtype=PLAIN)
    assert impl.interleaved_to_strings(bytes(buf) + extra, out, None, True, False) is None
    assert out.tolist() == strings


# -- offsets -> interleaved / strings / bytes -------------------------------------------------


@st.composite
def offsets_cases(draw: Any) -> tuple[np.ndarray, bytes]:
    """Offsets over joined elements, maybe not from 0, maybe broken; the data maybe shorter."""
    elems = draw(element_lists)
    lead, tail = draw(st.binary(max_size=4)), draw(st.binary(max_size=4))
    offsets = offsets_of(elems, len(lead)).tolist()
    data = lead + b"".join(elems) + tail
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["offset", "truncate"]))
        if kind == "offset":
            k = draw(st.integers(0, len(offsets) - 1))
            offsets[k] = draw(st.one_of(st.integers(-3, len(data) + 3), st.sampled_from([-(2**63), 2**63 - 1])))
        else:
            data = data[: draw(st.integers(0, len(data)))]
    return np.array(offsets, dtype=np.int64), data


def offsets_elements(offsets: np.ndarray, data: bytes) -> list[bytes]:
    o = offsets.tolist()
    return [data[o[k] : o[k + 1]] for k in range(len(o) - 1)]


@each_impl
@given(case=offsets_cases(), form=buffer_forms)
def test_offsets_to_interleaved_and_bytes_match_the_model(impl, case, form):
    offsets, data = case
    n = len(offsets) - 1
    failure = offsets_failure(offsets.tolist(), len(data))
    got_il = outcome(lambda: impl.offsets_to_interleaved(offsets, BUFFER_FORMS[form](data), n))
    got_b = outcome(lambda: impl.offsets_to_bytes(offsets, BUFFER_FORMS[form](data), n))
    if failure is not None:
        assert got_b == ("failure", failure)
        assert got_il == ("failure", interleaved_offsets_failure(offsets.tolist(), len(data)))
    else:
        items = offsets_elements(offsets, data)
        assert got_il == ("bytes", interleaved(items))
        assert got_b == ("array", "|O", (n,), items)


@each_impl
@given(case=offsets_cases(), data=st.data())
def test_offsets_to_strings_matches_the_model(impl, case, data):
    offsets, raw = case
    n = len(offsets) - 1
    kind, shape = data.draw(layouts(n))
    dtype = data.draw(st.sampled_from([PLAIN, WITH_NA]))
    out = make_array(kind, shape, dtype)
    got = impl.offsets_to_strings(offsets, raw, out)
    failure = offsets_failure(offsets.tolist(), len(raw))
    if failure is None:
        bad = [k for k, e in enumerate(offsets_elements(offsets, raw)) if not decodes(e)]
        failure = (P.E_UTF8, bad[0], 0) if bad else None
    assert got == failure
    if failure is None:
        assert as_list(out) == [e.decode() for e in offsets_elements(offsets, raw)]


@given(case=offsets_cases(), data=st.data())
def test_offsets_functions_agree(C, case, data):
    offsets, raw = case
    n = len(offsets) - 1
    form = data.draw(buffer_forms)
    for name in ("offsets_to_interleaved", "offsets_to_bytes"):
        got = [outcome(lambda m=m: getattr(m, name)(offsets, BUFFER_FORMS[form](raw), n)) for m in (C, P)]
        assert got[0] == got[1], name
    layout, dtype = data.draw(layouts(n)), data.draw(st.sampled_from([PLAIN, WITH_NA]))
    outs = [make_array(*layout, dtype) for _ in range(2)]
    got = [outcome(lambda m=m, o=o: m.offsets_to_strings(offsets, BUFFER_FORMS[form](raw), o))
           for m, o in zip((C, P), outs)]
    assert got[0] == got[1]
    if got[0] is None:
        assert as_list(outs[0]) == as_list(outs[1])


# -- strings -> interleaved / offsets ----------------------------------------------------------

strings_or_na = st.lists(st.one_of(texts.map(bytes.decode), st.sampled_from(["", "\x00", "a\x00", "😀" * 3]),
                                   st.none()), max_size=8)


@st.composite
def string_arrays(draw: Any) -> dict[str, Any]:
    items = draw(strings_or_na)
    dtype = draw(st.sampled_from([PLAIN, WITH_NA]))
    if dtype is PLAIN:
        items = ["" if s is None else s for s in items]
    layout = draw(layouts(len(items)))
    mask = draw(st.one_of(st.none(), masks(len(items), None)))
    if mask is not None and draw(st.booleans()):
        mask = mask.reshape(layout[1])
    return {"items": items, "dtype": dtype, "layout": layout, "mask": mask}


def expected_encoding(case: dict[str, Any]) -> tuple[list[bytes] | None, tuple | None]:
    mask = None if case["mask"] is None else np.asarray(case["mask"]).reshape(-1).tolist()
    kept = []
    for k, s in enumerate(case["items"]):
        if mask is not None and not mask[k]:
            continue
        if s is None:
            return None, (P.E_MISSING, k, 0)
        kept.append(s.encode())
    return kept, None


@each_impl
@given(case=string_arrays())
def test_strings_to_interleaved_and_offsets_match_the_model(impl, case):
    arr = filled(*case["layout"], case["dtype"], case["items"])
    kept, failure = expected_encoding(case)
    got_il = outcome(lambda: impl.strings_to_interleaved(arr, case["mask"]))
    got_off = outcome(lambda: impl.strings_to_offsets(arr, case["mask"]))
    if failure is not None:
        assert got_il == got_off == ("failure", failure)
        return
    assert got_il == ("bytes", interleaved(kept))
    assert got_off == ("offsets", "<i8", (len(kept) + 1,), offsets_of(kept).tolist(), "bytes", b"".join(kept))
    strings = np.array([b.decode() for b in kept] + [None], dtype=object)[:-1]
    assert got_il[1] == bytes(numcodecs.VLenUTF8().encode(strings))


@given(case=string_arrays())
def test_strings_encoders_agree(C, case):
    arr = filled(*case["layout"], case["dtype"], case["items"])
    for name in ("strings_to_interleaved", "strings_to_offsets"):
        got = [outcome(lambda m=m: getattr(m, name)(arr, case["mask"])) for m in (C, P)]
        assert got[0] == got[1], name


@each_impl
@given(case=string_arrays())
def test_split_missing_matches_the_model(impl, case):
    src = filled(*case["layout"], case["dtype"], case["items"])
    dst = make_array(*case["layout"], PLAIN)
    present = impl.split_missing(src, dst)
    assert present.dtype == bool and present.tolist() == [s is not None for s in case["items"]]
    assert as_list(dst) == ["" if s is None else s for s in case["items"]]


@given(case=string_arrays(), dst_layout=st.sampled_from(LAYOUTS[:-1]))
def test_split_missing_agrees(C, case, dst_layout):
    src = filled(*case["layout"], case["dtype"], case["items"])
    shape = case["layout"][1]
    dst_kind = dst_layout if shape else "zero_d"
    dsts = [make_array(dst_kind, shape, PLAIN) for _ in range(2)]
    got = [outcome(lambda m=m, d=d: m.split_missing(src, d)) for m, d in zip((C, P), dsts)]
    assert got[0] == got[1]
    assert as_list(dsts[0]) == as_list(dsts[1])


@each_impl
@given(case=string_arrays())
def test_strings_round_trip_through_both_layouts(impl, case):
    """Encode present elements, decode into an out with the same mask: the values come back."""
    items = ["" if s is None else s for s in case["items"]]
    arr = filled(*case["layout"], WITH_NA, items)
    mask = case["mask"]
    buf = impl.strings_to_interleaved(arr, mask)
    out = make_array(*case["layout"], WITH_NA)
    assert impl.interleaved_to_strings(buf, out, mask, False, True) is None
    flat_mask = [True] * len(items) if mask is None else np.asarray(mask).reshape(-1).tolist()
    assert as_list(out) == [s if keep else None for s, keep in zip(items, flat_mask)]
    offsets, data = impl.strings_to_offsets(arr, mask)
    assert impl.offsets_to_interleaved(offsets, data, len(offsets) - 1) == bytes(buf)
    assert impl.interleaved_to_offsets(buf, len(offsets) - 1, False)[1] == data


# -- bytes objects -> interleaved / offsets ------------------------------------------------------


class BytesSubclass(bytes):
    pass


ELEMENT_KINDS: dict[str, Callable[[bytes], Any]] = {
    "bytes": bytes,
    "subclass": BytesSubclass,
    "bytearray": bytearray,
    "memoryview": memoryview,
    "memoryview-i2": lambda b: memoryview(np.frombuffer(b[: len(b) // 2 * 2], dtype="<i2")),
    "str": lambda b: b.decode("latin-1"),
    "int": len,
    "None": lambda b: None,
}


@st.composite
def object_arrays(draw: Any) -> tuple[list[tuple[str, bytes]], tuple[str, tuple[int, ...]]]:
    kinds = st.sampled_from(sorted(ELEMENT_KINDS))
    pairs = draw(st.lists(st.tuples(st.one_of(st.just("bytes"), kinds), st.binary(max_size=6)), max_size=8))
    return pairs, draw(layouts(len(pairs)))


def build_objects(pairs: list[tuple[str, bytes]], layout: tuple[str, tuple[int, ...]]) -> np.ndarray:
    return filled(*layout, object, [ELEMENT_KINDS[kind](raw) for kind, raw in pairs])


@each_impl
@given(case=object_arrays())
def test_bytes_encoders_match_the_model(impl, case):
    pairs, layout = case
    arr = build_objects(pairs, layout)
    values = [ELEMENT_KINDS[kind](raw) for kind, raw in pairs]
    strict = [k for k, (kind, _) in enumerate(pairs) if kind not in ("bytes", "subclass")]
    loose = [k for k, (kind, _) in enumerate(pairs) if kind in ("str", "int", "None")]
    got = outcome(lambda: impl.bytes_to_interleaved(arr))
    if strict:
        assert got == ("failure", (P.E_NOT_TYPE, strict[0], 0))
    else:
        assert got == ("bytes", interleaved([bytes(v) for v in values]))
        plain = np.array([bytes(v) for v in values] + [None], dtype=object)[:-1]
        assert got[1] == bytes(numcodecs.VLenBytes().encode(plain))
    got = outcome(lambda: impl.bytes_to_offsets(arr))
    if loose:
        assert got == ("failure", (P.E_NOT_TYPE, loose[0], 0))
    else:
        raw = [bytes(v) for v in values]
        assert got == ("offsets", "<i8", (len(raw) + 1,), offsets_of(raw).tolist(), "bytes", b"".join(raw))


@given(case=object_arrays())
def test_bytes_encoders_agree(C, case):
    for name in ("bytes_to_interleaved", "bytes_to_offsets"):
        got = [outcome(lambda m=m: getattr(m, name)(build_objects(*case))) for m in (C, P)]
        assert got[0] == got[1], name


# -- fixed hostile cases -------------------------------------------------------------------------

HOSTILE = {
    "oversized prefix": (struct.pack("<II", 1, U32_MAX) + b"ab", 1, (P.E_DATA_PAST, 0, 10)),
    "prefix just past": (struct.pack("<II", 1, 3) + b"ab", 1, (P.E_DATA_PAST, 0, 10)),
    "second prefix 2**31": (interleaved([b"a"], 2) + struct.pack("<I", 2**31) + b"xy", 2, (P.E_DATA_PAST, 1, 15)),
    "prefix cut": (interleaved([b"abcd"], 2) + b"\x00\x00", 2, (P.E_PREFIX_PAST, 1, 2)),
    "huge count": (b"\xff\xff\xff\xff", U32_MAX, (P.E_TRUNCATED, U32_MAX, 4)),
    "huge count, some prefixes": (b"\xff\xff\xff\xff" + b"\x00" * 64, U32_MAX, (P.E_TRUNCATED, U32_MAX, 68)),
    "count differs": (b"\xff\xff\xff\xff" + b"\x00" * 8, 2, (P.E_COUNT, U32_MAX, 2)),
    "short": (b"\x01\x00\x00", 1, (P.E_SHORT, 0, 3)),
    "empty": (b"", 0, (P.E_SHORT, 0, 0)),
    "trailing": (interleaved([b"a"]) + b"\x00", 1, (P.E_TRAILING, 0, 1)),
}


@each_impl
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_headers_fail_fast(impl, name):
    """A count of 2**32-1 or a length of 0xFFFFFFFF in a short buffer: the failure, no big allocation."""
    buf, n, want = HOSTILE[name]
    tracemalloc.start()
    try:
        got_b = impl.interleaved_to_bytes(buf, n, False)
        got_o = impl.interleaved_to_offsets(buf, n, False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got_b == got_o == want
    assert peak < 1 << 20
    if n <= 3:
        assert impl.interleaved_to_strings(buf, np.empty(n, dtype=PLAIN), None, False, False) == want


def test_error_codes_are_the_same(C):
    names = [name for name in dir(P) if name.startswith("E_")]
    assert len(names) == 12
    assert {name: getattr(C, name) for name in names} == {name: getattr(P, name) for name in names}


@each_impl
@pytest.mark.parametrize("bad", ["abcd", 5, None], ids=["str", "int", "None"])
def test_a_buffer_of_the_wrong_type_is_a_type_error(impl, bad):
    with pytest.raises(TypeError):
        impl.interleaved_to_bytes(bad, 0, True)
    with pytest.raises(TypeError):
        impl.interleaved_to_offsets(bad, 0, True)
    with pytest.raises(TypeError):
        impl.interleaved_to_strings(bad, np.empty(0, dtype=PLAIN), None, True, False)


# -- findings: the twin's departures from the contract (see the docstrings) -------------------------


@each_impl
def test_encoders_return_bytes(impl):
    """The contract and the facade say ``bytes``; numcodecs' encoders return a
    bytearray, which the pure-Python twin passed on."""
    objects = np.empty(2, dtype=object)
    objects[:] = [b"a", b"bc"]
    strings = np.array(["a", "bc"], dtype=PLAIN)
    assert type(impl.strings_to_interleaved(strings, None)) is bytes
    assert type(impl.bytes_to_interleaved(objects)) is bytes
    assert type(impl.offsets_to_interleaved(np.array([0, 1, 3]), b"abc", 2)) is bytes


@each_impl
@pytest.mark.parametrize("form", ["u4-memoryview", "u4-numpy", "2-d numpy"])
def test_a_buffer_is_measured_in_bytes(impl, form):
    """The layout counts bytes: a buffer whose items are wider than a byte (or
    a 2-D array) is its bytes, not its ``len()`` (the twin used ``len``)."""
    raw = interleaved([b"ab", b"cd"])  # 16 bytes
    buf = {"u4-memoryview": memoryview(raw).cast("I"), "u4-numpy": np.frombuffer(raw, dtype="<u4"),
           "2-d numpy": np.frombuffer(raw, dtype=np.uint8).reshape(2, 8)}[form]
    assert impl.interleaved_to_bytes(buf, 2, True).tolist() == [b"ab", b"cd"]
    assert impl.interleaved_to_offsets(buf, 2, True)[1] == b"abcd"
    out = np.empty(2, dtype=PLAIN)
    assert impl.interleaved_to_strings(buf, out, None, True, False) is None
    assert out.tolist() == ["ab", "cd"]
    offsets = np.array([0, 3, 16])  # the data side of the offsets layout too
    assert impl.offsets_to_bytes(offsets, buf, 2).tolist() == [raw[:3], raw[3:]]
    assert impl.offsets_to_interleaved(offsets, buf, 2) == interleaved([raw[:3], raw[3:]])
    offsets = np.array([0, 1, 16])
    assert impl.offsets_to_strings(offsets, buf, out) is None
    assert out.tolist() == [raw[:1].decode(), raw[1:].decode()]


@each_impl
@pytest.mark.parametrize("case", ["utf8 then trailing", "utf8 then past the end"])
def test_the_first_failure_in_the_buffer_is_reported(impl, case):
    """An element that is not UTF-8 comes before trailing bytes or a later
    element running past the end, whether or not trailing bytes are allowed
    (the twin's trailing-bytes walk skipped the UTF-8 check)."""
    buf = {"utf8 then trailing": interleaved([b"\xff", b"a"]) + b"zz",
           "utf8 then past the end": interleaved([b"\xff", b"abc"])[:-1]}[case]
    for allow_trailing in (True, False):
        out = np.empty(2, dtype=PLAIN)
        assert impl.interleaved_to_strings(buf, out, None, allow_trailing, False) == (P.E_UTF8, 0, 0)


@each_impl
def test_a_non_contiguous_memoryview_element_is_not_bytes_like(impl):
    """bytes_to_offsets reports an element it cannot read as one buffer (a
    strided memoryview) as E_NOT_TYPE, so the facade names it, rather than
    letting ``bytes.join``'s TypeError out."""
    arr = np.empty(2, dtype=object)
    arr[:] = [b"x", memoryview(b"abcdef")[::2]]
    assert impl.bytes_to_offsets(arr) == (P.E_NOT_TYPE, 1, 0)


@each_impl
def test_offsets_falling_by_more_than_2_63_are_refused(impl):
    """Offsets 1 then -2**63 decrease; their int64 difference wraps to a
    positive number (the twin compared ``np.diff(offsets) < 0``)."""
    offsets, want = np.array([1, -(2**63)], dtype=np.int64), (P.E_OFFSETS, 1, -(2**63))
    assert impl.offsets_to_strings(offsets, b"\x00", np.empty(1, dtype=PLAIN)) == want
    assert impl.offsets_to_bytes(offsets, b"\x00", 1) == want
    assert impl.offsets_to_interleaved(offsets, b"\x00", 1) == want


@each_impl
def test_a_bytes_subclass_element_is_bytes(impl):
    """``bytes`` subclasses are bytes to both encoders (numcodecs' VLenBytes,
    which the twin calls, refuses them with its own TypeError)."""
    arr = np.empty(2, dtype=object)
    arr[:] = [BytesSubclass(b"ab"), b"c"]
    assert bytes(impl.bytes_to_interleaved(arr)) == interleaved([b"ab", b"c"])
    assert impl.bytes_to_offsets(arr)[1] == b"abc"


# -- compiled only: never reads past the input --------------------------------------------------------

GUARD_SCRIPT = textwrap.dedent(
    """
    import ctypes, json, mmap, resource, sys
    import numpy as np
    from zarrpy.core import _cstrings as C

    PAGE = mmap.PAGESIZE
    region = mmap.mmap(-1, 2 * PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    if libc.mprotect(addr + PAGE, PAGE, 0) != 0:  # PROT_NONE
        sys.exit("mprotect failed: errno %d" % ctypes.get_errno())
    if sys.argv[1] == "touch-guard":
        ctypes.string_at(addr + PAGE, 1)  # must crash: proves the guard works
        sys.exit("read the guard page")
    # no allocation beyond 256 MiB more than now: a header must not make one
    with open("/proc/self/statm") as f:
        vm = int(f.read().split()[0]) * PAGE
    resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 20), resource.RLIM_INFINITY))

    def at_end(data, form):
        region[PAGE - len(data):PAGE] = data
        if form == "numpy":
            return np.frombuffer(region, dtype=np.uint8, count=len(data), offset=PAGE - len(data))
        return memoryview(region)[PAGE - len(data):PAGE]

    def norm(r):
        if isinstance(r, tuple) and len(r) == 2:
            return [r[0].tolist(), r[1].hex()]
        if isinstance(r, np.ndarray):
            return [x.hex() if isinstance(x, bytes) else x for x in r.tolist()]
        return list(r) if isinstance(r, tuple) else r

    results = []
    for case in json.loads(sys.stdin.read()):
        kind, n, allow = case["kind"], case["n"], case["allow_trailing"]
        for form in ("memoryview", "numpy"):
            buf = at_end(bytes.fromhex(case["hex"]), form)
            if kind == "strings":
                out = np.empty(n, dtype=np.dtypes.StringDType())
                got = C.interleaved_to_strings(buf, out, None, allow, False)
                got = norm(got) if got is not None else out.tolist()
            elif kind == "offsets_to_strings":
                out = np.empty(len(case["offsets"]) - 1, dtype=np.dtypes.StringDType())
                got = C.offsets_to_strings(np.array(case["offsets"]), buf, out)
                got = norm(got) if got is not None else out.tolist()
            elif kind == "offsets_to_interleaved":
                got = C.offsets_to_interleaved(np.array(case["offsets"]), buf, len(case["offsets"]) - 1)
                got = norm(got) if isinstance(got, tuple) else got.hex()
            elif kind == "offsets_to_bytes":
                got = norm(C.offsets_to_bytes(np.array(case["offsets"]), buf, len(case["offsets"]) - 1))
            else:
                got = norm(getattr(C, kind)(buf, n, allow))
            results.append(got)
    print(json.dumps(results))
    """
)


def guard_cases() -> list[dict[str, Any]]:
    """Truncations of valid buffers, oversized prefixes and counts, elements
    ending in the middle of a UTF-8 sequence: each placed so its last byte is
    the last readable one."""
    valid = [
        [b"abc", "é€".encode(), b"", "😀".encode()],
        [b"abcdefghijklmnop", b"x" * 7],  # ends in ASCII runs around the 8-byte word size
        [b"", b""],
    ]
    raw_cases: list[tuple[bytes, int]] = []
    for elems in valid:
        buf = interleaved(elems)
        raw_cases += [(buf[:k], len(elems)) for k in range(len(buf) + 1)]
    for tail in TRUNCATED + [b"abcdefg\xe2\x82", b"abcdefgh\xf0\x9f\x98", b"\xed\xa0", b"\xf4\x90"]:
        raw_cases.append((interleaved([b"ok", tail]), 2))
    raw_cases += [
        (struct.pack("<II", 1, U32_MAX), 1),
        (struct.pack("<II", 1, U32_MAX) + b"abc", 1),
        (struct.pack("<III", 2, 0, U32_MAX - 3), 2),
        (struct.pack("<I", U32_MAX), U32_MAX),
        (struct.pack("<I", U32_MAX) + b"\x00" * 12, U32_MAX),
        (struct.pack("<I", 2**31) + b"\x00" * 3, 2**31),
    ]
    cases = []
    for buf, n in raw_cases:
        kinds = ["interleaved_to_bytes", "interleaved_to_offsets"] + (["strings"] if n <= 8 else [])
        for kind in kinds:
            for allow in (True, False):
                cases.append({"kind": kind, "hex": buf.hex(), "n": n, "allow_trailing": allow})
    for tail in TRUNCATED + [b"abcdefg\xe2\x82", b"", b"abcdefghij"]:
        data = b"ok" + tail
        for offsets in ([0, 2, len(data)], [0, len(data)], [len(data), len(data)], [0, 2, len(data) + 1]):
            for kind in ("offsets_to_strings", "offsets_to_interleaved", "offsets_to_bytes"):
                cases.append({"kind": kind, "hex": data.hex(), "n": 0, "allow_trailing": False, "offsets": offsets})
    return cases


def guard_expected(case: dict[str, Any]) -> Any:
    """What the model says, in the subprocess's printed form."""
    buf = bytes.fromhex(case["hex"])
    if "offsets" in case:
        failure = offsets_failure(case["offsets"], len(buf))
        items = None if failure else offsets_elements(np.array(case["offsets"]), buf)
        if failure is None and case["kind"] == "offsets_to_strings":
            bad = [k for k, e in enumerate(items) if not decodes(e)]
            failure = (P.E_UTF8, bad[0], 0) if bad else None
        if failure is not None:
            return list(failure)
        if case["kind"] == "offsets_to_strings":
            return [e.decode() for e in items]
        if case["kind"] == "offsets_to_interleaved":
            return interleaved(items).hex()
        return [e.hex() for e in items]
    items, failure = parse(buf, case["n"], case["allow_trailing"], utf8=case["kind"] == "strings")
    if failure is not None:
        return list(failure)
    if case["kind"] == "strings":
        return [e.decode() for e in items]
    if case["kind"] == "interleaved_to_offsets":
        return [offsets_of(items).tolist(), b"".join(items).hex()]
    return [e.hex() for e in items]


def run_guarded(mode: str, stdin: str = "[]") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", GUARD_SCRIPT, mode], input=stdin, capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_the_guard_page_catches_a_read_past_the_end(C):
    """The harness is sound: touching the byte after the buffer kills the process."""
    proc = run_guarded("touch-guard")
    assert proc.returncode < 0, proc.stdout + proc.stderr


def test_the_compiled_module_never_reads_past_its_input(C):
    """Every truncation of valid buffers, oversized prefixes, counts of 2**31
    and 2**32-1 and elements cut in a UTF-8 sequence, with the input's last
    byte just before a PROT_NONE page: the model's failures and values, no
    crash, no allocation past an address-space limit."""
    cases = guard_cases()
    proc = run_guarded("cases", json.dumps(cases))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    want = [expected for case in cases for expected in [guard_expected(case)] * 2]  # two buffer forms
    assert len(got) == len(want)
    mismatches = [(case, g, w) for case, g, w in zip([c for c in cases for _ in (0, 1)], got, want) if g != w]
    assert not mismatches, mismatches[:3]


# -- compiled only: the GIL is released during a conversion ------------------------------------------


def _observed_during_call(convert: Callable[[np.ndarray], Any], n: int) -> int:
    """Run ``convert(out)`` for an out of n slots while another thread polls the
    raw memory of two slots (no numpy call, no allocator lock): it counts the
    iterations when slot n//4 is already written but slot n-1 not yet, which it
    can only see while the conversion runs without the GIL."""
    out = np.empty(n, dtype=PLAIN)
    base = out.ctypes.data
    first, last = base + 16 * (n // 4), base + 16 * (n - 1)
    blank = ctypes.string_at(first, 16)
    assert ctypes.string_at(last, 16) == blank
    counter = [0]
    stop = threading.Event()
    started = threading.Event()

    def poll() -> None:
        started.set()
        while not stop.is_set():
            if ctypes.string_at(first, 16) != blank and ctypes.string_at(last, 16) == blank:
                counter[0] += 1

    thread = threading.Thread(target=poll)
    thread.start()
    started.wait()
    try:
        assert convert(out) is None
    finally:
        stop.set()
        thread.join()
    assert out[n - 1] == "x"
    return counter[0]


@pytest.mark.parametrize("what", ["interleaved_to_strings", "offsets_to_strings"])
def test_another_thread_runs_during_a_compiled_conversion(C, what):
    """2M strings: the poller sees the conversion part done, so it ran while
    the C code worked. Up to 5 conversions, so a busy machine that keeps the
    poller off the CPU for one whole call does not fail the test; with the
    GIL held no attempt could see it (the pure-Python twin's
    interleaved_to_strings, which casts under the GIL, sees 0 every time)."""
    n = 2_000_000
    if what == "interleaved_to_strings":
        buf = struct.pack("<I", n) + (struct.pack("<I", 1) + b"x") * n
        def convert(out):
            return C.interleaved_to_strings(buf, out, None, False, False)
    else:
        offsets, data = np.arange(n + 1, dtype=np.int64), b"x" * n
        def convert(out):
            return C.offsets_to_strings(offsets, data, out)
    seen = []
    while len(seen) < 5 and not any(seen):
        seen.append(_observed_during_call(convert, n))
    assert seen[-1] > 0, seen
