"""The bell in the page header: the signed-in user's unread count, counted (one query) only
when a page shows the bell, and at most once per page."""

from functools import cached_property

from django.contrib.auth.models import User
from django.http import HttpRequest

from notifications.selectors import unread_count


class Bell:
    def __init__(self, user: User) -> None:
        self.user = user

    @cached_property
    def unread(self) -> int:
        return unread_count(self.user)


def bell(request: HttpRequest) -> dict[str, Bell]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"bell": Bell(user)}
