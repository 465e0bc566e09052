"""The audit trail: who changed what, when and from where, one row per change, never edited.

An entry is django-auditlog's log entry (AUDITLOG_LOGENTRY_MODEL = "audit.AuditEntry") with
what Arbiter needs on top: the project it belongs to (a plain id, so a deleted project's
entries stay and its leads' page is one indexed range), the kind of thing changed (the page's
filter), and the actor's name as it was (an account deleted later leaves its name). Nothing
points at an entry and an entry points at nothing that could delete or rewrite it: the actor
and the content type are kept without a database constraint and never cascade.

Immutability: `save()` refuses an entry that exists, `delete()` and the queryset's `update()`
and `delete()` refuse, the admin is read-only, and on PostgreSQL a trigger refuses UPDATE and
DELETE on the table itself (migration 0002), whatever the client."""

from typing import Any

from auditlog.models import AbstractLogEntry, LogEntryManager
from django.conf import settings
from django.db import models
from django.db.models import Model, Q
from django.utils.translation import gettext_lazy as _

from core.errors import Refused


class AuditKind(models.TextChoices):
    PROJECT = "project", _("Project settings")
    TASK = "task", _("Task settings")
    JUDGE = "judge", _("Judge")
    CONNECTION = "connection", _("Connection")
    TEMPLATE = "template", _("Prompt template")
    RUN = "run", _("Judge run")
    MEMBER = "member", _("Member")
    INVITATION = "invitation", _("Invitation")
    GOLD = "gold", _("Gold answer")
    ADJUDICATION = "adjudication", _("Adjudication")
    IMPORT = "import", _("Import")
    EXPORT = "export", _("Export")
    TOKEN = "token", _("API token")
    WEBHOOK = "webhook", _("Webhook")
    SIGN_IN = "sign_in", _("Sign-in")
    SIGN_IN_FAILED = "sign_in_failed", _("Failed sign-in")


class EntryRefused(Refused):
    """An audit entry is never changed or deleted (HTTP 409)."""


class AuditEntryQuerySet(models.QuerySet["AuditEntry"]):
    def update(self, **kwargs: Any) -> int:
        raise EntryRefused("audit entries are never changed")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise EntryRefused("audit entries are never deleted")


class AuditEntryManager(LogEntryManager.from_queryset(AuditEntryQuerySet)):  # type: ignore[misc]
    def log_create(self, instance: Model, force_log: bool = False, **kwargs: Any) -> Any:
        # auditlog's receivers call this for every registered model's change; the context
        # (project, kind, who, from where) is filled here, before auditlog's defaults.
        from audit.recording import entry_context

        kwargs = {**entry_context(instance), **kwargs}
        return super().log_create(instance, force_log=force_log, **kwargs)

    def log_m2m_changes(
        self,
        changed_queryset: Any,
        instance: Model,
        operation: str,
        field_name: str,
        **kwargs: Any,
    ) -> Any:
        from audit.recording import entry_context

        kwargs = {**entry_context(instance), **kwargs}
        return super().log_m2m_changes(changed_queryset, instance, operation, field_name, **kwargs)


class AuditEntry(AbstractLogEntry):
    Kind = AuditKind

    # No constraint, no cascade: deleting an account or a model's type rewrites no entry.
    # Annotated: auditlog has no type stubs, so the plugin cannot infer its subclasses' fields.
    content_type: "models.ForeignKey[Any, Any]" = models.ForeignKey(
        "contenttypes.ContentType",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
        verbose_name=_("content type"),
    )
    actor: "models.ForeignKey[Any, Any]" = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        blank=True,
        null=True,
        related_name="+",
        verbose_name=_("actor"),
    )
    actor_name: "models.CharField[Any, Any]" = models.CharField(
        max_length=150, blank=True
    )  # the username at the time
    project_id: "models.BigIntegerField[Any, Any]" = models.BigIntegerField(
        null=True, blank=True
    )  # none: server-wide
    kind: "models.CharField[Any, Any]" = models.CharField(max_length=16, choices=Kind.choices)

    objects = AuditEntryManager()

    class Meta(AbstractLogEntry.Meta):
        verbose_name = _("audit entry")
        verbose_name_plural = _("audit entries")
        ordering = ["-timestamp", "-id"]
        indexes = [
            # A project's trail, newest first (the leads' page and its CSV).
            models.Index(fields=["project_id", "-timestamp", "-id"], name="audit_project_recent"),
            models.Index(fields=["-timestamp", "-id"], name="audit_recent"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=AuditKind.values), name="audit_kind_valid"),
        ]

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            raise EntryRefused("audit entries are never changed")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise EntryRefused("audit entries are never deleted")
