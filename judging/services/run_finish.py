"""Closing a chunk and finishing its run, for live chunks (runs.py) and batch chunks
(batches.py) alike."""

from django.utils import timezone

from judging.models import JudgeRun, JudgeRunChunk


def chunk_close(chunk: JudgeRunChunk) -> JudgeRun | None:
    """Mark the chunk done; the run when this finished it (for the one caller that did)."""
    JudgeRunChunk.objects.filter(pk=chunk.pk).update(done=True, finished_at=timezone.now())
    return chunk.run if _finish_if_complete(chunk.run) else None


def _finish_if_complete(run: JudgeRun) -> bool:
    """Mark the run finished when no chunk is open; True for the one caller that did."""
    if JudgeRunChunk.objects.filter(run=run, done=False).exists():
        return False
    return bool(
        JudgeRun.objects.filter(
            pk=run.pk, status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING]
        ).update(status=JudgeRun.Status.FINISHED, finished_at=timezone.now())
    )
