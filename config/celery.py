import os

from celery import Celery
from celery.signals import worker_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

SWEEP_BATCH = 1000


def _waiting():
    """(task, model, rows whose message was never sent) of every kind of background job."""
    from annotation.models import ImportJob
    from annotation.tasks import import_job
    from exports.models import ExportJob
    from exports.tasks import export_job
    from judging.models import JudgeRun, JudgeRunChunk
    from judging.tasks import judge_chunk

    open_runs = [JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING]
    return [
        (import_job, ImportJob, ImportJob.objects.filter(status=ImportJob.Status.QUEUED)),
        (export_job, ExportJob, ExportJob.objects.filter(status=ExportJob.Status.QUEUED)),
        (
            judge_chunk,
            JudgeRunChunk,
            JudgeRunChunk.objects.filter(done=False, run__status__in=open_runs),
        ),
    ]


@app.task(name="config.outbox_sweep", ignore_result=True)
def outbox_sweep() -> int:
    """Send the jobs accepted while the broker was unreachable (config/outbox.py); the
    number sent."""
    from config.outbox import enqueue_now

    sent = 0
    for task, model, rows in _waiting():
        waiting = rows.filter(enqueued_at__isnull=True).order_by("pk")
        ids = list(waiting.values_list("pk", flat=True)[:SWEEP_BATCH])
        if ids:
            sent += enqueue_now(task, model, ids)
    return sent


@worker_init.connect
def _before_a_worker_starts(sender, **kwargs):
    from config.shared_key import shared_key_required

    shared_key_required("A Celery worker")  # its exports must name annotators as the web does


@worker_ready.connect
def _when_a_worker_starts(sender, **kwargs):
    from operations.heartbeat import heartbeat_start

    heartbeat_start(sender.hostname)
    outbox_sweep()
