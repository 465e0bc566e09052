from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from content.importing.formats import FORMATS


class ImportJobStatus(models.TextChoices):
    QUEUED = "queued", _("Waiting for a worker")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Refused")


class ImportJob(models.Model):
    """A file a lead uploaded into a task, imported in the background (a big zip of images
    outlives any web request). The upload waits in media storage as imports/<id>/ (never served)
    until the job ends; the counters let the page draw progress while a worker checks it."""

    Status = ImportJobStatus

    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="import_jobs"
    )
    task_slug = models.SlugField(max_length=64)  # the import may create the task
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="import_jobs"
    )
    file_name = models.CharField(max_length=255)  # as uploaded, shown to the lead only
    file = models.CharField(max_length=255, blank=True)  # its media storage name; "" once gone
    file_format = models.CharField(max_length=16, blank=True)  # "" = from the file's kind
    as_candidates = models.BooleanField(default=True)  # labelled records are annotated anew
    queue = models.BooleanField(default=True)  # new pairs go straight to annotation
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    records_checked = models.PositiveIntegerField(default=0)
    images_checked = models.PositiveIntegerField(default=0)
    pairs_written = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    error_record = models.PositiveIntegerField(null=True, blank=True)  # 1-based, when known
    created_at = models.DateTimeField(auto_now_add=True)
    # When its message went to the broker; none: waiting for a worker (core/outbox.py).
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Times a worker took the job; bounds redelivery of a job whose worker keeps dying.
    attempts = models.PositiveSmallIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotation_importjob"  # kept from before the imports app
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=ImportJobStatus.values), name="import_job_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(file_format__in=["", *FORMATS]),
                name="import_job_format_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"import {self.pk} of {self.file_name} into {self.project_id}/{self.task_slug}"

    @property
    def finished(self) -> bool:
        return self.status in (ImportJobStatus.DONE, ImportJobStatus.FAILED)
