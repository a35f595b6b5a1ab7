"""The zfp C library, through ctypes, for the ``zfp`` codec.

zfpy's Python API cannot do what zarrs' ``zfp`` codec does: it has no
reversible or expert mode and always passes the array's own dimensionality
to ``zfp_stream_set_rate``. The zfpy wheel ships libzfp itself (1.0.x,
exporting the whole C API), so this module loads that library and calls
the functions zarrs calls, in the same order. ``pip install zfpy`` (the
``zarrpy[zfp]`` extra) is all that is needed; a libzfp found on the system
is the fallback.

The library is loaded on first use; a missing one is a CodecError that says
which package to install.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ChunkDecodeError, CodecError

TYPE_INT32, TYPE_INT64, TYPE_FLOAT, TYPE_DOUBLE = 1, 2, 3, 4
"""zfp_type values (zfp.h)."""

_INSTALL = "codec 'zfp' needs the zfp library, which the 'zfpy' package ships: pip install 'zarrpy[zfp]'"

_lib: Any = None
_lock = threading.Lock()

_c = ctypes
_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "zfp_stream_open": (_c.c_void_p, [_c.c_void_p]),
    "zfp_stream_close": (None, [_c.c_void_p]),
    "zfp_stream_set_reversible": (None, [_c.c_void_p]),
    "zfp_stream_set_rate": (_c.c_double, [_c.c_void_p, _c.c_double, _c.c_int, _c.c_uint, _c.c_int]),
    "zfp_stream_set_precision": (_c.c_uint, [_c.c_void_p, _c.c_uint]),
    "zfp_stream_set_accuracy": (_c.c_double, [_c.c_void_p, _c.c_double]),
    "zfp_stream_set_params": (_c.c_int, [_c.c_void_p, _c.c_uint, _c.c_uint, _c.c_uint, _c.c_int]),
    "zfp_stream_maximum_size": (_c.c_size_t, [_c.c_void_p, _c.c_void_p]),
    "zfp_stream_set_bit_stream": (None, [_c.c_void_p, _c.c_void_p]),
    "zfp_stream_rewind": (None, [_c.c_void_p]),
    "zfp_field_1d": (_c.c_void_p, [_c.c_void_p, _c.c_int, _c.c_size_t]),
    "zfp_field_2d": (_c.c_void_p, [_c.c_void_p, _c.c_int, _c.c_size_t, _c.c_size_t]),
    "zfp_field_3d": (_c.c_void_p, [_c.c_void_p, _c.c_int, _c.c_size_t, _c.c_size_t, _c.c_size_t]),
    "zfp_field_4d": (_c.c_void_p, [_c.c_void_p, _c.c_int, _c.c_size_t, _c.c_size_t, _c.c_size_t, _c.c_size_t]),
    "zfp_field_free": (None, [_c.c_void_p]),
    "zfp_compress": (_c.c_size_t, [_c.c_void_p, _c.c_void_p]),
    "zfp_decompress": (_c.c_size_t, [_c.c_void_p, _c.c_void_p]),
    "zfp_field_alloc": (_c.c_void_p, []),
    "zfp_field_type": (_c.c_int, [_c.c_void_p]),
    "zfp_field_dimensionality": (_c.c_uint, [_c.c_void_p]),
    "zfp_field_size": (_c.c_size_t, [_c.c_void_p, _c.POINTER(_c.c_size_t)]),
    "zfp_field_set_pointer": (None, [_c.c_void_p, _c.c_void_p]),
    "zfp_read_header": (_c.c_size_t, [_c.c_void_p, _c.c_void_p, _c.c_uint]),
    "stream_open": (_c.c_void_p, [_c.c_void_p, _c.c_size_t]),
    "stream_close": (None, [_c.c_void_p]),
}


def library() -> Any:
    """The loaded libzfp (CodecError naming the package if there is none)."""
    global _lib
    if _lib is None:
        with _lock:
            if _lib is None:
                _lib = _load()
    return _lib


def _load() -> Any:
    for path in _candidates():
        try:
            lib = ctypes.CDLL(str(path))
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = restype, argtypes
            return lib
        except (OSError, AttributeError):
            continue
    raise CodecError(_INSTALL)


def _candidates() -> list[Path | str]:
    """libzfp inside the installed zfpy wheel, then the system's."""
    found: list[Path | str] = []
    try:
        # the zfpy wheel ships libzfp next to its module
        import zfpy  # type: ignore[import-not-found,unused-ignore]

        root = Path(zfpy.__file__).parent
        for pattern in ("zfpy.libs/*zfp*", "zfpy/.dylibs/*zfp*", ".dylibs/*zfp*"):
            found.extend(sorted(root.glob(pattern)))
    except ImportError:
        pass
    system = ctypes.util.find_library("zfp")
    if system:
        found.append(system)
    return found


