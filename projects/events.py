"""What happened in a project, for whoever listens (in-app notifications, e-mail, webhooks).

A service that finishes something a person or a pipeline may want to hear about calls
`publish(project, kind, data)` inside its transaction; once the transaction commits, every
receiver of `project_event` is called with the kind, the project, the data and the actor. A
receiver must be quick (record a row, queue a job through core/outbox.py) and never raise into
the service: a failing listener is logged and the others still run (`send_robust`), and
nothing is sent for a transaction that rolls back.

The listening apps (they sit above the apps that publish) connect in their `AppConfig.ready`:

    project_event.connect(receiver, dispatch_uid="...")
    def receiver(sender, *, project, kind, data, actor, **_): ...

`data` is a small JSON object: ids and names the listener needs, never ratings or anything
an annotator must not see (the listeners decide who hears what).

Bursts. A service that announces many things at once (a settings change re-deciding a
thousand pairs, an import, a bulk action) publishes them inside `published_together()`: they
are sent as one burst once their transactions commit (an event of a transaction that rolled
back is left out). Receivers still hear each event; one whose work is per burst, not per
event (the dashboards' refresh, webhook deliveries gathered into one background job) calls
`burst_gather(key, item, flush)` and its `flush(items)` runs once after the burst's last
event. An event published alone is a burst of one.
"""

import logging
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import transaction
from django.dispatch import Signal

from projects.models import Project

logger = logging.getLogger(__name__)

project_event = Signal()

# Every kind a service publishes, with what it means.
KINDS = {
    "question.asked": "an annotator asked a question about a pair",
    "question.answered": "a lead answered a question about a pair",
    "flag.raised": "an annotator flagged a pair",
    "flag.withdrawn": "an annotator took back their flag (undo) before a lead acted on it",
    "import.finished": "an import finished",
    "import.failed": "an import failed",
    "run.finished": "a judge run finished",
    "run.failed": "a judge run failed",
    "export.ready": "an export is ready to download",
    "export.failed": "an export failed",
    "annotator.paused": "an annotator was paused by the gold rule",
    "pair.released": "a lead gave an annotator's pair in progress back to the pool",
    "pair.decided": (
        "a pair was decided, or decided otherwise: by its ratings (consensus) or a lead "
        "(adjudication), on a rating, a lead's action, a settings change, a bulk action or an "
        "import (its imported ratings and adjudications; a label imported alone is not one)"
    ),
    "task.complete": "every pair of a task is decided",
}


@dataclass(frozen=True)
class _Event:
    project: Project
    kind: str
    data: dict[str, Any]
    actor: Any


# Per thread: the events a `published_together` block gathers, and while a burst is being
# sent, what its receivers gather for after it (`burst_gather`).
_local = threading.local()


def publish(project: Project, kind: str, data: dict[str, Any], *, actor: Any = None) -> None:
    """Tell the listeners, once the current transaction commits, that `kind` happened (with
    the other events of a `published_together` block, when inside one)."""
    if kind not in KINDS:
        raise ValueError(f"unknown project event {kind!r}")
    event = _Event(project, kind, data, actor)
    gathered: list[_Event] | None = getattr(_local, "gathered", None)
    if gathered is not None:
        # Kept only once its transaction commits: a rolled-back one drops this callback.
        transaction.on_commit(partial(gathered.append, event))
        return
    transaction.on_commit(partial(_burst_send, [event]))


@contextmanager
def published_together() -> Iterator[None]:
    """The events published inside the block are sent as one burst, after the block, once
    every transaction they were published in has committed (those of a transaction rolled
    back are not sent). A block inside another adds to the outer one's burst."""
    if getattr(_local, "gathered", None) is not None:
        yield
        return
    gathered: list[_Event] = []
    _local.gathered = gathered
    try:
        yield
    finally:
        _local.gathered = None
        # Registered after every event's own callback, so it runs after them.
        transaction.on_commit(partial(_burst_send, gathered))


def burst_gather(key: Hashable, item: object, flush: Callable[[list[Any]], object]) -> None:
    """For a receiver whose work is per burst: gather `item` under `key`; `flush(items)` is
    called once, after the last event of the burst being sent (the first flush given for a
    key is kept). Outside a burst, `flush([item])` at once."""
    after: dict[Hashable, tuple[list[Any], Callable[[list[Any]], object]]] | None = getattr(
        _local, "after", None
    )
    if after is None:
        flush([item])
        return
    after.setdefault(key, ([], flush))[0].append(item)


def _burst_send(events: list[_Event]) -> None:
    if not events:
        return
    outer = getattr(_local, "after", None)
    after: dict[Hashable, tuple[list[Any], Callable[[list[Any]], object]]] = {}
    _local.after = after
    try:
        for event in events:
            for receiver, outcome in project_event.send_robust(
                sender=Project,
                project=event.project,
                kind=event.kind,
                data=event.data,
                actor=event.actor,
            ):
                if isinstance(outcome, Exception):
                    logger.error("listener %r failed on %s", receiver, event.kind, exc_info=outcome)
    finally:
        _local.after = outer
        for key, (items, flush) in after.items():
            try:
                flush(items)
            except Exception:
                logger.exception("the work after a burst of events failed (%r)", key)
