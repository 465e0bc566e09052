"""Celery tasks of the judging app: thin, take ids, idempotent."""

from celery import shared_task

from judging.models import JudgeRun
from judging.services.ensemble import ensemble_apply_when_ready
from judging.services.runs import judge_chunk_run


@shared_task(acks_late=True, reject_on_worker_lost=True)
def judge_chunk(chunk_id: int) -> None:
    """Run one chunk; the chunk that finishes an ensemble run lets the ensemble decide (the
    run service knows nothing of ensembles)."""
    finished = judge_chunk_run(chunk_id)
    if finished is not None and finished.purpose == JudgeRun.Purpose.ENSEMBLE:
        ensemble_apply_when_ready(finished.project, finished.task)