class Mode:
    """A zfp compression mode: which ``zfp_stream_set_*`` call and its arguments."""

    __slots__ = ("kind", "args")

    def __init__(self, kind: str, *args: float):
        self.kind, self.args = kind, args

    def apply(self, lib: Any, stream: int, zfp_type: int) -> None:
        if self.kind == "reversible":
            lib.zfp_stream_set_reversible(stream)
        elif self.kind == "fixed_rate":
            # zarrs passes dims=3 whatever the chunk's dimensionality (so a
            # 2-d chunk gets 64 * rate bits per 16-value block); matching it
            # is what makes the bytes the same.
            lib.zfp_stream_set_rate(stream, float(self.args[0]), zfp_type, 3, 0)
        elif self.kind == "fixed_precision":
            lib.zfp_stream_set_precision(stream, int(self.args[0]))
        elif self.kind == "fixed_accuracy":
            lib.zfp_stream_set_accuracy(stream, float(self.args[0]))
        elif not lib.zfp_stream_set_params(stream, *(int(a) for a in self.args)):
            raise CodecError(f"codec 'zfp': zfp refuses the expert parameters {self.args}")


class _Session:
    """One zfp stream + field over ``array`` (C order, 1-4 dims); freed on exit."""

    def __init__(self, mode: Mode, zfp_type: int, array: np.ndarray):
        self.lib = library()
        self.stream = self.lib.zfp_stream_open(None)
        self.field = None
        self.bits = None
        try:
            mode.apply(self.lib, self.stream, zfp_type)
            dims = tuple(reversed(array.shape))  # zfp's x varies fastest
            make = getattr(self.lib, f"zfp_field_{len(dims)}d")
            self.field = make(array.ctypes.data_as(ctypes.c_void_p), zfp_type, *dims)
        except BaseException:
            self.close()
            raise

    def maximum_size(self) -> int:
        return int(self.lib.zfp_stream_maximum_size(self.stream, self.field))

    def attach(self, buffer: np.ndarray) -> None:
        self.bits = self.lib.stream_open(buffer.ctypes.data_as(ctypes.c_void_p), buffer.nbytes)
        self.lib.zfp_stream_set_bit_stream(self.stream, self.bits)
        self.lib.zfp_stream_rewind(self.stream)

    def close(self) -> None:
        if self.field:
            self.lib.zfp_field_free(self.field)
        if self.bits:
            self.lib.stream_close(self.bits)
        self.lib.zfp_stream_close(self.stream)

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def maximum_size(shape: tuple[int, ...], dtype: np.dtype, zfp_type: int, mode: Mode) -> int:
    """The most bytes zfp writes for a field of ``shape`` (what :func:`compress` allocates)."""
    shaped = np.lib.stride_tricks.as_strided(np.zeros(1, dtype=dtype), shape, (0,) * len(shape))
    with _Session(mode, zfp_type, shaped) as session:
        return _words(session.maximum_size()) * 8


def compress(array: np.ndarray, zfp_type: int, mode: Mode) -> bytes:
    """The headerless zfp stream of ``array`` (C-contiguous, 1-4 dims), as zarrs writes it."""
    array = np.ascontiguousarray(array)
    with _Session(mode, zfp_type, array) as session:
        buffer = np.zeros(_words(session.maximum_size()) * 8, dtype=np.uint8)
        session.attach(buffer)
        size = int(session.lib.zfp_compress(session.stream, session.field))
    if size == 0:
        raise CodecError("codec 'zfp': zfp compression failed")
    return buffer[:size].tobytes()


def decompress(data: bytes, out: np.ndarray, zfp_type: int, mode: Mode) -> None:
    """Decode the headerless stream ``data`` into ``out`` (C-contiguous, 1-4 dims).

    zfp reads its bit stream without bounds checks, so ``data`` is copied
    into a zeroed buffer as large as the largest stream ``out`` can have;
    a stream that needs more than ``data`` holds is a ChunkDecodeError.
    """
    with _Session(mode, zfp_type, out) as session:
        nbytes = max(len(data), session.maximum_size())
        buffer = np.zeros(_words(nbytes) * 8 + 8, dtype=np.uint8)
        buffer[: len(data)] = np.frombuffer(data, dtype=np.uint8)
        session.attach(buffer)
        used = int(session.lib.zfp_decompress(session.stream, session.field))
    if used == 0 or used > _words(len(data)) * 8:
        raise ChunkDecodeError(
            f"codec 'zfp': corrupt or truncated stream ({len(data)} bytes; zfp read {used})"
        )


