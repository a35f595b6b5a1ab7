"""A spy on how a store's requests go out: batches started on fsspec's event
loop (``start_on_loop``) and requests sent blocking from the asking thread
(``LeanClient.request_blocking``); both call through."""

from __future__ import annotations

from typing import Any

import pytest

from zarrpy.stores import fsspec as fsspec_store
from zarrpy.stores._http_client import LeanClient


class Sends:
    """Counts :attr:`on_loop` (batches) and :attr:`blocking` (single requests) from now on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.on_loop = 0
        self.blocking = 0
        start_on_loop, request_blocking = fsspec_store.start_on_loop, LeanClient.request_blocking

        def counting_start(*args: Any, **kwargs: Any) -> Any:
            self.on_loop += 1
            return start_on_loop(*args, **kwargs)

        def counting_blocking(client: LeanClient, *args: Any, **kwargs: Any) -> Any:
            self.blocking += 1
            return request_blocking(client, *args, **kwargs)

        monkeypatch.setattr(fsspec_store, "start_on_loop", counting_start)
        monkeypatch.setattr(LeanClient, "request_blocking", counting_blocking)
