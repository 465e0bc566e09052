"""Closing a chunk and finishing its run, for live chunks (runs.py) and batch chunks
(batches.py) alike."""

from django.db.models import Count, Q
from django.utils import timezone

from judging.models import JudgeRun, JudgeRunChunk, Verdict
from projects.events import publish


def chunk_close(chunk: JudgeRunChunk) -> JudgeRun | None:
    """Mark the chunk done; the run when this finished it (for the one caller that did)."""
    JudgeRunChunk.objects.filter(pk=chunk.pk).update(done=True, finished_at=timezone.now())
    return chunk.run if _finish_if_complete(chunk.run) else None


def _finish_if_complete(run: JudgeRun) -> bool:
    """Mark the run finished when no chunk is open; True for the one caller that did."""
    if JudgeRunChunk.objects.filter(run=run, done=False).exists():
        return False
    finished = JudgeRun.objects.filter(
        pk=run.pk, status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING]
    ).update(status=JudgeRun.Status.FINISHED, finished_at=timezone.now())
    if finished:
        _finish_publish(run)
    return bool(finished)


def _finish_publish(run: JudgeRun) -> None:
    """Tell the listeners the run finished, or failed when no trial got an answer (a run has
    no failed status: its failed trials can be resumed)."""
    counts = Verdict.objects.filter(run=run).aggregate(
        trials=Count("pk"), failed=Count("pk", filter=~Q(error=""))
    )
    failed = counts["trials"] > 0 and counts["failed"] == counts["trials"]
    about = {"run": run.pk, "judge": run.judge.name, "task": run.task.slug if run.task else ""}
    about |= counts
    kind = "run.failed" if failed else "run.finished"
    publish(run.project, kind, about, actor=run.created_by)
