import random
from typing import TYPE_CHECKING

from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce

from content.lifecycle import OPEN_STATUSES, PairDecidedBy, PairStatus
from core.db_indexes import CoveringIndex

if TYPE_CHECKING:
    from projects.models import Project


class Side(models.TextChoices):
    A = "A", "A"
    B = "B", "B"


# The order of a sample's pairs (Pair.draw), in a query.
SAMPLE_ORDER = F("draw") / Coalesce(F("weight"), Value(1.0))

# How many ratings decide a pair, in a query (Pair.ratings_needed in Python).
RATINGS_NEEDED = F("project__annotators_per_pair") + F("extra_annotators")


def uniform_draw() -> float:
    """Uniform on (0, 1]: 0 would put a pair first whatever its weight."""
    return 1.0 - random.random()


class Pair(models.Model):
    """A prompt and two responses to compare.

    `label` is derived, in order of precedence, from the latest adjudication, the consensus of
    the ratings once there are N + `extra_annotators`, and the imported `reference_label`;
    `decided_by` says which. The consensus service keeps these columns current (they are what
    every metric reads).
    """

    Status = PairStatus
    DecidedBy = PairDecidedBy

    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE, related_name="pairs")
    task = models.ForeignKey("projects.Task", on_delete=models.PROTECT, related_name="pairs")
    external_id = models.CharField(max_length=255)
    prompt = models.ForeignKey("content.Prompt", on_delete=models.PROTECT, related_name="pairs")
    response_a = models.ForeignKey(
        "content.Response", on_delete=models.PROTECT, related_name="pairs_as_a"
    )
    response_b = models.ForeignKey(
        "content.Response", on_delete=models.PROTECT, related_name="pairs_as_b"
    )
    source = models.CharField(max_length=200, blank=True)  # source dataset
    metadata = models.JSONField(default=dict, blank=True)
    same_model = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.CANDIDATE)

    reference_label = models.CharField(max_length=3, blank=True)  # imported: A, B or tie
    label = models.CharField(max_length=1, choices=Side.choices, blank=True)
    decided_by = models.CharField(max_length=16, choices=DecidedBy.choices, blank=True)
    rating_count = models.PositiveSmallIntegerField(default=0)
    consensus_mean = models.FloatField(null=True, blank=True)
    consensus_span = models.PositiveSmallIntegerField(null=True, blank=True)
    # Annotators a lead asked for beyond the project's N (one AnnotatorRequest row each).
    extra_annotators = models.PositiveSmallIntegerField(default=0)

    # Active choice of pairs: a uniform draw fixed when the pair is made, and the
    # sampling weight frozen when the project starts rating a sample (None: weight 1). Rating
    # every pair, pairs are served in the order of draw (a simple random sample whenever the
    # experts stop); in a sample, in the order of draw / weight (SAMPLE_ORDER), so that whenever
    # the experts stop, the rated pairs are those with draw <= t * weight: each was rated with
    # probability min(1, t * weight), which the estimates weigh back.
    draw = models.FloatField(default=uniform_draw)
    weight = models.FloatField(null=True, blank=True)

    # SHA-256 of the imported record: re-importing the same record is a no-op.
    fingerprint = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "annotation_pair"  # kept from before the app split
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="pair_external_id_unique_in_project"
            ),
            models.CheckConstraint(
                condition=~Q(response_a=F("response_b")), name="pair_two_distinct_responses"
            ),
            models.CheckConstraint(
                condition=Q(status__in=PairStatus.values),
                name="pair_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(label__in=["", *Side.values]), name="pair_label_valid"
            ),
            models.CheckConstraint(
                condition=Q(reference_label__in=["", *Side.values, "tie"]),
                name="pair_reference_label_valid",
            ),
            models.CheckConstraint(
                condition=Q(decided_by__in=PairDecidedBy.values),
                name="pair_decided_by_valid",
            ),
            models.CheckConstraint(condition=Q(draw__gt=0, draw__lte=1), name="pair_draw_0_1"),
            models.CheckConstraint(condition=Q(weight__gt=0), name="pair_weight_positive"),
        ]
        indexes = [
            models.Index(fields=["project", "task", "status"]),
            # The dashboards' data version (dashboards/snapshots.py::data_version) aggregates
            # these columns over a project's pairs on every view: read from this index alone,
            # not from rows made wide by their text (PostgreSQL; SQLite has no INCLUDE).
            CoveringIndex(
                fields=["project"],
                covering=["updated_at", "rating_count"],
                name="pair_project_version",
            ),
            # The claim walks a task's open pairs, most rated first, then by draw (a random
            # order: annotation/selectors/pairs.py::in_claim_order), and stops at the first
            # with a free slot.
            models.Index(
                fields=["task", "-rating_count", "draw", "id"],
                condition=Q(status__in=OPEN_STATUSES),
                name="pair_open_claim_order",
            ),
        ]

    def __str__(self) -> str:
        return self.external_id

    def ratings_needed(self, project: "Project | None" = None) -> int:
        """How many ratings decide the pair: the project's N plus the extra annotators a lead
        asked for (pass the project when at hand, to save a query)."""
        return (project or self.project).annotators_per_pair + self.extra_annotators


class PairSearch(models.Model):
    """What the pair browser searches a pair by (content/search_text.py): the text of its prompt
    and both responses, its source and its external id, written when the pair is made (content
    never changes after an import). Kept apart from Pair: the text and, on PostgreSQL, its
    stored full-text vector (content migration 0005, with its GIN index) are most of a pair's
    bytes, and every dashboard scans the pairs' rows, never their text."""

    pair = models.OneToOneField(
        Pair, on_delete=models.CASCADE, primary_key=True, related_name="search"
    )
    text = models.TextField()

    def __str__(self) -> str:
        return f"search text of pair {self.pair_id}"
