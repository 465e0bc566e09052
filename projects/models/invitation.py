import hashlib
from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from projects.models.project import MembershipRole


def token_hash(token: str) -> str:
    """What the database keeps of a link's token: its SHA-256, in hex."""
    return hashlib.sha256((token or "").encode("utf-8", "surrogatepass")).hexdigest()


def open_at(now: datetime) -> Q:
    """Invitations that can still be used: not used, not revoked, not expired."""
    return Q(used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now)


class Invitation(models.Model):
    """A one-time link that makes its holder a member of a project (annotator or lead,
    optionally limited to some tasks). Only the SHA-256 of the link's token is stored: the raw
    token is shown to the lead once, at creation, and cannot be recovered from the database.
    Open = `open_at(now)`; the rules are in projects/services/invitations.py."""

    Role = MembershipRole

    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="invitations"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    tasks = models.ManyToManyField(
        "projects.Task", blank=True, help_text="The membership's tasks (empty: all tasks)."
    )
    token_hash = models.CharField(max_length=64, unique=True)  # sha256 hex of the raw token
    email = models.EmailField(blank=True)  # where the link was mailed, if anywhere
    note = models.CharField(max_length=200, blank=True)  # for the leads: who it is for
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="invitations_created",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="invitations_used",
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotation_invitation"  # kept from before the app split
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(role__in=MembershipRole.values), name="invitation_role_valid"
            ),
            models.CheckConstraint(
                condition=Q(expires_at__gt=F("created_at")),
                name="invitation_expires_after_creation",
            ),
            # A user is recorded only with the time the link was used (the user may be
            # deleted later; the time stays).
            models.CheckConstraint(
                condition=Q(used_by__isnull=True) | Q(used_at__isnull=False),
                name="invitation_used_by_has_used_at",
            ),
            models.CheckConstraint(
                condition=Q(used_at__isnull=True) | Q(revoked_at__isnull=True),
                name="invitation_used_or_revoked_not_both",
            ),
        ]

    def __str__(self) -> str:
        return f"invitation {self.pk} to {self.project_id} as {self.role}"
