"""The listener of projects/events.py: an event of a subscribed kind becomes deliveries."""

from typing import Any

from webhooks.models import WebhookKind
from webhooks.services import deliveries_record


def project_event_deliver(sender, *, project, kind: str, data: dict[str, Any], actor=None, **_):
    if kind in WebhookKind.values:
        deliveries_record(project=project, kind=kind, data=data)
