"""Who is told what, and telling them: a row for the bell's list, an e-mail when the server
sends mail. Called after the event's transaction committed (projects/events.py), from the
request or the worker that finished the job.

Recipients (the access policy, docs/architecture.md §8): the project's leads (active accounts
with a lead membership) for every kind but `question.answered`, which goes to the annotator
who asked, and the paused annotator, who is told about their own pause. Nothing else ever
reaches an annotator, and what they receive names no one's rating. Whoever caused a flag or a
question is not told about it; whoever started a job is (they wait for it). The operator is
told only where they are a member.

E-mail leaves through core/outbox.py (`dispatch_on_commit`, in the background): never inside
the request, and a mail server that fails loses the mail, not the notification."""

import logging
import smtplib
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.mail import BadHeaderError, send_mail
from django.db import transaction
from django.utils import timezone

from core.mail import mail_configured
from core.outbox import CeleryTask, dispatch_on_commit
from core.rate_limits import rate_limit_take
from notifications.messages import notification_link, notification_text
from notifications.models import (
    ANNOTATOR_KINDS,
    DEFAULTS,
    Notification,
    NotificationKind,
    NotificationPreference,
)
from notifications.selectors import notifications_of, pair_names
from projects.models import Membership, Project

logger = logging.getLogger(__name__)

# Kinds whose actor is not told about their own act (their own flag, their own question).
_NOT_TO_ACTOR = {NotificationKind.FLAG_RAISED, NotificationKind.QUESTION_ASKED}


def notifications_record(
    *, project: Project, kind: str, data: dict[str, Any], actor: Any = None
) -> list[Notification]:
    """Record `kind` for each of its recipients who want it in the list, and queue an e-mail
    for those who want it by mail (with an address, on a server that sends mail)."""
    if kind not in NotificationKind.values:
        return []  # an event nobody is told about (pair.decided, task.complete)
    recipients = _recipients(project, kind, data, actor)
    if not recipients:
        return []
    chosen = {
        user_id: (in_app, email)
        for user_id, in_app, email in NotificationPreference.objects.filter(
            user__in=list(recipients), kind=kind
        ).values_list("user", "in_app", "email")
    }
    mails = mail_configured()
    rows = []
    with transaction.atomic():
        for user_id, (user, about_recipient) in recipients.items():
            in_app, email = chosen.get(user_id, DEFAULTS[kind])
            if in_app:
                rows.append(Notification(recipient=user, project=project, kind=kind, data=data))
            if email and mails and user.email:
                dispatch_on_commit(
                    _mail_task(), user_id, project.pk, kind, data, about_recipient, background=True
                )
        Notification.objects.bulk_create(rows)
    return rows


def notifications_withdraw_flag(*, project: Project, data: dict[str, Any]) -> int:
    """The annotator took their flag back (annotation/services/skip_undo.py): its notification
    leaves the leads' lists, read or not, so that none points at a flag that is gone. An
    e-mail already sent stays sent. How many were removed."""
    flag_id = data.get("flag")
    if flag_id is None:
        return 0
    deleted, _ = Notification.objects.filter(
        project=project, kind=NotificationKind.FLAG_RAISED, data__flag=flag_id
    ).delete()
    return deleted


def _recipients(
    project: Project, kind: str, data: dict[str, Any], actor: Any
) -> dict[int, tuple[User, bool]]:
    """{user id: (user, about_recipient)}: who is told, and whether it is about themselves."""
    users = get_user_model().objects.filter(is_active=True)
    found: dict[int, tuple[User, bool]] = {}
    if kind != NotificationKind.QUESTION_ANSWERED:
        # One filter() for both conditions: the same membership is the project's and a lead's.
        leads = users.filter(memberships__project=project, memberships__role=Membership.Role.LEAD)
        for user in leads:
            found[user.pk] = (user, False)
    actor_id = getattr(actor, "pk", None)
    if kind in _NOT_TO_ACTOR and actor_id is not None:
        found.pop(actor_id, None)
    own = _own_user_id(kind, data)
    if own is not None and kind in ANNOTATOR_KINDS:
        member = users.filter(pk=own, memberships__project=project).first()
        asked_self = kind == NotificationKind.QUESTION_ANSWERED and own == actor_id
        if member is not None and not asked_self:
            found[member.pk] = (member, True)
    return found


# The data's key naming the user an event is about (annotation/gold/services.py and
# annotation/services/pair_threads.py publish these).
_OWN_KEY: dict[str, str] = {
    NotificationKind.ANNOTATOR_PAUSED: "annotator",
    NotificationKind.QUESTION_ANSWERED: "asker",
}


def _own_user_id(kind: str, data: dict[str, Any]) -> int | None:
    try:
        return int(data[_OWN_KEY[kind]])
    except (KeyError, TypeError, ValueError):
        return None


def _mail_task() -> CeleryTask:
    from notifications.tasks import notification_mail  # the tasks module imports this one

    task: CeleryTask = notification_mail
    return task


def notification_mail_send(
    *, user_id: int, project_id: int, kind: str, data: dict[str, Any], about_recipient: bool
) -> bool:
    """Mail one notification as text, with a link to its page; False when it was not sent
    (the account or its address is gone, the mail server refused)."""
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    project = Project.objects.filter(pk=project_id).first()
    if user is None or project is None or not user.email:
        return False
    name = " ".join(project.name.split())  # no line break in a header
    about = Notification(project=project, kind=kind, data=data)
    data = {**data, **pair_names([about]).get(about.pk, {})}  # the pair as the reader saw it
    text = notification_text(kind, data, about_recipient=about_recipient)
    link = settings.ARBITER_BASE_URL.rstrip("/") + notification_link(
        kind, data, project.slug, about_recipient=about_recipient
    )
    body = (
        f"{text}\n\nProject: {name}\nOpen: {link}\n\n"
        f"You receive this because of your notification settings; change them at "
        f"{settings.ARBITER_BASE_URL.rstrip('/')}/notifications/settings/\n"
    )
    subject = " ".join(f"[{name}] {text}".split())[:200]
    try:
        return send_mail(subject, body, None, [user.email]) == 1
    except (OSError, smtplib.SMTPException, BadHeaderError):
        logger.warning("notification mail (%s) to user %s not sent", kind, user_id, exc_info=True)
        return False


def notification_mark_read(*, notification: Notification) -> None:
    """Mark one of the user's notifications read (already read: unchanged)."""
    rate_limit_take(action="notification.post", user_id=notification.recipient_id)
    Notification.objects.filter(pk=notification.pk, read_at__isnull=True).update(
        read_at=timezone.now()
    )


def notifications_mark_all_read(*, user: User) -> int:
    """Mark every unread notification the user may read (the bell's) read; how many."""
    rate_limit_take(action="notification.post", user_id=user.pk)
    return notifications_of(user).filter(read_at__isnull=True).update(read_at=timezone.now())


def preferences_save(*, user: User, choices: dict[str, tuple[bool, bool]]) -> None:
    """Store the user's (in_app, email) for each kind given (unknown kinds are ignored)."""
    rate_limit_take(action="notification.post", user_id=user.pk)
    with transaction.atomic():
        for kind, (in_app, email) in choices.items():
            if kind not in NotificationKind.values:
                continue
            NotificationPreference.objects.update_or_create(
                user=user, kind=kind, defaults={"in_app": in_app, "email": email}
            )
