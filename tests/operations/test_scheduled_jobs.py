"""The scheduled jobs come from one table: Celery beat's schedule is made from it, and the
embedded mode's scheduler thread runs the same jobs, when due, whatever one of them raises."""

import threading

import pytest

from core import scheduled_jobs
from core.scheduled_jobs import JobClock, job_task, jobs_due_run, scheduler_start
from core.scheduled_jobs import scheduled_jobs as table
from tests.waiting import wait_until


def test_celery_beat_runs_exactly_the_jobs_of_the_table(settings):
    jobs = table()
    assert len({job.name for job in jobs}) == len(jobs)  # a name says one job
    beat = settings.CELERY_BEAT_SCHEDULE
    assert set(beat) == {job.name for job in jobs}
    for job in jobs:
        entry = beat[job.name]
        assert entry["task"] == job.task
        assert job_task(job).name == job.task  # the runner finds it: a task, not a typo
        assert entry["schedule"] == job.seconds == entry["options"]["expires"]
        assert job.seconds >= 1


class Probe:
    """Stands in for Celery's registry: a task per job name that counts its runs."""

    def __init__(self, failing=()):
        self.runs: list[str] = []
        self.failing = set(failing)
        self.tasks = {}
        for job in table():
            self.tasks[job.task] = self._task(job.name)

    def _task(self, name):
        def run():
            self.runs.append(name)
            if name in self.failing:
                raise RuntimeError(f"{name} broke")

        return run


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_a_job_runs_when_its_period_has_passed_and_not_before(monkeypatch, settings):
    probe = Probe()
    monkeypatch.setattr(scheduled_jobs, "current_app", probe)
    settings.ARBITER_BATCH_POLL_SECONDS = 10
    settings.ARBITER_OUTBOX_SWEEP_SECONDS = 30
    settings.ARBITER_FIGURES_REFRESH_SECONDS = 60
    clock = Clock()
    jobs = JobClock(now=clock)
    assert jobs_due_run(jobs) == [job.name for job in table()]  # never run: all due at once
    clock.now += 9.5
    assert jobs_due_run(jobs) == []
    assert jobs.seconds_to_next() == pytest.approx(0.5)
    clock.now += 0.5
    assert jobs_due_run(jobs) == ["judge-batches-poll"]
    clock.now += 20
    assert set(jobs_due_run(jobs)) == {"judge-batches-poll", "outbox-sweep", "webhook-retries"}


def test_a_job_that_raises_stops_no_other_and_waits_its_period(monkeypatch, settings, caplog):
    probe = Probe(failing={"outbox-sweep"})
    monkeypatch.setattr(scheduled_jobs, "current_app", probe)
    clock = Clock()
    jobs = JobClock(now=clock)
    assert jobs_due_run(jobs) == [job.name for job in table()]
    assert probe.runs == [job.name for job in table()]
    assert "scheduled job outbox-sweep" in caplog.text
    assert jobs_due_run(jobs) == []  # not run again in a loop


@pytest.fixture
def probe_thread(monkeypatch, settings):
    """A probe whose batch poll raises at its first run, and the jobs due every second."""
    probe = Probe(failing={"judge-batches-poll"})
    monkeypatch.setattr(scheduled_jobs, "current_app", probe)
    for name in (
        "ARBITER_BATCH_POLL_SECONDS",
        "ARBITER_OUTBOX_SWEEP_SECONDS",
        "ARBITER_FIGURES_REFRESH_SECONDS",
    ):
        setattr(settings, name, 1)
    return probe


def test_the_embedded_scheduler_starts_once_when_asked_and_survives_a_failing_job(
    probe_thread, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the embedded mode, with or without REDIS_URL
    settings.ARBITER_SCHEDULER_IN_PROCESS = False  # as in every test that does not ask
    assert scheduler_start() is None
    settings.ARBITER_SCHEDULER_IN_PROCESS = True
    scheduler = scheduler_start()
    assert scheduler is not None
    try:
        assert scheduler_start() is None  # once per process
        wait_until(
            lambda: probe_thread.runs.count("judge-batches-poll") >= 2,
            30,
            "the failing job to run again after its period",
        )
        assert scheduler.thread.is_alive()
    finally:
        scheduler.stop()
    assert not scheduler.thread.is_alive()
    assert not any(t.name == "arbiter-scheduler" for t in threading.enumerate())


def test_the_scheduler_survives_a_connection_that_cannot_be_closed(
    probe_thread, settings, monkeypatch
):
    """The database dropped mid-round: closing the thread's connections raises. The thread
    says so and keeps running the jobs (nothing would restart it)."""
    closing = {"calls": 0}

    def close_all():
        closing["calls"] += 1
        if closing["calls"] == 1:
            raise OSError("server closed the connection unexpectedly")

    monkeypatch.setattr(scheduled_jobs.connections, "close_all", close_all)
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.ARBITER_SCHEDULER_IN_PROCESS = True
    scheduler = scheduler_start()
    assert scheduler is not None
    try:
        wait_until(lambda: closing["calls"] >= 2, 30, "a second round after the failed close")
        assert scheduler.thread.is_alive()
    finally:
        scheduler.stop()


def test_no_scheduler_thread_on_the_full_stack_celery_beat_runs_the_jobs(probe_thread, settings):
    settings.ARBITER_SCHEDULER_IN_PROCESS = True
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker and workers
    assert scheduler_start() is None
