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
"""

import logging
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
    "pair.decided": "a pair was decided (consensus or adjudication)",
    "task.complete": "every pair of a task is decided",
}


def publish(project: Project, kind: str, data: dict[str, Any], *, actor: Any = None) -> None:
    """Tell the listeners, once the current transaction commits, that `kind` happened."""
    if kind not in KINDS:
        raise ValueError(f"unknown project event {kind!r}")

    def send() -> None:
        for receiver, outcome in project_event.send_robust(
            sender=Project, project=project, kind=kind, data=data, actor=actor
        ):
            if isinstance(outcome, Exception):
                logger.error("listener %r failed on %s", receiver, kind, exc_info=outcome)

    transaction.on_commit(send)
