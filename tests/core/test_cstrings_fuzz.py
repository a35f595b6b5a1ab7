"""Fuzzing the variable-length string and bytes decoders with hostile data.

The decoder fuzz profile of ``tests/codecs/test_fuzz_decoders.py`` (its
``FUZZ`` settings, mutations and ``decodes_cleanly`` check: only zarrpy errors
may come out, and the tracemalloc peak stays under 64 MiB) run on the string
converter facade (:mod:`zarrpy.core.vlen_kernels`, on each importable
implementation) and on the ``vlen-utf8`` / ``vlen-bytes`` codecs (whole,
``decode_into`` and partial decodes). Inputs are valid encodings mutated or
random bytes, with element counts the caller may expect (up to 2**32-1 where
nothing is allocated for them up front) and offsets pushed out of order or
out of the data. ``pytest --hypothesis-profile=fuzz`` runs 1000 per test.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.codecs.contract import selections
from tests.codecs.test_fuzz_decoders import CEILING_NBYTES, FUZZ, decodes_cleanly, mutated
from zarrpy.codecs._limits import ENV_VAR
from zarrpy.codecs.abc import ChunkSpec
from zarrpy.codecs.chain import CodecChain
from zarrpy.codecs.partial import BytesReader
from zarrpy.codecs.registry import codec_from_json
from zarrpy.core import _vlen_python
from zarrpy.core import vlen_kernels as k
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.core.dtypes import DataType

try:
    from zarrpy.core import _cstrings
except ImportError:
    _cstrings = None

IMPLS = {"python": _vlen_python} | ({"compiled": _cstrings} if _cstrings is not None else {})
SD = np.dtypes.StringDType
STRING = DataType.from_json("string")
BYTES = DataType.from_json("variable_length_bytes")

items = st.lists(st.one_of(st.text(max_size=8).map(str.encode), st.binary(max_size=8)), max_size=12)


@pytest.fixture(scope="module", autouse=True)
def low_ceiling():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV_VAR, str(CEILING_NBYTES))
        yield


@pytest.fixture(scope="module", params=sorted(IMPLS))
def impl(request):
    """The facade on one implementation (module scope: hypothesis runs many examples per test)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(k, "_impl", IMPLS[request.param])
        yield request.param


def interleaved(elements: list[bytes]) -> bytes:
    return struct.pack("<I", len(elements)) + b"".join(struct.pack("<I", len(e)) + e for e in elements)


@st.composite
def hostile(draw: Any) -> tuple[bytes, int]:
    """A mutated valid interleaved buffer or random bytes, and the count the caller expects."""
    elements = draw(items)
    valid = interleaved(elements)
    buf = draw(st.one_of(mutated(valid), st.binary(max_size=512)))
    header = int.from_bytes(buf[:4], "little") if len(buf) >= 4 else 0
    return buf, draw(st.sampled_from([len(elements), header, max(len(elements) - 1, 0), len(elements) + 1]))


@FUZZ
@given(case=hostile(), allow_trailing=st.booleans())
def test_facade_interleaved_decoders_fail_cleanly(impl, case, allow_trailing):
    buf, n = case
    what = f"{impl}: {buf!r:.300} as {n} elements"
    got = decodes_cleanly(what, lambda: k.bytes_from_interleaved(buf, n, codec="vlen-bytes",
                                                                 allow_trailing=allow_trailing))
    assert got is None or (got.shape == (n,) and all(type(b) is bytes for b in got.tolist())), what
    got = decodes_cleanly(what, lambda: k.offsets_from_interleaved(buf, n, codec="vlen-bytes",
                                                                   allow_trailing=allow_trailing))
    assert got is None or (len(got[0]) == n + 1 and got[0][-1] == len(got[1])), what
    if n <= 64:  # the caller's out array is its own allocation
        for dtype in (SD(), SD(na_object=None)):
            out = np.empty(n, dtype=dtype)
            decodes_cleanly(what, lambda: k.strings_from_interleaved(buf, out, codec="vlen-utf8",
                                                                     allow_trailing=allow_trailing))


@st.composite
def hostile_offsets(draw: Any) -> tuple[np.ndarray, bytes]:
    elements = draw(items)
    offsets = np.cumsum([0] + [len(e) for e in elements]).astype(np.int64)
    data = b"".join(elements)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(offsets) - 1))
        offsets[at] = draw(st.one_of(st.integers(-2, len(data) + 2),
                                     st.sampled_from([-(2**63), 2**63 - 1, 2**32, -(2**32)])))
    if draw(st.booleans()):
        data = draw(mutated(data)) if data else draw(st.binary(max_size=8))
    return offsets, data


@FUZZ
@given(case=hostile_offsets())
def test_facade_offsets_decoders_fail_cleanly(impl, case):
    offsets, data = case
    what = f"{impl}: offsets {offsets.tolist()} over {data!r:.200}"
    got = decodes_cleanly(what, lambda: k.bytes_from_offsets(offsets, data))
    assert got is None or got.shape == (len(offsets) - 1,), what
    out = np.empty(len(offsets) - 1, dtype=SD())
    decodes_cleanly(what, lambda: k.strings_from_offsets(offsets, data, out))
    got = decodes_cleanly(what, lambda: k.offsets_to_interleaved(offsets, data, codec="vlen-bytes"))
    assert got is None or len(got) >= 4 * len(offsets), what


@pytest.mark.parametrize("name", ["vlen-utf8", "vlen-bytes"])
@FUZZ
@given(data=st.data())
def test_vlen_codecs_decode_hostile_chunks_cleanly(name, data):
    """Whole decodes, ``decode_into`` (strings) and partial decodes of a
    chunk whose encoding was mutated, or of random bytes."""
    dtype = STRING if name == "vlen-utf8" else BYTES
    values = data.draw(items)
    shape = data.draw(st.sampled_from([(len(values),)] + ([(2, len(values) // 2)] if len(values) % 2 == 0 else [])))
    spec = ChunkSpec(shape, dtype, dtype.default_fill())
    bound = CodecChain([codec_from_json({"name": name, "configuration": {}})]).bind(spec)
    objects = np.empty(len(values), dtype=object)
    objects[:] = [v.decode("utf-8", "replace") for v in values] if dtype is STRING else values
    chunk = ArrayBytes.from_elements(objects.astype(dtype.numpy).reshape(shape) if dtype is STRING
                                     else objects.reshape(shape))
    encoded = bytes(bound.encode(chunk))
    value = data.draw(st.one_of(mutated(encoded), st.binary(max_size=512)))
    what = f"{name} on {shape}, input {value!r:.300}"
    got = decodes_cleanly(what, lambda: bound.decode(value))
    assert got is None or (isinstance(got, ArrayBytes) and tuple(got.shape) == shape), what
    if dtype is STRING:
        dest = np.empty(shape, dtype=dtype.numpy)
        decodes_cleanly(what, lambda: bound.decode_into(value, dest))
    sel = data.draw(selections(shape))
    got = decodes_cleanly(f"{what}, selection {sel}",
                          lambda: bound.partial_decoder(BytesReader(value)).decode_selection(sel))
    assert got is None or isinstance(got, ArrayBytes), what
