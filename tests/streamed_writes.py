"""A memory store that records which objects were written through a stream."""

from __future__ import annotations

from zarrpy.stores.memory import MemoryStore
from zarrpy.stores.writes import ObjectWriter


class WriterCountingStore(MemoryStore):
    """A memory store that records the keys written through :meth:`open_writer`."""

    def __init__(self) -> None:
        super().__init__()
        self.streamed: list[str] = []

    def open_writer(self, key: str) -> ObjectWriter:
        self.streamed.append(key)
        return super().open_writer(key)
