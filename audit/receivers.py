"""Sign-ins and failed sign-ins, from Django's signals (the login page, the admin's, the API's
token endpoint, and any backend that calls `login()` or `authenticate()`).

A failed sign-in records the name that was tried and the client address, never the password
(Django passes the credentials with the password already masked; only the username is read).
"""

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType

from audit.models import AuditEntry, AuditKind
from core.client_address import client_address


def _address(request) -> str | None:
    return (client_address(request) or None) if request is not None else None


def sign_in_record(sender, request, user, **_) -> None:
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


def sign_in_failed_record(sender, credentials, request=None, **_) -> None:
    username = str((credentials or {}).get("username") or "")[:150]
    AuditEntry.objects.create(
        content_type=ContentType.objects.get_for_model(get_user_model()),
        object_pk="",
        object_repr=username,
        action=AuditEntry.Action.ACCESS,
        kind=AuditKind.SIGN_IN_FAILED,
        remote_addr=_address(request),
    )
