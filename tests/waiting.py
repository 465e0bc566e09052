"""Waiting in tests for something that happens in another process or thread: poll the
condition until it holds or the deadline passes, then fail naming what was awaited, with the
tails of the logs that would say why. Never a fixed sleep (a loaded CI machine is slower, a
quiet one wastes the time)."""

import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest


def wait_until(
    condition: Callable[[], object],
    seconds: float,
    what: str,
    logs: Iterable[Path] = (),
    every: float = 0.1,
):
    """The condition's first truthy value, polled every `every` s for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(every)
    tails = "\n".join(f"--- {log.name}\n{log.read_text()[-3000:]}" for log in logs)
    pytest.fail(f"timed out after {seconds} s waiting for {what}\n{tails}")
