"""The pure-Python twin of the compiled ``zarrpy.core._cstrings`` module.

Same functions, arguments and results as the C module (see its header
comment): a malformed input is not raised but returned as a tuple
``(code, index, value)`` with the ``E_*`` codes below, which
:mod:`zarrpy.core.vlen_kernels` words as an error. Used when the extension
is not built, cannot be imported or ``ZARRPY_PURE_PYTHON`` is set; the test
suite checks that both give the same answer on every input.

Speed comes from numcodecs' compiled VLen loops and numpy; the one
sequential walk over length prefixes (:func:`_walk`) is a Python loop, run
only where numcodecs has no equivalent or to say where a buffer breaks.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

E_SHORT = 1
E_COUNT = 2
E_TRUNCATED = 3
E_PREFIX_PAST = 4
E_DATA_PAST = 5
E_UTF8 = 6
E_TRAILING = 7
E_TOO_MANY = 8
E_TOO_LONG = 9
E_NOT_TYPE = 10
E_MISSING = 11
E_OFFSETS = 12

Failure = tuple[int, int, int]
_U32 = struct.Struct("<I")
_U32_MAX = 2**32 - 1


def _as_bytes(buf: Any) -> memoryview:
    """``buf``'s bytes, whatever its item size or shape (as the C module reads it)."""
    return memoryview(buf).cast("B")


def _check_header(buf: Any, n: int) -> Failure | None:
    size = len(buf)
    if size < 4:
        return (E_SHORT, 0, size)
    (count,) = _U32.unpack_from(buf, 0)
    if count != n:
        return (E_COUNT, count, n)
    if (size - 4) // 4 < n:
        return (E_TRUNCATED, n, size)
    return None


def _walk(buf: Any, n: int, allow_trailing: bool, utf8: bool = False,
          positions: list[int] | None = None) -> tuple[list[int], Failure | None]:
    """The n element lengths, or where the buffer breaks (the first element
    whose prefix or bytes run past the end or, with ``utf8``, whose bytes are
    not UTF-8; then trailing bytes). ``positions`` gets each element's start."""
    unpack, size, mem = _U32.unpack_from, len(buf), memoryview(buf)
    lengths = [0] * n
    pos = 4
    for i in range(n):
        if size - pos < 4:
            return lengths, (E_PREFIX_PAST, i, n)
        (length,) = unpack(buf, pos)
        pos += 4
        if size - pos < length:
            return lengths, (E_DATA_PAST, i, size)
        if utf8:
            try:
                bytes(mem[pos : pos + length]).decode("utf-8")
            except UnicodeDecodeError:
                return lengths, (E_UTF8, i, 0)
        if positions is not None:
            positions.append(pos)
        lengths[i] = length
        pos += length
    if pos < size and not allow_trailing:
        return lengths, (E_TRAILING, 0, size - pos)
    return lengths, None


def _numcodecs(strings: bool) -> Any:
    import numcodecs  # imported on first use: importing zarrpy loads no codec library

    return numcodecs.VLenUTF8() if strings else numcodecs.VLenBytes()


def _decode_items(buf: Any, n: int, allow_trailing: bool, strings: bool) -> tuple[np.ndarray | None, Failure | None]:
    """numcodecs' decoded object array of n items, or the failure (the first
    in buffer order: the count, then element by element, then trailing bytes)."""
    buf = _as_bytes(buf)
    failure = _check_header(buf, n)
    if failure is not None:
        return None, failure
    try:
        items = _numcodecs(strings).decode(bytes(buf))
    except (ValueError, RuntimeError, UnicodeDecodeError):
        failure = _walk(buf, n, allow_trailing, utf8=strings)[1]
        assert failure is not None, "numcodecs refused a buffer the walk accepts"
        return None, failure
    if not allow_trailing:  # numcodecs ignores trailing bytes; every element is fine
        failure = _walk(buf, n, False)[1]
        if failure is not None:
            return None, failure
    return items, None


def interleaved_to_strings(buf: Any, out: np.ndarray, mask: Any, allow_trailing: bool, has_na: bool,
                           flags: np.ndarray | None = None) -> Failure | None:
    present = None if mask is None else np.asarray(mask, dtype=bool).reshape(-1)
    if flags is not None:
        marks = np.full(out.size, "", dtype=object)
        if present is not None:
            marks[~present] = "\x00"  # set one by one: a numpy "U" array would drop the NUL
        flags[...] = marks.reshape(flags.shape)
    n = out.size if present is None else int(np.count_nonzero(present))
    items, failure = _decode_items(buf, n, allow_trailing, strings=True)
    if items is None:
        return failure
    if present is not None:
        full = np.empty(out.size, dtype=object)
        full[present] = items
        full[~present] = None if has_na else ""
        items = full
    out[...] = items.reshape(out.shape)
    return None


