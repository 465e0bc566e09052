"""The outbox: a job's database row is the truth, the broker's message only a notification.

A service records its job (an import, an export, a judge run's chunks) and calls
`enqueue_on_commit(task, model, ids)`: once the transaction commits, a message per row is sent
and the rows are stamped `enqueued_at`. With the broker unreachable nothing raises (the
request that started the job still answers 2xx): the rows stay unstamped, which the pages show
as "waiting for a worker", and `outbox_sweep` sends them once the broker is back (when a
worker starts, and every ARBITER_OUTBOX_SWEEP_SECONDS from Celery beat). A message sent twice
is harmless: every task is idempotent. Each app registers its kinds of job in its
`AppConfig.ready` (`job_kind_register`), so that the sweep knows them without importing them.
"""

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

logger = logging.getLogger(__name__)

SWEEP_BATCH = 1000


@dataclass(frozen=True)
class JobKind:
    """A kind of background job: its Celery task (called with one row's id), its model, and
    the rows still to run (the sweep sends those among them never sent)."""

    task: object
    model: type
    open_rows: Callable[[], object]


_KINDS: list[JobKind] = []


def job_kind_register(task, model, open_rows: Callable[[], object]) -> None:
    """Make a kind of job known to the sweep (called once per kind, from `AppConfig.ready`)."""
    if not any(kind.model is model for kind in _KINDS):
        _KINDS.append(JobKind(task, model, open_rows))


def outbox_sweep() -> int:
    """Send the jobs accepted while the broker was unreachable; the number sent."""
    sent = 0
    for kind in _KINDS:
        waiting = kind.open_rows().filter(enqueued_at__isnull=True).order_by("pk")
        ids = list(waiting.values_list("pk", flat=True)[:SWEEP_BATCH])
        if ids:
            sent += enqueue_now(kind.task, kind.model, ids)
    return sent


def enqueue_on_commit(task, model, ids: Iterable[int]) -> None:
    """Send `task(id)` for each id once the current transaction commits (see the module)."""
    ids = list(ids)
    transaction.on_commit(lambda: enqueue_now(task, model, ids))


def enqueue_now(task, model, ids: list[int]) -> int:
    """Send `task(id)` for each id and stamp the rows sent; the number sent. The first
    broker fault stops the sending: the rest wait for the sweep."""
    sent: list[int] = []
    # In-process (eager) execution has no broker: whatever fails there is the task's own.
    faults = () if task.app.conf.task_always_eager else (BrokerError, OSError)
    try:
        for pk in ids:
            task.apply_async((pk,), retry=False)
            sent.append(pk)
    except faults as error:
        logger.warning(
            "outbox: the broker is unreachable (%s); %d %s job(s) wait for a worker",
            error,
            len(ids) - len(sent),
            model._meta.model_name,
        )
    if sent:
        model.objects.filter(pk__in=sent).update(enqueued_at=timezone.now())
    return len(sent)
