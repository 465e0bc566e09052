"""Reads of the notifications app. Every query starts from the user: a user reads only their
own notifications, and an id that is not theirs is missing (404), never forbidden."""

from django.db.models import QuerySet

from notifications.models import (
    ANNOTATOR_KINDS,
    DEFAULTS,
    Notification,
    NotificationKind,
    NotificationPreference,
)
from projects.access import is_lead_anywhere

LIST_SHOWN = 100  # the list page shows the newest ones


def notifications_of(user) -> QuerySet[Notification]:
    """The user's own notifications, newest first (the scope every lookup by id starts from)."""
    return Notification.objects.filter(recipient=user)


def notifications_recent(user) -> list[Notification]:
    """The list page's rows: one query, with each row's project."""
    return list(notifications_of(user).select_related("project")[:LIST_SHOWN])


def unread_count(user) -> int:
    """The bell's figure: one COUNT over the partial index of unread rows."""
    return notifications_of(user).filter(read_at__isnull=True).count()


def kinds_for(user) -> list[str]:
    """The kinds a user can receive, for the preferences page: all of them for a lead (of any
    project), an annotator's own kinds otherwise."""
    if is_lead_anywhere(user):
        return list(NotificationKind.values)
    return [kind for kind in NotificationKind.values if kind in ANNOTATOR_KINDS]


def preferences_of(user) -> dict[str, tuple[bool, bool]]:
    """(in_app, email) for every kind: the user's choice, else the kind's default."""
    chosen = {
        kind: (in_app, email)
        for kind, in_app, email in NotificationPreference.objects.filter(user=user).values_list(
            "kind", "in_app", "email"
        )
    }
    return {kind: chosen.get(kind, DEFAULTS[kind]) for kind in NotificationKind.values}
