from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_noop


class FlagReason(models.TextChoices):
    # Marked, not translated here: the label goes into a skip reason and events as written; the
    # pages translate it where they show it.
    BROKEN = "broken", gettext_noop("Broken content (missing image, garbled text)")
    UNSAFE = "unsafe", gettext_noop("Unsafe or offensive content")
    OTHER = "other", gettext_noop("Something else")


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
