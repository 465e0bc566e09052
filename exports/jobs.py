"""Dataset exports as background jobs: a big export (thousands of images) outlives any web
request, so the page or API call only records the job; a Celery task builds the zip and keeps
it in media storage as exports/<job id>/<slug>-<format>.zip for download: on the local disk or
in the S3 bucket (sent up in parts from the worker's scratch file, downloaded as a stream), so
any web node serves what any worker wrote."""

import json
import logging
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.http import FileResponse
from django.utils import timezone

from core.media_store import media_response, media_store
from core.outbox import enqueue_on_commit
from exports.archive import export_archive
from exports.errors import ExportInvalid
from exports.models import ExportJob
from exports.writer import export_has_pairs_check, export_tasks
from projects.events import publish
from projects.models import Project

log = logging.getLogger(__name__)

EXPORTS_DIR = "exports"


def export_job_start(
    project: Project,
    user: User,
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
    if task_slug:
        export_has_pairs_check(project, tasks, file_format, include_dropped=include_dropped)
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


def export_job_file(job: ExportJob) -> str | None:
    """The media storage name of a done job's zip, or None when there is none (any more)."""
    if job.status != ExportJob.Status.DONE or not job.file:
        return None
    return job.file if media_store().exists(job.file) else None


def export_job_response(job: ExportJob | None) -> FileResponse | None:
    """The done job's zip as a download streamed from media storage, or None."""
    name = export_job_file(job) if job is not None else None
    if name is None:
        return None
    filename = PurePosixPath(name).name
    return media_response(
        name, as_attachment=True, filename=filename, content_type="application/zip"
    )


def export_job_run(job_id: int) -> None:
    """Build the job's zip. Idempotent: a done or failed job is left alone; a running one is
    run again (its worker died: a redelivery), overwriting whatever it left."""
    claimed = ExportJob.objects.filter(
        pk=job_id, status__in=[ExportJob.Status.QUEUED, ExportJob.Status.RUNNING]
    ).update(status=ExportJob.Status.RUNNING, started_at=timezone.now(), error="")
    job = ExportJob.objects.select_related("project", "task").filter(pk=job_id).first()
    if not claimed or job is None:
        return
    folder = f"{EXPORTS_DIR}/{job.pk}"
    name = f"{folder}/{job.project.slug}-{job.file_format}.zip"
    store = media_store()
    store.delete_folder(folder)  # what a worker that died here left
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
            size = archive.stat().st_size
            # Moved into place on the local disk (atomically: a reader never sees half a
            # file); sent up in parts on S3, an object appearing whole once complete.
            store.put_file(name, archive, move=True)
        finally:
            archive.unlink(missing_ok=True)
    except (ExportInvalid, OSError, zipfile.BadZipFile) as error:
        _fail(job_id, folder, str(error) or type(error).__name__)
        return
    except Exception:
        # A bug, the store refusing, or the soft time limit: the job must not stay "running".
        _fail(job_id, folder, "the export stopped unexpectedly; see the worker's log")
        raise
    finished = ExportJob.objects.filter(pk=job_id, status=ExportJob.Status.RUNNING).update(
        status=ExportJob.Status.DONE,
        file=name,
        size_bytes=size,
        summary=summary,
        finished_at=timezone.now(),
    )
    if not finished:  # the job (or its project) was deleted meanwhile
        store.delete_folder(folder)
        return
    about = {"job": job.pk, "format": job.file_format, "pairs": summary["pairs"]}
    publish(job.project, "export.ready", about, actor=job.requested_by)


def _counts(archive: Path) -> dict[str, Any]:
    with zipfile.ZipFile(archive) as zipped:
        counts = json.loads(zipped.read("manifest.json"))["counts"]
    return {key: counts[key] for key in ("pairs", "ratings", "images")}


def _fail(job_id: int, folder: str, message: str) -> None:
    log.warning("export job %s failed: %s", job_id, message)
    media_store().delete_folder(folder)
    failed = ExportJob.objects.filter(pk=job_id).update(
        status=ExportJob.Status.FAILED, error=message, finished_at=timezone.now()
    )
    job = ExportJob.objects.select_related("project", "requested_by").filter(pk=job_id).first()
    if failed and job is not None:  # else deleted meanwhile
        about = {"job": job.pk, "format": job.file_format, "error": message[:300]}
        publish(job.project, "export.failed", about, actor=job.requested_by)
