"""The scheduled jobs and who runs them: one table, two runners.

`settings.ARBITER_SCHEDULED_JOBS` lists each job once: its name, its Celery task (by name) and
the setting that holds its period in seconds. On the full stack Celery beat runs them
(`CELERY_BEAT_SCHEDULE` is made from the same table in config/settings.py). In the embedded
mode there is no beat: the web server's process runs them itself, in one daemon thread
started by config/wsgi.py and config/asgi.py (`scheduler_start`), or a command that waits for
their work calls `jobs_due_run` between its own waits. The services behind the tasks do not
know which runner called them: every job is idempotent, so two processes running it at once
(two gunicorn workers, a server and a command) only repeat harmless work.

The thread survives what its jobs raise (logged, the job tried again after its period), and
closes its database connections after each round. It starts once per process (a fork starts
its own) and never in the tests unless one asks (`ARBITER_SCHEDULER_IN_PROCESS`, off there).
"""

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from celery import current_app
from django.conf import settings
from django.db import connections

from core.outbox import running_embedded

logger = logging.getLogger(__name__)

LONGEST_NAP = 5.0  # seconds: a changed period (a test's setting) is noticed this soon


@dataclass(frozen=True)
class ScheduledJob:
    name: str
    task: str  # the Celery task's registered name
    period_setting: str  # the setting holding its period, in seconds

    @property
    def seconds(self) -> float:
        return float(getattr(settings, self.period_setting))


def scheduled_jobs() -> list[ScheduledJob]:
    """The table (settings.ARBITER_SCHEDULED_JOBS), read at each call."""
    return [ScheduledJob(*row) for row in settings.ARBITER_SCHEDULED_JOBS]


class JobClock:
    """When each job last started in this process; a job never run is due at once."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self.now = now
        self.started: dict[str, float] = {}

    def due(self) -> list[ScheduledJob]:
        now = self.now()
        return [
            job
            for job in scheduled_jobs()
            if job.name not in self.started or now - self.started[job.name] >= job.seconds
        ]

    def seconds_to_next(self) -> float:
        now = self.now()
        waits = [
            self.started[job.name] + job.seconds - now if job.name in self.started else 0.0
            for job in scheduled_jobs()
        ]
        return max(0.0, min(waits, default=LONGEST_NAP))


def job_task(job: ScheduledJob) -> Callable[[], object]:
    """The job's Celery task, by its name. Celery finds the apps' tasks modules only when a
    worker starts: a web process imports them here, once, if a name is not known yet (the
    apps' tasks modules only, not a worker's start-up checks)."""
    if job.task not in current_app.tasks:
        current_app.autodiscover_tasks(force=True)
    return current_app.tasks[job.task]


def jobs_due_run(clock: JobClock) -> list[str]:
    """Run here, one after the other, every job whose period has passed since it last
    started on this clock; the names of those run. A job that raises is logged and waits its
    period like the others (a broken job never stops the rest, nor runs in a loop)."""
    ran = []
    for job in clock.due():
        clock.started[job.name] = clock.now()  # first: a failing job waits its period too
        try:
            job_task(job)()
        except Exception:
            logger.exception("scheduled job %s (%s) failed", job.name, job.task)
        ran.append(job.name)
    return ran


@dataclass
class Scheduler:
    thread: threading.Thread
    stopping: threading.Event
    pid: int

    def stop(self, seconds: float = 30.0) -> None:
        """Ask the thread to stop after the job it runs, and wait for it (tests)."""
        self.stopping.set()
        self.thread.join(seconds)


_lock = threading.Lock()
_running: Scheduler | None = None


def scheduler_start() -> Scheduler | None:
    """Start this process's scheduler thread in the embedded mode (once; a forked process
    starts its own); None when Celery beat runs the jobs, when it is off, or already on."""
    global _running
    if not running_embedded() or not settings.ARBITER_SCHEDULER_IN_PROCESS:
        return None
    with _lock:
        if _running is not None and _running.pid == os.getpid() and _running.thread.is_alive():
            return None
        stopping = threading.Event()
        thread = threading.Thread(
            target=_loop, args=(stopping,), daemon=True, name="arbiter-scheduler"
        )
        _running = Scheduler(thread, stopping, os.getpid())
        thread.start()
        return _running


def _loop(stopping: threading.Event) -> None:
    clock = JobClock()
    while not stopping.is_set():
        try:
            jobs_due_run(clock)
        except Exception:  # the table itself is wrong (a bad setting): said, then tried again
            logger.exception("the scheduled jobs could not run")
        finally:
            try:
                connections.close_all()  # this thread's own connections
            except Exception:  # a broken connection must not end the thread: said, then on
                logger.exception("the scheduler could not close its connections")
        try:
            nap = min(clock.seconds_to_next(), LONGEST_NAP)
        except Exception:
            nap = LONGEST_NAP
        stopping.wait(max(nap, 0.05))
