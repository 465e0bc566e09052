"""The listener of projects/events.py: each project event becomes notifications."""

from typing import Any

from notifications.services import notifications_record, notifications_withdraw_flag
from projects.models import Project


def project_event_record(
    sender: object,
    *,
    project: Project,
    kind: str,
    data: dict[str, Any],
    actor: Any = None,
    **_: object,
) -> None:
    if kind == "flag.withdrawn":  # not a notification of its own: the flag's goes away
        notifications_withdraw_flag(project=project, data=data)
        return
    notifications_record(project=project, kind=kind, data=data, actor=actor)
