"""Striped per-key write locks (zarrpy.pipeline.locks)."""

from __future__ import annotations

import threading

import pytest

from zarrpy.pipeline import locks


def test_a_thread_holding_a_stripe_takes_it_again_for_another_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every key on one stripe: a nested lock from the same thread (a
    store's callback writing elsewhere) goes through instead of waiting
    for itself."""
    monkeypatch.setattr(locks, "_STRIPES", (threading.RLock(),))
    done = threading.Event()

    def nested() -> None:
        with locks.locked("store a", ["c/0"]):
            with locks.locked("store b", ["c/1"]):
                done.set()

    worker = threading.Thread(target=nested, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert done.is_set()


def test_another_thread_still_waits_for_a_held_stripe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locks, "_STRIPES", (threading.RLock(),))
    held, release, got = threading.Event(), threading.Event(), threading.Event()

    def holder() -> None:
        with locks.locked("store a", ["c/0"]):
            held.set()
            release.wait(10)

    def other() -> None:
        with locks.locked("store b", ["c/1"]):
            got.set()

    first = threading.Thread(target=holder, daemon=True)
    first.start()
    assert held.wait(10)
    second = threading.Thread(target=other, daemon=True)
    second.start()
    assert not got.wait(0.2)  # blocked while the stripe is held
    release.set()
    assert got.wait(10)
    first.join(10)
    second.join(10)