_HEADER_FULL = 0x7  # ZFP_HEADER_MAGIC | ZFP_HEADER_META | ZFP_HEADER_MODE
_NUMPY_TYPES = {TYPE_INT32: "i4", TYPE_INT64: "i8", TYPE_FLOAT: "f4", TYPE_DOUBLE: "f8"}


def decompress_with_header(data: bytes, size: int, codec: str) -> np.ndarray:
    """Decode a stream that starts with a full zfp header (zfpy's format).

    zfpy believes the header: it allocates the array the header describes and
    reads the stream without bounds checks, so a corrupt header crashes the
    process. Here the header is read first and must describe ``size``
    elements of a zfp type; the stream is then decoded from a zeroed buffer
    as large as zfp may read for that field and mode (refused when that is
    far more than the data and the elements can need). Returns the array in
    zfpy's shape (the header's dimensions, x last).

    Raises
    ------
    ChunkDecodeError
        Naming ``codec``, if the header is missing or does not match, or
        the stream is corrupt or truncated.
    """
    lib = library()
    nbytes = len(data)
    stream, field, bits = lib.zfp_stream_open(None), lib.zfp_field_alloc(), None
    try:
        head = np.zeros(_words(nbytes) * 8 + 64, dtype=np.uint8)
        head[:nbytes] = np.frombuffer(data, dtype=np.uint8)
        bits = lib.stream_open(head.ctypes.data_as(ctypes.c_void_p), head.nbytes)
        lib.zfp_stream_set_bit_stream(stream, bits)
        lib.zfp_stream_rewind(stream)
        if not lib.zfp_read_header(stream, field, _HEADER_FULL):
            raise ChunkDecodeError(f"codec {codec!r}: no valid zfp header")
        zfp_type, dims = int(lib.zfp_field_type(field)), int(lib.zfp_field_dimensionality(field))
        sizes = (ctypes.c_size_t * 4)()
        count = int(lib.zfp_field_size(field, sizes))
        if zfp_type not in _NUMPY_TYPES or not 1 <= dims <= 4 or count != size:
            raise ChunkDecodeError(
                f"codec {codec!r}: zfp header describes {count} elements of zfp type {zfp_type}, "
                f"the chunk has {size}"
            )
        out = np.zeros(tuple(int(sizes[i]) for i in reversed(range(dims))), dtype=_NUMPY_TYPES[zfp_type])
        maximum = int(lib.zfp_stream_maximum_size(stream, field))
        if maximum > nbytes + 4 * out.nbytes + (1 << 16):
            raise ChunkDecodeError(f"codec {codec!r}: zfp header allows {maximum} bytes of stream, implausibly many")
        buffer = np.zeros(_words(max(nbytes, maximum)) * 8 + 64, dtype=np.uint8)
        buffer[:nbytes] = head[:nbytes]
        lib.stream_close(bits)
        bits = lib.stream_open(buffer.ctypes.data_as(ctypes.c_void_p), buffer.nbytes)
        lib.zfp_stream_set_bit_stream(stream, bits)
        lib.zfp_stream_rewind(stream)
        lib.zfp_read_header(stream, field, _HEADER_FULL)
        lib.zfp_field_set_pointer(field, out.ctypes.data_as(ctypes.c_void_p))
        used = int(lib.zfp_decompress(stream, field))
    finally:
        lib.zfp_field_free(field)
        if bits:
            lib.stream_close(bits)
        lib.zfp_stream_close(stream)
    if used == 0 or used > _words(nbytes) * 8:
        raise ChunkDecodeError(f"codec {codec!r}: corrupt or truncated stream ({nbytes} bytes; zfp read {used})")
    return out


def _words(nbytes: int) -> int:
    return (nbytes + 7) // 8


__all__ = [
    "Mode", "TYPE_DOUBLE", "TYPE_FLOAT", "TYPE_INT32", "TYPE_INT64",
    "compress", "decompress", "decompress_with_header", "library", "maximum_size",
]
