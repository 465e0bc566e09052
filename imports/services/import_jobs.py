"""Imports as background jobs: the page streams the upload to media storage and records the job; a
Celery task checks and writes it (all or nothing, as `import_pairs`) while the job's counters
tell the page how far it got. The database row is the truth; the queue only a notification."""

import logging
import time
from pathlib import PurePosixPath

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from content.importing.errors import ImportFailed
from content.importing.formats import FORMATS
from content.importing.images import private_temp_folder
from core.errors import Invalid
from core.media_store import media_store
from core.outbox import enqueue_on_commit
from imports.models import ImportJob
from imports.services.pair_upload import pairs_import_stored, upload_store
from projects.events import publish
from projects.models import Project

log = logging.getLogger(__name__)

IMPORTS_DIR = "imports"
PROGRESS_EVERY_SECONDS = 0.5  # how often the counters are written while a file is read
# Workers that may take a job: the task is redelivered when its worker dies (acks_late), and
# a file that kills every worker (out of memory) must not be retried forever.
MAX_ATTEMPTS = 3


def import_job_start(
    project: Project,
    user,
    uploaded,
    *,
    task_slug: str,
    file_format: str = "",
    as_candidates: bool = True,
    queue: bool = True,
) -> ImportJob:
    """Store the upload in media storage as imports/<job>/upload.<kind> (streamed to a
    scratch file, its size checked while it streams, then moved or sent up in parts: any
    worker can read it) and enqueue its import once the
    transaction commits. A refused upload (size, kind) raises ImportFailed and leaves nothing."""
    if file_format and file_format not in FORMATS:
        raise Invalid(
            f"unknown format {file_format!r}", fields={"file_format": [gettext("Choose a format.")]}
        )
    from imports.tasks import import_job  # the tasks module imports this one

    name = (getattr(uploaded, "name", "") or "upload")[-255:]
    with transaction.atomic():
        job = ImportJob.objects.create(
            project=project,
            task_slug=task_slug,
            requested_by=user,
            file_name=name,
            file_format=file_format,
            as_candidates=as_candidates,
            queue=queue,
        )
        store = media_store()
        with private_temp_folder("arbiter-upload-") as scratch:
            stored = upload_store(uploaded, scratch)
            job.file = f"{IMPORTS_DIR}/{job.pk}/{stored.name}"
            try:
                store.put_file(job.file, stored, move=True)
            except BaseException:
                store.delete_folder(f"{IMPORTS_DIR}/{job.pk}")
                raise
        job.save(update_fields=["file"])
        enqueue_on_commit(import_job, ImportJob, [job.pk])
    return job


def import_job_run(job_id: int) -> None:
    """Import the job's file. Idempotent: a finished job is left alone; a running one is run
    again (its worker died: a redelivery), and the import itself skips what was written, up
    to MAX_ATTEMPTS starts in all; the next one marks it failed instead. The attempt is
    counted in the claiming UPDATE, so concurrent deliveries cannot both take the last one."""
    unfinished = [ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]
    claimed = ImportJob.objects.filter(
        pk=job_id, status__in=unfinished, attempts__lt=MAX_ATTEMPTS
    ).update(
        status=ImportJob.Status.RUNNING,
        started_at=timezone.now(),
        error="",
        attempts=F("attempts") + 1,
    )
    job = ImportJob.objects.select_related("project").filter(pk=job_id).first()
    if job is None:
        return
    if not claimed:
        if job.status in unfinished:  # every attempt so far ended with its worker
            log.error("import job %s stopped after %s attempts", job.pk, MAX_ATTEMPTS)
            _finish(
                job,
                status=ImportJob.Status.FAILED,
                error=f"stopped after {MAX_ATTEMPTS} attempts: the worker died while importing",
            )
        return
    store = media_store()
    # The counters as last reported, however recently written: a refused file's row shows
    # the records that passed before the refused one, not the last half-second's count.
    counted = [0, 0]
    write = _progress_writer(job.pk)

    def progress(records: int, images: int) -> None:
        counted[:] = [records, images]
        write(records, images)

    try:
        if not job.file or not store.exists(job.file):
            raise ImportFailed("the uploaded file is gone; upload it again")
        # On S3 a copy in a scratch folder of this worker, removed after the import.
        scratch = getattr(settings, "ARBITER_IMPORT_TEMP_DIR", None)
        with store.local_copy(job.file, scratch=scratch) as stored:
            summary = pairs_import_stored(
                stored,
                project_slug=job.project.slug,
                task_slug=job.task_slug,
                file_format=job.file_format or None,
                as_candidates=job.as_candidates,
                queue=job.queue,
                progress=progress,
            )
    except ImportFailed as exc:
        _finish(
            job,
            status=ImportJob.Status.FAILED,
            error=exc.detail,
            error_record=exc.record,
            records_checked=counted[0],
            images_checked=counted[1],
        )
    except Exception:
        log.exception("import job %s failed", job.pk)
        _finish(job, status=ImportJob.Status.FAILED, error="the import failed on the server")
    else:
        _finish(
            job,
            status=ImportJob.Status.DONE,
            summary=summary.as_dict(),
            records_checked=summary.records,
            images_checked=summary.images_new + summary.images_reused,
            pairs_written=summary.pairs,
        )


def _progress_writer(job_id: int):
    """A pairs_import progress callback writing the counters at most every half second."""
    last = [0.0]

    def write(records: int, images: int) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_EVERY_SECONDS:
            return
        last[0] = now
        ImportJob.objects.filter(pk=job_id).update(records_checked=records, images_checked=images)

    return write


def _finish(job: ImportJob, **fields) -> None:
    """Record the outcome and remove the stored upload (a refused file is uploaded again)."""
    if job.file:
        media_store().delete_folder(str(PurePosixPath(job.file).parent))
    ImportJob.objects.filter(pk=job.pk).update(
        file="", finished_at=timezone.now(), **{"error": "", "error_record": None, **fields}
    )
    done = fields["status"] == ImportJob.Status.DONE
    about = {"job": job.pk, "task": job.task_slug, "file": job.file_name}
    if done:
        about["pairs"] = fields.get("pairs_written", 0)
    else:
        about["error"] = str(fields.get("error", ""))[:300]
    kind = "import.finished" if done else "import.failed"
    publish(job.project, kind, about, actor=job.requested_by)
