from django.conf import settings
from django.db import models
from django.db.models import F, Q


class AssignmentStatus(models.TextChoices):
    LEASED = "leased", "Leased"
    SUBMITTED = "submitted", "Submitted"
    SKIPPED = "skipped", "Skipped"
    EXPIRED = "expired", "Expired"


class Assignment(models.Model):
    """A pair handed to one annotator. `swapped` means response B is shown on the left."""

    Status = AssignmentStatus

    pair = models.ForeignKey("content.Pair", on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments"
    )
    swapped = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LEASED)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    skip_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # When the annotator skipped or flagged the pair: the undo's grace period starts here.
    skipped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["pair", "annotator"], name="assignment_one_per_annotator"
            ),
            models.CheckConstraint(
                condition=Q(status__in=AssignmentStatus.values),
                name="assignment_status_valid",
            ),
        ]
        indexes = [models.Index(fields=["annotator", "status"])]

    def __str__(self) -> str:
        return f"{self.pair} · {self.annotator} · {self.status}"


class Rating(models.Model):
    """A human rating, one per assignment. `overall` is canonical: above the centre of the
    1..`scale` range means response A is better, whatever side A was shown on."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="rating")
    # Copies of assignment.pair / assignment.annotator so that metrics read one table.
    pair = models.ForeignKey("content.Pair", on_delete=models.CASCADE, related_name="ratings")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="ratings"
    )
    scale = models.PositiveSmallIntegerField()  # the project's K when the rating was made
    overall = models.PositiveSmallIntegerField()
    rationale = models.TextField(blank=True)
    active_seconds = models.FloatField(default=0)
    imported = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Not a column: rating_submit sets it on the rating it returns (the annotator had rated
    # the pair before, so the submit was a change).
    resubmitted: bool

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(scale__gte=2, scale__lte=11), name="rating_scale_2_11"
            ),
            models.CheckConstraint(
                condition=Q(overall__gte=1, overall__lte=F("scale")), name="rating_overall_in_scale"
            ),
            models.CheckConstraint(
                condition=Q(active_seconds__gte=0), name="rating_active_time_non_negative"
            ),
            models.UniqueConstraint(fields=["pair", "annotator"], name="rating_one_per_annotator"),
        ]

    def __str__(self) -> str:
        return f"{self.pair} · {self.annotator}: {self.overall}/{self.scale}"

    @property
    def aspects(self) -> dict[str, int]:
        """Aspect key → canonical score (no query when `aspect_scores` is prefetched)."""
        return {score.aspect: score.score for score in self.aspect_scores.all()}


class AspectScore(models.Model):
    """A rating's score on one aspect of its task, canonical like `Rating.overall`."""

    rating = models.ForeignKey(Rating, on_delete=models.CASCADE, related_name="aspect_scores")
    aspect = models.CharField(max_length=64)
    scale = models.PositiveSmallIntegerField()
    score = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rating", "aspect"], name="aspect_score_unique"),
            models.CheckConstraint(
                condition=Q(score__gte=1, score__lte=F("scale")), name="aspect_score_in_scale"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.aspect}: {self.score}/{self.scale}"


class AnnotatorDay(models.Model):
    """How many ratings an annotator made here (imported ones are no one's work) in a project
    on one local day: the overview's throughput, read without scanning the week's ratings.
    Counted by annotation.services.ratings in the rating's transaction; a correction is not a
    new rating, and the count stays when a rated pair is later deleted (the work was done)."""

    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    day = models.DateField()
    ratings = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "annotator", "day"], name="annotator_day_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.annotator} · {self.day}: {self.ratings}"
