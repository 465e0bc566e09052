"""The listener of projects/events.py: each project event becomes notifications."""

from typing import Any

from notifications.services import notifications_record


def project_event_record(sender, *, project, kind: str, data: dict[str, Any], actor=None, **_):
    notifications_record(project=project, kind=kind, data=data, actor=actor)
