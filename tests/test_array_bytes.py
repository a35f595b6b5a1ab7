"""ArrayBytes: fixed and variable forms, validation, gather."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import CodecError


def test_fixed_from_c_contiguous_array_is_zero_copy():
    arr = np.arange(12, dtype="<u2").reshape(3, 4)
    ab = ArrayBytes.from_array(arr)
    assert ab.is_fixed and ab.shape == (3, 4) and ab.nbytes == 24
    assert np.shares_memory(ab.array, arr)


def test_fixed_from_non_contiguous_array_copies_in_c_order():
    arr = np.arange(12, dtype="i4").reshape(3, 4).T
    ab = ArrayBytes.from_array(arr)
    assert ab.array.flags.c_contiguous
    np.testing.assert_array_equal(ab.array, arr)


def test_fixed_checks_buffer_size():
    with pytest.raises(CodecError, match="needs 8 bytes"):
        ArrayBytes.fixed(b"\x00" * 7, (2, 2), "u2")
    assert ArrayBytes.fixed(b"\x01\x00\x02\x00", (2,), "<u2").array.tolist() == [1, 2]


def test_object_arrays_are_refused():
    with pytest.raises(CodecError):
        ArrayBytes.from_array(np.array(["a"], dtype=object))


@pytest.mark.parametrize(
    "offsets, data, shape, message",
    [
        ([0, 2], b"abc", (1,), "end at 2"),
        ([0, 2, 1], b"ab", (2,), "decrease"),
        ([1, 2], b"ab", (1,), "start at 0"),
        ([0, 1], b"a", (2,), "needs 3 offsets"),
    ],
)
def test_variable_validation(offsets, data, shape, message):
    with pytest.raises(CodecError, match=message):
        ArrayBytes.variable(offsets, data, shape)


def test_fixed_and_variable_accessors_refuse_the_other_form():
    v = ArrayBytes.variable([0, 1], b"x", (1,))
    f = ArrayBytes.from_array(np.zeros(2))
    with pytest.raises(CodecError):
        v.array
    with pytest.raises(CodecError):
        f.offsets
    with pytest.raises(CodecError):
        f.data


elements = st.lists(st.binary(max_size=12), max_size=30)


def _variable(items):
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in items], out=offsets[1:])
    return ArrayBytes.variable(offsets, b"".join(items), (len(items),))


@settings(max_examples=150, deadline=None)
@given(items=elements, data=st.data())
def test_variable_take_gathers_elements(items, data):
    ab = _variable(items)
    idx = data.draw(st.lists(st.integers(0, max(len(items) - 1, 0)), max_size=40)) if items else []
    out = ab.take(np.asarray(idx, dtype=np.int64), (len(idx),))
    # offsets stay valid: start at 0, monotone, end at len(data)
    assert out.offsets[0] == 0 and out.offsets[-1] == len(out.data)
    assert np.all(np.diff(out.offsets) >= 0)
    got = [out.data[out.offsets[i] : out.offsets[i + 1]] for i in range(len(idx))]
    assert got == [items[i] for i in idx]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 4).flatmap(lambda n: st.tuples(*(st.integers(1, 4) for _ in range(n)))))
def test_fixed_take_matches_numpy(shape):
    arr = np.arange(int(np.prod(shape)), dtype="f8").reshape(shape)
    perm = np.random.default_rng(0).permutation(arr.size)
    out = ArrayBytes.from_array(arr).take(perm, (arr.size,))
    np.testing.assert_array_equal(out.array, arr.reshape(-1)[perm])


@settings(max_examples=100, deadline=None)
@given(st.lists(elements, max_size=5))
def test_variable_concatenate_joins_elements(lists):
    parts = [_variable(items) for items in lists]
    if not parts:
        with pytest.raises(CodecError):
            ArrayBytes.concatenate(parts)
        return
    out = ArrayBytes.concatenate(parts)
    flat = [x for items in lists for x in items]
    assert out.shape == (len(flat),)
    assert out.to_bytes_list() == flat
    assert out.offsets[0] == 0 and out.offsets[-1] == len(out.data)


def test_fixed_concatenate_and_mixed_forms():
    a = ArrayBytes.from_array(np.arange(4, dtype="i2").reshape(2, 2))
    b = ArrayBytes.from_array(np.array([9], dtype="i2"))
    assert ArrayBytes.concatenate([a, b]).array.tolist() == [0, 1, 2, 3, 9]
    with pytest.raises(CodecError):
        ArrayBytes.concatenate([a, _variable([b"x"])])


def test_strings_round_trip_with_non_ascii_and_nul():
    arr = np.array([["", "ĉ"], ["a\x00", "日本"]], dtype=np.dtypes.StringDType())
    ab = ArrayBytes.from_strings(arr)
    assert ab.shape == (2, 2)
    assert np.array_equal(ab.to_strings(), arr)


def test_invalid_utf8_is_a_codec_error():
    with pytest.raises(CodecError, match="UTF-8"):
        ArrayBytes.variable([0, 1], b"\xff", (1,)).to_strings()


def test_chunks_are_built_only_through_checked_constructors():
    """Outside its own module, ``ArrayBytes(...)`` (the unchecked constructor) is never called."""
    import ast
    from pathlib import Path

    import zarrpy

    package = Path(zarrpy.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "array_bytes.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ArrayBytes":
                offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert offenders == []
