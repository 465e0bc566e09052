"""Reads of the webhooks app. Every lead-facing read starts from a project the caller
already resolved through projects.access.project_for_lead."""

from django.db.models import Q, QuerySet
from django.utils import timezone

from projects.models import Project
from webhooks.models import Delivery, DeliveryStatus, Destination, Subscription

RECENT_DELIVERIES = 50


def destinations_for_project(project: Project) -> QuerySet[Destination]:
    """The destinations the operator allowed for this project (or for every project)."""
    return Destination.objects.filter(Q(all_projects=True) | Q(projects=project)).distinct()


def subscriptions_of(project: Project) -> QuerySet[Subscription]:
    return Subscription.objects.filter(project=project).select_related("destination")


def deliveries_recent(project: Project) -> list[Delivery]:
    """The project's newest deliveries (one query, whatever the number of subscriptions)."""
    rows = (
        Delivery.objects.filter(subscription__project=project)
        .select_related("subscription__destination")
        .order_by("-created_at", "-id")
    )
    return list(rows[:RECENT_DELIVERIES])


def delivery_of(project: Project, delivery_id: int) -> Delivery | None:
    """One of this project's deliveries; None for another project's, like a missing one."""
    return (
        Delivery.objects.filter(pk=delivery_id, subscription__project=project)
        .select_related("subscription__destination", "subscription__project")
        .first()
    )


def deliveries_due() -> QuerySet[Delivery]:
    """Pending deliveries whose (re)try time has come (the outbox sweeps those unsent)."""
    return Delivery.objects.filter(
        status=DeliveryStatus.PENDING, next_attempt_at__lte=timezone.now()
    )
