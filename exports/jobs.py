"""Dataset exports as background jobs: a big export (thousands of images) outlives any web
request, so the page or API call only records the job; a Celery task builds the zip and keeps
it under MEDIA_ROOT/exports/<job id>/ for download."""

import json
import logging
import os
import shutil
import zipfile
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation

from core.outbox import enqueue_on_commit
from exports.archive import export_archive
from exports.errors import ExportInvalid
from exports.models import ExportJob
from exports.writer import export_tasks
from projects.events import publish
from projects.models import Project

log = logging.getLogger(__name__)

EXPORTS_DIR = "exports"


def export_job_start(
    project: Project,
    user,
    *,
    file_format: str = "jsonl",
    task_slug: str | None = None,
    include_dropped: bool = False,
    with_verdicts: bool = False,
    include_archived: bool = True,
) -> ExportJob:
    """Record the job and enqueue it once the transaction commits. Bad options are refused
    here, with a message for the user, rather than as a failed job later."""
    tasks = export_tasks(project, file_format, task_slug, include_archived=include_archived)
    task = tasks[0] if task_slug else None
    from exports.tasks import export_job  # the tasks module imports this one

    with transaction.atomic():
        job = ExportJob.objects.create(
            project=project,
            requested_by=user,
            file_format=file_format,
            task=task,
            include_dropped=include_dropped,
            with_verdicts=with_verdicts,
            include_archived=include_archived,
        )
        enqueue_on_commit(export_job, ExportJob, [job.pk])
    return job


def _format_name(job: ExportJob) -> str:
    """The format's name for an event's data (JSON: notifications, webhooks): plain English
    text, not the lazy label the pages translate."""
    with translation.override("en"):
        return str(job.get_file_format_display())


def export_job_path(job: ExportJob) -> Path | None:
    """The stored zip of a done job, or None when there is none (any more)."""
    if job.status != ExportJob.Status.DONE or not job.file:
        return None
    path = Path(settings.MEDIA_ROOT) / job.file
    return path if path.is_file() else None


def export_job_run(job_id: int) -> None:
    """Build the job's zip. Idempotent: a done or failed job is left alone; a running one is
    run again (its worker died: a redelivery), overwriting whatever it left."""
    claimed = ExportJob.objects.filter(
        pk=job_id, status__in=[ExportJob.Status.QUEUED, ExportJob.Status.RUNNING]
    ).update(status=ExportJob.Status.RUNNING, started_at=timezone.now(), error="")
    job = ExportJob.objects.select_related("project", "task").filter(pk=job_id).first()
    if not claimed or job is None:
        return
    name = f"{EXPORTS_DIR}/{job.pk}/{job.project.slug}-{job.file_format}.zip"
    target = Path(settings.MEDIA_ROOT) / name
    try:
        archive = export_archive(
            job.project,
            file_format=job.file_format,
            task_slug=job.task.slug if job.task else None,
            include_dropped=job.include_dropped,
            with_verdicts=job.with_verdicts,
            include_archived=job.include_archived,
        )
        try:
            summary = _counts(archive)
            _store(archive, target)
        finally:
            archive.unlink(missing_ok=True)
    except (ExportInvalid, OSError, zipfile.BadZipFile) as error:
        _fail(job_id, target, str(error) or type(error).__name__)
        return
    except Exception:
        # A bug or the soft time limit: the job must not stay "running" for ever.
        _fail(job_id, target, "the export stopped unexpectedly; see the worker's log")
        raise
    finished = ExportJob.objects.filter(pk=job_id, status=ExportJob.Status.RUNNING).update(
        status=ExportJob.Status.DONE,
        file=name,
        size_bytes=target.stat().st_size,
        summary=summary,
        finished_at=timezone.now(),
    )
    if not finished:  # the job (or its project) was deleted meanwhile
        shutil.rmtree(target.parent, ignore_errors=True)
        return
    about = {"job": job.pk, "format": _format_name(job), "pairs": summary["pairs"]}
    publish(job.project, "export.ready", about, actor=job.requested_by)


def _counts(archive: Path) -> dict:
    with zipfile.ZipFile(archive) as zipped:
        counts = json.loads(zipped.read("manifest.json"))["counts"]
    return {key: counts[key] for key in ("pairs", "ratings", "images")}


def _store(archive: Path, target: Path) -> None:
    """Move the zip into place atomically: across file systems shutil.move copies, so it
    copies to a .part beside the target and renames; a reader never sees half a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    try:
        shutil.move(archive, part)
        os.replace(part, target)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def _fail(job_id: int, target: Path, message: str) -> None:
    log.warning("export job %s failed: %s", job_id, message)
    shutil.rmtree(target.parent, ignore_errors=True)
    failed = ExportJob.objects.filter(pk=job_id).update(
        status=ExportJob.Status.FAILED, error=message, finished_at=timezone.now()
    )
    job = ExportJob.objects.select_related("project", "requested_by").filter(pk=job_id).first()
    if failed and job is not None:  # else deleted meanwhile
        about = {"job": job.pk, "format": _format_name(job), "error": message[:300]}
        publish(job.project, "export.failed", about, actor=job.requested_by)
