from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from content.models import Pair


class AdjudicationDecision(models.TextChoices):
    KEEP_A = "keep_a", _("Keep, A is better")
    KEEP_B = "keep_b", _("Keep, B is better")
    DROP = "drop", _("Drop")


class Adjudication(models.Model):
    """A lead's decision on a pair. The latest one overrides the consensus rule."""

    Decision = AdjudicationDecision

    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="adjudications")
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    decision = models.CharField(max_length=8, choices=Decision.choices)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(decision__in=AdjudicationDecision.values),
                name="adjudication_decision_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pair} → {self.decision}"


class AnnotatorRequest(models.Model):
    """A lead's request that one more annotator rate the pair (who, when, why).
    Each row adds one to `Pair.extra_annotators`; rows are never changed or removed."""

    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="annotator_requests")
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    note = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.pair} → one more annotator"
