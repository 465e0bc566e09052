"""Reads of the notifications app. Every query starts from the user: a user reads only their
own notifications, and an id that is not theirs is missing (404), never forbidden. A
notification about a project is theirs only while they keep the role that got it there:
removed from the project (or no longer its lead), they no longer read, count or open it."""

from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet

from content.models import Pair
from content.rendering import content_summary
from notifications.models import (
    ANNOTATOR_KINDS,
    DEFAULTS,
    Notification,
    NotificationKind,
    NotificationPreference,
)
from projects.access import is_lead_anywhere
from projects.models import Membership

LIST_SHOWN = 100  # the list page shows the newest ones


# The kinds an annotator is told about their own work, and the data's key naming them.
_OWN = {NotificationKind.QUESTION_ANSWERED: "asker", NotificationKind.ANNOTATOR_PAUSED: "annotator"}
# The kinds whose data names a pair (by id, which no annotator ever sees).
PAIR_KINDS = frozenset(
    {
        NotificationKind.QUESTION_ASKED,
        NotificationKind.QUESTION_ANSWERED,
        NotificationKind.FLAG_RAISED,
    }
)
PROMPT_WORDS = 60  # characters of the prompt that name a pair


def notifications_of(user: User) -> QuerySet[Notification]:
    """The user's own notifications, newest first (the scope every lookup by id starts from):
    of the projects they lead, any; of the projects they annotate in, those about
    themselves (the answer to their question, their pause). One query, subqueries inline."""
    memberships = Membership.objects.filter(user=user)
    led = memberships.filter(role=Membership.Role.LEAD).values("project")
    own = Q()
    for kind, key in _OWN.items():
        own |= Q(kind=kind, **{f"data__{key}": user.pk})
    return Notification.objects.filter(recipient=user).filter(
        Q(project__in=led) | (own & Q(project__in=memberships.values("project")))
    )


def pair_names(notifications: list[Notification]) -> dict[int, dict[str, Any]]:
    """{notification id: what names its pair for a person}: the task's name and the first
    words of the prompt (`task_name`, `prompt`), never the pair's internal id. One query,
    none when no notification names a pair; a pair gone (or of another project) names
    nothing."""
    wanted: dict[int, tuple[int, int]] = {}
    for notification in notifications:
        pair_id = notification.data.get("pair") if notification.kind in PAIR_KINDS else None
        if isinstance(pair_id, int):
            wanted[notification.pk] = (pair_id, notification.project_id)
    if not wanted:
        return {}
    pairs = {
        pair.pk: pair
        for pair in Pair.objects.filter(pk__in={pair_id for pair_id, _ in wanted.values()})
        .select_related("task", "prompt")
        .only("project_id", "task__name", "prompt__content")
    }
    names: dict[int, dict[str, Any]] = {}
    for notification_id, (pair_id, project_id) in wanted.items():
        pair = pairs.get(pair_id)
        if pair is None or pair.project_id != project_id:
            continue
        name: dict[str, Any] = {"task_name": pair.task.name}
        if any(kind == "text" and str(value).strip() for kind, value in pair.prompt.content or []):
            name["prompt"] = content_summary(pair.prompt.content, limit=PROMPT_WORDS)
        names[notification_id] = name
    return names


def notifications_recent(user: User) -> list[Notification]:
    """The list page's rows: one query, with each row's project."""
    return list(notifications_of(user).select_related("project")[:LIST_SHOWN])


def unread_count(user: User) -> int:
    """The bell's figure: one COUNT over the partial index of unread rows."""
    return notifications_of(user).filter(read_at__isnull=True).count()


def kinds_for(user: User) -> list[str]:
    """The kinds a user can receive, for the preferences page: all of them for a lead (of any
    project), an annotator's own kinds otherwise."""
    if is_lead_anywhere(user):
        return list(NotificationKind.values)
    return [kind for kind in NotificationKind.values if kind in ANNOTATOR_KINDS]


def preferences_of(user: User) -> dict[str, tuple[bool, bool]]:
    """(in_app, email) for every kind: the user's choice, else the kind's default."""
    chosen = {
        kind: (in_app, email)
        for kind, in_app, email in NotificationPreference.objects.filter(user=user).values_list(
            "kind", "in_app", "email"
        )
    }
    return {kind: chosen.get(kind, DEFAULTS[kind]) for kind in NotificationKind.values}
