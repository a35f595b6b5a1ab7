"""The loopback HTTP server's handler with injected failures, for tests of
errors met while answers are handed on as they arrive."""

from __future__ import annotations

from typing import Any

from bench.http_server import RangeHandler


class FailingHandler(RangeHandler):
    """:class:`RangeHandler`, answering 500 to the requests whose path ends
    with one of ``server.failing_paths``, or that ``server.fails(path, Range
    header)`` says fail (either attribute may be left unset)."""

    def send_head(self) -> Any:
        fails = getattr(self.server, "fails", None)
        suffixes = getattr(self.server, "failing_paths", ())
        if any(self.path.endswith(p) for p in suffixes) or (fails is not None and fails(self.path, self.headers.get("Range"))):
            self.send_error(500, "injected failure")
            return None
        return super().send_head()
