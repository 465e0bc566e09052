"""Celery tasks of the judging app: thin, take ids, idempotent."""

from celery import shared_task

from judging.models import JudgeRun
from judging.services.batches import batches_poll
from judging.services.ensemble import ensemble_apply_when_ready
from judging.services.runs import judge_chunk_run


@shared_task(acks_late=True, reject_on_worker_lost=True)
def judge_chunk(chunk_id: int) -> None:
    """Run one chunk (a batch-mode run's chunk is submitted to the provider); the chunk
    that finishes an ensemble run lets the ensemble decide (the run service knows nothing of
    ensembles)."""
    _after_finish(judge_chunk_run(chunk_id))


@shared_task(ignore_result=True)
def judge_batches_poll() -> None:
    """Periodic (Celery beat): collect the answers of provider batches that ended."""
    for run in batches_poll():
        _after_finish(run)


def _after_finish(run: JudgeRun | None) -> None:
    if run is not None and run.purpose == JudgeRun.Purpose.ENSEMBLE:
        ensemble_apply_when_ready(run.project, run.task)