def interleaved_to_bytes(buf: Any, n: int, allow_trailing: bool) -> np.ndarray | Failure:
    items, failure = _decode_items(buf, n, allow_trailing, strings=False)
    if items is None:
        assert failure is not None
        return failure
    return items


def interleaved_to_offsets(buf: Any, n: int, allow_trailing: bool) -> tuple[np.ndarray, bytes] | Failure:
    buf = _as_bytes(buf)
    failure = _check_header(buf, n)
    if failure is not None:
        return failure
    lengths, failure = _walk(buf, n, allow_trailing)
    if failure is not None:
        return failure
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if n == 0:
        return offsets, b""
    end = 4 + 4 * n + int(offsets[-1])  # trailing bytes (if allowed) are not data
    src = np.frombuffer(buf, dtype=np.uint8, count=end)
    is_data = np.ones(end, dtype=bool)
    is_data[:4] = False
    prefix_at = _prefix_positions(offsets)
    for k in range(4):
        is_data[prefix_at + k] = False
    return offsets, src[is_data].tobytes()


def offsets_to_interleaved(offsets: Any, data: Any, n: int) -> bytes | Failure:
    if n > _U32_MAX:
        return (E_TOO_MANY, n, 0)
    offsets = np.asarray(offsets, dtype=np.int64)
    data = _as_bytes(data)
    # order (as the C module): a bad start or a decrease, then an element too
    # long for its u32 prefix, then offsets past the data
    if offsets[0] < 0 or offsets[0] > len(data):
        return (E_OFFSETS, 0, int(offsets[0]))
    drops = offsets[1:] < offsets[:-1]
    if drops.any():
        i = int(np.argmax(drops)) + 1
        return (E_OFFSETS, i, int(offsets[i]))
    lengths = offsets[1:].astype(np.uint64) - offsets[:-1].astype(np.uint64)  # exact in uint64
    too_long = lengths > _U32_MAX
    if too_long.any():
        i = int(np.argmax(too_long))
        return (E_TOO_LONG, i, min(int(lengths[i]), 2**63 - 1))
    lengths = np.diff(offsets)
    failure = _check_offsets(offsets, len(data))
    if failure is not None:
        return failure
    total = int(offsets[-1]) - int(offsets[0])
    out = np.empty(4 + 4 * n + total, dtype=np.uint8)
    out[:4] = np.frombuffer(_U32.pack(n), dtype=np.uint8)
    if n:
        prefix_at = _prefix_positions(offsets - offsets[0])
        is_data = np.ones(out.size, dtype=bool)
        is_data[:4] = False
        length_bytes = lengths.astype("<u4").view(np.uint8).reshape(n, 4)
        for k in range(4):  # four strided writes beat one (n, 4) fancy index
            is_data[prefix_at + k] = False
            out[prefix_at + k] = length_bytes[:, k]
        out[is_data] = np.frombuffer(data, dtype=np.uint8, count=total, offset=int(offsets[0]))
    return out.tobytes()


def _checked(offsets: Any, data: Any) -> tuple[list[int], bytes] | Failure:
    """The offsets as a list and the data as bytes, or where the offsets break."""
    offsets = np.asarray(offsets, dtype=np.int64)
    data = _as_bytes(data)
    failure = _check_offsets(offsets, len(data))
    return failure if failure is not None else (offsets.tolist(), bytes(data))


def offsets_to_strings(offsets: Any, data: Any, out: np.ndarray) -> Failure | None:
    checked = _checked(offsets, data)
    if isinstance(checked[0], int):
        return checked
    o, raw = checked
    if raw.isascii():
        text = raw.decode("ascii")
        items = [text[a:b] for a, b in zip(o[:-1], o[1:])]
    else:
        try:
            items = [raw[a:b].decode("utf-8") for a, b in zip(o[:-1], o[1:])]
        except UnicodeDecodeError:
            for i, (a, b) in enumerate(zip(o[:-1], o[1:])):
                try:
                    raw[a:b].decode("utf-8")
                except UnicodeDecodeError:
                    return (E_UTF8, i, 0)
            raise  # pragma: no cover - one element failed above
    out[...] = np.array(items, dtype=out.dtype).reshape(out.shape)
    return None


