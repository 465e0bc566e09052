"""Webhooks: where a project's events are POSTed for pipelines.

The trust model holds (SECURITY.md, "No user-supplied URL is fetched"): a `Destination` (its
URL and the environment variable holding its signing secret) is made by the operator alone,
in the admin or with `manage.py webhook_destination_add`, and allowed for some projects or
all, like a judging connection. A lead only subscribes their project to kinds of event,
choosing a destination by name among those allowed for it; nothing a lead types ever becomes
a URL. Each event of a subscribed kind becomes a `Delivery` (its payload, its attempts and
their outcome), sent through the outbox (core/outbox.py), never inside a request."""

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class WebhookKind(models.TextChoices):
    """The events a pipeline can subscribe to (a subset of projects.events.KINDS)."""

    PAIR_DECIDED = "pair.decided", _("A pair was decided")
    TASK_COMPLETE = "task.complete", _("Every pair of a task is decided")
    IMPORT_FINISHED = "import.finished", _("An import finished")
    IMPORT_FAILED = "import.failed", _("An import failed")
    RUN_FINISHED = "run.finished", _("A judge run finished")
    RUN_FAILED = "run.failed", _("A judge run failed")
    EXPORT_READY = "export.ready", _("An export is ready")
    EXPORT_FAILED = "export.failed", _("An export failed")


class Destination(models.Model):
    """An operator's receiving URL. Leads see its name only, never its URL or variable."""

    name = models.SlugField(max_length=64, unique=True)
    url = models.URLField(max_length=500)
    # The NAME of the server's environment variable holding the HMAC secret (never the secret).
    secret_env = models.CharField(max_length=100)
    all_projects = models.BooleanField(default=False)
    projects = models.ManyToManyField(
        "projects.Project", blank=True, related_name="webhook_destinations"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(secret_env=""), name="webhook_destination_secret_named"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Subscription(models.Model):
    """A project's choice of kinds of event sent to one destination the operator allowed."""

    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="webhook_subscriptions"
    )
    destination = models.ForeignKey(
        Destination, on_delete=models.CASCADE, related_name="subscriptions"
    )
    kinds = models.JSONField(default=list)  # WebhookKind values, checked by the service
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["destination__name"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "destination"], name="webhook_subscription_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project_id} → {self.destination_id}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", _("Waiting to be sent")
    DELIVERED = "delivered", _("Delivered")
    FAILED = "failed", _("Failed (no attempt left)")


class Delivery(models.Model):
    """One event for one subscription: its payload and the outcome of its attempts. Pending
    with `next_attempt_at` in the future: a retry waits (or an attempt is under way)."""

    Status = DeliveryStatus

    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    kind = models.CharField(max_length=32, choices=WebhookKind.choices)
    payload = models.JSONField(default=dict)  # {"event", "project", "data"}
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)  # the outbox's stamp
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The sweep: pending deliveries whose attempt is due.
            models.Index(
                fields=["next_attempt_at"],
                condition=Q(status="pending"),
                name="webhook_delivery_due",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=DeliveryStatus.values), name="webhook_delivery_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=WebhookKind.values), name="webhook_delivery_kind_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status="delivered") | Q(delivered_at__isnull=False),
                name="webhook_delivery_delivered_at",
            ),
            models.CheckConstraint(
                condition=~Q(status="pending") | Q(next_attempt_at__isnull=False),
                name="webhook_delivery_pending_due",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"
