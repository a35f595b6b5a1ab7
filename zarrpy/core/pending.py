"""Answers that come later: a batch of requests sent now, waited for when needed.

A read planner sends all of a stage's requests before it decodes anything
(:meth:`~zarrpy.stores.abc.Store.submit_versioned`): decoding holds the GIL
in bursts, and a request that a Python client has not yet written waits
for it. A :class:`Pending` is one such batch:

- on a store whose requests run on an event loop, the batch is on the loop
  from the start, and :meth:`Pending.wait_sent` returns once the loop has
  written its requests (every request started, up to the concurrency bound);
- elsewhere the batch is work to run (:meth:`Pending.later`): by the first
  thread that asks for it, or on an executor once :meth:`Pending.start` is
  called, so many batches still wait side by side.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Executor, Future, as_completed
from typing import Any, Callable, Generic, Iterator, Sequence, TypeVar

T = TypeVar("T")

SENT_TIMEOUT_S = 1.0
"""Longest :meth:`Pending.wait_sent` waits: the loop that writes the requests
may be busy with another batch; decoding then goes ahead regardless."""


class Pending(Generic[T]):
    """A batch of requests whose answers :meth:`result` gives (see the module docstring)."""

    __slots__ = ("_fn", "_future", "_finish", "_sent", "_lock", "_claimed", "_done", "_value", "_error", "_callbacks", "_loop")

    def __init__(self) -> None:
        self._fn: Callable[[], T] | None = None
        self._future: Future[object] | None = None
        self._finish: Callable[[object], T] | None = None
        self._sent: threading.Event | None = None
        self._lock = threading.Lock()
        self._claimed = False
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def later(cls, fn: Callable[[], T]) -> Pending[T]:
        """``fn()``, run by the first :meth:`result` (or :meth:`start`)."""
        p: Pending[T] = cls()
        p._fn = fn
        return p

    @classmethod
    def on_loop(cls, future: Future[object], finish: Callable[[object], T], sent: threading.Event,
                loop: asyncio.AbstractEventLoop | None = None) -> Pending[T]:
        """A batch already running on an event loop (``loop``): ``finish(future's
        result)`` is the answer; ``sent`` is set once its requests are
        written. It may be started from ``loop``'s own thread (an answer's
        callback starting the next stage), but not waited for there."""
        p: Pending[T] = cls()
        p._future, p._finish, p._sent, p._loop = future, finish, sent, loop
        return p

    @property
    def live(self) -> bool:
        """Whether the batch is already running (on an event loop)."""
        return self._future is not None

    def start(self, executor: Executor) -> Pending[T]:
        """Run a :meth:`later` batch on ``executor`` now (a batch on a loop
        runs already); :meth:`result` still runs it itself if no thread has
        begun it, so a full executor never makes it wait."""
        if self._fn is not None and not self._claimed:
            try:
                executor.submit(self._run)
            except RuntimeError:  # the executor is shutting down: result() runs it
                pass
        return self

    def when_done(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` once the batch is answered: on a loop, from the
        thread that finishes it; a :meth:`later` batch after :meth:`result`
        ran it, or now if it already has."""
        if self._future is not None:
            self._future.add_done_callback(lambda _: fn())
            return
        with self._lock:
            self._callbacks.append(fn)
            run_now = self._done.is_set()
        if run_now:
            self._run_callbacks()

    def _run_callbacks(self) -> None:
        with self._lock:
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn()

    def wait_sent(self, timeout: float = SENT_TIMEOUT_S) -> None:
        """Wait until the batch's requests are written (at most ``timeout``
        seconds); a :meth:`later` batch returns at once."""
        if self._sent is not None:
            self._sent.wait(timeout)

    def result(self) -> T:
        """The answers (the batch's error re-raised), waiting as long as it takes."""
        if self._future is not None:
            assert self._finish is not None
            if not self._future.done() and self._loop is not None and _running_loop() is self._loop:
                raise NotImplementedError("a store's batch waited for on an event loop's thread would wait forever")
            return self._finish(self._future.result())
        self._run()
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # _run set it

    def _run(self) -> None:
        with self._lock:
            if self._claimed:
                return
            self._claimed = True
        assert self._fn is not None
        try:
            self._value = self._fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised by result()
            self._error = exc
        finally:
            self._done.set()
            self._run_callbacks()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop this thread runs, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def in_answer_order(pendings: Sequence[Pending[Any]]) -> Iterator[int]:
    """The positions of ``pendings`` as their answers come in: batches to run
    first (their :meth:`~Pending.result` runs them), in order, then the live
    ones as they finish, so a planner takes each answer as soon as it is in."""
    live: dict[Future[object], int] = {}
    for i, p in enumerate(pendings):
        if not p.live:
            yield i
        else:
            assert p._future is not None
            live[p._future] = i
    for future in as_completed(live):
        yield live[future]


__all__ = ["Pending", "SENT_TIMEOUT_S", "in_answer_order"]
