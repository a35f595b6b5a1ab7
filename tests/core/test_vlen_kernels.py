"""The string converter facade (:mod:`zarrpy.core.vlen_kernels`): which
implementation it picks, and the zarrpy errors it raises.

Every error test runs once per importable implementation (``_impl``
monkeypatched to each), so both say the same class and message for the same
bad input; the wording of every failure code is checked with a stub module.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from zarrpy.core import _vlen_python as P
from zarrpy.core import vlen_kernels as k
from zarrpy.errors import ChunkDecodeError, CodecError

try:
    from zarrpy.core import _cstrings as _C  # type: ignore[attr-defined]
except ImportError:
    _C = None

ROOT = Path(__file__).resolve().parents[2]
SD = np.dtypes.StringDType
IMPLS = {"python": P} | ({"compiled": _C} if _C is not None else {})


@pytest.fixture(params=sorted(IMPLS))
def impl(request, monkeypatch):
    """The facade running on one implementation."""
    monkeypatch.setattr(k, "_impl", IMPLS[request.param])
    return IMPLS[request.param]


def interleaved(elements: list[bytes], count: int | None = None) -> bytes:
    head = struct.pack("<I", len(elements) if count is None else count)
    return head + b"".join(struct.pack("<I", len(e)) + e for e in elements)


def objects(*items, shape=None) -> np.ndarray:
    arr = np.empty(len(items), dtype=object)
    arr[:] = list(items)
    return arr if shape is None else arr.reshape(shape)


# -- which implementation --------------------------------------------------------------


def facade_in_subprocess(value: str | None) -> list:
    env = {key: v for key, v in os.environ.items() if key != k.ENV_PURE_PYTHON}
    if value is not None:
        env[k.ENV_PURE_PYTHON] = value
    env["PYTHONPATH"] = str(ROOT)
    script = ("import json; from zarrpy.core import vlen_kernels as k; "
              "print(json.dumps([k.COMPILED, k.IMPLEMENTATION, k.implementation().__name__]))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("value", ["1", "yes"])
def test_the_environment_variable_forces_pure_python(value):
    compiled, implementation, module = facade_in_subprocess(value)
    assert compiled is False
    assert module == "zarrpy.core._vlen_python"
    assert implementation == "pure Python (ZARRPY_PURE_PYTHON is set)"


@pytest.mark.parametrize("value", [None, "", "0"])
def test_without_the_variable_the_compiled_module_is_used_when_built(value):
    """Here the module is built (setup.py build_ext), so COMPILED is True; an
    environment without it gets pure Python and the import error."""
    compiled, implementation, module = facade_in_subprocess(value)
    if _C is not None:
        assert [compiled, implementation, module] == [True, "compiled (zarrpy.core._cstrings)", "zarrpy.core._cstrings"]
    else:
        assert compiled is False and module == "zarrpy.core._vlen_python"
        assert implementation.startswith("pure Python (the compiled string converter is not available: ")


def test_this_process_uses_what_the_module_says():
    assert k.COMPILED is (k.implementation() is not P)
    assert k.IMPLEMENTATION.startswith("compiled" if k.COMPILED else "pure Python")
    if _C is not None and os.environ.get(k.ENV_PURE_PYTHON, "") in ("", "0"):
        assert k.implementation() is _C


# -- decoding errors ----------------------------------------------------------------------

DECODE_CASES = {
    "short": (b"\x01\x00", 1, "codec 'vlen-utf8': 2 bytes is too short for the element count"),
    "count": (interleaved([b"a", b"b", b"c"]), 2, "codec 'vlen-utf8': header says 3 elements, the chunk has 2"),
    "truncated": (interleaved([b"a"], 3) + b"\x00", 3,
                  "codec 'vlen-utf8': corrupt buffer, data seem truncated: 10 bytes cannot hold 3 elements"),
    "prefix past": (interleaved([b"abcd"], 2) + b"\x00\x00", 2,
                    "codec 'vlen-utf8': corrupt buffer, data seem truncated at element 1 of 2"),
    "data past": (struct.pack("<II", 1, 0xFFFFFFFF) + b"ab", 1,
                  "codec 'vlen-utf8': element 0 runs past the end of the buffer (10 bytes)"),
    "utf8": (interleaved([b"ok", b"\xed\xa0\x80"]), 2, "codec 'vlen-utf8': element 1 is not valid UTF-8"),
    "trailing": (interleaved([b"a"]) + b"zz", 1, "codec 'vlen-utf8': 2 bytes trail the last element"),
}


@pytest.mark.parametrize("case", sorted(DECODE_CASES))
def test_strings_from_interleaved_errors(impl, case):
    buf, n, message = DECODE_CASES[case]
    with pytest.raises(ChunkDecodeError) as info:
        k.strings_from_interleaved(buf, np.empty(n, dtype=SD()), codec="vlen-utf8", allow_trailing=False)
    assert str(info.value) == message


@pytest.mark.parametrize("case", sorted(set(DECODE_CASES) - {"utf8"}))
def test_bytes_and_offsets_from_interleaved_errors(impl, case):
    """The same wording, naming the codec it is given; not UTF-8 is no error for bytes."""
    buf, n, message = DECODE_CASES[case]
    message = message.replace("vlen-utf8", "vlen-bytes")
    with pytest.raises(ChunkDecodeError) as info:
        k.bytes_from_interleaved(buf, n, codec="vlen-bytes", allow_trailing=False)
    assert str(info.value) == message
    with pytest.raises(ChunkDecodeError) as info:
        k.offsets_from_interleaved(buf, n, codec="vlen-bytes")
    assert str(info.value) == message


def test_the_utf8_check_is_for_strings_only(impl):
    buf = interleaved([b"ok", b"\xed\xa0\x80"])
    assert k.bytes_from_interleaved(buf, 2, codec="vlen-bytes").tolist() == [b"ok", b"\xed\xa0\x80"]
    offsets, data = k.offsets_from_interleaved(buf, 2, codec="vlen-bytes")
    assert offsets.tolist() == [0, 2, 5] and data == b"ok\xed\xa0\x80"


def test_a_huge_count_fails_before_any_allocation(impl):
    with pytest.raises(ChunkDecodeError, match=r"4 bytes cannot hold 4294967295 elements"):
        k.bytes_from_interleaved(b"\xff\xff\xff\xff", 2**32 - 1, codec="vlen-bytes")
    with pytest.raises(ChunkDecodeError, match=r"header says 4294967295 elements, the chunk has 3"):
        k.strings_from_interleaved(b"\xff\xff\xff\xff", np.empty(3, dtype=SD()), codec="vlen-utf8")


def test_trailing_bytes_are_allowed_where_numcodecs_allows_them(impl):
    """strings_from_interleaved and bytes_from_interleaved ignore them by
    default (as numcodecs does); offsets_from_interleaved refuses them."""
    buf = interleaved([b"a"]) + b"zz"
    out = np.empty(1, dtype=SD())
    k.strings_from_interleaved(buf, out, codec="vlen-utf8")
    assert out.tolist() == ["a"]
    assert k.bytes_from_interleaved(buf, 1, codec="vlen-bytes").tolist() == [b"a"]
    assert k.offsets_from_interleaved(buf, 1, codec="vlen-bytes", allow_trailing=True)[1] == b"a"
    with pytest.raises(ChunkDecodeError, match="2 bytes trail"):
        k.offsets_from_interleaved(buf, 1, codec="vlen-bytes")


def test_offsets_decoding_errors_are_codec_errors(impl):
    out = np.empty(3, dtype=SD())
    with pytest.raises(CodecError) as info:
        k.strings_from_offsets(np.array([0, 1, 2, 4]), b"ab\xc0\x80", out)
    assert type(info.value) is CodecError and str(info.value) == "string element 2 is not valid UTF-8"
    with pytest.raises(CodecError) as info:
        k.strings_from_offsets(np.array([0, 2, 1, 4]), b"abcd", out)
    assert str(info.value) == "variable chunk offset 2 (1) decreases or lies outside the data"
    with pytest.raises(CodecError) as info:
        k.bytes_from_offsets(np.array([0, 2, 9]), b"abcd")
    assert type(info.value) is CodecError
    assert str(info.value) == "variable chunk offset 2 (9) decreases or lies outside the data"
    with pytest.raises(CodecError, match=r"offset 0 \(-1\)"):
        k.bytes_from_offsets(np.array([-1, 2]), b"abcd")


# -- encoding errors ----------------------------------------------------------------------------


def test_a_missing_string_is_named_by_position(impl):
    arr = np.array([["a", "b"], [None, "d"]], dtype=SD(na_object=None))
    with pytest.raises(CodecError) as info:
        k.strings_to_interleaved(arr, codec="vlen-utf8")
    assert str(info.value) == "codec 'vlen-utf8': element at position (1, 0) is missing (no string to store)"
    with pytest.raises(TypeError) as info:
        k.strings_to_offsets(arr)
    assert str(info.value) == "element at position (1, 0) is missing (no string to store)"
    with pytest.raises(CodecError, match=r"position \(\) is missing"):
        k.strings_to_interleaved(np.array(None, dtype=SD(na_object=None)), codec="vlen-utf8")


def test_a_masked_out_missing_string_is_no_error(impl):
    arr = np.array([["a", "b"], [None, "d"]], dtype=SD(na_object=None))
    mask = np.array([[True, True], [False, True]])
    assert k.strings_to_interleaved(arr, codec="vlen-utf8", mask=mask) == interleaved([b"a", b"b", b"d"])
    offsets, data = k.strings_to_offsets(arr, mask=mask)
    assert offsets.tolist() == [0, 1, 2, 3] and data == b"abd"


def test_a_wrong_element_type_is_a_type_error_naming_it(impl):
    with pytest.raises(TypeError) as info:
        k.bytes_to_interleaved(objects(b"a", "x", shape=(1, 2)), codec="vlen-bytes")
    assert str(info.value) == "element at position (0, 1) is str 'x', expected bytes"
    with pytest.raises(TypeError) as info:
        k.bytes_to_interleaved(objects(bytearray(b"x")), codec="vlen-bytes")
    assert str(info.value) == "element at position (0,) is bytearray bytearray(b'x'), expected bytes"
    with pytest.raises(TypeError) as info:
        k.bytes_to_offsets(objects(b"a", None))
    assert str(info.value) == "element at position (1,) is NoneType None, expected bytes/bytearray/memoryview"
    zero_d = np.empty((), dtype=object)
    zero_d[()] = 7
    with pytest.raises(TypeError, match=r"^element at position \(\) is int 7, expected bytes$"):
        k.bytes_to_interleaved(zero_d, codec="vlen-bytes")


def test_decreasing_offsets_cannot_be_encoded(impl):
    with pytest.raises(CodecError) as info:
        k.offsets_to_interleaved(np.array([0, 3, 1]), b"abc", codec="vlen-bytes")
    assert str(info.value) == "codec 'vlen-bytes': variable chunk offset 2 (1) decreases or lies outside the data"


# -- the wording of every failure code (a stub implementation) ---------------------------------------


def stub(failure):
    def returns(*args):
        return failure
    return SimpleNamespace(**{name: returns for name in (
        "interleaved_to_strings", "interleaved_to_bytes", "interleaved_to_offsets", "strings_to_interleaved",
        "bytes_to_interleaved", "offsets_to_interleaved")})


@pytest.mark.parametrize(("failure", "message"), [
    ((P.E_TOO_MANY, 2**32, 0),
     "codec 'vlen-utf8': cannot encode 4294967296 elements; at most 4294967295 fit the header"),
    ((P.E_TOO_LONG, 3, 2**32), "codec 'vlen-utf8': an element of 4294967296 bytes is longer than 4294967295"),
    ((99, 4, 0), "codec 'vlen-utf8': cannot encode (code 99 at element 4)"),
])
def test_encoding_failure_wording(monkeypatch, failure, message):
    monkeypatch.setattr(k, "_impl", stub(failure))
    with pytest.raises(CodecError) as info:
        k.strings_to_interleaved(np.array(["a"], dtype=SD()), codec="vlen-utf8")
    assert type(info.value) is CodecError and str(info.value) == message
    with pytest.raises(CodecError) as info:
        k.bytes_to_interleaved(objects(b"a"), codec="vlen-utf8")
    assert str(info.value) == message
    with pytest.raises(CodecError) as info:
        k.offsets_to_interleaved(np.array([0, 1]), b"a", codec="vlen-utf8")
    assert str(info.value) == message


def test_an_unknown_decoding_code_is_still_a_chunk_decode_error(monkeypatch):
    monkeypatch.setattr(k, "_impl", stub((99, 4, 0)))
    with pytest.raises(ChunkDecodeError, match=r"^codec 'vlen-utf8': malformed buffer \(code 99 at element 4\)$"):
        k.strings_from_interleaved(b"", np.empty(0, dtype=SD()), codec="vlen-utf8")
    with pytest.raises(ChunkDecodeError, match=r"code 99"):
        k.offsets_from_interleaved(b"", 0, codec="vlen-utf8")


# -- both implementations say the same thing -------------------------------------------------------

STRIDED = memoryview(b"abcd")[::2]  # one object: its repr is in the message
BAD_INPUTS = {
    "strings short": lambda: k.strings_from_interleaved(b"\x00", np.empty(1, dtype=SD()), codec="vlen-utf8"),
    "strings utf8 masked": lambda: k.strings_from_interleaved(
        interleaved([b"a", b"\xf4\x90\x80\x80"]), np.empty(3, dtype=SD(na_object=None)), codec="vlen-utf8",
        mask=np.array([True, False, True])),
    "strings trailing": lambda: k.strings_from_interleaved(
        interleaved([b"a"]) + b"\x00", np.empty(1, dtype=SD()), codec="zarrs.vlen_v2", allow_trailing=False),
    "bytes past": lambda: k.bytes_from_interleaved(struct.pack("<III", 2, 0, 2**31), 2, codec="vlen-bytes"),
    "offsets prefix": lambda: k.offsets_from_interleaved(interleaved([b"abcd"], 2) + b"\x00", 2, codec="vlen-bytes"),
    "from offsets utf8": lambda: k.strings_from_offsets(np.array([0, 1]), b"\x80", np.empty(1, dtype=SD())),
    "from offsets past": lambda: k.bytes_from_offsets(np.array([0, 5]), b"ab"),
    "na": lambda: k.strings_to_interleaved(np.array([None], dtype=SD(na_object=None)), codec="vlen-utf8"),
    "na offsets": lambda: k.strings_to_offsets(np.array(["a", None], dtype=SD(na_object=None))),
    "not bytes": lambda: k.bytes_to_interleaved(objects(b"a", 1.5), codec="vlen-bytes"),
    "not bytes-like": lambda: k.bytes_to_offsets(objects(b"a", "s", shape=(2, 1))),
    "utf8 before trailing": lambda: k.strings_from_interleaved(
        interleaved([b"\xff", b"a"]) + b"zz", np.empty(2, dtype=SD()), codec="vlen-utf8", allow_trailing=False),
    "strided memoryview": lambda: k.bytes_to_offsets(objects(b"a", STRIDED)),
    "offsets decrease": lambda: k.offsets_to_interleaved(np.array([2, 1]), b"ab", codec="vlen-bytes"),
}


def test_both_implementations_raise_the_same_error(monkeypatch):
    pytest.importorskip("zarrpy.core._cstrings")
    said = {}
    for name, module in IMPLS.items():
        monkeypatch.setattr(k, "_impl", module)
        for case, call in BAD_INPUTS.items():
            with pytest.raises(Exception) as info:
                call()
            said.setdefault(case, []).append((type(info.value), str(info.value)))
    different = {case: got for case, got in said.items() if got[0] != got[1]}
    assert not different
    assert {t for got in said.values() for t, _ in got} == {ChunkDecodeError, CodecError, TypeError}


# -- results -------------------------------------------------------------------------------------------


def test_round_trips(impl):
    values = np.array([["a", "βγ"], ["", "\x00😀"]], dtype=SD())
    buf = k.strings_to_interleaved(values, codec="vlen-utf8")
    out = np.empty((2, 2), dtype=SD())
    k.strings_from_interleaved(buf, out, codec="vlen-utf8")
    assert out.tolist() == values.tolist()
    offsets, data = k.offsets_from_interleaved(buf, 4, codec="vlen-utf8")
    assert offsets.tolist() == [0, 1, 5, 5, 10] and data == "aβγ\x00😀".encode()
    assert k.strings_to_offsets(values)[0].tolist() == offsets.tolist()
    assert k.offsets_to_interleaved(offsets, data, codec="vlen-utf8") == bytes(buf)
    back = np.empty(4, dtype=SD())
    k.strings_from_offsets(offsets, data, back)
    assert back.tolist() == values.reshape(-1).tolist()
    raw = k.bytes_from_offsets(offsets, data)
    assert raw.tolist() == [s.encode() for s in values.reshape(-1).tolist()]
    assert bytes(k.bytes_to_interleaved(raw, codec="vlen-bytes")) == bytes(buf)
    assert k.bytes_from_interleaved(buf, 4, codec="vlen-bytes").tolist() == raw.tolist()
    assert k.bytes_to_offsets(objects(b"ab", bytearray(b"c"), memoryview(b"de")))[1] == b"abcde"


def test_missing_strings_come_back_missing_or_empty(impl):
    buf = interleaved([b"a", b"c"])
    mask = np.array([[True, False], [True, False]])
    out = np.empty((2, 2), dtype=SD(na_object=None))
    k.strings_from_interleaved(buf, out, codec="vlen-utf8", mask=mask)
    assert out.tolist() == [["a", None], ["c", None]]
    plain = np.empty((2, 2), dtype=SD())
    k.strings_from_interleaved(buf, plain, codec="vlen-utf8", mask=mask)
    assert plain.tolist() == [["a", ""], ["c", ""]]
    values, present = k.split_missing(out)
    assert values.dtype == SD() and values.shape == present.shape == (2, 2)
    assert values.tolist() == [["a", ""], ["c", ""]] and present.tolist() == mask.tolist()