def offsets_to_bytes(offsets: Any, data: Any, n: int) -> np.ndarray | Failure:
    checked = _checked(offsets, data)
    if isinstance(checked[0], int):
        return checked
    o, raw = checked
    out = np.empty(n, dtype=object)
    out[:] = [raw[a:b] for a, b in zip(o[:-1], o[1:])]
    return out


def strings_to_interleaved(arr: np.ndarray, mask: Any) -> bytes | Failure:
    items, failure = _present_strings(arr, mask)
    if failure is not None:
        return failure
    if len(items) > _U32_MAX:
        return (E_TOO_MANY, len(items), 0)
    return bytes(_numcodecs(True).encode(np.array(items, dtype=object)))


def strings_to_offsets(arr: np.ndarray, mask: Any) -> tuple[np.ndarray, bytes] | Failure:
    items, failure = _present_strings(arr, mask)
    if failure is not None:
        return failure
    joined = "".join(items)
    if joined.isascii():
        lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
        data = joined.encode("ascii")
    else:
        encoded = [s.encode("utf-8") for s in items]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        data = b"".join(encoded)
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, data


def bytes_to_interleaved(arr: np.ndarray) -> bytes | Failure:
    items = arr.reshape(-1).tolist()
    if len(items) > _U32_MAX:
        return (E_TOO_MANY, len(items), 0)
    for k, item in enumerate(items):
        if not isinstance(item, bytes):
            return (E_NOT_TYPE, k, 0)
        if len(item) > _U32_MAX:
            return (E_TOO_LONG, k, len(item))
    objects = np.empty(len(items), dtype=object)
    objects[:] = [bytes(x) for x in items]  # numcodecs refuses bytes subclasses
    return bytes(_numcodecs(False).encode(objects))


def bytes_to_offsets(arr: np.ndarray) -> tuple[np.ndarray, bytes] | Failure:
    items = arr.reshape(-1).tolist()
    for k, item in enumerate(items):
        if not isinstance(item, (bytes, bytearray, memoryview)) or not memoryview(item).c_contiguous:
            return (E_NOT_TYPE, k, 0)
    lengths = np.fromiter((memoryview(x).nbytes for x in items), dtype=np.int64, count=len(items))
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, b"".join(items)


def nonempty(arr: np.ndarray) -> np.ndarray:
    return np.fromiter((isinstance(x, str) and x != "" for x in arr.reshape(-1).tolist()), dtype=bool, count=arr.size)


def split_missing(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    items = src.reshape(-1).tolist()
    present = np.fromiter((isinstance(x, str) for x in items), dtype=bool, count=len(items))
    dst[...] = np.array([x if ok else "" for x, ok in zip(items, present.tolist())],
                        dtype=dst.dtype).reshape(dst.shape)
    return present


# -- helpers ------------------------------------------------------------------


def _present_strings(arr: np.ndarray, mask: Any) -> tuple[list[str], Failure | None]:
    """The strings of ``arr`` (C order; only the present ones with ``mask``),
    or the first missing (NA) one."""
    items = arr.reshape(-1).tolist()
    keep = None if mask is None else np.asarray(mask, dtype=bool).reshape(-1).tolist()
    picked: list[str] = []
    for k, item in enumerate(items):
        if keep is not None and not keep[k]:
            continue
        if not isinstance(item, str):
            return [], (E_MISSING, k, 0)
        picked.append(item)
    return picked, None


def _check_offsets(offsets: np.ndarray, size: int) -> Failure | None:
    """Offsets must not decrease nor leave ``[0, size]`` (the C module's rule)."""
    if offsets[0] < 0 or offsets[0] > size:
        return (E_OFFSETS, 0, int(offsets[0]))
    bad = (offsets[1:] < offsets[:-1]) | (offsets[1:] > size)  # np.diff could overflow
    if bad.any():
        i = int(np.argmax(bad)) + 1
        return (E_OFFSETS, i, int(offsets[i]))
    return None


def _prefix_positions(offsets: np.ndarray) -> np.ndarray:
    """Where element i's 4-byte length sits: after the count, i lengths and
    ``offsets[i]`` data bytes."""
    n = len(offsets) - 1
    positions: np.ndarray = 4 + 4 * np.arange(n, dtype=np.int64) + offsets[:-1]
    return positions
