"""What a user was told (the bell's list) and what each user wants to be told, and how.

A notification belongs to one recipient; nobody else reads it (every query starts from
`recipient=request.user`). Its `data` is the published event's (ids and names, never a
rating): the text and the link are composed when it is shown (notifications/messages.py), so
that a wording changes for old notifications too."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class NotificationKind(models.TextChoices):
    """The events a person can be told about (a subset of projects.events.KINDS)."""

    QUESTION_ASKED = "question.asked", _("A question about a pair")
    QUESTION_ANSWERED = "question.answered", _("An answer to my question")
    FLAG_RAISED = "flag.raised", _("A pair flagged by an annotator")
    IMPORT_FINISHED = "import.finished", _("An import finished")
    IMPORT_FAILED = "import.failed", _("An import failed")
    RUN_FINISHED = "run.finished", _("A judge run finished")
    RUN_FAILED = "run.failed", _("A judge run failed")
    EXPORT_READY = "export.ready", _("An export is ready")
    EXPORT_FAILED = "export.failed", _("An export failed")
    ANNOTATOR_PAUSED = "annotator.paused", _("An annotator paused by the gold checks")


class Notification(models.Model):
    Kind = NotificationKind

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="notifications"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The list page: one recipient's newest first.
            models.Index(fields=["recipient", "-created_at", "-id"], name="notification_recent"),
            # The bell: one recipient's unread count, on every page.
            models.Index(
                fields=["recipient"], condition=Q(read_at__isnull=True), name="notification_unread"
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=NotificationKind.values), name="notification_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.recipient_id} ({self.project_id})"


class NotificationPreference(models.Model):
    """A user's choice for one kind; without a row, the kind's default (`DEFAULTS`)."""

    Kind = NotificationKind

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preferences"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    in_app = models.BooleanField(default=True)
    email = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "kind"], name="notification_preference_unique"),
            models.CheckConstraint(
                condition=Q(kind__in=NotificationKind.values),
                name="notification_preference_kind_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} · {self.kind}: in_app={self.in_app} email={self.email}"


# (in_app, email) for a kind nobody chose for: everything in the list; by e-mail what a
# person waits for or must act on (a finished or failed job, a pause, an answer), not what
# may come by the dozen (flags, questions).
DEFAULTS: dict[str, tuple[bool, bool]] = {
    NotificationKind.QUESTION_ASKED: (True, False),
    NotificationKind.QUESTION_ANSWERED: (True, True),
    NotificationKind.FLAG_RAISED: (True, False),
    NotificationKind.IMPORT_FINISHED: (True, True),
    NotificationKind.IMPORT_FAILED: (True, True),
    NotificationKind.RUN_FINISHED: (True, True),
    NotificationKind.RUN_FAILED: (True, True),
    NotificationKind.EXPORT_READY: (True, True),
    NotificationKind.EXPORT_FAILED: (True, True),
    NotificationKind.ANNOTATOR_PAUSED: (True, True),
}

# What an annotator may be told: their own pause and the answer to their own question.
# Every other kind goes to the project's leads only (annotator blinding: nothing about other
# people's work reaches an annotator).
ANNOTATOR_KINDS = frozenset({NotificationKind.ANNOTATOR_PAUSED, NotificationKind.QUESTION_ANSWERED})
