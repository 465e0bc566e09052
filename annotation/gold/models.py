"""Gold checks: pairs whose expected side a lead set, mixed into each annotator's
queue to measure them. A gold pair has status `gold`: it takes no slots, never enters a
consensus or a figure, and any number of annotators may answer it once each."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from content.lifecycle import PairStatus
from content.models.pair import Side

# A gold pair is taken from pairs no annotator has rated: a rated pair is data already.
GOLD_FROM_STATUSES = (PairStatus.CANDIDATE, PairStatus.EASY, PairStatus.QUEUED)


class GoldAnswer(models.Model):
    """The expected side of a gold pair, and the status it had before (restored on unset)."""

    pair = models.OneToOneField(
        "content.Pair", on_delete=models.CASCADE, primary_key=True, related_name="gold"
    )
    side = models.CharField(max_length=1, choices=Side.choices)
    explanation = models.TextField(blank=True)
    # Part of the task's qualification set (answered first, with feedback) rather than mixed
    # into the queue unannounced.
    qualification = models.BooleanField(default=False)
    previous_status = models.CharField(max_length=16, choices=PairStatus.choices)
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(side__in=Side.values), name="gold_side_valid"),
            models.CheckConstraint(
                condition=Q(previous_status__in=PairStatus.values)
                & ~Q(previous_status=PairStatus.GOLD),
                name="gold_previous_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pair_id} → {self.side}"


class AnnotatorPause(models.Model):
    """An annotator's access to a task held back, after failing its gold checks or by a lead's
    hand, until a lead re-admits them. Their ratings stay; only new claims are refused."""

    task = models.ForeignKey("projects.Task", on_delete=models.CASCADE, related_name="pauses")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="task_pauses"
    )
    reason = models.TextField()
    paused_at = models.DateTimeField(auto_now_add=True)
    # The lead who paused them by hand; empty when the task's gold rule did.
    paused_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    readmitted_at = models.DateTimeField(null=True, blank=True)
    readmitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-paused_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "annotator"],
                condition=Q(readmitted_at__isnull=True),
                name="pause_one_open_per_annotator_task",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} paused in {self.task}"


class Qualification(models.Model):
    """An annotator's result on a task's qualification set, kept once decided: passing admits
    them to the real queue; failing holds them back until a lead re-admits them."""

    task = models.ForeignKey(
        "projects.Task", on_delete=models.CASCADE, related_name="qualifications"
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="qualifications"
    )
    correct = models.PositiveIntegerField()
    answered = models.PositiveIntegerField()
    passed = models.BooleanField()
    decided_at = models.DateTimeField(auto_now_add=True)
    admitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task", "annotator"], name="qualification_once"),
            models.CheckConstraint(
                condition=Q(correct__lte=models.F("answered")), name="qualification_correct_le_n"
            ),
        ]

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "failed"
        return f"{self.annotator} {verdict} {self.task} ({self.correct}/{self.answered})"
