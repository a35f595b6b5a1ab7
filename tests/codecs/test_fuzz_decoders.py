"""Fuzzing every codec's decoder with random and mutated bytes.

Every registered codec class has a :class:`~tests.codecs.contract.CodecContract`
(``test_contract_coverage.py`` checks that); its ``cases()`` give a codec, a
chunk spec it takes and a chunk. The chunk's valid encoding is mutated (bit
flips, truncation, extension, deleted or repeated ranges, overwritten size
fields, spliced headers) or replaced by random bytes, then decoded whole
(``BoundChain.decode``) and in part (the chain's partial decoder on a
``BytesReader``: ``sharding_indexed`` reads its index and inner chunks
there). A decoder may succeed or raise a zarrpy error
(:class:`~zarrpy.errors.ZarrpyError`); anything else fails, as does a
tracemalloc peak above 64 MiB or an example slower than the deadline.

The ceiling for variable-length chunks is lowered to 8 MiB here so that the
memory bound means something for them too. Example counts are a fifth of
the hypothesis profile's (20 by default; ``pytest --hypothesis-profile=fuzz``
runs 1000 per test).
"""

from __future__ import annotations

import importlib
import tracemalloc
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.codecs.contract import CodecContract, selections
from zarrpy.codecs._limits import ENV_VAR
from zarrpy.codecs.partial import BytesReader
from zarrpy.core.array_bytes import ArrayBytes
from zarrpy.errors import ZarrpyError

PEAK_NBYTES = 64 << 20
CEILING_NBYTES = 8 << 20
FUZZ = settings(
    max_examples=max(10, settings().max_examples // 5),
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.differing_executors],
)


def contracts() -> list[type[CodecContract]]:
    """Every concrete contract class (one or more per registered codec class)."""
    for path in sorted(Path(__file__).parent.glob("test_contract_*.py")) + [Path(__file__).with_name("test_zlib.py")]:
        importlib.import_module(f"tests.codecs.{path.stem}")
    found: dict[str, type[CodecContract]] = {}
    todo = list(CodecContract.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if "codec_class" in cls.__dict__:
            found[f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}"] = cls
    return [found[k] for k in sorted(found)]


CONTRACTS = contracts()


@pytest.fixture(scope="module", autouse=True)
def low_ceiling():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV_VAR, str(CEILING_NBYTES))
        yield


# -- mutations ---------------------------------------------------------------

_SIZE_FIELDS = [b"\xff" * 4, b"\xff" * 8, b"\x7f\xff\xff\xff", b"\xff\xff\xff\x7f", b"\x00" * 4, b"\x00" * 8,
                (1 << 30).to_bytes(4, "little"), (1 << 40).to_bytes(8, "little"), (1 << 30).to_bytes(4, "big")]


