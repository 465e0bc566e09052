import hashlib
from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import F, Q


def api_key_digest(key: str) -> str:
    """What the database keeps of an API key: its SHA-256, in hex. A key is 32 random bytes
    (or a migrated DRF key's 20), so a fast hash is enough: there is nothing to guess."""
    return hashlib.sha256((key or "").encode("utf-8", "surrogatepass")).hexdigest()


def usable_at(now: datetime) -> Q:
    """Tokens that still let their holder in: not revoked, not expired."""
    return Q(revoked_at__isnull=True, expires_at__gt=now)


class ApiTokenAccess(models.TextChoices):
    READ = "read", "read-only"
    WRITE = "write", "read and write"


class ApiToken(models.Model):
    """A key for scripts and pipelines (`Authorization: Token <key>`), one of several a user
    may hold. Only the SHA-256 of the key is stored, with its first characters (`prefix`) to
    recognise it in a list: the key is shown once, at creation. It always expires; it reaches
    either all of its user's projects or one (`project`), read-only or read-write, and never
    more than its user may. Rules: projects/services/api_tokens.py."""

    Access = ApiTokenAccess

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)  # the key's first characters, to recognise it
    digest = models.CharField(max_length=64, unique=True)  # sha256 hex of the key
    access = models.CharField(max_length=8, choices=Access.choices, default=Access.WRITE)
    # Deleting the project deletes its tokens: a token left without its project would
    # otherwise read as one reaching every project.
    project = models.ForeignKey(
        "projects.Project",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="api_tokens",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Made by signing in with a password (POST /api/auth/token/), as a script that asks on
    # every run does: such tokens are like sessions, the oldest making room for a new one at
    # the cap. Tokens made on the account page or by the operator are never pushed out.
    from_sign_in = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(access__in=ApiTokenAccess.values), name="api_token_access_valid"
            ),
            models.CheckConstraint(
                condition=Q(expires_at__gt=F("created_at")),
                name="api_token_expires_after_creation",
            ),
            models.CheckConstraint(condition=~Q(name=""), name="api_token_named"),
            models.CheckConstraint(
                condition=Q(digest__regex=r"^[0-9a-f]{64}$"), name="api_token_digest_is_sha256"
            ),
        ]
        indexes = [models.Index(fields=["user", "revoked_at"], name="api_token_user_open")]

    def __str__(self) -> str:
        return f"API token {self.prefix}… of user {self.user_id}"

    @property
    def read_only(self) -> bool:
        return self.access == ApiTokenAccess.READ

    def usable(self, now: datetime) -> bool:
        return self.revoked_at is None and self.expires_at > now
