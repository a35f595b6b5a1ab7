"""Small validators shared by the metadata parsers (raise MetadataError)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import MetadataError


def parse_json_document(raw: bytes, key: str) -> dict[str, Any]:
    """Decode a JSON object stored under ``key``."""
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MetadataError(f"{key!r}: not valid JSON: {exc}") from None
    except RecursionError:
        raise MetadataError(f"{key!r}: JSON nested too deeply to be metadata") from None
    if not isinstance(doc, dict):
        raise MetadataError(f"{key!r}: expected a JSON object, got {type(doc).__name__}")
    return doc


def dump_json_document(doc: dict[str, Any]) -> bytes:
    """Serialise a metadata document the way zarr-python does (indent 2).

    Non-finite floats (an attribute ``missing_value = nan``) are written as
    the ``NaN`` / ``Infinity`` / ``-Infinity`` tokens zarr-python writes and
    Python's, JavaScript's and zarrs' JSON readers take (fill values are
    strings, so only user attributes ever hold them). Raises MetadataError if
    a member (typically ``attributes``) is not JSON.
    """
    try:
        return json.dumps(doc, indent=2, allow_nan=True).encode()
    except (TypeError, ValueError) as exc:
        raise MetadataError(f"attributes: not JSON-serialisable: {exc}") from None


def same_json(a: Any, b: Any) -> bool:
    """Do two JSON values have the same JSON text? Unlike ``==``, a NaN
    (an attribute, a fill value) equals NaN, and ``true`` is not ``1``."""
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (TypeError, ValueError):  # not JSON (attributes not yet refused): Python's equality
        return bool(a == b)


def parse_shape(value: Any, field: str, *, positive: bool = False) -> tuple[int, ...]:
    """A list of non-negative (or positive) integers."""
    if not isinstance(value, (list, tuple)):
        raise MetadataError(f"{field}: expected a list of integers, got {value!r}")
    lo = 1 if positive else 0
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            kind = "positive" if positive else "non-negative"
            raise MetadataError(f"{field}: expected {kind} integers, got {value!r}")
    return tuple(value)


def parse_attributes(value: Any, field: str = "attributes") -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MetadataError(f"{field}: expected an object, got {value!r}")
    return value


def parse_named(value: Any, field: str, *, allow_optional: bool = True) -> tuple[str, dict[str, Any] | None, bool]:
    """An extension object ``{"name", "configuration"?, "must_understand"?}`` or a bare name.

    Returns ``(name, configuration, must_understand)``.
    """
    if isinstance(value, str):
        return value, None, True
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise MetadataError(f"{field}: expected an object with a 'name', got {value!r}")
    unknown = set(value) - {"name", "configuration", "must_understand"}
    if unknown:
        raise MetadataError(f"{field}: unknown member(s) {sorted(unknown)} in {value['name']!r}")
    config = value.get("configuration")
    if config is not None and not isinstance(config, dict):
        raise MetadataError(f"{field}: 'configuration' of {value['name']!r} must be an object")
    must = value.get("must_understand", True)
    if not isinstance(must, bool):
        raise MetadataError(f"{field}: 'must_understand' must be a boolean")
    if not must and not allow_optional:
        raise MetadataError(f"{field}: 'must_understand: false' is not allowed here")
    return value["name"], config, must
