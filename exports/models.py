from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class ExportJobFormat(models.TextChoices):
    JSONL = "jsonl", _("JSONL + image files")
    PARQUET = "parquet", _("Parquet (images embedded)")
    MMRB2 = "mmrb2", _("MMRB2 benchmark files + image files")
    PREFERENCE = "preference", _("Preference pairs for reward models and DPO (Parquet)")


class ExportJobStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class ExportJob(models.Model):
    """A dataset export made in the background (a big one outlives any web request); the zip
    is kept in media storage for the lead to download."""

    Format = ExportJobFormat
    Status = ExportJobStatus

    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="export_jobs"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="export_jobs"
    )
    file_format = models.CharField(max_length=16, choices=Format.choices, default=Format.JSONL)
    task = models.ForeignKey("projects.Task", null=True, blank=True, on_delete=models.CASCADE)
    include_dropped = models.BooleanField(default=False)
    # Archived tasks are exported unless left out (a task named explicitly always is).
    include_archived = models.BooleanField(default=True)
    with_verdicts = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # The archive's media storage name (exports/<job id>/<slug>-<format>.zip).
    file = models.CharField(max_length=255, blank=True)
    size_bytes = models.BigIntegerField(null=True, blank=True)
    summary = models.JSONField(default=dict, blank=True)  # pairs, ratings, images
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When its message went to the broker; none: waiting for a worker (core/outbox.py).
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotation_exportjob"  # made by the annotation app before exports moved out
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(file_format__in=ExportJobFormat.values),
                name="export_job_format_valid",
            ),
            models.CheckConstraint(
                condition=Q(status__in=ExportJobStatus.values),
                name="export_job_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"export {self.pk} of {self.project}"

    @property
    def active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)
