"""Celery tasks of the judging app: thin, take ids, idempotent."""

from celery import shared_task

from judging.services.batches import batches_poll
from judging.services.ensemble import ensemble_run_finished
from judging.services.runs import judge_chunk_run


@shared_task(acks_late=True, reject_on_worker_lost=True)
def judge_chunk(chunk_id: int) -> None:
    """Run one chunk (a batch-mode run's chunk is submitted to the provider)."""
    ensemble_run_finished(judge_chunk_run(chunk_id))


@shared_task(ignore_result=True)
def judge_batches_poll() -> None:
    """Scheduled (settings.ARBITER_SCHEDULED_JOBS): collect the answers of provider batches
    that ended."""
    for run in batches_poll():
        ensemble_run_finished(run)
