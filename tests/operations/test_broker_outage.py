"""Work accepted while the broker is down is not lost (core/outbox.py): a judge run and an
export started with Celery's Redis unreachable are recorded and answered, wait for a worker,
and complete once Redis is back and a worker starts, with no manual step and exactly one
verdict per trial. A real `celery worker` process; Redis of the test's own."""

import pytest
from django.db.models import Count

from devtools.fake_llm import FakeLLMServer
from exports.jobs import export_job_start
from exports.models import ExportJob
from judging.models import JudgeRun, JudgeRunChunk, Verdict
from judging.services.runs import judge_run_start
from operations.models import WorkerHeartbeat
from projects.models import Membership
from tests.factories import member, queued_pairs
from tests.judging.conftest import openai_judge
from tests.judging.test_worker_crash import _kill, _start_worker
from tests.operations.conftest import OwnRedis, celery_broker
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def broker_down(settings):
    """Celery's broker is a Redis that is not running (yet); the fixture's server starts it."""
    server = OwnRedis()
    url = f"redis://127.0.0.1:{server.port}/0"
    with celery_broker(url, eager=settings.CELERY_TASK_ALWAYS_EAGER):
        yield server, url
    if server.process is not None and server.process.poll() is None:
        server.stop()


def test_a_run_and_an_export_started_during_the_outage_complete_after_it(
    tmp_path, _media_in_tmp, broker_down, client
):
    server, url = broker_down
    task = queued_pairs(tmp_path, count=12)
    lead = member("lead", task.project, role=Membership.Role.LEAD)
    fake = FakeLLMServer(latency=0.01)
    fake.start()
    log = tmp_path / "worker.log"
    worker = None
    try:
        judge = openai_judge(fake, concurrency=4)
        run = judge_run_start(judge, task.project)  # 12 pairs × 2 orders
        job = export_job_start(task.project, lead)
        # Accepted and recorded, waiting for a worker: nothing was sent.
        assert JudgeRunChunk.objects.filter(run=run, enqueued_at__isnull=True).exists()
        assert not JudgeRunChunk.objects.filter(run=run, enqueued_at__isnull=False).exists()
        assert ExportJob.objects.get(pk=job.pk).enqueued_at is None
        client.force_login(lead)
        page = client.get(f"/projects/{task.project.slug}/runs/{run.pk}/")
        assert page.status_code == 200 and "waiting for a worker" in page.content.decode()

        server.start()  # Redis is back; a worker starts and sweeps what waited
        worker = _start_worker(_media_in_tmp, log, env={"REDIS_URL": url})
        wait_until(
            lambda: (
                JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.FINISHED
                and ExportJob.objects.get(pk=job.pk).status == ExportJob.Status.DONE
            ),
            90,
            "the run and the export to complete",
            [log],
        )
    finally:
        if worker is not None:
            _kill(worker)
        fake.stop()

    verdicts = Verdict.objects.filter(judge=judge)
    assert verdicts.count() == 12 * 2
    per_trial = verdicts.values("pair", "order", "sample").annotate(n=Count("id"))
    assert {row["n"] for row in per_trial} == {1}
    assert not JudgeRunChunk.objects.filter(run=run, enqueued_at__isnull=True).exists()
    assert WorkerHeartbeat.objects.exists()  # the worker reported itself alive (/readyz)
