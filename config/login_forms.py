"""The sign-in forms of the site and of the admin, with the limits of core/login_limits.py."""

from typing import Any

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from core.login_limits import login_failed, login_refusal, login_succeeded, refusal_message


class LimitedAuthenticationForm(AuthenticationForm):
    def clean(self) -> dict[str, Any]:
        request = self.request
        if request is None:  # Django's sign-in views pass it: the limits count by its address
            raise TypeError(f"{type(self).__name__} needs the request")
        username = self.cleaned_data.get("username") or ""
        wait = login_refusal(request, username)
        if wait is not None:
            raise ValidationError(refusal_message(wait), code="too_many_failures")
        try:
            cleaned = super().clean()
        except ValidationError as error:
            # An inactive account or a non-operator at the admin also lands here: counted
            # like a wrong password, so the answer does not tell which one it was.
            login_failed(request, username)
            raise error from None
        if self.user_cache is not None:  # not when a field was missing: nothing was checked
            login_succeeded(request, username)
        return cleaned


class LimitedAdminAuthenticationForm(LimitedAuthenticationForm, AdminAuthenticationForm):
    pass
