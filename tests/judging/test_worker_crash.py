"""A real `celery worker` process on Redis and PostgreSQL, killed with SIGKILL in the middle of
a judge run (live, or waiting for a provider batch) and started again: the run completes with
exactly one verdict per pair × order × sample. Skipped without PostgreSQL and Redis; CI runs
it."""

import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.db.models import Count

from devtools.fake_llm import FakeLLMServer
from judging.models import JudgeRun, ProviderBatch, Verdict
from judging.services.runs import judge_run_start
from tests.factories import queued_pairs
from tests.judging.conftest import openai_judge
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.judge_clock,
]

ROOT = Path(__file__).resolve().parents[2]
VISIBILITY_SECONDS = 3


def _database_url() -> str:
    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def _start_worker(media_root: Path, log: Path, extra=(), env=None) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "MEDIA_ROOT": str(media_root),
        "SECRET_KEY": settings.SECRET_KEY,  # a worker refuses a throwaway key of its own
        "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_SECONDS),
        **(env or {}),
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo"]
    command += ["--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "INFO"]
    command += list(extra)
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _kill(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(10)


def _unacknowledged_visible(client) -> bool:
    """Whether what the killed worker held unacknowledged has outlived the visibility timeout,
    so that the next worker's restore at start hands it out again (kombu's `unacked_index`,
    scored with the worker's clock, which is this host's), and no restore's mutex is left
    held (the next worker would skip its restore, and the next scan comes ~100 s later)."""
    newest = client.zrange("unacked_index", -1, -1, withscores=True)
    if newest and time.time() <= newest[0][1] + VISIBILITY_SECONDS:
        return False
    return not client.exists("unacked_mutex")


def test_a_killed_worker_loses_nothing_and_duplicates_nothing(tmp_path, _media_in_tmp):
    from config.celery import app

    app.control.purge()  # nothing left over from an earlier session in this Redis database
    task = queued_pairs(tmp_path, count=30)
    server = FakeLLMServer(latency=0.05)
    server.start()
    log = tmp_path / "worker.log"
    worker = _start_worker(_media_in_tmp, log)
    try:
        judge = openai_judge(server, concurrency=2)
        run = judge_run_start(judge, task.project, samples=2)  # 120 trials, about 3 s
        wait_until(
            lambda: Verdict.objects.filter(judge=judge).count() >= 20,
            60,
            "the first verdicts",
            [log],
        )
        _kill(worker)
        killed_at = Verdict.objects.filter(judge=judge).count()
        run.refresh_from_db()
        assert run.status == JudgeRun.Status.RUNNING and killed_at < 120

        with redis.from_url(settings.REDIS_URL) as client:
            visible = partial(_unacknowledged_visible, client)
            wait_until(visible, 30, "the unacknowledged chunk to be visible", [log])
        worker = _start_worker(_media_in_tmp, log)
        wait_until(
            lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.FINISHED,
            90,
            "the run to finish after the restart",
            [log],
        )
    finally:
        _kill(worker)
        server.stop()

    verdicts = Verdict.objects.filter(judge=judge)
    assert verdicts.count() == 30 * 2 * 2
    assert not verdicts.filter(choice__isnull=True).exists()
    per_trial = verdicts.values("pair", "order", "sample").annotate(n=Count("id"))
    assert {row["n"] for row in per_trial} == {1}
    # The restarted worker called only for what was missing, plus the calls that were in
    # flight or answered but not yet written (at most half a second) when the first one died.
    assert len(server.requests) <= 120 + 30


def test_a_batch_run_survives_a_worker_restart_while_it_waits_for_the_provider(
    tmp_path, _media_in_tmp
):
    """The worker runs Celery beat too (-B), which polls provider batches every second here:
    killed after it has polled a batch still in progress, a new worker collects the answers
    once the provider has them, sending nothing twice."""
    from config.celery import app

    app.control.purge()
    task = queued_pairs(tmp_path, count=30)
    server = FakeLLMServer(decide=lambda request: "A", batch_seconds=3600)
    server.start()
    log = tmp_path / "worker.log"
    beat = ["-B", "-s", str(tmp_path / "beat-schedule")]
    poll = {"ARBITER_BATCH_POLL_SECONDS": "1"}
    worker = _start_worker(_media_in_tmp, log, extra=beat, env=poll)
    try:
        judge = openai_judge(server, concurrency=2)
        run = judge_run_start(judge, task.project, mode=JudgeRun.Mode.BATCH)
        wait_until(
            lambda: ProviderBatch.objects.filter(
                run=run, status=ProviderBatch.Status.IN_PROGRESS, polled_at__isnull=False
            ).exists(),
            60,
            "the batch to be submitted and polled",
            [log],
        )
        _kill(worker)
        for batch in server.batches.values():
            batch["ends_at"] = 0  # the provider answers while no worker is up
        worker = _start_worker(_media_in_tmp, log, extra=beat, env=poll)
        wait_until(
            lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.FINISHED,
            90,
            "the batch run to finish after the restart",
            [log],
        )
    finally:
        _kill(worker)
        server.stop()
    assert len(server.batch_requests) == 30 * 2  # submitted once
    assert server.served == 0  # no live call
    verdicts = Verdict.objects.filter(judge=judge)
    assert verdicts.count() == 60 and not verdicts.filter(choice__isnull=True).exists()
