"""Celery tasks of the exports app: thin, take ids, idempotent."""

from celery import shared_task

from exports.jobs import export_job_run


# The name it had in the annotation app, so that a job queued before an upgrade still runs.
@shared_task(name="annotation.tasks.export_job", acks_late=True, reject_on_worker_lost=True)
def export_job(job_id: int) -> None:
    export_job_run(job_id)
