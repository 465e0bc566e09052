"""Celery tasks of the imports app: thin, take ids, idempotent."""

from celery import shared_task

from imports.services.import_jobs import import_job_run


# Its name is the one it had in the annotation app, so that messages already sent still find it
# (as exports' export_job). Redelivered when its worker dies; import_job_run counts the starts
# and gives up after import_jobs.MAX_ATTEMPTS (a file that kills every worker would otherwise
# loop forever).
@shared_task(name="annotation.tasks.import_job", acks_late=True, reject_on_worker_lost=True)
def import_job(job_id: int) -> None:
    import_job_run(job_id)
