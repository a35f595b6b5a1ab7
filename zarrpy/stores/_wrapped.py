"""What the stores that wrap another library's store object share."""

from __future__ import annotations

import pickle


def pickle_wrapped(owner: object, wrapped: object, what: str, advice: str) -> bytes:
    """``wrapped`` (the other library's store) pickled, for ``owner``'s
    ``__reduce__``; a TypeError naming ``owner`` and saying why when it does
    not pickle (``what`` names the wrapped store's kind, ``advice`` what to
    use instead)."""
    try:
        return pickle.dumps(wrapped, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 - explained and chained
        raise TypeError(
            f"cannot pickle {owner!r}: {what} {type(wrapped).__name__} does not pickle "
            f"({type(exc).__name__}: {exc}). {advice}"
        ) from exc
