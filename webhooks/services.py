"""Writes of the webhooks app.

Operators (the admin, `manage.py webhook_destination_add`) make destinations; leads, through
their project's webhooks page, subscribe the project to kinds of event at a destination the
operator allowed for it, and re-send a delivery. No lead-facing service takes a URL: a
subscription names a destination by id, checked against the project's allowed ones."""

from urllib.parse import urlsplit

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from core.errors import Invalid, NotFound
from core.outbox import enqueue_on_commit
from core.rate_limits import rate_limit_take
from judging.services.judges import api_key_env_check
from projects.models import Project
from webhooks.models import Delivery, DeliveryStatus, Destination, Subscription, WebhookKind
from webhooks.selectors import deliveries_due, destinations_for_project
from webhooks.sending import delivery_attempt
from webhooks.tasks import delivery_send

RETRY_BATCH = 500


def destination_url_check(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Invalid("an http:// or https:// URL", {"url": ["an http:// or https:// URL"]})
    if parts.username or parts.password or parts.fragment:
        message = "no credentials or fragment in the URL"
        raise Invalid(message, {"url": [message]})
    return url


def destination_secret_env_check(name: str) -> str:
    if not name:
        message = "the NAME of the environment variable holding the signing secret"
        raise Invalid(message, {"secret_env": [message]})
    try:
        return api_key_env_check(name)
    except Invalid as invalid:
        raise Invalid(invalid.message, {"secret_env": [invalid.message]}) from None


def destination_save(
    *,
    name: str,
    url: str | None = None,
    secret_env: str | None = None,
    all_projects: bool | None = None,
    projects: list[Project] | None = None,
) -> tuple[Destination, bool]:
    """Create or update an operator's destination (only operators call this)."""
    with transaction.atomic():
        destination = Destination.objects.select_for_update().filter(name=name).first()
        created = destination is None
        if destination is None:
            if url is None or secret_env is None:
                raise Invalid("a new destination needs a URL and a secret's variable")
            destination = Destination(name=name)
        if url is not None:
            destination.url = destination_url_check(url)
        if secret_env is not None:
            destination.secret_env = destination_secret_env_check(secret_env.strip())
        if all_projects is not None:
            destination.all_projects = all_projects
        destination.full_clean(exclude=["projects"])
        destination.save()
        if projects is not None:
            destination.projects.set(projects)
    return destination, created


def subscription_save(
    *, project: Project, destination_id: int, kinds: list[str], by: int
) -> Subscription:
    """Subscribe the project to `kinds` at a destination the operator allowed for it (the
    same subscription updated if there is one), for the user `by` (an id: counted by
    core/rate_limits.py). An id the project may not use answers like a missing one."""
    destination = destinations_for_project(project).filter(pk=destination_id).first()
    if destination is None:
        raise NotFound("no such destination for this project")
    unknown = sorted(set(kinds) - set(WebhookKind.values))
    if unknown:
        message = gettext("unknown kind of event: %(kinds)s") % {"kinds": ", ".join(unknown)}
        raise Invalid(message, {"kinds": [message]})
    if not kinds:
        message = gettext("choose at least one kind of event")
        raise Invalid(message, {"kinds": [message]})
    rate_limit_take(action="webhook.subscription", user_id=by)
    ordered = [kind for kind in WebhookKind.values if kind in kinds]
    subscription, _ = Subscription.objects.update_or_create(
        project=project, destination=destination, defaults={"kinds": ordered}
    )
    return subscription


def subscription_delete(*, project: Project, subscription_id: int, by: int) -> None:
    rate_limit_take(action="webhook.subscription", user_id=by)
    deleted, _ = Subscription.objects.filter(project=project, pk=subscription_id).delete()
    if not deleted:
        raise NotFound("no such subscription")


def deliveries_record(*, project: Project, events: list[tuple[str, dict]]) -> list[Delivery]:
    """A delivery per event (kind, data) and subscription of the project to its kind whose
    destination is still allowed for it, in the events' order, sent through the outbox once
    recorded: never in the request that published the events; in the embedded mode, one
    background job sends them all in turn (a burst of a thousand decisions is one job, not a
    thousand)."""
    allowed = destinations_for_project(project)
    subscriptions = list(
        Subscription.objects.filter(project=project, destination__in=allowed).order_by("pk")
    )
    now = timezone.now()
    wanted = [
        Delivery(
            subscription=subscription,
            kind=kind,
            payload={"event": kind, "project": project.slug, "data": data},
            next_attempt_at=now,
            created_at=now,
        )
        for kind, data in events
        for subscription in subscriptions
        if kind in subscription.kinds
    ]
    if not wanted:
        return []
    with transaction.atomic():
        deliveries = Delivery.objects.bulk_create(wanted, batch_size=RETRY_BATCH)
        enqueue_on_commit(
            delivery_send, Delivery, [delivery.pk for delivery in deliveries], background=True
        )
    return deliveries


def delivery_resend(*, project: Project, delivery_id: int, by: int) -> Delivery:
    """Send a delivery of this project again, as a new delivery with the same payload (the
    old one and its attempts stay in the log). Each re-send POSTs to the operator's
    receiver: limited per user `by` (an id) and per project (core/rate_limits.py), a
    refused one recording nothing."""
    rate_limit_take(action="webhook.resend", user_id=by, also=f"project:{project.pk}")
    with transaction.atomic():
        original = (
            Delivery.objects.filter(pk=delivery_id, subscription__project=project)
            .select_related("subscription")
            .first()
        )
        if original is None:
            raise NotFound("no such delivery")
        allowed = destinations_for_project(project)
        if not allowed.filter(pk=original.subscription.destination_id).exists():
            raise NotFound("no such delivery")
        now = timezone.now()
        copy = Delivery.objects.create(
            subscription=original.subscription,
            kind=original.kind,
            payload=original.payload,
            next_attempt_at=now,
            created_at=now,
        )
        enqueue_on_commit(delivery_send, Delivery, [copy.pk], background=True)
    return copy


def deliveries_due_attempt() -> dict[str, int]:
    """Attempt every due delivery here, one after the other, and wait for each answer:
    `manage.py webhook_deliveries_send` from cron, whose process ends when it returns (a
    background thread would die with it, the rows left pending). How many of them are now
    delivered, pending (a retry is due later) and failed (no attempt left)."""
    ids = list(
        deliveries_due().order_by("next_attempt_at").values_list("pk", flat=True)[:RETRY_BATCH]
    )
    outcomes = dict.fromkeys(DeliveryStatus.values, 0)
    for pk in ids:
        status = delivery_attempt(delivery_id=pk)
        if status is not None:  # else another process took it meanwhile
            outcomes[status] += 1
    return outcomes


def deliveries_due_send() -> int:
    """Send a message for each pending delivery whose attempt is due (the scheduled job
    `webhook-retries`, settings.ARBITER_SCHEDULED_JOBS, in either mode). A delivery
    already under way is not due (its attempt moved the time on), so none is sent twice."""
    ids = list(
        deliveries_due().order_by("next_attempt_at").values_list("pk", flat=True)[:RETRY_BATCH]
    )
    if not ids:
        return 0
    with transaction.atomic():
        enqueue_on_commit(delivery_send, Delivery, ids, background=True)
    return len(ids)
