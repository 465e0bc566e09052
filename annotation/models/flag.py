from django.conf import settings
from django.db import models
from django.db.models import Q


class FlagReason(models.TextChoices):
    BROKEN = "broken", "Broken content (missing image, garbled text)"
    UNSAFE = "unsafe", "Unsafe or offensive content"
    OTHER = "other", "Something else"


class Flag(models.Model):
    """An annotator's report that a pair cannot be rated as it is (broken or unsafe content).
    It goes to the project's leads; the annotator's assignment is skipped."""

    Reason = FlagReason

    pair = models.ForeignKey("content.Pair", on_delete=models.CASCADE, related_name="flags")
    assignment = models.OneToOneField(
        "annotation.Assignment", on_delete=models.CASCADE, related_name="flag"
    )
    reported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="flags"
    )
    reason = models.CharField(max_length=16, choices=Reason.choices)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(reason__in=FlagReason.values), name="flag_reason_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pair} flagged {self.reason}"
