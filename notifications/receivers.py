"""The listener of projects/events.py: each project event becomes notifications."""

from typing import Any

from notifications.services import notifications_record, notifications_withdraw_flag


def project_event_record(sender, *, project, kind: str, data: dict[str, Any], actor=None, **_):
    if kind == "flag.withdrawn":  # not a notification of its own: the flag's goes away
        notifications_withdraw_flag(project=project, data=data)
        return
    notifications_record(project=project, kind=kind, data=data, actor=actor)
