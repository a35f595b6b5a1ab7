"""Validation helpers for codec configurations (errors name codec and field)."""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import CodecError


def did_you_mean(names: list[str]) -> str:
    """``"; did you mean 'a', 'b' or 'c'?"`` for ``names``, or ``""`` when there are none."""
    if not names:
        return ""
    quoted = [repr(n) for n in names]
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f"; did you mean {listed}?"


def check_keys(
    codec: str,
    config: Mapping[str, Any] | None,
    *,
    required: tuple[str, ...] = (),
    optional: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Return ``config`` as a dict after checking its key set."""
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise CodecError(f"codec {codec!r}: configuration must be an object, got {config!r}")
    for key in required:
        if key not in config:
            raise CodecError(f"codec {codec!r}: configuration is missing {key!r}")
    unknown = set(config) - set(required) - set(optional)
    if unknown:
        raise CodecError(f"codec {codec!r}: unknown configuration field(s) {sorted(unknown)}")
    return dict(config)


def check_int(codec: str, field: str, value: Any, lo: int, hi: int) -> int:
    """Return ``value`` if it is an int in ``[lo, hi]``."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise CodecError(f"codec {codec!r}: {field!r} must be an integer in [{lo}, {hi}], got {value!r}")
    return value


def check_any_int(codec: str, field: str, value: Any) -> int:
    """Return ``value`` if it is an int, of any size.

    For settings only an encoder uses (compression levels): stored metadata
    with a level numcodecs accepted must still open and read; the range is
    checked when an array is created (``evolve``) and encoders clamp.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise CodecError(f"codec {codec!r}: {field!r} must be an integer, got {value!r}")
    return value


def clamp(value: int, lo: int, hi: int) -> int:
    """``value`` moved into ``[lo, hi]``: the level an encoder writes with."""
    return min(max(value, lo), hi)


def check_choice(codec: str, field: str, value: Any, choices: tuple[Any, ...]) -> Any:
    """Return ``value`` if it is one of ``choices``."""
    if value not in choices:
        raise CodecError(f"codec {codec!r}: {field!r} must be one of {list(choices)}, got {value!r}")
    return value
