"""Sign-ins and failed sign-ins, from Django's signals (the login page, the admin's, the API's
token endpoint, and any backend that calls `login()` or `authenticate()`); and the project
events that change no tracked model's row in a way worth a diff (audit/recording.py tracks the
rows): a lead releasing an annotator's pair in progress.

A failed sign-in records the name that was tried and the client address, never the password
(Django passes the credentials with the password already masked; only the username is read).
"""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.http import HttpRequest

from annotation.models import Assignment
from audit.models import AuditEntry, AuditKind
from audit.recording import who_and_where
from core.client_address import client_address
from projects.models import Project


def _address(request: HttpRequest | None) -> str | None:
    return (client_address(request) or None) if request is not None else None


def sign_in_record(sender: object, request: HttpRequest | None, user: User, **_: object) -> None:
    AuditEntry.objects.create(
        content_type=ContentType.objects.get_for_model(get_user_model()),
        object_pk=str(user.pk),
        object_id=user.pk,
        object_repr=user.get_username(),
        action=AuditEntry.Action.ACCESS,
        kind=AuditKind.SIGN_IN,
        actor=user,
        actor_name=user.get_username(),
        actor_email=user.email or None,
        remote_addr=_address(request),
    )


def sign_in_failed_record(
    sender: object,
    credentials: dict[str, Any] | None,
    request: HttpRequest | None = None,
    **_: object,
) -> None:
    username = str((credentials or {}).get("username") or "")[:150]
    AuditEntry.objects.create(
        content_type=ContentType.objects.get_for_model(get_user_model()),
        object_pk="",
        object_repr=username,
        action=AuditEntry.Action.ACCESS,
        kind=AuditKind.SIGN_IN_FAILED,
        remote_addr=_address(request),
    )


def pair_released_record(
    sender: object, *, project: Project, kind: str, data: dict[str, Any], actor: Any, **_: object
) -> None:
    """The release of a pair in progress, once it committed (projects/events.py): who released
    whose pair, from where (the request being answered, if any)."""
    if kind != "pair.released":
        return
    context = who_and_where()
    if actor is not None:
        context.update(
            actor=actor, actor_name=actor.get_username(), actor_email=actor.email or None
        )
    AuditEntry.objects.create(
        content_type=ContentType.objects.get_for_model(Assignment),
        object_pk=str(data["assignment"]),
        object_id=data["assignment"],
        object_repr=f"{data['annotator']}: pair {data['pair']} released ({data['task']})"[:1000],
        action=AuditEntry.Action.UPDATE,
        changes={"status": ["leased", "expired"]},
        kind=AuditKind.MEMBER,
        project_id=project.pk,
        **context,
    )
