"""The sign-in forms of the site and of the admin, with the limits of core/login_limits.py."""

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from core.login_limits import login_failed, login_refusal, login_succeeded, refusal_message


class LimitedLoginMixin:
    def clean(self):
        username = self.cleaned_data.get("username") or ""
        wait = login_refusal(self.request, username)
        if wait is not None:
            raise ValidationError(refusal_message(wait), code="too_many_failures")
        try:
            cleaned = super().clean()
        except ValidationError as error:
            # An inactive account or a non-operator at the admin also lands here: counted
            # like a wrong password, so the answer does not tell which one it was.
            login_failed(self.request, username)
            raise error from None
        if self.user_cache is not None:  # not when a field was missing: nothing was checked
            login_succeeded(self.request, username)
        return cleaned


class LimitedAuthenticationForm(LimitedLoginMixin, AuthenticationForm):
    pass


class LimitedAdminAuthenticationForm(LimitedLoginMixin, AdminAuthenticationForm):
    pass
