"""The one way background work leaves a request: a job's database row is the truth, the
broker's message only a notification.

A service records its job (an import, an export, a judge run's chunks) and calls
`enqueue_on_commit(task, model, ids)`: once the transaction commits, a message per row is sent
and the rows are stamped `enqueued_at`. With the broker unreachable nothing raises (the
request that started the job still answers 2xx): the rows stay unstamped, which the pages show
as "waiting for a worker", and `outbox_sweep` sends them once the broker is back (when a
worker starts, and every ARBITER_OUTBOX_SWEEP_SECONDS from Celery beat). A message sent twice
is harmless: every task is idempotent. Each app registers its kinds of job in its
`AppConfig.ready` (`job_kind_register`), so that the sweep knows them without importing them.
Work with no row to sweep (a dashboard refresh) goes through `dispatch_on_commit`.

This module alone knows how the process runs (`running_embedded`). On the full stack a task
goes to the broker and a worker runs it. In the embedded mode (no broker: REDIS_URL unset)
Celery runs it inside the call that sends it, once the transaction commits; a caller that
must not wait for it (a page starting a judge run) asks for `background`, and the task runs in
the background of this process instead: on a small pool of daemon threads (at most
EMBEDDED_WORKERS, started as work comes and ending when idle), so that a burst of work (the
deliveries of a large import, a refresh per page) never starts a thread apiece, and the
process exits without waiting for a long judge run.
"""

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Model, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

logger = logging.getLogger(__name__)

SWEEP_BATCH = 1000
# The embedded mode's background threads: enough that a few long judge runs leave room for
# deliveries and refreshes, few enough for a small server.
EMBEDDED_WORKERS = 8
WORKER_IDLE_SECONDS = 30.0


class CeleryTask(Protocol):
    """What the outbox uses of a Celery task (Celery ships no types)."""

    name: str
    app: Any

    def apply_async(self, args: tuple[Any, ...], **options: Any) -> Any: ...

    def __call__(self, *args: Any) -> Any: ...


def running_embedded() -> bool:
    """True in the embedded mode: no broker, no worker, no Celery beat; tasks run in this
    process, and so do the scheduled jobs (core/scheduled_jobs.py). For the few places that
    must say so (/readyz, the scheduler); services never ask."""
    return bool(settings.CELERY_TASK_ALWAYS_EAGER)


@dataclass(frozen=True)
class JobKind:
    """A kind of background job: its Celery task (called with one row's id), its model, and
    the rows still to run (the sweep sends those among them never sent)."""

    task: CeleryTask
    model: type[Model]
    open_rows: Callable[[], QuerySet[Any]]


_KINDS: list[JobKind] = []


def job_kind_register(
    task: CeleryTask, model: type[Model], open_rows: Callable[[], QuerySet[Any]]
) -> None:
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


def enqueue_on_commit(
    task: CeleryTask,
    model: type[Model],
    ids: Iterable[int],
    *,
    background: bool = False,
) -> None:
    """Send `task(id)` for each id once the current transaction commits (see the module).
    With `background` in the embedded mode, the rows are stamped sent and one background job
    runs the tasks in turn."""
    ids = list(ids)
    if background and running_embedded():

        def work() -> None:
            for pk in ids:
                task(pk)  # the task's own steps, in this thread

        transaction.on_commit(lambda: _stamp_sent(model, ids))
        transaction.on_commit(lambda: _thread_start(work))
        return
    transaction.on_commit(lambda: enqueue_now(task, model, ids))


def enqueue_now(task: CeleryTask, model: type[Model], ids: list[int]) -> int:
    """Send `task(id)` for each id and stamp the rows sent; the number sent. The first
    broker fault stops the sending: the rest wait for the sweep."""
    sent: list[int] = []
    try:
        for pk in ids:
            _send(task, (pk,))
            sent.append(pk)
    except _BrokerDown as error:
        logger.warning(
            "outbox: the broker is unreachable (%s); %d %s job(s) wait for a worker",
            error,
            len(ids) - len(sent),
            model._meta.model_name,
        )
    _stamp_sent(model, sent)
    return len(sent)


def dispatch_on_commit(
    task: CeleryTask,
    *args: object,
    background: bool = False,
    unsent: Callable[[], object] | None = None,
) -> None:
    """Run `task(*args)` once the current transaction commits, for work that has no job row
    (nothing for the sweep to resend): through the broker, or in the embedded mode inside the
    commit, or with `background` in a thread of this process. With the broker unreachable
    nothing raises: the fault is logged and `unsent()` called (to free what the caller
    claimed, so that a later request tries again)."""
    if background and running_embedded():
        transaction.on_commit(lambda: _thread_start(task, *args))
        return

    def send() -> None:
        try:
            _send(task, args)
        except _BrokerDown as error:
            logger.warning("%s%s not sent: the broker is unreachable (%s)", task.name, args, error)
            if unsent is not None:
                unsent()

    transaction.on_commit(send)


class _BrokerDown(Exception):
    """The message could not be sent."""


def _send(task: CeleryTask, args: tuple[object, ...]) -> None:
    """Send one message, without retrying: a broker fault raises _BrokerDown. A call that
    runs the task here (the embedded mode, Celery's own conf agreeing: tests switch either
    alone) has no broker: whatever fails there is the task's own and propagates."""
    if running_embedded() and task.app.conf.task_always_eager:
        task.apply_async(args)
        return
    try:
        task.apply_async(args, retry=False)
    except (BrokerError, OSError) as error:
        raise _BrokerDown(error) from error


def _stamp_sent(model: type[Model], ids: list[int]) -> None:
    if ids:
        model._default_manager.filter(pk__in=ids).update(enqueued_at=timezone.now())


def _thread_start(work: Callable[..., object], *args: object) -> None:
    """Run `work(*args)` in the background of this process (the embedded mode's worker): on
    the pool's next free thread, which closes its database connection after each job."""
    _EMBEDDED_POOL.submit(work, *args)


class _WorkerPool:
    """At most `size` daemon threads taking jobs from one queue in turn. A thread starts when
    a job comes and none is free, and ends after `idle_seconds` without work; daemon threads
    never hold up the process's exit. A failing job is logged; the thread goes on."""

    def __init__(self, size: int, idle_seconds: float):
        self.size, self.idle_seconds = size, idle_seconds
        self._jobs: queue.SimpleQueue[tuple[Callable[..., object], tuple[object, ...]]] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._threads = 0
        self._waiting = 0  # jobs submitted and not taken yet
        self._idle = 0  # threads waiting for a job

    def submit(self, work: Callable[..., object], *args: object) -> None:
        with self._lock:
            self._jobs.put((work, args))
            self._waiting += 1
            if self._waiting > self._idle and self._threads < self.size:
                self._threads += 1
                threading.Thread(target=self._work, daemon=True, name="arbiter-background").start()

    def threads(self) -> int:
        """How many threads the pool runs now."""
        with self._lock:
            return self._threads

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            try:
                work, args = self._jobs.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self._lock:
                    self._idle -= 1
                    if self._waiting == 0:  # nothing came meanwhile: this thread ends
                        self._threads -= 1
                        return
                continue
            with self._lock:
                self._idle -= 1
                self._waiting -= 1
            try:
                work(*args)
            except Exception:
                logger.exception("background job %r failed", work)
            finally:
                connection.close()


_EMBEDDED_POOL = _WorkerPool(EMBEDDED_WORKERS, WORKER_IDLE_SECONDS)
