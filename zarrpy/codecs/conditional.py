"""conditional bytes-to-bytes codec (zarr-extensions #27): nested codecs switched on per chunk.

Spec: https://github.com/zarr-developers/zarr-extensions/pull/27 (the
``conditional`` codec, first drafted as the meta-codec ``optional``); no
implementation existed before this one, so the fixtures are made by hand
from the spec text.
V3 name: ``conditional``; no V2 form.

A stored value is a bitmask header, then the data::

    [header: header_bits / 8 bytes] [data]

Bit ``i`` of the header (little-endian bit order: bit 0 is the lowest bit
of the first byte) says whether nested codec ``i`` of ``codecs`` was applied.
Encoding runs the codecs whose bit is set, in order; decoding reads the
header and undoes them in reverse order, skipping the others. Reserved bits
(``len(codecs)`` up to ``header_bits - 1``) are written 0; a value with one
set is refused (it names a codec the configuration does not have).

Configuration: ``codecs`` (required; bytes-to-bytes codecs) and
``header_bits`` (optional: a multiple of 8, at least ``len(codecs)``;
default the least such multiple)::

    {"codecs": [{"name": "zstd", "configuration": {"level": 5, "checksum": false}}],
     "header_bits": 8}

Which codecs a chunk gets is decided when it is written, not stored in the
metadata: ``ConditionalCodec(..., decide=...)`` takes ``"never"`` (the spec's
default: a mask of all 0s), ``"always"``, ``"compress_if_smaller"`` (apply a
codec only when its output is shorter than its input) or a function
``decide(index, codec, data, encoded) -> bool`` called with each codec's
input and its trial output. A codec read from metadata decides ``"never"``.

>>> ConditionalCodec.from_config({"codecs": [{"name": "gzip", "configuration": {"level": 5}}]}).to_config()
{'codecs': [{'name': 'gzip', 'configuration': {'level': 5}}]}
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence, Union

from ..errors import ChunkDecodeError, CodecError
from ._config import check_int, check_keys
from .abc import BytesToBytesCodec, ChunkSpec, Codec
from .registry import codec_from_json

NAME = "conditional"
Decision = Callable[[int, BytesToBytesCodec, bytes, bytes], bool]
DecideLike = Union[str, Decision]
DECISIONS = ("never", "always", "compress_if_smaller")
"""The named write-time decisions (``decide=``): apply the optional codecs
never, always, or only where their output is smaller."""


class ConditionalCodec(BytesToBytesCodec):
    """Nested bytes-to-bytes codecs, each applied or skipped per chunk (a header says which)."""

    name = NAME
    __slots__ = ("codecs", "header_bits", "_given_bits", "decide")

    def __init__(self, codecs: Sequence[Any], header_bits: int | None = None, decide: DecideLike = "never"):
        if isinstance(codecs, (str, bytes, Mapping)) or not isinstance(codecs, Sequence):
            raise CodecError(f"codec {NAME!r}: 'codecs' must be a list of codecs, got {codecs!r}")
        built: list[BytesToBytesCodec] = []
        for i, c in enumerate(codecs):
            try:
                codec: Codec = c if isinstance(c, Codec) else codec_from_json(c)
            except CodecError as exc:
                raise type(exc)(f"codec {NAME!r}: 'codecs[{i}]': {exc}") from None
            if not isinstance(codec, BytesToBytesCodec):
                raise CodecError(f"codec {NAME!r}: 'codecs[{i}]' ({codec.name!r}) is not a bytes-to-bytes codec")
            built.append(codec)
        self.codecs: tuple[BytesToBytesCodec, ...] = tuple(built)
        least = -(-len(built) // 8) * 8
        if header_bits is not None:
            check_int(NAME, "header_bits", header_bits, 0, 2**16)
            if header_bits % 8 or header_bits < len(built):
                raise CodecError(
                    f"codec {NAME!r}: 'header_bits' must be a multiple of 8 and at least the number of codecs "
                    f"({len(built)}), got {header_bits}"
                )
        self._given_bits = header_bits
        self.header_bits: int = least if header_bits is None else header_bits
        if not callable(decide) and decide not in DECISIONS:
            raise CodecError(f"codec {NAME!r}: decide must be one of {list(DECISIONS)} or a function, got {decide!r}")
        self.decide: DecideLike = decide

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> ConditionalCodec:
        config = check_keys(NAME, config, required=("codecs",), optional=("header_bits",))
        return cls(config["codecs"], config.get("header_bits"))

    def to_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"codecs": [c.to_json() for c in self.codecs]}
        if self._given_bits is not None:
            config["header_bits"] = self._given_bits
        return config

    def with_decision(self, decide: DecideLike) -> ConditionalCodec:
        """This codec (same metadata) deciding with ``decide`` when it encodes."""
        return ConditionalCodec(self.codecs, self._given_bits, decide)

    def evolve(self, spec: ChunkSpec) -> ConditionalCodec:
        nested = [c.evolve(spec) for c in self.codecs]
        if all(a is b for a, b in zip(nested, self.codecs)):
            return self
        return ConditionalCodec(nested, self._given_bits, self.decide)

    def resolve(self, spec: ChunkSpec) -> ChunkSpec:
        for codec in self.codecs:
            codec.resolve(spec)
        return spec

    # -- data ------------------------------------------------------------------
    def encode(self, data: bytes, spec: ChunkSpec) -> bytes:
        mask = 0
        data = bytes(data)
        for i, codec in enumerate(self.codecs):
            if self.decide == "never":
                continue
            encoded = codec.encode(data, spec)
            if self._applies(i, codec, data, encoded):
                mask |= 1 << i
                data = encoded
        return mask.to_bytes(self.header_bits // 8, "little") + data

    def _applies(self, index: int, codec: BytesToBytesCodec, data: bytes, encoded: bytes) -> bool:
        if self.decide == "always":
            return True
        if self.decide == "compress_if_smaller":
            return len(encoded) < len(data)
        assert callable(self.decide)
        return bool(self.decide(index, codec, data, encoded))

    def decode(self, data: bytes, spec: ChunkSpec) -> bytes:
        """Undo the codecs the header names, last first.

        Raises ChunkDecodeError for a value shorter than the header or a
        header naming a codec past ``codecs``; the nested codecs' errors
        pass through, naming this codec.
        """
        nbytes = self.header_bits // 8
        if len(data) < nbytes:
            raise ChunkDecodeError(f"codec {NAME!r}: {len(data)} bytes, shorter than the {nbytes}-byte header")
        mask = int.from_bytes(bytes(data[:nbytes]), "little")
        if mask >> len(self.codecs):
            raise ChunkDecodeError(
                f"codec {NAME!r}: the header sets bit(s) past the {len(self.codecs)} configured codec(s) (mask {mask:#x})"
            )
        out = bytes(data[nbytes:])
        for i in reversed(range(len(self.codecs))):
            if mask >> i & 1:
                try:
                    out = self.codecs[i].decode(out, spec)
                except ChunkDecodeError as exc:
                    raise type(exc)(f"codec {NAME!r}: 'codecs[{i}]': {exc}") from None
        return out


__all__ = ["ConditionalCodec", "DECISIONS"]
