"""A call a test must see end: one that would wait for ever fails the test instead of
blocking the run."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def in_time(call: Callable[[], T], seconds: float) -> T:
    """``call()``'s result (or its exception, raised here); the test fails when it has not
    ended within ``seconds``. It runs in a daemon thread, left behind if it never ends."""
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(call())
        except BaseException as error:  # (raised in the test, below)
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=seconds)
    assert not thread.is_alive(), f"it did not end within {seconds} s"
    if errors:
        raise errors[0]
    return results[0]
