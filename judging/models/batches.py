"""A provider batch: part of a chunk's requests sent as one job to the judge's batch API."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class BatchStatus(models.TextChoices):
    # The row is written before the provider is asked, so a worker that dies in between
    # leaves a trace: a re-delivered chunk submits such a part again.
    SUBMITTING = "submitting", _("Submitting")
    IN_PROGRESS = "in_progress", _("Waiting for the provider")
    COLLECTED = "collected", _("Answers stored")
    FAILED = "failed", _("Failed")  # refused by the provider; its trials are stored as failures


class ProviderBatch(models.Model):
    """Requests of one chunk of a batch-mode run, submitted together. `requests` maps the
    custom id of every request sent (judging/services/batches.py encodes the trial in it) to
    its response-cache key and what was changed in its images to fit the API; a result for an
    id not listed here is ignored, so a provider's reply cannot write any other verdict.
    `templates` holds the template each task's pairs were sent with, to read the answers."""

    Status = BatchStatus

    run = models.ForeignKey("judging.JudgeRun", on_delete=models.CASCADE, related_name="batches")
    chunk = models.ForeignKey(
        "judging.JudgeRunChunk", on_delete=models.CASCADE, related_name="batches"
    )
    part = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SUBMITTING)
    provider_id = models.CharField(max_length=200, blank=True)  # the provider's batch id
    requests = models.JSONField(default=dict)  # custom id -> [cache key, adapted images]
    request_count = models.PositiveIntegerField(default=0)  # len(requests), for the pages
    templates = models.JSONField(default=dict)  # task id -> PromptTemplate id
    # What the provider said last ("in_progress", "completed", "ended", ...), and why a
    # batch failed, in our words (a provider's body is never shown).
    provider_status = models.CharField(max_length=32, blank=True)
    error = models.CharField(max_length=500, blank=True)
    poll_failures = models.PositiveSmallIntegerField(default=0)  # in a row; gives up at 20
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    polled_at = models.DateTimeField(null=True, blank=True)
    collected_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "chunk", "part"]
        constraints = [
            models.UniqueConstraint(fields=["chunk", "part"], name="provider_batch_unique_part"),
            models.CheckConstraint(
                condition=Q(status__in=BatchStatus.values), name="provider_batch_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=[BatchStatus.SUBMITTING, BatchStatus.FAILED])
                | ~Q(provider_id=""),
                name="provider_batch_submitted_has_id",
            ),
        ]
        indexes = [models.Index(fields=["status"], name="provider_batch_status_idx")]

    def __str__(self) -> str:
        return f"batch {self.part} of run {self.run_id} chunk {self.chunk_id}"
