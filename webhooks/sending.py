"""One attempt at a delivery: the POST, its outcome, the next retry.

An attempt claims its row under a lock (pending, due) and moves `next_attempt_at` to the next
retry's time before the POST: a second message for the same delivery (the outbox's and the
sweep's, or a broker's re-delivery) finds it not due and does nothing, so a delivery is sent
once per attempt. The POST happens outside any transaction (a slow receiver holds no lock),
only ever to the URL of the operator's `Destination`, through the outbound client
(core/outbound.py: a short timeout, no proxy from the environment, private addresses refused
unless the operator allows them) and no redirect followed (a 3xx is a failed attempt); of the
answer only the status and a short excerpt are kept. When the next attempt is due, and which
is the last, the retry policy says (core/outbound.py::webhook_delivery_retries)."""

import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import aiohttp
from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation

from core.outbound import (
    client_session,
    refused_address,
    run_blocking,
    webhook_delivery_retries,
)
from exports.models import ExportJobFormat
from webhooks.models import Delivery, DeliveryStatus
from webhooks.selectors import destinations_for_project
from webhooks.signing import signature

logger = logging.getLogger(__name__)

EXCERPT = 200  # characters of a receiver's answer written to the log
USER_AGENT = "Arbiter-Webhooks/1"


@dataclass(frozen=True)
class Outcome:
    delivered: bool
    status_code: int | None
    error: str


def _excerpt(raw: bytes) -> str:
    return raw[:EXCERPT].decode("utf-8", errors="replace")


# What a lead reads of a failed attempt: a class of failure, never the receiver's words.
ANSWERED_ERROR = "the receiver answered with an error"
REDIRECTED = "the receiver answered with a redirect (not followed)"
TIMED_OUT = "the receiver did not answer in time"
REFUSED = "the receiver refused the connection"
TLS_FAILED = "the receiver's TLS certificate or handshake failed"
PRIVATE_ADDRESS = "the receiver's address is private or local, which this server does not allow"
UNREACHABLE = "the receiver could not be reached"


def _failure_class(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return TIMED_OUT
    if refused_address(error):
        return PRIVATE_ADDRESS
    if isinstance(error, aiohttp.ClientSSLError):
        return TLS_FAILED
    if isinstance(error, aiohttp.ClientConnectorError) and isinstance(
        error.os_error, ConnectionRefusedError
    ):
        return REFUSED
    return UNREACHABLE


async def _post_once(url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    seconds = settings.ARBITER_WEBHOOK_TIMEOUT_SECONDS
    async with (
        client_session(total_seconds=seconds, limit=1) as session,
        session.post(url, data=body, headers=headers, allow_redirects=False) as answer,
    ):
        excerpt = _excerpt(await answer.content.read(EXCERPT))
        if answer.status < 300:
            return Outcome(True, answer.status, "")
        logger.warning("webhook receiver answered HTTP %s: %r", answer.status, excerpt)
        failure = REDIRECTED if answer.status < 400 else ANSWERED_ERROR
        return Outcome(False, answer.status, failure)


def _post(url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    """One POST through the outbound client (core/outbound.py), from synchronous code (a
    worker's task, the cron command, the embedded mode's in-process job)."""
    try:
        return run_blocking(_post_once(url, body, headers))
    except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as error:
        logger.warning("webhook not delivered: %s", type(error).__name__)
        return Outcome(False, None, _failure_class(error))


def _format_keys() -> dict[str, str]:
    with translation.override("en"):
        return {str(label): value for value, label in ExportJobFormat.choices}


def webhook_data(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """The event's data as machines read it: an export's `format` as its key (`parquet`),
    also for events published with its English display name."""
    if kind.startswith("export.") and isinstance(data.get("format"), str):
        name = data["format"]
        if name not in ExportJobFormat.values:
            return {**data, "format": _format_keys().get(name, name)}
    return data


def delivery_body(delivery: Delivery, sent_at: datetime) -> bytes:
    """The JSON POSTed: the event's payload with this delivery's id and the sending time."""
    kind = delivery.payload.get("event", delivery.kind)
    document = {
        "event": kind,
        "project": delivery.payload.get("project"),
        "data": webhook_data(kind, delivery.payload.get("data", {})),
        "delivery": delivery.pk,
        "sent_at": sent_at.isoformat(),
    }
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


def delivery_attempt(*, delivery_id: int, now: datetime | None = None) -> str | None:
    """Make the next attempt at a delivery if it is pending and due at `now`; its status
    after the attempt, or None when there was nothing to do."""
    now = now or timezone.now()
    retries = webhook_delivery_retries()
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_for_update(of=("self",))
            .select_related("subscription__destination", "subscription__project")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None or delivery.status != DeliveryStatus.PENDING:
            return None
        if delivery.next_attempt_at is not None and delivery.next_attempt_at > now:
            return None  # not due, or another attempt holds it
        subscription = delivery.subscription
        destination = subscription.destination
        delivery.attempts += 1
        last = retries.last(delivery.attempts)
        delay = retries.wait_seconds(delivery.attempts - 1)
        delivery.next_attempt_at = now + timedelta(seconds=delay)  # the claim, and the retry
        allowed = destinations_for_project(subscription.project).filter(pk=destination.pk).exists()
        secret = os.environ.get(destination.secret_env, "")
        refusal = ""
        if not allowed:
            refusal = "the operator no longer allows this destination for the project"
        elif not secret:
            # The lead sees last_error on the webhooks page: the variable's name is the
            # operator's (server configuration), so it goes to the log only.
            logger.warning(
                "webhook destination %s: %s is not set", destination.name, destination.secret_env
            )
            refusal = "the destination's signing secret is not set on the server"
        if refusal:  # nothing is sent: counted as a failed attempt, retried while attempts last
            outcome = Outcome(False, None, refusal)
            _outcome_save(delivery, outcome, now=now, last=last or not allowed)
            return delivery.status
        delivery.save(update_fields=["attempts", "next_attempt_at"])

    # The clock's time, not `now` (the schedule's): the receiver compares it with its own.
    sent_at = timezone.now()
    body = delivery_body(delivery, sent_at)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Arbiter-Event": delivery.kind,
        "X-Arbiter-Delivery": str(delivery.pk),
        "X-Arbiter-Signature": signature(secret, body, int(sent_at.timestamp())),
    }
    outcome = _post(destination.url, body, headers)
    with transaction.atomic():
        locked = Delivery.objects.select_for_update().filter(pk=delivery.pk).first()
        if locked is None:
            return None  # deleted with its subscription meanwhile
        locked.attempts = delivery.attempts
        locked.next_attempt_at = delivery.next_attempt_at
        _outcome_save(locked, outcome, now=timezone.now(), last=last)
    logger.info(
        "webhook delivery %s (%s to %s) attempt %d: %s %s",
        locked.pk,
        locked.kind,
        destination.name,
        locked.attempts,
        locked.status,
        outcome.status_code or outcome.error,
    )
    return locked.status


def _outcome_save(delivery: Delivery, outcome: Outcome, *, now: datetime, last: bool) -> None:
    delivery.last_status_code = outcome.status_code
    delivery.last_error = outcome.error[: Delivery._meta.get_field("last_error").max_length]
    if outcome.delivered:
        delivery.status = DeliveryStatus.DELIVERED
        delivery.delivered_at = now
        delivery.next_attempt_at = None
    elif last:
        delivery.status = DeliveryStatus.FAILED
        delivery.next_attempt_at = None
    delivery.save(
        update_fields=[
            "attempts",
            "next_attempt_at",
            "status",
            "delivered_at",
            "last_status_code",
            "last_error",
        ]
    )
