"""Celery tasks of the annotation app: thin, take ids, idempotent."""

from celery import shared_task

from annotation.services.exports import export_job_run


@shared_task(acks_late=True, reject_on_worker_lost=True)
def export_job(job_id: int) -> None:
    export_job_run(job_id)
