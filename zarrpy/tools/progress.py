"""A tiny progress bar for the command line (no dependency).

It draws on stderr, and only when stderr is a terminal: piped or redirected
output gets no bar, so logs and scripts see only the command's own lines.
``zarrpy cp`` and ``zarrpy verify`` use it; ``--quiet`` turns it off.

The bar redraws at most every :data:`MIN_INTERVAL` seconds (and once at the
start and the end, so even a quick run shows it), on one line rewritten with
a carriage return, cut to the terminal's width.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import TextIO

MIN_INTERVAL = 0.1
"""Seconds between redraws."""
_BAR_WIDTH = 24


def wanted(quiet: bool = False, stream: TextIO | None = None) -> bool:
    """Should a bar be drawn on ``stream`` (default stderr)? Only on a terminal, and not when ``quiet``."""
    stream = sys.stderr if stream is None else stream
    if quiet:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def format_bytes(n: float) -> str:
    """``n`` bytes as ``"12.3 MB"`` (powers of 1024, as ``--max-memory`` reads them)."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class Progress:
    """A progress bar counting up to ``total`` (bytes when ``in_bytes``, else items).

    Use as a context manager, or call :meth:`close`. A disabled bar
    (``enabled=False``, or by default when stderr is no terminal) does nothing.
    """

    def __init__(self, total: int, label: str = "", *, in_bytes: bool = False, enabled: bool | None = None,
                 stream: TextIO | None = None):
        self.stream = sys.stderr if stream is None else stream
        self.enabled = wanted(stream=self.stream) if enabled is None else enabled
        self.total = max(int(total), 0)
        self.done = 0
        self.label = label
        self.in_bytes = in_bytes
        self._start = time.monotonic()
        self._last = 0.0
        self._width = 0
        self._closed = False
        if self.enabled:
            self._draw()

    def advance(self, n: int = 1, label: str | None = None) -> None:
        """Count ``n`` more done (and show ``label`` from now on, if given)."""
        self.done += n
        if label is not None:
            self.label = label
        if self.enabled and time.monotonic() - self._last >= MIN_INTERVAL:
            self._draw()

    def set_label(self, label: str) -> None:
        """Show ``label`` before the bar from now on."""
        self.advance(0, label)

    def _amount(self, n: int) -> str:
        return format_bytes(n) if self.in_bytes else str(n)

    def _line(self) -> str:
        elapsed = time.monotonic() - self._start
        fraction = min(self.done / self.total, 1.0) if self.total else 1.0
        filled = int(fraction * _BAR_WIDTH)
        bar = "#" * filled + "-" * (_BAR_WIDTH - filled)
        parts = [f"[{bar}] {fraction * 100:3.0f}%", f"{self._amount(self.done)}/{self._amount(self.total)}"]
        if self.in_bytes and elapsed > 0.5 and self.done:
            parts.append(f"{format_bytes(self.done / elapsed)}/s")
        if 0 < self.done < self.total and elapsed > 1:
            parts.append(f"eta {_duration(elapsed * (self.total - self.done) / self.done)}")
        text = " ".join(parts)
        return f"{self.label} {text}" if self.label else text

    def _columns(self) -> int:
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            return 80
        return columns if columns > 0 else 80  # a terminal of unknown size (a fresh pty) says 0

    def _draw(self) -> None:
        self._last = time.monotonic()
        line = self._line()
        width = max(self._columns() - 1, 10)
        if len(line) > width:  # keep the numbers, shorten the label
            line = line[len(line) - width:]
        pad = max(self._width - len(line), 0)
        self._width = len(line)
        try:
            self.stream.write("\r" + line + " " * pad)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing
            self.enabled = False

    def close(self) -> None:
        """Draw the final state and end the line."""
        if self._closed:
            return
        self._closed = True
        if self.enabled:
            self._draw()
            try:
                self.stream.write("\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


__all__ = ["MIN_INTERVAL", "Progress", "format_bytes", "wanted"]