@st.composite
def mutation(draw: Any, data: bytes) -> bytes:
    """One change to ``data``."""
    n = len(data)
    kind = draw(st.sampled_from(["flip", "truncate", "extend", "delete", "repeat", "size_field", "splice", "zero"]))
    if kind == "flip" and n:
        buf = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            bit = draw(st.integers(0, 8 * n - 1))
            buf[bit // 8] ^= 1 << (bit % 8)
        return bytes(buf)
    if kind == "truncate":
        return data[: draw(st.integers(0, max(n - 1, 0)))]
    if kind == "extend":
        return data + draw(st.one_of(st.binary(min_size=1, max_size=64), st.just(data), st.just(b"\0" * 16)))
    if kind in ("delete", "repeat", "zero") and n:
        start = draw(st.integers(0, n - 1))
        end = draw(st.integers(start + 1, min(n, start + 64)))
        part = {"delete": b"", "repeat": data[start:end] * 2, "zero": bytes(end - start)}[kind]
        return data[:start] + part + data[end:]
    if kind == "size_field" and n:
        field = draw(st.sampled_from(_SIZE_FIELDS))
        at = draw(st.sampled_from(sorted({0, 4, 8, 12, max(n - 8, 0), max(n - 4, 0), draw(st.integers(0, n - 1))})))
        return (data[:at] + field + data[at + len(field):])[: max(n, at + len(field))]
    if kind == "splice" and n:  # a header (the first bytes) where it does not belong, or a new header
        head = data[: draw(st.integers(1, min(n, 32)))]
        at = draw(st.integers(0, n))
        if draw(st.booleans()):
            return data[:at] + head + data[at:]
        return draw(st.binary(min_size=1, max_size=32)) + data[len(head):]
    return draw(st.binary(max_size=64))


@st.composite
def mutated(draw: Any, data: bytes) -> bytes:
    """``data`` with one to three mutations."""
    for _ in range(draw(st.integers(1, 3))):
        data = draw(mutation(data))
    return data


# -- the check ---------------------------------------------------------------


def decodes_cleanly(what: str, fn: Callable[[], Any]) -> Any:
    """Run ``fn``: its result, or None if it raised a zarrpy error. Any other
    exception, or a tracemalloc peak over 64 MiB, fails the test."""
    tracemalloc.start()
    try:
        result = fn()
    except ZarrpyError:
        result = None
    except Exception as exc:  # the finding: a decoder let a non-zarrpy error out
        raise AssertionError(f"{what}: {type(exc).__name__}: {exc}") from exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < PEAK_NBYTES, f"{what}: tracemalloc peak {peak} bytes"
    return result


def check(contract: CodecContract, data: st.DataObject, make_input: Callable[[bytes], Any]) -> None:
    codec, spec, chunk = data.draw(contract.cases())
    bound = contract.bind(codec, spec)
    encoded = bound.encode(chunk)
    value = data.draw(make_input(encoded))
    what = f"{codec.to_json()} on {spec.shape} {spec.dtype.name}, input {value!r:.300}"
    got = decodes_cleanly(what, lambda: bound.decode(value))
    if got is not None:
        assert isinstance(got, ArrayBytes) and tuple(got.shape) == tuple(spec.shape), what
    sel = data.draw(selections(spec.shape))
    got = decodes_cleanly(f"{what}, selection {sel}",
                          lambda: bound.partial_decoder(BytesReader(value)).decode_selection(sel))
    if got is not None:
        assert isinstance(got, ArrayBytes), what


@pytest.mark.parametrize("contract_class", CONTRACTS, ids=lambda c: c.__name__.removeprefix("Test"))
@FUZZ
@given(data=st.data())
def test_mutated_encoding_decodes_or_fails_cleanly(contract_class, data):
    check(contract_class(), data, mutated)


@pytest.mark.parametrize("contract_class", CONTRACTS, ids=lambda c: c.__name__.removeprefix("Test"))
@FUZZ
@given(data=st.data())
def test_random_bytes_decode_or_fail_cleanly(contract_class, data):
    check(contract_class(), data, lambda _: st.binary(max_size=512))


def test_every_codec_class_is_fuzzed():
    from tests.codecs.test_contract_coverage import registered_codec_classes

    fuzzed = {c.codec_class for c in CONTRACTS}
    assert not [name for cls, name in registered_codec_classes().items() if cls not in fuzzed]


# -- findings ----------------------------------------------------------------


def test_zfpy_header_claiming_another_field_is_refused():
    """zfpy allocates the field its header describes and reads the stream
    without bounds checks: byte 7 of this header set to 0xff crashed the
    process (SIGSEGV) before the adapter read the header itself."""
    zfpy = pytest.importorskip("zfpy")
    import numpy as np

    from zarrpy.codecs.abc import ChunkSpec
    from zarrpy.codecs.registry import codec_from_json
    from zarrpy.core.dtypes import DataType

    codec = codec_from_json({"name": "numcodecs.zfpy", "configuration": {"mode": 4}})
    spec = ChunkSpec((16,), DataType.from_json("float64"), 0)
    valid = zfpy.compress_numpy(np.arange(16, dtype="f8"))
    assert (codec.decode(valid, spec).array == np.arange(16)).all()
    for at in range(4, 12):
        for value in (0xFF, 0x7F, 0x10):
            header = bytearray(valid)
            header[at] = value
            got = decodes_cleanly(f"byte {at} = {value:#x}", lambda h=bytes(header): codec.decode(h, spec))
            assert got is None or got.shape == (16,)
