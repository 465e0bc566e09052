"""The listener of projects/events.py: the events of a subscribed kind become deliveries, a
burst's together (one background job sends them, however many pairs an import decided)."""

from functools import partial
from typing import Any

from projects.events import burst_gather
from projects.models import Project
from webhooks.models import WebhookKind
from webhooks.services import deliveries_record


def project_event_deliver(sender, *, project, kind: str, data: dict[str, Any], actor=None, **_):
    if kind in WebhookKind.values:
        burst_gather(("webhooks.deliver", project.pk), (kind, data), partial(_deliver, project))


def _deliver(project: Project, events: list[tuple[str, dict[str, Any]]]) -> None:
    deliveries_record(project=project, events=events)
