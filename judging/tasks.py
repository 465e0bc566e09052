"""Celery tasks of the judging app: thin, take ids, idempotent."""

from celery import shared_task

from judging.services.runs import judge_chunk_run


@shared_task(acks_late=True, reject_on_worker_lost=True)
def judge_chunk(chunk_id: int) -> None:
    judge_chunk_run(chunk_id)
