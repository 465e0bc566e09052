"""How a username and password become a user, for every sign-in (the login page, the admin,
POST /api/auth/token/): Django's model backend, refusing the placeholder accounts of imported
ratings whatever state an operator left them in, and every password while the operator has
turned local passwords off (ARBITER_PASSWORD_SIGN_IN)."""

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.http import HttpRequest

from projects.models import PlaceholderAccount


class PeopleOnlyBackend(ModelBackend):
    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        if not settings.ARBITER_PASSWORD_SIGN_IN:  # the operator turned local passwords off
            return None
        user = super().authenticate(request, username=username, password=password, **kwargs)
        # A placeholder is inactive without a usable password, so this only matters when an
        # operator changed one of them: it holds imported ratings, never a person's session.
        # (Checked here, not in user_can_authenticate, which every request's session runs.)
        if user is not None and PlaceholderAccount.objects.filter(pk=user.pk).exists():
            return None
        return user
