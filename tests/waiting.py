"""Waiting in tests for something that happens in another process or thread: poll the
condition until it holds or the deadline passes, then fail naming what was awaited, with the
tails of the logs that would say why. Never a fixed sleep (a loaded CI machine is slower, a
quiet one wastes the time). The suite's one polling loop: every wait goes through here."""

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
    *,
    hopeless: Callable[[], object] | None = None,
):
    """The condition's first truthy value, polled every `every` s for at most `seconds`.
    `hopeless`, asked before each poll, ends the wait at once when it answers (a reason:
    the server being waited for has exited)."""
    deadline = time.monotonic() + seconds
    while True:
        if hopeless is not None and (reason := hopeless()):
            _fail(f"gave up waiting for {what}: {reason}", logs)
        if value := condition():
            return value
        if time.monotonic() >= deadline:
            _fail(f"timed out after {seconds} s waiting for {what}", logs)
        time.sleep(every)


def _fail(message: str, logs: Iterable[Path]):
    tails = "\n".join(f"--- {log.name}\n{log.read_text()[-3000:]}" for log in logs)
    pytest.fail(f"{message}\n{tails}")
